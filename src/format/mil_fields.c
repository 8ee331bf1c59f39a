/* SPDX-License-Identifier: MIT */
/* mil_fields.c: MILSpec messages read for the stages above (mil_fields.h).
 * Field numbers from coremltools mlmodel/format/MIL.proto:
 *   Value: type = 2 (ValueType), immediateValue = 3, blobFileValue = 5 {offset = 2}
 *   ValueType: tensorType = 1; TensorType: dataType = 1, dimensions = 3
 *   Dimension: constant = 1 {size = 1}
 *   ImmediateValue: tensor = 1, dictionary = 4 {values = 1: {key = 1, value = 2}}
 *   TensorValue: strings = 4 {values = 1}
 *   Operation: attributes = 5 (map entry: key = 1, value = 2)
 *   Argument: arguments = 1 (Binding: name = 1, value = 2) */
#include "mil_fields.h"

#include <string.h>

enum {
	F_VALUE_TYPE = 2, F_VALUE_IMMEDIATE = 3, F_VALUE_BLOB = 5, F_BLOB_OFFSET = 2,
	F_VALUETYPE_TENSOR = 1, F_TENSOR_DTYPE = 1, F_TENSOR_DIMS = 3,
	F_DIM_CONSTANT = 1, F_DIM_SIZE = 1,
	F_IMM_TENSOR = 1, F_IMM_DICT = 4, F_DICT_VALUES = 1, F_ENTRY_KEY = 1, F_ENTRY_VALUE = 2,
	F_TENSOR_STRINGS = 4, F_STRINGS_VALUES = 1,
	F_OP_ATTRIBUTES = 5,
	F_ARG_BINDINGS = 1, F_BIND_NAME = 1, F_BIND_VALUE = 2,
};

bool ali_mil_value_tensor_type(al_span value, struct ali_mil_tensor_type *out)
{
	al_span vt, tt;
	memset(out, 0, sizeof *out);
	if (!pb_get_bytes(value, F_VALUE_TYPE, &vt) || !pb_get_bytes(vt, F_VALUETYPE_TENSOR, &tt))
		return false;
	out->has_dtype = pb_get_varint(tt, F_TENSOR_DTYPE, &out->dtype);
	if (!out->has_dtype)
		out->dtype = 0;
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, tt);
	while (pb_next(&it, &f)) {
		if (f.num != F_TENSOR_DIMS || f.wire != PB_LEN)
			continue;
		al_span c;
		if (out->n_dims < AL_SHAPE_MAX_RANK && pb_get_bytes(f.data, F_DIM_CONSTANT, &c)) {
			uint64_t size = 0;
			pb_get_varint(c, F_DIM_SIZE, &size);
			out->size[out->n_dims] = size;
			out->constant[out->n_dims] = true;
		}
		if (out->n_dims < UINT32_MAX)
			out->n_dims++;
	}
	out->err = it.err != 0;
	return true;
}

bool ali_mil_value_blob_offset(al_span value, uint64_t *offset)
{
	al_span bfv;
	if (!pb_get_bytes(value, F_VALUE_BLOB, &bfv))
		return false;
	*offset = 0;
	pb_get_varint(bfv, F_BLOB_OFFSET, offset);
	return true;
}

bool ali_mil_value_immediate(al_span value, al_span *immediate)
{
	return pb_get_bytes(value, F_VALUE_IMMEDIATE, immediate);
}

bool ali_mil_value_string(al_span value, al_span *str)
{
	al_span iv, tv, strs;
	return pb_get_bytes(value, F_VALUE_IMMEDIATE, &iv) && pb_get_bytes(iv, F_IMM_TENSOR, &tv) &&
	       pb_get_bytes(tv, F_TENSOR_STRINGS, &strs) && pb_get_string(strs, F_STRINGS_VALUES, str);
}

bool ali_mil_dict_begin(al_span value, struct ali_mil_dict_iter *it)
{
	al_span iv, dict;
	if (!pb_get_bytes(value, F_VALUE_IMMEDIATE, &iv) || !pb_get_bytes(iv, F_IMM_DICT, &dict))
		return false;
	pb_iter_init(&it->it, dict);
	return true;
}

bool ali_mil_dict_next(struct ali_mil_dict_iter *it, al_span *key, al_span *val)
{
	struct pb_field f;
	while (pb_next(&it->it, &f)) {
		if (f.num != F_DICT_VALUES || f.wire != PB_LEN)
			continue;
		if (pb_get_bytes(f.data, F_ENTRY_KEY, key) && pb_get_bytes(f.data, F_ENTRY_VALUE, val))
			return true;
	}
	return false;
}

void ali_mil_attr_begin(const struct al_node *n, struct ali_mil_attr_iter *it)
{
	const struct al_node_src *s = al_src(n);
	pb_iter_init(&it->it, s ? s->msg : (al_span){0});
}

bool ali_mil_attr_next(struct ali_mil_attr_iter *it, al_span *key, al_span *val)
{
	struct pb_field f;
	while (pb_next(&it->it, &f)) {
		if (f.num == F_OP_ATTRIBUTES && f.wire == PB_LEN && pb_get_bytes(f.data, F_ENTRY_KEY, key) &&
		    pb_get_bytes(f.data, F_ENTRY_VALUE, val))
			return true;
	}
	return false;
}

void ali_mil_arg_each_binding(al_span arg, ali_mil_bind_fn fn, void *ctx)
{
	struct pb_iter it, jt;
	struct pb_field f, g;
	pb_iter_init(&it, arg);
	while (pb_next(&it, &f)) {
		if (f.num != F_ARG_BINDINGS || f.wire != PB_LEN)
			continue;
		pb_iter_init(&jt, f.data);
		while (pb_next(&jt, &g))
			if ((g.num == F_BIND_NAME || g.num == F_BIND_VALUE) && g.wire == PB_LEN)
				fn(ctx, (int)g.num, g.data);
	}
}

bool ali_mil_arg_binding_name(al_span arg, al_span *name)
{
	al_span binding;
	return pb_get_bytes(arg, F_ARG_BINDINGS, &binding) && pb_get_string(binding, F_BIND_NAME, name);
}

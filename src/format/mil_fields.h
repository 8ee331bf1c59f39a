/* SPDX-License-Identifier: MIT */
/* mil_fields.h: the parts of ML Program (MILSpec) messages the stages above read
 * directly, decoded here so that no MILSpec field number is written outside
 * src/format/ (tests/architecture.py checks it). mil_fields.c; the op-level
 * accessors (ali_mil_param_*, ali_mil_attr, ali_mil_value_read) are in model.h. */
#ifndef ANELINT_MIL_FIELDS_H
#define ANELINT_MIL_FIELDS_H

#include "model.h"

/* A Value's declared type.tensorType: its dtype and dimensions as written.
 * `n_dims` counts every dimension (may exceed AL_SHAPE_MAX_RANK: only the first
 * ones are kept); a dimension is `constant` when it has a constant size (then
 * `size`, 0 when the size field is absent). `err`: the TensorType message is
 * malformed (the dimensions before the fault are counted). */
struct ali_mil_tensor_type {
	uint64_t dtype;
	bool has_dtype;
	uint32_t n_dims;
	uint64_t size[AL_SHAPE_MAX_RANK];
	bool constant[AL_SHAPE_MAX_RANK];
	bool err;
};
/* False when the Value has no type.tensorType (out zeroed). */
bool ali_mil_value_tensor_type(al_span value, struct ali_mil_tensor_type *out);

/* Value.blobFileValue: true when present, with its offset (0 when absent). */
bool ali_mil_value_blob_offset(al_span value, uint64_t *offset);
/* Value.immediateValue: true when present. */
bool ali_mil_value_immediate(al_span value, al_span *immediate);
/* The last string of a Value's immediate tensor of strings (a string
 * attribute such as a custom layer's class name). */
bool ali_mil_value_string(al_span value, al_span *str);

/* The entries of an immediate dictionary Value, in file order: begin, then
 * next until it returns false (an entry without key or value is skipped). */
struct ali_mil_dict_iter {
	struct pb_iter it;
};
bool ali_mil_dict_begin(al_span value, struct ali_mil_dict_iter *it);
bool ali_mil_dict_next(struct ali_mil_dict_iter *it, al_span *key, al_span *val);

/* Operation.attributes of MIL op n, every entry with a key and a value, in
 * file order (ali_mil_attr reads one by key). */
struct ali_mil_attr_iter {
	struct pb_iter it;
};
void ali_mil_attr_begin(const struct al_node *n, struct ali_mil_attr_iter *it);
bool ali_mil_attr_next(struct ali_mil_attr_iter *it, al_span *key, al_span *val);

/* The members of every Binding of an Argument message, in file order: 1 for a
 * name (data: the name), 2 for a literal (data: the Value message). */
enum { ALI_MIL_BIND_NAME = 1, ALI_MIL_BIND_VALUE = 2 };
typedef void (*ali_mil_bind_fn)(void *ctx, int member, al_span data);
void ali_mil_arg_each_binding(al_span arg, ali_mil_bind_fn fn, void *ctx);
/* The name of the last Binding of an Argument (false when that Binding has
 * no name or there is none). */
/* The argument bound to `param` of ML Program op n (the last entry of the op's
 * inputs map wins); NULL when n is no MIL op or binds nothing to it. */
const struct al_mil_arg *ali_mil_find_arg(const struct al_node *n, const char *param);
bool ali_mil_arg_binding_name(al_span arg, al_span *name);

#endif

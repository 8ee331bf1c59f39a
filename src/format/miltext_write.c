/* SPDX-License-Identifier: MIT */
/* miltext_write.c: prints a serialized MILSpec.Program message in the MIL text
 * syntax that miltext.c reads (the syntax of a compiled model's model.mil), so
 * that protobuf -> text -> protobuf keeps every op, type, attribute and blob
 * reference. Numbers are printed exactly: floats as C99 hex floats (%a), as
 * coremlc does. Reads only the message; weights stay references.
 */
#include "miltext.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_NEST 64

struct w {
	struct al_buf *o;
	bool bad;
	int nest;
};

static void put(struct w *W, const char *s)
{
	ali_buf_put(W->o, s, strlen(s));
}

static void putn(struct w *W, al_span s)
{
	ali_buf_put(W->o, s.p, s.n);
}

static void indent(struct w *W, int n)
{
	for (int i = 0; i < n; i++)
		put(W, "    ");
}

static void quoted(struct w *W, al_span s)
{
	put(W, "\"");
	for (size_t i = 0; i < s.n; i++) {
		unsigned char c = s.p[i];
		if (c == '"' || c == '\\')
			ali_buf_printf(W->o, "\\%c", c);
		else if (c == '\n')
			put(W, "\\n");
		else if (c < 0x20 || c == 0x7f)
			ali_buf_printf(W->o, "\\x%02x", c);
		else
			ali_buf_put(W->o, &c, 1);
	}
	put(W, "\"");
}

static bool fail(struct w *W)
{
	W->bad = true;
	return false;
}

/* ================================================================ types */

static void dim(struct w *W, al_span d)
{
	al_span c;
	uint64_t v = 0;
	if (pb_get_bytes(d, 1, &c)) {
		pb_get_varint(c, 1, &v);
		ali_buf_printf(W->o, "%" PRIu64, v);
	} else {
		put(W, "?");
	}
}

static bool type(struct w *W, al_span vt)
{
	if (++W->nest > MAX_NEST)
		return fail(W);
	al_span x, y;
	struct pb_iter it;
	struct pb_field f;
	bool ok = true;
	if (pb_get_bytes(vt, 1, &x)) { /* TensorType */
		uint64_t dt = 0, rank = 0;
		pb_get_varint(x, 1, &dt);
		put(W, "tensor<");
		put(W, al_dtype_name((int)(dt < 64 ? dt : 0)));
		if (!strcmp(al_dtype_name((int)(dt < 64 ? dt : 0)), "?"))
			ok = fail(W);
		bool variadic = pb_get_varint(x, 2, &rank) && (int64_t)rank < 0;
		if (variadic) {
			put(W, ", *>");
		} else {
			put(W, ", [");
			int k = 0;
			pb_iter_init(&it, x);
			while (pb_next(&it, &f))
				if (f.num == 3 && f.wire == PB_LEN) {
					if (k++)
						put(W, ", ");
					dim(W, f.data);
				}
			put(W, "]>");
		}
	} else if (pb_get_bytes(vt, 2, &x)) { /* ListType: type = 1, length = 2 */
		put(W, "list<");
		ok = pb_get_bytes(x, 1, &y) && type(W, y);
		put(W, ", ");
		if (pb_get_bytes(x, 2, &y))
			dim(W, y);
		else
			put(W, "?");
		put(W, ">");
	} else if (pb_get_bytes(vt, 3, &x)) { /* TupleType: types = 1 */
		put(W, "tuple<");
		int k = 0;
		pb_iter_init(&it, x);
		while (ok && pb_next(&it, &f))
			if (f.num == 1 && f.wire == PB_LEN) {
				if (k++)
					put(W, ", ");
				ok = type(W, f.data);
			}
		put(W, ">");
	} else if (pb_get_bytes(vt, 4, &x)) { /* DictionaryType */
		put(W, "dict<");
		ok = pb_get_bytes(x, 1, &y) && type(W, y);
		put(W, ", ");
		ok = ok && pb_get_bytes(x, 2, &y) && type(W, y);
		put(W, ">");
	} else if (pb_get_bytes(vt, 5, &x)) { /* StateType */
		put(W, "state<");
		ok = pb_get_bytes(x, 1, &y) && type(W, y);
		put(W, ">");
	} else {
		ok = false;
	}
	W->nest--;
	return ok ? true : fail(W);
}

/* ================================================================ values */

static void fnum(struct w *W, double v)
{
	if (isnan(v))
		put(W, "nan");
	else if (isinf(v))
		put(W, v < 0 ? "-inf" : "inf");
	else
		ali_buf_printf(W->o, "%a", v);
}

/* The elements of a TensorValue as text, one callback-free pass per encoding:
 * items[] collects the printed elements' end offsets so nesting can follow. */
struct items {
	size_t *end;
	size_t n, cap;
};

static bool item_done(struct w *W, struct items *I)
{
	if (I->n == I->cap) {
		size_t c = I->cap ? I->cap * 2 : 64;
		size_t *e = ali_realloc(I->end, c * sizeof *e);
		if (!e)
			return fail(W);
		I->end = e;
		I->cap = c;
	}
	I->end[I->n++] = W->o->n;
	return true;
}

static int64_t sext32(uint64_t u)
{
	uint32_t x = (uint32_t)u;
	return x & 0x80000000u ? -(int64_t)(~x) - 1 : (int64_t)x;
}

/* The elements of a `bytes` TensorValue: raw little-endian values of dt,
 * sub-byte types packed from bit 0 (want: as for elems). */
static bool raw_elems(struct w *W, al_span data, int dt, long long want, struct items *I)
{
	const uint8_t *p = data.p;
	size_t n = data.n;
	int bits = 8, sgn = 0;
	switch (dt) {
	case AL_DT_FP16: case AL_DT_BF16: case AL_DT_INT16: case AL_DT_UINT16: bits = 16; break;
	case AL_DT_FP32: case AL_DT_INT32: case AL_DT_UINT32: bits = 32; break;
	case AL_DT_FP64: case AL_DT_INT64: case AL_DT_UINT64: bits = 64; break;
	case AL_DT_INT4: case AL_DT_UINT4: bits = 4; break;
	case AL_DT_UINT1: bits = 1; break;
	case AL_DT_UINT2: bits = 2; break;
	case AL_DT_UINT3: bits = 3; break;
	case AL_DT_UINT6: bits = 6; break;
	case AL_DT_INT8: case AL_DT_UINT8: case AL_DT_BOOL: break;
	default: return fail(W);
	}
	sgn = dt == AL_DT_INT4 || dt == AL_DT_INT8 || dt == AL_DT_INT16 ||
	      dt == AL_DT_INT32 || dt == AL_DT_INT64;
	if (bits >= 8) {
		size_t wb = (size_t)bits / 8;
		if (n % wb)
			return fail(W);
		for (size_t i = 0; i < n; i += wb) {
			uint64_t u = 0;
			for (size_t k = 0; k < wb; k++)
				u |= (uint64_t)p[i + k] << (8 * k);
			if (dt == AL_DT_FP16)
				fnum(W, ali_half_to_double((uint32_t)u));
			else if (dt == AL_DT_BF16) {
				uint32_t b32 = (uint32_t)u << 16;
				float x;
				memcpy(&x, &b32, 4);
				fnum(W, x);
			} else if (dt == AL_DT_FP32) {
				uint32_t b32 = (uint32_t)u;
				float x;
				memcpy(&x, &b32, 4);
				fnum(W, x);
			} else if (dt == AL_DT_FP64) {
				double x;
				memcpy(&x, &u, 8);
				fnum(W, x);
			} else if (dt == AL_DT_BOOL) {
				put(W, u ? "true" : "false");
			} else if (sgn && bits < 64 && (u >> (bits - 1) & 1)) {
				ali_buf_printf(W->o, "%" PRId64, (int64_t)u - (int64_t)((uint64_t)1 << (bits - 1)) * 2);
			} else if (sgn) {
				ali_buf_printf(W->o, "%" PRId64, (int64_t)u);
			} else {
				ali_buf_printf(W->o, "%" PRIu64, u);
			}
			if (!item_done(W, I))
				return false;
		}
	} else {
		/* sub-byte: the declared count, else every whole element present */
		size_t count = n * 8 / (size_t)bits;
		if (want >= 0 && (unsigned long long)want < count)
			count = (size_t)want;
		for (size_t i = 0; i < count; i++) {
			unsigned u = 0;
			for (int b = 0; b < bits; b++) {
				size_t pos = i * (size_t)bits + (size_t)b;
				u |= (unsigned)(p[pos / 8] >> (pos % 8) & 1) << b;
			}
			if (sgn && (u >> (bits - 1) & 1))
				ali_buf_printf(W->o, "%d", (int)u - (1 << bits));
			else
				ali_buf_printf(W->o, "%u", u);
			if (!item_done(W, I))
				return false;
		}
	}
	return true;
}

/* want: the element count the type declares (sub-byte data is padded to whole
 * bytes), or -1 when not known. */
static bool elems(struct w *W, al_span tv, int dt, long long want, struct items *I)
{
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, tv);
	uint32_t member = 0;
	al_span rep = {0};
	while (pb_next(&it, &f))
		if (f.num >= 1 && f.num <= 7 && f.wire == PB_LEN) {
			member = f.num;
			rep = f.data;
		}
	if (it.err)
		return fail(W);
	if (!member)
		return true;
	struct pb_iter ri;
	struct pb_field g;
	pb_iter_init(&ri, rep);
	while (pb_next(&ri, &g)) {
		if (g.num != 1)
			continue;
		if (member == 4) { /* strings */
			if (g.wire != PB_LEN)
				return fail(W);
			quoted(W, g.data);
			if (!item_done(W, I))
				return false;
			continue;
		}
		if (member == 7) { /* raw bytes of dt */
			if (g.wire != PB_LEN)
				return fail(W);
			if (!raw_elems(W, g.data, dt, want, I))
				return false;
			continue;
		}
		/* numbers: one element or a packed run */
		size_t pos = 0;
		al_span run = g.data;
		bool single = g.wire != PB_LEN;
		while (single || pos < run.n) {
			uint64_t u;
			if (member == 1 || member == 6) {
				unsigned wb = member == 1 ? 4 : 8;
				if (single) {
					u = g.u;
				} else {
					if (run.n - pos < wb)
						return fail(W);
					u = wb == 4 ? al_rd32le(run.p + pos) : al_rd64le(run.p + pos);
					pos += wb;
				}
				if (wb == 4) {
					uint32_t b32 = (uint32_t)u;
					float x;
					memcpy(&x, &b32, 4);
					fnum(W, x);
				} else {
					double x;
					memcpy(&x, &u, 8);
					fnum(W, x);
				}
			} else {
				if (single)
					u = g.u;
				else if (pb_varint(run.p, run.n, &pos, &u))
					return fail(W);
				if (member == 3)
					put(W, u ? "true" : "false");
				else if (member == 2)
					ali_buf_printf(W->o, "%" PRId64, sext32(u));
				else if (dt == AL_DT_UINT64 || dt == AL_DT_UINT32)
					ali_buf_printf(W->o, "%" PRIu64, u);
				else
					ali_buf_printf(W->o, "%" PRId64, (int64_t)u);
			}
			if (!item_done(W, I))
				return false;
			if (single)
				break;
		}
	}
	return !ri.err || fail(W);
}

static bool literal(struct w *W, al_span vt, al_span v);

/* A tensor literal: scalar for rank 0, nested brackets following the dims
 * when they are all known and match the count, else one flat list. */
static bool tensor_literal(struct w *W, al_span tt, al_span tv)
{
	uint64_t dt = 0;
	pb_get_varint(tt, 1, &dt);
	int64_t dims[AL_MAX_RANK];
	int rank = 0;
	bool known = true;
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, tt);
	while (pb_next(&it, &f))
		if (f.num == 3 && f.wire == PB_LEN) {
			al_span c;
			uint64_t v = 0;
			if (pb_get_bytes(f.data, 1, &c))
				pb_get_varint(c, 1, &v);
			else
				known = false;
			if (rank < AL_MAX_RANK)
				dims[rank] = (int64_t)v;
			rank++;
		}
	if (rank > AL_MAX_RANK)
		known = false;
	/* print the elements into a scratch buffer, then lay them out */
	struct al_buf *saved = W->o, tmp = {0};
	struct items I = {0};
	W->o = &tmp;
	long long want = -1;
	if (known && rank <= AL_MAX_RANK) {
		want = 1;
		for (int i = 0; i < rank && want >= 0; i++)
			want = dims[i] >= 0 && (dims[i] == 0 || want <= LLONG_MAX / dims[i]) ? want * dims[i] : -1;
	}
	bool ok = elems(W, tv, (int)dt, want, &I);
	W->o = saved;
	if (ok && rank == 0 && I.n == 1) {
		ali_buf_put(W->o, tmp.p, tmp.n);
	} else if (ok) {
		uint64_t prod = 1;
		for (int i = 0; known && i < rank; i++)
			prod = dims[i] && prod <= UINT64_MAX / (uint64_t)dims[i] ? prod * (uint64_t)dims[i] : 0;
		bool nest = known && rank > 0 && prod == I.n && prod > 0;
		int r = nest ? rank : 1;
		uint64_t stride[AL_MAX_RANK];
		if (nest) {
			stride[rank - 1] = (uint64_t)dims[rank - 1];
			for (int i = rank - 2; i >= 0; i--)
				stride[i] = stride[i + 1] * (uint64_t)dims[i];
		}
		for (size_t i = 0; i < I.n || (i == 0 && I.n == 0); i++) {
			int opens = 0;
			for (int k = 0; k < r; k++)
				if (nest ? i % stride[k] == 0 : i == 0)
					opens++;
			if (i)
				put(W, ", ");
			for (int k = 0; k < opens; k++)
				put(W, "[");
			if (I.n == 0)
				break;
			size_t b = i ? I.end[i - 1] : 0;
			ali_buf_put(W->o, tmp.p + b, I.end[i] - b);
			int closes = 0;
			for (int k = 0; k < r; k++)
				if (nest ? (i + 1) % stride[k] == 0 : i + 1 == I.n)
					closes++;
			for (int k = 0; k < closes; k++)
				put(W, "]");
		}
		if (I.n == 0)
			put(W, "]");
	}
	if (tmp.failed)
		ok = fail(W);
	ali_buf_free(&tmp);
	ali_free(I.end);
	return ok;
}

/* The literal of Value v (type vt) without its type. */
static bool literal(struct w *W, al_span vt, al_span v)
{
	if (++W->nest > MAX_NEST)
		return fail(W);
	al_span x, iv, tt, y;
	bool ok = true;
	struct pb_iter it, ki;
	struct pb_field f, g;
	if (pb_get_bytes(v, 5, &x)) { /* BlobFileValue: fileName = 1, offset = 2 */
		al_span name = {0};
		uint64_t off = 0;
		pb_get_bytes(x, 1, &name);
		pb_get_varint(x, 2, &off);
		put(W, "BLOBFILE(path = tensor<string, []>(");
		quoted(W, name);
		ali_buf_printf(W->o, "), offset = tensor<uint64, []>(%" PRIu64 "))", off);
	} else if (!pb_get_bytes(v, 3, &iv)) {
		ok = false;
	} else if (pb_get_bytes(iv, 1, &x)) {
		ok = pb_get_bytes(vt, 1, &tt) && tensor_literal(W, tt, x);
	} else if (pb_get_bytes(iv, 2, &x) || pb_get_bytes(iv, 3, &x)) {
		bool list = !pb_has(iv, 2);
		/* element types: the list's type, or the tuple's types in order */
		al_span lt = {0}, et = {0};
		if (list)
			ok = pb_get_bytes(vt, 2, &lt) && pb_get_bytes(lt, 1, &et);
		else
			ok = pb_get_bytes(vt, 3, &lt);
		struct pb_iter ti;
		struct pb_field tf;
		pb_iter_init(&ti, lt);
		put(W, list ? "[" : "(");
		int k = 0;
		pb_iter_init(&it, x);
		while (ok && pb_next(&it, &f)) {
			if (f.num != 1 || f.wire != PB_LEN)
				continue;
			if (!list) {
				bool got = false;
				while (pb_next(&ti, &tf))
					if (tf.num == 1 && tf.wire == PB_LEN) {
						et = tf.data;
						got = true;
						break;
					}
				if (!got) {
					ok = false;
					break;
				}
			}
			if (k++)
				put(W, ", ");
			ok = literal(W, et, f.data);
		}
		put(W, list ? "]" : ")");
	} else if (pb_get_bytes(iv, 4, &x)) { /* DictionaryValue values = 1 {key = 1, value = 2} */
		al_span dt, kt = {0}, vt2 = {0};
		ok = pb_get_bytes(vt, 4, &dt) && pb_get_bytes(dt, 1, &kt) && pb_get_bytes(dt, 2, &vt2);
		put(W, "{");
		int k = 0;
		pb_iter_init(&it, x);
		while (ok && pb_next(&it, &f)) {
			if (f.num != 1 || f.wire != PB_LEN)
				continue;
			al_span kv = f.data, kk = {0}, vv = {0};
			pb_iter_init(&ki, kv);
			while (pb_next(&ki, &g))
				if (g.num == 1)
					kk = g.data;
				else if (g.num == 2)
					vv = g.data;
			if (k++)
				put(W, ", ");
			put(W, "{");
			ok = literal(W, kt, kk);
			put(W, ", ");
			ok = ok && literal(W, vt2, vv);
			put(W, "}");
		}
		put(W, "}");
	} else {
		ok = false;
	}
	(void)y;
	W->nest--;
	return ok ? true : fail(W);
}

/* "type(literal)" */
static bool value(struct w *W, al_span v)
{
	al_span vt;
	if (!pb_get_bytes(v, 2, &vt))
		return fail(W);
	if (!type(W, vt))
		return false;
	put(W, "(");
	bool ok = literal(W, vt, v);
	put(W, ")");
	return ok;
}

/* map<string, Value> entries (field num of msg) as "[k = v, ...]" */
static bool attrs(struct w *W, al_span msg, uint32_t num)
{
	struct pb_iter it;
	struct pb_field f;
	int k = 0;
	bool ok = true;
	pb_iter_init(&it, msg);
	while (ok && pb_next(&it, &f)) {
		if (f.num != num || f.wire != PB_LEN)
			continue;
		al_span key = {0}, v = {0};
		pb_get_bytes(f.data, 1, &key);
		if (!pb_get_bytes(f.data, 2, &v))
			return fail(W);
		put(W, k++ ? ", " : "[");
		putn(W, key);
		put(W, " = ");
		ok = value(W, v);
	}
	if (k)
		put(W, "]");
	return ok;
}

/* NamedValueType: "type name" */
static bool named(struct w *W, al_span nv)
{
	al_span name = {0}, vt;
	pb_get_bytes(nv, 1, &name);
	if (!pb_get_bytes(nv, 2, &vt) || !type(W, vt))
		return fail(W);
	put(W, " ");
	putn(W, name);
	return true;
}

static bool named_list(struct w *W, al_span msg, uint32_t num, const char *sep)
{
	struct pb_iter it;
	struct pb_field f;
	int k = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num && f.wire == PB_LEN) {
			if (k++)
				put(W, sep);
			if (!named(W, f.data))
				return false;
		}
	return true;
}

static bool block(struct w *W, al_span blk, int depth);

static bool binding(struct w *W, al_span b)
{
	struct pb_iter it;
	struct pb_field f;
	al_span x = {0};
	uint32_t kind = 0;
	pb_iter_init(&it, b);
	while (pb_next(&it, &f))
		if ((f.num == 1 || f.num == 2) && f.wire == PB_LEN) {
			kind = f.num;
			x = f.data;
		}
	if (kind == 1) {
		putn(W, x);
		return true;
	}
	return kind == 2 ? value(W, x) : fail(W);
}

static bool op(struct w *W, al_span o, int depth)
{
	al_span ty = {0};
	struct pb_iter it, ai;
	struct pb_field f, a;
	indent(W, depth + 2);
	if (pb_has(o, 3)) {
		if (!named_list(W, o, 3, ", "))
			return false;
		put(W, " = ");
	}
	pb_get_bytes(o, 1, &ty);
	putn(W, ty);
	put(W, "(");
	int k = 0;
	pb_iter_init(&it, o);
	while (pb_next(&it, &f)) {
		if (f.num != 2 || f.wire != PB_LEN)
			continue;
		al_span key = {0}, arg = {0};
		pb_get_bytes(f.data, 1, &key);
		pb_get_bytes(f.data, 2, &arg);
		if (k++)
			put(W, ", ");
		putn(W, key);
		put(W, " = ");
		size_t nb = pb_count(arg, 1);
		if (nb != 1)
			put(W, "(");
		int j = 0;
		pb_iter_init(&ai, arg);
		while (pb_next(&ai, &a))
			if (a.num == 1 && a.wire == PB_LEN) {
				if (j++)
					put(W, ", ");
				if (!binding(W, a.data))
					return false;
			}
		if (nb != 1)
			put(W, ")");
	}
	put(W, ")");
	if (!attrs(W, o, 5))
		return false;
	pb_iter_init(&it, o);
	while (pb_next(&it, &f))
		if (f.num == 4 && f.wire == PB_LEN) {
			put(W, "\n");
			indent(W, depth + 3);
			put(W, "(");
			if (!named_list(W, f.data, 1, ", "))
				return false;
			put(W, ") ");
			if (depth + 1 > AL_MAX_DEPTH || !block(W, f.data, depth + 1))
				return fail(W);
		}
	put(W, ";\n");
	return true;
}

/* "{\n ops } -> (outs)"; the caller printed the inputs. */
static bool block(struct w *W, al_span blk, int depth)
{
	struct pb_iter it;
	struct pb_field f;
	put(W, "{\n");
	pb_iter_init(&it, blk);
	while (pb_next(&it, &f))
		if (f.num == 3 && f.wire == PB_LEN && !op(W, f.data, depth))
			return false;
	indent(W, depth + 1);
	put(W, "} -> (");
	int k = 0;
	pb_iter_init(&it, blk);
	while (pb_next(&it, &f))
		if (f.num == 2 && f.wire == PB_LEN) {
			if (k++)
				put(W, ", ");
			putn(W, f.data);
		}
	put(W, ")");
	return !it.err || fail(W);
}

static const char *const opsets[][2] = {
	{"ios15", "CoreML5"}, {"ios16", "CoreML6"}, {"ios17", "CoreML7"},
	{"ios18", "CoreML8"}, {"ios26", "CoreML9"},
};

static bool function(struct w *W, al_span name, al_span fn)
{
	al_span opset = {0}, blk = {0};
	pb_get_bytes(fn, 2, &opset);
	struct pb_iter it;
	struct pb_field f;
	bool found = false, any = false;
	pb_iter_init(&it, fn);
	while (pb_next(&it, &f)) {
		al_span k = {0}, b = {0};
		if (f.num != 3 || f.wire != PB_LEN)
			continue;
		pb_get_bytes(f.data, 1, &k);
		pb_get_bytes(f.data, 2, &b);
		if (!any)
			blk = b;
		if (!found && k.n == opset.n && (!k.n || memcmp(k.p, opset.p, k.n) == 0)) {
			blk = b;
			found = true;
		}
		any = true;
	}
	put(W, "    func ");
	putn(W, name);
	if (opset.n) {
		const char *t = NULL;
		for (size_t i = 0; i < sizeof opsets / sizeof opsets[0]; i++)
			if (ali_span_eq(opset, opsets[i][1]))
				t = opsets[i][0];
		put(W, "<");
		if (t)
			put(W, t);
		else
			putn(W, opset);
		put(W, ">");
	}
	put(W, "(");
	if (!named_list(W, fn, 1, ", "))
		return false;
	put(W, ")");
	if (pb_has(fn, 4)) {
		put(W, " ");
		if (!attrs(W, fn, 4))
			return false;
	}
	put(W, " ");
	if (!block(W, blk, 0))
		return false;
	put(W, ";\n");
	return true;
}

bool ali_mil_text_write(al_span program, struct al_buf *out)
{
	struct w W = {.o = out};
	uint64_t version = 1;
	pb_get_varint(program, 1, &version);
	ali_buf_printf(W.o, "program(%" PRIu64 ".0)\n", version);
	if (pb_has(program, 4)) {
		if (!attrs(&W, program, 4))
			return false;
		put(&W, "\n");
	}
	put(&W, "{\n");
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, program);
	while (pb_next(&it, &f))
		if (f.num == 2 && f.wire == PB_LEN) {
			al_span name = {0}, fn = {0};
			pb_get_bytes(f.data, 1, &name);
			pb_get_bytes(f.data, 2, &fn);
			if (!function(&W, name, fn))
				return false;
		}
	put(&W, "}\n");
	return !it.err && !W.bad && !out->failed;
}

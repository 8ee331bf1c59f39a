/* SPDX-License-Identifier: MIT */
/* mil_value.c: what the rules and the interpreter ask of a walked ML Program
 * (mil.c builds it): the value-name scopes of each graph and their lookups, an
 * op's parameters (bindings, attributes, immediate values decoded to ints,
 * floats or strings, where a blob's bytes are). It reads only what the walk
 * left in the nodes and never reports: answers are values or "absent". */
#include "mil_int.h"
#include "mil_fields.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WEIGHTS_FILE "@model_path/weights/weight.bin"
#define BLOB_SENTINEL 0xDEADBEEFu
#define BLOB_META 64 /* bytes in the storage header and in each blob_metadata */

/* BlobDataType (MILBlob BlobDataType.hpp) -> MIL DataType, index 1..17. */
const int ali_mil_blob_dtype[18] = {
	[1] = AL_DT_FP16, [2] = AL_DT_FP32, [3] = AL_DT_UINT8, [4] = AL_DT_INT8,
	[5] = AL_DT_BF16, [6] = AL_DT_INT16, [7] = AL_DT_UINT16, [8] = AL_DT_INT4,
	[9] = AL_DT_UINT1, [10] = AL_DT_UINT2, [11] = AL_DT_UINT4, [12] = AL_DT_UINT3,
	[13] = AL_DT_UINT6, [14] = AL_DT_INT32, [15] = AL_DT_UINT32, [16] = AL_DT_FP8E4M3,
	[17] = AL_DT_FP8E5M2,
};

/* ================================================================ scopes */

static int ent_cmp(const void *a, const void *b)
{
	const struct al_mil_ent *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* ent_cmp's order of e against a name b with hash h (strcmp's on NUL-free
 * names when the hashes are equal). */
static int name_cmp(const struct al_mil_ent *e, uint64_t h, al_span b)
{
	if (e->hash != h)
		return e->hash < h ? -1 : 1;
	size_t an = e->len, k = an < b.n ? an : b.n;
	int c = k ? memcmp(e->name, b.p, k) : 0;
	if (c)
		return c;
	return an < b.n ? -1 : an > b.n;
}

/* The run of ents named `name` through the index: true with [*lo, *end)
 * (empty when the name is absent), false when the index cannot say. */
static bool run_find(const struct al_mil_scope *s, uint64_t h, al_span name, size_t *lo,
		     size_t *end)
{
	if (!s->runs)
		return false;
	for (uint32_t i = 0, j = (uint32_t)h & s->mask; i < MAX_PROBE; i++, j = (j + 1) & s->mask) {
		const struct mil_run *r = &s->runs[j];
		if (!r->end) {
			*lo = *end = 0;
			return true;
		}
		const struct al_mil_ent *e = &s->ents[r->lo];
		if (e->len == name.n && (!name.n || !memcmp(e->name, name.p, name.n))) {
			*lo = r->lo;
			*end = r->end;
			return true;
		}
	}
	return false;
}

/* Builds s->runs over s->ents (sorted); leaves it NULL when the arena has no
 * room (lookups then binary-search, as they did before the index). Each run
 * is placed at the first free slot within MAX_PROBE of its hash, else not at
 * all: run_find then probes MAX_PROBE slots, finds none empty, and falls back. */
void ali_mil_scope_index(struct al_arena *a, struct al_mil_scope *s)
{
	if (s->n < 16) /* a binary search over a few entries is as quick */
		return;
	uint32_t slots = 32;
	while (slots < 2u * s->n && slots < (1u << 30))
		slots <<= 1;
	struct mil_run *runs = ali_arena_array(a, slots, sizeof *runs);
	if (!runs)
		return;
	memset(runs, 0, (size_t)slots * sizeof *runs);
	for (uint32_t lo = 0, end; lo < s->n; lo = end) {
		const struct al_mil_ent *e = &s->ents[lo];
		for (end = lo + 1; end < s->n && s->ents[end].len == e->len &&
				   !memcmp(s->ents[end].name, e->name, e->len); end++)
			;
		uint64_t h = e->hash;
		for (uint32_t i = 0, j = (uint32_t)h & (slots - 1); i < MAX_PROBE;
		     i++, j = (j + 1) & (slots - 1))
			if (!runs[j].end) {
				runs[j] = (struct mil_run){lo, end};
				break;
			}
	}
	s->runs = runs;
	s->mask = slots - 1;
}

/* Sorts e[0..n) into ent_cmp's order: by hash with a radix sort (stable, and
 * e comes in seq order, so each name's entries stay in seq order), then runs
 * of one hash holding different names by ent_cmp. A qsort by name was 5% of
 * a 27k-op load. False when there is no memory for the copy. */
bool ali_mil_sort_ents(struct al_mil_ent *e, uint32_t n)
{
	if (n < 64) {
		qsort(e, n, sizeof *e, ent_cmp);
		return true;
	}
	struct al_mil_ent *tmp = ali_malloc((size_t)n * sizeof *e), *src = e, *dst = tmp;
	if (!tmp)
		return false;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		uint32_t pos[256] = {0};
		for (uint32_t i = 0; i < n; i++)
			pos[(src[i].hash >> shift) & 255]++;
		if (pos[(src[0].hash >> shift) & 255] == n)
			continue; /* every key has this byte */
		for (uint32_t b = 0, acc = 0; b < 256; b++) {
			uint32_t c = pos[b];
			pos[b] = acc;
			acc += c;
		}
		for (uint32_t i = 0; i < n; i++)
			dst[pos[(src[i].hash >> shift) & 255]++] = src[i];
		struct al_mil_ent *t = src;
		src = dst;
		dst = t;
	}
	if (src != e)
		memcpy(e, src, (size_t)n * sizeof *e);
	ali_free(tmp);
	for (uint32_t lo = 0, hi; lo < n; lo = hi) {
		bool one_name = true; /* then the run is in seq order already */
		for (hi = lo + 1; hi < n && e[hi].hash == e[lo].hash; hi++)
			one_name &= e[hi].len == e[lo].len && !memcmp(e[hi].name, e[lo].name, e[lo].len);
		if (!one_name)
			qsort(e + lo, hi - lo, sizeof *e, ent_cmp);
	}
	return true;
}

/* The last definition of `name` in s; with `before` (an op of s's graph), only
 * inputs and ops that come before it count. */
static const struct al_mil_ent *scope_find(const struct al_mil_scope *s, al_span name,
					const struct al_node *before)
{
	size_t lo = 0, end = s->n;
	uint64_t h = ali_hash_bytes(AL_HASH_INIT, name.p, name.n);
	if (!run_find(s, h, name, &lo, &end)) {
		size_t hi = s->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (name_cmp(&s->ents[mid], h, name) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* Binary searches only: a hostile graph may define one name in every op,
		 * and a scan per lookup made that quadratic (100k ops: minutes). Entries
		 * of one name are in seq order: inputs (node NULL) first, then ops by
		 * index, so "defined before `before`" holds for a prefix of them. */
		for (size_t l = lo; l < end;) {
			size_t mid = l + (end - l) / 2;
			if (name_cmp(&s->ents[mid], h, name) <= 0)
				l = mid + 1;
			else
				end = mid;
		}
	}
	if (before) {
		size_t l = lo, r = end;
		while (l < r) {
			size_t mid = l + (r - l) / 2;
			const struct al_node *d = s->ents[mid].node;
			if (!d || d->index < before->index)
				l = mid + 1;
			else
				r = mid;
		}
		end = l;
	}
	return end > lo ? &s->ents[end - 1] : NULL;
}

static const struct al_mil_scope *scope_of(const struct al_node *n)
{
	const struct al_node_src *s = n ? al_src(n) : NULL;
	return s ? s->mil_scope : NULL;
}

const struct al_mil_ent *ali_mil_resolve(const struct al_node *n, al_span name)
{
	const struct al_mil_scope *s = scope_of(n);
	if (!s)
		return NULL;
	const struct al_mil_ent *e = scope_find(s, name, n);
	for (s = s->parent; !e && s; s = s->parent) /* at most AL_MAX_DEPTH levels */
		e = scope_find(s, name, NULL);
	return e;
}


/* What a Value message holds: a blob reference (field 5), else an immediate
 * value (field 3), else neither. */
int ali_mil_value_class(al_span v)
{
	if (pb_has(v, 5))
		return CV_BLOB;
	return pb_has(v, 3) ? CV_VALUE : CV_OPAQUE;
}

/* ================================================================ value access */

/* The Argument entry bound to `param` of MIL op n (the last map entry wins). */
const struct al_mil_arg *ali_mil_find_arg(const struct al_node *n, const char *param)
{
	const struct al_node_src *s = n ? al_src(n) : NULL;
	const struct al_mil_arg *found = NULL;
	if (!s || !s->mil_scope || !param)
		return NULL;
	for (uint32_t i = 0; i < s->n_mil_args; i++)
		if (ali_str_eq(s->mil_args[i].param, param))
			found = &s->mil_args[i];
	return found;
}

/* What name binding b of op n resolves to (ali_mil_resolve() of its bytes): read from
 * the inputs resolved at load when n->inputs holds the name whole, else
 * searched. */
static const struct al_mil_ent *bind_ent(const struct al_node *n, const struct al_mil_bind *b)
{
	const struct al_node_src *s = al_src(n);
	if (s->mil_in_ents && b->plain && b->input < n->n_inputs)
		return s->mil_in_ents[b->input];
	return ali_mil_resolve(n, b->data);
}

/* attributes[key] of MIL op p (the last map entry wins). */
bool ali_mil_find_attr(const struct al_node *p, const char *key, al_span *val)
{
	const struct al_node_src *s = p ? al_src(p) : NULL;
	struct pb_iter it;
	struct pb_field f;
	al_span k;
	bool found = false;
	if (!s || !s->mil_scope || !key)
		return false;
	if (s->mil_attrs_indexed) { /* the same entries, read once by parse_op */
		for (uint32_t i = 0; i < s->n_mil_attrs; i++)
			if (ali_span_eq(s->mil_attrs[i].key, key)) {
				*val = s->mil_attrs[i].val;
				found = true;
			}
		return found;
	}
	pb_iter_init(&it, s->msg);
	while (pb_next(&it, &f))
		if (f.num == 5 && f.wire == PB_LEN && pb_get_bytes(f.data, 1, &k) &&
		    ali_span_eq(k, key) && pb_get_bytes(f.data, 2, val))
			found = true;
	return found;
}

static bool is_const_op(const struct al_node *p)
{
	if (p->kind >= 0)
		return (ali_mil_kinds[p->kind].flags & AL_OPF_CONST) != 0;
	return strncmp(p->type, "constexpr_", 10) == 0;
}

/* What `param` of n is bound to; for CV_VALUE / CV_BLOB *val is the Value,
 * and *cval the const op's decoded value when it comes from one (else NULL).
 * An op input of that name, else an attribute (constexpr_* ops of the
 * iOS16/17 opsets and custom_layer keep their parameters there). */
static int param_value(const struct al_node *n, const char *param, al_span *val, bool *is_const,
		       const struct al_mil_cval **cval)
{
	al_span b = {0};
	int k;
	*is_const = false;
	*cval = NULL;
	const struct al_mil_arg *a = ali_mil_find_arg(n, param);
	const struct al_mil_bind *bd = a && a->n_binds ? &a->binds[0] : NULL;
	if (a) {
		k = bd ? bd->kind : 0;
		if (k)
			b = bd->data;
	} else {
		k = ali_mil_find_attr(n, param, &b) ? 2 : 0;
		if (k && strcmp(param, "name") == 0)
			k = 0; /* the op's own name is not a parameter */
	}
	if (k == 0)
		return CV_ABSENT;
	if (k == 2) {
		*is_const = true;
		*val = b;
		return ali_mil_value_class(b);
	}
	const struct al_mil_ent *e = bind_ent(n, bd);
	if (!e || !e->node)
		return CV_OPAQUE;
	*is_const = is_const_op(e->node);
	const struct al_node_src *ps = al_src(e->node);
	const struct al_mil_cval *cv = ps ? ps->mil_cval : NULL; /* a `const` with a `val` */
	if (!cv)
		return CV_OPAQUE;
	*val = cv->val;
	*cval = cv;
	return cv->cv;
}

bool ali_mil_tensor_of(al_span val, struct tval *t)
{
	al_span ty, iv, tv;
	uint64_t dt;
	memset(t, 0, sizeof *t);
	if (pb_get_bytes(val, 2, &ty) && pb_get_bytes(ty, 1, &t->ttype) &&
	    pb_get_varint(t->ttype, 1, &dt) && dt <= INT_MAX)
		t->dtype = (int)dt;
	if (!pb_get_bytes(val, 3, &iv) || !pb_get_bytes(iv, 1, &tv))
		return false;
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, tv);
	while (pb_next(&it, &f))
		if (f.num >= 1 && f.num <= 7 && f.wire == PB_LEN) { /* oneof: the last wins */
			t->field = f.num;
			t->rep = f.data;
		}
	return !it.err;
}

/* An IEEE binary16 value (low 16 bits of h) as a double (model.h). */
double ali_half_to_double(uint32_t h)
{
	int e = (int)(h >> 10 & 0x1f);
	double f = (double)(h & 0x3ff), v;
	if (e == 0)
		v = ldexp(f, -24);
	else if (e == 31)
		v = f != 0 ? NAN : INFINITY;
	else
		v = ldexp(f + 1024, e - 25);
	return h & 0x8000 ? -v : v;
}

/* Output of the element readers: ints, doubles or floats (the interpreter). */
struct sink {
	int64_t *i;
	double *d;
	float *f;
	size_t max, n;
};

static void put_int(struct sink *s, int64_t v)
{
	if (s->n < s->max) {
		if (s->i)
			s->i[s->n] = v;
		else if (s->f)
			s->f[s->n] = (float)v;
		else
			s->d[s->n] = (double)v;
	}
	s->n++;
}

static void put_double(struct sink *s, double v)
{
	if (s->n < s->max) {
		if (s->f)
			s->f[s->n] = (float)v;
		else
			s->d[s->n] = v;
	}
	s->n++;
}

/* One varint of Repeated{Floats = 1, Ints = 2, Bools = 3, LongInts = 5}. */
static void put_varint(struct sink *s, uint32_t field, uint64_t u)
{
	if (field == 2) /* int32: 10-byte sign-extended, or 5-byte */
		put_int(s, ali_mil_u2i(u & 0x80000000u ? u | ~(uint64_t)0xffffffffu : u & 0xffffffffu));
	else if (field == 3)
		put_int(s, u != 0);
	else
		put_int(s, ali_mil_u2i(u));
}

/* Repeated{Ints,LongInts,Bools}: values = 1, packed or not. */
static bool read_varints(al_span rep, uint32_t field, struct sink *s)
{
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, rep);
	while (pb_next(&it, &f)) {
		if (f.num != 1)
			continue;
		if (f.wire == PB_VARINT) {
			put_varint(s, field, f.u);
			continue;
		}
		if (f.wire != PB_LEN)
			return false;
		for (size_t pos = 0; pos < f.data.n;) {
			uint64_t u;
			if (pb_varint(f.data.p, f.data.n, &pos, &u))
				return false;
			put_varint(s, field, u);
		}
	}
	return !it.err;
}

/* One little-endian IEEE value of `width` bytes (bits in u). */
static void put_fixed(struct sink *s, uint64_t u, unsigned width)
{
	if (width == 4) {
		uint32_t b = (uint32_t)u;
		float x;
		memcpy(&x, &b, 4);
		put_double(s, x);
	} else {
		double x;
		memcpy(&x, &u, 8);
		put_double(s, x);
	}
}

/* Repeated{Floats,Doubles}: values = 1, packed or not. */
static bool read_fixed(al_span rep, unsigned width, struct sink *s)
{
	struct pb_iter it;
	struct pb_field f;
	enum pb_wire single = width == 4 ? PB_FIXED32 : PB_FIXED64;
	pb_iter_init(&it, rep);
	while (pb_next(&it, &f)) {
		if (f.num != 1)
			continue;
		if (f.wire == single) {
			put_fixed(s, f.u, width);
			continue;
		}
		if (f.wire != PB_LEN || f.data.n % width)
			return false;
		for (size_t i = 0; i < f.data.n; i += width)
			put_fixed(s, width == 4 ? al_rd32le(f.data.p + i) : al_rd64le(f.data.p + i), width);
	}
	return !it.err;
}

/* Elements in a TensorType's shape, or -1 if not all dimensions are known. */
static long long shape_count(al_span tt)
{
	struct pb_iter it;
	struct pb_field f;
	long long n = 1;
	al_span cst;
	uint64_t size;
	pb_iter_init(&it, tt);
	while (pb_next(&it, &f)) {
		if (f.num != 3 || f.wire != PB_LEN)
			continue;
		if (!pb_get_bytes(f.data, 1, &cst))
			return -1;
		size = 0;
		pb_get_varint(cst, 1, &size);
		if (size && (unsigned long long)n > (unsigned long long)LLONG_MAX / size)
			return -1;
		n *= (long long)size;
	}
	return it.err ? -1 : n;
}

/* RepeatedBytes (values = 1, one bytes field): a raw little-endian array of
 * the declared dtype; sub-byte types packed LSB-first. */
static bool read_bytes(const struct tval *t, struct sink *s)
{
	int bits, sgn = 0, flt = 0;
	switch (t->dtype) {
	case AL_DT_BOOL: case AL_DT_UINT8: bits = 8; break;
	case AL_DT_INT8: bits = 8; sgn = 1; break;
	case AL_DT_UINT16: bits = 16; break;
	case AL_DT_INT16: bits = 16; sgn = 1; break;
	case AL_DT_UINT32: bits = 32; break;
	case AL_DT_INT32: bits = 32; sgn = 1; break;
	case AL_DT_UINT64: bits = 64; break;
	case AL_DT_INT64: bits = 64; sgn = 1; break;
	case AL_DT_FP16: bits = 16; flt = 1; break;
	case AL_DT_BF16: bits = 16; flt = 2; break;
	case AL_DT_FP32: bits = 32; flt = 1; break;
	case AL_DT_FP64: bits = 64; flt = 1; break;
	case AL_DT_INT4: bits = 4; sgn = 1; break;
	case AL_DT_UINT4: bits = 4; break;
	case AL_DT_UINT1: bits = 1; break;
	case AL_DT_UINT2: bits = 2; break;
	case AL_DT_UINT3: bits = 3; break;
	case AL_DT_UINT6: bits = 6; break;
	default: return false;
	}
	if (flt && !s->d && !s->f)
		return false;
	al_span raw = {0};
	pb_get_bytes(t->rep, 1, &raw);
	if (bits >= 8) {
		unsigned w = (unsigned)bits / 8;
		if (raw.n % w)
			return false;
		for (size_t i = 0; i < raw.n; i += w) {
			uint64_t u = w == 1 ? raw.p[i] : w == 2 ? (uint64_t)(raw.p[i] | raw.p[i + 1] << 8)
				   : w == 4 ? al_rd32le(raw.p + i) : al_rd64le(raw.p + i);
			if (flt == 2)
				put_fixed(s, u << 16, 4); /* bfloat16: the top half of an fp32 */
			else if (flt && bits == 16)
				put_double(s, ali_half_to_double((uint32_t)u));
			else if (flt)
				put_fixed(s, u, w);
			else if (sgn && bits < 64 && (u >> (bits - 1) & 1))
				put_int(s, -(int64_t)((((uint64_t)1 << bits) - u)));
			else
				put_int(s, sgn ? ali_mil_u2i(u) : (int64_t)(u > INT64_MAX ? INT64_MAX : u));
		}
		return true;
	}
	unsigned long long cap = (unsigned long long)raw.n * 8 / (unsigned)bits;
	long long want = shape_count(t->ttype);
	unsigned long long n = want >= 0 && (unsigned long long)want <= cap ? (unsigned long long)want : cap;
	for (unsigned long long i = 0; i < n; i++) {
		uint64_t u = 0;
		for (int b = 0; b < bits; b++) {
			unsigned long long pos = i * (unsigned)bits + (unsigned)b;
			u |= (uint64_t)(raw.p[pos / 8] >> (pos % 8) & 1) << b;
		}
		if (sgn && (u >> (bits - 1) & 1))
			put_int(s, (int64_t)u - ((int64_t)1 << bits));
		else
			put_int(s, (int64_t)u);
	}
	return true;
}

/* The numbers of an immediate tensor Value into s; -1 when not readable. */
/* The numbers of the immediate tensor t into s; -1 when not readable. */
static long read_tval(const struct tval *t, struct sink *s)
{
	bool ok, fl = s->d || s->f;
	switch (t->field) {
	case 2: case 3: case 5: ok = read_varints(t->rep, t->field, s); break;
	case 1: ok = fl && read_fixed(t->rep, 4, s); break;
	case 6: ok = fl && read_fixed(t->rep, 8, s); break;
	case 7: ok = read_bytes(t, s); break;
	case 0: ok = true; break; /* an empty tensor */
	default: ok = false; break;
	}
	return ok && s->n <= LONG_MAX ? (long)s->n : -1;
}

/* The numbers of an immediate tensor Value into s; -1 when not readable. */
static long read_tensor(al_span val, struct sink *s)
{
	struct tval t;
	if (!ali_mil_tensor_of(val, &t))
		return -1;
	return read_tval(&t, s);
}

static long read_param(const struct al_node *n, const char *param, struct sink *s)
{
	al_span val;
	bool is_const;
	const struct al_mil_cval *cv;
	int k = param_value(n, param, &val, &is_const, &cv);
	if (k == CV_ABSENT)
		return 0;
	if (k != CV_VALUE)
		return -1;
	if (cv) /* a const op's value, decoded at load */
		return cv->tensor ? read_tval(&cv->t, s) : -1;
	return read_tensor(val, s);
}

long ali_mil_param_ints(const struct al_node *n, const char *param, int64_t *out, size_t max)
{
	int64_t dummy;
	struct sink s = {.i = out ? out : &dummy, .max = out ? max : 0};
	return read_param(n, param, &s);
}

long ali_mil_param_floats(const struct al_node *n, const char *param, double *out, size_t max)
{
	double dummy;
	struct sink s = {.d = out ? out : &dummy, .max = out ? max : 0};
	return read_param(n, param, &s);
}

bool ali_mil_param_string(const struct al_node *n, const char *param, char *out, size_t cap)
{
	al_span val, str;
	bool is_const;
	struct tval t;
	const struct al_mil_cval *cv;
	if (!out || !cap || param_value(n, param, &val, &is_const, &cv) != CV_VALUE)
		return false;
	if (cv ? !cv->tensor : !ali_mil_tensor_of(val, &t))
		return false;
	const struct tval *tp = cv ? &cv->t : &t;
	if (tp->field != 4 || !pb_get_bytes(tp->rep, 1, &str) || str.n >= cap)
		return false;
	memcpy(out, str.p, str.n);
	out[str.n] = '\0';
	return true;
}

bool ali_mil_param_present(const struct al_node *n, const char *param)
{
	al_span val;
	bool is_const;
	const struct al_mil_cval *cv;
	return param_value(n, param, &val, &is_const, &cv) != CV_ABSENT;
}

bool ali_mil_param_is_const(const struct al_node *n, const char *param)
{
	al_span val;
	bool is_const;
	const struct al_mil_cval *cv;
	param_value(n, param, &val, &is_const, &cv);
	return is_const;
}

const struct al_ttype *ali_mil_param_type(const struct al_node *n, const char *param)
{
	const struct al_mil_arg *a = ali_mil_find_arg(n, param);
	const struct al_mil_ent *e;
	if (!a || !a->n_binds || a->binds[0].kind != 1 || !(e = bind_ent(n, &a->binds[0])))
		return NULL;
	return e->type;
}

/* What name resolves to from n: for a string of n->inputs (the usual
 * question: who produces my input i), read from the inputs resolved at load. */
static const struct al_mil_ent *name_ent(const struct al_node *n, const char *name)
{
	const struct al_node_src *s = n ? al_src(n) : NULL;
	if (s && s->mil_in_ents)
		for (uint32_t i = 0; i < n->n_inputs; i++)
			if (n->inputs[i] == name)
				return s->mil_in_ents[i];
	return ali_mil_resolve(n, (al_span){(const uint8_t *)name, strlen(name)});
}

const struct al_node *ali_mil_producer(const struct al_node *n, const char *name)
{
	if (!name)
		return NULL;
	const struct al_mil_ent *e = name_ent(n, name);
	return e ? e->node : NULL;
}

const struct al_ttype *ali_mil_value_type(const struct al_node *n, const char *name)
{
	if (!name)
		return NULL;
	const struct al_mil_ent *e = name_ent(n, name);
	return e ? e->type : NULL;
}

/* ================================================================ values for the interpreter */

bool ali_mil_block_io(const struct al_graph *g, struct al_mil_block_io *io)
{
	memset(io, 0, sizeof *io);
	if (!g || !g->function) /* not an ML Program graph (mil.c allocates those) */
		return false;
	*io = ((const struct mil_graph *)g)->io;
	return true;
}

int ali_mil_param_binding(const struct al_node *n, const char *param, uint32_t k, al_span *out)
{
	const struct al_mil_arg *a = ali_mil_find_arg(n, param);
	if (!a || k >= a->n_binds)
		return 0;
	const struct al_mil_bind *b = &a->binds[k];
	if (b->kind)
		*out = b->data;
	return b->kind;
}

uint32_t ali_mil_param_count(const struct al_node *n, const char *param)
{
	const struct al_mil_arg *a = ali_mil_find_arg(n, param);
	return a ? a->n_binds : 0;
}

bool ali_mil_attr(const struct al_node *n, const char *key, al_span *val)
{
	return ali_mil_find_attr(n, key, val);
}

bool ali_mil_value_read(al_span v, struct al_mil_value *out)
{
	al_span vt, tt, x;
	uint64_t u;
	memset(out, 0, sizeof *out);
	out->rank = -1;
	if (pb_get_bytes(v, 2, &vt) && pb_get_bytes(vt, 1, &tt)) { /* ValueType.tensorType */
		if (pb_get_varint(tt, 1, &u) && u <= INT_MAX)
			out->dtype = (int)u;
		struct pb_iter it;
		struct pb_field f;
		int r = 0;
		bool known = true;
		pb_iter_init(&it, tt);
		while (pb_next(&it, &f)) {
			if (f.num != 3 || f.wire != PB_LEN)
				continue;
			al_span c;
			uint64_t size = 0;
			if (pb_get_bytes(f.data, 1, &c) && !pb_has(f.data, 2))
				pb_get_varint(c, 1, &size);
			else
				known = false;
			if (r < AL_SHAPE_MAX_RANK)
				out->dims[r] = size <= INT64_MAX ? (int64_t)size : -1;
			r++;
		}
		if (it.err)
			return false;
		bool variadic = pb_get_varint(tt, 2, &u) && ali_mil_u2i(u) < 0;
		out->rank = known && !variadic && r <= AL_SHAPE_MAX_RANK ? r : -1;
	}
	if (pb_get_bytes(v, 5, &x)) { /* blobFileValue {fileName = 1, offset = 2} */
		al_span name = {0};
		out->kind = AL_MV_BLOB;
		pb_get_bytes(x, 1, &name);
		pb_get_varint(x, 2, &out->blob_offset);
		out->blob_in_weights = ali_span_eq(name, WEIGHTS_FILE);
		return true;
	}
	al_span iv;
	if (!pb_get_bytes(v, 3, &iv))
		return true; /* AL_MV_NONE */
	struct tval t;
	if (pb_get_bytes(iv, 1, &x)) {
		if (!ali_mil_tensor_of(v, &t))
			return false;
		out->kind = t.field == 4 ? AL_MV_STRINGS : AL_MV_TENSOR;
	} else if (pb_get_bytes(iv, 3, &x) || pb_get_bytes(iv, 2, &x)) {
		out->kind = AL_MV_LIST;
	} else {
		out->kind = AL_MV_OTHER;
	}
	return true;
}

long ali_mil_value_floats(al_span v, float *out, size_t max)
{
	float dummy;
	struct sink s = {.f = out ? out : &dummy, .max = out ? max : 0};
	return read_tensor(v, &s);
}

/* One string or number of a scalar Value (a list element) as text. */
long ali_mil_value_strings(al_span v, al_span *out, size_t max)
{
	struct tval t;
	al_span iv, lv;
	size_t n = 0;
	if (pb_get_bytes(v, 3, &iv) && !pb_has(iv, 1) &&
	    (pb_get_bytes(iv, 3, &lv) || pb_get_bytes(iv, 2, &lv))) {
		/* ListValue / TupleValue: values = 1, each a scalar string Value */
		struct pb_iter it;
		struct pb_field f;
		pb_iter_init(&it, lv);
		while (pb_next(&it, &f)) {
			al_span s;
			if (f.num != 1 || f.wire != PB_LEN)
				continue;
			if (!ali_mil_tensor_of(f.data, &t) || t.field != 4 || !pb_get_bytes(t.rep, 1, &s))
				return -1;
			if (n < max)
				out[n] = s;
			n++;
		}
		return !it.err && n <= LONG_MAX ? (long)n : -1;
	}
	if (!ali_mil_tensor_of(v, &t) || t.field != 4)
		return -1;
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, t.rep); /* RepeatedStrings: values = 1 */
	while (pb_next(&it, &f)) {
		if (f.num != 1 || f.wire != PB_LEN)
			continue;
		if (n < max)
			out[n] = f.data;
		n++;
	}
	return !it.err && n <= LONG_MAX ? (long)n : -1;
}

long ali_mil_value_list_ints(al_span v, int64_t *out, size_t max)
{
	al_span iv, lv;
	size_t n = 0;
	if (!pb_get_bytes(v, 3, &iv) || pb_has(iv, 1) ||
	    !(pb_get_bytes(iv, 3, &lv) || pb_get_bytes(iv, 2, &lv)))
		return -1;
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, lv);
	while (pb_next(&it, &f)) {
		if (f.num != 1 || f.wire != PB_LEN)
			continue;
		int64_t x;
		struct sink s = {.i = &x, .max = 1};
		if (read_tensor(f.data, &s) != 1)
			return -1;
		if (n < max)
			out[n] = x;
		n++;
	}
	return !it.err && n <= LONG_MAX ? (long)n : -1;
}

const char *ali_mil_blob(const struct al_model *m, uint64_t offset, al_span *data, int *dtype)
{
	const uint8_t *p = m->weights.p;
	size_t size = m->weights.n;
	if (!size)
		return "weights/weight.bin is absent or empty";
	if (!p) /* read by records only (base.h, struct al_map: the WebAssembly build) */
		return "weight.bin's blobs are not in memory here (it is read by records only)";
	if (offset > size || size - offset < BLOB_META)
		return "the blob metadata runs past the end of weight.bin";
	const uint8_t *md = p + offset;
	uint32_t bdt = al_rd32le(md + 4);
	if (al_rd32le(md) != BLOB_SENTINEL)
		return "no blob at that offset of weight.bin (bad sentinel)";
	if (bdt < 1 || bdt > 17)
		return "the blob has an unknown data type";
	uint64_t n = al_rd64le(md + 8), at_ = al_rd64le(md + 16);
	if (at_ > size || n > size - at_)
		return "the blob data runs past the end of weight.bin";
	*data = (al_span){p + at_, (size_t)n};
	*dtype = ali_mil_blob_dtype[bdt];
	return NULL;
}

/* The constant holding op n's weights, as the file names it (docs/json-schema.md
 * "weights"): the const op bound to its weight parameter (weight_params) when
 * its value is a blob of weight.bin, or the constexpr_* op there (compressed
 * weights). coremltools writes
 * every fp16/fp32 constant of 10 elements or more as a blob and names the
 * constants made of a PyTorch module's parameters after the parameter
 * ("c1.weight" -> "c1_weight", then "_to_fp16" when cast); it writes no other
 * trace of the module an op came from. NULL when there is none, and for
 * NeuralNetwork layers (their weights carry no name). */
/* A constant that is a weight: a blob of weight.bin, or compressed (constexpr_*). */
static bool is_weight_const(const struct al_node *p)
{
	if (!p || !p->type || !p->name)
		return false;
	if (strncmp(p->type, "constexpr_", 10) == 0)
		return true;
	al_span v;
	struct al_mil_value mv;
	return strcmp(p->type, "const") == 0 && ali_mil_attr(p, "val", &v) && ali_mil_value_read(v, &mv) &&
	       mv.kind == AL_MV_BLOB;
}

/* The parameters that hold an op's weights: any op's `weight` (conv, linear,
 * conv_transpose...) and `gamma` (the norms), a matmul's constant operand, the
 * table a gather reads (an embedding). Other constants an op reads (a
 * while_loop's initial values, a shape) are not weights. */
static const struct weight_param {
	const char *op; /* NULL: any op */
	const char *param;
} weight_params[] = {
	{NULL, "weight"}, {NULL, "gamma"}, {"matmul", "y"}, {"matmul", "x"}, {"gather", "x"},
};

const char *ali_node_weights(const struct al_node *n)
{
	const struct al_node_src *s = n ? al_src(n) : NULL;
	if (!s || !s->mil_scope || !n->type)
		return NULL;
	for (size_t k = 0; k < sizeof weight_params / sizeof weight_params[0]; k++) {
		const struct weight_param *w = &weight_params[k];
		al_span want;
		if ((w->op && strcmp(w->op, n->type) != 0) || ali_mil_param_binding(n, w->param, 0, &want) != 1)
			continue;
		for (uint32_t i = 0; i < n->n_inputs; i++)
			if (ali_span_eq(want, n->inputs[i])) {
				const struct al_node *p = ali_mil_producer(n, n->inputs[i]);
				if (is_weight_const(p))
					return p->name;
				break;
			}
	}
	return NULL;
}


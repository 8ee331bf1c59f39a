/* SPDX-License-Identifier: MIT */
/* mil.c: walks an ML Program (MIL.proto) into graphs: one per function, one
 * node per op, child graphs for cond / while_loop blocks, a value-name scope and
 * the block interface (inputs, returned names) per graph; checks each blob
 * reference against weight.bin's 64-byte metadata (the weight data is never
 * read); answers the rules' al_mil_* parameter questions and the interpreter's
 * (bindings, attributes, immediate values decoded to floats or strings, where
 * a blob's bytes are: mil_value.c). It does not infer shapes, check ops
 * against their opset, or evaluate any op.
 */
#include "mil_int.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIAGS 100      /* stored per program; the rest are counted in one note */
#define MAX_VALUE_DEPTH 8  /* list / tuple / dictionary Values searched for blobs */
#define MAX_UNKNOWN 256    /* distinct unknown op types noted per program */
#define NF 8               /* fields 1..NF-1 counted by scan() */
#define LEN(n) (1u << (n)) /* scan() masks */
#define WEIGHTS_FILE "@model_path/weights/weight.bin"
#define WEIGHTS_DIR "@model_path/weights/"
#define BLOB_SENTINEL 0xDEADBEEFu
#define BLOB_META 64 /* bytes in the storage header and in each blob_metadata */
#define TYPE_MEMO 256 /* ValueTypes remembered per program (parse_named) */
#define KIND_MEMO 64  /* op types remembered per program (parse_op) */


/* ================================================================ the walk */

struct blob_ref {
	uint64_t offset;            /* of the blob_metadata record in weight.bin */
	const struct al_node *node; /* the op whose Value refers to it */
	const char *where;          /* field path of that Value */
	int dtype;                  /* declared MIL dtype of the Value, 0 if none */
	size_t seq;
};

struct walk {
	struct al_model *m;
	struct al_submodel *sub;
	al_span prog;   /* the Program message */
	uint64_t base;  /* offset of prog.p in `file` */
	const char *file;
	al_diags *d;
	size_t n_errors, n_unsupported; /* errors added; of those, unsupported blob files */
	size_t n_shown, n_hidden;        /* diagnostics stored in d / only counted */
	bool nomem;
	struct blob_ref *refs;
	size_t n_refs, cap_refs;
	const char *unknown[MAX_UNKNOWN];
	/* ValueTypes read already and what they gave (parse_named): converters
	 * repeat a few types thousands of times; direct-mapped by hash, an
	 * entry checked byte for byte */
	struct type_memo {
		al_span bytes;
		struct al_ttype t;
	} memo[TYPE_MEMO];
	/* op types seen and their row of the MIL op table (parse_op) */
	struct kind_memo {
		al_span bytes;
		const char *type;
		int kind;
	} kinds[KIND_MEMO];
	/* the field path of the op input or attribute being read, built only
	 * when a diagnostic or a blob reference needs it (where_of) */
	struct lazy_where {
		const char *path, *mid, *name;
		size_t n;
		bool built;
		char buf[512];
	} lz;
	size_t n_unknown;
};

static uint64_t at(const struct walk *w, const uint8_t *p)
{
	return w->base + (uint64_t)(p - w->prog.p);
}

/* Passed as `where` for w->lz: the path is built on first use. */
static const char LAZY_WHERE[] = "";

static void where3(char *buf, size_t cap, const char *path, const char *mid, const char *name,
		   size_t n);

/* w->lz will stand for "<path><mid><name[0..n)>]"; returns LAZY_WHERE. */
static const char *lazy_where(struct walk *w, const char *path, const char *mid, const char *name,
			      size_t n)
{
	w->lz.path = path;
	w->lz.mid = mid;
	w->lz.name = name;
	w->lz.n = n;
	w->lz.built = false;
	return LAZY_WHERE;
}

/* The field path `where` stands for. */
static const char *where_of(struct walk *w, const char *where)
{
	if (where != LAZY_WHERE)
		return where;
	if (!w->lz.built) {
		where3(w->lz.buf, sizeof w->lz.buf, w->lz.path, w->lz.mid, w->lz.name, w->lz.n);
		w->lz.built = true;
	}
	return w->lz.buf;
}

__attribute__((format(printf, 7, 8)))
static void diag(struct walk *w, enum al_severity sev, const char *file, uint64_t off,
		 const char *where, const char *node, const char *fmt, ...)
{
	bool first_error = sev == AL_SEV_ERROR && w->n_errors++ == 0;
	if (w->n_shown >= MAX_DIAGS && !first_error) { /* the first error is always shown */
		w->n_hidden++;
		return;
	}
	w->n_shown++;
	va_list ap;
	va_start(ap, fmt);
	ali_diag_vadd(w->d, sev, file, off, where_of(w, where), node, fmt, ap);
	va_end(ap);
}

static void *nomem(struct walk *w)
{
	w->nomem = true;
	return NULL;
}


/* A name or string from the file, NUL-terminated in the model arena. */
static const char *dup_span(struct walk *w, al_span s)
{
	char *p = ali_arena_strndup(&w->m->arena, s.p, s.n < AL_MAX_NAME ? s.n : AL_MAX_NAME);
	return p ? p : nomem(w);
}

/* One validating pass over msg: counts fields 1..NF-1 into cnt, checks that
 * fields in `lens` are length-delimited and those in `vars` varints. Reports
 * and returns false if msg is malformed; later passes over it cannot fail. */
/* scan(), also keeping in last[k] the last field k (for k with cnt[k] > 0): of
 * the wire type lens/vars demand, so last[k].data / .u is what pb_get_bytes /
 * pb_get_varint would return, without a pass over msg for each. */
/* The fields of a message, kept by the validating pass (scan_rec) when they fit
 * in `cap`, so that the later passes over a valid message replay them instead
 * of decoding its tags again (an op's message is read 4-5 times: outputs,
 * inputs, attributes, blocks). fields_next walks the message when they did
 * not fit: the same fields in the same order either way. */
struct fields {
	struct pb_field *f;
	size_t cap, n;
	bool all; /* f[0..n) are all of the message's fields */
};

struct fields_iter {
	const struct fields *fs;
	size_t i;
	struct pb_iter it;
};

static void fields_begin(struct fields_iter *fi, const struct fields *fs, al_span msg)
{
	fi->fs = fs && fs->all ? fs : NULL;
	fi->i = 0;
	pb_iter_init(&fi->it, msg);
}

static bool fields_next(struct fields_iter *fi, struct pb_field *f)
{
	if (!fi->fs)
		return pb_next(&fi->it, f);
	if (fi->i >= fi->fs->n)
		return false;
	*f = fi->fs->f[fi->i++];
	return true;
}

static bool scan_rec(struct walk *w, al_span msg, unsigned lens, unsigned vars, size_t cnt[NF],
		     struct pb_field *last, struct fields *rec, const char *where, const char *node)
{
	struct pb_iter it;
	struct pb_field f;
	memset(cnt, 0, NF * sizeof cnt[0]);
	if (rec) {
		rec->n = 0;
		rec->all = true;
	}
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (rec) {
			if (rec->n < rec->cap)
				rec->f[rec->n++] = f;
			else
				rec->all = false;
		}
		if (f.num >= NF)
			continue;
		if (last)
			last[f.num] = f;
		unsigned bit = 1u << f.num;
		if (((lens & bit) && f.wire != PB_LEN) || ((vars & bit) && f.wire != PB_VARINT)) {
			diag(w, AL_SEV_ERROR, w->file, at(w, msg.p + f.start), where, node,
			     "field %u has wire type %d, expected %s", f.num, (int)f.wire,
			     (lens & bit) ? "a length-delimited field" : "a varint");
			return false;
		}
		cnt[f.num]++;
	}
	if (it.err) {
		diag(w, AL_SEV_ERROR, w->file, at(w, msg.p + it.err_pos), where, node,
		     "malformed protobuf: %s", pb_err_str(it.err));
		return false;
	}
	return true;
}

static bool scan_last(struct walk *w, al_span msg, unsigned lens, unsigned vars, size_t cnt[NF],
		      struct pb_field *last, const char *where, const char *node)
{
	return scan_rec(w, msg, lens, vars, cnt, last, NULL, where, node);
}

static bool scan(struct walk *w, al_span msg, unsigned lens, unsigned vars, size_t cnt[NF],
		 const char *where, const char *node)
{
	return scan_last(w, msg, lens, vars, cnt, NULL, where, node);
}

/* A repeated count that must fit the uint32_t counts of the view. */
static bool count_ok(struct walk *w, size_t n, const uint8_t *p, const char *where, const char *what)
{
	if (n <= UINT32_MAX / 2)
		return true;
	diag(w, AL_SEV_ERROR, w->file, at(w, p), where, NULL, "too many %s (%zu)", what, n);
	return false;
}

/* Value.immediateValue.tensor.strings.values[0], if that is what v holds. */
static bool value_string(al_span v, al_span *out)
{
	al_span iv, tv, rs;
	return pb_get_bytes(v, 3, &iv) && pb_get_bytes(iv, 1, &tv) && pb_get_bytes(tv, 4, &rs) &&
	       pb_get_bytes(rs, 1, out);
}

/* ================================================================ types */

/* TensorType: dataType = 1, rank = 2, dimensions = 3, attributes = 4.
 * Dimension: oneof { constant = 1 {size = 1}, unknown = 2 {variadic = 1} }. */
static bool parse_tensor_type(struct walk *w, al_span msg, struct al_ttype *t, const char *where,
			      const char *node)
{
	size_t c[NF];
	struct pb_field last[NF];
	if (!scan_last(w, msg, LEN(3) | LEN(4), LEN(1) | LEN(2), c, last, where, node))
		return false;
	/* fields 1 and 2 are varints (scan_last checked): their last values */
	t->dtype = c[1] ? (last[1].u <= INT_MAX ? (int)last[1].u : -1) : AL_DT_UNKNOWN;
	int64_t rank = c[2] ? ali_mil_u2i(last[2].u) : 0; /* 10-byte -1 reads as -1 */
	size_t nd = c[3], keep = nd < AL_MAX_RANK ? nd : AL_MAX_RANK;
	int64_t *dims = NULL;
	if (keep && !(dims = ali_arena_array(&w->m->arena, keep, sizeof *dims)))
		return nomem(w);
	struct pb_iter it;
	struct pb_field f;
	size_t i = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f) && i < keep) {
		if (f.num != 3)
			continue;
		size_t dc[NF];
		struct pb_field dl[NF];
		if (!scan_last(w, f.data, LEN(1) | LEN(2), 0, dc, dl, where, node))
			return false;
		uint64_t size = 0;
		dims[i] = -1;
		if (dc[1] && !dc[2]) { /* constant (the last one), and not unknown */
			pb_get_varint(dl[1].data, 1, &size); /* absent = 0 */
			dims[i] = size <= INT64_MAX ? (int64_t)size : -1;
		}
		i++;
	}
	t->dims = dims;
	t->rank = (int)keep;
	if (rank < -1 || rank > AL_MAX_RANK) {
		diag(w, AL_SEV_WARNING, w->file, at(w, msg.p), where, node,
		     "tensor rank %lld is out of range; treated as unknown", (long long)rank);
		t->rank = -1;
		t->dims = NULL;
	} else if (rank == -1) {
		if (nd)
			diag(w, AL_SEV_WARNING, w->file, at(w, msg.p), where, node,
			     "variable-rank tensor type lists %zu dimensions; ignored", nd);
		t->rank = -1;
		t->dims = NULL;
	} else if ((uint64_t)rank != nd) {
		diag(w, AL_SEV_WARNING, w->file, at(w, msg.p), where, node,
		     "tensor type says rank %lld but lists %zu dimensions; using the dimensions",
		     (long long)rank, nd);
		if (nd > AL_MAX_RANK) {
			t->rank = -1;
			t->dims = NULL;
		}
	}
	return true;
}

/* ValueType: oneof { tensorType = 1, listType = 2, tupleType = 3,
 * dictionaryType = 4, stateType = 5 }. Lists and states keep the element /
 * wrapped tensor's dtype (and a state its shape). */
static bool parse_value_type(struct walk *w, al_span msg, struct al_ttype *t, const char *where,
			     const char *node)
{
	size_t c[NF];
	t->kind = 0;
	t->dtype = AL_DT_UNKNOWN;
	t->rank = -1;
	t->dims = NULL;
	struct pb_field last[NF]; /* fields 1-5 are length-delimited (checked) */
	if (!scan_last(w, msg, LEN(1) | LEN(2) | LEN(3) | LEN(4) | LEN(5), 0, c, last, where, node))
		return false;
	al_span x, inner, tt;
	uint64_t dt;
	if (c[1])
		return parse_tensor_type(w, last[1].data, t, where, node);
	if (c[2]) { /* ListType: type = 1 (ValueType), length = 2 */
		x = last[2].data;
		t->kind = 1;
		if (pb_get_bytes(x, 1, &inner) && pb_get_bytes(inner, 1, &tt) &&
		    pb_get_varint(tt, 1, &dt) && dt <= INT_MAX)
			t->dtype = (int)dt;
		return true;
	}
	if (c[3]) {
		t->kind = 2;
		return true;
	}
	if (c[4]) {
		t->kind = 3;
		return true;
	}
	if (c[5]) { /* StateType: wrappedType = 1 (ValueType) */
		x = last[5].data;
		bool ok = true;
		if (pb_get_bytes(x, 1, &inner) && pb_get_bytes(inner, 1, &tt))
			ok = parse_tensor_type(w, tt, t, where, node);
		t->kind = 4;
		return ok;
	}
	return true; /* no type given: unknown */
}

/* NamedValueType: name = 1, type = 2. */
static bool parse_named(struct walk *w, al_span msg, const char **name, struct al_ttype *t,
			const char *where, const char *node)
{
	size_t c[NF];
	struct pb_field last[NF]; /* fields 1 and 2 are length-delimited (checked) */
	t->rank = -1;
	*name = "";
	if (!scan_last(w, msg, LEN(1) | LEN(2), 0, c, last, where, node))
		return false;
	if (!(*name = dup_span(w, c[1] ? last[1].data : (al_span){0})))
		return false;
	if (!c[2])
		return true;
	/* a ValueType read before without a diagnostic gives the same type again
	 * (its dims are shared: al_ttype.dims is const) */
	al_span vt = last[2].data;
	struct type_memo *e = &w->memo[ali_hash_bytes(AL_HASH_INIT, vt.p, vt.n) % TYPE_MEMO];
	if (e->bytes.p && e->bytes.n == vt.n && !memcmp(e->bytes.p, vt.p, vt.n)) {
		*t = e->t;
		return true;
	}
	size_t diags = w->n_shown + w->n_hidden;
	if (!parse_value_type(w, vt, t, where, node))
		return false;
	if (w->n_shown + w->n_hidden == diags && vt.n) {
		e->bytes = vt;
		e->t = *t;
	}
	return true;
}

/* The NamedValueTypes (field `num`) of msg, `n` of them, into new arrays. */
static bool parse_named_list(struct walk *w, al_span msg, const struct fields *fs, uint32_t num,
			     size_t n, const char ***names, struct al_ttype **types, const char *where,
			     const char *node)
{
	*names = NULL;
	*types = NULL;
	if (!n)
		return true;
	if (!(*names = ali_arena_array(&w->m->arena, n, sizeof **names)) ||
	    !(*types = ali_arena_array(&w->m->arena, n, sizeof **types)))
		return nomem(w);
	struct fields_iter it;
	struct pb_field f;
	size_t i = 0;
	bool ok = true;
	fields_begin(&it, fs, msg);
	while (fields_next(&it, &f) && i < n)
		if (f.num == num) {
			ok &= parse_named(w, f.data, &(*names)[i], &(*types)[i], where, node);
			i++;
		}
	return ok;
}

/* ================================================================ blob references */

static void add_blob_ref(struct walk *w, const struct al_node *n, al_span value, al_span bfv,
			 const char *where)
{
	size_t c[NF];
	if (!scan(w, bfv, LEN(1), LEN(2), c, where, n->name))
		return;
	al_span fname = {0};
	uint64_t off = 0;
	pb_get_bytes(bfv, 1, &fname);
	pb_get_varint(bfv, 2, &off);
	if (!ali_span_eq(fname, WEIGHTS_FILE)) {
		int len = fname.n < 200 ? (int)fname.n : 200;
		bool in_dir = fname.n > strlen(WEIGHTS_DIR) &&
			      memcmp(fname.p, WEIGHTS_DIR, strlen(WEIGHTS_DIR)) == 0;
		w->n_unsupported += in_dir;
		diag(w, AL_SEV_ERROR, w->file, at(w, bfv.p), where, n->name,
		     in_dir ? "op %s: blob file '%.*s' is not supported; anelint reads "
			      WEIGHTS_FILE " only"
			    : "op %s: blob file '%.*s' is not under " WEIGHTS_DIR,
		     n->name, len, (const char *)fname.p);
		return;
	}
	al_span ty, tt;
	uint64_t dt = 0;
	if (pb_get_bytes(value, 2, &ty) && pb_get_bytes(ty, 1, &tt))
		pb_get_varint(tt, 1, &dt);
	if (w->n_refs == w->cap_refs) {
		size_t cap = w->cap_refs ? w->cap_refs * 2 : 64;
		struct blob_ref *r = cap <= SIZE_MAX / sizeof *r ? ali_realloc(w->refs, cap * sizeof *r) : NULL;
		if (!r) {
			nomem(w);
			return;
		}
		w->refs = r;
		w->cap_refs = cap;
	}
	struct blob_ref *r = &w->refs[w->n_refs];
	r->offset = off;
	r->node = n;
	r->where = ali_arena_printf(&w->m->arena, "%s.blobFileValue", where_of(w, where));
	r->dtype = dt <= INT_MAX ? (int)dt : 0;
	r->seq = w->n_refs;
	if (!r->where) {
		nomem(w);
		return;
	}
	w->n_refs++;
}

static void scan_value(struct walk *w, const struct al_node *n, al_span v, const char *where,
		       int depth);

/* ImmediateValue: oneof { tensor = 1, tuple = 2, list = 3, dictionary = 4 };
 * Tuple/ListValue: values = 1 (Value); DictionaryValue: values = 1
 * (KeyValuePair{key = 1, value = 2}). Only the nesting is walked. */
static void scan_immediate(struct walk *w, const struct al_node *n, al_span iv, const char *where,
			   int depth)
{
	size_t c[NF];
	if (!scan(w, iv, LEN(1) | LEN(2) | LEN(3) | LEN(4), 0, c, where, n->name))
		return;
	if (!(c[2] || c[3] || c[4]) || depth >= MAX_VALUE_DEPTH)
		return;
	struct pb_iter it, vi;
	struct pb_field f, g;
	pb_iter_init(&it, iv);
	while (pb_next(&it, &f)) {
		if (f.num < 2 || f.num > 4)
			continue;
		if (!scan(w, f.data, LEN(1), 0, c, where, n->name))
			continue;
		pb_iter_init(&vi, f.data);
		while (pb_next(&vi, &g)) {
			if (g.num != 1)
				continue;
			if (f.num != 4) {
				scan_value(w, n, g.data, where, depth + 1);
				continue;
			}
			al_span k, v;
			if (!scan(w, g.data, LEN(1) | LEN(2), 0, c, where, n->name))
				continue;
			if (pb_get_bytes(g.data, 1, &k))
				scan_value(w, n, k, where, depth + 1);
			if (pb_get_bytes(g.data, 2, &v))
				scan_value(w, n, v, where, depth + 1);
		}
	}
}

/* Value: docString = 1, type = 2, immediateValue = 3, blobFileValue = 5. */
static void scan_value(struct walk *w, const struct al_node *n, al_span v, const char *where,
		       int depth)
{
	size_t c[NF];
	if (!scan(w, v, LEN(1) | LEN(2) | LEN(3) | LEN(5), 0, c, where, n->name))
		return;
	al_span x;
	if (c[5] && pb_get_bytes(v, 5, &x))
		add_blob_ref(w, n, v, x, where);
	if (c[3] && pb_get_bytes(v, 3, &x))
		scan_immediate(w, n, x, where, depth);
}

static int ref_cmp(const void *a, const void *b)
{
	const struct blob_ref *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Check one blob_metadata record (section 8 of coreml-format-facts.md) and
 * count its data bytes. Reads 64 bytes of weight.bin, nothing else. */
static void check_blob(struct walk *w, const struct blob_ref *r)
{
	size_t size = w->m->weights.n;
	const char *wf = w->m->weights_path ? w->m->weights_path : "weights/weight.bin";
	const char *op = r->node->name;
	uint64_t o = r->offset;
	if (o > size || size - o < BLOB_META) {
		diag(w, AL_SEV_ERROR, wf, o, r->where, op,
		     "op %s: blob metadata at offset %llu runs past the end of weight.bin (%zu bytes)",
		     op, (unsigned long long)o, size);
		return;
	}
	uint8_t md[BLOB_META]; /* pread, not a fault on the mapping (issue #34) */
	if (!ali_weights_meta(w->m, o, md)) {
		diag(w, AL_SEV_ERROR, wf, o, r->where, op,
		     "op %s: cannot read the blob metadata at offset %llu of weight.bin", op,
		     (unsigned long long)o);
		return;
	}
	uint32_t sentinel = al_rd32le(md), bdt = al_rd32le(md + 4);
	if (sentinel != BLOB_SENTINEL) {
		diag(w, AL_SEV_ERROR, wf, o, r->where, op,
		     "op %s: no blob at offset %llu of weight.bin (sentinel 0x%08x, expected 0x%08x)",
		     op, (unsigned long long)o, sentinel, BLOB_SENTINEL);
		return;
	}
	if (bdt < 1 || bdt > 17) {
		diag(w, AL_SEV_ERROR, wf, o + 4, r->where, op,
		     "op %s: blob at offset %llu of weight.bin has unknown data type %u", op,
		     (unsigned long long)o, bdt);
		return;
	}
	uint64_t n = al_rd64le(md + 8), data = al_rd64le(md + 16);
	if (data > size || n > size - data) {
		diag(w, AL_SEV_ERROR, wf, o + 16, r->where, op,
		     "op %s: blob at offset %llu of weight.bin: data [%llu, +%llu) runs past the "
		     "end of the file (%zu bytes)",
		     op, (unsigned long long)o, (unsigned long long)data, (unsigned long long)n, size);
		return;
	}
	if (r->dtype && r->dtype != ali_mil_blob_dtype[bdt])
		diag(w, AL_SEV_WARNING, wf, o + 4, r->where, op,
		     "op %s: blob at offset %llu of weight.bin holds %s, the value is declared %s", op,
		     (unsigned long long)o, al_dtype_name(ali_mil_blob_dtype[bdt]), al_dtype_name(r->dtype));
	struct al_weight_stats *ws = &w->sub->weights;
	switch (bdt) {
	case 2: ws->fp32 += n; break;
	case 1: ws->fp16 += n; break;
	case 5: case 16: case 17: ws->other += n; break;
	default: ws->quantized += n; break; /* (u)int 1..32 bits */
	}
	ws->n_blobs++;
}

/* Every distinct blob offset once, reported against the first op using it. */
static void check_blobs(struct walk *w)
{
	if (!w->n_refs)
		return;
	if (w->m->weights.n == 0) {
		const struct blob_ref *r = &w->refs[0];
		diag(w, AL_SEV_ERROR, w->file, r->node->offset, r->where, r->node->name,
		     "op %s references weights/weight.bin, which is %s%s", r->node->name,
		     w->m->weights_path ? "empty" : "absent",
		     w->m->is_package ? "" : " (open the .mlpackage that holds this model)");
		return;
	}
	qsort(w->refs, w->n_refs, sizeof *w->refs, ref_cmp);
	for (size_t i = 0; i < w->n_refs; i++) {
		if (i == 0 || w->refs[i].offset != w->refs[i - 1].offset)
			check_blob(w, &w->refs[i]);
		if (i % 16 == 15)
			ali_model_trim(w->m); /* see core.c: keep weight pages from piling up */
	}
}

/* ================================================================ blocks and ops */

static bool parse_block(struct walk *w, struct al_graph *g, al_span msg, const char *prefix,
			const struct al_mil_scope *parent, const char **xin, const struct al_ttype *xty,
			size_t n_xin);

static void note_unknown(struct walk *w, const struct al_node *n)
{
	for (size_t i = 0; i < w->n_unknown; i++)
		if (strcmp(w->unknown[i], n->type) == 0)
			return;
	if (w->n_unknown == MAX_UNKNOWN)
		return;
	w->unknown[w->n_unknown++] = n->type;
	diag(w, AL_SEV_NOTE, w->file, n->offset, n->path, n->name,
	     "op type '%s' is not in anelint's MIL op table; no rule checks it", n->type);
}

/* ali_arena_printf(a, "%s.operations[%u]", prefix, idx) without the two
 * vsnprintf passes (5% of a 27k-op check): the same bytes, the same size. */
static char *op_path(struct al_arena *a, const char *prefix, uint32_t idx)
{
	static const char mid[] = ".operations[";
	char num[12];
	size_t nl = 0, pl = strlen(prefix);
	do
		num[sizeof num - 1 - nl++] = (char)('0' + idx % 10);
	while ((idx /= 10) && nl < sizeof num);
	char *p = ali_arena_alloc(a, pl + sizeof mid - 1 + nl + 2);
	if (!p)
		return NULL;
	char *q = p;
	memcpy(q, prefix, pl);
	q += pl;
	memcpy(q, mid, sizeof mid - 1);
	q += sizeof mid - 1;
	memcpy(q, num + sizeof num - nl, nl);
	q += nl;
	*q++ = ']';
	*q = '\0';
	return p;
}

/* buf = "<path><mid><name[0..n)>]", truncated to cap - 1 bytes as snprintf
 * would: parse_inputs and parse_op build one such field path per input and
 * attribute of every op (only diagnostics read it), and snprintf's format
 * parsing was 7% of a 27k-op check. */
static void where3(char *buf, size_t cap, const char *path, const char *mid, const char *name,
		   size_t n)
{
	const char *parts[4] = {path, mid, name, "]"};
	size_t lens[4] = {strlen(path), strlen(mid), n, 1}, at = 0;
	for (int i = 0; i < 4 && at + 1 < cap; i++) {
		size_t k = lens[i] < cap - 1 - at ? lens[i] : cap - 1 - at;
		if (k) /* an absent key is (NULL, 0) */
			memcpy(buf + at, parts[i], k);
		at += k;
	}
	buf[at] = '\0';
}

/* Operation.inputs: map<string, Argument>; Argument: arguments = 1 (Binding);
 * Binding: oneof { name = 1, value = 2 }. Fills src->mil_args with the valid
 * entries, each with its bindings, and n->inputs with every name binding, in
 * file order. */
static void parse_inputs(struct walk *w, struct al_node *n, struct al_node_src *src, al_span msg,
			 const struct fields *fs, size_t n_entries)
{
	if (!n_entries)
		return;
	struct al_mil_arg *args = ali_arena_array(&w->m->arena, n_entries, sizeof *args);
	if (!args) {
		nomem(w);
		return;
	}
	src->mil_args = args;
	struct fields_iter it;
	struct pb_iter ai, bi;
	struct pb_field f, a, b;
	size_t c[NF], ac[NF], bc[NF], n_names = 0;
	struct pb_field last[NF];
	uint32_t k = 0, names_before = 0;
	fields_begin(&it, fs, msg);
	while (fields_next(&it, &f) && k < n_entries) {
		if (f.num != 2)
			continue;
		if (!scan_last(w, f.data, LEN(1) | LEN(2), 0, c, last, n->path, n->name))
			continue;
		al_span key = c[1] ? last[1].data : (al_span){0}, arg = c[2] ? last[2].data : (al_span){0};
		const char *param = dup_span(w, key);
		if (!param)
			return;
		const char *where = lazy_where(w, n->path, ".inputs[", param, strlen(param));
		if (!scan(w, arg, LEN(1), 0, ac, where, n->name))
			continue;
		struct al_mil_bind *binds = NULL;
		if (ac[1] && !(binds = ali_arena_array(&w->m->arena, ac[1], sizeof *binds))) {
			nomem(w);
			return;
		}
		bool ok = true;
		size_t names = 0;
		uint32_t nb = 0, kinds1 = 0;
		pb_iter_init(&ai, arg);
		while (ok && pb_next(&ai, &a)) {
			if (a.num != 1)
				continue;
			ok = scan(w, a.data, LEN(1) | LEN(2), 0, bc, where, n->name);
			names += ok && bc[1];
			struct al_mil_bind bd = {.input = UINT32_MAX};
			pb_iter_init(&bi, a.data); /* the last oneof member wins */
			while (ok && pb_next(&bi, &b)) {
				if (b.num == 1 || b.num == 2) {
					bd.kind = (uint8_t)b.num;
					bd.data = b.data;
				}
				if (b.num == 2) {
					bd.has_value = true;
					scan_value(w, n, b.data, where, 0);
				}
			}
			if (ok && nb < ac[1]) {
				if (bd.kind == 1) {
					bd.input = names_before + kinds1++;
					/* n->inputs holds it as it is (dup_span) */
					bd.plain = bd.data.n <= AL_MAX_NAME &&
						   !(bd.data.n && memchr(bd.data.p, 0, bd.data.n));
				}
				binds[nb++] = bd;
			}
		}
		if (!ok)
			continue;
		args[k] = (struct al_mil_arg){param, arg, binds, nb, names_before};
		names_before += kinds1;
		k++;
		n_names += names;
	}
	src->n_mil_args = k;
	if (!n_names || !count_ok(w, n_names, msg.p, n->path, "input bindings"))
		return;
	const char **in = ali_arena_array(&w->m->arena, n_names, sizeof *in);
	if (!in) {
		nomem(w);
		return;
	}
	uint32_t j = 0;
	for (uint32_t i = 0; i < k; i++)
		for (uint32_t q = 0; q < args[i].n_binds; q++)
			if (args[i].binds[q].kind == 1 && j < n_names &&
			    !(in[j++] = dup_span(w, args[i].binds[q].data)))
				return;
	n->inputs = in;
	n->n_inputs = j;
}

/* An op's attributes: map<string, Value>, searched for blob references, and
 * indexed for find_attr (the entries it would find: key and value present,
 * whatever scan says of the rest); a const's value decoded once for the
 * parameter readers. False when memory ran out. */
static bool parse_attributes(struct walk *w, struct al_node *n, struct al_node_src *src, al_span msg,
			     const struct fields *rec, size_t n_fields)
{
	struct fields_iter it;
	struct pb_field f;
	struct al_mil_attr *attrs =
		n_fields ? ali_arena_array(&w->m->arena, n_fields, sizeof *attrs) : NULL;
	uint32_t n_attrs = 0;
	fields_begin(&it, rec, msg);
	while (fields_next(&it, &f)) {
		if (f.num != 5)
			continue;
		al_span key = {0}, val = {0};
		size_t ec[NF];
		struct pb_field el[NF];
		bool valid = scan_last(w, f.data, LEN(1) | LEN(2), 0, ec, el, n->path, n->name);
		bool has_key, has_val;
		if (valid) { /* the last key and value, as pb_get_bytes finds them */
			if ((has_key = ec[1] > 0))
				key = el[1].data;
			if ((has_val = ec[2] > 0))
				val = el[2].data;
		} else {
			has_key = pb_get_bytes(f.data, 1, &key);
			has_val = pb_get_bytes(f.data, 2, &val);
		}
		if (attrs && has_key && has_val && n_attrs < n_fields)
			attrs[n_attrs++] = (struct al_mil_attr){key, val};
		if (!valid || !has_val)
			continue;
		size_t klen = key.n < 200 ? key.n : 200; /* as "%.*s": up to a NUL */
		const uint8_t *nul = klen ? memchr(key.p, 0, klen) : NULL;
		scan_value(w, n, val,
			   lazy_where(w, n->path, ".attributes[", (const char *)key.p,
				      nul ? (size_t)(nul - key.p) : klen),
			   0);
	}
	if (attrs || !n_fields) {
		src->mil_attrs = attrs;
		src->n_mil_attrs = n_attrs;
		src->mil_attrs_indexed = true;
	}
	/* a const's value, decoded once for the parameter readers */
	al_span cval;
	if (strcmp(n->type, "const") == 0 && ali_mil_find_attr(n, "val", &cval)) {
		struct al_mil_cval *cv = ali_arena_alloc(&w->m->arena, sizeof *cv);
		if (!cv) {
			nomem(w);
			return false;
		}
		cv->val = cval;
		cv->cv = ali_mil_value_class(cval);
		cv->tensor = cv->cv == CV_VALUE && ali_mil_tensor_of(cval, &cv->t);
		src->mil_cval = cv;
	}
	return true;
}

/* An op's nested blocks (cond / while_loop bodies): one child graph each. */
static void parse_op_blocks(struct walk *w, struct al_graph *g, struct al_node *n, al_span msg,
			    const struct fields *rec, size_t n_blocks, const struct al_mil_scope *scope)
{
	struct fields_iter it;
	struct pb_field f;
	if (!n_blocks)
		return;
	if (g->depth + 1 > AL_MAX_DEPTH) {
		diag(w, AL_SEV_ERROR, w->file, n->offset, n->path, n->name,
		     "blocks nested deeper than %d levels", AL_MAX_DEPTH);
		return;
	}
	struct al_graph **subs = ali_arena_array(&w->m->arena, n_blocks, sizeof *subs);
	if (!subs) {
		nomem(w);
		return;
	}
	n->sub = subs;
	uint32_t j = 0;
	fields_begin(&it, rec, msg);
	while (fields_next(&it, &f) && j < n_blocks) {
		if (f.num != 4)
			continue;
		struct mil_graph *mg = ali_arena_alloc(&w->m->arena, sizeof *mg);
		struct al_graph *cg = mg ? &mg->g : NULL;
		char *bp = ali_arena_printf(&w->m->arena, "%s.blocks[%u]", n->path, j);
		if (cg)
			cg->block = ali_arena_printf(&w->m->arena, "%s/%s.blocks[%u]", g->block, n->name, j);
		if (!cg || !bp || !cg->block) {
			nomem(w);
			return;
		}
		cg->function = g->function;
		cg->parent = g;
		cg->parent_node = n;
		cg->depth = g->depth + 1;
		subs[j++] = cg;
		n->n_sub = j;
		if (!parse_block(w, cg, f.data, bp, scope, NULL, NULL, 0) && w->nomem)
			return;
	}
}

/* Operation: type = 1, inputs = 2, outputs = 3, blocks = 4, attributes = 5. */
static void parse_op(struct walk *w, struct al_graph *g, struct al_node *n, al_span msg,
		     uint32_t idx, const char *prefix, const struct al_mil_scope *scope)
{
	n->index = idx;
	n->owner = g;
	n->kind = -1;
	n->type = "";
	n->offset = at(w, msg.p);
	n->path = op_path(&w->m->arena, prefix, idx);
	struct al_node_src *src = ali_arena_alloc(&w->m->arena, sizeof *src);
	if (!n->path || !src) {
		nomem(w);
		return;
	}
	n->name = n->path; /* until a better name is known */
	src->msg = msg;
	src->sub = w->sub;
	src->mil_scope = scope;
	n->priv = src;

	size_t c[NF];
	struct pb_field last[NF], recf[32];
	struct fields rec = {recf, sizeof recf / sizeof recf[0], 0, false};
	if (!scan_rec(w, msg, LEN(1) | LEN(2) | LEN(3) | LEN(4) | LEN(5), 0, c, last, &rec, n->path,
		      NULL))
		return;
	if (!count_ok(w, c[2] + c[3] + c[4] + c[5], msg.p, n->path, "op fields"))
		return;

	/* name: the first output, else attributes["name"] */
	const char **outs;
	struct al_ttype *otypes;
	if (!parse_named_list(w, msg, &rec, 3, c[3], &outs, &otypes, n->path, NULL))
		return;
	n->outputs = outs;
	n->out_types = otypes;
	n->n_outputs = (uint32_t)c[3];
	if (c[3] && outs[0][0]) {
		n->name = outs[0];
	} else {
		struct pb_iter it;
		struct pb_field f;
		al_span key, val, s;
		pb_iter_init(&it, msg);
		while (pb_next(&it, &f))
			if (f.num == 5 && pb_get_bytes(f.data, 1, &key) && ali_span_eq(key, "name") &&
			    pb_get_bytes(f.data, 2, &val) && value_string(val, &s) && s.n &&
			    !(n->name = dup_span(w, s)))
				return;
	}

	al_span ty = c[1] ? last[1].data : (al_span){0}; /* the last type field */
	if (ty.n) {
		/* a type seen before: its string and table row again */
		struct kind_memo *km = &w->kinds[ali_hash_bytes(AL_HASH_INIT, ty.p, ty.n) % KIND_MEMO];
		if (km->type && km->bytes.n == ty.n && !memcmp(km->bytes.p, ty.p, ty.n)) {
			n->type = km->type;
			n->kind = km->kind;
		} else {
			if (!(n->type = dup_span(w, ty)))
				return;
			n->kind = ali_mil_kind_by_name(n->type);
			*km = (struct kind_memo){ty, n->type, n->kind};
		}
		if (n->kind < 0)
			note_unknown(w, n);
	} else {
		diag(w, AL_SEV_ERROR, w->file, n->offset, n->path, n->name, "operation has no type");
	}

	parse_inputs(w, n, src, msg, &rec, c[2]);

	if (!parse_attributes(w, n, src, msg, &rec, c[5]))
		return;
	parse_op_blocks(w, g, n, msg, &rec, c[4], scope);
}

/* Block: inputs = 1, outputs = 2, operations = 3, attributes = 4. `xin` are
 * extra inputs visible in the block (a function's inputs). */
static bool parse_block(struct walk *w, struct al_graph *g, al_span msg, const char *prefix,
			const struct al_mil_scope *parent, const char **xin, const struct al_ttype *xty,
			size_t n_xin)
{
	struct al_mil_scope *scope = ali_arena_alloc(&w->m->arena, sizeof *scope);
	if (!scope)
		return nomem(w);
	scope->parent = parent;
	scope->runs = NULL;
	scope->mask = 0;
	size_t c[NF];
	if (!scan(w, msg, LEN(1) | LEN(2) | LEN(3) | LEN(4), 0, c, prefix, NULL))
		return false;
	if (!count_ok(w, c[1] + c[3], msg.p, prefix, "block inputs and operations"))
		return false;
	const char **bin;
	struct al_ttype *bty;
	if (!parse_named_list(w, msg, NULL, 1, c[1], &bin, &bty, prefix, NULL) && w->nomem)
		return false;
	if (!count_ok(w, c[2], msg.p, prefix, "block outputs"))
		return false;
	struct al_mil_block_io *io = &((struct mil_graph *)g)->io;
	io->inputs = n_xin ? xin : bin;
	io->in_types = n_xin ? xty : bty;
	io->n_inputs = (uint32_t)(n_xin ? n_xin : c[1]);
	if (c[2]) { /* outputs = 2: the names the block returns */
		const char **outs = ali_arena_array(&w->m->arena, c[2], sizeof *outs);
		struct pb_iter oi;
		struct pb_field of;
		if (!outs)
			return nomem(w);
		uint32_t k = 0;
		pb_iter_init(&oi, msg);
		while (pb_next(&oi, &of) && k < c[2])
			if (of.num == 2 && !(outs[k++] = dup_span(w, of.data)))
				return false;
		io->outputs = outs;
		io->n_outputs = k;
	}

	if (!ali_model_reserve_nodes(w->m, c[3])) {
		diag(w, AL_SEV_ERROR, w->file, at(w, msg.p), prefix, NULL,
		     "more than %u ops in this file (anelint's limit)", AL_MAX_NODES);
		return false;
	}
	struct al_node *nodes = NULL;
	if (c[3] && !(nodes = ali_arena_array(&w->m->arena, c[3], sizeof *nodes)))
		return nomem(w);
	g->nodes = nodes;
	struct pb_iter it;
	struct pb_field f;
	uint32_t i = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f) && i < c[3]) {
		if (f.num != 3)
			continue;
		g->n_nodes = i + 1;
		parse_op(w, g, &nodes[i], f.data, i, prefix, scope);
		if (w->nomem)
			return false;
		i++;
	}

	/* the scope: inputs first, then every op output in order */
	size_t n = n_xin + c[1];
	for (i = 0; i < g->n_nodes; i++)
		n += nodes[i].n_outputs;
	if (!count_ok(w, n, msg.p, prefix, "values"))
		return false;
	struct al_mil_ent *e = n ? ali_arena_array(&w->m->arena, n, sizeof *e) : NULL;
	if (n && !e)
		return nomem(w);
	uint32_t k = 0;
	for (size_t j = 0; j < n_xin; j++, k++)
		e[k] = (struct al_mil_ent){xin[j], NULL, &xty[j], k, 0, 0};
	for (size_t j = 0; j < c[1]; j++, k++)
		e[k] = (struct al_mil_ent){bin[j], NULL, &bty[j], k, 0, 0};
	for (i = 0; i < g->n_nodes; i++)
		for (uint32_t o = 0; o < nodes[i].n_outputs; o++, k++)
			e[k] = (struct al_mil_ent){nodes[i].outputs[o], &nodes[i], &nodes[i].out_types[o], k, 0, 0};
	for (uint32_t j = 0; j < k; j++) {
		e[j].len = (uint32_t)strlen(e[j].name);
		e[j].hash = ali_hash_bytes(AL_HASH_INIT, e[j].name, e[j].len);
	}
	if (k && !ali_mil_sort_ents(e, k))
		return nomem(w);
	scope->ents = e;
	scope->n = k;
	ali_mil_scope_index(&w->m->arena, scope);
	return true;
}

/* Names that key a scope (a function's inputs, the program's functions) must
 * be distinct: Core ML keys them by name (its validator then no longer finds
 * the model's inputs one for one). names[i] is the i-th field `num` of msg; an
 * error at the first that repeats an earlier one. False when one repeats. */
static bool distinct_names(struct walk *w, al_span msg, uint32_t num, const char *const *names,
			   size_t n, const char *where, const char *what)
{
	if (n < 2)
		return true;
	al_span *v = ali_malloc(n * sizeof *v); /* n <= the fields in msg */
	if (!v)
		return nomem(w);
	for (size_t i = 0; i < n; i++)
		v[i] = (al_span){(const uint8_t *)names[i], names[i] ? strlen(names[i]) : 0};
	size_t first, again;
	enum al_status st = ali_first_repeat(v, n, &first, &again);
	ali_free(v);
	if (st != AL_OK)
		return nomem(w);
	if (again == SIZE_MAX)
		return true;
	struct pb_iter it;
	struct pb_field f;
	const uint8_t *p = msg.p;
	size_t k = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num && k++ == again) {
			p = msg.p + f.start;
			break;
		}
	diag(w, AL_SEV_ERROR, w->file, at(w, p), where, NULL,
	     "%s %zu '%.200s%s' repeats the name of %s %zu: names must be distinct "
	     "(Core ML refuses the model)", what, again, names[again] ? names[again] : "",
	     names[again] && strlen(names[again]) > 200 ? "..." : "", what, first);
	return false;
}

/* Function: inputs = 1, opset = 2, block_specializations = 3 (map<string,
 * Block>), attributes = 4. The block whose key is the opset is read, else the
 * first one. */
static bool parse_function(struct walk *w, al_span msg, struct al_graph *g, const char **opset)
{
	char *where = ali_arena_printf(&w->m->arena, "mlProgram.functions[%s]", g->function);
	char *prefix = ali_arena_printf(&w->m->arena, "mlProgram.functions[%s].block", g->function);
	if (!where || !prefix)
		return nomem(w);
	*opset = "";
	size_t c[NF];
	if (!scan(w, msg, LEN(1) | LEN(2) | LEN(3) | LEN(4), 0, c, where, NULL))
		return false;
	al_span s = {0};
	pb_get_bytes(msg, 2, &s);
	if (!(*opset = dup_span(w, s)))
		return false;
	const char **in;
	struct al_ttype *ity;
	if (!count_ok(w, c[1], msg.p, where, "function inputs"))
		return false;
	if (!parse_named_list(w, msg, NULL, 1, c[1], &in, &ity, where, NULL)) {
		if (w->nomem)
			return false;
	} else if (!distinct_names(w, msg, 1, in, c[1], where, "function input") && w->nomem) {
		return false;
	}

	struct pb_iter it;
	struct pb_field f;
	al_span block = {0}, first_key = {0};
	bool found = false, any = false;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		size_t ec[NF];
		al_span k = {0}, b = {0};
		if (f.num != 3 || !scan(w, f.data, LEN(1) | LEN(2), 0, ec, where, NULL))
			continue;
		pb_get_bytes(f.data, 1, &k);
		pb_get_bytes(f.data, 2, &b);
		if (!any) {
			any = true;
			first_key = k;
			block = b;
		}
		if (k.n == s.n && (!k.n || memcmp(k.p, s.p, k.n) == 0)) {
			found = true;
			block = b;
		}
	}
	if (!any) {
		diag(w, AL_SEV_WARNING, w->file, at(w, msg.p), where, NULL,
		     "function %s has no block", g->function);
		return parse_block(w, g, (al_span){0}, prefix, NULL, in, ity, c[1]);
	}
	if (!found) {
		int a = first_key.n < 100 ? (int)first_key.n : 100, b = s.n < 100 ? (int)s.n : 100;
		diag(w, AL_SEV_WARNING, w->file, at(w, msg.p), where, NULL,
		     "function %s has no block for its opset '%.*s'; reading block '%.*s'",
		     g->function, b, (const char *)s.p, a, (const char *)first_key.p);
	}
	return parse_block(w, g, block, prefix, NULL, in, ity, c[1]);
}

/* Once every scope of the program is complete: what each op's input names
 * resolve to (node_src.mil_in_ents), so the lookups of the analysis read it
 * instead of searching the scopes again for every rule. */
static void resolve_inputs(struct walk *w, const struct al_graph *g, int depth)
{
	if (!g || depth > AL_MAX_DEPTH) /* parse_op bounds nesting; this is a backstop */
		return;
	for (uint32_t i = 0; i < g->n_nodes && !w->nomem; i++) {
		struct al_node *n = &g->nodes[i];
		struct al_node_src *src = (struct al_node_src *)n->priv; /* arena-owned, loader's */
		if (src && src->mil_scope && n->n_inputs && n->inputs) {
			const struct al_mil_ent **e = ali_arena_array(&w->m->arena, n->n_inputs, sizeof *e);
			if (!e) {
				nomem(w);
				return;
			}
			for (uint32_t j = 0; j < n->n_inputs; j++)
				e[j] = n->inputs[j] ? ali_mil_resolve(n, (al_span){(const uint8_t *)n->inputs[j],
									   strlen(n->inputs[j])})
						    : NULL;
			src->mil_in_ents = e;
		}
		for (uint32_t k = 0; k < n->n_sub; k++)
			resolve_inputs(w, n->sub[k], depth + 1);
	}
}

enum al_status ali_load_mil_program(struct al_model *m, struct al_submodel *sub, al_span program,
				   uint64_t base_offset, const char *file, al_diags *d)
{
	if (!m || !sub || !file)
		return AL_E_INVALID_ARG;
	struct walk w = {.m = m, .sub = sub, .prog = program, .base = base_offset, .file = file, .d = d};
	if (ali_model_note_program(m, sub, program) != AL_OK)
		return AL_E_NOMEM;
	size_t c[NF];
	if (!scan(&w, program, LEN(2) | LEN(3) | LEN(4), LEN(1), c, "mlProgram", NULL))
		return AL_E_FORMAT;
	uint64_t version = 0;
	if (pb_get_varint(program, 1, &version) && version != 1)
		diag(&w, AL_SEV_WARNING, file, base_offset, "mlProgram.version", NULL,
		     "ML Program version %llu; anelint knows version 1", (unsigned long long)version);
	size_t nf = c[2];
	if (!nf)
		diag(&w, AL_SEV_WARNING, file, base_offset, "mlProgram", NULL,
		     "ML Program has no functions");
	if (nf) {
		sub->functions = ali_arena_array(&m->arena, nf, sizeof *sub->functions);
		sub->opsets = ali_arena_array(&m->arena, nf, sizeof *sub->opsets);
		sub->graphs = ali_arena_array(&m->arena, nf, sizeof *sub->graphs);
		if (!sub->functions || !sub->opsets || !sub->graphs)
			return AL_E_NOMEM;
	}
	struct pb_iter it;
	struct pb_field f;
	uint32_t i = 0;
	pb_iter_init(&it, program);
	while (!w.nomem && pb_next(&it, &f) && i < nf) {
		size_t ec[NF];
		if (f.num != 2 || !scan(&w, f.data, LEN(1) | LEN(2), 0, ec, "mlProgram.functions", NULL))
			continue;
		al_span key = {0}, fn = {0};
		pb_get_bytes(f.data, 1, &key);
		pb_get_bytes(f.data, 2, &fn);
		struct mil_graph *mg = ali_arena_alloc(&m->arena, sizeof *mg);
		struct al_graph *g = mg ? &mg->g : NULL;
		const char *name = dup_span(&w, key);
		if (!g || !name)
			break;
		g->function = name;
		g->block = name;
		sub->functions[i] = name;
		sub->opsets[i] = "";
		sub->graphs[i] = g;
		sub->n_functions = sub->n_graphs = ++i;
		parse_function(&w, fn, g, &sub->opsets[i - 1]);
	}
	for (uint32_t k = 0; k < i && !w.nomem; k++)
		resolve_inputs(&w, sub->graphs[k], 0);
	if (!w.nomem && i == nf)
		distinct_names(&w, program, 2, sub->functions, nf, "mlProgram.functions", "function");
	if (!w.nomem)
		check_blobs(&w);
	ali_free(w.refs);
	if (w.n_hidden)
		ali_diag_add(d, AL_SEV_NOTE, file, UINT64_MAX, "mlProgram", NULL,
			    "%zu further diagnostics not shown", w.n_hidden);
	if (w.nomem || m->arena.failed)
		return AL_E_NOMEM;
	if (w.n_errors)
		return w.n_unsupported == w.n_errors ? AL_E_UNSUPPORTED : AL_E_FORMAT;
	return AL_OK;
}


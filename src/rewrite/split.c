/* SPDX-License-Identifier: MIT */
/* split.c: cut a NeuralNetwork .mlmodel, or a one-function ML Program
 * .mlpackage, into parts that run one after the other (anelint split,
 * docs/split.md).
 *
 * Plan: the cut points are top-level layers / ops (by name, or where the
 * predicted unit changes); part k holds the layers after cut k-1 up to and
 * including cut k. Walking the parts in model order (nested branch/loop bodies
 * with their layer) finds, for every part, the names it reads before it writes
 * them: a model input (its description is copied), a constant of an earlier
 * part (the constant layer / op is copied into this part), or a value an
 * earlier part wrote (a boundary tensor: an output of that part and an input of
 * this one, declared from the blob's inferred shape, or for ML Programs from the
 * program's declared type). Model outputs go to the part that writes them last;
 * a classifier's labels and predicted features to the classifier's part.
 *
 * Write: each part is a new Model message assembled from byte spans of the
 * original (layers / ops field by field, feature descriptions, metadata,
 * network settings, the Program / Function / Block around the ops) plus the new
 * boundary feature descriptions; nothing is decoded, weights are copied with
 * their layers (ML Program: weight.bin whole). The pipeline holds the parts
 * under the original description. Files (.mlmodel) or packages (.mlpackage):
 * written under temporary names, renamed at the end, all or none.
 */
#include "analysis.h"
#include "pbsplice.h"
#include "coreml_fields.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Model, description, feature, pipeline, preprocessing fields (coreml-format-facts.md 2, 4, 5). */
enum { M_SPEC = 1, M_DESC = 2, M_UPDATABLE = 10 };
enum { D_INPUT = 1, D_OUTPUT = 10, D_PREDICTED = 11, D_PROBS = 12, D_METADATA = 100 };
enum { FD_NAME = 1, FD_TYPE = 3, FT_MULTIARRAY = 5, AT_SHAPE = 1, AT_DTYPE = 2 };
enum { PL_MODELS = 1, PL_NAMES = 2, PLH_PIPELINE = 1 };
enum { NET_LAYERS = 1, NET_PREPROC = 2, NET_PROB_LAYER = 200, PRE_FEATURE = 1 };
#define ARRAY_FP32 65568u /* ArrayDataType FLOAT32 */
#define P(m, f) AL_PB_##m##_##f /* ML Program fields (coreml_fields.h; map entries: PB_MAP_KEY / VALUE) */
enum { PG_FUNCS = P(Program, functions), FN_INPUTS = P(Function, inputs), FN_OPSET = P(Function, opset) };
enum { FN_BLOCKS = P(Function, block_specializations), BLK_OUTS = P(Block, outputs), BLK_OPS = P(Block, operations) };
enum { OP_OUTS = P(Operation, outputs), NVT_NAME = P(NamedValueType, name), DESCF = P(ModelDescription, functions) };

/* Data types a boundary tensor can be declared with: ArrayDataType, and the
 * specificationVersion that introduced it as model I/O (facts section 3/4). */
static const struct io_type {
	int dtype;
	uint32_t array;
	int spec;
} io_types[] = {
	{AL_DT_FP32, ARRAY_FP32, 1},
	{AL_DT_INT32, 131104u, 1},
	{AL_DT_FP16, 65552u, 7},
};
#define N_IO_TYPES (sizeof io_types / sizeof io_types[0])

static const struct io_type *io_type(int dtype)
{
	for (size_t i = 0; i < N_IO_TYPES; i++)
		if (io_types[i].dtype == dtype)
			return &io_types[i];
	return NULL;
}

/* The NeuralNetwork model types split, and the pipeline type holding their parts. */
static const struct nn_type {
	uint32_t field;
	const char *name;
	uint32_t pipeline;     /* Model field of the pipeline: pipeline, or the two holders */
	bool holder;           /* the pipeline sits in PipelineClassifier/Regressor.pipeline */
} nn_types[] = {
	{AL_MODEL_FIELD_neuralNetwork, "neuralNetwork", AL_MODEL_FIELD_pipeline, false},
	{AL_MODEL_FIELD_neuralNetworkClassifier, "neuralNetworkClassifier",
	 AL_MODEL_FIELD_pipelineClassifier, true},
	{AL_MODEL_FIELD_neuralNetworkRegressor, "neuralNetworkRegressor",
	 AL_MODEL_FIELD_pipelineRegressor, true},
	{AL_MODEL_FIELD_mlProgram, "mlProgram", AL_MODEL_FIELD_pipeline, false},
};
#define MIL_TYPE AL_MODEL_FIELD_mlProgram
#define N_NN_TYPES (sizeof nn_types / sizeof nn_types[0])

/* Which parts get a field of the network message (layers are cut separately). */
enum who { W_ALL, W_LAST, W_INPUTS, W_DROP };
static const struct net_row {
	uint32_t field;
	enum who who;
	const char *why;
} net_rows[] = {
	{NET_PREPROC, W_INPUTS, "preprocessing: the parts reading its image input"},
	{5, W_ALL, "arrayInputShapeMapping"},
	{6, W_ALL, "imageInputShapeMapping"},
	{10, W_DROP, "updateParams (updatable models are refused)"},
	{100, W_LAST, "stringClassLabels: the classifier is the last part"},
	{101, W_LAST, "int64ClassLabels"},
	{NET_PROB_LAYER, W_LAST, "labelProbabilityLayerName"},
};
#define N_NET_ROWS (sizeof net_rows / sizeof net_rows[0])

static enum who net_who(uint32_t field)
{
	for (size_t i = 0; i < N_NET_ROWS; i++)
		if (net_rows[i].field == field)
			return net_rows[i].who;
	return W_ALL; /* unknown fields: kept in every part */
}

/* ------------------------------------------------------------------ state */

struct name {
	const char *s;
	int part;                        /* last part that wrote it so far; -1 none */
	const struct al_node *producer;  /* its last writer so far */
	int exported_by;                 /* part that lists it as an output; -1 none */
	int stamp;                       /* last part that listed it as an input; -1 none */
	int input;                       /* model input index, -1 */
	bool placed;                     /* a model output of that name was placed */
};

struct xpart { /* the byte spans behind a part's features (p NULL: built) */
	al_span *in_raw, *out_raw;
	uint32_t cap_in, cap_out;
	uint8_t *copy; /* ML Program: top-level const ops of earlier parts copied in */
	const struct al_node **in_w; /* boundary inputs: the layer / op writing them */
};

struct al_splitter {
	al_model *m;
	const struct al_submodel *sub;
	const struct al_graph *g;
	const struct nn_type *type;
	al_span root, desc, net;
	al_span *layer_raw;       /* whole `layers` fields (tag, length, payload) */
	al_span *in_desc, *out_desc; /* FeatureDescription payloads, by feature index */
	al_span predicted, probs; /* whole description fields 11 / 12, or empty */
	al_span metadata;         /* whole description field 100, or empty */
	int spec;
	/* ML Program: net is the Program; its one function, that function's block of
	 * its opset, and the function inputs (NamedValueType payloads) by input index */
	bool mil;
	al_span fn_entry, fn, blk_entry, blk;
	al_span *fn_in;
	al_span weights;          /* weight.bin of a package, copied into every part */
	struct al_arena arena;
	struct al_split_part *parts;
	struct xpart *x;
	size_t n_parts;
	/* plan-time */
	struct name *names;             /* in the order first asked for */
	size_t n_names, cap_names;
	struct ali_hashtab name_index;  /* items index names */
	al_diags *d;
	enum al_status refused;
};

/* One error, naming layer n when given; returns the status to refuse with. */
__attribute__((format(printf, 4, 5)))
static enum al_status refuse(struct al_splitter *s, enum al_status st, const struct al_node *n,
			     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (!s->refused)
		ali_diag_vadd(s->d, AL_SEV_ERROR, s->m->path, n ? n->offset : UINT64_MAX,
			     n ? n->path : NULL, n ? n->name : NULL, fmt, ap);
	va_end(ap);
	if (!s->refused)
		s->refused = st;
	return s->refused;
}

/* ------------------------------------------------------------------ names */

static bool name_eq(size_t item, const void *key, void *ctx)
{
	const struct al_splitter *s = ctx;
	return strcmp(s->names[item].s, key) == 0;
}

static struct name *name_get(struct al_splitter *s, const char *z)
{
	uint64_t h = ali_hash_str(z);
	size_t i = ali_hashtab_find(&s->name_index, h, name_eq, z, s);
	if (i != SIZE_MAX)
		return &s->names[i];
	if (s->n_names == s->cap_names || !ali_hashtab_add(&s->name_index, h, s->n_names))
		return NULL; /* cannot happen: room for every name was reserved */
	struct name *e = &s->names[s->n_names++];
	*e = (struct name){.s = z, .part = -1, .exported_by = -1, .stamp = -1, .input = -1};
	return e;
}

static void names_free(struct al_splitter *s)
{
	ali_free(s->names);
	s->names = NULL, s->n_names = s->cap_names = 0;
	ali_hashtab_free(&s->name_index);
}

static size_t count_names(const struct al_graph *g)
{
	size_t n = 0;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *nd = &g->nodes[k];
		n += nd->n_inputs + nd->n_outputs;
		for (uint32_t j = 0; j < nd->n_sub; j++)
			n += count_names(nd->sub[j]);
	}
	return n;
}

/* ------------------------------------------------------------------ tensors */

static struct al_split_tensor *add_tensor(struct al_splitter *s, size_t p, bool out, const char *name,
					  enum al_split_role role, int from, al_span raw)
{
	struct al_split_part *pt = &s->parts[p];
	struct xpart *x = &s->x[p];
	struct al_split_tensor **v = out ? &pt->outputs : &pt->inputs;
	uint32_t *n = out ? &pt->n_outputs : &pt->n_inputs, *cap = out ? &x->cap_out : &x->cap_in;
	al_span **r = out ? &x->out_raw : &x->in_raw;
	if (*n == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 8;
		struct al_split_tensor *nv = ali_arena_array(&s->arena, nc, sizeof *nv);
		al_span *nr = ali_arena_array(&s->arena, nc, sizeof *nr);
		const struct al_node **nw = out ? NULL : ali_arena_array(&s->arena, nc, sizeof *nw);
		if (!nv || !nr || (!out && !nw)) {
			refuse(s, AL_E_NOMEM, NULL, "out of memory");
			return NULL;
		}
		if (*n) {
			memcpy(nv, *v, *n * sizeof *nv);
			memcpy(nr, *r, *n * sizeof *nr);
			if (!out)
				memcpy(nw, x->in_w, *n * sizeof *nw);
		}
		if (!out)
			x->in_w = nw;
		*v = nv;
		*r = nr;
		*cap = nc;
	}
	struct al_split_tensor *t = &(*v)[*n];
	(*r)[*n] = raw;
	(*n)++;
	memset(t, 0, sizeof *t);
	t->name = name;
	t->role = role;
	t->from_part = from;
	t->inferred.rank = -1;
	return t;
}

static bool shape_static(const struct al_shape *sh)
{
	if (!sh || sh->rank < 0 || sh->rank > AL_SHAPE_MAX_RANK || sh->flex)
		return false;
	for (int i = 0; i < sh->rank; i++)
		if (sh->dims[i] < 0)
			return false;
	return true;
}

/* ML Program: the type the program declares for the value (its writer's output
 * type), which must be a tensor of static shape and an I/O data type. */
static enum al_status declare_mil(struct al_splitter *s, const struct al_node *w, const char *name,
				  const struct al_shape *sh, struct al_split_tensor *t)
{
	const struct al_ttype *ty = NULL;
	for (uint32_t j = 0; j < w->n_outputs; j++)
		if (strcmp(w->outputs[j], name) == 0 && w->out_types)
			ty = &w->out_types[j];
	bool known = ty && ty->kind == 0 && ty->rank >= 1 && ty->rank <= AL_SHAPE_MAX_RANK && ty->dims;
	for (int i = 0; known && i < ty->rank; i++)
		known = ty->dims[i] >= 0;
	if (!known)
		return refuse(s, AL_E_UNSUPPORTED, w,
			      "cannot cut here: '%s' (output of op '%s') is not a tensor of static shape "
			      "and rank >= 1, so it cannot be declared as a model input", name, w->name);
	if (!io_type(ty->dtype))
		return refuse(s, AL_E_UNSUPPORTED, w,
			      "cannot cut here: '%s' is %s, which is not a multi-array data type "
			      "(fp32, fp16, int32)", name, al_dtype_name(ty->dtype));
	t->dtype = ty->dtype;
	t->rank = ty->rank;
	memcpy(t->dims, ty->dims, (size_t)ty->rank * sizeof t->dims[0]);
	if (sh)
		t->inferred = *sh;
	else {
		t->inferred.rank = ty->rank;
		t->inferred.dtype = ty->dtype;
		memcpy(t->inferred.dims, ty->dims, (size_t)ty->rank * sizeof t->dims[0]);
	}
	return AL_OK;
}

/* The declared type of boundary blob `name`, from its writer's inferred shape, in
 * the network's rank convention (coreml-format-facts.md section 4). */
static enum al_status declare(struct al_splitter *s, const struct al_node *w, const char *name,
			      struct al_split_tensor *t)
{
	const struct al_shape *sh = NULL;
	for (uint32_t j = 0; j < w->n_outputs; j++)
		if (strcmp(w->outputs[j], name) == 0 && w->out_shapes)
			sh = &w->out_shapes[j];
	char b[96];
	ali_shape_format(sh, b, sizeof b);
	if (s->mil)
		return declare_mil(s, w, name, sh, t);
	if (!shape_static(sh))
		return refuse(s, AL_E_UNSUPPORTED, w,
			      "cannot cut here: the shape of '%s' (written by layer '%s') is %s, not known "
			      "statically, so it cannot be declared as a model input",
			      name, w->name, sh && sh->flex ? "flexible" : b);
	t->inferred = *sh;
	t->dtype = AL_DT_FP32;
	if (s->sub->array_mapping == 0) { /* RANK5: a blob [1,1,C,H,W] is the input [C,H,W] */
		if (sh->rank != 5 || sh->dims[0] != 1 || sh->dims[1] != 1)
			return refuse(s, AL_E_UNSUPPORTED, w,
				      "cannot cut here: '%s' is %s; under the RANK5 array mapping a model "
				      "input is [C] or [C,H,W] (sequence and batch 1)", name, b);
		t->rank = 3;
		memcpy(t->dims, sh->dims + 2, 3 * sizeof t->dims[0]);
	} else {
		if (sh->rank < 1)
			return refuse(s, AL_E_UNSUPPORTED, w,
				      "cannot cut here: '%s' is a scalar (rank 0); a model input has rank 1 or more",
				      name);
		t->rank = sh->rank;
		memcpy(t->dims, sh->dims, (size_t)sh->rank * sizeof t->dims[0]);
	}
	return AL_OK;
}

static enum al_status visit(struct al_splitter *s, int p, const struct al_node *n, int depth);

/* NeuralNetwork layers that only hold a constant (no inputs, weights in the layer). */
static const char *const nn_const_types[] = {"loadConstant", "loadConstantND"};

/* A top-level constant: copied into each later part that reads it. */
static bool is_const(const struct al_splitter *s, const struct al_node *w)
{
	if (!w || w->owner != s->g || w->n_sub)
		return false;
	if (s->mil)
		return w->kind >= 0 && (ali_mil_kinds[w->kind].flags & AL_OPF_CONST);
	for (size_t i = 0; i < sizeof nn_const_types / sizeof nn_const_types[0]; i++)
		if (w->n_inputs == 0 && w->type && strcmp(w->type, nn_const_types[i]) == 0)
			return true;
	return false;
}

/* Part p reads `name` (written before by an earlier part, or a model input). */
static enum al_status read_name(struct al_splitter *s, int p, const char *z)
{
	struct name *e = name_get(s, z);
	if (!e)
		return refuse(s, AL_E_NOMEM, NULL, "out of memory");
	if (e->part == p || e->stamp == p)
		return AL_OK;
	if (e->part < 0 && e->input < 0)
		return AL_OK; /* written later in this part (a loop-carried name) or never */
	e->stamp = p;
	al_span none = {0};
	if (e->part < 0) {
		uint32_t i = (uint32_t)e->input;
		return add_tensor(s, (size_t)p, false, s->sub->inputs[i].name, AL_SPLIT_MODEL_INPUT, -1,
				  s->in_desc[i]) ? AL_OK : s->refused;
	}
	int q = e->part;
	const struct al_node *w = e->producer;
	if (is_const(s, w)) {
		/* a constant: the layer / op is copied into this part rather than passed */
		s->x[p].copy[w->index] = 1;
		return visit(s, p, w, 0);
	}
	if (e->exported_by >= 0 && e->exported_by != q)
		return refuse(s, AL_E_UNSUPPORTED, e->producer,
			      "cannot cut here: '%s' is written in part %d and again in part %d, and read "
			      "after both; a pipeline passes one value per name", z, e->exported_by + 1,
			      q + 1);
	struct al_split_tensor *in = add_tensor(s, (size_t)p, false, e->s, AL_SPLIT_BOUNDARY, q, none);
	if (!in)
		return s->refused;
	s->x[p].in_w[in - s->parts[p].inputs] = e->producer;
	enum al_status st = declare(s, e->producer, e->s, in);
	if (st)
		return st;
	if (e->exported_by != q) {
		e->exported_by = q;
		struct al_split_tensor *o = add_tensor(s, (size_t)q, true, e->s, AL_SPLIT_BOUNDARY, q, none);
		if (!o)
			return s->refused;
		const struct al_split_tensor keep = *in; /* add_tensor may move `in` only for part q != p */
		o->dtype = keep.dtype;
		o->rank = keep.rank;
		memcpy(o->dims, keep.dims, sizeof o->dims);
		o->inferred = keep.inferred;
	}
	return AL_OK;
}

static enum al_status write_name(struct al_splitter *s, int p, const char *z, const struct al_node *w)
{
	struct name *e = name_get(s, z);
	if (!e)
		return refuse(s, AL_E_NOMEM, NULL, "out of memory");
	if (e->input >= 0)
		return refuse(s, AL_E_UNSUPPORTED, w,
			      "cannot split: layer '%s' writes '%s', which is also a model input", w->name, z);
	e->part = p;
	e->producer = w;
	return AL_OK;
}

/* A layer and its nested bodies: inputs read, bodies in order, outputs written. */
static enum al_status visit(struct al_splitter *s, int p, const struct al_node *n, int depth)
{
	if (depth > AL_MAX_DEPTH)
		return refuse(s, AL_E_UNSUPPORTED, n, "nesting deeper than %d", AL_MAX_DEPTH);
	enum al_status st = AL_OK;
	for (uint32_t i = 0; i < n->n_inputs && !st; i++)
		st = read_name(s, p, n->inputs[i]);
	for (uint32_t j = 0; j < n->n_sub && !st; j++)
		for (uint32_t k = 0; k < n->sub[j]->n_nodes && !st; k++)
			st = visit(s, p, &n->sub[j]->nodes[k], depth + 1);
	for (uint32_t i = 0; i < n->n_outputs && !st; i++)
		st = write_name(s, p, n->outputs[i], n);
	return st;
}

static bool has_nd(const struct al_node *n, int depth)
{
	if (n->kind >= 0 && (ali_nn_kinds[n->kind].flags & AL_NNF_ND))
		return true;
	for (uint32_t j = 0; j < n->n_sub && depth < AL_MAX_DEPTH; j++)
		for (uint32_t k = 0; k < n->sub[j]->n_nodes; k++)
			if (has_nd(&n->sub[j]->nodes[k], depth + 1))
				return true;
	return false;
}

/* ------------------------------------------------------------------ bytes of the input */

static bool is_head(const struct al_splitter *s, const char *name)
{
	return s->type->field == AL_MODEL_FIELD_neuralNetworkClassifier && name &&
	       ((s->sub->predicted_feature && strcmp(name, s->sub->predicted_feature) == 0) ||
		(s->sub->predicted_probabilities && strcmp(name, s->sub->predicted_probabilities) == 0));
}

/* The n-th field `num` (PB_LEN) of msg: payload and whole field. */
static bool nth_field(al_span msg, uint32_t num, size_t n, al_span *payload, al_span *whole)
{
	struct pb_iter it;
	struct pb_field f;
	size_t k = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num && f.wire == PB_LEN && k++ == n) {
			*payload = f.data;
			if (whole)
				*whole = (al_span){msg.p + f.start, it.pos - f.start};
			return true;
		}
	return false;
}

/* ML Program: the one function, its block of its opset (else the first, as
 * mil.c reads it), its inputs and its ops. */
static enum al_status index_mil(struct al_splitter *s)
{
	const struct al_submodel *sub = s->sub;
	al_span opset = {0}, key, val;
	/* the function of the graph cut: the only one, or the one
	 * al_model_select_function kept (split --function NAME) */
	bool fn_found = false;
	for (size_t i = 0; sub->n_functions == 1 && !fn_found && nth_field(s->net, PG_FUNCS, i, &val, &s->fn_entry);
	     i++) {
		pb_get_bytes(val, PB_MAP_KEY, &key);
		fn_found = (i == 0 && sub->n_fdescs < 2) ||
			   (sub->functions[0] && key.n == strlen(sub->functions[0]) &&
			    (!key.n || memcmp(key.p, sub->functions[0], key.n) == 0));
	}
	if (!fn_found || !pb_get_bytes(val, PB_MAP_VALUE, &s->fn))
		return refuse(s, AL_E_UNSUPPORTED, NULL,
			      "only ML Programs of one function are split (this one has %u; name one with --function)",
			      sub->n_functions);
	pb_get_bytes(s->fn, FN_OPSET, &opset);
	bool found = false;
	for (size_t i = 0; !found && nth_field(s->fn, FN_BLOCKS, i, &val, NULL); i++) {
		al_span whole;
		nth_field(s->fn, FN_BLOCKS, i, &val, &whole);
		pb_get_bytes(val, PB_MAP_KEY, &key);
		if (i == 0 || (key.n == opset.n && (!key.n || memcmp(key.p, opset.p, key.n) == 0))) {
			s->blk_entry = whole;
			s->blk = (al_span){0};
			pb_get_bytes(val, PB_MAP_VALUE, &s->blk);
			found = i > 0 || (key.n == opset.n && (!key.n || memcmp(key.p, opset.p, key.n) == 0));
		}
	}
	if (!s->blk_entry.p)
		return refuse(s, AL_E_FORMAT, NULL, "the ML Program function has no block");
	s->fn_in = ali_arena_array(&s->arena, sub->n_inputs + 1u, sizeof *s->fn_in);
	if (!s->fn_in)
		return refuse(s, AL_E_NOMEM, NULL, "out of memory");
	for (size_t i = 0; nth_field(s->fn, FN_INPUTS, i, &val, NULL); i++) {
		al_span nm = {0};
		pb_get_string(val, NVT_NAME, &nm);
		for (uint32_t k = 0; k < sub->n_inputs; k++)
			if (ali_span_eq(nm, sub->inputs[k].name))
				s->fn_in[k] = val;
	}
	for (uint32_t k = 0; k < sub->n_inputs; k++)
		if (!s->fn_in[k].p)
			return refuse(s, AL_E_FORMAT, NULL, "the input '%s' is not an input of the ML Program",
				      sub->inputs[k].name);
	struct pb_iter it;
	struct pb_field f;
	uint32_t nl = 0;
	pb_iter_init(&it, s->blk);
	while (pb_next(&it, &f)) {
		if (f.num != BLK_OPS || f.wire != PB_LEN || nl >= s->g->n_nodes)
			continue;
		const struct al_node_src *src = al_src(&s->g->nodes[nl]);
		if (!src || src->msg.p != f.data.p)
			return refuse(s, AL_E_FORMAT, &s->g->nodes[nl], "the op message could not be re-read");
		s->layer_raw[nl++] = (al_span){s->blk.p + f.start, it.pos - f.start};
	}
	if (it.err || nl != s->g->n_nodes)
		return refuse(s, AL_E_FORMAT, NULL, "the ops could not be re-read");
	return AL_OK;
}

/* Find the description, the network and its layers in the root Model bytes. */
static enum al_status index_bytes(struct al_splitter *s)
{
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, s->root);
	while (pb_next(&it, &f)) {
		if (f.num == M_SPEC && f.wire == PB_VARINT)
			s->spec = (int)(int32_t)f.u;
		else if (f.num == M_DESC && f.wire == PB_LEN)
			s->desc = f.data;
		else if (f.num == s->type->field && f.wire == PB_LEN)
			s->net = f.data;
	}
	if (it.err || !s->net.p)
		return refuse(s, AL_E_FORMAT, NULL, "cannot find the %s message", s->type->name);
	const struct al_submodel *sub = s->sub;
	s->in_desc = ali_arena_array(&s->arena, sub->n_inputs + 1u, sizeof *s->in_desc);
	s->out_desc = ali_arena_array(&s->arena, sub->n_outputs + 1u, sizeof *s->out_desc);
	s->layer_raw = ali_arena_array(&s->arena, s->g->n_nodes + 1u, sizeof *s->layer_raw);
	if (!s->in_desc || !s->out_desc || !s->layer_raw)
		return refuse(s, AL_E_NOMEM, NULL, "out of memory");
	uint32_t ni = 0, no = 0, nl = 0;
	/* a multifunction package (split --function NAME): the interface is the function's
	 * FunctionDescription's (the top level's is the default function's) */
	bool multi = s->mil && sub->n_fdescs > 1;
	pb_iter_init(&it, s->desc);
	while (pb_next(&it, &f)) {
		al_span whole = {s->desc.p + f.start, it.pos - f.start}, nm = {0};
		if (multi && f.num == DESCF && f.wire == PB_LEN && pb_get_string(f.data, P(FunctionDescription, name), &nm) &&
		    sub->functions[0] && ali_span_eq(nm, sub->functions[0])) {
			struct pb_iter fi;
			struct pb_field ff;
			pb_iter_init(&fi, f.data);
			while (pb_next(&fi, &ff))
				if (ff.num == P(FunctionDescription, input) && ff.wire == PB_LEN && ni < sub->n_inputs)
					s->in_desc[ni++] = ff.data;
				else if (ff.num == P(FunctionDescription, output) && ff.wire == PB_LEN && no < sub->n_outputs)
					s->out_desc[no++] = ff.data;
		} else if (multi) {
			if (f.num == D_METADATA)
				s->metadata = whole;
		} else if (f.num == D_INPUT && f.wire == PB_LEN && ni < sub->n_inputs)
			s->in_desc[ni++] = f.data;
		else if (f.num == D_OUTPUT && f.wire == PB_LEN && no < sub->n_outputs)
			s->out_desc[no++] = f.data;
		else if (f.num == D_PREDICTED)
			s->predicted = whole;
		else if (f.num == D_PROBS)
			s->probs = whole;
		else if (f.num == D_METADATA)
			s->metadata = whole;
	}
	if (it.err || ni != sub->n_inputs || no != sub->n_outputs)
		return refuse(s, AL_E_FORMAT, NULL, "the model description could not be re-read");
	if (s->mil)
		return index_mil(s);
	pb_iter_init(&it, s->net);
	while (pb_next(&it, &f)) {
		if (f.num != NET_LAYERS || f.wire != PB_LEN || nl >= s->g->n_nodes)
			continue;
		const struct al_node_src *src = al_src(&s->g->nodes[nl]);
		if (!src || src->msg.p != f.data.p)
			return refuse(s, AL_E_FORMAT, &s->g->nodes[nl], "the layer message could not be re-read");
		s->layer_raw[nl++] = (al_span){s->net.p + f.start, it.pos - f.start};
	}
	if (it.err || nl != s->g->n_nodes)
		return refuse(s, AL_E_FORMAT, NULL, "the layers could not be re-read");
	return AL_OK;
}

/* ------------------------------------------------------------------ plan */

static const struct al_node *find_nested(const struct al_graph *g, const char *name, int depth)
{
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *n = &g->nodes[k];
		if (depth > 0 && n->name && strcmp(n->name, name) == 0)
			return n;
		for (uint32_t j = 0; j < n->n_sub && depth < AL_MAX_DEPTH; j++) {
			const struct al_node *r = find_nested(n->sub[j], name, depth + 1);
			if (r)
				return r;
		}
	}
	return NULL;
}

/* cut[k]: what follows top-level layer k. A segment boundary is a candidate until a plan with it succeeds. */
enum { CUT_NONE, CUT_USER, CUT_SEGMENT, CUT_TAKEN };
#define IS_CUT(c) ((c) == CUT_USER || (c) == CUT_TAKEN)

/* The cut after each --at layer, and the candidates at unit changes (segments). */
static enum al_status find_cuts(struct al_splitter *s, const struct al_split_opts *o, uint8_t *cut)
{
	const struct al_graph *g = s->g;
	for (size_t i = 0; i < o->n_at; i++) {
		const char *name = o->at[i];
		uint32_t k = 0;
		while (name && k < g->n_nodes && !(g->nodes[k].name && strcmp(g->nodes[k].name, name) == 0))
			k++;
		if (!name || k == g->n_nodes) {
			const struct al_node *in = name ? find_nested(g, name, 0) : NULL;
			if (in) {
				const struct al_node *top = in;
				while (top->owner && top->owner->parent_node)
					top = top->owner->parent_node;
				return refuse(s, AL_E_UNSUPPORTED, in,
					      "cannot cut at '%s': it is inside the %s %s '%s' (a nested body); "
					      "cut before or after '%s'", name, top->type, s->mil ? "op" : "layer",
					      top->name, top->name);
			}
			return refuse(s, AL_E_INVALID_ARG, NULL, "no top-level %s named '%s' in the %s",
				      s->mil ? "op" : "layer", name ? name : "(null)",
				      s->mil ? "program" : "network");
		}
		if (k + 1 == g->n_nodes)
			return refuse(s, AL_E_INVALID_ARG, &g->nodes[k],
				      "cannot cut after '%s': it is the last %s, so the second part "
				      "would be empty", name, s->mil ? "op" : "layer");
		cut[k] = CUT_USER;
	}
	if (!o->segments)
		return AL_OK;
	enum al_status st = al_model_check(s->m, o->check, s->d);
	const struct al_plan *p = NULL;
	if (!st)
		st = al_model_plan(s->m, 0, o->plan, &p, s->d);
	if (st)
		return refuse(s, st, NULL, "cannot plan the model's segments (%s)", al_status_str(st));
	/* the unit of each top-level layer: its own, else (a branch / loop the plan
	 * does not list) that of the first layer of its bodies the plan lists */
	int *units = ali_malloc(g->n_nodes * sizeof *units);
	if (!units) {
		al_plan_free(p);
		return refuse(s, AL_E_NOMEM, NULL, "out of memory");
	}
	for (uint32_t k = 0; k < g->n_nodes; k++)
		units[k] = -1;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t j = 0; j < p->n_nodes; j++) {
			const struct al_node *n = p->nodes[j];
			int depth = 0;
			while (n->owner != g && n->owner && n->owner->parent_node && depth++ < AL_MAX_DEPTH)
				n = n->owner->parent_node;
			if (n->owner != g || n->index >= g->n_nodes || &g->nodes[n->index] != n)
				continue;
			if ((pass == 0 && n == p->nodes[j]) || (pass == 1 && units[n->index] < 0))
				units[n->index] = (int)p->unit[j];
		}
	al_plan_free(p);
	int prev_unit = -1;
	uint32_t prev_k = 0;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		int unit = units[k];
		if (unit < 0 || (g->nodes[k].n_inputs == 0 && g->nodes[k].n_sub == 0))
			continue; /* a constant: goes with what follows */
		if (prev_unit >= 0 && unit != prev_unit && !cut[prev_k])
			cut[prev_k] = CUT_SEGMENT;
		prev_unit = unit;
		prev_k = k;
	}
	ali_free(units);
	return AL_OK;
}

static bool feature_static_array(const struct al_feature *f)
{
	if (f->kind != AL_FEAT_MULTIARRAY || f->rank == 0 || !f->shape || f->flex != AL_FLEX_NONE)
		return false;
	for (uint32_t i = 0; i < f->rank; i++)
		if (f->shape[i] < 0)
			return false;
	return true;
}

/* Model outputs to the part that writes them last; the classifier's to the last.
 * A name declared twice (the loader refuses that; a model built another way may
 * not) is placed once: each part lists an output name at most once. */
static enum al_status place_outputs(struct al_splitter *s)
{
	const struct al_submodel *sub = s->sub;
	size_t last = s->n_parts - 1;
	al_span none = {0};
	for (uint32_t i = 0; i < sub->n_outputs; i++) {
		const struct al_feature *f = &sub->outputs[i];
		struct name *e = name_get(s, f->name);
		if (!e)
			return refuse(s, AL_E_NOMEM, NULL, "out of memory");
		if (e->placed)
			continue;
		e->placed = true;
		if (is_head(s, f->name)) {
			if (!add_tensor(s, last, true, f->name, AL_SPLIT_MODEL_OUTPUT, (int)last, s->out_desc[i]))
				return s->refused;
			continue;
		}
		if (e->part < 0)
			return refuse(s, AL_E_UNSUPPORTED, NULL,
				      "cannot split: the model output '%s' is not written by any layer", f->name);
		int q = e->part;
		if (e->exported_by >= 0 && e->exported_by != q)
			return refuse(s, AL_E_UNSUPPORTED, e->producer,
				      "cannot cut here: the output '%s' is written in part %d and again in "
				      "part %d", f->name, e->exported_by + 1, q + 1);
		struct al_split_part *pt = &s->parts[q];
		struct al_split_tensor *t = NULL;
		for (uint32_t k = 0; k < pt->n_outputs && !t; k++)
			if (strcmp(pt->outputs[k].name, f->name) == 0)
				t = &pt->outputs[k];
		if (!t && !(t = add_tensor(s, (size_t)q, true, f->name, AL_SPLIT_MODEL_OUTPUT, q, none)))
			return s->refused;
		t->role = AL_SPLIT_MODEL_OUTPUT;
		t->rank = 0;
		e->exported_by = q;
		s->x[q].out_raw[t - pt->outputs] = s->out_desc[i];
		/* a later part reading it takes the declared type when it is a static array */
		if (!feature_static_array(f))
			continue;
		for (size_t p = (size_t)q + 1; p < s->n_parts; p++)
			for (uint32_t k = 0; k < s->parts[p].n_inputs; k++) {
				struct al_split_tensor *in = &s->parts[p].inputs[k];
				if (strcmp(in->name, f->name) != 0 || f->rank > AL_SHAPE_MAX_RANK)
					continue;
				s->x[p].in_raw[k] = s->out_desc[i];
				in->dtype = f->dtype;
				in->rank = (int)f->rank;
				memcpy(in->dims, f->shape, f->rank * sizeof in->dims[0]);
			}
	}
	/* model outputs first (model order), then boundary tensors (first-read order):
	 * a permutation, each of the part's n outputs taken once whatever the
	 * description repeats, so w never passes n */
	for (size_t p = 0; p < s->n_parts; p++) {
		struct al_split_part *pt = &s->parts[p];
		struct xpart *x = &s->x[p];
		uint32_t n = pt->n_outputs, w = 0;
		struct al_split_tensor *tv = ali_arena_array(&s->arena, n + 1u, sizeof *tv);
		al_span *rv = ali_arena_array(&s->arena, n + 1u, sizeof *rv);
		bool *taken = ali_arena_array(&s->arena, n + 1u, sizeof *taken);
		if (!tv || !rv || !taken)
			return refuse(s, AL_E_NOMEM, NULL, "out of memory");
		for (uint32_t i = 0; i < sub->n_outputs && w < n; i++)
			for (uint32_t k = 0; k < n; k++)
				if (!taken[k] && pt->outputs[k].role == AL_SPLIT_MODEL_OUTPUT &&
				    strcmp(pt->outputs[k].name, sub->outputs[i].name) == 0) {
					taken[k] = true;
					tv[w] = pt->outputs[k];
					rv[w++] = x->out_raw[k];
					break;
				}
		for (uint32_t k = 0; k < n && w < n; k++)
			if (!taken[k]) {
				taken[k] = true;
				tv[w] = pt->outputs[k];
				rv[w++] = x->out_raw[k];
			}
		pt->outputs = tv;
		x->out_raw = rv;
		pt->n_outputs = w;
		x->cap_out = n + 1u;
	}
	return AL_OK;
}

static enum al_status plan_parts(struct al_splitter *s, const uint8_t *cut)
{
	const struct al_graph *g = s->g;
	const struct al_submodel *sub = s->sub;
	size_t n = 1;
	for (uint32_t k = 0; k < g->n_nodes; k++)
		n += IS_CUT(cut[k]);
	s->n_parts = n;
	s->parts = ali_arena_array(&s->arena, n, sizeof *s->parts);
	s->x = ali_arena_array(&s->arena, n, sizeof *s->x);
	size_t want = count_names(g) + sub->n_inputs + sub->n_outputs + 2;
	s->names = ali_calloc(want, sizeof *s->names);
	s->n_names = 0;
	s->cap_names = want;
	if (!s->parts || !s->x || !s->names || !ali_hashtab_reserve(&s->name_index, want))
		return refuse(s, AL_E_NOMEM, NULL, "out of memory");
	for (uint32_t i = 0; i < sub->n_inputs; i++) {
		struct name *e = name_get(s, sub->inputs[i].name);
		if (!e)
			return refuse(s, AL_E_NOMEM, NULL, "out of memory");
		e->input = (int)i;
	}
	uint32_t first = 0;
	for (size_t p = 0; p < n; p++) {
		struct al_split_part *pt = &s->parts[p];
		uint32_t last = first;
		while (last + 1 < g->n_nodes && !IS_CUT(cut[last]))
			last++;
		pt->first = first;
		pt->last = last;
		pt->first_layer = g->nodes[first].name;
		pt->last_layer = g->nodes[last].name;
		pt->type = p + 1 == n || s->mil ? s->type->name : "neuralNetwork";
		pt->spec_version = s->spec;
		if (!(s->x[p].copy = ali_arena_alloc(&s->arena, g->n_nodes)))
			return refuse(s, AL_E_NOMEM, NULL, "out of memory");
		for (uint32_t k = first; k <= last; k++) {
			enum al_status st = visit(s, (int)p, &g->nodes[k], 0);
			if (st)
				return st;
		}
		if (p + 1 == n && s->type->field == AL_MODEL_FIELD_neuralNetworkClassifier) {
			/* the class probabilities: labelProbabilityLayerName, when it names one */
			al_span lp;
			if (pb_get_string(s->net, NET_PROB_LAYER, &lp) && lp.n) {
				char *z = ali_arena_span_str(&s->arena, lp);
				if (!z)
					return refuse(s, AL_E_NOMEM, NULL, "out of memory");
				enum al_status st = read_name(s, (int)p, z);
				if (st)
					return st;
			}
		}
		first = last + 1;
	}
	enum al_status st = place_outputs(s);
	if (st)
		return st;
	for (size_t p = 0; p < n; p++) {
		struct al_split_part *pt = &s->parts[p];
		/* a boundary data type newer than the model (fp16 I/O: spec 7) */
		for (int io = 0; io < 2; io++)
			for (uint32_t k = 0; k < (io ? pt->n_outputs : pt->n_inputs); k++) {
				const struct al_split_tensor *t = io ? &pt->outputs[k] : &pt->inputs[k];
				const struct io_type *ty = t->rank ? io_type(t->dtype) : NULL;
				if (ty && ty->spec > pt->spec_version)
					pt->spec_version = ty->spec;
			}
		const struct al_node *fl = &g->nodes[pt->first];
		if (pt->n_inputs == 0)
			return refuse(s, AL_E_UNSUPPORTED, fl,
				      "cannot cut here: part %zu (layers '%s' to '%s') reads no input", p + 1,
				      pt->first_layer, pt->last_layer);
		if (pt->n_outputs == 0)
			return refuse(s, AL_E_UNSUPPORTED, fl,
				      "cannot cut here: nothing part %zu (layers '%s' to '%s') writes is read "
				      "later or is a model output", p + 1, pt->first_layer, pt->last_layer);
		bool boundary_in = false;
		for (uint32_t k = 0; k < pt->n_inputs; k++)
			boundary_in |= pt->inputs[k].role == AL_SPLIT_BOUNDARY;
		for (uint32_t k = pt->first; boundary_in && !s->mil && sub->array_mapping == 0 && k <= pt->last; k++)
			if (has_nd(&g->nodes[k], 0))
				return refuse(s, AL_E_UNSUPPORTED, &g->nodes[k],
					      "cannot cut here: part %zu has the general-rank layer '%s' and would "
					      "take a multi-array input under the RANK5 array mapping (Core ML "
					      "requires EXACT_ARRAY_MAPPING)", p + 1, g->nodes[k].name);
	}
	return AL_OK;
}

/* Take the segment boundaries one by one, in model order, keeping each with which
 * the cut still plans; the others are skipped with a warning saying why. */
static enum al_status segment_cuts(struct al_splitter *s, uint8_t *cut)
{
	al_diags *real = s->d;
	bool any = false;
	char first[320] = "";
	for (uint32_t k = 0; k < s->g->n_nodes; k++) {
		any |= cut[k] == CUT_USER;
		if (cut[k] != CUT_SEGMENT)
			continue;
		al_diags *scratch = al_diags_new();
		if (!scratch)
			return AL_E_NOMEM;
		cut[k] = CUT_TAKEN;
		s->d = scratch;
		s->refused = AL_OK;
		enum al_status st = plan_parts(s, cut);
		names_free(s);
		s->d = real;
		s->refused = AL_OK;
		if (st == AL_E_NOMEM) {
			al_diags_free(scratch);
			return refuse(s, st, NULL, "out of memory");
		}
		if (st) {
			cut[k] = CUT_NONE;
			const struct al_diag *e = al_diags_count(scratch) ? al_diags_get(scratch, 0) : NULL;
			const struct al_node *n = &s->g->nodes[k];
			ali_diag_add(real, AL_SEV_WARNING, s->m->path, n->offset, n->path, n->name,
				    "segment boundary after '%s' not cut: %s", n->name, e ? e->msg : al_status_str(st));
			if (!first[0])
				snprintf(first, sizeof first, "after '%s': %s", n->name,
					 e ? e->msg : al_status_str(st));
		}
		any |= cut[k] == CUT_TAKEN;
		al_diags_free(scratch);
	}
	if (!any)
		return refuse(s, AL_E_UNSUPPORTED, NULL, "no segment boundary of the plan can be cut (%s)",
			      first[0] ? first : "none found");
	return AL_OK;
}

enum al_status al_split_plan(al_model *m, const struct al_split_opts *o, al_splitter **out, al_diags *d)
{
	if (!m || !o || !out)
		return AL_E_INVALID_ARG;
	*out = NULL;
	struct al_splitter *s = ali_calloc(1, sizeof *s);
	if (!s)
		return AL_E_NOMEM;
	s->m = m;
	s->d = d;
	const struct al_submodel *sub = m->n_subs ? m->subs[0] : NULL;
	uint8_t *cut = NULL;
	enum al_status st = AL_OK;
	if (!sub) {
		st = refuse(s, AL_E_UNSUPPORTED, NULL, "the model has nothing to split");
		goto out;
	}
	for (size_t i = 0; i < N_NN_TYPES && !s->type; i++)
		if (sub->type && strcmp(sub->type, nn_types[i].name) == 0)
			s->type = &nn_types[i];
	if (!s->type || m->n_subs != 1 || sub->n_graphs < 1) {
		st = refuse(s, AL_E_UNSUPPORTED, NULL,
			    "only NeuralNetwork and ML Program models are split, not %s models",
			    sub->type ? sub->type : "these");
		goto out;
	}
	s->mil = s->type->field == MIL_TYPE;
	if (m->is_package != s->mil) {
		st = refuse(s, AL_E_UNSUPPORTED, NULL, s->mil ? "an ML Program is split from its .mlpackage"
							   : "a NeuralNetwork is split from its .mlmodel file");
		goto out;
	}
	if (s->mil && sub->n_functions != 1) {
		st = refuse(s, AL_E_UNSUPPORTED, NULL,
			    "only ML Programs of one function are split (this one has %u; name one with --function)",
			    sub->n_functions);
		goto out;
	}
	/* the root Model bytes: the mapping holding the first layer / op */
	const al_span first = sub->graphs[0]->n_nodes ? al_src(&sub->graphs[0]->nodes[0])->msg : (al_span){0};
	for (int k = 0; k < m->n_maps && first.p; k++)
		if (first.p >= m->maps[k].s.p && first.p < m->maps[k].s.p + m->maps[k].s.n)
			s->root = m->maps[k].s;
	if (!s->root.p && sub->graphs[0]->n_nodes) {
		st = refuse(s, AL_E_UNSUPPORTED, NULL,
			    "split copies bytes from the model's file: open it with al_model_open");
		goto out;
	}
	s->weights = m->weights;
	if (sub->is_updatable) {
		st = refuse(s, AL_E_UNSUPPORTED, NULL,
			    "cannot split an updatable model: training does not cross a part boundary");
		goto out;
	}
	s->sub = sub;
	s->g = sub->graphs[0];
	if (s->g->n_nodes < 2) {
		st = refuse(s, AL_E_INVALID_ARG, NULL, "the network has %u layer%s: nothing to cut",
			    s->g->n_nodes, s->g->n_nodes == 1 ? "" : "s");
		goto out;
	}
	if (o->n_at == 0 && !o->segments) {
		st = refuse(s, AL_E_INVALID_ARG, NULL, "no cut given (a layer name, or segments)");
		goto out;
	}
	if ((st = al_model_infer_shapes(m, d)) || (st = index_bytes(s)))
		goto out;
	cut = ali_calloc(s->g->n_nodes, 1);
	if (!cut) {
		st = AL_E_NOMEM;
		goto out;
	}
	if ((st = find_cuts(s, o, cut)))
		goto out;
	bool any = false;
	for (uint32_t k = 0; k < s->g->n_nodes; k++)
		any |= cut[k] != 0;
	if (!any) {
		st = refuse(s, AL_E_INVALID_ARG, NULL,
			    "nothing to cut: every layer is predicted on one unit (one segment)");
		goto out;
	}
	st = segment_cuts(s, cut);
	if (!st)
		st = plan_parts(s, cut);
out:
	ali_free(cut);
	names_free(s);
	s->d = NULL;
	if (!st && s->arena.failed)
		st = AL_E_NOMEM;
	if (st) {
		al_split_free(s);
		return st;
	}
	*out = s;
	return AL_OK;
}

size_t al_split_count(const al_splitter *s)
{
	return s ? s->n_parts : 0;
}

const struct al_split_part *al_split_get(const al_splitter *s, size_t i)
{
	return s && i < s->n_parts ? &s->parts[i] : NULL;
}

void al_split_free(al_splitter *s)
{
	if (!s)
		return;
	names_free(s);
	ali_arena_free(&s->arena);
	ali_free(s);
}

/* ------------------------------------------------------------------ writing */

static void put_feature(struct al_buf *b, uint32_t field, const struct al_split_tensor *t, al_span raw)
{
	if (raw.p) {
		ali_buf_len(b, field, raw.p, raw.n);
		return;
	}
	struct al_buf at = {0}, ft = {0}, fd = {0};
	uint64_t dims[AL_SHAPE_MAX_RANK];
	for (int i = 0; i < t->rank; i++)
		dims[i] = (uint64_t)t->dims[i];
	ali_buf_packed(&at, AT_SHAPE, dims, (size_t)t->rank);
	const struct io_type *ty = io_type(t->dtype);
	ali_buf_uint(&at, AT_DTYPE, ty ? ty->array : ARRAY_FP32);
	ali_buf_len(&ft, FT_MULTIARRAY, at.p, at.n);
	ali_buf_str(&fd, FD_NAME, t->name);
	ali_buf_len(&fd, FD_TYPE, ft.p, ft.n);
	if (at.failed || ft.failed || fd.failed)
		b->failed = true;
	else
		ali_buf_len(b, field, fd.p, fd.n);
	ali_buf_free(&at);
	ali_buf_free(&ft);
	ali_buf_free(&fd);
}

/* Whether preprocessing entry `pre` applies to a model input of part p: the
 * input it names, or (no featureName) any image input of the part. */
static bool pre_wanted(const struct al_splitter *s, size_t p, al_span pre)
{
	const struct al_split_part *pt = &s->parts[p];
	al_span fname = {0};
	pb_get_string(pre, PRE_FEATURE, &fname);
	for (uint32_t k = 0; k < pt->n_inputs; k++) {
		const struct al_split_tensor *t = &pt->inputs[k];
		if (t->role != AL_SPLIT_MODEL_INPUT)
			continue;
		if (fname.n && ali_span_eq(fname, t->name))
			return true;
		for (uint32_t i = 0; !fname.n && i < s->sub->n_inputs; i++)
			if (strcmp(s->sub->inputs[i].name, t->name) == 0 &&
			    s->sub->inputs[i].kind == AL_FEAT_IMAGE)
				return true;
	}
	return false;
}

/* The NamedValueType an op declares for its output `name`. */
static bool op_output_type(const struct al_node *w, const char *name, al_span *out)
{
	al_span v;
	for (size_t i = 0; nth_field(al_src(w)->msg, OP_OUTS, i, &v, NULL); i++) {
		al_span nm = {0};
		if (pb_get_string(v, NVT_NAME, &nm) && ali_span_eq(nm, name)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* Part p's Block: its outputs, the constants it copies and its ops, in model order. */
static enum al_status build_block(struct al_splitter *s, size_t p, struct al_buf *out)
{
	const struct al_split_part *pt = &s->parts[p];
	struct pb_iter it;
	struct pb_field f;
	bool outs = false, ops = false;
	pb_iter_init(&it, s->blk);
	for (;;) {
		bool more = pb_next(&it, &f);
		if ((!more || f.num == BLK_OUTS) && !outs) {
			for (uint32_t k = 0; k < pt->n_outputs; k++)
				ali_buf_str(out, BLK_OUTS, pt->outputs[k].name);
			outs = true;
		}
		if ((!more || f.num == BLK_OPS) && !ops) {
			for (uint32_t k = 0; k <= pt->last; k++)
				if (k >= pt->first || s->x[p].copy[k])
					ali_buf_put(out, s->layer_raw[k].p, s->layer_raw[k].n);
			ops = true;
		}
		if (!more)
			break;
		if (f.num != BLK_OUTS && f.num != BLK_OPS)
			ali_buf_put(out, s->blk.p + f.start, it.pos - f.start);
	}
	return it.err ? AL_E_FORMAT : AL_OK;
}

/* Part p's Program: the original with its function's inputs, block outputs and
 * ops replaced (other blocks of the function, for other opsets, dropped). */
static enum al_status build_program(struct al_splitter *s, size_t p, struct al_buf *out)
{
	const struct al_split_part *pt = &s->parts[p];
	struct al_buf fn = {0}, blk = {0}, ent = {0}, fent = {0};
	enum al_status st = build_block(s, p, &blk);
	struct pb_iter it;
	struct pb_field f;
	bool ins = false;
	pb_iter_init(&it, s->fn);
	for (;;) {
		bool more = pb_next(&it, &f);
		if ((!more || f.num == FN_INPUTS) && !ins) {
			for (uint32_t k = 0; k < pt->n_inputs && !st; k++) {
				const struct al_split_tensor *t = &pt->inputs[k];
				al_span v = {0};
				for (uint32_t i = 0; t->role == AL_SPLIT_MODEL_INPUT && i < s->sub->n_inputs; i++)
					if (strcmp(s->sub->inputs[i].name, t->name) == 0)
						v = s->fn_in[i];
				const struct al_node *w = s->x[p].in_w[k];
				if (t->role != AL_SPLIT_MODEL_INPUT && (!w || !op_output_type(w, t->name, &v)))
					st = AL_E_FORMAT;
				ali_buf_len(&fn, FN_INPUTS, v.p, v.n);
			}
			ins = true;
		}
		if (!more)
			break;
		if (f.num == FN_BLOCKS) {
			if (f.data.p + f.data.n == s->blk_entry.p + s->blk_entry.n) {
				al_span key = {0};
				pb_get_bytes(f.data, PB_MAP_KEY, &key);
				ali_buf_len(&ent, PB_MAP_KEY, key.p, key.n);
				ali_buf_len(&ent, PB_MAP_VALUE, blk.p, blk.n);
				ali_buf_len(&fn, FN_BLOCKS, ent.p, ent.n);
			}
		} else if (f.num != FN_INPUTS) {
			ali_buf_put(&fn, s->fn.p + f.start, it.pos - f.start);
		}
	}
	if (it.err)
		st = AL_E_FORMAT;
	pb_iter_init(&it, s->net);
	while (pb_next(&it, &f)) {
		if (f.num != PG_FUNCS) {
			ali_buf_put(out, s->net.p + f.start, it.pos - f.start);
		} else if (f.data.p + f.data.n == s->fn_entry.p + s->fn_entry.n) {
			/* a part has one function and no function list in its
			 * description: Core ML then runs the one named main (the
			 * function a multifunction package's --function named too) */
			ali_buf_len(&fent, PB_MAP_KEY, "main", 4);
			ali_buf_len(&fent, PB_MAP_VALUE, fn.p, fn.n);
			ali_buf_len(out, PG_FUNCS, fent.p, fent.n);
		}
	}
	if (it.err)
		st = AL_E_FORMAT;
	if (fn.failed || blk.failed || ent.failed || fent.failed)
		out->failed = true;
	ali_buf_free(&fn);
	ali_buf_free(&blk);
	ali_buf_free(&ent);
	ali_buf_free(&fent);
	return st;
}

static enum al_status build_part(struct al_splitter *s, size_t p, struct al_buf *b)
{
	const struct al_split_part *pt = &s->parts[p];
	const struct xpart *x = &s->x[p];
	bool last = p + 1 == s->n_parts;
	struct al_buf desc = {0}, net = {0};
	for (uint32_t k = 0; k < pt->n_inputs; k++)
		put_feature(&desc, D_INPUT, &pt->inputs[k], x->in_raw[k]);
	for (uint32_t k = 0; k < pt->n_outputs; k++)
		put_feature(&desc, D_OUTPUT, &pt->outputs[k], x->out_raw[k]);
	/* a classifier's predicted feature names: with the classifier (NN: the last
	 * part; ML Program: the part writing the predicted feature) */
	bool head = s->type->field == AL_MODEL_FIELD_neuralNetworkClassifier && last;
	for (uint32_t k = 0; s->mil && s->sub->predicted_feature && k < pt->n_outputs; k++)
		head |= strcmp(pt->outputs[k].name, s->sub->predicted_feature) == 0;
	if (head) {
		ali_buf_put(&desc, s->predicted.p, s->predicted.n);
		ali_buf_put(&desc, s->probs.p, s->probs.n);
	}
	ali_buf_put(&desc, s->metadata.p, s->metadata.n);
	if (s->mil) {
		enum al_status st = build_program(s, p, &net);
		ali_buf_uint(b, M_SPEC, (uint64_t)(uint32_t)pt->spec_version);
		ali_buf_len(b, M_DESC, desc.p, desc.n);
		ali_buf_len(b, MIL_TYPE, net.p, net.n);
		if (desc.failed || net.failed)
			b->failed = true;
		ali_buf_free(&desc);
		ali_buf_free(&net);
		return st ? st : b->failed ? AL_E_NOMEM : AL_OK;
	}
	struct pb_iter it;
	struct pb_field f;
	bool layers_done = false;
	pb_iter_init(&it, s->net);
	while (pb_next(&it, &f)) {
		const uint8_t *raw = s->net.p + f.start;
		size_t rawn = it.pos - f.start;
		if (f.num == NET_LAYERS && f.wire == PB_LEN) {
			if (!layers_done) /* constants of earlier parts it reads, then its own */
				for (uint32_t k = 0; k <= pt->last; k++)
					if (k >= pt->first || s->x[p].copy[k])
						ali_buf_put(&net, s->layer_raw[k].p, s->layer_raw[k].n);
			layers_done = true;
			continue;
		}
		enum who w = net_who(f.num);
		if (w == W_ALL || (w == W_LAST && last) ||
		    (w == W_INPUTS && f.wire == PB_LEN && pre_wanted(s, p, f.data)))
			ali_buf_put(&net, raw, rawn);
	}
	uint32_t type = last ? s->type->field : nn_types[0].field;
	ali_buf_uint(b, M_SPEC, (uint64_t)(uint32_t)pt->spec_version);
	ali_buf_len(b, M_DESC, desc.p, desc.n);
	ali_buf_len(b, type, net.p, net.n);
	if (desc.failed || net.failed)
		b->failed = true;
	ali_buf_free(&desc);
	ali_buf_free(&net);
	return it.err ? AL_E_FORMAT : b->failed ? AL_E_NOMEM : AL_OK;
}

static enum al_status build_pipeline(struct al_splitter *s, struct al_buf *b)
{
	struct al_buf pl = {0}, part = {0}, holder = {0};
	enum al_status st = AL_OK;
	int spec = s->spec;
	for (size_t p = 0; p < s->n_parts && !st; p++) {
		part.n = 0;
		st = build_part(s, p, &part);
		ali_buf_len(&pl, PL_MODELS, part.p, part.n);
		if (s->parts[p].spec_version > spec)
			spec = s->parts[p].spec_version;
	}
	for (size_t p = 0; p < s->n_parts && !st; p++) {
		char nm[32];
		snprintf(nm, sizeof nm, "part%zu", p + 1);
		ali_buf_str(&pl, PL_NAMES, nm);
	}
	struct al_buf desc = {0};
	if (s->mil && s->sub->n_fdescs > 1) {
		/* --function of a multifunction package: the pipeline takes and
		 * gives what that function does (the description's function list,
		 * the other functions' interfaces, stays behind) */
		for (uint32_t k = 0; k < s->sub->n_inputs; k++)
			ali_buf_len(&desc, D_INPUT, s->in_desc[k].p, s->in_desc[k].n);
		for (uint32_t k = 0; k < s->sub->n_outputs; k++)
			ali_buf_len(&desc, D_OUTPUT, s->out_desc[k].p, s->out_desc[k].n);
		ali_buf_put(&desc, s->metadata.p, s->metadata.n);
	}
	if (!st) {
		ali_buf_uint(b, M_SPEC, (uint64_t)(uint32_t)(spec > 1 ? spec : 1));
		if (s->mil && s->sub->n_fdescs > 1)
			ali_buf_len(b, M_DESC, desc.p, desc.n);
		else
			ali_buf_len(b, M_DESC, s->desc.p, s->desc.n);
		if (s->type->holder) {
			ali_buf_len(&holder, PLH_PIPELINE, pl.p, pl.n);
			ali_buf_len(b, s->type->pipeline, holder.p, holder.n);
		} else {
			ali_buf_len(b, s->type->pipeline, pl.p, pl.n);
		}
		if (pl.failed || part.failed || holder.failed || desc.failed || b->failed)
			st = AL_E_NOMEM;
	}
	ali_buf_free(&desc);
	ali_buf_free(&pl);
	ali_buf_free(&part);
	ali_buf_free(&holder);
	return st;
}

enum al_status al_split_bytes(al_splitter *s, size_t i, uint8_t **out, size_t *n, al_diags *d)
{
	if (!s || !out || !n || i > s->n_parts)
		return AL_E_INVALID_ARG;
	*out = NULL;
	*n = 0;
	struct al_buf b = {0};
	enum al_status st = i == s->n_parts ? build_pipeline(s, &b) : build_part(s, i, &b);
	if (st) {
		ali_diag_add(d, AL_SEV_ERROR, s->m->path, UINT64_MAX, NULL, NULL,
			    st == AL_E_NOMEM ? "out of memory" : "the model could not be re-read");
		ali_buf_free(&b);
		return st;
	}
	*out = b.p ? b.p : ali_malloc(1);
	*n = b.n;
	return *out ? AL_OK : AL_E_NOMEM;
}

/* Two outputs named the same (by path, or by the file an existing one is). */
static bool same_output(const char *a, const char *b)
{
	struct stat sa, sb;
	if (strcmp(a, b) == 0)
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* A new file `path` (which must not exist) holding n bytes (fsynced when
 * writes are durable);
 * its mode 0666 & ~umask. errno set on failure. */
static bool write_new(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0)
		return false;
	bool ok = ali_write_all(fd, p, n) && ali_sync_fd(fd) == 0;
	int e = errno;
	if (close(fd) != 0 && ok) {
		ok = false;
		e = errno;
	}
	errno = e;
	return ok;
}

/* The .mlpackage layout written for an ML Program part (what mlpackage.c reads
 * and coremltools writes): directories first, removed in reverse order. */
enum { PK_DIR, PK_MANIFEST, PK_MODEL, PK_WEIGHTS };
static const struct pkg_entry {
	const char *path;
	int what;
} pkg_entries[] = {
	{"Data", PK_DIR},
	{"Data/com.apple.CoreML", PK_DIR},
	{"Data/com.apple.CoreML/weights", PK_DIR},
	{"Manifest.json", PK_MANIFEST},
	{"Data/com.apple.CoreML/model.mlmodel", PK_MODEL},
	{"Data/com.apple.CoreML/weights/weight.bin", PK_WEIGHTS},
};
#define N_PKG_ENTRIES (sizeof pkg_entries / sizeof pkg_entries[0])
static const char manifest[] =
	"{\n"
	"    \"fileFormatVersion\": \"1.0.0\",\n"
	"    \"itemInfoEntries\": {\n"
	"        \"a1e7b2c0-5d1f-4c3e-9b8a-000000000001\": {\n"
	"            \"author\": \"com.apple.CoreML\",\n"
	"            \"description\": \"CoreML Model Specification\",\n"
	"            \"name\": \"model.mlmodel\",\n"
	"            \"path\": \"com.apple.CoreML/model.mlmodel\"\n"
	"        },\n"
	"        \"a1e7b2c0-5d1f-4c3e-9b8a-000000000002\": {\n"
	"            \"author\": \"com.apple.CoreML\",\n"
	"            \"description\": \"CoreML Model Weights\",\n"
	"            \"name\": \"weights\",\n"
	"            \"path\": \"com.apple.CoreML/weights\"\n"
	"        }\n"
	"    },\n"
	"    \"rootModelIdentifier\": \"a1e7b2c0-5d1f-4c3e-9b8a-000000000001\"\n"
	"}\n";

/* Fill the (new, empty) directory dir as a package holding model bytes and weights. */
static bool pkg_write(const char *dir, const uint8_t *model, size_t n, al_span weights)
{
	char p[4096];
	for (size_t i = 0; i < N_PKG_ENTRIES; i++) {
		const struct pkg_entry *e = &pkg_entries[i];
		if (snprintf(p, sizeof p, "%s/%s", dir, e->path) >= (int)sizeof p) {
			errno = ENAMETOOLONG;
			return false;
		}
		bool ok = e->what == PK_DIR	 ? mkdir(p, 0777) == 0
			: e->what == PK_MANIFEST ? write_new(p, manifest, sizeof manifest - 1)
			: e->what == PK_MODEL	 ? write_new(p, model, n)
			: weights.n		 ? write_new(p, weights.p, weights.n)
						 : true;
		if (!ok)
			return false;
	}
	return true;
}

void al_split_weights(const al_splitter *s, const void **p, size_t *n)
{
	*p = s && s->mil && s->weights.n ? s->weights.p : NULL;
	*n = s && s->mil ? s->weights.n : 0;
}

enum al_status al_split_write(al_splitter *s, const char *const *paths, size_t n_paths,
			      const char *pipeline, al_diags *d)
{
	if (!s || (n_paths && (!paths || n_paths != s->n_parts)) || (!n_paths && !pipeline))
		return AL_E_INVALID_ARG;
	size_t n = n_paths + (pipeline ? 1 : 0);
	const char **dst = ali_calloc(n, sizeof *dst);
	struct al_atomic *out = ali_calloc(n, sizeof *out);
	bool *renamed = ali_calloc(n, sizeof *renamed);
	enum al_status st = dst && out && renamed ? AL_OK : AL_E_NOMEM;
	for (size_t i = 0; !st && i < n; i++) {
		dst[i] = i < n_paths ? paths[i] : pipeline;
		if (!dst[i] || !*dst[i])
			st = AL_E_INVALID_ARG;
	}
	for (size_t i = 0; !st && i < n; i++) {
		struct stat sb;
		const char *in = s->m->path;
		st = al_output_check(dst[i], &in, 1, 0, d); /* the output guard: not over or into the input */
		if (!st && s->mil && lstat(dst[i], &sb) == 0) {
			ali_diag_add(d, AL_SEV_ERROR, dst[i], UINT64_MAX, NULL, NULL,
				    "%s exists: a package is a directory, not replaced; remove it first", dst[i]);
			st = AL_E_INVALID_ARG;
		}
		for (size_t j = 0; !st && j < i; j++)
			if (same_output(dst[i], dst[j])) {
				ali_diag_add(d, AL_SEV_ERROR, dst[i], UINT64_MAX, NULL, NULL,
					    "%s is named twice as an output", dst[i]);
				st = AL_E_INVALID_ARG;
			}
	}
	/* every output complete under a temporary name first (ali_atomic_begin:
	 * a file, or a package directory), then the renames */
	for (size_t i = 0; out && i < n; i++)
		out[i].fd = -1;
	for (size_t i = 0; !st && i < n; i++) {
		uint8_t *bytes = NULL;
		size_t nb = 0;
		if ((st = al_split_bytes(s, i < n_paths ? i : s->n_parts, &bytes, &nb, d)))
			break;
		if ((st = ali_atomic_begin(&out[i], dst[i], s->mil, d))) {
			ali_free(bytes);
			break;
		}
		bool ok = s->mil ? pkg_write(out[i].tmp, bytes, nb, s->weights)
				 : ali_write_all(out[i].fd, bytes, nb);
		ali_free(bytes);
		if (!ok) {
			ali_diag_add(d, AL_SEV_ERROR, dst[i], UINT64_MAX, NULL, NULL, "cannot write %s: %s",
				    dst[i], strerror(errno));
			st = AL_E_IO;
		}
	}
	for (size_t i = 0; !st && i < n; i++) {
		if ((st = ali_atomic_commit(&out[i], d)))
			break;
		renamed[i] = true;
	}
	for (size_t i = 0; out && i < n; i++) {
		if (renamed && renamed[i] && st) /* renamed may be the allocation that failed */
			ali_remove_tree(dst[i]); /* take back what was written */
		ali_atomic_abort(&out[i]);
	}
	ali_free(dst);
	ali_free(out);
	ali_free(renamed);
	return st;
}

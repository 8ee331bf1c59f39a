/* SPDX-License-Identifier: MIT */
/* fix.c: al_model_fix, what `anelint fix IN -o OUT` means: model surgery (docs/surgery.md).
 * The CLI (src/cli/fix.c) and the Python package call it and print / convert
 * its result; nothing here prints (errors go to the caller's diagnostics, the
 * JSON report is written by al_fix_write_json from the result).
 *
 *   1. load and check IN; its plan summary is "before"
 *   2. plan the rewrites (the library's pass table), build the new file, load
 *      and check it; a rewrite whose layers still fall back is dropped and the
 *      plan redone (at most 4 plans). A .mlmodel with -o is written straight to
 *      a temporary file next to OUT and mapped from there (no in-memory copy of
 *      the weights: fix costs about one cp, bench/README.md); packages and
 *      --dry-run are built in memory
 *   3. prove it in the reference interpreter: the whole models on the same seeded
 *      random inputs (and --inputs DIR) when they are cheap or the user gave
 *      inputs, else the rewritten region of each (al_model_run_region) on 4 seeded
 *      random sets of region inputs; an exact rewrite must be bit-identical, a
 *      reassociating one within 1e-5 * max|ref| per output, an approximate one
 *      within --tolerance with no output collapsed or overflowed (--proof picks)
 *   4. steps 2-3 are one round: the next round runs them on its output, opened
 *      from a file as a second fix would (a scratch directory beside OUT, or
 *      in $TMPDIR for --dry-run), until a round applies nothing or
 *      --max-rounds; a refused round refuses the whole fix
 *   5. rename the last round's temporary file to OUT (packages: write them,
 *      temporary directory + rename) unless --dry-run or refused; else delete it
 *
 * res->exit_code: 0 written (or would be, --dry-run); 1 refused: a rewritten
 * model differs from the original or cannot be run to prove it (nothing
 * written); 2 an option the model cannot take; 3 the input is malformed or
 * unsupported; 4 I/O (README "Exit codes").
 */
#include "command.h"
#include "base.h" /* al_atomic_*: the library's one atomic writer */
#include "model.h" /* al_src: the layer / op message bytes, for the structural proof */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SETTLE 4 /* plans of one round: a rewrite whose layers still fall back is dropped */
#define DEFAULT_MAX_ROUNDS 8 /* rounds of passes (--max-rounds): each on the previous one's output */
#define MAX_MAX_ROUNDS 64
/* --proof auto runs the whole models when the original's estimated work
 * (node->cost, docs/shapes.md) is at most this. On the 2-core benchmark machine
 * the interpreter ran the synthetic model's convolutions at ~20 GFLOP/s (2 x 27
 * GFLOP in ~2.5 s), layers without sgemm several times slower: two runs of a
 * 2 GFLOP model take 0.2-1 s, which nobody waits for, and the whole-model proof
 * is the stronger one (real values through every layer). Above it the whole
 * proof grows with the model and the region proof stays ~10 ms (bench/README.md). */
#define WHOLE_MAX_FLOPS 2e9

/* How a fix ends (al_fix_result.exit_code, the CLI's exit codes). */
enum { FX_OK = 0, FX_REFUSED = 1, FX_USAGE = 2, FX_INVALID = 3, FX_IO = 4 };

static int exit_of(enum al_status st)
{
	return st == AL_OK ? FX_OK : st == AL_E_IO || st == AL_E_NOMEM ? FX_IO : FX_INVALID;
}

/* The errors of src into err, each naming its file (subject when it has none);
 * "SUBJECT: cannot load" when src holds none: what the CLI prints of them. */
static void fail_diags(al_diags *err, const char *subject, const al_diags *src)
{
	bool any = false;
	for (size_t i = 0; src && i < al_diags_count(src); i++) {
		const struct al_diag *x = al_diags_get(src, i);
		if (x->severity != AL_SEV_ERROR)
			continue;
		any = true;
		ali_diag_add(err, AL_SEV_ERROR, x->file ? x->file : subject, x->offset, x->where, x->node, "%s",
			     x->msg ? x->msg : "");
	}
	if (!any)
		ali_diag_add(err, AL_SEV_ERROR, subject, UINT64_MAX, NULL, NULL, "cannot load");
}

/* One error about subject (a path, a layer). */
static void fail_msg(al_diags *err, const char *subject, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail_msg(al_diags *err, const char *subject, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ali_diag_vadd(err, AL_SEV_ERROR, subject, UINT64_MAX, NULL, NULL, fmt, ap);
	va_end(ap);
}

struct summary {
	uint32_t nodes, ane, segments, switches;
	uint32_t fallbacks; /* layers whose own verdict is off the ANE */
	bool ok;
};

static void summarize_model(al_model *m, const struct al_check_opts *chk, struct summary *s)
{
	memset(s, 0, sizeof *s);
	al_diags *d = al_diags_new();
	if (!d)
		return;
	if (al_model_check(m, chk, d) == AL_OK) {
		s->ok = true;
		for (size_t i = 0; i < al_model_count(m); i++) {
			const struct al_plan *p = NULL;
			if (al_model_plan(m, i, NULL, &p, d) != AL_OK || !p)
				continue;
			s->nodes += p->n_nodes;
			s->ane += p->ane_nodes;
			s->segments += p->n_segments;
			s->switches += p->switches;
			for (uint32_t k = 0; k < p->n_nodes; k++)
				s->fallbacks += !p->nodes[k]->verdict.ane;
			al_plan_free(p);
		}
	}
	al_diags_free(d);
}

/* A layer of `m` by name (all graphs of every sub-model), or NULL. */
static const struct al_node *find_layer(const al_model *m, const char *name)
{
	for (size_t i = 0; i < al_model_count(m); i++) {
		const struct al_submodel *s = al_model_get(m, i);
		for (uint32_t g = 0; g < s->n_graphs; g++)
			for (uint32_t k = 0; k < s->graphs[g]->n_nodes; k++) {
				const struct al_node *n = &s->graphs[g]->nodes[k];
				if (n->name && strcmp(n->name, name) == 0)
					return n;
			}
	}
	return NULL;
}

/* ---------------------------------------------------------------- state */

struct dropped {
	char *name;
	char *why;
};

struct fix {
	const struct al_fix_opts *o;
	al_diags *err;   /* the caller's: the errors that end the fix */
	int threads; /* --threads */
	const char *in;
	al_model *m;
	al_diags *d;
	al_surgery *sg;
	uint8_t *bytes;
	size_t n_bytes;
	al_model *out_m;
	char *tmp;      /* the rewritten .mlmodel written next to OUT, not yet renamed */
	struct al_atomic out_file; /* owns tmp: renamed over OUT by ali_atomic_commit */
	char *tmp_own;  /* rounds after the first, .mlmodel with -o: their output in the scratch directory */
	struct dropped *drop;
	size_t n_drop;
	const char **skip;
	struct summary before, after;
	struct al_check_opts chk; /* --target, --os, --compute-units: what "falls back" means */
	enum al_equiv allow, highest;
	enum al_equiv asked;      /* --allow as given; allow is lowered for a round whose approximate rewrites were refused */
	char approx_refused[240]; /* that refusal: the output and its figures ("" when none) */
	double tolerance;         /* --tolerance: the largest rel of an approximate rewrite (0: 1e-2) */
	int round;                /* 1, 2, ...: the round of passes this is */
	const struct al_input_shape *shapes; /* --shape / --enumerate requests, in order (the first round) */
	size_t n_shapes;
	/* proof */
	bool proved, proof_ok, proof_run;
	char proof_why[256];
	const char *proof_kind;  /* "whole" or "region" */
	int proof_runs;          /* input sets run through both */
	double flops;            /* the original's estimated work (known nodes) */
	char proof_note[320];    /* why this kind: threshold, --inputs, a region that fell back */
	const char **region_a, **region_b; /* region: layers named in the original / the output */
	size_t n_region_a, n_region_b;
	struct al_proof proof;         /* al_prove_equivalent / al_prove_region: owns diffs */
	const struct al_proof_diff *diffs;
	size_t n_diffs;
	char inputs_how[128];
	char shapes_how[400];    /* whole proof of a flexible model: the shapes run, "" when one */
	struct al_fix_rewrite *pub; /* the result's rewrites of this round */
	size_t n_pub;
};

static void fix_free(struct fix *f)
{
	al_model_free(f->out_m);
	ali_atomic_abort(&f->out_file); /* refused, failed or dry: never left behind */
	f->tmp = NULL;
	free(f->bytes);
	al_surgery_free(f->sg);
	al_model_free(f->m);
	al_diags_free(f->d);
	for (size_t i = 0; i < f->n_drop; i++) {
		free(f->drop[i].name);
		free(f->drop[i].why);
	}
	free(f->drop);
	free(f->skip);
	if (f->tmp_own)
		(void)unlink(f->tmp_own); /* a round's output in the scratch directory */
	free(f->tmp_own);
	al_proof_clear(&f->proof);
	free(f->pub);
	free(f->region_a);
	free(f->region_b);
}

static char *fx_dup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

static const char *dropped_why(const struct fix *f, const char *name)
{
	for (size_t i = 0; i < f->n_drop; i++)
		if (f->drop[i].why && strcmp(f->drop[i].name, name) == 0)
			return f->drop[i].why; /* the caller's skips have none */
	return NULL;
}

/* ---------------------------------------------------------------- rounds */

/* Plan, build and check; returns an exit code (0: fine). Sets *again when a
 * rewrite was dropped because its layers still fall back. */
static int round_once(struct fix *f, bool *again)
{
	*again = false;
	al_surgery_free(f->sg);
	f->sg = NULL;
	free(f->bytes);
	f->bytes = NULL;
	al_model_free(f->out_m);
	f->out_m = NULL;
	struct al_surgery_opts o = {.allow = f->allow, .skip = f->skip, .n_skip = f->n_drop,
				    .shapes = f->shapes, .n_shapes = f->n_shapes};
	enum al_status st = al_surgery_plan(f->m, &o, &f->sg, f->d);
	if (st) {
		fail_diags(f->err, f->in, f->d);
		return exit_of(st);
	}
	/* a --shape / --enumerate the model cannot take is a bad argument */
	for (size_t i = 0; i < al_surgery_count(f->sg); i++) {
		const struct al_rewrite *r = al_surgery_get(f->sg, i);
		if (r->model_level && !r->applied) {
			fail_msg(f->err, r->node->name, "%s: %s", r->pass->name, r->why_not ? r->why_not : "not applied");
			return FX_USAGE;
		}
	}
	if (al_surgery_applied(f->sg) == 0)
		return FX_OK;
	al_diags *d2 = al_diags_new();
	if (!d2)
		return FX_IO;
	if (f->tmp) {
		/* written where it will stay; al_surgery_write writes beside f->tmp
		 * and renames over it, so a mapping of an earlier round stays valid
		 * until freed. The name (unique: mkstemp made it) is freed first:
		 * a rename over an existing file makes ext4 (auto_da_alloc) start
		 * writing the new file back at once, 0.12 s on a 500 MB model that
		 * then slowed everything after it (bench/fixcp.sh) */
		(void)unlink(f->tmp);
		if ((st = al_surgery_write(f->sg, f->tmp, f->d)) != AL_OK) {
			al_diags_free(d2);
			fail_diags(f->err, f->tmp, f->d);
			return exit_of(st);
		}
		st = al_model_open(f->tmp, &f->out_m, d2);
	} else {
		const void *w = NULL; /* a package's weight.bin, with any new constants */
		size_t wn = 0;
		if ((st = al_surgery_bytes(f->sg, &f->bytes, &f->n_bytes, f->d)) != AL_OK ||
		    (st = al_surgery_weights(f->sg, &w, &wn, f->d)) != AL_OK) {
			al_diags_free(d2);
			fail_diags(f->err, f->in, f->d);
			return exit_of(st);
		}
		st = al_model_open_buffer(f->bytes, f->n_bytes, w, wn, f->in, &f->out_m, d2);
	}
	if (st == AL_OK && f->o->function) /* the function rewritten, as in the input */
		st = al_model_select_function(f->out_m, f->o->function, d2);
	if (st == AL_OK)
		st = al_model_check(f->out_m, &f->chk, d2);
	if (st != AL_OK) {
		fail_msg(f->err, f->in, "the rewritten model does not load (a bug in a pass); nothing written");
		fail_diags(f->err, f->in, d2);
		al_diags_free(d2);
		return FX_INVALID;
	}
	al_diags_free(d2);
	for (size_t i = 0; i < al_surgery_count(f->sg); i++) {
		const struct al_rewrite *r = al_surgery_get(f->sg, i);
		if (!r->applied || r->off_until_next_round) /* the next round converts them */
			continue;
		for (uint32_t k = 0; k < r->n_layers; k++) {
			const struct al_node *n = find_layer(f->out_m, r->layers[k]);
			if (!n || n->verdict.ane)
				continue;
			if (r->stays_off && strcmp(r->stays_off, r->layers[k]) == 0)
				continue; /* the pass says this one may stay off (a concat of slices) */
			char why[256];
			snprintf(why, sizeof why, "the rewritten layer '%s' (%s) would still fall back: %s %s",
				 n->name, n->type,
				 n->verdict.n_rules ? n->verdict.rules[0]->id : "",
				 n->verdict.n_rules ? n->verdict.reasons[0] : "");
			struct dropped *dd = realloc(f->drop, (f->n_drop + 1) * sizeof *dd);
			const char **sk = realloc(f->skip, (f->n_drop + 1) * sizeof *sk);
			if (dd)
				f->drop = dd;
			if (sk)
				f->skip = sk;
			if (!dd || !sk)
				return FX_IO;
			f->drop[f->n_drop].name = fx_dup(r->node->name);
			f->drop[f->n_drop].why = fx_dup(why);
			if (!f->drop[f->n_drop].name || !f->drop[f->n_drop].why)
				return FX_IO;
			f->skip[f->n_drop] = f->drop[f->n_drop].name;
			f->n_drop++;
			*again = true;
			break;
		}
	}
	return FX_OK;
}

/* ---------------------------------------------------------------- proof */

static int make_inputs(struct fix *f, const struct al_submodel *s, struct al_named_tensor *v,
		       size_t *n, uint64_t seed, uint64_t max_bytes)
{
	*n = 0;
	int from_dir = 0;
	for (uint32_t i = 0; i < s->n_inputs; i++) {
		const struct al_feature *ft = &s->inputs[i];
		al_tensor *t = NULL;
		al_diags *d = al_diags_new();
		if (!d)
			return FX_IO;
		enum al_status st = AL_OK;
		char path[4096];
		if (f->o->inputs && snprintf(path, sizeof path, "%s/%s.npy", f->o->inputs, ft->name) > 0 &&
		    access(path, F_OK) == 0) {
			st = al_npy_read(path, &t, d);
			from_dir++;
		} else if (!ft->optional) {
			st = al_random_input(ft, seed, max_bytes, &t, d);
		}
		if (st != AL_OK) {
			fail_diags(f->err, ft->name, d);
			al_diags_free(d);
			return exit_of(st);
		}
		al_diags_free(d);
		if (t) {
			v[*n].name = ft->name;
			v[*n].t = t;
			(*n)++;
		}
	}
	snprintf(f->inputs_how, sizeof f->inputs_how, "%d from %s, the rest random (seed %llu)",
		 from_dir, f->o->inputs ? f->o->inputs : "(no --inputs)", (unsigned long long)seed);
	return FX_OK;
}

/* The library's verdict into the fields the reports read. */
static void take_proof(struct fix *f)
{
	f->proved = f->proof.proved;
	f->proof_ok = f->proof.ok;
	f->proof_runs = f->proof.runs;
	snprintf(f->proof_why, sizeof f->proof_why, "%s", f->proof.why);
	f->diffs = f->proof.diffs;
	f->n_diffs = f->proof.n_diffs;
}

/* Estimated work of every node of m with a known cost (nested graphs once). */
static double graph_flops(const struct al_graph *g, int depth)
{
	double t = 0;
	for (uint32_t i = 0; g && depth < 64 && i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		if (n->cost.known && n->cost.flops > 0)
			t += n->cost.flops;
		for (uint32_t k = 0; k < n->n_sub; k++)
			t += graph_flops(n->sub[k], depth + 1);
	}
	return t;
}

static double model_flops(const al_model *m)
{
	double t = 0;
	for (size_t i = 0; i < al_model_count(m); i++) {
		const struct al_submodel *s = al_model_get(m, i);
		for (uint32_t g = 0; g < s->n_graphs; g++)
			t += graph_flops(s->graphs[g], 0);
	}
	return t;
}

/* ---- the whole proof at the other shapes of a flexible input
 * A model whose inputs take enumerated shapes or a range runs at its default
 * shape first (al_random_input: the first enumerated shape, the range's
 * default). A rewrite must hold at every shape the model takes: the whole
 * models then also run at each other enumerated shape and at a range's lower
 * and upper bound (every flexible axis at once; an unbounded upper one is left
 * out), one point per run (input i takes its k-th shape, or its default when
 * it has fewer), at most MAX_POINTS, each while its estimated work (the
 * default's, scaled by the square of the element ratio: attention is
 * quadratic in the sequence) stays under WHOLE_MAX_FLOPS. The worst result
 * is the one reported; a point the interpreter cannot run is noted, not
 * refused (the default proved the rewrite on the same ops). */
#define MAX_POINTS 8

static double dims_count(const int64_t *d, uint32_t r)
{
	double n = 1;
	for (uint32_t i = 0; i < r; i++)
		n *= d[i] > 0 ? (double)d[i] : 1;
	return n;
}

/* The shapes of input ft other than the one al_random_input draws, into pts
 * (each AL_SHAPE_MAX_RANK long); def: the default. Their count. */
static size_t other_shapes(const struct al_feature *ft, int64_t *def, int64_t (*pts)[AL_SHAPE_MAX_RANK], size_t cap)
{
	uint32_t r = ft->rank;
	if ((ft->kind != AL_FEAT_MULTIARRAY && ft->kind != AL_FEAT_IMAGE) || !r || r > AL_SHAPE_MAX_RANK ||
	    !ft->shape || !ft->flex_values)
		return 0;
	for (uint32_t i = 0; i < r; i++) {
		def[i] = ft->shape[i] >= 0 ? ft->shape[i] : 1;
		if (ft->flex == AL_FLEX_RANGE && def[i] < ft->flex_values[2 * i])
			def[i] = ft->flex_values[2 * i];
	}
	size_t n = 0;
	if (ft->flex == AL_FLEX_ENUMERATED && ft->n_shapes) {
		memcpy(def, ft->flex_values, r * sizeof *def);
		for (uint32_t k = 1; k < ft->n_shapes && n < cap; k++)
			memcpy(pts[n++], ft->flex_values + (size_t)k * r, r * sizeof *def);
	} else if (ft->flex == AL_FLEX_RANGE) {
		for (int b = 0; b < 2 && n < cap; b++) {
			bool differs = false, bounded = true;
			for (uint32_t i = 0; i < r; i++) {
				int64_t lo = ft->flex_values[2 * i], hi = ft->flex_values[2 * i + 1];
				pts[n][i] = lo == hi || (hi < 0 && b) ? def[i] : b ? hi : lo;
				bounded &= !(b && hi < 0 && lo != hi);
				differs |= pts[n][i] != def[i];
			}
			n += differs && bounded;
		}
	}
	return n;
}

static void put_dims(char *b, size_t cap, const char *name, const int64_t *d, uint32_t r)
{
	size_t k = strlen(b);
	k += (size_t)snprintf(b + k, k < cap ? cap - k : 0, "%s=", name);
	if (k < cap)
		ali_dims_str(b + k, cap - k, d, r, AL_DIMS_BARE);
}

static double worst_rel(const struct al_proof *p)
{
	double w = 0;
	for (size_t i = 0; i < p->n_diffs; i++)
		if (!(p->diffs[i].rel <= w))
			w = p->diffs[i].rel;
	return w;
}

/* After the default shape proved ok: the other points (f->shapes_how lists
 * the shapes run). An exit code for I/O trouble only. */
static int prove_points(struct fix *f, const struct al_submodel *s, uint64_t seed, uint64_t max_bytes)
{
	uint32_t ni = s->n_inputs < 16 ? s->n_inputs : 16;
	int64_t def[16][AL_SHAPE_MAX_RANK], pts[16][MAX_POINTS][AL_SHAPE_MAX_RANK];
	size_t np[16] = {0}, points = 0;
	for (uint32_t i = 0; i < ni; i++) {
		np[i] = other_shapes(&s->inputs[i], def[i], pts[i], MAX_POINTS);
		points = np[i] > points ? np[i] : points;
	}
	if (!points)
		return FX_OK;
	char shown[160] = "the default";
	size_t proved = 1, skipped = 0, failed = 0;
	snprintf(f->shapes_how, sizeof f->shapes_how, "default");
	for (uint32_t i = 0; i < ni; i++)
		if (np[i]) {
			strncat(f->shapes_how, " ", sizeof f->shapes_how - strlen(f->shapes_how) - 1);
			put_dims(f->shapes_how, sizeof f->shapes_how, s->inputs[i].name, def[i], s->inputs[i].rank);
		}
	for (size_t k = 0; k < points; k++) {
		char at[160] = "";
		double ratio = 1;
		struct al_named_tensor in[16];
		size_t n_in = 0;
		int rc = FX_OK;
		for (uint32_t i = 0; i < ni; i++) {
			const struct al_feature *ft = &s->inputs[i];
			if (k < np[i]) {
				double q = dims_count(pts[i][k], ft->rank) / dims_count(def[i], ft->rank);
				ratio = q > ratio ? q : ratio;
				if (at[0])
					strncat(at, " ", sizeof at - strlen(at) - 1);
				put_dims(at, sizeof at, ft->name, pts[i][k], ft->rank);
			}
		}
		if (f->flops * ratio * ratio > WHOLE_MAX_FLOPS) {
			skipped++;
			continue;
		}
		for (uint32_t i = 0; i < ni && rc == FX_OK; i++) {
			struct al_feature g = s->inputs[i];
			if (g.optional)
				continue;
			if (k < np[i]) {
				g.shape = pts[i][k];
				g.flex = AL_FLEX_NONE;
				g.flex_values = NULL;
				g.n_shapes = 0;
			}
			al_tensor *t = NULL;
			al_diags *d = al_diags_new();
			enum al_status st = d ? al_random_input(&g, seed, max_bytes, &t, d) : AL_E_NOMEM;
			if (st != AL_OK)
				rc = st == AL_E_NOMEM ? FX_IO : (fail_diags(f->err, g.name, d), exit_of(st));
			al_diags_free(d);
			if (t) {
				in[n_in].name = g.name;
				in[n_in++].t = t;
			}
		}
		struct al_proof q = {0};
		if (rc == FX_OK) {
			struct al_proof_opts o = {.equiv = f->highest, .inputs = in, .n_inputs = n_in, .seed = seed,
						  .max_bytes = max_bytes, .max_work = f->o->max_work,
						  .threads = f->threads, .tolerance = f->tolerance};
			al_diags *d = al_diags_new();
			enum al_status st = d ? al_prove_equivalent(f->m, f->out_m, &o, &q, d) : AL_E_NOMEM;
			al_diags_free(d);
			if (st == AL_E_NOMEM)
				rc = FX_IO;
			else if (st != AL_OK)
				q.proved = false;
		}
		/* not run: when the original runs at this shape, the rewrite broke it */
		bool broke = false;
		if (rc == FX_OK && !q.proved) {
			struct al_run_opts ro = {.precision = AL_PREC_FP32, .threads = f->threads, .max_bytes = max_bytes,
						 .max_work = f->o->max_work};
			struct al_named_tensor *oa = NULL;
			size_t na = 0;
			al_diags *d = al_diags_new();
			broke = d && al_model_run(f->m, in, n_in, &ro, &oa, &na, d) == AL_OK;
			al_outputs_free(oa, na);
			al_diags_free(d);
		}
		for (size_t i = 0; i < n_in; i++)
			al_tensor_free(in[i].t);
		if (rc != FX_OK) {
			al_proof_clear(&q);
			return rc;
		}
		size_t len = strlen(f->shapes_how);
		if (broke) {
			snprintf(f->shapes_how + len, sizeof f->shapes_how - len, "; %s: the original runs, the rewritten "
				 "model does not", at);
			al_proof_clear(&f->proof);
			f->proof = q;
			f->proof.proved = true, f->proof.ok = false;
			take_proof(f);
			snprintf(f->proof_why, sizeof f->proof_why, "at %.60s the original runs and the rewritten model "
				 "does not (%.120s)", at, q.why);
			return FX_OK;
		}
		if (!q.proved) {
			failed++;
			snprintf(f->shapes_how + len, sizeof f->shapes_how - len, "; %s not run (%.60s)", at, q.why);
			al_proof_clear(&q);
			continue;
		}
		proved++;
		snprintf(f->shapes_how + len, sizeof f->shapes_how - len, "; %s", at);
		if (!q.ok || worst_rel(&q) > worst_rel(&f->proof)) { /* the worst is the one reported */
			al_proof_clear(&f->proof);
			f->proof = q;
			snprintf(shown, sizeof shown, "%s", at);
			take_proof(f);
			if (!q.ok)
				break;
		} else {
			al_proof_clear(&q);
		}
	}
	size_t len = strlen(f->shapes_how);
	snprintf(f->shapes_how + len, sizeof f->shapes_how - len, ": %zu shape%s proved%s%s, the largest difference at %s",
		 proved, proved == 1 ? "" : "s", skipped ? ", the others above the work bound" : "",
		 failed ? ", some not run" : "", shown);
	return FX_OK;
}

/* The whole models on the same inputs (al_prove_equivalent). Returns an exit
 * code for I/O trouble only. */
static int prove_whole(struct fix *f, uint64_t seed, uint64_t max_bytes)
{
	/* the inputs the rewritten model takes: after --shape / --enumerate a shape
	 * the original accepts too (its range or enumeration holds it) */
	const struct al_submodel *s = al_model_get(f->out_m ? f->out_m : f->m, 0);
	struct al_named_tensor *in = calloc(s->n_inputs + 1, sizeof *in);
	if (!in)
		return FX_IO;
	size_t n_in = 0;
	int rc = make_inputs(f, s, in, &n_in, seed, max_bytes);
	f->proof_kind = "whole";
	if (rc == FX_OK) {
		struct al_proof_opts o = {.equiv = f->highest, .inputs = in, .n_inputs = n_in,
					  .seed = seed, .max_bytes = max_bytes,
					  .max_work = f->o->max_work, .threads = f->threads,
					  .tolerance = f->tolerance};
		al_diags *d = al_diags_new();
		enum al_status st = d ? al_prove_equivalent(f->m, f->out_m, &o, &f->proof, d) : AL_E_NOMEM;
		if (st == AL_OK) {
			take_proof(f);
			if (f->proved && f->proof_ok && !f->o->inputs)
				rc = prove_points(f, s, seed, max_bytes);
		} else if (st == AL_E_NOMEM) {
			rc = FX_IO;
		} else {
			fail_diags(f->err, f->in, d);
			rc = exit_of(st);
		}
		al_diags_free(d);
	}
	for (size_t i = 0; i < n_in; i++)
		al_tensor_free(in[i].t);
	free(in);
	return rc;
}

/* The rewritten region of both models (al_prove_region). *ran is false (with
 * f->proof_note saying why) when the region cannot be isolated or run: the
 * caller proves on the whole models instead. An exit code for I/O trouble only. */
static int prove_region(struct fix *f, uint64_t seed, uint64_t max_bytes, bool *ran, const char *then)
{
	*ran = false;
	size_t cap_a = 0, cap_b = 0, cap_o = 0;
	for (size_t i = 0; i < al_surgery_count(f->sg); i++) {
		const struct al_rewrite *r = al_surgery_get(f->sg, i);
		if (r->applied && !r->model_level)
			cap_a += 1 + (r->also_replaces != NULL), cap_b += r->n_layers, cap_o += r->node->n_outputs;
	}
	const char **outs = calloc(cap_o + 1, sizeof *outs);
	f->region_a = calloc(cap_a + 1, sizeof *f->region_a);
	f->region_b = calloc(cap_b + 1, sizeof *f->region_b);
	if (!outs || !f->region_a || !f->region_b) {
		free(outs);
		return FX_IO;
	}
	size_t n_o = 0;
	for (size_t i = 0; i < al_surgery_count(f->sg); i++) {
		const struct al_rewrite *r = al_surgery_get(f->sg, i);
		if (!r->applied || r->model_level) /* no layer: the whole models prove those */
			continue;
		f->region_a[f->n_region_a++] = r->node->name;
		if (r->also_replaces)
			f->region_a[f->n_region_a++] = r->also_replaces;
		for (uint32_t k = 0; k < r->n_layers; k++)
			f->region_b[f->n_region_b++] = r->layers[k];
		for (uint32_t k = 0; k < r->node->n_outputs; k++)
			outs[n_o++] = r->node->outputs[k];
	}
	struct al_region ra = {f->region_a, f->n_region_a, true, outs, n_o};
	struct al_region rb = {f->region_b, f->n_region_b, true, outs, n_o};
	struct al_proof_opts o = {.equiv = f->highest, .seed = seed, .max_bytes = max_bytes,
				  .max_work = f->o->max_work, .threads = f->threads, .tolerance = f->tolerance};
	al_diags *d = al_diags_new();
	enum al_status st = d ? al_prove_region(f->m, &ra, f->out_m, &rb, &o, &f->proof, d) : AL_E_NOMEM;
	al_diags_free(d);
	free(outs);
	if (st == AL_E_NOMEM)
		return FX_IO;
	if (st != AL_OK) {
		/* not isolable or not runnable on random values: the whole models prove it */
		char before[sizeof f->proof_note];
		snprintf(before, sizeof before, "%s", f->proof_note);
		snprintf(f->proof_note, sizeof f->proof_note,
			 "%.110s%sthe region proof could not run (%.150s)%s", before,
			 before[0] ? "; " : "", f->proof.why, then);
		al_proof_clear(&f->proof);
		return FX_OK;
	}
	*ran = true;
	f->proof_kind = "region";
	take_proof(f);
	size_t nva = f->proof.n_values;
	if (f->highest == AL_EQ_EXACT)
		snprintf(f->inputs_how, sizeof f->inputs_how,
			 "%zu region value%s, random (seeds %llu-%llu; run %d also +-0, +-1, +-0.5, "
			 "+-65504, +-2^-24)", nva, nva == 1 ? "" : "s", (unsigned long long)seed,
			 (unsigned long long)(seed + AL_PROOF_REGION_RUNS - 1), AL_PROOF_SPECIAL_RUN + 1);
	else
		snprintf(f->inputs_how, sizeof f->inputs_how, "%zu region value%s, random (seeds "
			 "%llu-%llu)", nva, nva == 1 ? "" : "s", (unsigned long long)seed,
			 (unsigned long long)(seed + AL_PROOF_REGION_RUNS - 1));
	return FX_OK;
}

static bool only_model_level(const struct fix *f)
{
	size_t n = 0;
	for (size_t i = 0; i < al_surgery_count(f->sg); i++) {
		const struct al_rewrite *r = al_surgery_get(f->sg, i);
		if (r->applied && !r->model_level)
			return false;
		n += r->applied;
	}
	return n > 0;
}

/* Every graph of a and b holds the same layers / ops, message bytes equal, in order. */
static bool same_graph(const struct al_graph *a, const struct al_graph *b, int depth)
{
	if (!a || !b || depth > 64 || a->n_nodes != b->n_nodes)
		return false;
	for (uint32_t k = 0; k < a->n_nodes; k++) {
		const struct al_node *x = &a->nodes[k], *y = &b->nodes[k];
		const struct al_node_src *sx = al_src(x), *sy = al_src(y);
		if (!sx || !sy || sx->msg.n != sy->msg.n || (sx->msg.n && memcmp(sx->msg.p, sy->msg.p, sx->msg.n)) ||
		    x->n_sub != y->n_sub)
			return false;
		for (uint32_t j = 0; j < x->n_sub; j++)
			if (!same_graph(x->sub[j], y->sub[j], depth + 1))
				return false;
	}
	return true;
}

static bool same_layers(const al_model *a, const al_model *b)
{
	if (!a || !b || al_model_count(a) != al_model_count(b))
		return false;
	for (size_t i = 0; i < al_model_count(a); i++) {
		const struct al_submodel *x = al_model_get(a, i), *y = al_model_get(b, i);
		if (x->n_graphs != y->n_graphs)
			return false;
		for (uint32_t g = 0; g < x->n_graphs; g++)
			if (!same_graph(x->graphs[g], y->graphs[g], 0))
				return false;
	}
	return true;
}

/* Prove the rewrites (--proof, docs/surgery.md "Proof"): fill f->diffs. Returns
 * an exit code for usage or I/O trouble only. */
static int prove(struct fix *f)
{
	uint64_t seed = f->o->seed, max_bytes = f->o->max_bytes;
	enum al_fix_proof_kind want = f->o->proof;
	f->proof_run = true;
	f->flops = model_flops(f->m);
	bool region;
	if (want == AL_FIX_PROOF_WHOLE) {
		region = false;
		snprintf(f->proof_note, sizeof f->proof_note, "--proof whole");
	} else if (want == AL_FIX_PROOF_REGION) {
		region = true;
		snprintf(f->proof_note, sizeof f->proof_note, "--proof region");
	} else if (f->o->inputs) {
		region = false;
		snprintf(f->proof_note, sizeof f->proof_note,
			 "--inputs: the given values run through the whole models");
	} else {
		region = f->flops > WHOLE_MAX_FLOPS;
		snprintf(f->proof_note, sizeof f->proof_note, "the model's estimated work, %.3g GFLOP, is %s %.3g",
			 f->flops / 1e9, region ? "above" : "at most", WHOLE_MAX_FLOPS / 1e9);
	}
	/* auto, a model above the bound, and only the description changed (--shape,
	 * --enumerate): every layer / op is the input's, byte for byte, so nothing
	 * needs running (a region proof has no layer to run; the whole models would
	 * take minutes on a model of hundreds of GFLOP) */
	if (region && want == AL_FIX_PROOF_AUTO && only_model_level(f) && same_layers(f->m, f->out_m)) {
		f->proof_kind = "structural";
		f->proved = f->proof_ok = true;
		f->proof_runs = 0;
		size_t len = strlen(f->proof_note);
		snprintf(f->proof_note + len, sizeof f->proof_note - len, "; only the model description changed: "
			 "every layer / op is byte-identical to the input's");
		f->proof_why[0] = '\0';
		return FX_OK;
	}
	if (region) {
		bool ran;
		int rc = prove_region(f, seed, max_bytes, &ran, ": the whole models ran instead");
		if (rc != FX_OK || ran)
			return rc;
	}
	int rc = prove_whole(f, seed, max_bytes);
	/* auto: when the interpreter cannot run the whole models (a custom layer
	 * elsewhere, random values that are not valid indices) the region proof
	 * still proves what was rewritten; given inputs belong to the whole models */
	if (rc != FX_OK || f->proved || region || want != AL_FIX_PROOF_AUTO || f->o->inputs)
		return rc;
	char whole_why[sizeof f->proof_why];
	snprintf(whole_why, sizeof whole_why, "%s", f->proof_why);
	al_proof_clear(&f->proof);
	f->diffs = NULL;
	f->n_diffs = 0;
	bool ran;
	snprintf(f->proof_note, sizeof f->proof_note,
		 "the whole models could not run (%.150s)", whole_why);
	rc = prove_region(f, seed, max_bytes, &ran, "");
	if (rc == FX_OK && ran) {
		size_t len = strlen(f->proof_note);
		snprintf(f->proof_note + len, sizeof f->proof_note - len, ": the region proof ran instead");
	}
	if (rc != FX_OK || ran)
		return rc;
	/* neither runs. When every rewrite is model-level (--shape / --enumerate) and
	 * every layer / op message of the output is the input's, byte for byte, the
	 * model computes what it did on the shapes kept: proved by construction */
	if (only_model_level(f) && same_layers(f->m, f->out_m)) {
		f->proof_kind = "structural";
		f->proved = f->proof_ok = true;
		f->proof_runs = 0;
		snprintf(f->proof_note, sizeof f->proof_note,
			 "the whole models could not run (%.120s); only the model description changed: "
			 "every layer / op is byte-identical to the input's", whole_why);
		f->proof_why[0] = '\0';
		return FX_OK;
	}
	/* report the whole models' reason, as before */
	f->proof_kind = "whole";
	f->proved = f->proof_ok = false;
	snprintf(f->proof_why, sizeof f->proof_why, "%s", whole_why);
	return FX_OK;
}

/* ---------------------------------------------------------------- report */

/* The rounds of one fix: round k + 1 rewrites round k's output (docs/surgery.md
 * "Rounds"). mil-fp16-compute rewrites a whole program, so the per-op passes
 * wait for the next round (their edits would overlap); a run ends at the fixed
 * point, where a plan of the last output applies nothing, or at --max-rounds. */
struct rounds {
	struct fix *r;       /* r[0 .. n): the rounds that applied (r[0] also when none did) */
	int n, cap, max;     /* cap: entries of r allocated (max + 1) */
	bool fixed_point;    /* the last output was planned again and nothing applies */
	size_t pending;      /* stopped at --max-rounds: the rewrites that would apply to the output */
	struct al_atomic scratch; /* a directory for the outputs the later rounds read */
};

static size_t total_applied(const struct rounds *rs)
{
	size_t n = 0;
	for (int k = 0; k < rs->n; k++)
		n += rs->r[k].sg ? al_surgery_applied(rs->r[k].sg) : 0;
	return n;
}

/* The round the top-level "proof" shows: one refused, else the one with the
 * largest relative difference (the first of equals). */
static const struct fix *shown_round(const struct rounds *rs)
{
	const struct fix *w = &rs->r[0];
	for (int k = 0; k < rs->n; k++) {
		const struct fix *f = &rs->r[k];
		if (f->proof_run && (!f->proved || !f->proof_ok))
			return f;
		if (f->proof_run && (!w->proof_run || worst_rel(&f->proof) > worst_rel(&w->proof)))
			w = f;
	}
	return w;
}

/* Why one output of a proof was refused, beyond its figures ("" when it passed). */
static const char *refused_why(enum al_equiv highest, double tolerance, const struct al_proof_diff *df, char *buf,
			       size_t cap)
{
	buf[0] = '\0';
	if (df->pass)
		return buf;
	if (df->collapsed)
		snprintf(buf, cap, " (every value is 0 where the original's are not: it collapsed, e.g. under "
			 "fp16's range)");
	else if (df->overflowed)
		snprintf(buf, cap, " (an infinity or NaN where the original has none: it overflowed)");
	else if (highest == AL_EQ_APPROXIMATE)
		snprintf(buf, cap, " (beyond the tolerance %g)", tolerance > 0 ? tolerance : AL_PROOF_APPROX_TOL);
	return buf;
}

const char *al_fix_diff_why(const struct al_fix_round *g, const struct al_proof_diff *df, char *buf, size_t cap)
{
	return refused_why(g->highest, g->tolerance, df, buf, cap);
}

/* ---------------------------------------------------------------- result */

/* The result's view of round f: its rewrites (the layer each left, why) and
 * proof, pointing into f (which the result keeps). An exit code. */
static int publish_round(struct fix *f, struct al_fix_round *pr)
{
	size_t n = f->sg ? al_surgery_count(f->sg) : 0;
	free(f->pub);
	f->pub = calloc(n + 1, sizeof *f->pub);
	if (!f->pub)
		return FX_IO;
	f->n_pub = n;
	for (size_t i = 0; i < n; i++) {
		const struct al_rewrite *r = al_surgery_get(f->sg, i);
		const char *why = r->applied ? NULL : dropped_why(f, r->node->name);
		f->pub[i] = (struct al_fix_rewrite){
			.layer = r->node->name, .type = r->node->type, .pass = r->pass->name, .rule = r->pass->rule,
			.equiv = r->pass->equiv, .applied = r->applied, .after = r->applied ? r->after : NULL,
			.why_not = r->applied ? NULL : why ? why : r->why_not, .dropped = why != NULL,
			.on_ane = r->node->verdict.ane, .round = f->round};
	}
	const struct summary *ss[2] = {&f->before, &f->after};
	struct al_fix_summary *ps[2] = {&pr->before, &pr->after};
	for (int k = 0; k < 2; k++)
		*ps[k] = (struct al_fix_summary){ss[k]->nodes, ss[k]->ane, ss[k]->fallbacks, ss[k]->segments,
						 ss[k]->switches};
	pr->round = f->round;
	pr->applied = f->sg ? al_surgery_applied(f->sg) : 0;
	pr->rewrites = f->pub;
	pr->n_rewrites = n;
	pr->highest = f->highest;
	pr->tolerance = f->tolerance;
	pr->approximate_refused = f->approx_refused;
	pr->proof = (struct al_fix_round_proof){
		.run = f->proof_run, .proved = f->proved, .ok = f->proof_ok,
		.kind = f->proof_kind ? f->proof_kind : "whole", .runs = f->proof_runs, .flops = f->flops,
		.inputs = f->inputs_how, .note = f->proof_note, .shapes = f->shapes_how, .why = f->proof_why,
		.region_in = f->region_a, .region_out = f->region_b, .n_region_in = f->n_region_a,
		.n_region_out = f->n_region_b, .diffs = f->diffs, .n_diffs = f->n_diffs};
	return FX_OK;
}

/* What al_fix_result.state holds: the rounds and the result's array of them. */
struct fix_state {
	struct rounds rs;
	struct al_fix_round *pub;
};

static void put_summary_json(FILE *o, const struct al_fix_summary *s)
{
	fprintf(o, "{\"layers\": %u, \"ane\": %u, \"fallbacks\": %u, \"segments\": %u, \"switches\": %u}", s->layers,
		s->ane, s->fallbacks, s->segments, s->switches);
}

static void put_proof_json(FILE *o, const struct al_fix_round *g)
{
	const struct al_fix_round_proof *p = &g->proof;
	if (!p->run) {
		fprintf(o, "null");
		return;
	}
	fprintf(o, "{\"kind\": \"%s\", \"proved\": %s, \"pass\": %s, \"runs\": %d, \"flops\": %.6g, \"inputs\": ",
		p->kind, p->proved ? "true" : "false", p->ok ? "true" : "false", p->runs, p->flops);
	al_json_put_string(o, p->inputs);
	fprintf(o, ", \"why\": ");
	al_json_put_string(o, p->note);
	fprintf(o, ", \"shapes\": ");
	if (p->shapes[0])
		al_json_put_string(o, p->shapes);
	else
		fprintf(o, "null");
	fprintf(o, ", \"region\": ");
	if (strcmp(p->kind, "region") == 0) {
		const char *const *ls[2] = {p->region_in, p->region_out};
		size_t ns[2] = {p->n_region_in, p->n_region_out};
		for (int k = 0; k < 2; k++) {
			fprintf(o, "%s", k ? "], \"output_layers\": [" : "{\"input_layers\": [");
			for (size_t i = 0; i < ns[k]; i++) {
				fprintf(o, "%s", i ? ", " : "");
				al_json_put_string(o, ls[k][i]);
			}
		}
		fprintf(o, "]}");
	} else {
		fprintf(o, "null");
	}
	fprintf(o, ", \"note\": ");
	al_json_put_string(o, p->why);
	fprintf(o, ", \"outputs\": [");
	for (size_t i = 0; i < p->n_diffs; i++) {
		const struct al_proof_diff *df = &p->diffs[i];
		fprintf(o, "%s\n    {\"name\": ", i ? "," : "");
		al_json_put_string(o, df->name);
		fprintf(o, ", \"identical\": %s, \"max_abs\": %.9g, \"max_ref\": %.9g, \"rel\": %.9g, "
			"\"pass\": %s, \"collapsed\": %s, \"overflowed\": %s}",
			df->identical ? "true" : "false", isfinite(df->max_abs) ? df->max_abs : -1, df->ref_max,
			isfinite(df->rel) ? df->rel : -1, df->pass ? "true" : "false", df->collapsed ? "true" : "false",
			df->overflowed ? "true" : "false");
	}
	fprintf(o, "], \"round\": %d}", g->round);
}

void al_fix_write_json(FILE *o, const struct al_fix_result *res)
{
	if (!res->decided || !res->n_rounds)
		return;
	const struct al_fix_round *first = &res->rounds[0], *last = &res->rounds[res->n_rounds - 1];
	fprintf(o, "{\n  \"anelint\": \"%s\",\n  \"schema\": %d,\n  \"command\": \"fix\",\n  \"input\": ",
		ANELINT_VERSION, ANELINT_JSON_SCHEMA_VERSION);
	al_json_put_string(o, res->input);
	fprintf(o, ",\n  \"output\": ");
	if (res->output)
		al_json_put_string(o, res->output);
	else
		fprintf(o, "null");
	fprintf(o, ",\n  \"allow\": \"%s\",\n  \"tolerance\": %.9g,\n  \"rewrites\": [", al_equiv_name(res->allow),
		res->tolerance > 0 ? res->tolerance : AL_PROOF_APPROX_TOL);
	bool at_first = true;
	for (int k = 0; k < res->n_rounds; k++) {
		const struct al_fix_round *g = &res->rounds[k];
		for (size_t i = 0; i < g->n_rewrites; i++, at_first = false) {
			const struct al_fix_rewrite *r = &g->rewrites[i];
			fprintf(o, "%s\n    {\"layer\": ", at_first ? "" : ",");
			al_json_put_string(o, r->layer);
			fprintf(o, ", \"type\": ");
			al_json_put_string(o, r->type);
			fprintf(o, ", \"pass\": \"%s\", \"rule\": \"%s\", \"class\": \"%s\", \"applied\": %s, ", r->pass,
				r->rule, al_equiv_name(r->equiv), r->applied ? "true" : "false");
			fprintf(o, r->applied ? "\"after\": " : "\"why_not\": ");
			al_json_put_string(o, r->applied ? r->after : r->why_not);
			fprintf(o, ", \"round\": %d}", r->round);
		}
	}
	fprintf(o, "\n  ],\n  \"before\": ");
	put_summary_json(o, &first->before);
	fprintf(o, ",\n  \"after\": ");
	put_summary_json(o, &last->after);
	fprintf(o, ",\n  \"proof\": ");
	put_proof_json(o, &res->rounds[res->shown]);
	fprintf(o, ",\n  \"rounds\": [");
	for (int k = 0; k < res->n_rounds; k++) {
		const struct al_fix_round *g = &res->rounds[k];
		fprintf(o, "%s\n    {\"round\": %d, \"applied\": %zu, \"check_before\": ", k ? "," : "", g->round,
			g->applied);
		put_summary_json(o, &g->before);
		fprintf(o, ", \"check_after\": ");
		put_summary_json(o, &g->after);
		fprintf(o, ", \"proof\": ");
		put_proof_json(o, g);
		fprintf(o, ", \"approximate_refused\": ");
		if (g->approximate_refused[0])
			al_json_put_string(o, g->approximate_refused);
		else
			fprintf(o, "null");
		fprintf(o, "}");
	}
	fprintf(o, "\n  ],\n  \"max_rounds\": %d,\n  \"fixed_point\": %s,\n  \"pending\": %zu", res->max_rounds,
		res->fixed_point ? "true" : "false", res->pending);
	fprintf(o, ",\n  \"refused\": %s,\n  \"written\": %s\n}\n", res->refused ? "true" : "false",
		res->written ? "true" : "false");
}

void al_fix_result_free(struct al_fix_result *res)
{
	if (!res)
		return;
	struct fix_state *s = res->state;
	if (s) {
		for (int k = s->rs.cap; k-- > 0;) /* later rounds read the files of earlier ones */
			fix_free(&s->rs.r[k]);
		free(s->rs.r);
		ali_atomic_abort(&s->rs.scratch);
		free(s->pub);
		free(s);
	}
	res->state = NULL;
	res->rounds = NULL;
	res->n_rounds = 0;
}

/* Open the input of round k + 1 (rs->r[k]): round k's output, from a file as
 * a second `fix` would read it (a program held in memory has no weight.bin to
 * add constants to, so a plan of it is not a plan of the file). A .mlmodel
 * with -o is already one (written next to OUT, or in the scratch directory); a
 * package or a --dry-run output is written there first. An exit code. */
static int next_round(struct rounds *rs, int k, const char *out)
{
	struct fix *p = &rs->r[k - 1], *f = &rs->r[k];
	f->o = p->o;
	f->err = p->err;
	f->threads = p->threads;
	f->in = p->in;
	f->chk = p->chk;
	f->asked = p->asked;
	f->allow = p->allow; /* a round whose approximate rewrites were refused ends them: they would be again */
	f->tolerance = p->tolerance;
	f->round = k + 1;
	if (!(f->d = al_diags_new()))
		return FX_IO;
	if (!rs->scratch.tmp) {
		/* next to OUT (the same file system: the last output is renamed
		 * there), or for --dry-run in the temporary directory */
		char base[4096];
		const char *tmpdir = getenv("TMPDIR");
		/* resolved: next to '.' (a package fixed --in-place from inside
		 * itself) is beside the package, not in it */
		char *abs = out && !f->o->dry_run ? realpath(out, NULL) : NULL;
		if (out && !f->o->dry_run)
			snprintf(base, sizeof base, "%s", abs ? abs : out);
		else
			snprintf(base, sizeof base, "%s/anelint-fix", tmpdir && *tmpdir ? tmpdir : "/tmp");
		free(abs);
		enum al_status st = ali_atomic_begin(&rs->scratch, base, true, f->d);
		if (st != AL_OK) {
			fail_diags(f->err, base, f->d);
			return exit_of(st);
		}
	}
	bool file = rs->r[0].tmp != NULL; /* a .mlmodel with -o: each round's output is a file */
	const char *ext = al_model_is_package(p->m) ? "mlpackage" : "mlmodel";
	size_t n = strlen(rs->scratch.tmp) + 32;
	char *in = malloc(n);
	if (!in)
		return FX_IO;
	snprintf(in, n, "%s/round%d.%s", rs->scratch.tmp, k, ext);
	enum al_status st = AL_OK;
	if (file) {
		free(in);
		in = NULL;
		if (!(f->tmp_own = malloc(n)))
			return FX_IO;
		snprintf(f->tmp_own, n, "%s/round%d.%s", rs->scratch.tmp, k + 1, ext);
		f->tmp = f->tmp_own;
		st = al_model_open(p->tmp, &f->m, f->d);
	} else if ((st = al_surgery_write(p->sg, in, f->d)) == AL_OK) {
		st = al_model_open(in, &f->m, f->d);
	}
	free(in);
	if (st == AL_OK && f->o->function)
		st = al_model_select_function(f->m, f->o->function, f->d);
	if (st != AL_OK) {
		fail_msg(f->err, f->in, "round %d: the output of round %d does not open again", k + 1, k);
		fail_diags(f->err, f->in, f->d);
		return exit_of(st);
	}
	summarize_model(f->m, &f->chk, &f->before); /* checked, as a second fix checks its input */
	f->after = f->before;
	return FX_OK;
}

/* Plan, drop what still falls back, build and check (step 2). An exit code. */
static int settle(struct fix *f)
{
	bool again = true;
	for (int settle = 0; settle < MAX_SETTLE && again; settle++) {
		int rc = round_once(f, &again);
		if (rc != FX_OK)
			return rc;
	}
	if (again) { /* still dropping after the last plan: keep nothing */
		fail_msg(f->err, f->in, "the rewrites did not settle; nothing written");
		return FX_REFUSED;
	}
	return FX_OK;
}

static int run_round(struct fix *f, bool *refused);

/* After the proof refused an approximate rewrite (beyond --tolerance, collapsed,
 * overflowed): whether a plan without the approximate passes still rewrites
 * something, so that the round is worth running again without them. */
static bool exact_rest_applies(const struct fix *f)
{
	if (f->allow != AL_EQ_APPROXIMATE)
		return false;
	struct al_surgery_opts o = {.allow = AL_EQ_REASSOCIATE, .skip = f->skip, .n_skip = f->n_drop,
				    .shapes = f->shapes, .n_shapes = f->n_shapes};
	al_diags *d = al_diags_new();
	al_surgery *sg = NULL;
	bool any = d && al_surgery_plan(f->m, &o, &sg, d) == AL_OK && al_surgery_applied(sg) > 0;
	al_surgery_free(sg);
	al_diags_free(d);
	return any;
}

/* The round again without its approximate rewrites, the refusal kept for the
 * report: a refused nn-io-fp16 no longer costs the exact rewrites beside it. */
static int retry_without_approximate(struct fix *f, bool *refused)
{
	const struct al_proof_diff *bad = NULL;
	for (size_t i = 0; i < f->n_diffs && !bad; i++)
		if (!f->diffs[i].pass)
			bad = &f->diffs[i];
	char why[128] = "";
	if (bad)
		snprintf(f->approx_refused, sizeof f->approx_refused, "%.60s: rel %.3g%s", bad->name, bad->rel,
			 refused_why(f->highest, f->tolerance, bad, why, sizeof why));
	else
		snprintf(f->approx_refused, sizeof f->approx_refused, "%.200s", f->proof_why);
	f->allow = AL_EQ_REASSOCIATE;
	al_proof_clear(&f->proof);
	f->diffs = NULL;
	f->n_diffs = 0;
	f->proved = f->proof_ok = f->proof_run = false;
	f->proof_why[0] = f->proof_note[0] = f->shapes_how[0] = f->inputs_how[0] = '\0';
	f->proof_kind = NULL;
	return run_round(f, refused); /* once: allow is no longer approximate */
}

/* One round: settle, then prove (steps 2-3). *refused when the proof does not
 * pass. An exit code. */
static int run_round(struct fix *f, bool *refused)
{
	*refused = false;
	int rc0 = settle(f);
	if (rc0 != FX_OK || !al_surgery_applied(f->sg))
		return rc0;
	if (!al_surgery_applied(f->sg))
		return FX_OK;
	f->highest = AL_EQ_EXACT;
	for (size_t i = 0; i < al_surgery_count(f->sg); i++) {
		const struct al_rewrite *r = al_surgery_get(f->sg, i);
		if (r->applied && r->pass->equiv > f->highest)
			f->highest = r->pass->equiv;
	}
	summarize_model(f->out_m, &f->chk, &f->after);
	int rc = prove(f);
	*refused = rc == FX_OK && (!f->proved || !f->proof_ok);
	if (*refused && f->proved && f->highest == AL_EQ_APPROXIMATE && exact_rest_applies(f))
		return retry_without_approximate(f, refused);
	return rc;
}

/* ---------------------------------------------------------------- al_model_fix */

/* The caller's --shape / --enumerate name inputs of the model: else why not in
 * res->usage (exit 2). */
static bool shapes_known(const struct fix *f, struct al_fix_result *res)
{
	const struct al_submodel *sub = al_model_get(f->m, 0);
	for (size_t i = 0; i < f->n_shapes; i++) {
		const char *name = f->shapes[i].input;
		bool known = false;
		for (uint32_t k = 0; name && sub && k < sub->n_inputs; k++)
			known |= sub->inputs[k].name && strcmp(sub->inputs[k].name, name) == 0;
		if (!known) {
			snprintf(res->usage, sizeof res->usage, "%s: the model has no input '%s'",
				 f->shapes[i].n_shapes ? "--enumerate" : "--shape",
				 name ? name : "");
			return false;
		}
	}
	return true;
}

/* The first round's state: the options, the caller's skips (dropped without a why). */
static int first_round(struct fix *f, const struct al_fix_opts *o, al_diags *d)
{
	*f = (struct fix){.o = o, .err = d, .in = o->input, .allow = o->allow, .asked = o->allow,
			  .tolerance = o->tolerance, .threads = o->threads, .chk = o->check, .round = 1,
			  .shapes = o->shapes, .n_shapes = o->n_shapes};
	if (!(f->d = al_diags_new()))
		return FX_IO;
	if (o->n_skip) {
		f->drop = calloc(o->n_skip, sizeof *f->drop);
		f->skip = calloc(o->n_skip, sizeof *f->skip);
		if (!f->drop || !f->skip)
			return FX_IO;
		for (size_t i = 0; i < o->n_skip; i++) {
			if (!o->skip[i] || !(f->drop[i].name = fx_dup(o->skip[i])))
				return FX_IO;
			f->skip[i] = f->drop[i].name;
			f->n_drop++;
		}
	}
	return FX_OK;
}

/* The rounds (steps 1-4), then the output written or not (step 5). An exit
 * code; res->decided when the rounds reached a decision. */
static int fix_run(struct fix_state *s, const struct al_fix_opts *o, struct al_fix_result *res, al_diags *d)
{
	struct rounds *rs = &s->rs;
	const char *out = o->output;
	if (out) { /* the output guard: never over (or into) the input, unless that is the request */
		al_diags *g = al_diags_new();
		enum al_status st = g ? al_output_check(out, &o->input, 1, o->in_place ? AL_OUTPUT_MAY_REPLACE_INPUT : 0, g)
				      : AL_E_NOMEM;
		if (st != AL_OK) {
			fail_diags(d, out, g);
			al_diags_free(g);
			return st == AL_E_INVALID_ARG ? FX_USAGE : exit_of(st);
		}
		al_diags_free(g);
	}
	rs->cap = rs->max + 1; /* the round after the last that applies may apply nothing */
	if (!(rs->r = calloc((size_t)rs->cap, sizeof *rs->r)))
		return FX_IO;
	struct fix *f0 = &rs->r[0];
	int rc = first_round(f0, o, d);
	if (rc != FX_OK)
		return rc;
	enum al_status st = al_model_open(f0->in, &f0->m, f0->d);
	if (st != AL_OK) {
		fail_diags(d, f0->in, f0->d);
		return exit_of(st);
	}
	/* --function: only that function's ops are rewritten (the surgery splices
	 * the file, so the other functions' bytes are written as they were) */
	if (o->function && (st = al_model_select_function(f0->m, o->function, f0->d)) != AL_OK) {
		fail_diags(d, f0->in, f0->d);
		return FX_USAGE;
	}
	if (!shapes_known(f0, res))
		return FX_USAGE;
	summarize_model(f0->m, &f0->chk, &f0->before);
	f0->after = f0->before;
	if (out && !o->dry_run && !al_model_is_package(f0->m)) {
		/* the .mlmodel is written once, next to OUT, and proved from there */
		if ((st = ali_atomic_begin(&f0->out_file, out, false, f0->d)) != AL_OK) {
			fail_diags(d, out, f0->d);
			return exit_of(st);
		}
		close(f0->out_file.fd); /* al_surgery_write replaces the file, atomically too */
		f0->out_file.fd = -1;
		f0->tmp = f0->out_file.tmp;
	}
	/* the rounds: each on the previous one's output, until a plan of the last
	 * output applies nothing (the fixed point) or --max-rounds */
	bool refused = false;
	for (int k = 0;; k++) {
		if (k && (rc = next_round(rs, k, out)) != FX_OK)
			return rc;
		rs->n = k + 1;
		if ((rc = run_round(&rs->r[k], &refused)) != FX_OK)
			return rc;
		if (!al_surgery_applied(rs->r[k].sg)) {
			rs->fixed_point = true;
			if (k) /* a round that applied nothing (all dropped): the one before is the last */
				rs->n = k;
			break;
		}
		if (refused)
			break;
		if (k + 1 >= rs->max) { /* the bound: what a next round would apply */
			if ((rc = next_round(rs, k + 1, out)) != FX_OK)
				return rc;
			/* planned and built as a round would, not proved */
			if (settle(&rs->r[k + 1]) == FX_OK)
				rs->pending = al_surgery_applied(rs->r[k + 1].sg);
			rs->fixed_point = !rs->pending;
			break;
		}
	}
	struct fix *last = &rs->r[rs->n - 1];
	size_t applied = total_applied(rs);
	bool written = false;
	if (!refused && out && !o->dry_run && f0->tmp && !applied) {
		ali_atomic_abort(&f0->out_file); /* nothing rewritten: the input's bytes, written below */
		f0->tmp = NULL;
	}
	if (!refused && out && !o->dry_run && f0->tmp) {
		/* the last round's file (a later round's is in the scratch directory)
		 * takes the place of the temporary next to OUT */
		if (last != f0 && rename(last->tmp, f0->out_file.tmp) != 0) {
			fail_msg(d, out, "cannot move the last round's output next to it: %s", strerror(errno));
			return FX_IO;
		}
		f0->tmp = NULL;
		if ((st = ali_atomic_commit(&f0->out_file, f0->d)) != AL_OK) {
			fail_diags(d, out, f0->d);
			return FX_IO;
		}
		written = true;
	} else if (!refused && out && !o->dry_run) {
		if ((st = al_surgery_write(last->sg, out, last->d)) != AL_OK) {
			fail_diags(d, out, last->d);
			/* a destination the library refuses (a package over a file or
			 * into itself, a .mlmodel name for a package) is a usage error */
			return st == AL_E_INVALID_ARG ? FX_USAGE : exit_of(st);
		}
		written = true;
	}
	if (!(s->pub = calloc((size_t)rs->n, sizeof *s->pub)))
		return FX_IO;
	const struct fix *shown = shown_round(rs);
	for (int k = 0; k < rs->n; k++) {
		if ((rc = publish_round(&rs->r[k], &s->pub[k])) != FX_OK)
			return rc;
		if (&rs->r[k] == shown)
			res->shown = k;
	}
	res->rounds = s->pub;
	res->n_rounds = rs->n;
	res->max_rounds = rs->max;
	res->fixed_point = rs->fixed_point;
	res->pending = rs->pending;
	res->applied = applied;
	res->refused = refused;
	res->written = written;
	res->decided = true;
	return refused ? FX_REFUSED : FX_OK;
}

enum al_status al_model_fix(const struct al_fix_opts *o, struct al_fix_result *res, al_diags *d)
{
	if (!res)
		return AL_E_INVALID_ARG;
	memset(res, 0, sizeof *res);
	if (!o || !o->input || !d || (!o->output && !o->dry_run) || o->max_rounds < 0 ||
	    o->max_rounds > MAX_MAX_ROUNDS || !(o->tolerance >= 0) || (o->proof == AL_FIX_PROOF_REGION && o->inputs)) {
		if (d)
			ali_diag_add(d, AL_SEV_ERROR, o && o->input ? o->input : NULL, UINT64_MAX, NULL, NULL,
				     "al_model_fix: invalid options (an output or a dry run, max_rounds 0-64, a tolerance "
				     "of 0 or more, no inputs with a region proof)");
		res->exit_code = FX_USAGE;
		return AL_E_INVALID_ARG;
	}
	res->input = o->input;
	res->output = o->output;
	res->allow = o->allow;
	res->tolerance = o->tolerance;
	res->dry_run = o->dry_run;
	struct fix_state *s = calloc(1, sizeof *s);
	if (!s) {
		res->exit_code = FX_IO;
		return AL_E_NOMEM;
	}
	res->state = s;
	s->rs.max = o->max_rounds ? o->max_rounds : DEFAULT_MAX_ROUNDS;
	res->exit_code = fix_run(s, o, res, d);
	return AL_OK;
}

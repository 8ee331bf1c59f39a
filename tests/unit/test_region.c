/* SPDX-License-Identifier: MIT */
/* test_region.c: running part of a model (al_region_inputs, al_model_run_region,
 * al_random_tensor), the region proof of `anelint fix` (docs/surgery.md "Proof").
 * Hand-made NeuralNetwork and ML Program models: a region's inputs are the values
 * it reads and does not produce (constants run with it when asked); only its
 * layers run; its outputs are the values its layers left; two models that
 * compute the same region give bit-identical outputs and two that do not (a
 * deliberately broken rewrite) differ; regions the executors cannot isolate
 * (nested graphs, redefined names) and wrong inputs are clean errors; every
 * allocation of a region run fails once (NeuralNetwork and ML Program). */
#include "testutil.h"
#include "pbwrite.h"

#include "analysis.h" /* ali_alloc_fail_after */

#include <math.h>

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define F(...) ((const float[]){__VA_ARGS__})
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ================================================================ NeuralNetwork builders */

static struct buf array_feature(const char *name, const int64_t *shape, int rank)
{
	struct buf f = {0}, ft = {0}, at = {0};
	put_str(&f, 1, name);
	if (rank)
		put_packed(&at, 1, shape, (size_t)rank);
	put_uint(&at, 2, 65568); /* FLOAT32 */
	put_msg(&ft, 5, &at);
	put_msg(&f, 3, &ft);
	return f;
}


/* loadConstantND [n] of the values v. */
static void constant(struct buf *net, const char *name, const float *v, size_t n)
{
	struct buf p = {0}, w = {0};
	put_packed(&p, 1, (int64_t[]){(int64_t)n}, 1);
	put_bytes(&w, 1, v, n * sizeof *v);
	put_msg(&p, 2, &w);
	layer(net, name, "", name, 1070, &p);
}

/* activation linear alpha * x + beta. */
static void linear(struct buf *net, const char *name, const char *in, const char *out, float alpha,
		   float beta)
{
	struct buf p = {0}, lin = {0};
	put_tag(&lin, 1, PB_FIXED32);
	put_raw(&lin, &alpha, 4);
	put_tag(&lin, 2, PB_FIXED32);
	put_raw(&lin, &beta, 4);
	put_msg(&p, 5, &lin);
	layer(net, name, in, out, 130, &p);
}

static void relu(struct buf *net, const char *name, const char *in, const char *out)
{
	struct buf p = {0}, r = {0};
	put_msg(&p, 10, &r);
	if (!p.n)
		put_bytes(&p, 10, "", 0);
	layer(net, name, in, out, 130, &p);
}

/* Model{spec 5, input x [3], output y, neuralNetwork (EXACT array mapping)}. */
static struct buf nn_model(struct buf *net)
{
	struct buf m = {0}, desc = {0};
	struct buf in = array_feature("x", D(3), 1), out = array_feature("y", NULL, 0);
	put_msg(&desc, 1, &in);
	put_msg(&desc, 10, &out);
	put_uint(net, 5, 1);
	put_uint(&m, 1, 5);
	put_msg(&m, 2, &desc);
	put_msg(&m, 500, net);
	return m;
}

/* ================================================================ ML Program builders */


/* Operation{type, outputs (declared [3] fp32), inputs "p=a q=b"}. */
static void op(struct buf *blk, const char *type, const char *outname, const char *ins)
{
	struct buf o = {0};
	char tmp[256];
	put_str(&o, 1, type);
	struct buf t = vtype(AL_DT_FP32, 1, D(3)), nv = named(outname, &t);
	put_msg(&o, 3, &nv);
	for (const char *s = ins; s && *s;) {
		size_t k = strcspn(s, " ");
		memcpy(tmp, s, k);
		tmp[k] = '\0';
		s += k + (s[k] == ' ');
		char *eq = strchr(tmp, '=');
		assert_non_null(eq);
		*eq = '\0';
		struct buf e = {0}, arg = {0}, b = {0};
		put_str(&b, 1, eq + 1);
		put_msg(&arg, 1, &b);
		put_str(&e, 1, tmp);
		put_msg(&e, 2, &arg);
		put_msg(&o, 2, &e);
	}
	put_msg(blk, 3, &o);
}

/* const `name` [3] fp32. */
static void cf3(struct buf *blk, const char *name, const float *f)
{
	struct buf o = {0}, attr = {0}, v = {0}, iv = {0}, tv = {0}, rep = {0};
	struct buf t = vtype(AL_DT_FP32, 1, D(3));
	put_str(&o, 1, "const");
	struct buf ot = vtype(AL_DT_FP32, 1, D(3)), nv = named(name, &ot);
	put_msg(&o, 3, &nv);
	put_msg(&v, 2, &t);
	put_bytes(&rep, 1, f, 3 * sizeof *f);
	put_msg(&tv, 1, &rep);
	put_msg(&iv, 1, &tv);
	put_msg(&v, 3, &iv);
	put_str(&attr, 1, "val");
	put_msg(&attr, 2, &v);
	put_msg(&o, 5, &attr);
	put_msg(blk, 3, &o);
}

/* Model{spec 6, mlProgram main(x [3]) -> y, with the ops in blk (freed)}. */
static struct buf mil_model(struct buf *blk_ops)
{
	struct buf prog = {0}, fe = {0}, fn = {0}, be = {0}, blk = {0}, m = {0}, desc = {0};
	struct buf t = vtype(AL_DT_FP32, 1, D(3)), nv = named("x", &t);
	put_msg(&fn, 1, &nv);
	struct buf in = array_feature("x", D(3), 1), out = array_feature("y", NULL, 0);
	put_msg(&desc, 1, &in);
	put_msg(&desc, 10, &out);
	put_str(&blk, 2, "y");
	put_raw(&blk, blk_ops->p, blk_ops->n);
	free(blk_ops->p);
	*blk_ops = (struct buf){0};
	put_str(&fn, 2, "CoreML5");
	put_str(&be, 1, "CoreML5");
	put_msg(&be, 2, &blk);
	put_msg(&fn, 3, &be);
	put_uint(&prog, 1, 1);
	put_str(&fe, 1, "main");
	put_msg(&fe, 2, &fn);
	put_msg(&prog, 2, &fe);
	put_uint(&m, 1, 6);
	put_msg(&m, 2, &desc);
	put_msg(&m, 502, &prog);
	return m;
}

/* ================================================================ helpers */

struct mdl {
	struct buf bytes;
	al_model *m;
	al_diags *d;
};

static void print_diags(const al_diags *d)
{
	for (size_t i = 0; i < al_diags_count(d); i++)
		print_message("  diag: %s\n", al_diags_get(d, i)->msg);
}

static struct mdl open_model(struct buf b)
{
	struct mdl r = {b, NULL, al_diags_new()};
	assert_non_null(r.d);
	enum al_status st = al_model_open_buffer(r.bytes.p, r.bytes.n, NULL, 0, "mem.mlmodel", &r.m, r.d);
	if (st != AL_OK) {
		print_diags(r.d);
		fail_msg("model did not load: %s", al_status_str(st));
	}
	return r;
}

static void close_model(struct mdl *r)
{
	al_model_free(r->m);
	al_diags_free(r->d);
	free(r->bytes.p);
}

static bool diag_has(const al_diags *d, const char *needle)
{
	for (size_t i = 0; i < al_diags_count(d); i++)
		if (strstr(al_diags_get(d, i)->msg, needle))
			return true;
	return false;
}

static al_tensor *tensor(int rank, const int64_t *dims, const float *v)
{
	al_tensor *t = al_tensor_new(AL_DT_FP32, rank, dims);
	assert_non_null(t);
	memcpy(al_tensor_data(t), v, al_tensor_count(t) * sizeof(float));
	return t;
}

static void expect_values(const al_tensor *t, const float *want, size_t n)
{
	assert_int_equal(al_tensor_count(t), n);
	const float *f = al_tensor_data((al_tensor *)t);
	for (size_t i = 0; i < n; i++)
		if (f[i] != want[i]) {
			print_message("[%zu] = %.9g, want %.9g\n", i, (double)f[i], (double)want[i]);
			fail();
		}
}

/* The inputs of region r of m: their names, space-separated, into buf. */
static enum al_status inputs_of(struct mdl *md, const struct al_region *r, char *buf, size_t cap)
{
	struct al_region_value *v = NULL;
	size_t n = 0;
	enum al_status st = al_region_inputs(md->m, r, &v, &n, md->d);
	buf[0] = '\0';
	size_t k = 0;
	for (size_t i = 0; st == AL_OK && i < n && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? " " : "", v[i].name);
	al_region_values_free(v);
	return st;
}

/* ================================================================ tests */

/* x -> relu a -> add(a, c const) b -> multiply(b, b) y */
static struct buf chain_net(const float *c)
{
	struct buf net = {0};
	constant(&net, "c", c, 3);
	relu(&net, "a", "x", "a");
	layer(&net, "b", "a c", "b", 230, NULL);
	layer(&net, "y", "b b", "y", 231, NULL);
	return nn_model(&net);
}

static int observed;
static void count_nodes(void *ctx, const struct al_node *n, al_tensor *const *outs, uint32_t n_outs)
{
	(void)ctx, (void)n, (void)outs, (void)n_outs;
	observed++;
}

static void test_nn_region(void **state)
{
	(void)state;
	struct mdl md = open_model(chain_net(F(1, 2, 3)));
	const char *nodes[] = {"b"}, *outs[] = {"b"};
	char names[256];
	/* with its constant: only a is read from outside, with its inferred shape */
	struct al_region r = {nodes, 1, true, outs, 1};
	assert_int_equal(inputs_of(&md, &r, names, sizeof names), AL_OK);
	assert_string_equal(names, "a");
	struct al_region_value *v = NULL;
	size_t nv = 0;
	assert_int_equal(al_region_inputs(md.m, &r, &v, &nv, md.d), AL_OK);
	assert_int_equal(nv, 1);
	assert_int_equal(v[0].shape.rank, 1);
	assert_int_equal(v[0].shape.dims[0], 3);
	al_region_values_free(v);
	/* without: the constant is an input too */
	struct al_region r2 = {nodes, 1, false, outs, 1};
	assert_int_equal(inputs_of(&md, &r2, names, sizeof names), AL_OK);
	assert_string_equal(names, "a c");

	/* run: b = a + c on a given a (negative values too: relu is not in the region) */
	struct al_named_tensor in[] = {{"a", tensor(1, D(3), F(-1, 0.5f, 4))}};
	struct al_named_tensor *o = NULL;
	size_t n_o = 0;
	observed = 0;
	struct al_run_opts opts = {.observe = count_nodes};
	enum al_status st = al_model_run_region(md.m, &r, in, 1, &opts, &o, &n_o, md.d);
	if (st != AL_OK)
		print_diags(md.d);
	assert_int_equal(st, AL_OK);
	assert_int_equal(n_o, 1);
	assert_string_equal(o[0].name, "b");
	expect_values(o[0].t, F(0, 2.5f, 7), 3);
	assert_int_equal(observed, 2); /* the constant and b: not relu, not y */
	al_outputs_free(o, n_o);

	/* a region of two layers in a row: y = (a + c)^2, b internal */
	const char *nodes2[] = {"y", "b"}, *outs2[] = {"y", "b"};
	struct al_region r3 = {nodes2, 2, true, outs2, 2};
	st = al_model_run_region(md.m, &r3, in, 1, NULL, &o, &n_o, md.d);
	assert_int_equal(st, AL_OK);
	assert_int_equal(n_o, 2);
	assert_string_equal(o[0].name, "y");
	expect_values(o[0].t, F(0, 6.25f, 49), 3);
	expect_values(o[1].t, F(0, 2.5f, 7), 3);
	al_outputs_free(o, n_o);

	/* fp16 mode rounds the given values like a model input */
	struct al_named_tensor in16[] = {{"a", tensor(1, D(3), F(1.0001f, 0, 0))}};
	struct al_run_opts o16 = {.precision = AL_PREC_FP16};
	st = al_model_run_region(md.m, &r, in16, 1, &o16, &o, &n_o, md.d);
	assert_int_equal(st, AL_OK);
	expect_values(o[0].t, F(2, 2, 3), 3);
	al_outputs_free(o, n_o);
	al_tensor_free(in16[0].t);

	/* the whole model still runs as before after region runs */
	struct al_named_tensor xin[] = {{"x", tensor(1, D(3), F(-1, 1, 2))}};
	st = al_model_run(md.m, xin, 1, NULL, &o, &n_o, md.d);
	assert_int_equal(st, AL_OK);
	expect_values(o[0].t, F(1, 9, 25), 3);
	al_outputs_free(o, n_o);
	al_tensor_free(xin[0].t);
	al_tensor_free(in[0].t);
	close_model(&md);
}

/* Run the same region (nodes na in a, nb in b; output "b") of two models on the
 * same random inputs (4 seeds); true when every run is bit-identical. */
static bool same_region(struct buf a, const char *const *na, size_t n_na, struct buf b,
			const char *const *nb, size_t n_nb)
{
	struct mdl ma = open_model(a), mb = open_model(b);
	const char *outs[] = {"b"};
	struct al_region ra = {na, n_na, true, outs, 1}, rb = {nb, n_nb, true, outs, 1};
	struct al_region_value *va = NULL, *vb = NULL;
	size_t nva = 0, nvb = 0;
	assert_int_equal(al_region_inputs(ma.m, &ra, &va, &nva, ma.d), AL_OK);
	assert_int_equal(al_region_inputs(mb.m, &rb, &vb, &nvb, mb.d), AL_OK);
	assert_int_equal(nva, nvb);
	bool same = true;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct al_named_tensor ta[8], tb[8];
		assert_true(nva <= 8);
		for (size_t i = 0; i < nva; i++) {
			assert_string_equal(va[i].name, vb[i].name);
			ta[i].name = va[i].name;
			assert_int_equal(al_random_tensor(&va[i].shape, va[i].name, seed, 0, &ta[i].t, ma.d), AL_OK);
			tb[i].name = vb[i].name;
			assert_int_equal(al_random_tensor(&vb[i].shape, vb[i].name, seed, 0, &tb[i].t, mb.d), AL_OK);
		}
		struct al_named_tensor *oa = NULL, *ob = NULL;
		size_t noa = 0, nob = 0;
		enum al_status st = al_model_run_region(ma.m, &ra, ta, nva, NULL, &oa, &noa, ma.d);
		if (st == AL_OK)
			st = al_model_run_region(mb.m, &rb, tb, nvb, NULL, &ob, &nob, mb.d);
		if (st != AL_OK) {
			print_diags(ma.d);
			print_diags(mb.d);
		}
		assert_int_equal(st, AL_OK);
		assert_int_equal(noa, 1);
		assert_int_equal(nob, 1);
		assert_int_equal(al_tensor_count(oa[0].t), al_tensor_count(ob[0].t));
		same &= memcmp(al_tensor_data(oa[0].t), al_tensor_data(ob[0].t),
			       al_tensor_count(oa[0].t) * sizeof(float)) == 0;
		al_outputs_free(oa, noa);
		al_outputs_free(ob, nob);
		for (size_t i = 0; i < nva; i++) {
			al_tensor_free(ta[i].t);
			al_tensor_free(tb[i].t);
		}
	}
	al_region_values_free(va);
	al_region_values_free(vb);
	close_model(&ma);
	close_model(&mb);
	return same;
}

/* b = a - c (subtractBroadcastable), the original of a rewrite. */
static struct buf sub_net(void)
{
	struct buf net = {0};
	constant(&net, "c", F(0.1f, -2, 3e-8f), 3);
	relu(&net, "a", "x", "a");
	layer(&net, "b", "a c", "b", 905, NULL);
	layer(&net, "y", "b", "y", 600, NULL);
	return nn_model(&net);
}

/* The rewrite: b__neg = -c; b = a + b__neg; `broken` writes b = a + c instead. */
static struct buf neg_add_net(bool broken)
{
	struct buf net = {0};
	constant(&net, "c", F(0.1f, -2, 3e-8f), 3);
	relu(&net, "a", "x", "a");
	linear(&net, "b__neg", "c", "b__neg", -1, 0);
	layer(&net, "b", broken ? "a c" : "a b__neg", "b", 230, NULL);
	layer(&net, "y", "b", "y", 600, NULL);
	return nn_model(&net);
}

static void test_equivalent_and_broken(void **state)
{
	(void)state;
	const char *orig[] = {"b"}, *rew[] = {"b__neg", "b"};
	/* a correct rewrite: bit-identical on every seed */
	assert_true(same_region(sub_net(), orig, 1, neg_add_net(false), rew, 2));
	/* a broken one (the helper's result is not used): the region proof sees it */
	assert_false(same_region(sub_net(), orig, 1, neg_add_net(true), rew, 2));
	/* a changed constant is seen too (constants run, they are not drawn) */
	assert_false(same_region(chain_net(F(1, 2, 3)), orig, 1, chain_net(F(1, 2, 3.0000005f)), orig, 1));
	assert_true(same_region(chain_net(F(1, 2, 3)), orig, 1, chain_net(F(1, 2, 3)), orig, 1));
}

static void test_errors(void **state)
{
	(void)state;
	struct mdl md = open_model(chain_net(F(1, 2, 3)));
	struct al_named_tensor *o = NULL;
	size_t n_o = 0;
	char names[256];
	const char *none[] = {"nope"}, *b[] = {"b"}, *outs_b[] = {"b"}, *outs_y[] = {"y"};
	struct al_region r = {none, 1, true, outs_b, 1};
	assert_int_equal(inputs_of(&md, &r, names, sizeof names), AL_E_INVALID_ARG);
	assert_true(diag_has(md.d, "no top-level node is named 'nope'"));
	/* an output the region does not produce */
	struct al_region r2 = {b, 1, true, outs_y, 1};
	assert_int_equal(inputs_of(&md, &r2, names, sizeof names), AL_E_INVALID_ARG);
	assert_true(diag_has(md.d, "no node of the region produces 'y'"));
	/* no nodes */
	struct al_region r3 = {b, 0, true, outs_b, 1};
	assert_int_equal(inputs_of(&md, &r3, names, sizeof names), AL_E_INVALID_ARG);
	/* inputs: missing, unknown, twice, not numeric */
	struct al_region ok = {b, 1, true, outs_b, 1};
	assert_int_equal(al_model_run_region(md.m, &ok, NULL, 0, NULL, &o, &n_o, md.d), AL_E_INVALID_ARG);
	assert_true(diag_has(md.d, "input 'a' is missing"));
	assert_null(o);
	al_tensor *t = tensor(1, D(3), F(1, 2, 3));
	struct al_named_tensor extra[] = {{"a", t}, {"x", t}};
	assert_int_equal(al_model_run_region(md.m, &ok, extra, 2, NULL, &o, &n_o, md.d), AL_E_INVALID_ARG);
	assert_true(diag_has(md.d, "'x' is not a value the region reads"));
	struct al_named_tensor twice[] = {{"a", t}, {"a", t}};
	assert_int_equal(al_model_run_region(md.m, &ok, twice, 2, NULL, &o, &n_o, md.d), AL_E_INVALID_ARG);
	assert_true(diag_has(md.d, "'a' is given twice"));
	/* a wrong shape is the layer's error, not a crash */
	al_tensor *t2 = tensor(1, D(2), F(1, 2));
	struct al_named_tensor bad[] = {{"a", t2}};
	assert_int_not_equal(al_model_run_region(md.m, &ok, bad, 1, NULL, &o, &n_o, md.d), AL_OK);
	assert_null(o);
	assert_int_equal(n_o, 0);
	al_tensor_free(t2);
	al_tensor_free(t);
	assert_int_equal(al_model_run_region(NULL, &ok, NULL, 0, NULL, &o, &n_o, md.d), AL_E_INVALID_ARG);
	assert_int_equal(al_model_run_region(md.m, NULL, NULL, 0, NULL, &o, &n_o, md.d), AL_E_INVALID_ARG);
	close_model(&md);

	/* nested graphs: a loop layer, and a layer inside its body */
	struct buf net = {0}, body = {0}, p = {0};
	constant(&net, "acc", F(0, 0, 0), 3);
	layer(&body, "inc", "acc x", "t", 230, NULL);
	layer(&body, "back", "t", "acc", 600, NULL);
	put_uint(&p, 1, 2);
	put_msg(&p, 4, &body);
	layer(&net, "loop", "", "", 615, &p);
	layer(&net, "y", "acc", "y", 600, NULL);
	md = open_model(nn_model(&net));
	const char *inner[] = {"inc"}, *loop[] = {"loop"}, *outs_t[] = {"t"};
	struct al_region rn = {inner, 1, true, outs_t, 1};
	assert_int_equal(inputs_of(&md, &rn, names, sizeof names), AL_E_UNSUPPORTED);
	assert_true(diag_has(md.d, "inside a nested graph"));
	struct al_region rl = {loop, 1, true, NULL, 0};
	assert_int_equal(inputs_of(&md, &rl, names, sizeof names), AL_E_UNSUPPORTED);
	assert_true(diag_has(md.d, "owns nested graphs"));
	assert_int_equal(al_model_run_region(md.m, &rl, NULL, 0, NULL, &o, &n_o, md.d), AL_E_UNSUPPORTED);
	close_model(&md);

	/* a name redefined between the region's layers: two values of one name */
	net = (struct buf){0};
	layer(&net, "p", "x", "v", 600, NULL);
	layer(&net, "q", "v", "w", 600, NULL);
	relu(&net, "r", "x", "v");
	layer(&net, "y", "v w", "y", 230, NULL);
	md = open_model(nn_model(&net));
	const char *pq[] = {"p", "y"}, *outs_yy[] = {"y"};
	struct al_region rr = {pq, 2, true, outs_yy, 1};
	assert_int_equal(inputs_of(&md, &rr, names, sizeof names), AL_E_UNSUPPORTED);
	assert_true(diag_has(md.d, "read with two different values"));
	close_model(&md);
}

static void test_mil_region(void **state)
{
	(void)state;
	struct buf ops = {0};
	cf3(&ops, "c", F(1, 2, 3));
	op(&ops, "add", "s", "x=x y=c");
	op(&ops, "relu", "r", "x=s");
	op(&ops, "mul", "y", "x=r y=r");
	struct mdl md = open_model(mil_model(&ops));
	char names[256];
	const char *s[] = {"s"}, *outs_s[] = {"s"};
	struct al_region r = {s, 1, true, outs_s, 1};
	assert_int_equal(inputs_of(&md, &r, names, sizeof names), AL_OK);
	assert_string_equal(names, "x");
	struct al_region nc = {s, 1, false, outs_s, 1};
	assert_int_equal(inputs_of(&md, &nc, names, sizeof names), AL_OK);
	assert_string_equal(names, "x c");
	struct al_named_tensor in[] = {{"x", tensor(1, D(3), F(-5, 0, 1))}};
	struct al_named_tensor *o = NULL;
	size_t n_o = 0;
	observed = 0;
	struct al_run_opts opts = {.observe = count_nodes};
	enum al_status st = al_model_run_region(md.m, &r, in, 1, &opts, &o, &n_o, md.d);
	if (st != AL_OK)
		print_diags(md.d);
	assert_int_equal(st, AL_OK);
	expect_values(o[0].t, F(-4, 2, 4), 3);
	assert_int_equal(observed, 2); /* const c and add */
	al_outputs_free(o, n_o);
	al_tensor_free(in[0].t);
	/* the middle op alone, on a value it reads */
	const char *rr[] = {"r"}, *outs_r[] = {"r"};
	struct al_region r2 = {rr, 1, true, outs_r, 1};
	assert_int_equal(inputs_of(&md, &r2, names, sizeof names), AL_OK);
	assert_string_equal(names, "s");
	struct al_named_tensor in2[] = {{"s", tensor(1, D(3), F(-1, 2, -3))}};
	st = al_model_run_region(md.m, &r2, in2, 1, NULL, &o, &n_o, md.d);
	assert_int_equal(st, AL_OK);
	expect_values(o[0].t, F(0, 2, 0), 3);
	al_outputs_free(o, n_o);
	al_tensor_free(in2[0].t);
	close_model(&md);
}

static void test_random_tensor(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	assert_non_null(d);
	struct al_shape s = {.rank = 2, .dtype = AL_DT_FP32, .dims = {4, 64}};
	al_tensor *a = NULL, *b = NULL, *c = NULL;
	assert_int_equal(al_random_tensor(&s, "v", 1, 0, &a, d), AL_OK);
	assert_int_equal(al_random_tensor(&s, "v", 1, 0, &b, d), AL_OK);
	assert_int_equal(al_random_tensor(&s, "v", 2, 0, &c, d), AL_OK);
	assert_int_equal(al_tensor_count(a), 256);
	assert_memory_equal(al_tensor_data(a), al_tensor_data(b), 256 * sizeof(float));
	assert_memory_not_equal(al_tensor_data(a), al_tensor_data(c), 256 * sizeof(float));
	bool neg = false, pos = false;
	for (size_t i = 0; i < 256; i++) {
		float v = al_tensor_data(a)[i];
		assert_true(v >= -1.0f && v < 1.0f);
		neg |= v < 0, pos |= v > 0;
	}
	assert_true(neg && pos);
	al_tensor_free(a);
	al_tensor_free(b);
	al_tensor_free(c);
	/* another name, another stream */
	assert_int_equal(al_random_tensor(&s, "w", 1, 0, &c, d), AL_OK);
	assert_int_equal(al_random_tensor(&s, "v", 1, 0, &a, d), AL_OK);
	assert_memory_not_equal(al_tensor_data(a), al_tensor_data(c), 256 * sizeof(float));
	al_tensor_free(a);
	al_tensor_free(c);
	/* integers 0..9 */
	struct al_shape si = {.rank = 1, .dtype = AL_DT_INT32, .dims = {100}};
	assert_int_equal(al_random_tensor(&si, "i", 3, 0, &a, d), AL_OK);
	for (size_t i = 0; i < 100; i++) {
		float v = al_tensor_data(a)[i];
		assert_true(v >= 0 && v <= 9 && v == floorf(v));
	}
	assert_int_equal(al_tensor_dtype(a), AL_DT_INT32);
	al_tensor_free(a);
	/* unknown dims or rank, too big, bad arguments */
	struct al_shape su = {.rank = 2, .dims = {3, AL_DIM_UNKNOWN}};
	a = (al_tensor *)&su;
	assert_int_equal(al_random_tensor(&su, "u", 1, 0, &a, d), AL_E_UNSUPPORTED);
	assert_null(a);
	struct al_shape sr = {.rank = -1};
	assert_int_equal(al_random_tensor(&sr, "u", 1, 0, &a, d), AL_E_UNSUPPORTED);
	struct al_shape sb = {.rank = 3, .dims = {1 << 20, 1 << 20, 1 << 20}};
	assert_int_equal(al_random_tensor(&sb, "big", 1, 0, &a, d), AL_E_UNSUPPORTED);
	assert_true(diag_has(d, "MB allowed"));
	struct al_shape s0 = {.rank = 0, .dtype = AL_DT_FP32};
	assert_int_equal(al_random_tensor(&s0, "scalar", 1, 0, &a, d), AL_OK);
	assert_int_equal(al_tensor_count(a), 1);
	al_tensor_free(a);
	assert_int_equal(al_random_tensor(NULL, "x", 1, 0, &a, d), AL_E_INVALID_ARG);
	al_diags_free(d);
}

/* Every allocation of al_region_inputs + al_model_run_region failed once: a clean
 * failure (never OK with missing outputs), no leak (ASan), and the same answer
 * once allocations work again. */
static void every_allocation_fails(struct buf model, const char *in_name, const float *want)
{
	struct mdl md = open_model(model);
	const char *nodes[] = {"y", "b"}, *outs[] = {"y"};
	struct al_region r = {nodes, 2, true, outs, 1};
	al_tensor *a = tensor(1, D(3), F(-1, 0.5f, 4));
	struct al_named_tensor in[] = {{in_name, a}};
	unsigned long total = 0, nomem = 0;
	for (unsigned long n = 1; n < 10000; n++) {
		al_diags *d = al_diags_new();
		assert_non_null(d);
		struct al_region_value *v = NULL;
		size_t nv = 0;
		struct al_named_tensor *o = NULL;
		size_t n_o = 0;
		ali_alloc_fail_after(n);
		enum al_status st = al_region_inputs(md.m, &r, &v, &nv, d);
		if (st == AL_OK)
			st = al_model_run_region(md.m, &r, in, 1, NULL, &o, &n_o, d);
		unsigned long made = ali_alloc_fail_after(0);
		if (st == AL_OK) {
			assert_int_equal(nv, 1);
			assert_int_equal(n_o, 1);
			expect_values(o[0].t, want, 3);
		} else {
			/* a failed allocation is AL_E_NOMEM, never mistaken for a bad shape */
			if (st != AL_E_NOMEM) {
				print_diags(d);
				fail_msg("allocation %lu failing gave '%s'", n, al_status_str(st));
			}
			nomem += st == AL_E_NOMEM;
			assert_null(o);
			assert_int_equal(n_o, 0);
		}
		al_region_values_free(v);
		al_outputs_free(o, n_o);
		al_diags_free(d);
		if (made < n) { /* the Nth allocation was never reached: all have been failed once */
			total = n;
			break;
		}
	}
	assert_true(total > 5);
	assert_true(nomem > total / 2);
	al_tensor_free(a);
	close_model(&md);
}

static void test_every_allocation_fails(void **state)
{
	(void)state;
	/* NeuralNetwork: y = (a + c)^2 with c = {1,2,3} */
	every_allocation_fails(chain_net(F(1, 2, 3)), "a", F(0, 6.25f, 49));
	/* ML Program: b = relu(s), y = b * b, on s given */
	struct buf ops = {0};
	cf3(&ops, "c", F(1, 2, 3));
	op(&ops, "add", "s", "x=x y=c");
	op(&ops, "relu", "b", "x=s");
	op(&ops, "mul", "y", "x=b y=b");
	every_allocation_fails(mil_model(&ops), "s", F(0, 0.25f, 16));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nn_region),
		cmocka_unit_test(test_equivalent_and_broken),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_mil_region),
		cmocka_unit_test(test_random_tensor),
		cmocka_unit_test(test_every_allocation_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

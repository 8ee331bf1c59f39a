/* SPDX-License-Identifier: MIT */
/* test_interp_nn.c: the NeuralNetwork executor (interp_nn*.c) through al_model_run.
 * Tiny models built in memory check each layer family against values worked out by
 * hand (convolution padding / stride / groups / dilation / deconvolution, pooling
 * modes, upsample modes, broadcastables, the rank-5 input mapping, an LSTM step, a
 * classifier's label, control flow, preprocessing, quantized weights); unsupported
 * layers and hostile parameters must fail cleanly with a diagnostic. Repo fixtures
 * (tests/data/converted + tests/data/reference, PROVENANCE.md) are compared with
 * their PyTorch outputs; with ../shared present every NeuralNetwork corpus model
 * that has a reference is too. */
#include "testutil.h"
#include "pbwrite.h"

#include "interp.h"

#include <json-c/json.h>
#include <math.h>

/* ================================================================ model builders */

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

/* A feature of an empty type message at FeatureType field `type` (3 string, 1
 * int64, 6 dictionary with string keys when `dict_keys`). */
static struct buf plain_feature(const char *name, uint32_t type)
{
	struct buf f = {0}, ft = {0}, t = {0};
	put_str(&f, 1, name);
	if (type == 6)
		put_bytes(&t, 2, "", 0); /* stringKeyType {} */
	put_msg(&ft, type, &t);
	put_msg(&f, 3, &ft);
	return f;
}


/* WeightParams {floatValue = v} as field f of p. */
static void wfloats(struct buf *p, uint32_t f, const float *v, size_t n)
{
	struct buf w = {0};
	put_bytes(&w, 1, v, n * sizeof *v);
	put_msg(p, f, &w);
}

static void put_float(struct buf *p, uint32_t f, float v)
{
	put_tag(p, f, PB_FIXED32);
	put_raw(p, &v, 4);
}

static void put_pair(struct buf *p, uint32_t f, int64_t a, int64_t b)
{
	put_packed(p, f, (int64_t[]){a, b}, 2);
}

static void put_floats(struct buf *p, uint32_t f, const float *v, size_t n)
{
	put_bytes(p, f, v, n * sizeof *v);
}

/* Model{spec 5, description{inputs, outputs, extra}, type field {net}}; net gets
 * the array / image mappings. Frees the pieces. */
static struct buf model(struct buf *ins, int n_in, struct buf *outs, int n_out, struct buf *desc_extra,
			struct buf *net, int array_mapping, int image_mapping, uint32_t type)
{
	struct buf m = {0}, desc = {0};
	for (int i = 0; i < n_in; i++)
		put_msg(&desc, 1, &ins[i]);
	for (int i = 0; i < n_out; i++)
		put_msg(&desc, 10, &outs[i]);
	if (desc_extra) {
		put_raw(&desc, desc_extra->p, desc_extra->n);
		free(desc_extra->p);
		*desc_extra = (struct buf){0};
	}
	if (array_mapping)
		put_uint(net, 5, (uint64_t)array_mapping);
	if (image_mapping)
		put_uint(net, 6, (uint64_t)image_mapping);
	put_uint(&m, 1, 5);
	put_msg(&m, 2, &desc);
	put_msg(&m, type, net);
	return m;
}

/* The common case: one input x, outputs named in `outs` (space-separated, no
 * declared shape), exact mapping. */
static struct buf simple_model(const int64_t *xshape, int xrank, const char *outs, struct buf *net)
{
	struct buf in = array_feature("x", xshape, xrank), o[16];
	int n = 0;
	char tmp[64];
	while (*outs && n < 16) {
		size_t k = strcspn(outs, " ");
		memcpy(tmp, outs, k);
		tmp[k] = '\0';
		o[n++] = array_feature(tmp, NULL, 0);
		outs += k + (outs[k] == ' ');
	}
	return model(&in, 1, o, n, NULL, net, 1, 1, 500);
}

/* ================================================================ running */

struct run {
	al_model *m;
	al_diags *d;
	uint8_t *bytes;
	struct al_named_tensor *outs;
	size_t n_outs;
	enum al_status st;
};

static void print_diags(const al_diags *d)
{
	for (size_t i = 0; i < al_diags_count(d); i++)
		print_message("  diag: %s\n", al_diags_get(d, i)->msg);
}

/* Open the model in b (taking it) and run it; inputs as (name, tensor) pairs. */
static struct run run_model_opts(struct buf *b, const struct al_named_tensor *in, size_t n_in,
				 const struct al_run_opts *opts)
{
	struct run r = {NULL, al_diags_new(), b->p, NULL, 0, AL_OK};
	size_t n = b->n;
	*b = (struct buf){0};
	assert_non_null(r.d);
	enum al_status st = al_model_open_buffer(r.bytes, n, NULL, 0, "mem.mlmodel", &r.m, r.d);
	if (st != AL_OK) {
		print_diags(r.d);
		fail_msg("model did not load: %s", al_status_str(st));
	}
	r.st = al_model_run(r.m, in, n_in, opts, &r.outs, &r.n_outs, r.d);
	return r;
}

static struct run run_model(struct buf *b, const struct al_named_tensor *in, size_t n_in)
{
	return run_model_opts(b, in, n_in, NULL);
}

static void run_free(struct run *r)
{
	al_outputs_free(r->outs, r->n_outs);
	al_model_free(r->m);
	al_diags_free(r->d);
	free(r->bytes);
}

static al_tensor *out_named(const struct run *r, const char *name)
{
	for (size_t i = 0; i < r->n_outs; i++)
		if (strcmp(r->outs[i].name, name) == 0)
			return r->outs[i].t;
	print_message("no output '%s'\n", name);
	fail();
	return NULL;
}

static bool diag_has(const al_diags *d, const char *needle)
{
	for (size_t i = 0; i < al_diags_count(d); i++)
		if (strstr(al_diags_get(d, i)->msg, needle))
			return true;
	return false;
}

static al_tensor *tensor(const float *v, int rank, const int64_t *dims)
{
	al_tensor *t = al_tensor_new(AL_DT_FP32, rank, dims);
	assert_non_null(t);
	if (v)
		memcpy(al_tensor_data(t), v, al_tensor_count(t) * sizeof(float));
	return t;
}

/* The run succeeded and output `name` has these dims and values (within tol). */
static void expect_out(const struct run *r, const char *name, int rank, const int64_t *dims,
		       const float *want, float tol)
{
	if (r->st != AL_OK) {
		print_diags(r->d);
		fail_msg("run failed: %s", al_status_str(r->st));
	}
	al_tensor *t = out_named(r, name);
	assert_int_equal(al_tensor_rank(t), rank);
	for (int i = 0; i < rank; i++)
		assert_int_equal(al_tensor_dims(t)[i], dims[i]);
	size_t n = al_tensor_count(t);
	const float *f = al_tensor_data(t);
	for (size_t i = 0; i < n; i++)
		if (!(fabsf(f[i] - want[i]) <= tol)) {
			print_message("%s[%zu] = %.9g, want %.9g\n", name, i, (double)f[i], (double)want[i]);
			fail();
		}
}

/* The run failed with `st` and a diagnostic containing each of the needles. */
static void expect_fail(const struct run *r, enum al_status st, const char *needle, const char *needle2)
{
	if (r->st != st || !diag_has(r->d, needle) || (needle2 && !diag_has(r->d, needle2))) {
		print_diags(r->d);
		fail_msg("want %s with '%s', got %s", al_status_str(st), needle, al_status_str(r->st));
	}
	assert_int_equal(al_diags_errors(r->d) > 0, 1);
}

/* One-input model run on x: returns the run. */
static struct run run1(const int64_t *xshape, int xrank, const float *xv, const char *outs,
		       struct buf *net)
{
	struct buf m = simple_model(xshape, xrank, outs, net);
	al_tensor *x = tensor(xv, xrank, xshape);
	struct al_named_tensor in = {"x", x};
	struct run r = run_model(&m, &in, 1);
	al_tensor_free(x);
	return r;
}

/* ================================================================ convolution */

/* ConvolutionLayerParams with weights w (and bias b when nb > 0). */
static struct buf conv_params(int64_t cout, int64_t kc, int64_t kh, int64_t kw, const float *w,
			      size_t nw, const float *b, size_t nb)
{
	struct buf p = {0};
	put_uint(&p, 1, (uint64_t)cout);
	put_uint(&p, 2, (uint64_t)kc);
	put_pair(&p, 20, kh, kw);
	wfloats(&p, 90, w, nw);
	if (nb) {
		put_uint(&p, 70, 1);
		wfloats(&p, 91, b, nb);
	}
	return p;
}

static void test_conv(void **state)
{
	(void)state;
	static const float x9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
	struct buf net = {0}, p;
	/* valid 2x2 of ones */
	p = conv_params(1, 1, 2, 2, ones, 4, NULL, 0);
	layer(&net, "valid", "x", "a", 100, &p);
	/* same 3x3, stride 2, bias 10: pads 1/1 */
	p = conv_params(1, 1, 3, 3, ones, 9, (float[]){10}, 1);
	put_pair(&p, 30, 2, 2);
	put_bytes(&p, 51, "", 0);
	layer(&net, "same", "x", "b", 100, &p);
	struct run r = run1((int64_t[]){1, 1, 3, 3}, 4, x9, "a b", &net);
	expect_out(&r, "a", 4, (int64_t[]){1, 1, 2, 2}, (float[]){12, 16, 24, 28}, 0);
	expect_out(&r, "b", 4, (int64_t[]){1, 1, 2, 2}, (float[]){22, 26, 34, 38}, 0);
	run_free(&r);

	/* groups: 2 channels, 1x1 kernels 2 and 3 */
	net = (struct buf){0};
	p = conv_params(2, 1, 1, 1, (float[]){2, 3}, 2, NULL, 0);
	put_uint(&p, 10, 2);
	layer(&net, "grouped", "x", "y", 100, &p);
	r = run1((int64_t[]){1, 2, 2, 2}, 4, (float[]){1, 2, 3, 4, 10, 20, 30, 40}, "y", &net);
	expect_out(&r, "y", 4, (int64_t[]){1, 2, 2, 2}, (float[]){2, 4, 6, 8, 30, 60, 90, 120}, 0);
	run_free(&r);

	/* same padding asymmetry along W (1x2 kernel on [1,2,3,4]); dilation 2; deconvolution */
	net = (struct buf){0};
	p = conv_params(1, 1, 1, 2, ones, 2, NULL, 0);
	put_bytes(&p, 51, "", 0);
	layer(&net, "br_heavy", "x", "br", 100, &p);
	p = conv_params(1, 1, 1, 2, ones, 2, NULL, 0);
	struct buf same = {0};
	put_uint(&same, 1, 1); /* TOP_LEFT_HEAVY */
	put_msg(&p, 51, &same);
	layer(&net, "tl_heavy", "x", "tl", 100, &p);
	p = conv_params(1, 1, 1, 2, ones, 2, NULL, 0);
	put_pair(&p, 40, 1, 2);
	layer(&net, "dilated", "x", "dil", 100, &p);
	p = conv_params(1, 1, 1, 2, (float[]){1, 10}, 2, NULL, 0);
	put_pair(&p, 30, 1, 2);
	put_uint(&p, 60, 1);
	layer(&net, "deconv", "x", "dc", 100, &p);
	r = run1((int64_t[]){1, 1, 1, 4}, 4, (float[]){1, 2, 3, 4}, "br tl dil dc", &net);
	expect_out(&r, "br", 4, (int64_t[]){1, 1, 1, 4}, (float[]){3, 5, 7, 4}, 0);
	expect_out(&r, "tl", 4, (int64_t[]){1, 1, 1, 4}, (float[]){1, 3, 5, 7}, 0);
	expect_out(&r, "dil", 4, (int64_t[]){1, 1, 1, 2}, (float[]){4, 6}, 0);
	expect_out(&r, "dc", 4, (int64_t[]){1, 1, 1, 8}, (float[]){1, 10, 2, 20, 3, 30, 4, 40}, 0);
	run_free(&r);
}

/* ================================================================ pooling */

static struct buf pool_params(int type, int64_t k, int64_t s)
{
	struct buf p = {0};
	put_uint(&p, 1, (uint64_t)type);
	put_pair(&p, 10, k, k);
	put_pair(&p, 20, s, s);
	return p;
}

static void test_pool(void **state)
{
	(void)state;
	float x[16];
	for (int i = 0; i < 16; i++)
		x[i] = (float)i;
	struct buf net = {0}, p, same = {0};
	p = pool_params(0, 2, 2);
	layer(&net, "max", "x", "mx", 120, &p);
	p = pool_params(1, 3, 1);
	put_bytes(&p, 31, "", 0);
	layer(&net, "avg_same", "x", "av", 120, &p);
	p = pool_params(1, 3, 1);
	put_msg(&p, 31, &same);
	put_uint(&p, 50, 1);
	layer(&net, "avg_excl", "x", "ax", 120, &p);
	p = pool_params(1, 1, 1);
	put_uint(&p, 60, 1);
	layer(&net, "global", "x", "gl", 120, &p);
	p = pool_params(2, 2, 2);
	layer(&net, "l2", "x", "l2", 120, &p);
	struct run r = run1((int64_t[]){1, 1, 4, 4}, 4, x, "mx av ax gl l2", &net);
	expect_out(&r, "mx", 4, (int64_t[]){1, 1, 2, 2}, (float[]){5, 7, 13, 15}, 0);
	const float *av = al_tensor_data(out_named(&r, "av")), *ax = al_tensor_data(out_named(&r, "ax"));
	assert_float_equal(av[0], 10.0f / 9.0f, 1e-6f); /* corner: 4 real values over 9 */
	assert_float_equal(ax[0], 2.5f, 1e-6f);         /* excluding the padding */
	assert_float_equal(av[5], 45.0f / 9.0f, 1e-6f);  /* interior (1,1): 0+1+2+4+5+6+8+9+10 */
	expect_out(&r, "gl", 4, (int64_t[]){1, 1, 1, 1}, (float[]){7.5f}, 1e-6f);
	expect_out(&r, "l2", 4, (int64_t[]){1, 1, 2, 2},
		   (float[]){sqrtf(0 + 1 + 16 + 25), sqrtf(4 + 9 + 36 + 49), sqrtf(64 + 81 + 144 + 169),
			     sqrtf(100 + 121 + 196 + 225)}, 1e-5f);
	run_free(&r);

	/* includeLastPixel: kernel 1x2 stride 2 over 5 values keeps the last one */
	net = (struct buf){0};
	p = (struct buf){0};
	put_pair(&p, 10, 1, 2);
	put_pair(&p, 20, 1, 2);
	struct buf ilp = {0};
	put_pair(&ilp, 10, 0, 0);
	put_msg(&p, 32, &ilp);
	layer(&net, "last", "x", "y", 120, &p);
	r = run1((int64_t[]){1, 1, 1, 5}, 4, (float[]){0, 1, 2, 3, 4}, "y", &net);
	expect_out(&r, "y", 4, (int64_t[]){1, 1, 1, 3}, (float[]){1, 3, 4}, 0);
	run_free(&r);
}

/* ================================================================ upsample */

static struct buf upsample_params(int64_t sh, int64_t sw, int mode, int lin)
{
	struct buf p = {0};
	put_pair(&p, 1, sh, sw);
	if (mode)
		put_uint(&p, 5, (uint64_t)mode);
	if (lin)
		put_uint(&p, 6, (uint64_t)lin);
	return p;
}

static void test_upsample(void **state)
{
	(void)state;
	struct buf net = {0}, p;
	p = upsample_params(2, 2, 0, 0);
	layer(&net, "nearest", "x", "nn", 210, &p);
	struct run r = run1((int64_t[]){1, 1, 2, 2}, 4, (float[]){1, 2, 3, 4}, "nn", &net);
	expect_out(&r, "nn", 4, (int64_t[]){1, 1, 4, 4},
		   (float[]){1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, 0);
	run_free(&r);

	net = (struct buf){0};
	p = upsample_params(1, 3, 1, 1);
	layer(&net, "align_true", "x", "at", 210, &p);
	p = upsample_params(1, 2, 1, 2);
	layer(&net, "align_false", "x", "af", 210, &p);
	p = upsample_params(1, 2, 1, 0);
	layer(&net, "default", "x", "df", 210, &p);
	r = run1((int64_t[]){1, 1, 1, 2}, 4, (float[]){0, 3}, "at af df", &net);
	expect_out(&r, "at", 4, (int64_t[]){1, 1, 1, 6}, (float[]){0, 0.6f, 1.2f, 1.8f, 2.4f, 3}, 1e-6f);
	expect_out(&r, "af", 4, (int64_t[]){1, 1, 1, 4}, (float[]){0, 0.75f, 2.25f, 3}, 1e-6f);
	expect_out(&r, "df", 4, (int64_t[]){1, 1, 1, 4}, (float[]){0, 1.5f, 3, 3}, 1e-6f);
	run_free(&r);
}

/* ================================================================ elementwise */

static void test_broadcastable(void **state)
{
	(void)state;
	struct buf net = {0}, p;
	layer(&net, "add", "a b", "add", 880, NULL);
	layer(&net, "sub", "a b", "sub", 905, NULL);
	layer(&net, "div", "b a", "div", 890, NULL);
	layer(&net, "max", "a b", "mx", 875, NULL);
	p = (struct buf){0};
	put_float(&p, 2, 1.5f);
	layer(&net, "less", "a", "lt", 825, &p);
	layer(&net, "and", "lt b", "and", 855, NULL);
	struct buf in[2] = {array_feature("a", (int64_t[]){2, 1}, 2), array_feature("b", (int64_t[]){3}, 1)};
	struct buf o[6] = {array_feature("add", NULL, 0), array_feature("sub", NULL, 0),
			   array_feature("div", NULL, 0), array_feature("mx", NULL, 0),
			   array_feature("lt", NULL, 0), array_feature("and", NULL, 0)};
	struct buf m = model(in, 2, o, 6, NULL, &net, 1, 1, 500);
	al_tensor *a = tensor((float[]){1, 2}, 2, (int64_t[]){2, 1});
	al_tensor *b = tensor((float[]){10, 20, 30}, 1, (int64_t[]){3});
	struct al_named_tensor ins[2] = {{"a", a}, {"b", b}};
	struct run r = run_model(&m, ins, 2);
	const int64_t d23[2] = {2, 3};
	expect_out(&r, "add", 2, d23, (float[]){11, 21, 31, 12, 22, 32}, 0);
	expect_out(&r, "sub", 2, d23, (float[]){-9, -19, -29, -8, -18, -28}, 0);
	expect_out(&r, "div", 2, d23, (float[]){10, 20, 30, 5, 10, 15}, 0);
	expect_out(&r, "mx", 2, d23, (float[]){10, 20, 30, 10, 20, 30}, 0);
	expect_out(&r, "lt", 2, (int64_t[]){2, 1}, (float[]){1, 0}, 0);
	expect_out(&r, "and", 2, d23, (float[]){1, 1, 1, 0, 0, 0}, 0);
	run_free(&r);
	al_tensor_free(a);
	al_tensor_free(b);
}

/* Legacy elementwise layers, activations and the unary function. */
static void test_legacy_elementwise(void **state)
{
	(void)state;
	struct buf net = {0}, p, act;
	p = (struct buf){0};
	put_float(&p, 1, 0.5f);
	layer(&net, "mul_alpha", "x", "m", 231, &p);
	layer(&net, "add2", "x m", "s", 230, NULL);
	/* PReLU with one alpha per channel (2 channels) */
	p = (struct buf){0};
	act = (struct buf){0};
	wfloats(&act, 1, (float[]){0.1f, 0.2f}, 2);
	put_msg(&p, 25, &act);
	layer(&net, "prelu", "x", "pr", 130, &p);
	/* thresholdedReLU alpha 2: x >= 2 kept */
	p = (struct buf){0};
	act = (struct buf){0};
	put_float(&act, 1, 2.0f);
	put_msg(&p, 20, &act);
	layer(&net, "thr", "x", "th", 130, &p);
	/* unary POWER 2 after scale 2, shift 1: (2x + 1)^2 */
	p = (struct buf){0};
	put_uint(&p, 1, 3);
	put_float(&p, 2, 2.0f);
	put_float(&p, 4, 1.0f);
	put_float(&p, 5, 2.0f);
	layer(&net, "pow", "x", "pw", 220, &p);
	/* scale with shape [C] and a bias [1] */
	p = (struct buf){0};
	put_packed(&p, 1, (int64_t[]){2}, 1);
	wfloats(&p, 2, (float[]){10, 100}, 2);
	put_uint(&p, 3, 1);
	put_packed(&p, 4, (int64_t[]){1}, 1);
	wfloats(&p, 5, (float[]){1}, 1);
	layer(&net, "scale", "x", "sc", 245, &p);
	const float x[4] = {-1, 2, -3, 4}; /* [1, 2 channels, 1, 2] */
	struct run r = run1((int64_t[]){1, 2, 1, 2}, 4, x, "m s pr th pw sc", &net);
	const int64_t d[4] = {1, 2, 1, 2};
	expect_out(&r, "m", 4, d, (float[]){-0.5f, 1, -1.5f, 2}, 0);
	expect_out(&r, "s", 4, d, (float[]){-1.5f, 3, -4.5f, 6}, 0);
	expect_out(&r, "pr", 4, d, (float[]){-0.1f, 2, -0.6f, 4}, 1e-6f);
	expect_out(&r, "th", 4, d, (float[]){0, 2, 0, 4}, 0);
	expect_out(&r, "pw", 4, d, (float[]){1, 25, 25, 81}, 1e-4f);
	expect_out(&r, "sc", 4, d, (float[]){-9, 21, -299, 401}, 0);
	run_free(&r);
}

/* ================================================================ rank-5 mapping */

static void test_rank5_mapping(void **state)
{
	(void)state;
	struct buf net = {0}, p;
	/* [C] input: scale per channel, then its shape */
	p = (struct buf){0};
	put_packed(&p, 1, (int64_t[]){2}, 1);
	wfloats(&p, 2, (float[]){3, 4}, 2);
	layer(&net, "scale", "x", "y", 245, &p);
	layer(&net, "shape", "x", "s", 1065, NULL);
	/* innerProduct over the 2 channels -> [1,1,1,1,1], declared [1] */
	p = (struct buf){0};
	put_uint(&p, 1, 2);
	put_uint(&p, 2, 1);
	wfloats(&p, 20, (float[]){1, 1}, 2);
	layer(&net, "ip", "x", "z", 140, &p);
	struct buf in = array_feature("x", (int64_t[]){2}, 1);
	struct buf o[3] = {array_feature("y", (int64_t[]){2}, 1), array_feature("s", NULL, 0),
			   array_feature("z", (int64_t[]){1}, 1)};
	struct buf m = model(&in, 1, o, 3, NULL, &net, 0, 0, 500);
	al_tensor *x = tensor((float[]){5, 6}, 1, (int64_t[]){2});
	struct al_named_tensor ins = {"x", x};
	struct run r = run_model(&m, &ins, 1);
	expect_out(&r, "y", 1, (int64_t[]){2}, (float[]){15, 24}, 0);
	expect_out(&r, "s", 1, (int64_t[]){5}, (float[]){1, 1, 2, 1, 1}, 0);
	expect_out(&r, "z", 1, (int64_t[]){1}, (float[]){11}, 0);
	run_free(&r);
	al_tensor_free(x);

	/* [C,H,W] input: legacy reshape CHANNEL_LAST and flatten CHANNEL_LAST */
	net = (struct buf){0};
	p = (struct buf){0};
	put_packed(&p, 1, (int64_t[]){1, 1, 4}, 3);
	put_uint(&p, 2, 1);
	layer(&net, "reshape_cl", "x", "r", 300, &p);
	p = (struct buf){0};
	put_uint(&p, 1, 1);
	layer(&net, "flatten_cl", "x", "f", 301, &p);
	in = array_feature("x", (int64_t[]){2, 1, 2}, 3);
	struct buf o2[2] = {array_feature("r", (int64_t[]){1, 1, 4}, 3), array_feature("f", NULL, 0)};
	m = model(&in, 1, o2, 2, NULL, &net, 0, 0, 500);
	x = tensor((float[]){1, 2, 3, 4}, 3, (int64_t[]){2, 1, 2}); /* c0 = [1,2], c1 = [3,4] */
	ins.t = x;
	r = run_model(&m, &ins, 1);
	expect_out(&r, "r", 3, (int64_t[]){1, 1, 4}, (float[]){1, 3, 2, 4}, 0);
	expect_out(&r, "f", 5, (int64_t[]){1, 1, 4, 1, 1}, (float[]){1, 3, 2, 4}, 0);
	run_free(&r);
	al_tensor_free(x);
}

/* ================================================================ recurrent */

static float sigm(float v)
{
	return 1.0f / (1.0f + expf(-v));
}

static void put_act(struct buf *p, uint32_t f, uint32_t which)
{
	struct buf a = {0};
	put_bytes(&a, which, "", 0);
	put_msg(p, f, &a);
}

static void test_lstm_step(void **state)
{
	(void)state;
	struct buf p = {0}, lp = {0}, w = {0}, net = {0};
	put_uint(&p, 1, 1);
	put_uint(&p, 2, 1);
	put_act(&p, 10, 40); /* sigmoid, tanh, tanh */
	put_act(&p, 10, 30);
	put_act(&p, 10, 30);
	put_uint(&lp, 20, 1); /* hasBiasVectors */
	put_msg(&p, 15, &lp);
	const float one = 1, zero = 0, half = 0.5f;
	for (uint32_t f = 1; f <= 4; f++)
		wfloats(&w, f, &one, 1);
	for (uint32_t f = 20; f <= 23; f++)
		wfloats(&w, f, &half, 1);
	for (uint32_t f = 40; f <= 43; f++)
		wfloats(&w, f, f == 41 ? &one : &zero, 1);
	put_msg(&p, 20, &w);
	layer(&net, "lstm", "x h0 c0", "y h c", 420, &p);
	struct buf in[3] = {array_feature("x", (int64_t[]){1, 1, 1, 1, 1}, 5),
			    array_feature("h0", (int64_t[]){1, 1, 1, 1, 1}, 5),
			    array_feature("c0", (int64_t[]){1, 1, 1, 1, 1}, 5)};
	struct buf o[3] = {array_feature("y", NULL, 0), array_feature("h", NULL, 0),
			   array_feature("c", NULL, 0)};
	struct buf m = model(in, 3, o, 3, NULL, &net, 1, 1, 500);
	const int64_t d5[5] = {1, 1, 1, 1, 1};
	al_tensor *x = tensor((float[]){2}, 5, d5), *h0 = tensor((float[]){1}, 5, d5);
	al_tensor *c0 = tensor((float[]){-1}, 5, d5);
	struct al_named_tensor ins[3] = {{"x", x}, {"h0", h0}, {"c0", c0}};
	struct run r = run_model(&m, ins, 3);
	/* one step by hand: pre-activation W x + R h + b = 2 + 0.5 (+1 for the forget gate) */
	float i = sigm(2.5f), f = sigm(3.5f), og = sigm(2.5f), z = tanhf(2.5f);
	float c = f * -1.0f + i * z, h = og * tanhf(c);
	expect_out(&r, "y", 5, d5, &h, 1e-6f);
	expect_out(&r, "h", 5, d5, &h, 1e-6f);
	expect_out(&r, "c", 5, d5, &c, 1e-6f);
	run_free(&r);
	al_tensor_free(x);
	al_tensor_free(h0);
	al_tensor_free(c0);
}

/* GRU over two steps with one unit, no bias: z = sig(x + h), r = sig(x + h),
 * o = tanh(x + r*h), h' = (1-z) o + z h. */
static void test_gru_steps(void **state)
{
	(void)state;
	struct buf p = {0}, net = {0};
	put_uint(&p, 1, 1);
	put_uint(&p, 2, 1);
	put_act(&p, 10, 40);
	put_act(&p, 10, 30);
	put_uint(&p, 15, 1); /* sequence output */
	const float one = 1;
	for (uint32_t f = 30; f <= 32; f++)
		wfloats(&p, f, &one, 1);
	for (uint32_t f = 50; f <= 52; f++)
		wfloats(&p, f, &one, 1);
	layer(&net, "gru", "x", "y hN", 410, &p);
	struct run r = run1((int64_t[]){2, 1, 1, 1, 1}, 5, (float[]){0.5f, -1}, "y hN", &net);
	float h = 0, ys[2];
	const float xs[2] = {0.5f, -1};
	for (int t = 0; t < 2; t++) {
		float z = sigm(xs[t] + h), rr = sigm(xs[t] + h), o = tanhf(xs[t] + rr * h);
		h = (1 - z) * o + z * h;
		ys[t] = h;
	}
	expect_out(&r, "y", 5, (int64_t[]){2, 1, 1, 1, 1}, ys, 1e-6f);
	expect_out(&r, "hN", 5, (int64_t[]){1, 1, 1, 1, 1}, &h, 1e-6f);
	run_free(&r);
}

/* ================================================================ classifier */

static struct buf classifier_model(bool int_labels)
{
	struct buf net = {0}, p = {0}, labels = {0};
	put_uint(&p, 1, (uint64_t)-1);
	layer(&net, "softmax", "x", "probs", 950, &p);
	if (int_labels) {
		put_packed(&labels, 1, (int64_t[]){7, 8, 9}, 3);
		put_msg(&net, 101, &labels);
	} else {
		put_str(&labels, 1, "cat");
		put_str(&labels, 1, "dog");
		put_str(&labels, 1, "bird");
		put_msg(&net, 100, &labels);
	}
	struct buf in = array_feature("x", (int64_t[]){3}, 1);
	struct buf o[2] = {plain_feature("probs", 6), plain_feature("classLabel", int_labels ? 1 : 3)};
	struct buf extra = {0};
	put_str(&extra, 11, "classLabel");
	put_str(&extra, 12, "probs");
	return model(&in, 1, o, 2, &extra, &net, 1, 1, 403);
}

static void test_classifier(void **state)
{
	(void)state;
	al_tensor *x = tensor((float[]){1, 3, 2}, 1, (int64_t[]){3});
	struct al_named_tensor in = {"x", x};
	struct buf m = classifier_model(false);
	struct run r = run_model(&m, &in, 1);
	if (r.st != AL_OK)
		print_diags(r.d);
	assert_int_equal(r.st, AL_OK);
	al_tensor *lab = out_named(&r, "classLabel"), *pr = out_named(&r, "probs");
	assert_int_equal(al_tensor_dtype(lab), AL_DT_STRING);
	assert_string_equal(al_tensor_string(lab, 0), "dog");
	assert_int_equal(al_tensor_count(pr), 3);
	assert_string_equal(al_tensor_label(pr, 0), "cat");
	assert_string_equal(al_tensor_label(pr, 2), "bird");
	float s = expf(1) + expf(3) + expf(2);
	assert_float_equal(al_tensor_data(pr)[1], expf(3) / s, 1e-6f);
	run_free(&r);

	m = classifier_model(true);
	r = run_model(&m, &in, 1);
	assert_int_equal(r.st, AL_OK);
	lab = out_named(&r, "classLabel");
	assert_int_equal(al_tensor_dtype(lab), AL_DT_INT64);
	assert_float_equal(al_tensor_data(lab)[0], 8.0f, 0);
	assert_string_equal(al_tensor_label(out_named(&r, "probs"), 1), "8");
	run_free(&r);
	al_tensor_free(x);
}

/* ================================================================ control flow */

/* A loadConstantND layer: blob `name` of one value v. */
static void constant(struct buf *net, const char *name, float v)
{
	struct buf p = {0};
	put_packed(&p, 1, (int64_t[]){1}, 1);
	wfloats(&p, 2, &v, 1);
	layer(net, name, "", name, 1070, &p);
}

/* x [1024]; a loop of 1000 iterations (no condition) of x = x + x; y = x */
static struct buf counted_loop_model(void)
{
	struct buf net = {0}, body = {0}, p = {0};
	layer(&body, "twice", "x x", "t", 230, NULL);
	layer(&body, "back", "t", "x", 600, NULL);
	put_uint(&p, 1, 1000);
	put_msg(&p, 4, &body);
	layer(&net, "counted", "", "", 615, &p);
	layer(&net, "out", "x", "y", 600, NULL);
	return simple_model((int64_t[]){1024}, 1, "y", &net);
}

static void test_control_flow(void **state)
{
	(void)state;
	/* for loop: 3 iterations of acc += 1 */
	struct buf net = {0}, body = {0}, p = {0}, cond = {0};
	constant(&net, "acc", 0);
	constant(&net, "one", 1);
	layer(&body, "inc", "acc one", "t", 230, NULL);
	layer(&body, "back", "t", "acc", 600, NULL);
	put_uint(&p, 1, 3);
	put_msg(&p, 4, &body);
	layer(&net, "loop", "", "", 615, &p);
	/* while loop: acc < 5 */
	body = (struct buf){0};
	layer(&body, "inc2", "acc one", "t2", 230, NULL);
	layer(&body, "back2", "t2", "acc", 600, NULL);
	struct buf lt = {0};
	put_float(&lt, 2, 5.0f);
	layer(&cond, "less", "acc", "go", 825, &lt);
	p = (struct buf){0};
	put_str(&p, 2, "go");
	put_msg(&p, 3, &cond);
	put_msg(&p, 4, &body);
	layer(&net, "while", "", "", 615, &p);
	layer(&net, "out", "acc", "w", 600, NULL);
	/* loop of at most 10 with a break once acc >= 7 */
	body = (struct buf){0};
	struct buf br = {0}, ifb = {0}, ge = {0};
	layer(&body, "inc3", "acc one", "t3", 230, NULL);
	layer(&body, "back3", "t3", "acc", 600, NULL);
	put_float(&ge, 2, 7.0f);
	layer(&body, "ge", "acc", "stop", 832, &ge);
	layer(&ifb, "break", "", "", 620, NULL);
	put_msg(&br, 1, &ifb);
	layer(&body, "branch", "stop", "", 605, &br);
	layer(&body, "never", "acc", "acc", 600, NULL); /* skipped after the break */
	p = (struct buf){0};
	put_uint(&p, 1, 10);
	put_msg(&p, 4, &body);
	layer(&net, "breaking", "", "", 615, &p);
	layer(&net, "out2", "acc", "b", 600, NULL);
	/* branch on the input: x != 0 -> 1, else 2 */
	struct buf ib = {0}, eb = {0};
	constant(&ib, "c", 1);
	constant(&eb, "c", 2);
	p = (struct buf){0};
	put_msg(&p, 1, &ib);
	put_msg(&p, 2, &eb);
	layer(&net, "if", "x", "", 605, &p);
	layer(&net, "out3", "c", "c_out", 600, NULL);
	struct run r = run1((int64_t[]){1}, 1, (float[]){0}, "w b c_out", &net);
	expect_out(&r, "w", 1, (int64_t[]){1}, (float[]){5}, 0);
	expect_out(&r, "b", 1, (int64_t[]){1}, (float[]){7}, 0);
	expect_out(&r, "c_out", 1, (int64_t[]){1}, (float[]){2}, 0);
	run_free(&r);

	/* a loop that never ends is stopped by max_steps */
	net = (struct buf){0};
	body = (struct buf){0};
	cond = (struct buf){0};
	constant(&net, "k", 1);
	layer(&body, "id", "k", "k", 600, NULL);
	layer(&cond, "id", "k", "go", 600, NULL);
	p = (struct buf){0};
	put_str(&p, 2, "go");
	put_msg(&p, 3, &cond);
	put_msg(&p, 4, &body);
	layer(&net, "forever", "", "", 615, &p);
	layer(&net, "out", "k", "y", 600, NULL);
	struct buf m = simple_model((int64_t[]){1}, 1, "y", &net);
	al_tensor *x = tensor((float[]){0}, 1, (int64_t[]){1});
	struct al_named_tensor in = {"x", x};
	struct al_run_opts opts = {.max_steps = 100};
	r = run_model_opts(&m, &in, 1, &opts);
	expect_fail(&r, AL_E_UNSUPPORTED, "loop iterations", NULL);
	run_free(&r);
	al_tensor_free(x);

	/* a loop without a condition or break runs exactly maxLoopIterations: one
	 * over max_steps, or whose body's work times its count is over max_work,
	 * is refused before its first iteration (no layer of the body runs). Work per
	 * iteration: add writes 1024 values plus a quarter of 512 multiply-adds (the
	 * cost model's 1024 FLOPs / 8), copy writes 1024, and each layer run counts
	 * 256: 2688; the loop layer itself 256, the final copy 1280. */
	for (int bound = 0; bound < 2; bound++) {
		float zeros[1024] = {0};
		m = counted_loop_model();
		x = tensor(zeros, 1, (int64_t[]){1024});
		in = (struct al_named_tensor){"x", x};
		struct al_run_opts o = {.max_steps = bound ? 999 : 0, .max_work = bound ? 0 : 1000000};
		r = run_model_opts(&m, &in, 1, &o);
		expect_fail(&r, AL_E_UNSUPPORTED, bound ? "a loop of 1000 iterations: more than the 999"
						 : "a loop of 1000 iterations of about 2688 element operations",
			    NULL);
		run_free(&r);
		/* with room for it, the same loop runs */
		m = counted_loop_model();
		struct al_run_opts roomy = {.max_steps = 1000, .max_work = 256 + 2688 * 1000 + 1280};
		r = run_model_opts(&m, &in, 1, &roomy);
		assert_int_equal(r.st, AL_OK);
		run_free(&r);
		al_tensor_free(x);
	}
}

/* ================================================================ preprocessing */

static void test_preprocessing(void **state)
{
	(void)state;
	for (int bgr = 0; bgr < 2; bgr++) {
		struct buf net = {0}, pre = {0}, sc = {0};
		layer(&net, "id", "img", "y", 600, NULL);
		put_str(&pre, 1, "img");
		put_float(&sc, 10, 0.5f);
		put_float(&sc, 20, 3.0f); /* blue */
		put_float(&sc, 21, 2.0f); /* green */
		put_float(&sc, 22, 1.0f); /* red */
		put_msg(&pre, 10, &sc);
		put_msg(&net, 2, &pre);
		struct buf in = image_feature("img", 1, 2, bgr ? 30 : 20);
		struct buf o = array_feature("y", NULL, 0);
		struct buf m = model(&in, 1, &o, 1, NULL, &net, 1, bgr ? 0 : 1, 500);
		/* two pixels HWC, RGB: (10,20,30) (40,50,60) */
		al_tensor *px = al_tensor_new(AL_DT_UINT8, 3, (int64_t[]){1, 2, 3});
		memcpy(al_tensor_data(px), (float[]){10, 20, 30, 40, 50, 60}, 6 * sizeof(float));
		struct al_named_tensor ins = {"img", px};
		struct run r = run_model(&m, &ins, 1);
		if (bgr) /* rank-5 image mapping, channels B, G, R */
			expect_out(&r, "y", 5, (int64_t[]){1, 1, 3, 1, 2}, (float[]){18, 33, 12, 27, 6, 21}, 0);
		else
			expect_out(&r, "y", 4, (int64_t[]){1, 3, 1, 2}, (float[]){6, 21, 12, 27, 18, 33}, 0);
		run_free(&r);
		al_tensor_free(px);
	}
}

/* ================================================================ weights */

/* loadConstantND of shape [n] whose data is WeightParams wp. */
static void const_layer(struct buf *net, const char *name, int64_t n, struct buf *wp)
{
	struct buf p = {0};
	put_packed(&p, 1, &n, 1);
	put_msg(&p, 2, wp);
	layer(net, name, "", name, 1070, &p);
}

static void test_weights(void **state)
{
	(void)state;
	struct buf net = {0}, w, q, lin, lut;
	/* 8-bit linear: q * 0.5 + 1 */
	w = (struct buf){0}, q = (struct buf){0}, lin = (struct buf){0};
	put_bytes(&w, 30, (uint8_t[]){0, 1, 2, 255}, 4);
	put_uint(&q, 1, 8);
	put_floats(&lin, 1, (float[]){0.5f}, 1);
	put_floats(&lin, 2, (float[]){1.0f}, 1);
	put_msg(&q, 101, &lin);
	put_msg(&w, 40, &q);
	const_layer(&net, "lin8", 4, &w);
	/* per-channel linear scales over [2 x 2] */
	w = (struct buf){0}, q = (struct buf){0}, lin = (struct buf){0};
	put_bytes(&w, 30, (uint8_t[]){1, 2, 3, 4}, 4);
	put_uint(&q, 1, 8);
	put_floats(&lin, 1, (float[]){1, 10}, 2);
	put_msg(&q, 101, &lin);
	put_msg(&w, 40, &q);
	const_layer(&net, "chan", 4, &w);
	/* 4-bit lookup table, MSB first: 1, 2, 15, 0 */
	w = (struct buf){0}, q = (struct buf){0}, lut = (struct buf){0};
	float table[16];
	for (int i = 0; i < 16; i++)
		table[i] = (float)(10 * i);
	put_bytes(&w, 30, (uint8_t[]){0x12, 0xF0}, 2);
	put_uint(&q, 1, 4);
	put_floats(&lut, 1, table, 16);
	put_msg(&q, 102, &lut);
	put_msg(&w, 40, &q);
	const_layer(&net, "lut4", 4, &w);
	/* fp16 */
	w = (struct buf){0};
	put_bytes(&w, 2, (uint8_t[]){0x00, 0x3C, 0x00, 0xC0}, 4);
	const_layer(&net, "half", 2, &w);
	/* unpacked floatValue */
	w = (struct buf){0};
	put_float(&w, 1, 1.5f);
	put_float(&w, 1, -2.5f);
	const_layer(&net, "unpacked", 2, &w);
	struct run r = run1((int64_t[]){1}, 1, (float[]){0}, "lin8 chan lut4 half unpacked", &net);
	expect_out(&r, "lin8", 1, (int64_t[]){4}, (float[]){1, 1.5f, 2, 128.5f}, 0);
	expect_out(&r, "chan", 1, (int64_t[]){4}, (float[]){1, 2, 30, 40}, 0);
	expect_out(&r, "lut4", 1, (int64_t[]){4}, (float[]){10, 20, 150, 0}, 0);
	expect_out(&r, "half", 1, (int64_t[]){2}, (float[]){1, -2}, 0);
	expect_out(&r, "unpacked", 1, (int64_t[]){2}, (float[]){1.5f, -2.5f}, 0);
	run_free(&r);

	/* fp16 precision rounds the weights (1 + 2^-12 is not an fp16 value) */
	net = (struct buf){0};
	constant(&net, "k", 1.0f + 1.0f / 4096.0f);
	struct buf m = simple_model((int64_t[]){1}, 1, "k", &net);
	al_tensor *x = tensor((float[]){0}, 1, (int64_t[]){1});
	struct al_named_tensor in = {"x", x};
	struct al_run_opts opts = {.precision = AL_PREC_FP16};
	r = run_model_opts(&m, &in, 1, &opts);
	expect_out(&r, "k", 1, (int64_t[]){1}, (float[]){1}, 0);
	run_free(&r);
	al_tensor_free(x);

	/* ... but not shapes and indices: 4097 is no fp16 value, a shape keeps it */
	net = (struct buf){0};
	layer(&net, "shape", "x", "s", 1065, NULL);
	constant(&net, "zero", 0);
	layer(&net, "pick", "s zero", "n", 930, NULL);
	layer(&net, "twice", "n n", "nn", 880, NULL);
	m = simple_model((int64_t[]){4097}, 1, "nn", &net);
	x = tensor(NULL, 1, (int64_t[]){4097});
	in.t = x;
	r = run_model_opts(&m, &in, 1, &opts);
	expect_out(&r, "nn", 1, (int64_t[]){1}, (float[]){8194}, 0);
	run_free(&r);
	al_tensor_free(x);
}

/* ================================================================ data movement */

/* NeuralNetwork.proto's own examples for reorganizeData, padding and concatND. */
static void test_documented_examples(void **state)
{
	(void)state;
	float x16[16];
	for (int i = 0; i < 16; i++)
		x16[i] = (float)(i + 1);
	struct buf net = {0}, p;
	p = (struct buf){0};
	put_uint(&p, 1, 1);
	put_uint(&p, 2, 2);
	layer(&net, "d2s", "x", "d2s", 345, &p);
	p = (struct buf){0};
	put_uint(&p, 1, 2);
	put_uint(&p, 2, 2);
	layer(&net, "shuffle", "x", "ps", 345, &p);
	p = (struct buf){0};
	put_uint(&p, 2, 2);
	layer(&net, "s2d", "d2s", "back", 345, &p);
	struct run r = run1((int64_t[]){8, 1, 2}, 3, x16, "d2s ps back", &net);
	expect_out(&r, "d2s", 3, (int64_t[]){2, 2, 4},
		   (float[]){1, 5, 2, 6, 9, 13, 10, 14, 3, 7, 4, 8, 11, 15, 12, 16}, 0);
	expect_out(&r, "ps", 3, (int64_t[]){2, 2, 4},
		   (float[]){1, 3, 2, 4, 5, 7, 6, 8, 9, 11, 10, 12, 13, 15, 14, 16}, 0);
	expect_out(&r, "back", 3, (int64_t[]){8, 1, 2}, x16, 0);
	run_free(&r);

	/* padding (top 2, left 2) of [1,3,4] = 1..12: reflection and replication */
	net = (struct buf){0};
	for (int mode = 2; mode <= 3; mode++) {
		struct buf ba = {0}, e1 = {0}, e2 = {0};
		p = (struct buf){0};
		put_bytes(&p, (uint32_t)mode, "", 0);
		put_uint(&e1, 1, 2);
		put_uint(&e2, 1, 2);
		put_msg(&ba, 10, &e1);
		put_msg(&ba, 10, &e2);
		put_msg(&p, 10, &ba);
		layer(&net, mode == 2 ? "reflect" : "replicate", "x", mode == 2 ? "rf" : "rp", 200, &p);
	}
	r = run1((int64_t[]){1, 3, 4}, 3, x16, "rf rp", &net);
	const int64_t d156[3] = {1, 5, 6};
	expect_out(&r, "rf", 3, d156,
		   (float[]){11, 10, 9, 10, 11, 12, 7, 6, 5, 6, 7, 8, 3, 2, 1, 2, 3, 4,
			     7, 6, 5, 6, 7, 8, 11, 10, 9, 10, 11, 12}, 0);
	expect_out(&r, "rp", 3, d156,
		   (float[]){1, 1, 1, 2, 3, 4, 1, 1, 1, 2, 3, 4, 1, 1, 1, 2, 3, 4,
			     5, 5, 5, 6, 7, 8, 9, 9, 9, 10, 11, 12}, 0);
	run_free(&r);

	/* concatND interleave along axis 0; constantPad to (3, 5) with 9 */
	net = (struct buf){0};
	constant(&net, "seven", 6);
	layer(&net, "plus6", "x seven", "x2", 880, NULL);
	p = (struct buf){0};
	put_uint(&p, 2, 1);
	layer(&net, "interleave", "x x2", "il", 980, &p);
	p = (struct buf){0};
	put_float(&p, 1, 9);
	put_packed(&p, 2, (int64_t[]){0, 1, 2, 0}, 4);
	layer(&net, "pad", "x", "cp", 1155, &p);
	r = run1((int64_t[]){3, 2}, 2, x16, "il cp", &net);
	expect_out(&r, "il", 2, (int64_t[]){6, 2}, (float[]){1, 2, 7, 8, 3, 4, 9, 10, 5, 6, 11, 12}, 0);
	expect_out(&r, "cp", 2, (int64_t[]){4, 4}, (float[]){9, 9, 1, 2, 9, 9, 3, 4, 9, 9, 5, 6, 9, 9, 9, 9}, 0);
	run_free(&r);

	/* oneHot [2, 0] and [2, -1]; whereNonZero of the proto's 3x3 */
	net = (struct buf){0};
	p = (struct buf){0};
	put_uint(&p, 1, 4);
	put_uint(&p, 2, (uint64_t)-1);
	put_float(&p, 3, 5);
	put_float(&p, 4, -1);
	layer(&net, "onehot", "x", "oh", 1450, &p);
	r = run1((int64_t[]){2}, 1, (float[]){2, -1}, "oh", &net);
	expect_out(&r, "oh", 2, (int64_t[]){2, 4}, (float[]){-1, -1, 5, -1, -1, -1, -1, -1}, 0);
	run_free(&r);
	net = (struct buf){0};
	layer(&net, "nz", "x", "nz", 1313, NULL);
	r = run1((int64_t[]){3, 3}, 2, (float[]){1, 2, 1, 0, 2, 2, 2, 1, 0}, "nz", &net);
	expect_out(&r, "nz", 2, (int64_t[]){7, 2}, (float[]){0, 0, 0, 1, 0, 2, 1, 1, 1, 2, 2, 0, 2, 1}, 0);
	run_free(&r);
}

static void test_slices(void **state)
{
	(void)state;
	float x[125];
	for (int i = 0; i < 125; i++)
		x[i] = (float)i;
	/* input[:3:2, 2::2, ::2] and input[:3:2, 2, ::2] (NeuralNetwork.proto's example) */
	struct buf net = {0}, p;
	for (int sq = 0; sq < 2; sq++) {
		p = (struct buf){0};
		put_packed(&p, 1, (int64_t[]){1, 2, 3}, 3);
		put_packed(&p, 2, (int64_t[]){1, 0, 1}, 3);
		put_packed(&p, 3, (int64_t[]){3, -3, 2}, 3);
		put_packed(&p, 4, (int64_t[]){0, 1, 1}, 3);
		put_packed(&p, 5, (int64_t[]){2, 2, 2}, 3);
		put_packed(&p, 6, (int64_t[]){0, sq, 0}, 3);
		layer(&net, sq ? "sq" : "plain", "x", sq ? "sq" : "pl", 995, &p);
	}
	/* reverse of the last axis, legacy slice of the channels [1:5:3], sliceBySize */
	p = (struct buf){0};
	put_packed(&p, 1, (int64_t[]){0, 0, 1}, 3);
	layer(&net, "rev", "x", "rv", 960, &p);
	p = (struct buf){0};
	put_uint(&p, 1, 1);
	put_uint(&p, 2, 5);
	put_uint(&p, 3, 3);
	layer(&net, "legacy", "x", "lg", 350, &p);
	float want_pl[12], want_sq[6], want_lg[50];
	int k = 0;
	for (int a = 0; a < 3; a += 2)
		for (int b = 2; b < 5; b += 2)
			for (int c = 0; c < 5; c += 2)
				want_pl[k++] = x[a * 25 + b * 5 + c];
	k = 0;
	for (int a = 0; a < 3; a += 2)
		for (int c = 0; c < 5; c += 2)
			want_sq[k++] = x[a * 25 + 2 * 5 + c];
	k = 0;
	for (int a = 1; a < 5; a += 3)
		for (int b = 0; b < 25; b++)
			want_lg[k++] = x[a * 25 + b];
	struct run r = run1((int64_t[]){5, 5, 5}, 3, x, "pl sq rv lg", &net);
	expect_out(&r, "pl", 3, (int64_t[]){2, 2, 3}, want_pl, 0);
	expect_out(&r, "sq", 2, (int64_t[]){2, 3}, want_sq, 0);
	expect_out(&r, "lg", 3, (int64_t[]){2, 5, 5}, want_lg, 0);
	const float *rv = al_tensor_data(out_named(&r, "rv"));
	assert_float_equal(rv[0], 4, 0);
	assert_float_equal(rv[4], 0, 0);
	assert_float_equal(rv[124], 120, 0);
	run_free(&r);
}

static void test_gather_scatter_and_friends(void **state)
{
	(void)state;
	struct buf net = {0}, p;
	constant(&net, "i", -1);
	p = (struct buf){0};
	put_uint(&p, 1, 1);
	layer(&net, "gather", "x i", "g", 930, &p);
	/* scatter ADD of [5, 6] at rows 1 and 3 of a [4, 2] zero container */
	p = (struct buf){0};
	put_packed(&p, 2, (int64_t[]){4, 2}, 2);
	layer(&net, "zeros", "", "z", 1085, &p);
	struct buf c2 = {0};
	put_packed(&c2, 1, (int64_t[]){2}, 1);
	wfloats(&c2, 2, (float[]){1, 3}, 2);
	layer(&net, "idx", "", "idx", 1070, &c2);
	c2 = (struct buf){0};
	put_packed(&c2, 1, (int64_t[]){2, 2}, 2);
	wfloats(&c2, 2, (float[]){5, 5, 6, 6}, 4);
	layer(&net, "upd", "", "upd", 1070, &c2);
	p = (struct buf){0};
	put_uint(&p, 2, 1);
	layer(&net, "scatter", "z idx upd", "sc", 935, &p);
	/* topK 2 along the last axis, bottom K too; splitND [1, 2]; tile [2, 1] */
	p = (struct buf){0};
	put_uint(&p, 1, (uint64_t)-1);
	put_uint(&p, 2, 2);
	layer(&net, "top", "x", "tv ti", 1015, &p);
	p = (struct buf){0};
	put_uint(&p, 1, (uint64_t)-1);
	put_uint(&p, 2, 2);
	put_uint(&p, 3, 1);
	layer(&net, "bottom", "x", "bv bi", 1015, &p);
	p = (struct buf){0};
	put_uint(&p, 1, 1);
	put_packed(&p, 3, (int64_t[]){1, 2}, 2);
	layer(&net, "split", "x", "s1 s2", 975, &p);
	p = (struct buf){0};
	put_packed(&p, 1, (int64_t[]){2, 1}, 2);
	layer(&net, "tile", "x", "tl", 920, &p);
	/* argMax keeping the axis, reduceSum over both axes dropped, legacy LOGSUM */
	p = (struct buf){0};
	put_uint(&p, 1, 1);
	layer(&net, "argmax", "x", "am", 1025, &p);
	p = (struct buf){0};
	put_uint(&p, 3, 1);
	layer(&net, "sum", "x", "sm", 1270, &p);
	layer(&net, "shape", "x", "sh", 1065, NULL);
	/* x = [[3, 1, 4], [1, 5, 9]] */
	struct run r = run1((int64_t[]){2, 3}, 2, (float[]){3, 1, 4, 1, 5, 9},
			    "g sc tv ti bv bi s1 s2 tl am sm sh", &net);
	expect_out(&r, "g", 2, (int64_t[]){2, 1}, (float[]){4, 9}, 0);
	expect_out(&r, "sc", 2, (int64_t[]){4, 2}, (float[]){0, 0, 5, 5, 0, 0, 6, 6}, 0);
	expect_out(&r, "tv", 2, (int64_t[]){2, 2}, (float[]){4, 3, 9, 5}, 0);
	expect_out(&r, "ti", 2, (int64_t[]){2, 2}, (float[]){2, 0, 2, 1}, 0);
	expect_out(&r, "bv", 2, (int64_t[]){2, 2}, (float[]){1, 3, 1, 5}, 0);
	expect_out(&r, "bi", 2, (int64_t[]){2, 2}, (float[]){1, 0, 0, 1}, 0);
	expect_out(&r, "s1", 2, (int64_t[]){2, 1}, (float[]){3, 1}, 0);
	expect_out(&r, "s2", 2, (int64_t[]){2, 2}, (float[]){1, 4, 5, 9}, 0);
	expect_out(&r, "tl", 2, (int64_t[]){4, 3}, (float[]){3, 1, 4, 1, 5, 9, 3, 1, 4, 1, 5, 9}, 0);
	expect_out(&r, "am", 2, (int64_t[]){2, 1}, (float[]){2, 2}, 0);
	expect_out(&r, "sm", 1, (int64_t[]){1}, (float[]){23}, 0);
	expect_out(&r, "sh", 1, (int64_t[]){2}, (float[]){2, 3}, 0);
	run_free(&r);
}

/* Legacy layout layers on a rank-5 blob and normalisations. */
static void test_legacy_layout(void **state)
{
	(void)state;
	struct buf net = {0}, p, ba = {0}, e1 = {0}, e2 = {0};
	/* permute [0,3,1,2]: [S,B,C,H,W] -> [S,B,W,C,H] */
	p = (struct buf){0};
	put_packed(&p, 1, (int64_t[]){0, 3, 1, 2}, 4);
	layer(&net, "permute", "x", "pm", 310, &p);
	/* crop 0 rows from the top, 1 column from the right */
	p = (struct buf){0};
	put_uint(&e1, 1, 0);
	put_uint(&e2, 2, 1);
	put_msg(&ba, 10, &e1);
	put_msg(&ba, 10, &e2);
	put_msg(&p, 1, &ba);
	layer(&net, "crop", "x", "cr", 190, &p);
	/* batchnorm gamma 2, beta 1, mean 1, variance 4 (eps 1e-5) */
	p = (struct buf){0};
	put_uint(&p, 1, 2);
	wfloats(&p, 15, (float[]){2, 2}, 2);
	wfloats(&p, 16, (float[]){1, 1}, 2);
	wfloats(&p, 17, (float[]){1, 1}, 2);
	wfloats(&p, 18, (float[]){4, 4}, 2);
	layer(&net, "bn", "x", "bn", 160, &p);
	/* legacy reduce SUM over C, softmax over C, mvn across channels without variance */
	p = (struct buf){0};
	put_uint(&p, 3, 2);
	layer(&net, "reduce", "x", "rd", 280, &p);
	layer(&net, "softmax", "x", "smx", 175, NULL);
	p = (struct buf){0};
	put_uint(&p, 1, 1);
	layer(&net, "mvn", "x", "mv", 165, &p);
	struct buf in = array_feature("x", (int64_t[]){2, 1, 3}, 3);
	struct buf o[6] = {array_feature("pm", NULL, 0), array_feature("cr", NULL, 0),
			   array_feature("bn", NULL, 0), array_feature("rd", NULL, 0),
			   array_feature("smx", NULL, 0), array_feature("mv", NULL, 0)};
	struct buf m = model(&in, 1, o, 6, NULL, &net, 0, 0, 500);
	al_tensor *x = tensor((float[]){1, 2, 3, 4, 5, 6}, 3, (int64_t[]){2, 1, 3});
	struct al_named_tensor ins = {"x", x};
	struct run r = run_model(&m, &ins, 1);
	expect_out(&r, "pm", 5, (int64_t[]){1, 1, 3, 2, 1}, (float[]){1, 4, 2, 5, 3, 6}, 0);
	expect_out(&r, "cr", 5, (int64_t[]){1, 1, 2, 1, 2}, (float[]){1, 2, 4, 5}, 0);
	float bn[6];
	for (int i = 0; i < 6; i++)
		bn[i] = 2.0f * ((float)(i + 1) - 1.0f) / sqrtf(4.0f + 1e-5f) + 1.0f;
	expect_out(&r, "bn", 5, (int64_t[]){1, 1, 2, 1, 3}, bn, 1e-5f);
	expect_out(&r, "rd", 5, (int64_t[]){1, 1, 1, 1, 3}, (float[]){5, 7, 9}, 0);
	float e = 1.0f / (1.0f + expf(3.0f));
	expect_out(&r, "smx", 5, (int64_t[]){1, 1, 2, 1, 3}, (float[]){e, e, e, 1 - e, 1 - e, 1 - e}, 1e-6f);
	expect_out(&r, "mv", 5, (int64_t[]){1, 1, 2, 1, 3}, (float[]){-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f},
		   1e-6f);
	run_free(&r);
	al_tensor_free(x);
}

/* ================================================================ failures */

static void test_unsupported(void **state)
{
	(void)state;
	struct buf net = {0}, p = {0};
	put_str(&p, 10, "MySwish");
	layer(&net, "sw", "x", "y", 500, &p);
	struct run r = run1((int64_t[]){1}, 1, (float[]){0}, "y", &net);
	expect_fail(&r, AL_E_UNSUPPORTED, "layer type custom is not supported", NULL);
	run_free(&r);

	net = (struct buf){0};
	p = pool_params(5, 2, 2);
	layer(&net, "pool", "x", "y", 120, &p);
	r = run1((int64_t[]){1, 1, 2, 2}, 4, (float[]){1, 2, 3, 4}, "y", &net);
	expect_fail(&r, AL_E_UNSUPPORTED, "pooling type 5", "not supported");
	run_free(&r);

	net = (struct buf){0};
	p = conv_params(1, 1, 1, 1, (float[]){1}, 1, NULL, 0);
	struct buf same = {0};
	put_uint(&same, 1, 9);
	put_msg(&p, 51, &same);
	layer(&net, "conv", "x", "y", 100, &p);
	r = run1((int64_t[]){1, 1, 2, 2}, 4, (float[]){1, 2, 3, 4}, "y", &net);
	expect_fail(&r, AL_E_UNSUPPORTED, "asymmetryMode 9", NULL);
	run_free(&r);

	net = (struct buf){0};
	p = (struct buf){0};
	put_uint(&p, 1, 1);
	layer(&net, "random", "", "y", 1195, &p);
	r = run1((int64_t[]){1}, 1, (float[]){0}, "y", &net);
	expect_fail(&r, AL_E_UNSUPPORTED, "randomUniformStatic is not supported", NULL);
	run_free(&r);
}

/* Each net (one layer on x [1,1,2,2] -> y) must fail with a diagnostic, never crash. */
static void expect_hostile(struct buf *net, enum al_status st, const char *needle)
{
	struct run r = run1((int64_t[]){1, 1, 2, 2}, 4, (float[]){1, 2, 3, 4}, "y", net);
	expect_fail(&r, st, needle, NULL);
	run_free(&r);
}

static void test_hostile(void **state)
{
	(void)state;
	struct buf net, p;
	/* innerProduct with 2^40 outputs */
	net = (struct buf){0}, p = (struct buf){0};
	put_uint(&p, 1, 4);
	put_uint(&p, 2, UINT64_C(1) << 40);
	wfloats(&p, 20, (float[]){1, 2, 3, 4}, 4);
	layer(&net, "ip", "x", "y", 140, &p);
	expect_hostile(&net, AL_E_FORMAT, "outputChannels");
	/* weights of the wrong length */
	net = (struct buf){0}, p = (struct buf){0};
	put_uint(&p, 1, 4);
	put_uint(&p, 2, 2);
	wfloats(&p, 20, (float[]){1, 2, 3, 4, 5}, 5);
	layer(&net, "ip", "x", "y", 140, &p);
	expect_hostile(&net, AL_E_FORMAT, "the shape needs 8");
	/* an odd fp16 byte count */
	net = (struct buf){0}, p = (struct buf){0};
	struct buf w = {0};
	put_packed(&p, 1, (int64_t[]){2}, 1);
	put_bytes(&w, 2, (uint8_t[]){0, 0x3c, 0}, 3);
	put_msg(&p, 2, &w);
	layer(&net, "c", "", "y", 1070, &p);
	expect_hostile(&net, AL_E_FORMAT, "fp16");
	/* 9-bit quantization */
	net = (struct buf){0}, p = (struct buf){0}, w = (struct buf){0};
	struct buf q = {0};
	put_packed(&p, 1, (int64_t[]){1}, 1);
	put_bytes(&w, 30, (uint8_t[]){1, 2}, 2);
	put_uint(&q, 1, 9);
	put_msg(&w, 40, &q);
	put_msg(&p, 2, &w);
	layer(&net, "c", "", "y", 1070, &p);
	expect_hostile(&net, AL_E_UNSUPPORTED, "9-bit");
	/* a constant of 2^62 elements */
	net = (struct buf){0}, p = (struct buf){0};
	put_packed(&p, 1, (int64_t[]){INT64_C(1) << 31, INT64_C(1) << 31}, 2);
	wfloats(&p, 2, (float[]){1}, 1);
	layer(&net, "c", "", "y", 1070, &p);
	expect_hostile(&net, AL_E_UNSUPPORTED, "too large");
	/* fillStatic asking for 16 GB */
	net = (struct buf){0}, p = (struct buf){0};
	put_packed(&p, 2, (int64_t[]){65536, 65536}, 2);
	layer(&net, "fill", "", "y", 1085, &p);
	expect_hostile(&net, AL_E_UNSUPPORTED, "activations allowed");
	/* a kernel of 2^50 */
	net = (struct buf){0};
	p = conv_params(1, 1, INT64_C(1) << 50, 1, (float[]){1}, 1, NULL, 0);
	layer(&net, "conv", "x", "y", 100, &p);
	expect_hostile(&net, AL_E_FORMAT, "each must be in");
	/* gather by a NaN / out-of-range index */
	net = (struct buf){0};
	constant(&net, "i", NAN);
	layer(&net, "g", "x i", "y", 930, NULL);
	expect_hostile(&net, AL_E_FORMAT, "not an integer");
	/* reshape to the wrong count, and an undefined input */
	net = (struct buf){0}, p = (struct buf){0};
	put_packed(&p, 1, (int64_t[]){3, -1}, 2);
	layer(&net, "r", "x", "y", 1140, &p);
	expect_hostile(&net, AL_E_FORMAT, "-1");
	net = (struct buf){0};
	layer(&net, "a", "x nowhere", "y", 880, NULL);
	expect_hostile(&net, AL_E_FORMAT, "is not defined");
	/* upsample to a huge size, a scale of the wrong shape */
	net = (struct buf){0};
	p = upsample_params(INT64_C(1) << 40, 1, 0, 0);
	layer(&net, "up", "x", "y", 210, &p);
	expect_hostile(&net, AL_E_FORMAT, "scaling factor");
	net = (struct buf){0}, p = (struct buf){0};
	put_packed(&p, 1, (int64_t[]){3}, 1);
	wfloats(&p, 2, (float[]){1, 2, 3}, 3);
	layer(&net, "sc", "x", "y", 245, &p);
	expect_hostile(&net, AL_E_FORMAT, "does not fit");
	/* a loopBreak outside a loop */
	net = (struct buf){0};
	layer(&net, "brk", "", "", 620, NULL);
	layer(&net, "id", "x", "y", 600, NULL);
	expect_hostile(&net, AL_E_FORMAT, "outside a loop");
}

/* Failing allocations anywhere in a run give a clean error, never a crash or leak. */
static void test_alloc_failures(void **state)
{
	(void)state;
	for (unsigned long k = 1; k < 400; k++) {
		struct buf m = classifier_model(false);
		struct run r = {NULL, al_diags_new(), m.p, NULL, 0, AL_OK};
		assert_int_equal(al_model_open_buffer(m.p, m.n, NULL, 0, "mem", &r.m, r.d), AL_OK);
		al_tensor *x = tensor((float[]){1, 3, 2}, 1, (int64_t[]){3});
		struct al_named_tensor in = {"x", x};
		ali_alloc_fail_after(k);
		r.st = al_model_run(r.m, &in, 1, NULL, &r.outs, &r.n_outs, r.d);
		unsigned long used = ali_alloc_fail_after(0);
		if (r.st != AL_OK)
			assert_true(al_diags_errors(r.d) > 0);
		al_tensor_free(x);
		run_free(&r);
		if (used < k) /* the run needed fewer allocations: every point was tried */
			break;
	}
}

/* ================================================================ reference models */

/* max|a - b| / max|b| over the values (strings: equal or 1). */
static double rel_err(const al_tensor *a, const al_tensor *b)
{
	if (al_tensor_dtype(b) == AL_DT_STRING)
		return al_tensor_string(a, 0) && al_tensor_string(b, 0) &&
				       strcmp(al_tensor_string(a, 0), al_tensor_string(b, 0)) == 0
			       ? 0.0
			       : 1.0;
	if (al_tensor_count(a) != al_tensor_count(b))
		return INFINITY;
	const float *x = ((struct al_tensor *)a)->f, *y = ((struct al_tensor *)b)->f;
	double mx = 0, err = 0;
	for (size_t i = 0; i < al_tensor_count(a); i++) {
		double d = fabs((double)x[i] - (double)y[i]);
		err = d > err || isnan(d) ? d : err;
		mx = fabs(y[i]) > mx ? fabs(y[i]) : mx;
	}
	return mx > 0 ? err / mx : err;
}

/* Run model file `path` on the inputs in dir (DIR/<input>.npy) and compare every
 * output with DIR/<output>.npy. Returns the worst relative error (-1: skipped). */
static double check_reference(const char *path, const char *dir)
{
	char f[8192 + 512];
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(path, &m, d), AL_OK);
	const struct al_submodel *s = al_model_get(m, 0);
	struct al_named_tensor in[8];
	size_t n_in = 0;
	for (uint32_t i = 0; i < s->n_inputs && n_in < 8; i++) {
		snprintf(f, sizeof f, "%s/%s.npy", dir, s->inputs[i].name);
		in[n_in].name = s->inputs[i].name;
		assert_int_equal(al_npy_read(f, &in[n_in].t, d), AL_OK);
		n_in++;
	}
	struct al_named_tensor *outs = NULL;
	size_t n_outs = 0;
	enum al_status st = al_model_run(m, in, n_in, NULL, &outs, &n_outs, d);
	if (st != AL_OK) {
		print_diags(d);
		fail_msg("%s did not run", path);
	}
	double worst = 0;
	for (size_t i = 0; i < n_outs; i++) {
		al_tensor *ref = NULL;
		snprintf(f, sizeof f, "%s/%s.npy", dir, outs[i].name);
		assert_int_equal(al_npy_read(f, &ref, d), AL_OK);
		double e = rel_err(outs[i].t, ref);
		worst = e > worst ? e : worst;
		al_tensor_free(ref);
	}
	for (size_t i = 0; i < n_in; i++)
		al_tensor_free(in[i].t);
	al_outputs_free(outs, n_outs);
	al_model_free(m);
	al_diags_free(d);
	return worst;
}

/* The repo's fixtures: converted models with their PyTorch outputs. */
static void test_fixtures(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"transformer_encoder__nn_ios13.mlmodel", "transformer_encoder"},
		{"gather_index_select__nn_ios13.mlmodel", "gather_index_select__nn"},
		{"upsample_x4_nearest__nn_ios13.mlmodel", "upsample_x4_nearest"},
		{"cumsum__nn_ios14.mlmodel", "cumsum"},
		{"gru__nn_ios14.mlmodel", "gru"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char model_path[4096], dir[4096];
		snprintf(model_path, sizeof model_path, "%s", fixture("converted/"));
		strncat(model_path, cases[i][0], sizeof model_path - strlen(model_path) - 1);
		snprintf(dir, sizeof dir, "%s", fixture("reference/"));
		strncat(dir, cases[i][1], sizeof dir - strlen(dir) - 1);
		double e = check_reference(model_path, dir);
		print_message("  %-40s max rel error %.3g\n", cases[i][0], e);
		assert_true(e <= 1e-4);
	}
}

/* Every NeuralNetwork model of the shared corpus with a reference (index.json):
 * fp32 weights within 1e-4 of max|ref|, fp16 weights (_w16) within 3e-3. */
static void test_corpus_references(void **state)
{
	(void)state;
	const char *idx = corpus_file("reference/index.json");
	if (!idx) {
		skip();
		return;
	}
	json_object *j = json_object_from_file(idx);
	assert_non_null(j);
	int n = 0;
	json_object_object_foreach(j, name, val)
	{
		size_t len = strlen(name);
		if (len < 8 || strcmp(name + len - 8, ".mlmodel") != 0 || !strstr(name, "__nn_"))
			continue;
		char rel[1024], path[8192], dir[8192];
		snprintf(rel, sizeof rel, "converted/%s", name);
		snprintf(path, sizeof path, "%s", corpus_file(rel));
		snprintf(rel, sizeof rel, "reference/%s", json_object_get_string(val));
		snprintf(dir, sizeof dir, "%s", corpus_file(rel));
		double e = check_reference(path, dir), tol = strstr(name, "_w16") ? 3e-3 : 1e-4;
		print_message("  %-44s max rel error %.3g (tol %g)\n", name, e, tol);
		assert_true(e <= tol);
		n++;
	}
	json_object_put(j);
	assert_true(n >= 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_upsample),
		cmocka_unit_test(test_broadcastable),
		cmocka_unit_test(test_legacy_elementwise),
		cmocka_unit_test(test_rank5_mapping),
		cmocka_unit_test(test_lstm_step),
		cmocka_unit_test(test_gru_steps),
		cmocka_unit_test(test_classifier),
		cmocka_unit_test(test_control_flow),
		cmocka_unit_test(test_preprocessing),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_documented_examples),
		cmocka_unit_test(test_slices),
		cmocka_unit_test(test_gather_scatter_and_friends),
		cmocka_unit_test(test_legacy_layout),
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_corpus_references),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

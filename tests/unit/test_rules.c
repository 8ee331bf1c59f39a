/* SPDX-License-Identifier: MIT */
/* test_rules.c: the rule table and engine (src/rules*.c). A table of cases
 * {fixture, node, rule, fires or not, chip family} checks every rule, which needs
 * one case that fires and one that must not; cases needing inferred shapes or
 * costs skip while those stages report nothing. Also: table consistency, verdicts,
 * families, out-of-memory, > 1 GiB weights, docs/rules.md in sync
 * (ANELINT_UPDATE_DOCS=1 rewrites it), and real corpus models when present. */
#include "testutil.h"
#include "pbwrite.h"

#include "anelint.h"
#include "analysis.h"

#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* ================================================================ fixtures */

#define MAX_OPEN 256

static struct {
	char path[512];
	const char *target;
	al_model *m;
} cache[MAX_OPEN];
static int n_cache;
static al_user_rules *no071_rules; /* freed with the cache */

static bool same_target(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Open and check tests/data/<rel> for chip family `target` (NULL: the default)
 * once per run; NULL (and a message) on failure. */
static al_model *load_for(const char *rel, const char *target)
{
	for (int i = 0; i < n_cache; i++)
		if (strcmp(cache[i].path, rel) == 0 && same_target(cache[i].target, target))
			return cache[i].m;
	if (n_cache == MAX_OPEN)
		return NULL;
	/* "a15@ios18": a chip family and an OS release; "@ios14": the default family */
	char fam[32] = "";
	const char *at = target ? strchr(target, '@') : NULL;
	if (target)
		snprintf(fam, sizeof fam, "%.*s", at ? (int)(at - target) : (int)strlen(target), target);
	/* "no-ane071": the defaults with the model-level floor switched off, so that
	 * the partition's own floor (ANE072) shows */
	static const char no071[] = "id: ANE071\nfamilies: none\nprovenance: test\n";
	bool off071 = target && strcmp(target, "no-ane071") == 0;
	if (off071)
		fam[0] = 0;
	if (off071 && !no071_rules &&
	    al_user_rules_parse(no071, sizeof no071 - 1, "no-ane071", &no071_rules, NULL) != AL_OK)
		return NULL;
	struct al_check_opts opts = {.target = fam[0] ? al_target_find(fam) : NULL,
				     .os = at ? al_release_find(at + 1) : NULL,
				     .user_rules = off071 ? no071_rules : NULL};
	if ((fam[0] && !opts.target) || (at && !opts.os)) {
		print_error("no target %s\n", target);
		return NULL;
	}
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	enum al_status st = al_model_open(fixture(rel), &m, d);
	if (st == AL_OK)
		st = al_model_check(m, &opts, d);
	if (st != AL_OK) {
		print_error("%s: %s\n", rel, al_status_str(st));
		for (size_t i = 0; i < al_diags_count(d); i++)
			print_error("  %s\n", al_diags_get(d, i)->msg);
		al_model_free(m);
		m = NULL;
	}
	al_diags_free(d);
	snprintf(cache[n_cache].path, sizeof cache[n_cache].path, "%s", rel);
	cache[n_cache].target = target;
	cache[n_cache++].m = m;
	return m;
}

static al_model *load(const char *rel)
{
	return load_for(rel, NULL);
}

static int free_cache(void **state)
{
	(void)state;
	for (int i = 0; i < n_cache; i++)
		al_model_free(cache[i].m);
	n_cache = 0;
	al_user_rules_free(no071_rules);
	no071_rules = NULL;
	return 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = s ? strlen(s) : 0, b = strlen(tail);
	return a >= b && strcmp(s + a - b, tail) == 0;
}

static bool sub_matches(const struct al_submodel *s, const char *sel)
{
	return !sel || ends_with(s->path, sel);
}

/* Visit every node of every graph of s (nested bodies included). */
typedef void node_fn(const struct al_node *n, void *ctx);

static void walk_graph(const struct al_graph *g, node_fn *fn, void *ctx, int depth)
{
	if (!g || depth > AL_MAX_DEPTH + 1)
		return;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		fn(&g->nodes[i], ctx);
		for (uint32_t k = 0; k < g->nodes[i].n_sub; k++)
			walk_graph(g->nodes[i].sub[k], fn, ctx, depth + 1);
	}
}

static void walk(const struct al_submodel *s, node_fn *fn, void *ctx)
{
	for (uint32_t g = 0; g < s->n_graphs; g++)
		walk_graph(s->graphs[g], fn, ctx, 0);
}

static bool node_has(const struct al_node *n, const char *rule)
{
	for (uint32_t i = 0; i < n->verdict.n_rules; i++)
		if (strcmp(n->verdict.rules[i]->id, rule) == 0)
			return true;
	return false;
}

static bool sub_has(const struct al_submodel *s, const char *rule)
{
	for (uint32_t i = 0; i < s->n_findings; i++)
		if (strcmp(s->findings[i].rule->id, rule) == 0)
			return true;
	return false;
}

/* The node named `name` (or of type "@type") in the selected sub-models. */
struct find {
	const char *sel;
	const char *rule;
	const struct al_node *found;
	unsigned matched, fired;
};

static void find_node(const struct al_node *n, void *ctx)
{
	struct find *f = ctx;
	bool match = f->sel[0] == '@' ? n->type && strcmp(n->type, f->sel + 1) == 0
				      : n->name && strcmp(n->name, f->sel) == 0;
	if (!match)
		return;
	f->matched++;
	if (!f->found)
		f->found = n;
	/* a partition rule (ANE072) fires on a node by moving it (al_verdict.moved_by) */
	const struct al_rule *mv = n->verdict.moved_by;
	if (f->rule && (node_has(n, f->rule) || (mv && mv->id && strcmp(mv->id, f->rule) == 0)))
		f->fired++;
}

static const struct al_node *node_in(al_model *m, const char *sub, const char *name)
{
	struct find f = {.sel = name};
	for (size_t i = 0; m && i < al_model_count(m); i++)
		if (sub_matches(al_model_get(m, i), sub))
			walk(al_model_get(m, i), find_node, &f);
	return f.found;
}

/* ================================================================ the case table */

/* What a case needs from stages other than the rules; without it the case skips. */
enum { NEEDS_NOTHING, NEEDS_SHAPES, NEEDS_COST };

struct rcase {
	const char *fixture; /* under tests/data */
	const char *sub;     /* sub-model path suffix, NULL = every sub-model */
	const char *node;    /* layer/op name, "@type" = every node of that type, NULL = model finding */
	const char *rule;
	bool fires;
	const char *target;  /* chip family id or alias, optionally "@" and an OS release
			      * ("a15@ios18", "@ios14"); NULL = the defaults */
	int needs;           /* NEEDS_SHAPES: inferred NN shapes; NEEDS_COST: every layer's cost */
};
#define SHAPES NULL, NEEDS_SHAPES
#define COST NULL, NEEDS_COST

#define CV(f) "converted/" f
#define CR(f) "crafted/" f
#define MO(f) "modern/" f
#define OB(f) "observed/" f /* models of tests/observed (tools/mkobserved.py) */

/* Rows leave out the trailing fields they do not need (target, needs). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct rcase cases[] = {
	/* ---- ANE001 custom layer */
	{CV("builder__custom_layer.mlmodel"), NULL, "custom_swish", "ANE001", true},
	{CV("builder__custom_layer.mlmodel"), NULL, "@convolution", "ANE001", false},
	/* ---- ANE002 recurrent */
	{CV("builder__legacy_lstm_bilstm_gru.mlmodel"), NULL, "lstm", "ANE002", true},
	{CV("builder__legacy_lstm_bilstm_gru.mlmodel"), NULL, "bilstm", "ANE002", true},
	{CV("builder__legacy_lstm_bilstm_gru.mlmodel"), NULL, "gru", "ANE002", true},
	{CV("gru__nn_ios14.mlmodel"), NULL, "@innerProduct", "ANE002", false},
	/* ---- ANE003 gather */
	{CV("builder__nd_broadcastable_gather.mlmodel"), NULL, "gather", "ANE003", true},
	{CV("builder__nd_broadcastable_gather.mlmodel"), NULL, "gather_axis", "ANE003", true},
	{CV("gru__nn_ios14.mlmodel"), NULL, "gather_2", "ANE003", true}, /* inside a loop body */
	{CV("builder__nd_broadcastable_gather.mlmodel"), NULL, "cat", "ANE003", false},
	/* ---- ANE019 dilated convolution on iOS 13/14 (fallback), ANE004 from iOS 15 (warning) */
	{CV("dilated_conv__nn_ios13.mlmodel"), NULL, "input.1", "ANE019", true, "@ios13"},
	{CV("dilated_conv__nn_ios13.mlmodel"), NULL, "input.1", "ANE019", true, "@macos11"},
	{CV("dilated_conv__nn_ios13.mlmodel"), NULL, "input.1", "ANE004", false, "@ios14"},
	{CV("dilated_conv__nn_ios13.mlmodel"), NULL, "input.1", "ANE019", false, "@ios15"},
	{CV("dilated_conv__nn_ios13.mlmodel"), NULL, "input.1", "ANE004", true, "@ios15"},
	{CV("dilated_conv__nn_ios13.mlmodel"), NULL, "input.1", "ANE019", false},
	{CR("nn_rules.mlmodel"), NULL, "conv_tall", "ANE019", false, "@ios13"},
	/* ---- ANE004 dilated convolution (warning) */
	{CV("dilated_conv__nn_ios13.mlmodel"), NULL, "input.1", "ANE004", true},
	{CV("dilated_conv__nn_ios13.mlmodel"), NULL, "var_42", "ANE004", true}, /* [1,3] */
	{CV("builder__legacy_rank5_elementwise.mlmodel"), NULL, "dilconv", "ANE004", true},
	{CR("nn_rules.mlmodel"), NULL, "conv_tall", "ANE004", false},
	/* ---- ANE005 broadcastable */
	{CV("builder__mixed_legacy_and_broadcastable.mlmodel"), NULL, "addb", "ANE005", true},
	{CV("builder__mixed_legacy_and_broadcastable.mlmodel"), NULL, "mulb", "ANE005", true},
	{CV("builder__mixed_legacy_and_broadcastable.mlmodel"), NULL, "legacy_add", "ANE005", false},
	{CV("builder__mixed_legacy_and_broadcastable.mlmodel"), NULL, "legacy_max", "ANE005", false},
	/* ---- ANE006 ND layers */
	{CV("builder__nd_broadcastable_gather.mlmodel"), NULL, "cat", "ANE006", true},
	{CV("builder__nd_broadcastable_gather.mlmodel"), NULL, "c", "ANE006", true},
	{CV("broadcast_mul_chw_c11__nn_ios13.mlmodel"), NULL, "w", "ANE006", true},
	{CV("builder__legacy_rank5_elementwise.mlmodel"), NULL, "concat", "ANE006", false},
	{CV("builder__legacy_rank5_elementwise.mlmodel"), NULL, "k", "ANE006", false},
	/* ---- ANE007 other general-rank layers (warning only) */
	{CV("gru__nn_ios14.mlmodel"), NULL, "squeeze_2", "ANE007", true},
	{CR("nn_rules.mlmodel"), NULL, "bmm_w", "ANE007", true},
	{CV("gru__nn_ios14.mlmodel"), NULL, "gather_2", "ANE007", false},     /* ANE003 decides */
	{CV("cumsum__nn_ios14.mlmodel"), NULL, "@cumSum", "ANE007", false},   /* ANE015 decides */
	{CV("builder__mixed_legacy_and_broadcastable.mlmodel"), NULL, "addb", "ANE007", false},
	{CV("builder__nd_broadcastable_gather.mlmodel"), NULL, "cat", "ANE007", false},
	/* ---- ANE008 / ANE009 pooling */
	{CV("pool_k15_s3__nn_ios13.mlmodel"), NULL, "a", "ANE008", true},
	{CV("pool_k15_s3__nn_ios13.mlmodel"), NULL, "b", "ANE008", true},
	{CV("pool_k15_s3__nn_ios13.mlmodel"), NULL, "a", "ANE009", true},
	{CV("builder__legacy_rank5_elementwise.mlmodel"), NULL, "pool_back", "ANE008", false},
	{CV("builder__legacy_rank5_elementwise.mlmodel"), NULL, "pool_back", "ANE009", false},
	{CR("nn_rules.mlmodel"), NULL, "pool_global", "ANE008", false},
	{CR("nn_rules.mlmodel"), NULL, "pool_global", "ANE009", false},
	{CR("nn_rules.mlmodel"), NULL, "pool_s4", "ANE009", false},
	/* ---- ANE055 pooling stride 4 on iOS 13/14 */
	{CR("nn_rules.mlmodel"), NULL, "pool_s4", "ANE055", true, "@ios14"},
	{CR("nn_rules.mlmodel"), NULL, "pool_s4", "ANE055", false, "@ios15"},
	{CR("nn_rules.mlmodel"), NULL, "pool_s4", "ANE055", false},
	{CR("nn_rules.mlmodel"), NULL, "pool_global", "ANE055", false, "@ios14"},
	{CV("pool_k15_s3__nn_ios13.mlmodel"), NULL, "a", "ANE055", false, "@ios13"}, /* ANE009's */
	/* ---- ANE056 global average pooling with VALID padding, and its producer (iOS 13/14) */
	{CR("nn_releases.mlmodel"), NULL, "gap_valid", "ANE056", true, "@ios13"},
	{CR("nn_releases.mlmodel"), NULL, "conv_v", "ANE056", true, "@macos11"},
	{CR("nn_releases.mlmodel"), NULL, "gap_valid", "ANE056", false, "@ios15"},
	{CR("nn_releases.mlmodel"), NULL, "gap_valid", "ANE056", false},
	{CR("nn_releases.mlmodel"), NULL, "gap_same", "ANE056", false, "@ios13"},
	{CR("nn_releases.mlmodel"), NULL, "conv_s", "ANE056", false, "@ios13"},
	{CR("nn_releases.mlmodel"), NULL, "gmp_valid", "ANE056", false, "@ios13"},
	{CR("nn_releases.mlmodel"), NULL, "conv_m", "ANE056", false, "@ios13"},
	{CR("nn_rules.mlmodel"), NULL, "pool_global", "ANE056", true, "@ios14"}, /* 16x16 input */
	/* ---- ANE038 per-block quantized weights, ANE039 palettized with a per-channel scale */
	{MO("mlp_int4_block32_ios18.mlpackage"), NULL, "linear_0_cast_fp16", "ANE038", true},
	{MO("mlp_int4_block32_ios18.mlpackage"), NULL, "y", "ANE038", true},
	{MO("mlp_int4_block32_ios18.mlpackage"), NULL, "input_3_cast_fp16", "ANE038", false},
	{CR("mil_releases.mlpackage"), NULL, "conv_per_channel", "ANE038", false},
	{CR("mil_releases.mlpackage"), NULL, "conv_pal_scaled", "ANE038", false},
	{CR("mil_releases.mlpackage"), NULL, "conv_pal_scaled", "ANE039", true},
	{CR("mil_releases.mlpackage"), NULL, "conv_pal_scaled", "ANE039", true, "@macos26"},
	{CR("mil_releases.mlpackage"), NULL, "conv_pal_scaled", "ANE039", false, "@macos15"},
	{CR("mil_releases.mlpackage"), NULL, "conv_per_channel", "ANE039", false},
	/* ---- ANE047 state width not a multiple of 32, ANE049 rank-5 scatter */
	{OB("state_width270.mlpackage"), NULL, NULL, "ANE047", true},
	{OB("state_width256.mlpackage"), NULL, NULL, "ANE047", false},
	{OB("state_width270.mlpackage"), NULL, NULL, "ANE047", false, "@ios17"},
	{OB("kv_rank5_scatter.mlpackage"), NULL, NULL, "ANE049", true},
	{OB("kv_rank4_scatter.mlpackage"), NULL, NULL, "ANE049", false},
	/* ---- ANE048 KV cache state updated in the graph with linear projections */
	{MO("kv_decoder_h64_nh2_s32.mlpackage"), NULL, NULL, "ANE048", true},
	{MO("kv_decoder_h64_nh2_s32.mlpackage"), NULL, NULL, "ANE048", false, "@ios17"},
	{MO("mlp_int4_block32_ios18.mlpackage"), NULL, NULL, "ANE048", false}, /* no state */
	/* the cache read again by attention (q @ k^T) vs a recurrent state, also slice_update of a
	 * read_state with linear cells, never multiplied by another activation (mkstate_fixtures.py) */
	{OB("kv_cache_update_linear.mlpackage"), NULL, NULL, "ANE048", true},
	{OB("kv_cache_update_linear.mlpackage"), NULL, NULL, "ANE048", true, "@ios26"},
	{OB("recurrent_state_linear.mlpackage"), NULL, NULL, "ANE048", false},
	{OB("recurrent_state_linear.mlpackage"), NULL, NULL, "ANE048", false, "@ios18"},
	/* ---- ANE067 small scaled_dot_product_attention */
	{MO("sdpa_mil_fp16.mlpackage"), NULL, "@scaled_dot_product_attention", "ANE067", true},
	{MO("sdpa_mil_fp16.mlpackage"), NULL, "@scaled_dot_product_attention", "ANE067", false,
	 "@ios17"},
	/* ---- ANE065 resample on A15/M2 under iOS 18, ANE066 softplus on A15/M2 */
	{CR("mil_releases.mlpackage"), NULL, "resample_out", "ANE065", true, "m2@macos15"},
	{CR("mil_releases.mlpackage"), NULL, "resample_out", "ANE065", false, "m2@macos14"},
	{CR("mil_releases.mlpackage"), NULL, "resample_out", "ANE065", false, "m2@ios26"},
	{CR("mil_releases.mlpackage"), NULL, "resample_out", "ANE065", false, "m3@ios18"},
	{CR("mil_releases.mlpackage"), NULL, "relu_out", "ANE065", false, "m2@ios18"},
	{CR("mil_releases.mlpackage"), NULL, "softplus_out", "ANE066", true, "a15@ios17"},
	{CR("mil_releases.mlpackage"), NULL, "softplus_out", "ANE066", true, "a15"},
	{CR("mil_releases.mlpackage"), NULL, "softplus_out", "ANE066", false, "a15@ios16"},
	{CR("mil_releases.mlpackage"), NULL, "softplus_out", "ANE066", false, "a16"},
	/* ---- ANE010 upsample */
	{CV("upsample_x4_nearest__nn_ios13.mlmodel"), NULL, "@upsample", "ANE010", true},
	{CR("nn_rules.mlmodel"), NULL, "up_frac", "ANE010", true},
	{CR("nn_rules.mlmodel"), NULL, "up2", "ANE010", false},
	{CV("upsample_x4_nearest__nn_ios13.mlmodel"), NULL, "@upsample", "ANE010", true, "a12"},
	{CV("upsample_x4_nearest__nn_ios13.mlmodel"), NULL, "@upsample", "ANE010", false, "a15"},
	{CR("nn_rules.mlmodel"), NULL, "up_frac", "ANE010", false, "m2"},
	/* ---- ANE011 channel-broadcast multiply */
	{CV("broadcast_mul_chw_c11__nn_ios13.mlmodel"), NULL, "4", "ANE011", true},
	{CV("builder__legacy_rank5_elementwise.mlmodel"), NULL, "mul_ab", "ANE011", true},
	{CV("broadcast_mul_chw_c11__nn_ios13.mlmodel"), NULL, "5", "ANE011", false}, /* x constant */
	{CV("builder__mixed_legacy_and_broadcastable.mlmodel"), NULL, "legacy_mul_alpha", "ANE011",
	 false},
	{CR("nn_shapes.mlmodel"), NULL, "se_mul", "ANE011", true, SHAPES}, /* pooled: inferred */
	{CR("nn_shapes.mlmodel"), NULL, "sq_mul", "ANE011", false, SHAPES},
	/* ---- ANE012 batchedMatmul of two runtime inputs */
	{CR("nn_rules.mlmodel"), NULL, "bmm_dyn", "ANE012", true},
	{CR("nn_rules.mlmodel"), NULL, "bmm_w", "ANE012", false},
	/* ---- ANE013 batchnorm after convolution (warning) */
	{CR("nn_rules.mlmodel"), NULL, "bn_fold", "ANE013", true},
	{CR("nn_rules.mlmodel"), NULL, "bn_inst", "ANE013", false},
	{CR("nn_rules.mlmodel"), NULL, "bn_eps", "ANE013", false},
	/* ---- ANE014 convolution kernel width */
	{CR("nn_rules.mlmodel"), NULL, "conv_wide", "ANE014", true},
	{CR("nn_rules.mlmodel"), NULL, "conv_tall", "ANE014", false},
	{CR("nn_rules.mlmodel"), NULL, "conv_wide", "ANE014", true, "a16"},  /* kW 15 > 13 */
	{CR("nn_rules.mlmodel"), NULL, "conv_wide", "ANE014", false, "a17"}, /* kW 15 <= 15 */
	{CR("nn_rules.mlmodel"), NULL, "conv_wide", "ANE014", false, "m5"},
	{CV("dilated_conv__nn_ios13.mlmodel"), NULL, "@convolution", "ANE014", false},
	/* ---- ANE015 cumSum / fill / range */
	{CV("cumsum__nn_ios14.mlmodel"), NULL, "@cumSum", "ANE015", true},
	{CV("arange_dynamic__nn_ios13.mlmodel"), NULL, "@rangeDynamic", "ANE015", true},
	{CV("cumsum__nn_ios14.mlmodel"), NULL, "@add", "ANE015", false},
	/* ---- ANE016 control flow */
	{CV("gru__nn_ios14.mlmodel"), NULL, "while_loop_0", "ANE016", true},
	{CV("gru__nn_ios14.mlmodel"), NULL, "less_1", "ANE016", false},
	/* ---- ANE017 no ANE lowering */
	{CV("arange_dynamic__nn_ios13.mlmodel"), NULL, "@getShape", "ANE017", true},
	{CV("gru__nn_ios14.mlmodel"), NULL, "scatter_1", "ANE017", true},
	{CV("gru__nn_ios14.mlmodel"), NULL, "@innerProduct", "ANE017", false},
	/* ---- ANE018 normalization epsilon (warning) */
	{CR("nn_rules.mlmodel"), NULL, "bn_eps", "ANE018", true},
	{CR("nn_rules.mlmodel"), NULL, "ln_noeps", "ANE018", true},
	{CR("nn_rules.mlmodel"), NULL, "bn_fold", "ANE018", false},
	{CR("nn_rules.mlmodel"), NULL, "mvn_nov", "ANE018", false},

	/* ---- ANE020 CPU-only ops */
	{CV("cumsum__mlp_fp16.mlpackage"), NULL, "@cumsum", "ANE020", true},
	{CV("arange_dynamic__mlp_fp16.mlpackage"), NULL, "@range_1d", "ANE020", true},
	{CV("full_fill_dynamic__mlp_ios17_fp16.mlpackage"), NULL, "@fill_like", "ANE020", true},
	{CV("full_fill_dynamic__mlp_ios17_fp16.mlpackage"), NULL, "@fill", "ANE020", true},
	{CV("cumsum__mlp_fp16.mlpackage"), NULL, "@add", "ANE020", false},
	/* ---- ANE021 recurrent ops */
	{CV("lstm__mlp_ios17_fp16.mlpackage"), NULL, "@lstm", "ANE021", true},
	{CV("lstm__mlp_ios17_fp16.mlpackage"), NULL, "@linear", "ANE021", false},
	/* ---- ANE022 gather ops */
	{CV("gather_index_select__mlp_fp16.mlpackage"), NULL, "@gather", "ANE022", true},
	{CV("gather_index_select__mlp_fp16.mlpackage"), NULL, "@gather_along_axis", "ANE022", true},
	{CV("gather_index_select__mlp_fp16.mlpackage"), NULL, "@reduce_mean", "ANE022", false},
	/* ---- ANE023 custom_layer */
	{CR("mil_rules.mlpackage"), NULL, "custom", "ANE023", true},
	{CR("mil_rules.mlpackage"), NULL, "relu16", "ANE023", false},
	/* ---- ANE024 dilated conv (warning) */
	{CV("dilated_conv__mlp_ios17_fp16.mlpackage"), NULL, "@conv", "ANE024", true},
	{CR("mil_rules.mlpackage"), NULL, "conv_tall", "ANE024", false}, /* dilations [1,1] */
	{CR("mil_rules.mlpackage"), NULL, "conv_wide", "ANE024", false}, /* no dilations */
	/* ---- ANE025 / ANE026 pooling */
	{CV("pool_k15_s3__mlp_fp16.mlpackage"), NULL, "@max_pool", "ANE025", true},
	{CV("pool_k15_s3__mlp_fp16.mlpackage"), NULL, "@avg_pool", "ANE025", true},
	{CV("pool_k15_s3__mlp_fp16.mlpackage"), NULL, "@max_pool", "ANE026", true},
	{CV("pool_k15_s3__mlp_fp16.mlpackage"), NULL, "@concat", "ANE025", false},
	{CV("pool_k15_s3__mlp_fp16.mlpackage"), NULL, "@concat", "ANE026", false},
	/* ---- ANE027 upsample */
	{CV("upsample_x4__mlp_fp16.mlpackage"), NULL, "@upsample_nearest_neighbor", "ANE027", true},
	{CV("upsample_x4__mlp_fp16.mlpackage"), NULL, "@upsample_bilinear", "ANE027", true},
	{CV("upsample_x4__mlp_fp16.mlpackage"), NULL, "@conv", "ANE027", false},
	{CV("upsample_x4__mlp_fp16.mlpackage"), NULL, "@upsample_bilinear", "ANE027", true, "m1"},
	{CV("upsample_x4__mlp_fp16.mlpackage"), NULL, "@upsample_bilinear", "ANE027", false, "a15"},
	{CV("upsample_x4__mlp_fp16.mlpackage"), NULL, "@upsample_nearest_neighbor", "ANE027", false,
	 "a18"},
	/* ---- ANE028 conv kernel width */
	{CR("mil_rules.mlpackage"), NULL, "conv_wide", "ANE028", true},
	{CR("mil_rules.mlpackage"), NULL, "conv_tall", "ANE028", false},
	{CV("dilated_conv__mlp_ios17_fp16.mlpackage"), NULL, "@conv", "ANE028", false},
	{CR("mil_rules.mlpackage"), NULL, "conv_wide", "ANE028", true, "h15"},
	{CR("mil_rules.mlpackage"), NULL, "conv_wide", "ANE028", false, "a17"},
	/* ---- ANE029 fp32 compute */
	{CV("cumsum__mlp_fp32.mlpackage"), NULL, "@add", "ANE029", true},
	{CR("mil_rules.mlpackage"), NULL, "x32", "ANE029", true},
	{CR("mil_rules.mlpackage"), NULL, "relu32", "ANE029", true},
	{CR("mil_rules.mlpackage"), NULL, "relu16", "ANE029", false},
	/* the cast closing an fp32 island reads fp32: one of the island's invalid ops (coreai-models
	 * rules "3 invalid ops"; smpanaro fp32 mask) */
	{CR("mil_rules.mlpackage"), NULL, "back16", "ANE029", true},
	{CV("cumsum__mlp_fp16.mlpackage"), NULL, "@cast", "ANE029", false}, /* ANE030's */
	{CV("gru__mlp_fp16.mlpackage"), NULL, "@while_loop", "ANE029", false}, /* its blocks decide */
	/* ---- ANE030 fp32 I/O casts */
	{CV("cumsum__mlp_fp16.mlpackage"), NULL, "x_to_fp16", "ANE030", true, "@ios18"},
	{CV("cumsum__mlp_fp16.mlpackage"), NULL, "var_9", "ANE030", true, "@macos15"},
	{CV("cumsum__mlp_fp16.mlpackage"), NULL, "x_to_fp16", "ANE030", false},
	/* ---- ANE068 the same casts from iOS 26: on the ANE, a warning (Vx #435, #436) */
	{CV("cumsum__mlp_fp16.mlpackage"), NULL, "x_to_fp16", "ANE068", true},
	{CV("cumsum__mlp_fp16.mlpackage"), NULL, "var_9", "ANE068", true, "@ios26"},
	{CV("cumsum__mlp_fp16.mlpackage"), NULL, "x_to_fp16", "ANE068", false, "@ios18"},
	{CR("mil_rules.mlpackage"), NULL, "x32", "ANE068", false},
	{CR("mil_rules.mlpackage"), NULL, "x32", "ANE030", false},
	{CR("mil_rules.mlpackage"), NULL, "back16", "ANE030", false},
	{CV("broadcast_mul_chw_c11__mlp_ios17_fp16.mlpackage"), NULL, "@mul", "ANE030", false},
	/* ---- ANE031 int32/int64 tensors */
	{CV("arange_dynamic__mlp_fp16.mlpackage"), NULL, "@shape", "ANE031", true},
	{CR("mil_rules.mlpackage"), NULL, "topk_values", "ANE031", true}, /* indices output */
	{CV("arange_dynamic__mlp_fp16.mlpackage"), NULL, "@mul", "ANE031", false},
	{CV("gru__mlp_fp16.mlpackage"), NULL, "@while_loop", "ANE031", false}, /* int32 counter */
	/* ---- ANE032 rank > 5 */
	{CR("mil_rules.mlpackage"), NULL, "r6", "ANE032", true},
	{CR("mil_rules.mlpackage"), NULL, "relu16", "ANE032", false},
	{CR("mil_rules.mlpackage"), NULL, "r6", "ANE032", true, "a18"},
	/* ---- ANE033 control flow and lists */
	{CV("gru__mlp_fp16.mlpackage"), NULL, "@while_loop", "ANE033", true},
	{CV("gru__mlp_fp16.mlpackage"), NULL, "@less", "ANE033", false},
	/* ---- ANE034 no ANE lowering */
	{CR("mil_rules.mlpackage"), NULL, "mod_out", "ANE034", true},
	{CV("arange_dynamic__mlp_fp16.mlpackage"), NULL, "@shape", "ANE034", true},
	{CV("gru__mlp_fp16.mlpackage"), NULL, "@scatter", "ANE034", true},
	{CV("gru__mlp_fp16.mlpackage"), NULL, "@const", "ANE034", false},
	{CR("mil_rules.mlpackage"), NULL, "relu16", "ANE034", false},
	/* ---- ANE035 topk / argsort */
	{CR("mil_rules.mlpackage"), NULL, "topk_values", "ANE035", true},
	{CR("mil_rules.mlpackage"), NULL, "relu16", "ANE035", false},
	/* ---- ANE036 normalization epsilon (warning) */
	{CR("mil_rules.mlpackage"), NULL, "ln_tiny", "ANE036", true},
	{CR("mil_rules.mlpackage"), NULL, "ln_ok", "ANE036", false},
	/* ---- ANE037 classify */
	{CR("mil_rules.mlpackage"), NULL, "classLabel", "ANE037", true},
	{CR("mil_rules.mlpackage"), NULL, "relu16", "ANE037", false},

	/* ---- ANE040 range flexibility */
	{CV("arange_dynamic__nn_ios13.mlmodel"), NULL, NULL, "ANE040", true},
	{CV("arange_dynamic__mlp_fp16.mlpackage"), NULL, NULL, "ANE040", true},
	{CV("pool_k15_s3__nn_ios13.mlmodel"), NULL, NULL, "ANE040", false},
	{CR("enum_pipeline.mlmodel"), NULL, NULL, "ANE040", false},
	/* ---- ANE041 enumerated shapes on several inputs (warning) */
	{CR("enum_pipeline.mlmodel"), ":pipeline/two_enum", NULL, "ANE041", true},
	{CR("enum_pipeline.mlmodel"), ":pipeline/one_enum", NULL, "ANE041", false},
	{CR("enum_pipeline.mlmodel"), "enum_pipeline.mlmodel", NULL, "ANE041", false}, /* container */
	/* ---- ANE042 non-neural model */
	{CR("nonneural_pipeline.mlmodel"), ":pipeline/model1", NULL, "ANE042", true},
	{CR("nonneural_pipeline.mlmodel"), ":pipeline/model0", NULL, "ANE042", false},
	{CR("nonneural_pipeline.mlmodel"), "nonneural_pipeline.mlmodel", NULL, "ANE042", false},
	{CV("pool_k15_s3__nn_ios13.mlmodel"), NULL, NULL, "ANE042", false},
	/* ---- ANE043 model not analysable (warning) */
	{CR("nonneural_pipeline.mlmodel"), ":pipeline/model0", NULL, "ANE043", true},
	{CR("nonneural_pipeline.mlmodel"), ":pipeline/model1", NULL, "ANE043", false},
	{CR("nonneural_pipeline.mlmodel"), "nonneural_pipeline.mlmodel", NULL, "ANE043", false},
	/* ---- ANE044 NeuralNetwork classifier (warning) */
	{CR("nn_classifier.mlmodel"), NULL, NULL, "ANE044", true},
	{CR("nn_rules.mlmodel"), NULL, NULL, "ANE044", false},
	/* ---- ANE045 weights > 1 GiB: must-fire is test_weights_over_1gib (sparse file) */
	{CV("builder__legacy_lstm_bilstm_gru.mlmodel"), NULL, NULL, "ANE045", false},
	{CV("lstm__mlp_ios17_fp16.mlpackage"), NULL, NULL, "ANE045", false},
	/* ---- ANE046 integer input (warning) */
	{CV("builder__nd_broadcastable_gather.mlmodel"), NULL, NULL, "ANE046", true},
	{CV("gather_index_select__nn_ios13.mlmodel"), NULL, NULL, "ANE046", false}, /* fp32 idx */
	{CV("gather_index_select__mlp_fp16.mlpackage"), NULL, NULL, "ANE046", true},
	{CV("cumsum__mlp_fp16.mlpackage"), NULL, NULL, "ANE046", false},

	/* ---- ANE022 gather: every family (Core ML placement, not the hardware) */
	{CV("gather_index_select__mlp_fp16.mlpackage"), NULL, "@gather", "ANE022", true, "a16"},
	{CV("gather_index_select__mlp_fp16.mlpackage"), NULL, "@gather", "ANE022", true, "a18"},

	/* ---- ANE050 rank > 5 after a reshape (inferred) */
	{CR("nn_shapes.mlmodel"), NULL, "r6", "ANE050", true, SHAPES},
	{CR("nn_shapes.mlmodel"), NULL, "r3", "ANE050", false, SHAPES},
	{CR("nn_shapes.mlmodel"), NULL, "se_mul", "ANE050", false, SHAPES},
	/* ---- ANE051 per-axis caps: 16384 up to a16, 65536 from a17; channel 65536 */
	{CR("nn_shapes.mlmodel"), NULL, "wide_relu", "ANE051", true, SHAPES},
	{CR("nn_shapes.mlmodel"), NULL, "wide_relu", "ANE051", true, "a16", NEEDS_SHAPES},
	{CR("nn_shapes.mlmodel"), NULL, "wide_relu", "ANE051", false, "a17", NEEDS_SHAPES},
	{CR("nn_shapes.mlmodel"), NULL, "chan_relu", "ANE051", false, SHAPES},
	{CR("nn_shapes.mlmodel"), NULL, "big_conv", "ANE051", false, SHAPES},
	/* ---- ANE052 short last axis (warning) */
	{CR("nn_shapes.mlmodel"), NULL, "tall_relu", "ANE052", true, SHAPES},
	{CR("nn_shapes.mlmodel"), NULL, "flat_relu", "ANE052", false, SHAPES},
	{CR("nn_shapes.mlmodel"), NULL, "se_pool", "ANE052", false, SHAPES}, /* [1,8,1,1]: small */
	/* ---- ANE053 sin / cos layers before H15 */
	{CR("nn_shapes.mlmodel"), NULL, "sin_x", "ANE053", true},
	{CR("nn_shapes.mlmodel"), NULL, "sin_x", "ANE053", true, "a15"},
	{CR("nn_shapes.mlmodel"), NULL, "sin_x", "ANE053", false, "a16"},
	{CR("nn_shapes.mlmodel"), NULL, "sin_x", "ANE007", false},          /* ANE053 decides */
	{CR("nn_shapes.mlmodel"), NULL, "sin_x", "ANE007", true, "a16"},    /* nothing decides */
	/* ---- ANE054 cropResize before H14 */
	{CR("nn_shapes.mlmodel"), NULL, "crop_x", "ANE054", true},
	{CR("nn_shapes.mlmodel"), NULL, "crop_x", "ANE054", false, "a15"},
	{CR("nn_shapes.mlmodel"), NULL, "se_mul", "ANE054", false},

	/* ---- ANE060 channel-broadcast mul */
	{CR("mil_shapes.mlpackage"), NULL, "se_mul", "ANE060", true},
	{CV("broadcast_mul_chw_c11__mlp_ios17_fp16.mlpackage"), NULL, "var_4_cast_fp16", "ANE060",
	 true}, /* input b (1,16,1,1) */
	{CV("broadcast_mul_chw_c11__mlp_ios17_fp16.mlpackage"), NULL, "var_5_cast_fp16", "ANE060",
	 false}, /* constant w */
	{CR("mil_shapes.mlpackage"), NULL, "const_mul", "ANE060", false},
	{CR("mil_shapes.mlpackage"), NULL, "sq_mul", "ANE060", false},
	/* ---- ANE061 per-axis caps */
	{CR("mil_shapes.mlpackage"), NULL, "wide_relu", "ANE061", true},
	{CR("mil_shapes.mlpackage"), NULL, "wide_relu", "ANE061", true, "m3"},
	{CR("mil_shapes.mlpackage"), NULL, "wide_relu", "ANE061", false, "m4"},
	{CR("mil_shapes.mlpackage"), NULL, "chan_relu", "ANE061", false},
	{CR("mil_shapes.mlpackage"), NULL, "big_conv", "ANE061", false},
	/* ---- ANE062 short last axis (warning) */
	{CR("mil_shapes.mlpackage"), NULL, "tall_relu", "ANE062", true},
	{CR("mil_shapes.mlpackage"), NULL, "tall_relu", "ANE062", true, "a18"},
	{CR("mil_shapes.mlpackage"), NULL, "flat_relu", "ANE062", false},
	{CR("mil_shapes.mlpackage"), NULL, "se_mean", "ANE062", false}, /* [1,16,1,1]: small */
	{CV("transformer_encoder__mlp_ios17_fp16.mlpackage"), NULL, "@linear", "ANE062", false},
	/* ---- ANE063 sin / cos before H15 */
	{CR("mil_shapes.mlpackage"), NULL, "sin_x", "ANE063", true},
	{CR("mil_shapes.mlpackage"), NULL, "cos_x", "ANE063", true, "a15"},
	{CR("mil_shapes.mlpackage"), NULL, "sin_x", "ANE063", false, "a16"},
	{CR("mil_shapes.mlpackage"), NULL, "cos_x", "ANE063", false, "a17"},
	{CR("mil_shapes.mlpackage"), NULL, "se_mul", "ANE063", false},
	/* ---- ANE064 crop_resize / resample / affine before H14 */
	{CR("mil_shapes.mlpackage"), NULL, "crop_x", "ANE064", true},
	{CR("mil_shapes.mlpackage"), NULL, "crop_x", "ANE064", true, "a12"},
	{CR("mil_shapes.mlpackage"), NULL, "crop_x", "ANE064", false, "a15"},
	{CR("mil_shapes.mlpackage"), NULL, "sin_x", "ANE064", false},

	/* ---- ANE070 W8A8 before A17 Pro / M4 (warning) */
	{CR("mil_shapes.mlpackage"), NULL, NULL, "ANE070", true},
	{CR("mil_shapes.mlpackage"), NULL, NULL, "ANE070", true, "a16"},
	{CR("mil_shapes.mlpackage"), NULL, NULL, "ANE070", false, "a17"},
	{CR("mil_rules.mlpackage"), NULL, NULL, "ANE070", false},
	/* ---- ANE071 tiny model (needs every layer's cost) */
	{CR("nn_tiny.mlmodel"), NULL, NULL, "ANE071", true, COST},
	{CR("mil_tiny.mlpackage"), NULL, NULL, "ANE071", true, COST},
	{CR("mil_tiny.mlpackage"), NULL, NULL, "ANE071", true, "a18", NEEDS_COST},
	{CR("nn_shapes.mlmodel"), NULL, NULL, "ANE071", false, COST},
	{CR("mil_shapes.mlpackage"), NULL, NULL, "ANE071", false, COST},
	{CR("nonneural_pipeline.mlmodel"), NULL, NULL, "ANE071", false},
	/* an int8 decode linear of depth 4096 is enough work on iOS 18 (larql), not elsewhere */
	{CR("mil_decode_int8.mlpackage"), NULL, NULL, "ANE071", false, "a17@ios18", NEEDS_COST},
	{CR("mil_decode_int8.mlpackage"), NULL, NULL, "ANE071", true, "a17@ios17", NEEDS_COST},
	{CR("mil_decode_int8.mlpackage"), NULL, NULL, "ANE071", true, "a17@ios26", NEEDS_COST},
	/* a stateful model is not held to the floor (coremltools #2631, #2553): 90 MFLOP */
	{OB("state_width256.mlpackage"), NULL, NULL, "ANE071", false, COST},
	/* ---- ANE057 compiled espresso layer of no known kind (tools/mkespresso.py) */
	{"compiled/crafted_espresso.mlmodelc", NULL, "clip1", "ANE057", true},
	{"compiled/crafted_espresso.mlmodelc", NULL, "@espresso.elementwise(operation 25)", "ANE057", true},
	{"compiled/crafted_espresso.mlmodelc", NULL, "relu1", "ANE057", false},
	{"compiled/crafted_espresso.mlmodelc", NULL, "conv1", "ANE057", false},
	{CV("builder__custom_layer.mlmodel"), NULL, "custom_swish", "ANE057", false}, /* not espresso */
	/* ---- ANE072 small ANE segment (a partition rule: moves nodes, never fires per op) */
	{CR("plan_pingpong.mlmodel"), NULL, "s2", "ANE072", true, "no-ane071", NEEDS_COST},
	{CR("plan_pingpong.mlmodel"), NULL, "s2", "ANE072", false, NULL, NEEDS_COST},
	{CR("mil_shapes.mlpackage"), NULL, "@conv", "ANE072", false, NULL, NEEDS_COST},
	/* ---- ANE073-076: the partition's other moves (never fire per op, issue 29) */
	{CR("plan_susus.mlmodel"), NULL, "s2", "ANE073", true},      /* after a GPU custom layer */
	{CR("plan_pingpong.mlmodel"), NULL, "s2", "ANE073", false},
	{CV("cumsum__mlp_fp16.mlpackage"), NULL, "var_9_cast_fp16", "ANE074", true}, /* after cumsum */
	{CR("plan_susus.mlmodel"), NULL, "s2", "ANE074", false},
	{CV("gru__mlp_fp16.mlpackage"), NULL, "less_1", "ANE075", true}, /* in a while_loop */
	{CR("plan_susus.mlmodel"), NULL, "s2", "ANE075", false},
	{CR("plan_susus.mlmodel"), NULL, "s2", "ANE076", false},
	/* ---- ANE077-080: the ANE compile limits (tools/mkfixtures_limits.py; the verdicts in and
	 * out of their scope: test_compile_limit_verdicts; ANE079: test_weights_near_limit) */
	{CR("limit_attn_32k.mlpackage"), NULL, NULL, "ANE077", true, "a18@ios26"},
	{CR("limit_attn_32k.mlpackage"), NULL, NULL, "ANE077", true, "a17@ios18"},
	{CR("limit_attn_16k.mlpackage"), NULL, NULL, "ANE077", true, "a18@ios26"},
	{CR("limit_sdpa_32k.mlpackage"), NULL, NULL, "ANE077", true, "a18@ios26"},
	{CR("limit_attn_8k.mlpackage"), NULL, NULL, "ANE077", false, "a18@ios26"},
	{CR("limit_softmax_32k.mlpackage"), NULL, NULL, "ANE077", false, "a18@ios26"}, /* no scores */
	{CR("limit_tensor_5568.mlpackage"), NULL, NULL, "ANE077", false, "a18@ios26"},
	{CR("limit_tensor_5568.mlpackage"), NULL, NULL, "ANE078", true, "@ios17"},
	{CR("limit_tensor_5568.mlpackage"), NULL, NULL, "ANE078", true, "a18@ios26"},
	{CR("limit_tensor_4096.mlpackage"), NULL, NULL, "ANE078", false, "@ios17"}, /* 256 MiB ran */
	{CR("limit_attn_8k.mlpackage"), NULL, NULL, "ANE078", false, "a18@ios26"}, /* 8 MiB scores */
	{CR("huge_conv.mlmodel"), NULL, NULL, "ANE078", false, "@ios17"}, /* 32 MiB output */
	{CR("limit_tensor_5568.mlpackage"), NULL, NULL, "ANE079", false},
	{CR("limit_lut8.mlpackage"), NULL, NULL, "ANE080", true, "a18@ios26"},
	{CR("limit_lut8.mlpackage"), NULL, NULL, "ANE080", true, "a16@ios26"},
	{CR("limit_lut8.mlpackage"), NULL, NULL, "ANE080", false, "a18@ios18"}, /* not evaluated */
	{CR("limit_lut8.mlpackage"), NULL, NULL, "ANE080", false, "a18@ios27"},
	{CR("mil_releases.mlpackage"), NULL, NULL, "ANE080", false, "a18@ios26"}, /* a 4-bit LUT */
};
#pragma GCC diagnostic pop
#define N_CASES (sizeof cases / sizeof cases[0])

/* Rules whose must-fire case is a dedicated test rather than a table row. */
static const char *const fired_elsewhere[] = {"ANE045", "ANE076", "ANE079", NULL};

static unsigned n_skipped_cases;

/* Whether a case's prerequisite holds; prints a note and returns false when not. */
static bool needs_met(const struct rcase *c, al_model *m)
{
	if (c->needs == NEEDS_NOTHING)
		return true;
	for (size_t i = 0; i < al_model_count(m); i++) {
		const struct al_submodel *s = al_model_get(m, i);
		if (!sub_matches(s, c->sub) || s->n_graphs == 0 || !s->graphs[0] ||
		    s->graphs[0]->n_nodes == 0)
			continue;
		const struct al_node *n = &s->graphs[0]->nodes[0];
		if (c->needs == NEEDS_SHAPES && n->out_shapes)
			return true;
		if (c->needs == NEEDS_COST && n->cost.known)
			return true;
	}
	print_message("skip %s %s on %s: no %s yet\n", c->rule, c->node ? c->node : "(model)",
		      c->fixture, c->needs == NEEDS_SHAPES ? "inferred shapes" : "layer costs");
	n_skipped_cases++;
	return false;
}

/* One case; returns false after printing why it failed. */
static bool run_case(const struct rcase *c)
{
	al_model *m = load_for(c->fixture, c->target);
	if (!m) {
		print_error("case %s %s: cannot load %s\n", c->rule, c->node ? c->node : "(model)",
			    c->fixture);
		return false;
	}
	if (!al_rule_find(c->rule)) {
		print_error("case: no rule %s\n", c->rule);
		return false;
	}
	if (!needs_met(c, m))
		return true;
	if (!c->node) {
		unsigned subs = 0, hits = 0;
		for (size_t i = 0; i < al_model_count(m); i++) {
			const struct al_submodel *s = al_model_get(m, i);
			if (!sub_matches(s, c->sub))
				continue;
			subs++;
			hits += sub_has(s, c->rule);
		}
		if (subs == 0) {
			print_error("%s: no sub-model %s\n", c->fixture, c->sub);
			return false;
		}
		if ((hits > 0) != c->fires) {
			print_error("%s %s: model rule %s %s on %s\n", c->fixture, c->sub ? c->sub : "",
				    c->rule, c->fires ? "did not fire" : "fired",
				    c->target ? c->target : "the default target");
			return false;
		}
		return true;
	}
	struct find f = {.sel = c->node, .rule = c->rule};
	for (size_t i = 0; i < al_model_count(m); i++)
		if (sub_matches(al_model_get(m, i), c->sub))
			walk(al_model_get(m, i), find_node, &f);
	if (f.matched == 0) {
		print_error("%s: no node %s\n", c->fixture, c->node);
		return false;
	}
	if ((f.fired > 0) != c->fires) {
		print_error("%s: %s on %s %s on %s (%u of %u matching nodes)\n", c->fixture, c->rule,
			    c->node, c->fires ? "did not fire" : "fired",
			    c->target ? c->target : "the default target", f.fired, f.matched);
		return false;
	}
	return true;
}

/* The cases of one rule: one cmocka test per rule id, named "ANE040 input-flexible-shape",
 * so that the test of a rule is found by its id in the output (issue #32 item 4). */
static void test_rule_cases(void **state)
{
	const char *id = *state;
	unsigned failed = 0;
	for (size_t i = 0; i < N_CASES; i++)
		if (strcmp(cases[i].rule, id) == 0)
			failed += !run_case(&cases[i]);
	assert_int_equal(failed, 0);
}

/* Every case names a rule that exists (a case under a mistyped id would run under no test). */
static void test_cases_name_rules(void **state)
{
	(void)state;
	unsigned unknown = 0;
	for (size_t i = 0; i < N_CASES; i++)
		if (!al_rule_find(cases[i].rule) || strcmp(al_rule_find(cases[i].rule)->id, cases[i].rule) != 0) {
			print_error("case %zu names no rule id: %s\n", i, cases[i].rule);
			unknown++;
		}
	assert_int_equal(unknown, 0);
}

/* Every rule has at least one case that fires and one that must not. */
static void test_every_rule_has_fixtures(void **state)
{
	(void)state;
	unsigned missing = 0;
	for (size_t r = 0; r < al_rules_count(); r++) {
		const char *id = al_rule_at(r)->id;
		bool pos = false, neg = false;
		for (size_t i = 0; i < N_CASES; i++) {
			if (strcmp(cases[i].rule, id) != 0)
				continue;
			pos |= cases[i].fires;
			neg |= !cases[i].fires;
		}
		for (const char *const *e = fired_elsewhere; *e; e++)
			pos |= strcmp(*e, id) == 0;
		if (!pos || !neg) {
			print_error("%s has no case that %s\n", id, !pos ? "fires" : "must not fire");
			missing++;
		}
	}
	assert_int_equal(missing, 0);
}

/* ANE076: the compute units move the work (check --compute-units cpu-only). */
static void test_compute_units_move(void **state)
{
	(void)state;
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture(CR("plan_susus.mlmodel")), &m, NULL), AL_OK);
	struct al_check_opts o = {.compute_units = AL_CU_CPU_ONLY};
	assert_int_equal(al_model_check(m, &o, NULL), AL_OK);
	const struct al_submodel *s = al_model_get(m, 0);
	const struct al_node *s2 = NULL;
	for (uint32_t i = 0; i < s->graphs[0]->n_nodes; i++)
		if (strcmp(s->graphs[0]->nodes[i].name, "s2") == 0)
			s2 = &s->graphs[0]->nodes[i];
	assert_non_null(s2);
	assert_true(s2->verdict.ane && !s2->verdict.placed_ane);
	assert_non_null(s2->verdict.moved_by);
	assert_string_equal(s2->verdict.moved_by->id, "ANE076");
	al_model_free(m);
}

/* ================================================================ the table itself */

static bool one_line(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20)
			return false;
	return true;
}

static void test_table(void **state)
{
	(void)state;
	size_t n = al_rules_count();
	assert_true(n >= 40);
	assert_null(al_rule_at(n));
	int prev = 0;
	for (size_t i = 0; i < n; i++) {
		const struct al_rule *r = al_rule_at(i);
		assert_non_null(r);
		int num = 0;
		char tail = 0;
		assert_int_equal(sscanf(r->id, "ANE%3d%c", &num, &tail), 1);
		assert_int_equal(strlen(r->id), 6);
		assert_true(num > prev); /* ascending, unique */
		prev = num;
		/* ids by scope: NN 1-19 and 50-59, MIL 20-39 and 60-69, model 40-49 and 70-79, and
		 * the model block goes on from 80 (the compile limits, ANE077-080) */
		if (r->scope == AL_SCOPE_NN)
			assert_true((num >= 1 && num <= 19) || (num >= 50 && num <= 59));
		else if (r->scope == AL_SCOPE_MIL)
			assert_true((num >= 20 && num <= 39) || (num >= 60 && num <= 69));
		else
			assert_true(r->scope == AL_SCOPE_MODEL &&
				    ((num >= 40 && num <= 49) || (num >= 70 && num <= 89)));
		/* built in, applies to at least one family and only to families that exist */
		assert_null(r->origin);
		assert_true(r->families != 0);
		assert_int_equal(r->families >> al_targets_count(), 0);
		for (const char *c = r->name; *c; c++)
			assert_true(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '-');
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(al_rule_at(k)->name, r->name);
		assert_true(one_line(r->title));
		assert_true(one_line(r->provenance));
		assert_true(one_line(r->why));
		assert_true(one_line(r->fix));
		assert_true(!r->catalog || one_line(r->catalog));
		assert_true(!r->url || strncmp(r->url, "https://", 8) == 0);
		assert_true(r->confidence == 'A' || r->confidence == 'M' || r->confidence == 'G');
		assert_true((unsigned)r->kind < AL_RULE_KIND_COUNT);
		assert_true((unsigned)r->unit < AL_UNIT_COUNT);
		if (r->kind == AL_RULE_WARN)
			assert_true(r->unit == AL_UNIT_ANE || r->unit == AL_UNIT_NONE);
		else
			assert_true(r->unit != AL_UNIT_ANE && r->unit != AL_UNIT_NONE);
	}
}

static void test_find(void **state)
{
	(void)state;
	const struct al_rule *r = al_rule_find("ANE008");
	assert_non_null(r);
	assert_string_equal(r->name, "nn-pool-kernel-gt-13");
	assert_ptr_equal(al_rule_find("ane008"), r);
	assert_ptr_equal(al_rule_find("nn-pool-kernel-gt-13"), r);
	assert_ptr_equal(al_rule_find("Ane008"), r);
	assert_null(al_rule_find("ANE999"));
	assert_null(al_rule_find("pool"));
	assert_null(al_rule_find(""));
	assert_null(al_rule_find(NULL));
	for (size_t i = 0; i < al_rules_count(); i++) {
		assert_ptr_equal(al_rule_find(al_rule_at(i)->id), al_rule_at(i));
		assert_ptr_equal(al_rule_find(al_rule_at(i)->name), al_rule_at(i));
	}
}

/* ================================================================ verdicts */

static void test_verdict_fallback(void **state)
{
	(void)state;
	al_model *m = load(CV("pool_k15_s3__nn_ios13.mlmodel"));
	assert_non_null(m);
	const struct al_node *a = node_in(m, NULL, "a");
	assert_non_null(a);
	assert_false(a->verdict.ane);
	assert_int_equal(a->verdict.unit, AL_UNIT_GPU_OR_CPU);
	assert_int_equal(a->verdict.confidence, 'M');
	assert_int_equal(a->verdict.n_rules, 2);
	assert_string_equal(a->verdict.rules[0]->id, "ANE008"); /* table order */
	assert_string_equal(a->verdict.rules[1]->id, "ANE009");
	assert_non_null(strstr(a->verdict.reasons[0], "15x15 > 13"));
	assert_non_null(strstr(a->verdict.reasons[1], "3x3"));
	const struct al_node *cat = node_in(m, NULL, "@concat");
	assert_non_null(cat);
	assert_true(cat->verdict.ane);
	assert_int_equal(cat->verdict.unit, AL_UNIT_ANE);
	assert_int_equal(cat->verdict.confidence, 'G'); /* no known obstacle: weak evidence */
	assert_int_equal(cat->verdict.n_rules, 0);
}

static void test_verdict_warn_only(void **state)
{
	(void)state;
	al_model *m = load(CV("dilated_conv__nn_ios13.mlmodel"));
	assert_non_null(m);
	const struct al_node *n = node_in(m, NULL, "input.1");
	assert_non_null(n);
	assert_true(n->verdict.ane); /* a warning lists the rule but keeps the node on the ANE */
	assert_int_equal(n->verdict.unit, AL_UNIT_ANE);
	assert_int_equal(n->verdict.confidence, 'G');
	assert_int_equal(n->verdict.n_rules, 1);
	assert_string_equal(n->verdict.reasons[0], "convolution dilationFactor [2,2]");
}

/* ANE057: a compiled espresso layer of no known kind has an unknown unit: not
 * ANE-eligible, however the partition places it; its neighbours are unaffected. */
static void test_verdict_unknown(void **state)
{
	(void)state;
	al_model *m = load("compiled/crafted_espresso.mlmodelc");
	assert_non_null(m);
	const struct al_node *n = node_in(m, NULL, "clip1");
	assert_non_null(n);
	assert_true(n->verdict.unknown);
	assert_int_equal(n->verdict.n_rules, 1);
	assert_string_equal(n->verdict.rules[0]->id, "ANE057");
	assert_non_null(strstr(n->verdict.reasons[0], "elementwise(operation 25)"));
	const struct al_node *r = node_in(m, NULL, "relu1");
	assert_non_null(r);
	assert_false(r->verdict.unknown);
	assert_true(r->verdict.ane);
	/* a user override that makes ANE057 a fallback rule: the unit is its, not unknown */
	static const char ov[] = "id: ANE057\nkind: illegal\nunit: cpu\nprovenance: test\n";
	al_user_rules *u = NULL;
	assert_int_equal(al_user_rules_parse(ov, sizeof ov - 1, "ov", &u, NULL), AL_OK);
	al_model *m2 = NULL;
	assert_int_equal(al_model_open(fixture("compiled/crafted_espresso.mlmodelc"), &m2, NULL), AL_OK);
	assert_int_equal(al_model_check(m2, &(struct al_check_opts){.user_rules = u}, NULL), AL_OK);
	n = node_in(m2, NULL, "clip1");
	assert_non_null(n);
	assert_false(n->verdict.unknown);
	assert_false(n->verdict.ane);
	assert_int_equal(n->verdict.unit, AL_UNIT_CPU);
	al_model_free(m2);
	al_user_rules_free(u);
}

static void test_verdict_strongest_rule(void **state)
{
	(void)state;
	/* topk: ANE031 (A, gpu_or_cpu) and ANE035 (M, gpu_or_cpu) -> A wins */
	al_model *m = load(CR("mil_rules.mlpackage"));
	assert_non_null(m);
	const struct al_node *t = node_in(m, NULL, "topk_values");
	assert_non_null(t);
	assert_false(t->verdict.ane);
	assert_int_equal(t->verdict.confidence, 'A');
	/* fp32 cumsum: ANE020 (M, cpu) and ANE029 (A, gpu_or_cpu) -> ANE029's unit */
	m = load(CV("cumsum__mlp_fp32.mlpackage"));
	assert_non_null(m);
	const struct al_node *c = node_in(m, NULL, "@cumsum");
	assert_non_null(c);
	assert_int_equal(c->verdict.unit, AL_UNIT_GPU_OR_CPU);
	assert_int_equal(c->verdict.confidence, 'A');
	/* lstm in an fp16 program: ANE021 (A, cpu) beats nothing stronger -> cpu */
	m = load(CV("lstm__mlp_ios17_fp16.mlpackage"));
	assert_non_null(m);
	const struct al_node *l = node_in(m, NULL, "@lstm");
	assert_non_null(l);
	assert_int_equal(l->verdict.unit, AL_UNIT_CPU);
	assert_int_equal(l->verdict.confidence, 'A');
}

static void no_rules_on_const(const struct al_node *n, void *ctx)
{
	unsigned *bad = ctx;
	if (!n->type || (strcmp(n->type, "const") != 0 && strncmp(n->type, "constexpr_", 10) != 0))
		return;
	if (n->verdict.n_rules != 0 || n->verdict.unit != AL_UNIT_NONE || !n->verdict.ane)
		(*bad)++;
}

static void test_const_ops_never_fire(void **state)
{
	(void)state;
	const char *pk[] = {CV("gru__mlp_fp16.mlpackage"), CV("cumsum__mlp_fp32.mlpackage"),
			    CR("mil_rules.mlpackage")};
	for (size_t i = 0; i < sizeof pk / sizeof pk[0]; i++) {
		al_model *m = load(pk[i]);
		assert_non_null(m);
		unsigned bad = 0;
		for (size_t k = 0; k < al_model_count(m); k++)
			walk(al_model_get(m, k), no_rules_on_const, &bad);
		assert_int_equal(bad, 0);
	}
}

/* Every reason of every fixture is one line and names something. */
static void check_reasons(const struct al_node *n, void *ctx)
{
	unsigned *bad = ctx;
	for (uint32_t i = 0; i < n->verdict.n_rules; i++)
		if (!one_line(n->verdict.reasons[i]) || !n->verdict.rules[i])
			(*bad)++;
}

static void test_reasons_one_line(void **state)
{
	(void)state;
	unsigned bad = 0;
	for (size_t i = 0; i < N_CASES; i++) {
		al_model *m = load(cases[i].fixture);
		for (size_t k = 0; m && k < al_model_count(m); k++) {
			const struct al_submodel *s = al_model_get(m, k);
			walk(s, check_reasons, &bad);
			for (uint32_t f = 0; f < s->n_findings; f++)
				bad += !one_line(s->findings[f].reason);
		}
	}
	assert_int_equal(bad, 0);
}

static void test_check_idempotent(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture(CV("pool_k15_s3__nn_ios13.mlmodel")), &m, d), AL_OK);
	assert_int_equal(al_model_check(m, NULL, d), AL_OK);
	/* checking again (as `--target all` does, once per target) gives the same verdicts */
	const struct al_node *a = node_in(m, NULL, "a");
	uint32_t n_rules = a->verdict.n_rules;
	const struct al_rule *first = n_rules ? a->verdict.rules[0] : NULL;
	enum al_unit unit = a->verdict.unit;
	assert_int_equal(al_model_check(m, NULL, d), AL_OK);
	assert_int_equal(a->verdict.n_rules, n_rules);
	assert_true(n_rules > 0);
	assert_ptr_equal(a->verdict.rules[0], first);
	assert_int_equal(a->verdict.unit, unit);
	assert_int_equal(al_diags_errors(d), 0);
	al_model_free(m);
	al_diags_free(d);
	assert_int_equal(al_model_check(NULL, NULL, NULL), AL_E_INVALID_ARG);
}

/* Checking a model again and again (a tool that re-checks per target, per rules
 * file, per request) reuses the memory of the previous verdicts: the model's
 * memory after 500 checks is what it was after the first, and every check gives
 * the same verdicts. Before, each check added its verdicts to the model arena
 * (about 0.8 KB per check of this fixture, unbounded). */
static void test_check_memory_bounded(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture(CR("nn_rules.mlmodel")), &m, d), AL_OK);
	const struct al_target *other = al_target_find("a12");
	assert_non_null(other);
	assert_int_equal(al_model_check(m, NULL, d), AL_OK);
	size_t model_cap = m->arena.cap, verdict_cap = m->verdicts.cap;
	assert_true(verdict_cap > 0);
	const struct al_graph *g = al_model_get(m, 0)->graphs[0];
	uint32_t fired = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		fired += g->nodes[i].verdict.n_rules;
	assert_true(fired >= 5); /* 8 rules fire for the default target */
	for (int k = 0; k < 500; k++) {
		struct al_check_opts o = {.target = k % 2 ? other : NULL};
		assert_int_equal(al_model_check(m, &o, d), AL_OK);
	}
	assert_int_equal(al_model_check(m, NULL, d), AL_OK);
	assert_int_equal(m->arena.cap, model_cap);
	assert_int_equal(m->verdicts.cap, verdict_cap);
	uint32_t again = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		again += g->nodes[i].verdict.n_rules;
	assert_int_equal(again, fired);
	assert_int_equal(al_diags_errors(d), 0);
	al_model_free(m);
	al_diags_free(d);
}

/* Leave the model arena with a full chunk at its head, so that the next
 * arena allocation (by the rules) has to malloc a new chunk. A 64 KiB request
 * that does not fit gets a chunk of exactly that size. */
static void fill_arena(al_model *m)
{
	for (int i = 0; i < 64; i++) {
		size_t cap = m->arena.cap;
		assert_non_null(ali_arena_alloc(&m->arena, 64 * 1024));
		if (m->arena.cap != cap)
			return;
	}
	fail();
}

/* Every allocation of al_model_check may fail: it must report AL_E_NOMEM
 * cleanly (no crash, no leak under ASan) and succeed once memory is back. */
static void test_out_of_memory(void **state)
{
	(void)state;
	const char *files[] = {CR("mil_rules.mlpackage"), CR("nonneural_pipeline.mlmodel"),
			       CV("gru__nn_ios14.mlmodel")};
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		bool succeeded = false, nomem_seen = false;
		for (unsigned long k = 1; k < 100000 && !succeeded; k++) {
			al_diags *d = al_diags_new();
			al_model *m = NULL;
			assert_int_equal(al_model_open(fixture(files[f]), &m, d), AL_OK);
			fill_arena(m);
			ali_alloc_fail_after(k);
			enum al_status st = al_model_check(m, NULL, d);
			ali_alloc_fail_after(0);
			assert_true(st == AL_OK || st == AL_E_NOMEM);
			succeeded = st == AL_OK;
			nomem_seen |= st == AL_E_NOMEM;
			if (!succeeded) /* a later call with memory back succeeds */
				assert_int_equal(al_model_check(m, NULL, d), AL_OK);
			al_model_free(m);
			al_diags_free(d);
		}
		assert_true(succeeded);
		assert_true(nomem_seen); /* the failure path was exercised */
	}
}

/* ================================================================ > 1 GiB of weights */

/* A NeuralNetwork whose only layer is a loadConstant holding `n` bytes of
 * float16Value. The weight bytes are the file's tail, created by ftruncate as
 * a hole, so the file costs a few hundred bytes of disk whatever n is:
 * Model{1: 4, 500: NeuralNetwork{1: layer{1: "w", 3: "w", 290: loadConstant{
 * 1: shape [C,1,1], 2: WeightParams{2: float16Value}}}}} */
static bool write_big_nn_shaped(const char *path, uint64_t n, const uint64_t chw[3])
{
	uint8_t head[256];
	uint8_t shape[32];
	size_t sl = 0;
	for (int i = 0; i < 3; i++)
		sl += encode_varint(shape + sl, chw[i]);
	uint64_t wp = 1 + varint_len(n) + n;                       /* tag 0x12 + len + bytes */
	uint64_t lc = 1 + varint_len(sl) + sl + 1 + varint_len(wp) + wp;
	uint64_t ly = 3 + 3 + 2 + varint_len(lc) + lc;             /* name, output, tag 290 */
	uint64_t nn = 1 + varint_len(ly) + ly;
	size_t k = 0;
	head[k++] = 0x08; /* specificationVersion = 4 */
	head[k++] = 4;
	head[k++] = 0xA2; /* field 500, wire 2 */
	head[k++] = 0x1F;
	k += encode_varint(head + k, nn);
	head[k++] = 0x0A; /* layers = 1 */
	k += encode_varint(head + k, ly);
	memcpy(head + k, "\x0a\x01w\x1a\x01w", 6); /* name = "w", output = "w" */
	k += 6;
	head[k++] = 0x92; /* field 290, wire 2 */
	head[k++] = 0x12;
	k += encode_varint(head + k, lc);
	head[k++] = 0x0A; /* shape = 1, packed */
	k += encode_varint(head + k, sl);
	memcpy(head + k, shape, sl);
	k += sl;
	head[k++] = 0x12; /* data = 2 */
	k += encode_varint(head + k, wp);
	head[k++] = 0x12; /* float16Value = 2 */
	k += encode_varint(head + k, n);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return false;
	bool ok = write(fd, head, k) == (ssize_t)k && ftruncate(fd, (off_t)(k + n)) == 0;
	close(fd);
	return ok;
}

/* The same with the weights as one [n / 2, 1, 1] constant. */
static bool write_big_nn(const char *path, uint64_t n)
{
	const uint64_t chw[3] = {n / 2, 1, 1};
	return write_big_nn_shaped(path, n, chw);
}

static void test_weights_over_1gib(void **state)
{
	(void)state;
	char dir[] = "/tmp/anelint-rules-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[sizeof dir + 32];
	snprintf(path, sizeof path, "%s/big.mlmodel", dir);
	uint64_t sizes[] = {((uint64_t)1 << 30) + 4096, (uint64_t)1 << 30};
	bool expect[] = {true, false}; /* the limit itself is allowed */
	for (int i = 0; i < 2; i++) {
		if (!write_big_nn(path, sizes[i])) {
			print_error("cannot write a sparse file in %s: %s\n", dir, strerror(errno));
			unlink(path);
			rmdir(dir);
			skip();
		}
		al_diags *d = al_diags_new();
		al_model *m = NULL;
		assert_int_equal(al_model_open(path, &m, d), AL_OK);
		assert_int_equal(al_model_check(m, NULL, d), AL_OK);
		const struct al_submodel *s = al_model_get(m, 0);
		assert_int_equal(s->weights.fp16, sizes[i]);
		assert_int_equal(sub_has(s, "ANE045"), expect[i]);
		if (expect[i])
			assert_non_null(strstr(s->findings[0].reason, "> 1 GiB"));
		al_model_free(m);
		al_diags_free(d);
	}
	unlink(path);
	rmdir(dir);
}

/* ANE079: weights between the 568 MB seen compiling and 1 GiB fire, uncertain everywhere (the
 * reports disagree on iOS 26, none saw other releases); 568 MB and over 1 GiB (ANE045) do not. */
static void test_weights_near_limit(void **state)
{
	(void)state;
	char dir[] = "/tmp/anelint-rules-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[sizeof dir + 32];
	snprintf(path, sizeof path, "%s/band.mlmodel", dir);
	uint64_t sizes[] = {700000000, 568000000, 1200000000};
	bool expect[] = {true, false, false};
	const char *oses[] = {"ios26", "ios17"};
	for (int i = 0; i < 3; i++) {
		/* a constant of [C, H, W] under every axis cap (ANE051 stays silent) */
		const uint64_t chw[3] = {10000, sizes[i] / 2 / 10000 / 8, 8};
		if (!write_big_nn_shaped(path, 2 * chw[0] * chw[1] * chw[2], chw)) {
			print_error("cannot write a sparse file in %s: %s\n", dir, strerror(errno));
			unlink(path);
			rmdir(dir);
			skip();
		}
		for (int o = 0; o < 2; o++) {
			al_diags *d = al_diags_new();
			al_model *m = NULL;
			struct al_check_opts opts = {.os = al_release_find(oses[o])};
			assert_int_equal(al_model_open(path, &m, d), AL_OK);
			assert_int_equal(al_model_check(m, &opts, d), AL_OK);
			const struct al_submodel *s = al_model_get(m, 0);
			assert_int_equal(sub_has(s, "ANE079"), expect[i]);
			if (expect[i]) {
				const struct al_node *n = &s->graphs[0]->nodes[0];
				assert_false(n->verdict.placed_ane);
				assert_int_equal(n->verdict.verdict, AL_VERDICT_UNCERTAIN);
			}
			al_model_free(m);
			al_diags_free(d);
		}
	}
	unlink(path);
	rmdir(dir);
}

/* ANE077, ANE078, ANE080 move the whole model off the ANE; sure (not_ane) in the failing band
 * on the chip and release of their report, uncertain between what compiled and what failed,
 * and on other chips and releases; ANE078 is uncertain everywhere (nothing pins its limit). */
static void test_compile_limit_verdicts(void **state)
{
	(void)state;
	static const struct {
		const char *fixture, *target, *node;
		enum al_ane_verdict verdict;
	} v[] = {
		{CR("limit_attn_32k.mlpackage"), "a18@ios26", "out", AL_VERDICT_NOT_ANE},
		{CR("limit_attn_32k.mlpackage"), "a18@ios26", "probs", AL_VERDICT_NOT_ANE},
		{CR("limit_attn_32k.mlpackage"), "a17@ios26", "out", AL_VERDICT_UNCERTAIN}, /* chip */
		{CR("limit_attn_32k.mlpackage"), "a18@ios18", "out", AL_VERDICT_UNCERTAIN}, /* release */
		{CR("limit_attn_16k.mlpackage"), "a18@ios26", "out", AL_VERDICT_UNCERTAIN}, /* band */
		{CR("limit_attn_8k.mlpackage"), "a18@ios26", "out", AL_VERDICT_ANE},
		{CR("limit_tensor_5568.mlpackage"), "a17@ios17", "y", AL_VERDICT_UNCERTAIN},
		{CR("limit_tensor_5568.mlpackage"), "a14@ios16", "y", AL_VERDICT_UNCERTAIN},
		{CR("limit_tensor_5568.mlpackage"), "a17@ios18", "y", AL_VERDICT_UNCERTAIN},
		{CR("limit_tensor_4096.mlpackage"), "a17@ios18", "y", AL_VERDICT_ANE},
		{CR("limit_lut8.mlpackage"), "a18@ios26", "y", AL_VERDICT_NOT_ANE},
		{CR("limit_lut8.mlpackage"), "a17@ios26", "y", AL_VERDICT_NOT_ANE},
		{CR("limit_lut8.mlpackage"), "a16@ios26", "y", AL_VERDICT_UNCERTAIN},
		{CR("limit_lut8.mlpackage"), "a18@ios27", "y", AL_VERDICT_ANE},
		{CR("limit_lut8.mlpackage"), "a18@ios18", "y", AL_VERDICT_ANE},
	};
	unsigned failed = 0;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		al_model *m = load_for(v[i].fixture, v[i].target);
		assert_non_null(m);
		const struct al_node *n = node_in(m, NULL, v[i].node);
		assert_non_null(n);
		if (n->verdict.verdict != v[i].verdict) {
			print_error("%s %s on %s: verdict %s (p_ane %.2f), expected %s\n", v[i].fixture,
				    v[i].node, v[i].target, al_ane_verdict_name(n->verdict.verdict),
				    n->verdict.p_ane, al_ane_verdict_name(v[i].verdict));
			failed++;
		}
		/* a verdict off the ANE or uncertain: the whole model was moved (the best guess) */
		if (v[i].verdict != AL_VERDICT_ANE && n->verdict.placed_ane) {
			print_error("%s %s on %s: still placed on the ANE\n", v[i].fixture, v[i].node,
				    v[i].target);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

/* ================================================================ chip families */

/* The same model gives different verdicts on two families, and checking again
 * for another target replaces the verdicts (as `--target all` does). */
static void test_family_verdicts(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture(CR("mil_shapes.mlpackage")), &m, d), AL_OK);
	const char *targets[] = {"a14", "a15", "a16", "a17", "a14"};
	/* sin: before H15 off the ANE; crop_resize: before H14; wide relu: until a16 */
	const bool sin_ane[] = {false, false, true, true, false};
	const bool crop_ane[] = {false, true, true, true, false};
	const bool wide_ane[] = {false, false, false, true, false};
	for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
		struct al_check_opts o = {.target = al_target_find(targets[i])};
		assert_non_null(o.target);
		assert_int_equal(al_model_check(m, &o, d), AL_OK);
		const struct al_node *sn = node_in(m, NULL, "sin_x");
		const struct al_node *cr = node_in(m, NULL, "crop_x");
		const struct al_node *wr = node_in(m, NULL, "wide_relu");
		assert_non_null(sn);
		assert_non_null(cr);
		assert_non_null(wr);
		if (sn->verdict.ane != sin_ane[i] || cr->verdict.ane != crop_ane[i] ||
		    wr->verdict.ane != wide_ane[i])
			print_error("target %s: sin %d crop %d wide %d\n", targets[i], sn->verdict.ane,
				    cr->verdict.ane, wr->verdict.ane);
		assert_int_equal(sn->verdict.ane, sin_ane[i]);
		assert_int_equal(cr->verdict.ane, crop_ane[i]);
		assert_int_equal(wr->verdict.ane, wide_ane[i]);
		if (!sin_ane[i]) {
			assert_int_equal(sn->verdict.unit, AL_UNIT_GPU_OR_CPU);
			assert_non_null(strstr(sn->verdict.reasons[0], targets[i]));
		}
	}
	/* NULL target: the default, a14 */
	assert_int_equal(al_model_check(m, NULL, d), AL_OK);
	assert_false(node_in(m, NULL, "sin_x")->verdict.ane);
	/* a target struct that is not a row of the table is refused */
	struct al_target fake = *al_target_default();
	struct al_check_opts bad = {.target = &fake};
	assert_int_equal(al_model_check(m, &bad, d), AL_E_INVALID_ARG);
	assert_true(al_diags_errors(d) > 0);
	al_model_free(m);
	al_diags_free(d);
}

static void test_rule_families(void **state)
{
	(void)state;
	char buf[64];
	const struct al_rule *r = al_rule_find("ANE063");
	assert_non_null(r);
	assert_int_equal(al_rule_families(r, buf, sizeof buf), strlen("a12..a15"));
	assert_string_equal(buf, "a12..a15");
	al_rule_families(al_rule_find("ANE010"), buf, sizeof buf);
	assert_string_equal(buf, "a12,a14");
	al_rule_families(al_rule_find("ANE001"), buf, sizeof buf);
	assert_string_equal(buf, "all");
	al_rule_families(al_rule_find("ANE070"), buf, sizeof buf);
	assert_string_equal(buf, "a12..a16");
	/* truncation: like snprintf */
	assert_int_equal(al_rule_families(r, buf, 4), strlen("a12..a15"));
	assert_string_equal(buf, "a12");
	assert_int_equal(al_rule_families(r, NULL, 0), strlen("a12..a15"));
	/* applies */
	assert_true(al_rule_applies(r, al_target_find("m2")));
	assert_false(al_rule_applies(r, al_target_find("m3")));
	assert_true(al_rule_applies(r, NULL)); /* the default, a14 */
	assert_false(al_rule_applies(NULL, NULL));
	/* every rule's text parses back to its set, families and releases */
	for (size_t i = 0; i < al_rules_count(); i++) {
		const struct al_rule *x = al_rule_at(i);
		uint32_t f = 0;
		al_rule_families(x, buf, sizeof buf);
		assert_true(ali_families_parse(buf, &f, NULL, 0));
		assert_int_equal(f, x->families);
		al_rule_releases(x, buf, sizeof buf);
		assert_true(ali_releases_parse(buf, &f, NULL, 0));
		assert_int_equal(f, x->releases);
		assert_true(x->releases != 0);
	}
}

/* The OS releases: names, aliases of other platforms, sets, and what applies. */
static void test_rule_releases(void **state)
{
	(void)state;
	char buf[64];
	assert_int_equal(al_releases_count(), 8);
	assert_ptr_equal(al_release_default(), al_release_find("ios27"));
	assert_ptr_equal(al_release_find("macos14"), al_release_find("ios17"));
	assert_ptr_equal(al_release_find("MacOS15"), al_release_find("ios18"));
	assert_ptr_equal(al_release_find("macos26"), al_release_find("ios26"));
	assert_ptr_equal(al_release_find("macos11"), al_release_find("ios14"));
	assert_ptr_equal(al_release_find("watchos10"), al_release_find("ios17"));
	assert_ptr_equal(al_release_find("visionos2"), al_release_find("ios18"));
	assert_null(al_release_find("ios19"));
	assert_null(al_release_find("macos"));
	assert_null(al_release_find(NULL));
	al_rule_releases(al_rule_find("ANE019"), buf, sizeof buf);
	assert_string_equal(buf, "ios13,ios14");
	al_rule_releases(al_rule_find("ANE004"), buf, sizeof buf);
	assert_string_equal(buf, "ios15+");
	al_rule_releases(al_rule_find("ANE065"), buf, sizeof buf);
	assert_string_equal(buf, "ios18");
	al_rule_releases(al_rule_find("ANE001"), buf, sizeof buf);
	assert_string_equal(buf, "all");
	uint32_t f = 0;
	assert_true(ali_releases_parse("macos13..ios17, ios26+", &f, NULL, 0));
	assert_int_equal(f, (1u << 3) | (1u << 4) | (1u << 6) | (1u << 7));
	char bad[16];
	assert_false(ali_releases_parse("ios14, a15", &f, bad, sizeof bad));
	assert_string_equal(bad, "a15");
	/* what applies: family and release together */
	const struct al_rule *r = al_rule_find("ANE065");
	assert_true(al_rule_applies_at(r, al_target_find("m2"), al_release_find("macos15")));
	assert_false(al_rule_applies_at(r, al_target_find("m2"), al_release_find("macos14")));
	assert_false(al_rule_applies_at(r, al_target_find("m3"), al_release_find("macos15")));
	assert_false(al_rule_applies_at(r, al_target_find("m2"), NULL)); /* the newest */
	/* a release struct that is not a row of the table is refused */
	struct al_release fake = *al_release_default();
	struct al_check_opts bad_opts = {.os = &fake};
	al_model *m = NULL;
	al_diags *d = al_diags_new();
	assert_int_equal(al_model_open(fixture("crafted/nn_rules.mlmodel"), &m, d), AL_OK);
	assert_int_equal(al_model_check(m, &bad_opts, d), AL_E_INVALID_ARG);
	al_model_free(m);
	al_diags_free(d);
}

/* ================================================================ docs/rules.md */

static const char *scope_name(enum al_rule_scope s)
{
	return s == AL_SCOPE_NN ? "NeuralNetwork layer" : s == AL_SCOPE_MIL ? "ML Program op" : "model";
}

/* docs/rules.md, rendered from the table. */
static void render_docs(FILE *f)
{
	fputs("# anelint rules\n\n"
	      "<!-- Generated from src/rules.def by tests/unit/test_rules.c; do not edit.\n"
	      "     Regenerate: make build/tests/test_rules && ANELINT_UPDATE_DOCS=1 "
	      "build/tests/test_rules -->\n\n"
	      "Every rule anelint applies, with where its claim comes from. A rule looks at one "
	      "NeuralNetwork layer, one ML Program op, or one whole (sub-)model, and when it fires "
	      "it gives a one-line reason naming the parameter and value.\n\n"
	      "- **kind**: `illegal` = the ANE cannot run it and the work falls back; `cost` = "
	      "legal, but Core ML is reported to keep it off the ANE; `warn` = stays on the ANE "
	      "(or is undecided) but costs speed or accuracy. Warnings never change a verdict.\n"
	      "- **unit**: where the work goes when an illegal/cost rule fires.\n"
	      "- **confidence**: `A` Apple says so (docs, Apple repositories, Apple engineers); "
	      "`M` measured by a named third party; `G` a guess, an anecdote or an analogy. A "
	      "rule never claims more than its sources.\n"
	      "- **catalog**: ids in the project's ANE rules catalog (knowledge base).\n"
	      "- **families**: the chip families the rule is evaluated for (`anelint check "
	      "--target`; the families and their figures are in docs/cost-model.md): `all`, one "
	      "family and every newer one (`a15+`), a range (`a12..a14`) or a list. A rule may "
	      "also read the target's caps (kernel width, axis extents) for the rest. The default "
	      "target is a14 (A14 / M1).\n"
	      "- **releases**: the OS releases the rule is evaluated for (`anelint check --os`; "
	      "every platform's release maps onto the iOS one with the same Core ML: macos14 = "
	      "ios17, macos15 = ios18, macos26 = ios26), in the same syntax (`ios15+`, "
	      "`ios13..ios14`). Where sources disagree between releases, a construct has one rule "
	      "per side. The default release is the newest (ios27).\n\n"
	      "How a node's verdict is formed: it is on the ANE when no illegal/cost rule fired. "
	      "Otherwise its unit is that of the fired fallback rule with the highest confidence "
	      "(the first in this table on a tie), and its confidence is that highest confidence, "
	      "since one sufficient reason is enough. With no fallback rule the confidence is `G`: "
	      "the absence of a known obstacle is weak evidence that the ANE runs the node. ML "
	      "Program `const`/`constexpr_*` ops hold data and are never flagged (unit `none`). "
	      "Model rules give findings on the sub-model and do not change node verdicts.\n\n"
	      "## Evidence scope and the three verdicts\n\n"
	      "Where a rule is evaluated is not where it was observed (issue #30). Each rule "
	      "carries the scope of its evidence (`src/analysis/rule_scope.def`, written from the "
	      "development reports of `tests/observed/split.json` only): the chip families and "
	      "releases its reports saw it on, how many independent reports there are, and, "
	      "where one exists, a mechanism argument for why it holds elsewhere (a property of the "
	      "hardware or of the format, or, for an op with no ANE lowering that no report saw on "
	      "the ANE anywhere, that a missing lowering persists until a release adds one). A layer "
	      "or op rule also decides on a release between two its reports saw it on (an op's "
	      "lowering is not taken out and put back); a model rule does not (Core ML's scheduling "
	      "changes with each release). Every "
	      "node rule has a row; a rule without one (the warning and partition model rules) has "
	      "the scope it is evaluated in and one report. After the partition every layer gets `p_ane`, the probability "
	      "that Core ML runs it on the ANE, and a verdict: `ane` at `p_ane` >= 0.7, `not_ane` at "
	      "<= 0.3, else `uncertain`. `p_ane` comes from the rule that decided: its strength by "
	      "confidence and reports (A .97 / .95, M .9 / .85, G .8 / .75 for two or more / one "
	      "report), 1 minus that when it moves the layer off the ANE; minus .05 outside its "
	      "evidence with a mechanism; .5 outside it without one, or where its reports "
	      "disagree; the strongest of several rules that fired. A layer no rule moved takes its "
	      "kind's status for the release (the table at the end: `src/analysis/kind_status.c`): "
	      ".9 where a report saw the kind on the ANE on that release or an earlier one, .5 "
	      "(uncertain) where none did: no kind is ANE by default; a NeuralNetwork convolution "
	      "whose weights are a runtime input (a second input) takes .5 too, its kind's reports "
	      "being of constant weights (catalog O15). A layer moved by the partition "
	      "policy is .25 off / .75 on. `--fail-on` counts only `not_ane` layers unless it is "
	      "`--fail-on uncertain`.\n\n",
	      f);
	fputs("| id | name | applies to | families | releases | kind | unit | conf. | catalog | title |\n"
	      "|---|---|---|---|---|---|---|---|---|---|\n", f);
	for (size_t i = 0; i < al_rules_count(); i++) {
		const struct al_rule *r = al_rule_at(i);
		char anchor[16], fam[64], rel[64];
		size_t k = 0;
		for (; r->id[k] && k + 1 < sizeof anchor; k++)
			anchor[k] = (char)tolower((unsigned char)r->id[k]);
		anchor[k] = '\0';
		al_rule_families(r, fam, sizeof fam);
		al_rule_releases(r, rel, sizeof rel);
		fprintf(f, "| [%s](#%s) | `%s` | %s | %s | %s | %s | %s | %c | %s | %s |\n", r->id, anchor,
			r->name, scope_name(r->scope), fam, rel,
			al_rule_kind_name(r->kind), r->kind == AL_RULE_WARN ? "-" : al_unit_name(r->unit),
			r->confidence, r->catalog ? r->catalog : "-", r->title);
	}
	for (size_t i = 0; i < al_rules_count(); i++) {
		const struct al_rule *r = al_rule_at(i);
		fprintf(f, "\n## %s\n\n", r->id);
		fprintf(f, "**%s** (`%s`)\n\n", r->title, r->name);
		char fam[64], rel[64];
		al_rule_families(r, fam, sizeof fam);
		al_rule_releases(r, rel, sizeof rel);
		fprintf(f, "- applies to: %s\n", scope_name(r->scope));
		fprintf(f, "- families: %s\n", fam);
		fprintf(f, "- releases: %s\n", rel);
		fprintf(f, "- kind: %s", al_rule_kind_name(r->kind));
		if (r->kind != AL_RULE_WARN)
			fprintf(f, ", work goes to: %s", al_unit_name(r->unit));
		fprintf(f, "\n- confidence: %c\n", r->confidence);
		fprintf(f, "- catalog: %s\n", r->catalog ? r->catalog : "-");
		fprintf(f, "- provenance: %s\n", r->provenance);
		struct al_rule_evidence e;
		al_rule_evidence_of(r, &e);
		struct al_rule seen = *r;
		seen.families = e.families;
		seen.releases = e.releases;
		seen.off = NULL;
		al_rule_families(&seen, fam, sizeof fam);
		al_rule_releases(&seen, rel, sizeof rel);
		if (e.seen != r->provenance) /* a row of rule_scope.def */
			fprintf(f, "- evidence: %" PRIu32 " report%s, families %s, releases %s%s%s: %s\n", e.n_reports,
				e.n_reports == 1 ? "" : "s", fam, rel, e.detail ? ", only with " : "",
				e.detail ? e.detail : "", e.seen);
		else
			fprintf(f, "- evidence: not yet scoped (where it is evaluated, one report)\n");
		fprintf(f, "- outside its evidence: %s\n",
			e.mechanism ? e.mechanism : "uncertain (no mechanism argument)");
		if (r->url)
			fprintf(f, "- source: <%s>\n", r->url);
		fprintf(f, "\n**Why.** %s\n\n**Fix.** %s\n", r->why, r->fix);
	}
	/* the kinds (issue #30 item 3): the first release with evidence, or none */
	fputs("\n## Layer kinds and ops: ANE status by release\n\n"
	      "When no rule moves a layer, its kind decides how sure the verdict is: `supported` "
	      "from the first release a report saw the kind on the ANE (and on later ones: Core ML's "
	      "ANE compiler keeps the ops it gained; the one reported regression, resample on M2 "
	      "under macOS 15, is rule ANE065), `no evidence` elsewhere, which is uncertain. A kind "
	      "that a rule keeps off the ANE (recurrent layers, gathers, custom layers, ...) is "
	      "decided by that rule, whatever this table says.\n\n"
	      "| world | kind | ANE status | provenance |\n|---|---|---|---|\n", f);
	for (int nn = 1; nn >= 0; nn--) {
		size_t count = nn ? ali_nn_kinds_count : ali_mil_kinds_count;
		for (size_t k = 0; k < count; k++) {
			const char *name = nn ? ali_nn_kinds[k].name : ali_mil_kinds[k].name;
			if (!nn && (ali_mil_kinds[k].flags & AL_OPF_CONST))
				continue;
			const char *prov = NULL, *since = NULL;
			for (size_t ri = 0; ri < al_releases_count() && !since; ri++)
				if (al_kind_ane_status(nn, name, al_release_at(ri), &prov) == 'S')
					since = al_release_at(ri)->id;
			if (since)
				fprintf(f, "| %s | `%s` | supported from %s | %s |\n", nn ? "NN" : "MIL", name, since, prov);
			else
				fprintf(f, "| %s | `%s` | no evidence | - |\n", nn ? "NN" : "MIL", name);
		}
	}
}

static void test_docs_in_sync(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof path, "%s/docs/rules.md", repo_root());
	char *want = NULL;
	size_t want_n = 0;
	FILE *mem = open_memstream(&want, &want_n);
	assert_non_null(mem);
	render_docs(mem);
	fclose(mem);
	const char *upd = getenv("ANELINT_UPDATE_DOCS");
	if (upd && *upd && strcmp(upd, "0") != 0) {
		FILE *out = fopen(path, "w");
		assert_non_null(out);
		assert_int_equal(fwrite(want, 1, want_n, out), want_n);
		assert_int_equal(fclose(out), 0);
	}
	FILE *in = fopen(path, "r");
	if (!in) {
		print_error("%s is missing; run with ANELINT_UPDATE_DOCS=1\n", path);
		free(want);
		fail();
	}
	char *have = malloc(want_n + 2);
	assert_non_null(have);
	size_t have_n = fread(have, 1, want_n + 1, in);
	fclose(in);
	bool same = have_n == want_n && memcmp(have, want, want_n) == 0;
	if (!same)
		print_error("docs/rules.md is out of date; run with ANELINT_UPDATE_DOCS=1\n");
	free(have);
	free(want);
	assert_true(same);
}

/* ================================================================ the shared corpus */

struct real_case {
	const char *file; /* under <corpus>/real */
	const char *sub, *node, *rule;
	bool fires;
};

static const struct real_case real_cases[] = {
	{"NeuralMcNeuralNet.mlmodel", NULL, "@custom", "ANE001", true},
	{"NeuralMcNeuralNet.mlmodel", NULL, "@convolution", "ANE001", false},
	{"Lstsq_test-model.mlmodel", NULL, "@custom", "ANE001", true},
	{"XGBoost_TreeEnsemble_dummy_v6.mlmodel", NULL, NULL, "ANE042", true},
	{"CreateML_ImageClassifier_pipeline.mlmodel", ":pipeline/model0", NULL, "ANE043", true},
	{"CreateML_ImageClassifier_pipeline.mlmodel", ":pipeline/model1", NULL, "ANE042", true},
	{"TuriCreate_ActivityClassifier.mlmodel", NULL, NULL, "ANE044", true},
	{"StyleTransfer_FNSCandy.mlmodel", NULL, "@batchnorm", "ANE013", false}, /* instance norm */
	{"pytorch_controlflow_loop_branch.mlmodel", NULL, "@loop", "ANE016", true},
	{"pytorch_controlflow_loop_branch.mlmodel", NULL, "@branch", "ANE016", true},
	{"ActivityClassifier_GRU_mlprogram.mlpackage", NULL, "@make_list", "ANE033", true},
	{"ActivityClassifier_GRU_mlprogram.mlpackage", NULL, "@while_loop", "ANE033", true},
	{"DTLN_AEC_128_Part1.mlpackage", NULL, "@matmul", "ANE029", true}, /* fp32 program */
	{"MNIST_WWDC17.mlmodel", NULL, "@convolution", "ANE014", false},
};

static void test_real_corpus(void **state)
{
	(void)state;
	if (!corpus_dir())
		skip();
	unsigned failed = 0;
	for (size_t i = 0; i < sizeof real_cases / sizeof real_cases[0]; i++) {
		const struct real_case *c = &real_cases[i];
		char rel[256];
		snprintf(rel, sizeof rel, "real/%s", c->file);
		const char *path = corpus_file(rel);
		al_diags *d = al_diags_new();
		al_model *m = NULL;
		if (!path || al_model_open(path, &m, d) != AL_OK || al_model_check(m, NULL, d) != AL_OK) {
			print_error("%s: cannot open or check\n", c->file);
			failed++;
			al_model_free(m);
			al_diags_free(d);
			continue;
		}
		bool hit = false, matched = false;
		for (size_t k = 0; k < al_model_count(m); k++) {
			const struct al_submodel *s = al_model_get(m, k);
			if (!sub_matches(s, c->sub))
				continue;
			if (!c->node) {
				matched = true;
				hit |= sub_has(s, c->rule);
				continue;
			}
			struct find f = {.sel = c->node, .rule = c->rule};
			walk(s, find_node, &f);
			matched |= f.matched > 0;
			hit |= f.fired > 0;
		}
		if (!matched || hit != c->fires) {
			print_error("real/%s %s: %s %s\n", c->file, c->node ? c->node : "(model)", c->rule,
				    !matched ? "no such node" : c->fires ? "did not fire" : "fired");
			failed++;
		}
		al_model_free(m);
		al_diags_free(d);
	}
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_cases_name_rules),
		cmocka_unit_test(test_every_rule_has_fixtures),
		cmocka_unit_test(test_compute_units_move),
		cmocka_unit_test(test_verdict_fallback),
		cmocka_unit_test(test_verdict_warn_only),
		cmocka_unit_test(test_verdict_strongest_rule),
		cmocka_unit_test(test_verdict_unknown),
		cmocka_unit_test(test_const_ops_never_fire),
		cmocka_unit_test(test_reasons_one_line),
		cmocka_unit_test(test_check_idempotent),
		cmocka_unit_test(test_check_memory_bounded),
		cmocka_unit_test(test_family_verdicts),
		cmocka_unit_test(test_rule_families),
		cmocka_unit_test(test_rule_releases),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_weights_over_1gib),
		cmocka_unit_test(test_weights_near_limit),
		cmocka_unit_test(test_compile_limit_verdicts),
		cmocka_unit_test(test_docs_in_sync),
		cmocka_unit_test(test_real_corpus),
	};
	size_t n_fixed = sizeof fixed / sizeof fixed[0], n_rules = al_rules_count();
	struct CMUnitTest *tests = calloc(n_fixed + n_rules, sizeof *tests);
	char(*names)[96] = calloc(n_rules ? n_rules : 1, sizeof *names);
	if (!tests || !names)
		return 1;
	size_t n = 0;
	for (; n < 2; n++)
		tests[n] = fixed[n];
	for (size_t r = 0; r < n_rules; r++) {
		const struct al_rule *rule = al_rule_at(r);
		snprintf(names[r], sizeof names[r], "%s %s", rule->id, rule->name);
		tests[n++] = (struct CMUnitTest){.name = names[r], .test_func = test_rule_cases,
						 .initial_state = (void *)rule->id};
	}
	for (size_t i = 2; i < n_fixed; i++)
		tests[n++] = fixed[i];
	int rc = _cmocka_run_group_tests("test_rules", tests, n, NULL, free_cache);
	if (n_skipped_cases)
		print_message("%u cases skipped for want of inferred shapes or costs\n", n_skipped_cases);
	free(tests);
	free(names);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/* evidence_compare.c: evidence lined up with al_model_check's verdicts
 * (matched by output name, else by op type and order: docs/evidence.md
 * "Matching"), and a model's prediction written out as evidence in every format
 * (the round trip of tests/evidence.sh). */
#include "evidence.h"
#include "model.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

bool ali_obs_agrees(int obs, enum al_unit placed)
{
	switch (obs) {
	case AL_OBS_ANE: return placed == AL_UNIT_ANE;
	case AL_OBS_GPU: return placed == AL_UNIT_GPU;
	case AL_OBS_CPU: return placed == AL_UNIT_CPU;
	case AL_OBS_NOT_ANE: return placed != AL_UNIT_ANE;
	default: return false;
	}
}

static bool is_const(const struct al_node *n)
{
	if (n->kind >= 0 && n->owner && n->owner->function) /* an ML Program op */
		return (ali_mil_kinds[n->kind].flags & AL_OPF_CONST) != 0;
	if (n->kind >= 0) /* a NeuralNetwork layer: its kind */
		return n->kind == AL_NNK_loadConstant || n->kind == AL_NNK_loadConstantND;
	/* a type no table row names: by name (rare, so the scan is off the per-layer path) */
	int nn = ali_nn_kind_by_name(n->type);
	return ali_mil_kind_by_name(n->type) == AL_MILK_const || strncmp(n->type, "constexpr_", 10) == 0 ||
	       nn == AL_NNK_loadConstant || nn == AL_NNK_loadConstantND;
}

/* Every compute node of m, model order (sub-models, then nested graphs in place). */
struct nodes {
	const struct al_node **v;
	size_t n, cap;
	bool nomem;
};

static void push(struct nodes *ns, const struct al_node *n)
{
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 256;
		const struct al_node **v = ali_realloc(ns->v, cap * sizeof *v);
		if (!v) {
			ns->nomem = true;
			return;
		}
		ns->v = v;
		ns->cap = cap;
	}
	ns->v[ns->n++] = n;
}

static void walk(struct nodes *ns, const struct al_graph *g, int depth)
{
	if (depth > 64)
		return;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		if (!is_const(n))
			push(ns, n);
		for (uint32_t k = 0; k < n->n_sub; k++)
			walk(ns, n->sub[k], depth + 1);
	}
}

static size_t count_consts_in(const struct al_graph *g, int depth)
{
	size_t n = 0;
	for (uint32_t i = 0; depth <= 64 && i < g->n_nodes; i++) {
		n += is_const(&g->nodes[i]);
		for (uint32_t k = 0; k < g->nodes[i].n_sub; k++)
			n += count_consts_in(g->nodes[i].sub[k], depth + 1);
	}
	return n;
}

size_t ali_count_consts(const al_model *m)
{
	size_t n = 0;
	for (size_t s = 0; s < al_model_count(m); s++) {
		const struct al_submodel *sub = al_model_get(m, s);
		for (uint32_t g = 0; g < sub->n_graphs; g++)
			n += count_consts_in(sub->graphs[g], 0);
	}
	return n;
}

static bool collect(const al_model *m, struct nodes *ns)
{
	for (size_t s = 0; s < al_model_count(m); s++) {
		const struct al_submodel *sub = al_model_get(m, s);
		for (uint32_t g = 0; g < sub->n_graphs; g++)
			walk(ns, sub->graphs[g], 0);
	}
	return !ns->nomem;
}

/* Name index: (name, node) sorted by name. */
struct named {
	const char *name;
	const struct al_node *node;
	size_t order;
};

static int by_name(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->order > y->order) - (x->order < y->order);
}

static const char *type_of_node(const struct al_node *n)
{
	return n->type ? n->type : "";
}

struct typed {
	const char *type;
	size_t i; /* row index or node index */
};

static int by_type(const void *a, const void *b)
{
	const struct typed *x = a, *y = b;
	int c = strcmp(x->type, y->type);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

static struct al_cmp_rule *rule_slot(struct al_cmp *c, const struct al_rule *r)
{
	for (size_t i = 0; i < c->n_rules; i++)
		if (c->rules[i].rule == r)
			return &c->rules[i];
	struct al_cmp_rule *v = ali_realloc(c->rules, (c->n_rules + 1) * sizeof *v);
	if (!v)
		return NULL;
	c->rules = v;
	v[c->n_rules] = (struct al_cmp_rule){.rule = r};
	return &v[c->n_rules++];
}

static bool count_rule(struct al_cmp *c, const struct al_rule *r, int obs)
{
	struct al_cmp_rule *s = rule_slot(c, r);
	if (!s)
		return false;
	/* a warn rule says the op stays on the ANE; illegal / cost rules that it does not */
	bool held = r->kind == AL_RULE_WARN ? obs == AL_OBS_ANE : obs != AL_OBS_ANE;
	if (held)
		s->right++;
	else
		s->wrong++;
	return true;
}

/* The file name of m without directories and extension ("KokoroAlbert" for
 * ".../KokoroAlbert.mlmodelc"), into buf. */
static const char *model_stem(const al_model *m, char *buf, size_t cap)
{
	const struct al_submodel *s = al_model_count(m) ? al_model_get(m, 0) : NULL;
	const char *p = s && s->path ? s->path : "";
	size_t n = strlen(p);
	while (n && p[n - 1] == '/')
		n--;
	size_t b = n;
	while (b && p[b - 1] != '/')
		b--;
	size_t k = 0;
	for (size_t i = b; i < n && p[i] != '.' && k + 1 < cap; i++)
		buf[k++] = p[i];
	buf[k] = 0;
	return buf;
}

/* Whether a placement entry's model ("base/KokoroAlbert", "KokoroAlbert.mlmodelc")
 * names the file stem. */
static bool entry_names(const char *model, const char *stem)
{
	const char *slash = strrchr(model, '/');
	const char *b = slash ? slash + 1 : model;
	size_t n = strlen(stem);
	return n && strncmp(b, stem, n) == 0 && (b[n] == 0 || b[n] == '.');
}

/* Model-level evidence: the counts of m's placed units against the entry for m. */
static enum al_status compare_counts(const al_model *m, const struct al_evidence *e, struct al_cmp *out)
{
	struct nodes ns = {0};
	if (!collect(m, &ns)) {
		ali_free(ns.v);
		return AL_E_NOMEM;
	}
	out->model_level = true;
	for (size_t i = 0; i < ns.n; i++) {
		const struct al_verdict *v = &ns.v[i]->verdict;
		out->predicted_count[v->placed == AL_UNIT_GPU ? 1 : v->placed == AL_UNIT_CPU ? 2 : 0]++;
		out->predicted_ane_eligible += v->ane;
	}
	ali_free(ns.v);
	out->consts = ali_count_consts(m);
	char stem[256];
	model_stem(m, stem, sizeof stem);
	for (size_t i = 0; i < e->n_models && !out->entry; i++)
		if (entry_names(e->models[i].model, stem))
			out->entry = &e->models[i];
	if (!out->entry && e->n_models == 1)
		out->entry = &e->models[0];
	if (!out->entry) {
		out->unmatched = e->n_models;
		return AL_OK;
	}
	uint64_t pred = 0, obs = 0, same = 0;
	for (int u = 0; u < 3; u++) {
		uint64_t a = out->predicted_count[u], b = out->entry->count[u];
		pred += a;
		obs += b;
		same += a < b ? a : b;
	}
	out->matched = (size_t)(pred > obs ? pred : obs);
	out->agreed = (size_t)same;
	out->unmatched = e->n_models - 1;
	return AL_OK;
}

enum al_status ali_compare(const al_model *m, const struct al_evidence *e, struct al_cmp *out)
{
	memset(out, 0, sizeof *out);
	if (e->format == AL_EVF_PLACEMENT)
		return compare_counts(m, e, out);
	struct nodes ns = {0};
	struct named *idx = NULL;
	struct typed *tn = NULL, *te = NULL;
	bool *used = NULL;
	size_t *group_end = NULL, *cursor = NULL;
	enum al_status st = AL_E_NOMEM;
	if (!collect(m, &ns))
		goto done;
	size_t n_names = 0;
	for (size_t i = 0; i < ns.n; i++)
		n_names += 1 + ns.v[i]->n_outputs;
	out->rows = ali_calloc(e->n_ops ? e->n_ops : 1, sizeof *out->rows);
	idx = ali_calloc(n_names ? n_names : 1, sizeof *idx);
	used = ali_calloc(ns.n ? ns.n : 1, sizeof *used);
	tn = ali_calloc(ns.n ? ns.n : 1, sizeof *tn);
	te = ali_calloc(e->n_ops ? e->n_ops : 1, sizeof *te);
	if (!out->rows || !idx || !used || !tn || !te)
		goto done;
	out->n_rows = e->n_ops;
	size_t k = 0;
	for (size_t i = 0; i < ns.n; i++) {
		const struct al_node *n = ns.v[i];
		for (uint32_t o = 0; o < n->n_outputs; o++)
			if (n->outputs[o])
				idx[k++] = (struct named){n->outputs[o], n, i};
		if (n->name)
			idx[k++] = (struct named){n->name, n, i};
	}
	qsort(idx, k, sizeof *idx, by_name);
	/* per entry, the last of its name's run, and per run, where its first
	 * untaken node may be */
	group_end = ali_calloc(k ? k : 1, sizeof *group_end);
	cursor = ali_calloc(k ? k : 1, sizeof *cursor);
	if (!group_end || !cursor)
		goto done;
	for (size_t j = k; j-- > 0;) {
		group_end[j] = j + 1 < k && strcmp(idx[j].name, idx[j + 1].name) == 0 ? group_end[j + 1] : j;
		cursor[j] = j;
	}
	/* 1. by output name (a layer name for NeuralNetwork models) */
	size_t n_te = 0;
	for (size_t r = 0; r < e->n_ops; r++) {
		struct al_cmp_row *row = &out->rows[r];
		row->ev = &e->ops[r];
		struct named key = {e->ops[r].name, NULL, 0};
		size_t lo = 0, hi = k;
		while (lo < hi) { /* first entry with name >= key */
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(idx[mid].name, key.name) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < k && strcmp(idx[lo].name, key.name) == 0) {
			/* a name several nodes define (branches of a cond): the first not yet
			 * taken, from where the last search of the name stopped (taken ones stay
			 * taken), so many ops of one name cost one pass over its nodes */
			size_t hi2 = group_end[lo], at = cursor[lo];
			while (at < hi2 && used[idx[at].order])
				at++;
			cursor[lo] = at;
			/* an os_log "@ N" picks among them by position: the group is sorted by it */
			if (hi2 > lo && e->ops[r].index != UINT32_MAX) {
				size_t a = lo, b = hi2 + 1;
				while (a < b) {
					size_t mid = a + (b - a) / 2;
					if (idx[mid].order < e->ops[r].index)
						a = mid + 1;
					else
						b = mid;
				}
				if (a <= hi2 && idx[a].order == e->ops[r].index && !used[idx[a].order])
					at = a;
			}
			row->node = idx[at].node;
			row->match = AL_MATCH_NAME;
			used[idx[at].order] = true;
		} else if (*e->ops[r].type) {
			te[n_te++] = (struct typed){e->ops[r].type, r};
		}
	}
	/* 2. the k-th unmatched op of a type in the evidence to the k-th unmatched node of that type */
	size_t n_tn = 0;
	for (size_t i = 0; i < ns.n; i++)
		if (!used[i])
			tn[n_tn++] = (struct typed){type_of_node(ns.v[i]), i};
	qsort(tn, n_tn, sizeof *tn, by_type);
	qsort(te, n_te, sizeof *te, by_type);
	for (size_t a = 0, b = 0; a < n_te && b < n_tn;) {
		int c = strcmp(te[a].type, tn[b].type);
		if (c < 0) {
			a++;
		} else if (c > 0) {
			b++;
		} else {
			struct al_cmp_row *row = &out->rows[te[a].i];
			row->node = ns.v[tn[b].i];
			row->match = AL_MATCH_ORDER;
			out->by_order++;
			a++, b++;
		}
	}
	/* 3. count */
	for (size_t r = 0; r < out->n_rows; r++) {
		struct al_cmp_row *row = &out->rows[r];
		if (!row->node) {
			out->unmatched++;
			continue;
		}
		const struct al_verdict *v = &row->node->verdict;
		row->predicted = v->placed;
		row->agree = ali_obs_agrees(row->ev->obs, v->placed);
		out->matched++;
		out->agreed += row->agree;
		int p = v->placed == AL_UNIT_GPU ? 1 : v->placed == AL_UNIT_CPU ? 2 : 0;
		out->confusion[p][row->ev->obs]++;
		for (uint32_t i = 0; i < v->n_rules; i++)
			if (!count_rule(out, v->rules[i], row->ev->obs))
				goto done;
		if (v->moved_by && !count_rule(out, v->moved_by, row->ev->obs))
			goto done;
	}
	st = AL_OK;
done:
	ali_free(ns.v);
	ali_free(idx);
	ali_free(group_end);
	ali_free(cursor);
	ali_free(used);
	ali_free(tn);
	ali_free(te);
	if (st != AL_OK)
		ali_cmp_free(out);
	return st;
}

void ali_cmp_free(struct al_cmp *c)
{
	ali_free(c->rows);
	ali_free(c->rules);
	memset(c, 0, sizeof *c);
}

double ali_cmp_agreement(const struct al_cmp *c)
{
	return c->matched ? 100.0 * (double)c->agreed / (double)c->matched : 100.0;
}

/* ================================================================ writing */

/* A name the text formats can carry as one token; else the writer uses
 * anelint_op_N and the reader's type + order fallback matches it. */
static bool plain_name(const char *s)
{
	if (!s || !*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

/* A name as an os_log line of anelint's carries it: bytes outside printable
 * ASCII, '\\' and '(' as \xNN (the reader undoes it), cut to fit cap. */
static void line_escape(const char *s, char *buf, size_t cap)
{
	size_t k = 0;
	for (; *s && k + 5 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c >= 0x7f || c == '\\' || c == '(')
			k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", c);
		else
			buf[k++] = (char)c;
	}
	buf[k] = 0;
}

static const char *unit_word(enum al_unit u, int f)
{
	bool ane = u == AL_UNIT_ANE, gpu = u == AL_UNIT_GPU;
	switch (f) {
	case AL_EVF_MIL: return ane ? "ane" : gpu ? "mps_graph" : "classic_cpu";
	case AL_EVF_PLAN: return ane ? "N" : gpu ? "G" : "C";
	case AL_EVF_MLPERF: return ane ? "neuralEngine" : gpu ? "gpu" : "cpu";
	default: return ane ? "ane" : gpu ? "gpu" : "cpu";
	}
}

/* A reason as plain printable ASCII without quotes or backslashes (MIL strings). */
static void plain_text(const char *s, char *buf, size_t cap)
{
	size_t k = 0;
	for (; s && *s && k + 1 < cap; s++)
		buf[k++] = (*s >= 0x20 && *s < 0x7f && *s != '"' && *s != '\\') ? *s : '_';
	buf[k] = 0;
}

static const char *first_reason(const struct al_node *n)
{
	const struct al_verdict *v = &n->verdict;
	for (uint32_t i = 0; i < v->n_rules; i++)
		if (v->rules[i]->kind != AL_RULE_WARN)
			return v->reasons[i];
	if (v->moved_by)
		return v->moved_by->title;
	return "placed off the ANE by the partition";
}

static void put(struct al_buf *b, const char *s)
{
	ali_buf_put(b, s, strlen(s));
}

enum al_status ali_evidence_write(const al_model *m, int f, const char *chip, const char *os, struct al_buf *out)
{
	struct nodes ns = {0};
	if (!collect(m, &ns)) {
		ali_free(ns.v);
		return AL_E_NOMEM;
	}
	char name[48], why[600], esc[AL_EV_MAX_TEXT + 8];
	enum al_status st = AL_OK;
	if (f == AL_EVF_JSON || f == AL_EVF_MLPERF) {
		json_object *top = json_object_new_object(), *ops = json_object_new_array();
		for (size_t i = 0; i < ns.n; i++) {
			const struct al_node *n = ns.v[i];
			enum al_unit u = n->verdict.placed;
			json_object *o = json_object_new_object();
			const char *nm = n->n_outputs && n->outputs[0] ? n->outputs[0] : n->name ? n->name : "";
			if (f == AL_EVF_JSON) {
				json_object_object_add(o, "name", json_object_new_string(nm));
				json_object_object_add(o, "type", json_object_new_string(n->type));
				json_object_object_add(o, "unit", json_object_new_string(unit_word(u, f)));
				if (u != AL_UNIT_ANE)
					json_object_object_add(o, "reason", json_object_new_string(first_reason(n)));
			} else {
				json_object *outs = json_object_new_array(), *o0 = json_object_new_object();
				json_object *du = json_object_new_object(), *pref = json_object_new_object();
				json_object_object_add(o0, "name", json_object_new_string(nm));
				json_object_array_add(outs, o0);
				json_object_object_add(o, "operatorName", json_object_new_string(n->type));
				json_object_object_add(o, "outputs", outs);
				json_object_object_add(pref, "deviceType", json_object_new_string(unit_word(u, f)));
				json_object_object_add(du, "preferred", pref);
				json_object_object_add(o, "deviceUsage", du);
			}
			json_object_array_add(ops, o);
		}
		if (f == AL_EVF_JSON) {
			json_object_object_add(top, "schema", json_object_new_string("anelint-evidence"));
			json_object_object_add(top, "version", json_object_new_int(1));
			json_object_object_add(top, "chip", json_object_new_string(chip));
			json_object_object_add(top, "os", json_object_new_string(os));
			json_object_object_add(top, "source", json_object_new_string("anelint compare --write-evidence json"));
			json_object_object_add(top, "ops", ops);
		} else {
			json_object *info = json_object_new_object(), *dr = json_object_new_object();
			json_object *ms = json_object_new_object(), *prog = json_object_new_object();
			json_object *p0 = json_object_new_object(), *fns = json_object_new_object();
			json_object *fn = json_object_new_object(), *blk = json_object_new_object();
			json_object_object_add(info, "chip", json_object_new_string(chip));
			json_object_object_add(info, "osNameAndVersionWithoutBuildNumber", json_object_new_string(os));
			json_object_object_add(top, "deviceInfo", info);
			json_object_object_add(blk, "operations", ops);
			json_object_object_add(fn, "block", blk);
			json_object_object_add(fns, "main", fn);
			json_object_object_add(p0, "functions", fns);
			json_object_object_add(prog, "_0", p0);
			json_object_object_add(ms, "program", prog);
			json_object_object_add(dr, "modelStructure", ms);
			json_object_object_add(top, "deviceResults", dr);
		}
		put(out, json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		put(out, "\n");
		json_object_put(top);
	} else if (f == AL_EVF_MIL) {
		put(out, "program(1.0)\n{\n    func main<ios18>() {\n");
		for (size_t i = 0; i < ns.n; i++) {
			const struct al_node *n = ns.v[i];
			const char *nm = n->n_outputs && n->outputs[0] ? n->outputs[0] : n->name;
			if (!plain_name(nm)) {
				snprintf(name, sizeof name, "anelint_op_%zu", i);
				nm = name;
			}
			const char *type = plain_name(n->type) ? n->type : "unknown_op";
			ali_buf_printf(out, "        tensor<fp16, [1]> %s = %s()[SelectedBackend = tensor<string, []>(\"%s\")",
			     nm, type, unit_word(n->verdict.placed, f));
			if (n->verdict.placed != AL_UNIT_ANE) {
				plain_text(first_reason(n), why, sizeof why);
				ali_buf_printf(out, ", ValidationMessage = dict<tensor<string, []>, tensor<string, []>>({{\"ane\", \"%s\"}})", why);
			}
			put(out, "];\n");
		}
		/* a block returns names it defines; the last op's */
		if (ns.n) {
			const struct al_node *n = ns.v[ns.n - 1];
			const char *nm = n->n_outputs && n->outputs[0] ? n->outputs[0] : n->name;
			if (!plain_name(nm)) {
				snprintf(name, sizeof name, "anelint_op_%zu", ns.n - 1);
				nm = name;
			}
			ali_buf_printf(out, "    } -> (%s);\n}\n", nm);
		} else {
			put(out, "    } -> ();\n}\n");
		}
	} else if (f == AL_EVF_PLACEMENT) {
		/* FluidAudio's shape: one entry per model, counts only (estimatedCost left
		 * empty: anelint's costs are estimates, not MLComputePlan's) */
		uint64_t c[3] = {0}, eligible = 0;
		for (size_t i = 0; i < ns.n; i++) {
			enum al_unit u = ns.v[i]->verdict.placed;
			c[u == AL_UNIT_GPU ? 1 : u == AL_UNIT_CPU ? 2 : 0]++;
			eligible += ns.v[i]->verdict.ane;
		}
		char stem[256];
		json_object *arr = json_object_new_array(), *o = json_object_new_object(), *p = json_object_new_object();
		static const char *const keys[3] = {"ANE", "GPU", "CPU"};
		for (int u = 0; u < 3; u++)
			if (c[u])
				json_object_object_add(p, keys[u], json_object_new_int64((int64_t)c[u]));
		size_t consts = ali_count_consts(m);
		if (consts)
			json_object_object_add(p, "unknown", json_object_new_int64((int64_t)consts));
		json_object_object_add(o, "model", json_object_new_string(model_stem(m, stem, sizeof stem)));
		json_object_object_add(o, "operationsSupportingANE", json_object_new_int64((int64_t)eligible));
		json_object_object_add(o, "preferredOperations", p);
		json_object_object_add(o, "estimatedCost", json_object_new_object());
		json_object_object_add(o, "chip", json_object_new_string(chip));
		json_object_object_add(o, "os", json_object_new_string(os));
		json_object_array_add(arr, o);
		put(out, json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		put(out, "\n");
		json_object_put(arr);
	} else if (f == AL_EVF_PLAN || f == AL_EVF_OSLOG) {
		ali_buf_printf(out, "# chip: %s\n# os: %s\n", chip, os);
		if (f == AL_EVF_PLAN)
			put(out, "Key: C=CPU, G=GPU, N=NeuralEngine\n");
		for (size_t i = 0; i < ns.n; i++) {
			const struct al_node *n = ns.v[i];
			const char *nm = n->n_outputs && n->outputs[0] ? n->outputs[0] : n->name;
			if (f == AL_EVF_OSLOG && nm && *nm) {
				line_escape(nm, esc, sizeof esc);
				nm = esc;
			} else if (!plain_name(nm)) {
				snprintf(name, sizeof name, "anelint_op_%zu", i);
				nm = name;
			}
			const char *type = plain_name(n->type) ? n->type : "unknown_op";
			enum al_unit u = n->verdict.placed;
			if (f == AL_EVF_PLAN) {
				ali_buf_printf(out, "0.00%% %s|%s %s = %s()\n", unit_word(u, f), unit_word(u, f), nm, type);
			} else if (u != AL_UNIT_ANE) {
				plain_text(first_reason(n), why, sizeof why);
				ali_buf_printf(out, "Kernel validation warning %s (%s) @ %zu: Unsupported: %s\n", nm, type, i, why);
			}
		}
	} else {
		st = AL_E_INVALID_ARG;
	}
	ali_free(ns.v);
	if (st == AL_OK && out->failed)
		st = AL_E_NOMEM;
	return st;
}

/* SPDX-License-Identifier: MIT */
/* evidence.c: the readers of placement evidence (evidence.h, docs/evidence.md).
 * Each format ends in the same list of (op name, type, observed unit, device
 * reason, line). Hostile input: the file size, op count and every kept string
 * are bounded, JSON nesting is capped, MIL text goes through the MIL text
 * reader (its own bounds), and the first problem is one located error. */
#include "evidence.h"
#include "model.h"
#include "miltext.h"
#include "mil_fields.h"
#include "pb.h"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const format_names[AL_EVF_COUNT] = {"auto", "json", "mil", "plan", "mlperf", "oslog", "placement"};
static const char *const obs_names[AL_OBS_COUNT] = {"ane", "gpu", "cpu", "not_ane"};

const char *ali_ev_format_name(int f)
{
	return f >= 0 && f < AL_EVF_COUNT ? format_names[f] : "?";
}

int ali_ev_format_find(const char *name)
{
	for (int i = 0; i < AL_EVF_COUNT; i++)
		if (name && strcmp(name, format_names[i]) == 0)
			return i;
	return -1;
}

const char *ali_obs_name(int o)
{
	return o >= 0 && o < AL_OBS_COUNT ? obs_names[o] : "?";
}

/* ================================================================ helpers */

struct ev_parse {
	struct al_evidence *e;
	al_diags *d;
	const char *text;
	size_t n;
	bool nomem;
};

__attribute__((format(printf, 4, 5)))
static enum al_status fail(struct ev_parse *P, uint64_t offset, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ali_diag_vadd(P->d, AL_SEV_ERROR, P->e->file, offset, where, NULL, fmt, ap);
	va_end(ap);
	return AL_E_FORMAT;
}

static const char *keep(struct ev_parse *P, const char *s, size_t n)
{
	if (n > AL_EV_MAX_TEXT)
		n = AL_EV_MAX_TEXT;
	const char *z = memchr(s, 0, n); /* a NUL inside ends the text */
	if (z)
		n = (size_t)(z - s);
	char *r = ali_arena_strndup(&P->e->arena, s, n);
	if (!r)
		P->nomem = true;
	return r ? r : "";
}

/* "ios16.gather" -> "gather": the opset prefix CoreMLInspect and report.json print. */
static void strip_opset(const char **s, size_t *n)
{
	const char *dot = memchr(*s, '.', *n);
	if (dot && *n >= 3 && strncasecmp(*s, "ios", 3) == 0) {
		*n -= (size_t)(dot + 1 - *s);
		*s = dot + 1;
	}
}

/* A unit word as the tools spell it; -1 when not one. */
static int obs_of(const char *s, size_t n)
{
	static const struct {
		const char *w;
		int obs;
	} words[] = {
		{"ane", AL_OBS_ANE}, {"neuralengine", AL_OBS_ANE}, {"neural_engine", AL_OBS_ANE},
		{"mlneuralenginecomputedevice", AL_OBS_ANE}, {"n", AL_OBS_ANE},
		{"gpu", AL_OBS_GPU}, {"mps_graph", AL_OBS_GPU}, {"mps", AL_OBS_GPU}, {"mlgpucomputedevice", AL_OBS_GPU},
		{"g", AL_OBS_GPU},
		{"cpu", AL_OBS_CPU}, {"classic_cpu", AL_OBS_CPU}, {"bnns", AL_OBS_CPU}, {"mlcpucomputedevice", AL_OBS_CPU},
		{"c", AL_OBS_CPU},
		{"not_ane", AL_OBS_NOT_ANE},
	};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strlen(words[i].w) == n && strncasecmp(s, words[i].w, n) == 0)
			return words[i].obs;
	return -1;
}

static enum al_status add_op(struct ev_parse *P, const char *name, size_t nn, const char *type, size_t tn,
			     const char *reason, size_t rn, int obs, uint32_t line)
{
	struct al_evidence *e = P->e;
	if (e->n_ops >= AL_EV_MAX_OPS)
		return fail(P, UINT64_MAX, NULL, "more than %d ops; refused", AL_EV_MAX_OPS);
	if (e->n_ops == e->cap_ops) {
		size_t cap = e->cap_ops ? e->cap_ops * 2 : 64;
		struct al_ev_op *o = ali_realloc(e->ops, cap * sizeof *o);
		if (!o)
			return AL_E_NOMEM;
		e->ops = o;
		e->cap_ops = cap;
	}
	if (type)
		strip_opset(&type, &tn);
	struct al_ev_op *o = &e->ops[e->n_ops++];
	o->name = keep(P, name, nn);
	o->type = type ? keep(P, type, tn) : "";
	o->reason = reason && rn ? keep(P, reason, rn) : NULL;
	o->obs = obs;
	o->line = line;
	o->index = UINT32_MAX;
	return P->nomem ? AL_E_NOMEM : AL_OK;
}

/* "iOS 18.2", "macOS 15", "ios18" -> the release; NULL when unknown. */
static const struct al_release *release_of(const char *s)
{
	char id[32];
	size_t k = 0;
	for (; *s && *s != '.' && k + 1 < sizeof id; s++)
		if (!isspace((unsigned char)*s))
			id[k++] = (char)tolower((unsigned char)*s);
	id[k] = 0;
	return k ? al_release_find(id) : NULL;
}

static void set_meta(struct ev_parse *P, const char **field, const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n)
		*field = keep(P, s, n > 64 ? 64 : n);
}

static void resolve_meta(struct al_evidence *e)
{
	e->target = e->chip ? al_target_find(e->chip) : NULL;
	e->release = e->os ? release_of(e->os) : NULL;
	e->has_cu = e->compute_units && al_compute_units_parse(e->compute_units, &e->cu);
}

/* Offset -> 1-based line. */
static uint32_t line_at(const char *s, size_t off)
{
	uint32_t line = 1;
	for (size_t i = 0; i < off; i++)
		line += s[i] == '\n';
	return line;
}

/* ================================================================ JSON (own, mlperf) */

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static json_object *jget(json_object *o, const char *key, json_type t)
{
	json_object *v;
	if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, t))
		return NULL;
	return v;
}

static enum al_status parse_own(struct ev_parse *P, json_object *top)
{
	json_object *v = jget(top, "version", json_type_int);
	if (!v || json_object_get_int64(v) != 1)
		return fail(P, UINT64_MAX, "version", "evidence schema version must be 1");
	const char *s;
	if ((s = jstr(top, "chip")))
		set_meta(P, &P->e->chip, s, strlen(s));
	if ((s = jstr(top, "os")))
		set_meta(P, &P->e->os, s, strlen(s));
	if ((s = jstr(top, "device")))
		set_meta(P, &P->e->device, s, strlen(s));
	if ((s = jstr(top, "compute_units")))
		set_meta(P, &P->e->compute_units, s, strlen(s));
	json_object *ops = jget(top, "ops", json_type_array);
	if (!ops)
		return fail(P, UINT64_MAX, "ops", "no \"ops\" array");
	size_t n = json_object_array_length(ops);
	for (size_t i = 0; i < n; i++) {
		char where[48];
		snprintf(where, sizeof where, "ops[%zu]", i);
		json_object *op = json_object_array_get_idx(ops, i);
		const char *name = jstr(op, "name"), *unit = jstr(op, "unit");
		if (!name || !unit)
			return fail(P, UINT64_MAX, where, "an op needs \"name\" and \"unit\" strings");
		int obs = obs_of(unit, strlen(unit));
		if (obs < 0)
			return fail(P, UINT64_MAX, where, "unit must be ane, gpu, cpu or not_ane");
		const char *type = jstr(op, "type"), *reason = jstr(op, "reason");
		enum al_status st = add_op(P, name, strlen(name), type, type ? strlen(type) : 0, reason,
					   reason ? strlen(reason) : 0, obs, 0);
		if (st != AL_OK)
			return st;
	}
	return AL_OK;
}

/* report.json of an Xcode .mlperf bundle: operations under
 * deviceResults.modelStructure.program._0.functions.<fn>.block.operations[]. */
static enum al_status parse_mlperf(struct ev_parse *P, json_object *top)
{
	json_object *dr = jget(top, "deviceResults", json_type_object);
	json_object *dra = jget(top, "deviceResults", json_type_array);
	if (!dr && dra && json_object_array_length(dra) > 0)
		dr = json_object_array_get_idx(dra, 0);
	if (!dr || !json_object_is_type(dr, json_type_object))
		return fail(P, UINT64_MAX, "deviceResults", "no deviceResults object");
	json_object *info = jget(top, "deviceInfo", json_type_object);
	if (!info)
		info = jget(dr, "deviceInfo", json_type_object);
	const char *s;
	if ((s = jstr(info, "modelName")))
		set_meta(P, &P->e->device, s, strlen(s));
	if ((s = jstr(info, "osNameAndVersionWithoutBuildNumber")))
		set_meta(P, &P->e->os, s, strlen(s));
	if ((s = jstr(info, "chip")))
		set_meta(P, &P->e->chip, s, strlen(s));
	json_object *prog = jget(jget(dr, "modelStructure", json_type_object), "program", json_type_object);
	json_object *p0 = jget(prog, "_0", json_type_object);
	json_object *fns = jget(p0 ? p0 : prog, "functions", json_type_object);
	if (!fns)
		return fail(P, UINT64_MAX, "deviceResults.modelStructure.program",
			    "no program._0.functions object (a NeuralNetwork report is not read)");
	json_object_object_foreach(fns, fname, fn) {
		json_object *ops = jget(jget(fn, "block", json_type_object), "operations", json_type_array);
		if (!ops)
			return fail(P, UINT64_MAX, fname, "function has no block.operations array");
		size_t n = json_object_array_length(ops);
		for (size_t i = 0; i < n; i++) {
			char where[96];
			snprintf(where, sizeof where, "functions.%.40s.block.operations[%zu]", fname, i);
			json_object *op = json_object_array_get_idx(ops, i);
			json_object *pref = jget(jget(op, "deviceUsage", json_type_object), "preferred", json_type_object);
			const char *dev = jstr(pref, "deviceType");
			if (!dev)
				continue; /* a const: no device usage */
			int obs = obs_of(dev, strlen(dev));
			if (obs < 0)
				return fail(P, UINT64_MAX, where, "deviceType must be neuralEngine, gpu or cpu");
			json_object *outs = jget(op, "outputs", json_type_array);
			json_object *o0 = outs && json_object_array_length(outs) ? json_object_array_get_idx(outs, 0) : NULL;
			const char *name = jstr(o0, "name"), *type = jstr(op, "operatorName");
			if (!name)
				return fail(P, UINT64_MAX, where, "an operation needs outputs[0].name");
			enum al_status st = add_op(P, name, strlen(name), type, type ? strlen(type) : 0, NULL, 0, obs, 0);
			if (st != AL_OK)
				return st;
		}
	}
	return AL_OK;
}

/* A FluidAudio-style compute placement file (Scripts/ane_profile.swift): an array
 * of (or one) {"model", "operationsSupportingANE", "preferredOperations": {"ANE",
 * "GPU", "CPU", "unknown": count}, "estimatedCost": {unit: share}}. Counts only:
 * compared at model level. chip / os / compute_units keys (anelint's writer adds
 * them) are read from the first entry that has them. */
static bool count_of(json_object *v, uint64_t *out)
{
	if (!v || !json_object_is_type(v, json_type_int))
		return false;
	int64_t x = json_object_get_int64(v);
	if (x < 0 || (uint64_t)x > AL_EV_MAX_COUNT)
		return false;
	*out = (uint64_t)x;
	return true;
}

static enum al_status parse_placement(struct ev_parse *P, json_object *top)
{
	bool arr = json_object_is_type(top, json_type_array);
	size_t n = arr ? json_object_array_length(top) : 1;
	if (n > AL_EV_MAX_OPS)
		return fail(P, UINT64_MAX, NULL, "more than %d entries; refused", AL_EV_MAX_OPS);
	struct al_evidence *e = P->e;
	e->models = ali_calloc(n ? n : 1, sizeof *e->models);
	if (!e->models)
		return AL_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		char where[64] = "top";
		if (arr)
			snprintf(where, sizeof where, "[%zu]", i);
		json_object *o = arr ? json_object_array_get_idx(top, i) : top;
		if (!o || !json_object_is_type(o, json_type_object))
			return fail(P, UINT64_MAX, where, "an entry must be an object");
		json_object *pref = jget(o, "preferredOperations", json_type_object);
		if (!pref)
			return fail(P, UINT64_MAX, where, "an entry needs a \"preferredOperations\" object");
		struct al_ev_model *m = &e->models[e->n_models];
		m->supports_ane = -1;
		m->index = (uint32_t)i;
		const char *s = jstr(o, "model");
		m->model = s ? keep(P, s, strlen(s)) : "";
		json_object_object_foreach(pref, key, val) {
			uint64_t c;
			if (!count_of(val, &c))
				return fail(P, UINT64_MAX, where, "preferredOperations.%.40s must be a count 0-%u", key,
					    AL_EV_MAX_COUNT);
			int obs = strcasecmp(key, "unknown") == 0 ? -2 : obs_of(key, strlen(key));
			if (obs == -2)
				m->unknown = c;
			else if (obs >= 0 && obs <= AL_OBS_CPU)
				m->count[obs] = c;
			else
				return fail(P, UINT64_MAX, where, "preferredOperations.%.40s: not ANE, GPU, CPU or unknown", key);
		}
		json_object *sup = jget(o, "operationsSupportingANE", json_type_int);
		uint64_t c;
		if (sup) {
			if (!count_of(sup, &c))
				return fail(P, UINT64_MAX, where, "operationsSupportingANE must be a count 0-%u", AL_EV_MAX_COUNT);
			m->supports_ane = (int64_t)c;
		}
		if (!e->chip && (s = jstr(o, "chip")))
			set_meta(P, &e->chip, s, strlen(s));
		if (!e->os && (s = jstr(o, "os")))
			set_meta(P, &e->os, s, strlen(s));
		if (!e->compute_units && (s = jstr(o, "compute_units")))
			set_meta(P, &e->compute_units, s, strlen(s));
		if (!e->device && (s = jstr(o, "device")))
			set_meta(P, &e->device, s, strlen(s));
		e->n_models++;
	}
	return P->nomem ? AL_E_NOMEM : AL_OK;
}

static enum al_status parse_json(struct ev_parse *P, int format)
{
	struct json_tokener *tok = json_tokener_new_ex(AL_EV_JSON_DEPTH);
	if (!tok)
		return AL_E_NOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	size_t skip = P->n >= 3 && memcmp(P->text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
	json_object *top = json_tokener_parse_ex(tok, P->text + skip, (int)(P->n - skip));
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t end = skip + json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!top) {
		char where[32];
		snprintf(where, sizeof where, "line %u", line_at(P->text, end));
		return fail(P, end, where, "invalid JSON: %s",
			    jerr == json_tokener_continue ? "unexpected end of file" : json_tokener_error_desc(jerr));
	}
	while (end < P->n && isspace((unsigned char)P->text[end]))
		end++;
	enum al_status st;
	if (end < P->n)
		st = fail(P, end, NULL, "invalid JSON: unexpected data after the top-level value");
	else if (format == AL_EVF_PLACEMENT || (format == AL_EVF_AUTO && (json_object_is_type(top, json_type_array) ||
									  jget(top, "preferredOperations", json_type_object)))) {
		P->e->format = AL_EVF_PLACEMENT;
		st = parse_placement(P, top);
	} else if (!json_object_is_type(top, json_type_object))
		st = fail(P, UINT64_MAX, NULL, "the top-level JSON value is not an object");
	else if (format == AL_EVF_MLPERF || (format == AL_EVF_AUTO && jget(top, "deviceResults", json_type_object)) ||
		 (format == AL_EVF_AUTO && jget(top, "deviceResults", json_type_array))) {
		P->e->format = AL_EVF_MLPERF;
		st = parse_mlperf(P, top);
	} else {
		const char *schema = jstr(top, "schema");
		P->e->format = AL_EVF_JSON;
		st = schema && strcmp(schema, "anelint-evidence") == 0
			     ? parse_own(P, top)
			     : fail(P, UINT64_MAX, "schema",
				    "neither anelint evidence (\"schema\": \"anelint-evidence\") nor a .mlperf report.json "
				    "(\"deviceResults\")");
	}
	json_object_put(top);
	return st;
}

/* ================================================================ analytics.mil */

/* The strings of a dict<string, string> Value: "k: v; k: v" into buf. */
static size_t dict_text(al_span val, char *buf, size_t cap)
{
	size_t k = 0;
	buf[0] = 0;
	struct ali_mil_dict_iter it;
	if (!ali_mil_dict_begin(val, &it))
		return 0;
	al_span kval, vval;
	while (k + 1 < cap && ali_mil_dict_next(&it, &kval, &vval)) {
		al_span ks[1], vs[1];
		if (ali_mil_value_strings(kval, ks, 1) < 1 || ali_mil_value_strings(vval, vs, 1) < 1)
			continue;
		int w = snprintf(buf + k, cap - k, "%s%.*s: %.*s", k ? "; " : "", (int)(ks[0].n > 64 ? 64 : ks[0].n),
				 (const char *)ks[0].p, (int)(vs[0].n > 900 ? 900 : vs[0].n), (const char *)vs[0].p);
		if (w < 0)
			break;
		k += (size_t)w;
		if (k >= cap)
			k = cap - 1;
	}
	return k;
}

static enum al_status mil_graph(struct ev_parse *P, const struct al_graph *g, int depth)
{
	if (depth > AL_MILTEXT_MAX_NEST)
		return AL_OK;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		al_span v, s[1];
		if (ali_mil_attr(n, "SelectedBackend", &v) && ali_mil_value_strings(v, s, 1) >= 1) {
			int obs = obs_of((const char *)s[0].p, s[0].n);
			if (obs < 0)
				return fail(P, UINT64_MAX, n->path, "SelectedBackend '%.*s' is not a known backend",
					    (int)(s[0].n > 40 ? 40 : s[0].n), (const char *)s[0].p);
			char why[1024];
			size_t wn = 0;
			if (ali_mil_attr(n, "ValidationMessage", &v))
				wn = dict_text(v, why, sizeof why);
			const char *name = n->name ? n->name : "";
			enum al_status st = add_op(P, name, strlen(name), n->type, strlen(n->type), why, wn, obs, 0);
			if (st != AL_OK)
				return st;
		}
		for (uint32_t k = 0; k < n->n_sub; k++) {
			enum al_status st = mil_graph(P, n->sub[k], depth + 1);
			if (st != AL_OK)
				return st;
		}
	}
	return AL_OK;
}

static enum al_status parse_mil(struct ev_parse *P)
{
	struct al_model *m = ali_calloc(1, sizeof *m);
	if (!m)
		return AL_E_NOMEM;
	m->path = ali_arena_strndup(&m->arena, P->e->file, strlen(P->e->file));
	struct al_submodel *sub = m->path ? ali_model_add_sub(m) : NULL;
	if (!sub) {
		al_model_free(m);
		return AL_E_NOMEM;
	}
	sub->world = AL_WORLD_MIL;
	sub->type = "mlProgram";
	enum al_status st = ali_load_mil_text(m, sub, (al_span){(const uint8_t *)P->text, P->n}, P->e->file, P->d);
	for (uint32_t g = 0; st == AL_OK && g < sub->n_graphs; g++)
		st = mil_graph(P, sub->graphs[g], 0);
	al_model_free(m);
	return st;
}

/* ================================================================ text: plan dumps, os_log */

struct line {
	const char *s;
	size_t n;
	uint32_t no;
};

static bool next_line(struct ev_parse *P, size_t *pos, struct line *l)
{
	if (*pos >= P->n)
		return false;
	const char *s = P->text + *pos;
	const char *nl = memchr(s, '\n', P->n - *pos);
	size_t n = nl ? (size_t)(nl - s) : P->n - *pos;
	*pos += n + (nl != NULL);
	if (n && s[n - 1] == '\r')
		n--;
	l->s = s;
	l->n = n;
	l->no++;
	return true;
}

static const char *find(const char *s, size_t n, const char *w)
{
	return memmem(s, n, w, strlen(w));
}

static bool is_name_char(char c)
{
	return c && !isspace((unsigned char)c) && c != ',' && c != ']' && c != '[' && c != '"' && c != '\'' &&
	       c != '|' && c != '(' && c != ')';
}

/* "# chip: a17" / "# os: ios18" / "# device: ..." comment lines. */
static bool meta_line(struct ev_parse *P, struct line *l)
{
	if (!l->n || l->s[0] != '#')
		return false;
	static const char *const keys[] = {"# chip:", "# os:", "# device:"};
	const char **fields[] = {&P->e->chip, &P->e->os, &P->e->device};
	for (int i = 0; i < 3; i++) {
		size_t kn = strlen(keys[i]);
		if (l->n > kn && strncmp(l->s, keys[i], kn) == 0)
			set_meta(P, fields[i], l->s + kn, l->n - kn);
	}
	return true;
}

static const char *skip_sp(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static const char *word_end(const char *s, const char *end)
{
	while (s < end && is_name_char(*s))
		s++;
	return s;
}

/* CoreMLInspect: "0.68% G|C  x_1 = ios16.gather(...)"; 1 added, 0 not this form, or an error. */
static int plan_inspect(struct ev_parse *P, struct line *l, enum al_status *st)
{
	const char *s = skip_sp(l->s, l->s + l->n), *end = l->s + l->n;
	const char *p = s;
	while (p < end && (isdigit((unsigned char)*p) || *p == '.'))
		p++;
	if (p == s || p >= end || *p != '%')
		return 0;
	p = skip_sp(p + 1, end);
	if (p >= end)
		return 0;
	int obs = obs_of(p, 1);
	if (obs < 0 || p + 1 >= end || p[1] != '|')
		return 0;
	p = p + 2;
	while (p < end && (*p == 'C' || *p == 'G' || *p == 'N'))
		p++;
	p = skip_sp(p, end);
	const char *name = p, *ne = word_end(p, end);
	p = skip_sp(ne, end);
	if (ne == name || p >= end || *p != '=')
		return -1;
	p = skip_sp(p + 1, end);
	const char *type = p, *te = word_end(p, end);
	if (te == type)
		return -1;
	*st = add_op(P, name, (size_t)(ne - name), type, (size_t)(te - type), NULL, 0, obs, l->no);
	return 1;
}

/* "[12] ios18.conv outputs=[var_12] preferred=MLNeuralEngineComputeDevice supported=[...]" */
static int plan_adhoc(struct ev_parse *P, struct line *l, enum al_status *st)
{
	const char *end = l->s + l->n, *s = skip_sp(l->s, end);
	const char *pref = find(s, (size_t)(end - s), "preferred=");
	if (!pref || s >= end || *s != '[')
		return 0;
	const char *p = memchr(s, ']', (size_t)(end - s));
	if (!p)
		return -1;
	p = skip_sp(p + 1, end);
	const char *type = p, *te = word_end(p, end);
	const char *outs = find(s, (size_t)(end - s), "outputs=[");
	if (te == type || !outs)
		return -1;
	const char *name = skip_sp(outs + 9, end);
	if (name < end && (*name == '"' || *name == '\''))
		name++;
	const char *ne = word_end(name, end);
	const char *dev = pref + 10, *de = word_end(dev, end);
	int obs = obs_of(dev, (size_t)(de - dev));
	if (ne == name || obs < 0)
		return -1;
	*st = add_op(P, name, (size_t)(ne - name), type, (size_t)(te - type), NULL, 0, obs, l->no);
	return 1;
}

static void trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

/* "TYPE | NAME | DEVICE [| ...]": 0 when the third cell is no unit (a header). */
static int plan_table(struct ev_parse *P, struct line *l, enum al_status *st)
{
	const char *end = l->s + l->n, *cell[4], *cend[4];
	const char *p = l->s;
	int k = 0;
	while (k < 4) {
		const char *bar = memchr(p, '|', (size_t)(end - p));
		cell[k] = p;
		cend[k] = bar ? bar : end;
		trim(&cell[k], &cend[k]);
		k++;
		if (!bar)
			break;
		p = bar + 1;
	}
	if (k < 3)
		return 0;
	int obs = obs_of(cell[2], (size_t)(cend[2] - cell[2]));
	if (obs < 0 || cend[1] == cell[1])
		return 0;
	*st = add_op(P, cell[1], (size_t)(cend[1] - cell[1]), cell[0], (size_t)(cend[0] - cell[0]), NULL, 0, obs,
		     l->no);
	return 1;
}

static enum al_status parse_plan(struct ev_parse *P)
{
	size_t pos = 0;
	struct line l = {0};
	while (next_line(P, &pos, &l)) {
		if (meta_line(P, &l))
			continue;
		enum al_status st = AL_OK;
		int r = plan_inspect(P, &l, &st);
		if (!r)
			r = plan_adhoc(P, &l, &st);
		if (!r)
			r = plan_table(P, &l, &st);
		char where[32];
		snprintf(where, sizeof where, "line %u", l.no);
		if (r < 0)
			return fail(P, (uint64_t)(l.s - P->text), where,
				    "a compute plan line that cannot be read (see docs/evidence.md for the forms)");
		if (st != AL_OK)
			return st;
	}
	if (P->e->n_ops == 0 && !P->e->chip && !find(P->text, P->n, "Key: C=CPU"))
		return fail(P, UINT64_MAX, NULL, "no compute plan op lines found (docs/evidence.md lists the forms)");
	return AL_OK;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* "Kernel validation warning NAME (KIND) @ IDX: Unsupported: REASON" */
static enum al_status parse_oslog(struct ev_parse *P)
{
	static const char kw[] = "Kernel validation warning ";
	size_t pos = 0;
	struct line l = {0};
	while (next_line(P, &pos, &l)) {
		if (meta_line(P, &l))
			continue;
		const char *end = l.s + l.n, *k = find(l.s, l.n, kw);
		if (!k)
			continue;
		char where[32];
		snprintf(where, sizeof where, "line %u", l.no);
		const char *name = k + sizeof kw - 1, *open = find(name, (size_t)(end - name), " (");
		const char *close = open ? memchr(open, ')', (size_t)(end - open)) : NULL;
		const char *uns = close ? find(close, (size_t)(end - close), "Unsupported:") : NULL;
		if (!open || open == name || !close || !uns)
			return fail(P, (uint64_t)(l.s - P->text), where,
				    "expected 'Kernel validation warning NAME (KIND) @ N: Unsupported: REASON'");
		const char *r = uns, *re = end;
		trim(&r, &re);
		/* \xNN in a name: a byte anelint's writer escaped (docs/evidence.md) */
		char nm[AL_EV_MAX_TEXT];
		size_t nn = 0;
		for (const char *q = name; q < open && nn < sizeof nm; q++) {
			int hi = q + 4 <= open && q[0] == '\\' && q[1] == 'x' ? hex_digit(q[2]) : -1;
			int lo = hi >= 0 ? hex_digit(q[3]) : -1;
			if (lo >= 0 && (hi | lo)) {
				nm[nn++] = (char)(hi << 4 | lo);
				q += 3;
			} else {
				nm[nn++] = *q;
			}
		}
		enum al_status st = add_op(P, nm, nn, open + 2, (size_t)(close - open - 2), r, (size_t)(re - r),
					   AL_OBS_NOT_ANE, l.no);
		if (st != AL_OK)
			return st;
		const char *at = skip_sp(close + 1, end);
		if (at + 1 < end && *at == '@') {
			uint64_t v;
			const char *q = skip_sp(at + 1, end);
			if (ali_span_u64(q, (size_t)(end - q), UINT32_MAX, &v))
				P->e->ops[P->e->n_ops - 1].index = (uint32_t)v;
		}
	}
	return AL_OK;
}

/* ================================================================ entry points */

static int detect(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	if (i < n && s[i] == '{')
		return AL_EVF_JSON; /* own, mlperf or placement: by keys */
	if (i < n && s[i] == '[') { /* a placement array; "[12] ios18.conv ..." is a plan line */
		size_t j = i + 1;
		while (j < n && isspace((unsigned char)s[j]))
			j++;
		if (j < n && (s[j] == '{' || s[j] == ']'))
			return AL_EVF_JSON;
	}
	if (i + 3 <= n && memcmp(s + i, "\xEF\xBB\xBF", 3) == 0)
		return AL_EVF_JSON;
	size_t head = n < 65536 ? n : 65536;
	if (find(s, head, "Kernel validation warning "))
		return AL_EVF_OSLOG;
	if (find(s, head, "program(") && find(s, n, "SelectedBackend"))
		return AL_EVF_MIL;
	return AL_EVF_PLAN;
}

static enum al_status parse_evidence(const void *text, size_t n, const char *name, int format,
				     struct al_evidence **out, al_diags *d)
{
	*out = NULL;
	struct al_evidence *e = ali_calloc(1, sizeof *e);
	if (!e)
		return AL_E_NOMEM;
	struct ev_parse P = {.e = e, .d = d, .text = text ? text : "", .n = text ? n : 0};
	e->file = ali_arena_strndup(&e->arena, name ? name : "evidence", strlen(name ? name : "evidence"));
	if (!e->file) {
		ali_evidence_free(e);
		return AL_E_NOMEM;
	}
	enum al_status st;
	if (n > AL_EV_MAX_BYTES) {
		st = fail(&P, UINT64_MAX, NULL, "%zu bytes; evidence files over %zu MiB are refused", n,
			  AL_EV_MAX_BYTES >> 20);
	} else {
		if (format <= AL_EVF_AUTO || format >= AL_EVF_COUNT)
			format = detect(P.text, P.n);
		e->format = format;
		switch (format) {
		case AL_EVF_JSON:
		case AL_EVF_MLPERF:
		case AL_EVF_PLACEMENT: st = parse_json(&P, format == AL_EVF_JSON ? AL_EVF_AUTO : format); break;
		case AL_EVF_MIL: st = parse_mil(&P); break;
		case AL_EVF_OSLOG: st = parse_oslog(&P); break;
		default: st = parse_plan(&P); break;
		}
	}
	if (st == AL_OK && P.nomem)
		st = AL_E_NOMEM;
	if (st == AL_E_NOMEM)
		ali_diag_add(d, AL_SEV_ERROR, e->file, UINT64_MAX, NULL, NULL, "out of memory");
	if (st != AL_OK) {
		ali_evidence_free(e);
		return st;
	}
	resolve_meta(e);
	*out = e;
	return AL_OK;
}

enum al_status ali_evidence_parse(const void *text, size_t n, const char *name, int format,
				 struct al_evidence **out, al_diags *d)
{
	struct al_map guarded; /* the guard-page test mode's copy (base.h) */
	al_span s = ali_guard_span((al_span){text, text ? n : 0}, &guarded);
	enum al_status st = parse_evidence(text ? s.p : NULL, s.n, name, format, out, d);
	ali_unmap(&guarded);
	return st;
}

enum al_status ali_evidence_load(const char *path, int format, struct al_evidence **out, al_diags *d)
{
	*out = NULL;
	struct stat st;
	char buf[4096];
	const char *p = path;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { /* an .mlperf bundle */
		if ((size_t)snprintf(buf, sizeof buf, "%s/report.json", path) >= sizeof buf) {
			ali_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "path too long");
			return AL_E_IO;
		}
		p = buf;
		if (format == AL_EVF_AUTO)
			format = AL_EVF_MLPERF;
	}
	struct al_map map;
	enum al_status s = ali_map_file(p, p, &map, d);
	if (s != AL_OK)
		return s;
	s = parse_evidence(map.s.p, map.s.n, p, format, out, d);
	ali_unmap(&map);
	return s;
}

void ali_evidence_free(struct al_evidence *e)
{
	if (!e)
		return;
	ali_free(e->ops);
	ali_free(e->models);
	ali_arena_free(&e->arena);
	ali_free(e);
}

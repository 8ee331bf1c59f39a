/* SPDX-License-Identifier: MIT */
/* report_sarif.c: SARIF 2.1.0 (`--format sarif`), for code-scanning CI. One run
 * of the tool "anelint"; tool.driver.rules holds every rule in the order of
 * `anelint rules` (a user override in place of the rule it replaces, then the
 * user file's new rules), each with its id, name, title, why, fix, evidence and
 * source link. Results, in model order:
 *   - one per layer/op whose verdict falls back: the first rule that moved it,
 *     every reason in the message;
 *   - one per layer/op a partition rule moved (ANE072, ANE076; ANE073-075
 *     follow the layer that sent the work away): that rule;
 *   - one per warning rule on a layer/op ("note");
 *   - one per model-level rule.
 * Every result that fails the check (ali_each_failing: not accepted, on a unit
 * --fail-on counts) has level "error"; the others their rule kind's (illegal
 * "error", cost "warning", warn "note").
 * A result is located in the model file (the artifact, with the byte range of the
 * layer/op message as its region) and by name (a logical location: the layer or
 * op name, fully qualified with the field path). Models that could not be read
 * are tool execution notifications, and make executionSuccessful false. The
 * mapping is in docs/reports.md; json-c writes every string, ali_json_string
 * keeps it valid UTF-8. The document is written with ali_jw (report_jsonw.c) in
 * json-c's layout: each result, made as a small json-c object, is written at
 * once into a temporary file and freed (one per fallback layer: 10,000 of them
 * took 124 MB as one tree), then spliced in after the rules and artifacts that
 * making the results may extend; without a temporary file, they stay a tree. */
#ifndef AL_INFORMATION_URI /* the Makefile's INFORMATION_URI; empty: no informationUri */
#define AL_INFORMATION_URI ""
#endif
#include "report.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"

struct sarif {
	const struct al_report_opts *o;
	const struct al_rule **rules;
	size_t n_rules;
	json_object *driver_rules; /* rules added past the list (not expected) go here too */
	json_object *artifacts, *results, *models;
	FILE *spill; /* the results, written as they come (a temporary file); NULL: in `results` */
	struct ali_jw spill_w;
	char *base_real; /* --base, resolved; NULL: paths as given */
	char **files; /* artifact i's path, for the index */
	size_t n_files, cap_files;
};

static json_object *str(const char *s)
{
	return ali_json_string(s ? s : "");
}

static json_object *text_obj(const char *s)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "text", str(s));
	return o;
}

/* A URI reference for a file path: relative stays relative, absolute becomes
 * file://; every byte other than unreserved characters and "/" percent-encoded
 * (so a ':' cannot pass for a scheme, nor a space or a non-UTF-8 byte break it). */
static char *uri_of(const char *path)
{
	size_t len = strlen(path);
	bool abs = path[0] == '/';
	char *u = ali_malloc(3 * len + 8 + 1);
	if (!u)
		return NULL;
	size_t o = 0;
	if (abs) {
		memcpy(u, "file://", 7);
		o = 7;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)path[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    strchr("-._~/", c)) {
			u[o++] = (char)c;
		} else {
			static const char hex[] = "0123456789ABCDEF";
			u[o++] = '%';
			u[o++] = hex[c >> 4];
			u[o++] = hex[c & 15];
		}
	}
	u[o] = 0;
	return u;
}

/* A link safe to give as a "uri": http(s), printable ASCII without spaces,
 * quotes or angle brackets. */
static bool plain_url(const char *u)
{
	if (!u || (strncmp(u, "https://", 8) != 0 && strncmp(u, "http://", 7) != 0))
		return false;
	for (; *u; u++)
		if ((unsigned char)*u <= 0x20 || (unsigned char)*u >= 0x7f || strchr("\"<>\\^`{|}", *u))
			return false;
	return true;
}

static void put_uri(struct sarif *c, json_object *o, const char *file);

/* The artifact index of a file, adding it on first use; -1 when out of memory. */
static int64_t artifact(struct sarif *c, const char *file)
{
	for (size_t i = 0; i < c->n_files; i++)
		if (strcmp(c->files[i], file) == 0)
			return (int64_t)i;
	if (c->n_files == c->cap_files) {
		size_t nc = c->cap_files ? 2 * c->cap_files : 8;
		char **v = ali_realloc(c->files, nc * sizeof *v);
		if (!v)
			return -1;
		c->files = v;
		c->cap_files = nc;
	}
	size_t len = strlen(file);
	char *copy = ali_malloc(len + 1);
	char *uri = uri_of(file);
	if (!copy || !uri) {
		ali_free(copy);
		ali_free(uri);
		return -1;
	}
	memcpy(copy, file, len + 1);
	c->files[c->n_files] = copy;
	json_object *a = json_object_new_object(), *loc = json_object_new_object();
	put_uri(c, loc, file);
	ali_free(uri);
	json_object_object_add(a, "location", loc);
	json_object *roles = json_object_new_array();
	json_object_array_add(roles, str("analysisTarget"));
	json_object_object_add(a, "roles", roles);
	json_object_array_add(c->artifacts, a);
	return (int64_t)c->n_files++;
}

/* uri (and uriBaseId) of a file: with --base, relative to it under the id
 * SRCROOT when the file is inside it (run.originalUriBaseIds says where
 * SRCROOT is); else the path as given. */
static void put_uri(struct sarif *c, json_object *o, const char *file)
{
	const char *rel = NULL;
	char *real = c->base_real ? realpath(file, NULL) : NULL;
	size_t bl = c->base_real ? strlen(c->base_real) : 0;
	if (real && strncmp(real, c->base_real, bl) == 0 && real[bl] == '/')
		rel = real + bl + 1;
	char *uri = uri_of(rel ? rel : file);
	json_object_object_add(o, "uri", str(uri ? uri : ""));
	if (rel)
		json_object_object_add(o, "uriBaseId", str("SRCROOT"));
	ali_free(uri);
	free(real);
}

static json_object *artifact_location(struct sarif *c, const char *file)
{
	json_object *o = json_object_new_object();
	put_uri(c, o, file ? file : "");
	int64_t idx = artifact(c, file ? file : "");
	if (idx >= 0)
		json_object_object_add(o, "index", json_object_new_int64(idx));
	return o;
}

static const char *level_of(const struct al_rule *r)
{
	return r->kind == AL_RULE_ILLEGAL ? "error" : r->kind == AL_RULE_COST ? "warning" : "note";
}

static const char *precision_of(char confidence)
{
	return confidence == 'A' ? "high" : confidence == 'M' ? "medium" : "low";
}

static const char *scope_name(enum al_rule_scope s)
{
	return s == AL_SCOPE_NN ? "neuralnetwork" : s == AL_SCOPE_MIL ? "mlprogram" : "model";
}

/* The message of a result, built in memory: names shown with control
 * characters visible (ali_put_esc), then made a JSON string. */
struct msg {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *msg_open(struct msg *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	return m->f;
}

static json_object *msg_close(struct msg *m)
{
	json_object *o = json_object_new_object();
	if (m->f && fclose(m->f) == 0 && m->buf)
		json_object_object_add(o, "text", str(m->buf));
	else
		json_object_object_add(o, "text", str("(out of memory)"));
	free(m->buf);
	return o;
}

static json_object *rule_json(const struct al_rule *r)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "id", str(r->id));
	json_object_object_add(o, "name", str(r->name));
	json_object_object_add(o, "shortDescription", text_obj(r->title));
	json_object_object_add(o, "fullDescription", text_obj(r->why ? r->why : r->title));
	/* help: what to do; the markdown adds the evidence and its link */
	json_object *help_o = json_object_new_object();
	struct msg m;
	if (msg_open(&m)) { /* what `anelint explain` says */
		fprintf(m.f, "%s: ", r->id);
		ali_put_esc(m.f, r->title, AL_ESC_TEXT, 0);
		fputs("\nWhy: ", m.f);
		ali_put_esc(m.f, r->why ? r->why : "-", AL_ESC_TEXT, 0);
		fputs("\nFix: ", m.f);
		ali_put_esc(m.f, r->fix ? r->fix : "-", AL_ESC_TEXT, 0);
		fputs("\nEvidence: ", m.f);
		ali_put_esc(m.f, r->provenance ? r->provenance : "-", AL_ESC_TEXT, 0);
		fprintf(m.f, " (confidence %c)", r->confidence ? r->confidence : '?');
		json_object *t = msg_close(&m);
		json_object_object_add(help_o, "text", json_object_get(json_object_object_get(t, "text")));
		json_object_put(t);
	}
	if (msg_open(&m)) {
		fputs("**Why:** ", m.f);
		ali_put_esc(m.f, r->why ? r->why : "-", AL_ESC_MD, 0);
		fputs("\n\n**Fix:** ", m.f);
		ali_put_esc(m.f, r->fix ? r->fix : "-", AL_ESC_MD, 0);
		fputs("\n\n**Evidence:** ", m.f);
		ali_put_esc(m.f, r->provenance ? r->provenance : "-", AL_ESC_MD, 0);
		fprintf(m.f, " (confidence %c)", r->confidence ? r->confidence : '?');
		if (plain_url(r->url))
			fprintf(m.f, " <%s>", r->url);
		json_object *t = msg_close(&m);
		json_object_object_add(help_o, "markdown", json_object_get(json_object_object_get(t, "text")));
		json_object_put(t);
	}
	json_object_object_add(o, "help", help_o);
	if (plain_url(r->url))
		json_object_object_add(o, "helpUri", str(r->url));
	json_object *cfg = json_object_new_object();
	json_object_object_add(cfg, "level", str(level_of(r)));
	json_object_object_add(o, "defaultConfiguration", cfg);
	json_object *p = json_object_new_object();
	json_object_object_add(p, "kind", str(al_rule_kind_name(r->kind)));
	json_object_object_add(p, "unit", str(r->kind == AL_RULE_WARN ? "none" : al_unit_name(r->unit)));
	char conf[2] = {r->confidence ? r->confidence : '?', 0};
	json_object_object_add(p, "confidence", str(conf));
	json_object_object_add(p, "precision", str(precision_of(r->confidence)));
	json_object_object_add(p, "scope", str(scope_name(r->scope)));
	json_object_object_add(p, "catalog", r->catalog ? str(r->catalog) : NULL);
	json_object_object_add(p, "provenance", r->provenance ? str(r->provenance) : NULL);
	if (r->url && !plain_url(r->url))
		json_object_object_add(p, "source", str(r->url));
	char fam[128];
	al_rule_families(r, fam, sizeof fam);
	json_object_object_add(p, "families", str(fam));
	char rel[128];
	al_rule_releases(r, rel, sizeof rel);
	json_object_object_add(p, "releases", str(rel));
	json_object_object_add(p, "origin", r->origin ? str(r->origin) : NULL);
	json_object *tags = json_object_new_array();
	json_object_array_add(tags, str("performance"));
	json_object_array_add(tags, str("apple-neural-engine"));
	json_object_array_add(tags, str(al_rule_kind_name(r->kind)));
	json_object_object_add(p, "tags", tags);
	json_object_object_add(o, "properties", p);
	return o;
}

/* The index of r in tool.driver.rules, adding it when it is not there. */
static int64_t rule_index(struct sarif *c, const struct al_rule *r)
{
	for (size_t i = 0; i < c->n_rules; i++)
		if (c->rules[i] == r)
			return (int64_t)i;
	size_t n = json_object_array_length(c->driver_rules);
	for (size_t i = c->n_rules; i < n; i++) {
		json_object *id = json_object_object_get(json_object_array_get_idx(c->driver_rules, i), "id");
		if (id && strcmp(json_object_get_string(id), r->id) == 0)
			return (int64_t)i;
	}
	json_object_array_add(c->driver_rules, rule_json(r));
	return (int64_t)n;
}

static json_object *node_location(struct sarif *c, const struct al_submodel *s, const struct al_node *n)
{
	json_object *loc = json_object_new_object(), *phys = json_object_new_object();
	json_object_object_add(phys, "artifactLocation", artifact_location(c, s->file ? s->file : s->path));
	json_object *region = json_object_new_object();
	json_object_object_add(region, "startLine", json_object_new_int(1)); /* code scanning needs a line */
	json_object_object_add(region, "byteOffset", json_object_new_int64((int64_t)(n->offset & INT64_MAX)));
	const struct al_node_src *src = al_src(n);
	if (src && src->msg.n)
		json_object_object_add(region, "byteLength", json_object_new_int64((int64_t)src->msg.n));
	json_object_object_add(phys, "region", region);
	json_object_object_add(loc, "physicalLocation", phys);
	json_object *logicals = json_object_new_array(), *lg = json_object_new_object();
	json_object_object_add(lg, "name", str(n->name));
	struct msg fq;
	if (msg_open(&fq)) {
		ali_put_esc(fq.f, s->path, AL_ESC_TEXT, 0);
		fputc('/', fq.f);
		ali_put_esc(fq.f, n->path ? n->path : n->name, AL_ESC_TEXT, 0);
		json_object *t = msg_close(&fq);
		json_object_object_add(lg, "fullyQualifiedName", json_object_get(json_object_object_get(t, "text")));
		json_object_put(t);
	}
	json_object_object_add(lg, "kind", str("function"));
	const char *weights = ali_node_weights(n); /* where the op came from, as far as the file says */
	if (weights) {
		json_object *props = json_object_new_object();
		json_object_object_add(props, "weights", str(weights));
		json_object_object_add(lg, "properties", props);
	}
	json_object_array_add(logicals, lg);
	json_object_object_add(loc, "logicalLocations", logicals);
	json_object *locs = json_object_new_array();
	json_object_array_add(locs, loc);
	return locs;
}

static json_object *model_location(struct sarif *c, const struct al_submodel *s)
{
	json_object *loc = json_object_new_object(), *phys = json_object_new_object();
	json_object_object_add(phys, "artifactLocation", artifact_location(c, s->file ? s->file : s->path));
	json_object *region = json_object_new_object();
	json_object_object_add(region, "startLine", json_object_new_int(1));
	json_object_object_add(region, "byteOffset", json_object_new_int64((int64_t)(s->offset & INT64_MAX)));
	json_object_object_add(phys, "region", region);
	json_object_object_add(loc, "physicalLocation", phys);
	json_object *logicals = json_object_new_array(), *lg = json_object_new_object();
	json_object_object_add(lg, "name", str(s->path));
	json_object_object_add(lg, "kind", str("module"));
	json_object_array_add(logicals, lg);
	json_object_object_add(loc, "logicalLocations", logicals);
	json_object *locs = json_object_new_array();
	json_object_array_add(locs, loc);
	return locs;
}

static json_object *fingerprint(const struct al_submodel *s, const struct al_node *n, const struct al_rule *r,
				const struct al_plan *p)
{
	json_object *o = json_object_new_object();
	struct msg m;
	if (msg_open(&m)) {
		ali_put_esc(m.f, s->path, AL_ESC_TEXT, 0);
		fputc('/', m.f);
		if (n) {
			ali_put_esc(m.f, n->path ? n->path : "", AL_ESC_TEXT, 0);
			fputc('/', m.f);
			ali_put_esc(m.f, n->name, AL_ESC_TEXT, 0);
			fputc('/', m.f);
		}
		fputs(r->id, m.f);
		if (p && p->target && p->target->id)
			fprintf(m.f, "@%s", p->target->id);
		json_object *t = msg_close(&m);
		json_object_object_add(o, "anelintLocation/v1", json_object_get(json_object_object_get(t, "text")));
		json_object_put(t);
	}
	return o;
}

/* "suppressions" of a result whose findings the options accept: the
 * model's metadata is in the artifact itself ("inSource"), a configuration or a
 * baseline is not ("external"); a baselined result is also "unchanged". */
static void add_suppression(json_object *res, const char *why, const char *kind)
{
	if (!why)
		return;
	json_object *a = json_object_new_array(), *sup = json_object_new_object();
	json_object_object_add(sup, "kind", str(strcmp(kind, "metadata") == 0 ? "inSource" : "external"));
	json_object_object_add(sup, "status", str("accepted"));
	struct msg m;
	if (msg_open(&m)) {
		fprintf(m.f, "%s: ", kind);
		ali_put_esc(m.f, why, AL_ESC_TEXT, 0);
		json_object *t = msg_close(&m);
		json_object_object_add(sup, "justification", json_object_get(json_object_object_get(t, "text")));
		json_object_put(t);
	}
	json_object_array_add(a, sup);
	json_object_object_add(res, "suppressions", a);
	if (strcmp(kind, "baseline") == 0)
		json_object_object_add(res, "baselineState", str("unchanged"));
}

static void add_result(struct sarif *c, const struct al_submodel *s, const struct al_row *row,
		       const struct al_plan *p, const struct al_rule *r, json_object *message,
		       const char *why, const char *kind, bool fails)
{
	json_object *res = json_object_new_object();
	json_object_object_add(res, "ruleId", str(r->id));
	json_object_object_add(res, "ruleIndex", json_object_new_int64(rule_index(c, r)));
	const struct al_node *n = row ? row->node : NULL;
	/* an uncertain verdict (issue #30) is a note, whatever the rule's kind */
	const struct al_check_opts *co = c->o->check;
	bool unsure = n ? row->verdict->verdict == AL_VERDICT_UNCERTAIN
			: r->kind != AL_RULE_WARN &&
				  !al_rule_decides_at(r, NULL, p && p->target ? p->target : co ? co->target : NULL,
						      co ? co->os : NULL);
	/* every finding that fails the check (ali_each_failing) is an "error", whatever
	 * the rule's kind; the others keep their kind's level (illegal: "error") */
	json_object_object_add(res, "level", str(fails ? "error" : unsure ? "note" : level_of(r)));
	json_object_object_add(res, "message", message);
	json_object_object_add(res, "locations", n ? node_location(c, s, n) : model_location(c, s));
	json_object_object_add(res, "partialFingerprints", fingerprint(s, n, r, p));
	json_object *props = json_object_new_object();
	json_object_object_add(props, "model", str(s->path));
	if (p && p->target)
		json_object_object_add(props, "target", str(p->target->id));
	if (n) {
		json_object_object_add(props, "index", json_object_new_int64(row->index));
		json_object_object_add(props, "type", str(n->type));
		json_object_object_add(props, "verdict", str(row->verdict->ane ? "ane" : al_unit_name(row->verdict->unit)));
		json_object_object_add(props, "unit", str(al_unit_name(ali_row_unit(row, p))));
		json_object_object_add(props, "certainty", str(al_ane_verdict_name(row->verdict->verdict)));
		char p_text[16];
		snprintf(p_text, sizeof p_text, "%.2f", row->verdict->p_ane);
		json_object_object_add(props, "p_ane", json_object_new_double_s(row->verdict->p_ane, p_text));
		if (unsure) {
			char unsure_why[160];
			json_object_object_add(props, "uncertain", str(ali_uncertain_text(row->verdict, unsure_why, sizeof unsure_why)));
		}
		if (p && row->plan >= 0)
			json_object_object_add(props, "segment", json_object_new_int64(p->segment[row->plan]));
		json_object *ids = json_object_new_array();
		for (uint32_t k = 0; k < row->verdict->n_rules; k++)
			json_object_array_add(ids, str(row->verdict->rules[k]->id));
		json_object_object_add(props, "rules", ids);
	} else {
		json_object_object_add(props, "unit", str(r->kind == AL_RULE_WARN ? "none" : al_unit_name(r->unit)));
	}
	json_object_object_add(res, "properties", props);
	add_suppression(res, why, kind);
	if (c->spill) { /* one result in memory at a time */
		ali_jw_tree(&c->spill_w, NULL, res);
		json_object_put(res);
	} else {
		json_object_array_add(c->results, res);
	}
}

static void node_results(struct sarif *c, const struct al_submodel *s, const struct al_row *row,
			 const struct al_view *view, const struct al_check_opts *co)
{
	const struct al_plan *p = view->plan;
	const struct al_node *n = row->node;
	const struct al_verdict *v = row->verdict;
	const char *what = s->world == AL_WORLD_MIL ? "Op" : "Layer";
	const struct al_rule *first = NULL;
	for (uint32_t k = 0; k < v->n_rules && !first; k++)
		if (v->rules[k]->kind != AL_RULE_WARN)
			first = v->rules[k];
	if (!v->ane && first) {
		struct msg m;
		if (msg_open(&m)) {
			fprintf(m.f, "%s '", what);
			ali_put_esc(m.f, n->name, AL_ESC_TEXT, 0);
			fputs("' (", m.f);
			ali_put_esc(m.f, n->type, AL_ESC_TEXT, 0);
			fprintf(m.f, ") falls back from the ANE to %s", al_unit_name(v->unit));
			enum al_unit u = ali_row_unit(row, p);
			if (p && u != v->unit)
				fprintf(m.f, " (the plan puts it on the %s)", ali_unit_upper(u));
			fputs(":", m.f);
			for (uint32_t k = 0; k < v->n_rules; k++) {
				if (v->rules[k]->kind == AL_RULE_WARN)
					continue;
				fprintf(m.f, "%s %s ", k ? ";" : "", v->rules[k]->id);
				ali_put_esc(m.f, v->reasons[k], AL_ESC_TEXT, 0);
			}
			fputs(".", m.f);
		}
		/* suppressed when every fallback rule on it is accepted */
		const char *why = NULL, *kind = NULL;
		for (uint32_t k = 0; k < v->n_rules; k++) {
			if (v->rules[k]->kind == AL_RULE_WARN)
				continue;
			const char *kk;
			const char *w = ali_accepted(c->o, s, n->name, v->rules[k], &kk);
			if (!w) {
				why = NULL;
				break;
			}
			if (!why) {
				why = w;
				kind = kk;
			}
		}
		bool fails = false;
		for (uint32_t k = 0; k < v->n_rules && !fails; k++)
			fails = ali_reason_fails(c->o, co, view, s, n, v->rules[k], false);
		add_result(c, s, row, p, first, msg_close(&m), why, kind, fails);
	}
	/* a layer a partition rule moved (a whole-model move is the model's result;
	 * one that follows other work, ANE073-075, follows its cause's result) */
	const struct al_rule *mb = ali_verdict_moved(v) ? v->moved_by : NULL;
	if (mb && v->place != AL_PLACE_MODEL && !ali_move_follows(v)) {
		struct msg m;
		enum al_unit u = ali_row_unit(row, p);
		if (msg_open(&m)) {
			fprintf(m.f, "%s '", what);
			ali_put_esc(m.f, n->name, AL_ESC_TEXT, 0);
			fputs("' (", m.f);
			ali_put_esc(m.f, n->type, AL_ESC_TEXT, 0);
			fprintf(m.f, ") is moved to the %s by %s: ", ali_unit_upper(u), mb->id);
			ali_put_esc(m.f, mb->title, AL_ESC_TEXT, 0);
			fprintf(m.f, " (by itself: %s).", v->unknown ? "unknown" : v->ane ? "ANE" : ali_unit_upper(v->unit));
		}
		const char *kind;
		const char *why = ali_accepted(c->o, s, ali_move_layer(n, v), mb, &kind);
		add_result(c, s, row, p, mb, msg_close(&m), why, kind, ali_reason_fails(c->o, co, view, s, n, mb, true));
	}
	for (uint32_t k = 0; k < v->n_rules; k++) {
		const struct al_rule *r = v->rules[k];
		if (r->kind != AL_RULE_WARN)
			continue;
		struct msg m;
		if (msg_open(&m)) {
			fprintf(m.f, "%s '", what);
			ali_put_esc(m.f, n->name, AL_ESC_TEXT, 0);
			fputs("' (", m.f);
			ali_put_esc(m.f, n->type, AL_ESC_TEXT, 0);
			fputs("): ", m.f);
			ali_put_esc(m.f, r->title, AL_ESC_TEXT, 0);
			fputs(": ", m.f);
			ali_put_esc(m.f, v->reasons[k], AL_ESC_TEXT, 0);
			fputs(".", m.f);
		}
		const char *kind;
		const char *why = ali_accepted(c->o, s, n->name, r, &kind);
		add_result(c, s, row, p, r, msg_close(&m), why, kind, false);
	}
}

static json_object *fixed(double v, const char *fmt)
{
	char buf[64];
	if (!isfinite(v))
		v = 0;
	snprintf(buf, sizeof buf, fmt, v);
	return json_object_new_double_s(v, buf);
}

static void sarif_model(void *vctx, const struct al_report_item *it, const struct al_view *v)
{
	struct sarif *c = vctx;
	const struct al_submodel *s = v->s;
	const struct al_plan *p = v->plan;
	const char *error = v->error;
	const struct al_check_opts *co = ali_item_check(it, c->o);
	struct ali_failing failing;
	ali_failing_count(c->o, co, v, s, &failing);
	const struct al_finding *fs;
	uint32_t n_fs = ali_view_findings(v, s, &fs);
	for (uint32_t i = 0; i < n_fs; i++) {
		const struct al_finding *f = &fs[i];
		struct msg m;
		if (msg_open(&m)) {
			fputs("Model '", m.f);
			ali_put_esc(m.f, s->path, AL_ESC_TEXT, 0);
			fputs("': ", m.f);
			ali_put_esc(m.f, f->rule->title, AL_ESC_TEXT, 0);
			fputs(": ", m.f);
			ali_put_esc(m.f, f->reason, AL_ESC_TEXT, 0);
			if (f->rule->kind != AL_RULE_WARN)
				fprintf(m.f, " (the whole model goes to %s)", al_unit_name(f->rule->unit));
			fputs(".", m.f);
		}
		const char *kind;
		const char *why = ali_accepted(c->o, s, NULL, f->rule, &kind);
		bool fails = false; /* a whole-model move, or a finding of a model without layers */
		for (uint32_t k = 0; k < failing.n_rules && !fails; k++)
			fails = failing.by_rule[k].rule == f->rule && !why;
		add_result(c, s, NULL, p, f->rule, msg_close(&m), why, kind, fails);
	}
	struct al_summary sum;
	ali_summarize(s, v, &sum);
	json_object *mo = json_object_new_object();
	json_object_object_add(mo, "path", str(s->path));
	json_object_object_add(mo, "type", str(s->type));
	json_object_object_add(mo, "target", p && p->target ? str(p->target->id) : NULL);
	json_object_object_add(mo, "layers", json_object_new_int64(sum.nodes));
	json_object_object_add(mo, "ane_layers", json_object_new_int64(sum.per_unit[AL_UNIT_ANE]));
	if (p) {
		json_object_object_add(mo, "policy", str(al_policy_name(p->policy)));
		json_object_object_add(mo, "segments", json_object_new_int64(p->n_segments));
		json_object_object_add(mo, "switches", json_object_new_int64(p->switches));
		json_object_object_add(mo, "ane_flop_share",
				       fixed(p->total_flops > 0 ? p->ane_flops / p->total_flops : 0, "%.4f"));
		json_object_object_add(mo, "est_us", fixed(p->est_us, "%.3f"));
	} else {
		json_object_object_add(mo, "plan_error", str(error ? error : "?"));
	}
	json_object_array_add(c->models, mo);
	if (!s->n_graphs)
		return;
	struct al_dag g;
	if (!ali_dag_build(v, &g))
		return;
	for (uint32_t r = 0; r < g.n_rows; r++)
		if (!ali_node_is_const(g.rows[r].node))
			node_results(c, s, &g.rows[r], v, co);
	ali_dag_free(&g);
}

static void sarif_report(FILE *out, const struct al_report_item *items, size_t n,
			 const struct al_report_opts *o)
{
	struct sarif c = {.o = o};
	c.base_real = o->base ? realpath(o->base, NULL) : NULL;
	c.n_rules = ali_rule_list(o->check ? o->check->user_rules : NULL, &c.rules);
	c.driver_rules = json_object_new_array();
	for (size_t i = 0; i < c.n_rules; i++)
		json_object_array_add(c.driver_rules, rule_json(c.rules[i]));
	c.artifacts = json_object_new_array();
	c.results = json_object_new_array();
	c.models = json_object_new_array();
	/* results are the bulk (one per finding: every layer of a model that falls
	 * back); they come after the rules and artifacts they add to, so they are
	 * written apart and spliced in (depth 4: root, runs, run, results) */
	c.spill = tmpfile();
	if (c.spill)
		ali_jw_init_elements(&c.spill_w, c.spill, 4);

	json_object *notes = json_object_new_array();
	bool ok = true;
	for (size_t i = 0; i < n; i++) {
		if (items[i].model) {
			for (size_t k = 0; k < al_model_count(items[i].model); k++) {
				const struct al_submodel *s = al_model_get(items[i].model, k);
				artifact(&c, s->file ? s->file : s->path);
			}
			continue;
		}
		ok = false;
		for (size_t k = 0; k < al_diags_count(items[i].diags) || k == 0; k++) {
			const struct al_diag *x = k < al_diags_count(items[i].diags) ? al_diags_get(items[i].diags, k) : NULL;
			if (x && x->severity != AL_SEV_ERROR)
				continue;
			json_object *note = json_object_new_object();
			json_object_object_add(note, "level", str("error"));
			struct msg m;
			if (msg_open(&m)) {
				ali_put_esc(m.f, items[i].path, AL_ESC_TEXT, 0);
				fputs(": ", m.f);
				ali_put_esc(m.f, al_status_str(items[i].status), AL_ESC_TEXT, 0);
				if (x) {
					fputs(": ", m.f);
					if (x->where) {
						ali_put_esc(m.f, x->where, AL_ESC_TEXT, 0);
						fputs(": ", m.f);
					}
					ali_put_esc(m.f, x->msg, AL_ESC_TEXT, 0);
				}
				fputs(".", m.f);
			}
			json_object_object_add(note, "message", msg_close(&m));
			json_object *loc = json_object_new_object(), *phys = json_object_new_object();
			json_object_object_add(phys, "artifactLocation",
					       artifact_location(&c, x && x->file ? x->file : items[i].path));
			json_object *region = json_object_new_object();
			json_object_object_add(region, "startLine", json_object_new_int(1));
			if (x && x->offset != UINT64_MAX)
				json_object_object_add(region, "byteOffset",
						       json_object_new_int64((int64_t)(x->offset & INT64_MAX)));
			json_object_object_add(phys, "region", region);
			json_object_object_add(loc, "physicalLocation", phys);
			json_object *locs = json_object_new_array();
			json_object_array_add(locs, loc);
			json_object_object_add(note, "locations", locs);
			json_object_array_add(notes, note);
			if (!x)
				break;
		}
	}
	ali_each_plan(items, n, o, sarif_model, &c);
	bool any_result = c.spill ? ali_jw_end_elements(&c.spill_w) : false;

	/* written as a stream in json-c's layout; the small parts as trees */
	struct ali_jw jw, *w = &jw;
	ali_jw_init(w, out);
	ali_jw_object(w, NULL);
	ali_jw_str(w, "$schema", SARIF_SCHEMA);
	ali_jw_str(w, "version", "2.1.0");
	ali_jw_array(w, "runs");
	ali_jw_object(w, NULL);
	json_object *tool = json_object_new_object(), *driver = json_object_new_object();
	json_object_object_add(driver, "name", str("anelint"));
	json_object_object_add(driver, "fullName", str("anelint " ANELINT_VERSION
						       ": will a Core ML model run on the Apple Neural Engine?"));
	json_object_object_add(driver, "version", str(ANELINT_VERSION));
	json_object_object_add(driver, "semanticVersion", str(ANELINT_VERSION));
	/* one place: the configuration's information_uri (o->information_uri), else
	 * the build's (make INFORMATION_URI=...); omitted when neither names one */
	const char *info = o->information_uri ? o->information_uri : AL_INFORMATION_URI;
	if (info && *info)
		json_object_object_add(driver, "informationUri", str(info));
	json_object_object_add(driver, "rules", c.driver_rules);
	json_object_object_add(tool, "driver", driver);
	ali_jw_tree(w, "tool", tool);
	json_object_put(tool);
	json_object *inv = json_object_new_object(), *invs = json_object_new_array();
	json_object_object_add(inv, "executionSuccessful", json_object_new_boolean(ok));
	if (json_object_array_length(notes))
		json_object_object_add(inv, "toolExecutionNotifications", notes);
	else
		json_object_put(notes);
	json_object_array_add(invs, inv);
	ali_jw_tree(w, "invocations", invs);
	json_object_put(invs);
	if (c.base_real) { /* where SRCROOT is: a directory URI ends with '/' */
		json_object *ids = json_object_new_object(), *root_o = json_object_new_object();
		size_t bl = strlen(c.base_real);
		char *dir = ali_malloc(bl + 2);
		if (dir) {
			memcpy(dir, c.base_real, bl);
			bool slash = bl && c.base_real[bl - 1] == '/';
			dir[bl] = '/';
			dir[bl + !slash] = 0;
			char *u = uri_of(dir);
			json_object_object_add(root_o, "uri", str(u ? u : "file:///"));
			ali_free(u);
			ali_free(dir);
		}
		json_object_object_add(ids, "SRCROOT", root_o);
		ali_jw_tree(w, "originalUriBaseIds", ids);
		json_object_put(ids);
	}
	ali_jw_tree(w, "artifacts", c.artifacts);
	json_object_put(c.artifacts);
	if (c.spill) {
		ali_jw_array(w, "results");
		ali_jw_splice(w, c.spill, any_result);
		ali_jw_end(w);
		fclose(c.spill);
	} else {
		ali_jw_tree(w, "results", c.results);
	}
	json_object_put(c.results);
	ali_jw_object(w, "properties");
	ali_jw_tree(w, "models", c.models);
	json_object_put(c.models);
	ali_jw_end(w);
	ali_jw_end(w);
	ali_jw_end(w);
	ali_jw_end(w);
	ali_jw_finish(w);
	for (size_t i = 0; i < c.n_files; i++)
		ali_free(c.files[i]);
	ali_free(c.files);
	ali_free(c.rules);
	free(c.base_real);
}

const struct al_sink ali_sink_sarif = {
	.name = "sarif",
	.check = sarif_report,
	.plan = sarif_report,
	.extensions = "sarif",
	.shows_plans = true,
};

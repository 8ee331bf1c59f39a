/* SPDX-License-Identifier: MIT */
/* report_evidence.c: what a Mac observed against the prediction, in the HTML
 * and Markdown reports (`anelint report MODEL --evidence FILE...`, docs/evidence.md
 * "In the reports"): the anelint-compare document report_compare.c made, read
 * only. Every name, type and reason from the evidence or the model is escaped. */
#include "report.h"
#include "evidence.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>


static const char *s_of(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static int64_t i_of(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static double d_of(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : 0;
}

static json_object *a_of(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_array) ? v : NULL;
}

static size_t a_len(json_object *a)
{
	return a ? json_object_array_length(a) : 0;
}

static int64_t confusion(json_object *e, const char *pred, const char *obs)
{
	json_object *c, *row;
	if (!json_object_object_get_ex(e, "confusion", &c) || !json_object_object_get_ex(c, pred, &row))
		return 0;
	return i_of(row, obs);
}

static const char *const preds[3] = {"ane", "gpu", "cpu"};

static void h(FILE *out, const char *s)
{
	ali_put_esc(out, s ? s : "", AL_ESC_HTML, 0);
}

static void h_unit(FILE *out, const char *u)
{
	const char *cls = !u ? "u-none" : strcmp(u, "ane") == 0 ? "u-ane" : strcmp(u, "gpu") == 0 ? "u-gpu"
					   : strcmp(u, "cpu") == 0 ? "u-cpu" : "u-none";
	fprintf(out, "<span class=\"unit %s\">", cls);
	h(out, u ? u : "?");
	fputs("</span>", out);
}

static void html_entry(FILE *out, json_object *e)
{
	fputs("<h3>", out);
	h(out, s_of(e, "file"));
	fputs(" <small>(", out);
	h(out, s_of(e, "format"));
	fputs("; target ", out);
	h(out, s_of(e, "target"));
	fputs(s_of(e, "evidence_chip") ? " from the evidence" : "", out);
	fputs(", os ", out);
	h(out, s_of(e, "os"));
	fputs(s_of(e, "evidence_os") ? " from the evidence" : "", out);
	fputs(", compute units ", out);
	h(out, s_of(e, "compute_units"));
	if (s_of(e, "device")) {
		fputs("; device ", out);
		h(out, s_of(e, "device"));
	}
	fputs(")</small></h3>\n", out);
	fprintf(out, "<p class=\"agreement\"><strong>agreement %.1f%%</strong> (%" PRId64 " of %" PRId64
		     " matched ops); evidence ops %" PRId64 ", matched %" PRId64 " (%" PRId64
		     " by type and order), unmatched %" PRId64 "</p>\n",
		d_of(e, "agreement"), i_of(e, "agreed"), i_of(e, "matched"), i_of(e, "ops"), i_of(e, "matched"),
		i_of(e, "matched_by_order"), i_of(e, "unmatched"));
	json_object *counts;
	if (json_object_object_get_ex(e, "counts", &counts)) { /* a placement file: counts per unit */
		json_object *pr = NULL, *ob = NULL;
		json_object_object_get_ex(counts, "predicted", &pr);
		json_object_object_get_ex(counts, "observed", &ob);
		if (!ob || !json_object_is_type(ob, json_type_object)) {
			fputs("<p class=\"err\">No entry of the file names this model.</p>\n", out);
			return;
		}
		fputs("<p class=\"note\">Model level: the file counts ops per unit (entry <code>", out);
		h(out, s_of(counts, "entry"));
		fputs("</code>) and names none, so there is no confusion table and no per-op disagreement.</p>\n"
		      "<table class=\"counts\" style=\"width:auto\"><thead><tr><th>unit</th><th class=\"num\">predicted</th>"
		      "<th class=\"num\">observed</th></tr></thead>\n<tbody>\n",
		      out);
		for (int p = 0; p < 3; p++)
			fprintf(out, "<tr><th>%s</th><td class=\"num\">%" PRId64 "</td><td class=\"num\">%" PRId64 "</td></tr>\n",
				preds[p], i_of(pr, preds[p]), i_of(ob, preds[p]));
		fprintf(out, "<tr><th>consts</th><td class=\"num\">%" PRId64 "</td><td class=\"num\">%" PRId64
			     "</td></tr>\n</tbody></table>\n",
			i_of(pr, "consts"), i_of(ob, "unknown"));
		return;
	}
	fputs("<table class=\"confusion\" style=\"width:auto\"><caption class=\"note\">rows: predicted, columns: "
	      "observed</caption>\n<thead><tr><th></th>",
	      out);
	for (int k = 0; k < AL_OBS_COUNT; k++) {
		fputs("<th class=\"num\">", out);
		h(out, ali_obs_name(k));
		fputs("</th>", out);
	}
	fputs("</tr></thead>\n<tbody>\n", out);
	for (int p = 0; p < 3; p++) {
		fprintf(out, "<tr><th>%s</th>", preds[p]);
		for (int k = 0; k < AL_OBS_COUNT; k++)
			fprintf(out, "<td class=\"num\">%" PRId64 "</td>", confusion(e, preds[p], ali_obs_name(k)));
		fputs("</tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
	json_object *dis = a_of(e, "disagreements");
	if (a_len(dis)) {
		fprintf(out, "<h4>Disagreements (%zu)</h4>\n<table class=\"disagreements\"><thead><tr><th>op</th>"
			     "<th>type</th><th class=\"num\">line</th><th>predicted</th><th>anelint's reasons</th>"
			     "<th>observed</th><th>the device's reason</th></tr></thead>\n<tbody>\n",
			a_len(dis));
		for (size_t i = 0; i < a_len(dis); i++) {
			json_object *x = json_object_array_get_idx(dis, i);
			fputs("<tr><td class=\"name\">", out);
			h(out, s_of(x, "name"));
			if (s_of(x, "matched_by") && strcmp(s_of(x, "matched_by"), "order") == 0)
				fputs("<span class=\"why\">matched by type and order</span>", out);
			fputs("</td><td>", out);
			h(out, s_of(x, "type"));
			fputs("</td><td class=\"num\">", out);
			if (i_of(x, "line"))
				fprintf(out, "%" PRId64, i_of(x, "line"));
			fputs("</td><td>", out);
			h_unit(out, s_of(x, "predicted"));
			fputs("</td><td>", out);
			json_object *rs = a_of(x, "anelint_reasons");
			if (!a_len(rs))
				fputs(s_of(x, "predicted") && strcmp(s_of(x, "predicted"), "ane") == 0 ? "no rule fired"
													: "placed by the partition",
				      out);
			for (size_t k = 0; k < a_len(rs); k++) {
				json_object *r = json_object_array_get_idx(rs, k);
				fputs(k ? "<br><span class=\"rid\">" : "<span class=\"rid\">", out);
				h(out, s_of(r, "rule"));
				fputs("</span> ", out);
				ali_put_esc(out, s_of(r, "reason") ? s_of(r, "reason") : "", AL_ESC_HTML, 600);
			}
			fputs("</td><td>", out);
			h_unit(out, s_of(x, "observed"));
			fputs("</td><td>", out);
			if (s_of(x, "device_reason"))
				ali_put_esc(out, s_of(x, "device_reason"), AL_ESC_HTML, 600);
			else
				fputs("<span class=\"note\">(not said)</span>", out);
			fputs("</td></tr>\n", out);
		}
		fputs("</tbody></table>\n", out);
	} else {
		fputs("<p>No disagreement.</p>\n", out);
	}
	json_object *um = a_of(e, "unmatched_ops");
	if (a_len(um)) {
		fprintf(out, "<p class=\"note\">Unmatched evidence ops (%zu, not counted):", a_len(um));
		for (size_t i = 0; i < a_len(um) && i < 20; i++) {
			fputs(i ? ", <code>" : " <code>", out);
			ali_put_esc(out, json_object_get_string(json_object_array_get_idx(um, i)), AL_ESC_HTML, 120);
			fputs("</code>", out);
		}
		fputs(a_len(um) > 20 ? " &hellip;</p>\n" : "</p>\n", out);
	}
	json_object *rules = a_of(e, "rules");
	if (a_len(rules)) {
		fputs("<h4>Rules: how often what each rule says held</h4>\n<table class=\"rule-record\" "
		      "style=\"width:auto\"><thead><tr><th>rule</th><th>name</th><th class=\"num\">right</th>"
		      "<th class=\"num\">wrong</th></tr></thead>\n<tbody>\n",
		      out);
		for (size_t i = 0; i < a_len(rules); i++) {
			json_object *r = json_object_array_get_idx(rules, i);
			fputs("<tr><td class=\"rid\">", out);
			h(out, s_of(r, "rule"));
			fputs("</td><td>", out);
			h(out, s_of(r, "name"));
			fprintf(out, "</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%" PRId64 "</td></tr>\n",
				i_of(r, "right"), i_of(r, "wrong"));
		}
		fputs("</tbody></table>\n", out);
	}
}

void ali_html_comparisons(FILE *out, const struct al_report_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_object *doc = items[i].comparison ? items[i].comparison->doc : NULL;
		if (!doc)
			continue;
		json_object *ev = a_of(doc, "evidence");
		fprintf(out, "<section class=\"rules evidence\" id=\"evidence%zu\">\n<h2>Evidence: ", i);
		h(out, items[i].path);
		fputs(" predicted vs observed</h2>\n<p class=\"note\">What a device observed (docs/evidence.md), against "
		      "anelint's prediction for that device's chip and release; each disagreement shows anelint's "
		      "reasons and the device's.</p>\n",
		      out);
		if (a_len(ev) > 1)
			fprintf(out, "<p><strong>overall agreement %.1f%%</strong> (%" PRId64 " of %" PRId64 ")</p>\n",
				d_of(doc, "agreement"), i_of(doc, "agreed"), i_of(doc, "matched"));
		for (size_t k = 0; k < a_len(ev); k++)
			html_entry(out, json_object_array_get_idx(ev, k));
		fputs("</section>\n", out);
	}
}

static void md(FILE *out, const char *s, size_t max)
{
	ali_put_esc(out, s ? s : "", AL_ESC_MD, max);
}

void ali_md_comparisons(FILE *out, const struct al_report_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_object *doc = items[i].comparison ? items[i].comparison->doc : NULL;
		if (!doc)
			continue;
		json_object *ev = a_of(doc, "evidence");
		fputs("\n#### Evidence: ", out);
		md(out, items[i].path, 0);
		fputs(" predicted vs observed\n", out);
		if (a_len(ev) > 1)
			fprintf(out, "\nOverall agreement **%.1f%%** (%" PRId64 " of %" PRId64 ")\n", d_of(doc, "agreement"),
				i_of(doc, "agreed"), i_of(doc, "matched"));
		for (size_t k = 0; k < a_len(ev); k++) {
			json_object *e = json_object_array_get_idx(ev, k);
			fputs("\n", out);
			md(out, s_of(e, "file"), 0);
			fputs(" (", out);
			md(out, s_of(e, "format"), 0);
			fputs(", ", out);
			md(out, s_of(e, "target"), 0);
			fputs("/", out);
			md(out, s_of(e, "os"), 0);
			fprintf(out, "): agreement **%.1f%%** (%" PRId64 " of %" PRId64 "), unmatched %" PRId64 "\n\n",
				d_of(e, "agreement"), i_of(e, "agreed"), i_of(e, "matched"), i_of(e, "unmatched"));
			json_object *counts;
			if (json_object_object_get_ex(e, "counts", &counts)) {
				json_object *pr = NULL, *ob = NULL;
				json_object_object_get_ex(counts, "predicted", &pr);
				json_object_object_get_ex(counts, "observed", &ob);
				fputs("| unit | predicted | observed |\n|---|--:|--:|\n", out);
				for (int p = 0; p < 3; p++)
					fprintf(out, "| %s | %" PRId64 " | %" PRId64 " |\n", preds[p], i_of(pr, preds[p]),
						i_of(ob, preds[p]));
				continue;
			}
			fputs("| predicted \\\\ observed |", out);
			for (int o = 0; o < AL_OBS_COUNT; o++)
				fprintf(out, " %s |", ali_obs_name(o));
			fputs("\n|---|--:|--:|--:|--:|\n", out);
			for (int p = 0; p < 3; p++) {
				fprintf(out, "| %s |", preds[p]);
				for (int o = 0; o < AL_OBS_COUNT; o++)
					fprintf(out, " %" PRId64 " |", confusion(e, preds[p], ali_obs_name(o)));
				fputs("\n", out);
			}
			json_object *dis = a_of(e, "disagreements");
			if (a_len(dis))
				fputs("\n| op | type | predicted | anelint's reasons | observed | the device's reason |\n"
				      "|---|---|---|---|---|---|\n",
				      out);
			for (size_t d = 0; d < a_len(dis); d++) {
				json_object *x = json_object_array_get_idx(dis, d);
				fputs("| ", out);
				md(out, s_of(x, "name"), 120);
				fputs(" | ", out);
				md(out, s_of(x, "type"), 60);
				fputs(" | ", out);
				md(out, s_of(x, "predicted"), 0);
				fputs(" | ", out);
				json_object *rs = a_of(x, "anelint_reasons");
				for (size_t r = 0; r < a_len(rs); r++) {
					json_object *y = json_object_array_get_idx(rs, r);
					fputs(r ? "; **" : "**", out);
					md(out, s_of(y, "rule"), 0);
					fputs("** ", out);
					md(out, s_of(y, "reason"), 300);
				}
				fputs(" | ", out);
				md(out, s_of(x, "observed"), 0);
				fputs(" | ", out);
				md(out, s_of(x, "device_reason"), 300);
				fputs(" |\n", out);
			}
			json_object *rules = a_of(e, "rules");
			if (a_len(rules))
				fputs("\n| rule | right | wrong |\n|---|--:|--:|\n", out);
			for (size_t r = 0; r < a_len(rules); r++) {
				json_object *y = json_object_array_get_idx(rules, r);
				fputs("| ", out);
				md(out, s_of(y, "rule"), 0);
				fputs(" ", out);
				md(out, s_of(y, "name"), 0);
				fprintf(out, " | %" PRId64 " | %" PRId64 " |\n", i_of(y, "right"), i_of(y, "wrong"));
			}
		}
	}
}

/* SPDX-License-Identifier: MIT */
/* report_mil.c: `info --format mil`: every ML Program of the models given,
 * from a .mlpackage, a .mlmodel or a compiled .mlmodelc alike, printed as MIL
 * text (the syntax of a compiled model's model.mil; miltext_write.c), which
 * anelint reads back (miltext.c). A model or pipeline stage that is not an ML
 * Program is named in a `//` comment line, which the reader skips. */
#include "report.h"
#include "miltext.h"

#include <stdio.h>

static void mil_info(FILE *out, const struct al_report_item *items, size_t n,
		     const struct al_report_opts *o)
{
	(void)o;
	for (size_t i = 0; i < n; i++) {
		const al_model *m = items[i].model;
		for (size_t k = 0; m && k < al_model_count(m); k++) {
			const struct al_submodel *s = al_model_get(m, k);
			al_span prog;
			fputs("// ", out);
			ali_put_name(out, s->path, 0);
			if (!ali_mil_program_of(m, s, &prog)) {
				fputs(": ", out);
				ali_put_name(out, s->type, 0);
				fputs(", not an ML Program: no MIL text\n", out);
				continue;
			}
			fputc('\n', out);
			struct al_buf b = {0};
			bool ok = ali_mil_text_write(prog, &b);
			fwrite(b.p, 1, b.n, out);
			if (!ok)
				fputs("\n// the Program message is malformed here: the text stops\n", out);
			ali_buf_free(&b);
		}
	}
}

const struct al_sink ali_sink_mil = {
	.name = "mil",
	.info = mil_info,
	.extensions = "mil",
};

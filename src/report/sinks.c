/* SPDX-License-Identifier: MIT */
/* sinks.c: the table of report sinks (text, JSON, HTML, SARIF, Markdown, DOT, GitHub
 * Actions annotations)
 * and how a --format name or an output file's extension picks one. A new format
 * is one more row here and its file. */
#include "report.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const struct al_sink *const ali_sinks[] = {
	&ali_sink_text,
	&ali_sink_json,
	&ali_sink_html,
	&ali_sink_sarif,
	&ali_sink_markdown,
	&ali_sink_dot,
	&ali_sink_github,
	&ali_sink_mil,
};
const size_t ali_sinks_count = sizeof ali_sinks / sizeof ali_sinks[0];

const struct al_sink *al_sink_by_name(const char *name)
{
	for (size_t i = 0; i < ali_sinks_count; i++)
		if (strcmp(ali_sinks[i]->name, name) == 0)
			return ali_sinks[i];
	return NULL;
}

const struct al_sink *al_sink_by_extension(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	if (!dot || strchr(dot, '/') || !dot[1])
		return NULL;
	size_t len = strlen(dot + 1);
	for (size_t i = 0; i < ali_sinks_count; i++) {
		const char *e = ali_sinks[i]->extensions;
		while (e && *e) {
			size_t n = strcspn(e, ",");
			if (n == len && strncasecmp(e, dot + 1, n) == 0)
				return ali_sinks[i];
			e += n + (e[n] == ',');
		}
	}
	return NULL;
}

const char *al_sink_names(void)
{
	static char names[128];
	if (!names[0])
		for (size_t i = 0; i < ali_sinks_count; i++) {
			size_t len = strlen(names);
			snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", ali_sinks[i]->name);
		}
	return names;
}

/* sinks.c: the table of report sinks (text, JSON, HTML, SARIF, Markdown, DOT)
 * and how a --format name or an output file's extension picks one. A new format
 * is one more row here and its file. */
#include "report.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const struct al_sink *const al_sinks[] = {
	&al_sink_text,
	&al_sink_json,
	&al_sink_html,
	&al_sink_sarif,
	&al_sink_markdown,
	&al_sink_dot,
};
const size_t al_sinks_count = sizeof al_sinks / sizeof al_sinks[0];

const struct al_sink *al_sink_by_name(const char *name)
{
	for (size_t i = 0; i < al_sinks_count; i++)
		if (strcmp(al_sinks[i]->name, name) == 0)
			return al_sinks[i];
	return NULL;
}

const struct al_sink *al_sink_by_extension(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	if (!dot || strchr(dot, '/') || !dot[1])
		return NULL;
	size_t len = strlen(dot + 1);
	for (size_t i = 0; i < al_sinks_count; i++) {
		const char *e = al_sinks[i]->extensions;
		while (e && *e) {
			size_t n = strcspn(e, ",");
			if (n == len && strncasecmp(e, dot + 1, n) == 0)
				return al_sinks[i];
			e += n + (e[n] == ',');
		}
	}
	return NULL;
}

const char *al_sink_names(void)
{
	static char names[128];
	if (!names[0])
		for (size_t i = 0; i < al_sinks_count; i++) {
			size_t len = strlen(names);
			snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", al_sinks[i]->name);
		}
	return names;
}

/* SPDX-License-Identifier: MIT */
/* mlmodelc_files.c: the files of a compiled model directory, for mlmodelc.c
 * and espresso.c: each path resolved and kept inside the directory, mapped
 * through ali_map_file (regular files only), JSON parsed with bounds. */
#include "mlmodelc.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#define JSON_MAX (64u << 20) /* bytes of metadata.json / model.espresso.net */
#define JSON_DEPTH 32

/* dir/rel, checked to resolve below the model directory. *present false (and
 * AL_OK) when it does not exist. */
enum al_status ali_mlmodelc_locate(struct al_model *m, const char *dir, const char *dir_real,
				   const char *rel, char out[PATH_MAX], const char **shown, bool *present,
				   al_diags *d)
{
	*present = false;
	*shown = ali_arena_printf(&m->arena, "%s/%s", dir, rel);
	if (!*shown)
		return AL_E_NOMEM;
	if (!realpath(*shown, out)) {
		if (errno == ENOENT || errno == ENOTDIR)
			return AL_OK;
		ali_diag_add(d, AL_SEV_ERROR, *shown, UINT64_MAX, NULL, NULL, "cannot open: %s",
			    strerror(errno));
		return AL_E_IO;
	}
	size_t n = strlen(dir_real);
	if (strncmp(out, dir_real, n) != 0 || out[n] != '/') {
		ali_diag_add(d, AL_SEV_ERROR, *shown, UINT64_MAX, NULL, NULL,
			    "resolves to %.200s, outside the compiled model %.200s", out, dir_real);
		return AL_E_FORMAT;
	}
	*present = true;
	return AL_OK;
}

static enum al_status map_rel(struct al_mlmodelc_file *f, struct al_model *m, const char *dir,
			      const char *rel, bool keep_open, al_diags *d)
{
	char dir_real[PATH_MAX], real[PATH_MAX];
	memset(f, 0, sizeof *f);
	if (!realpath(dir, dir_real)) {
		ali_diag_add(d, AL_SEV_ERROR, dir, UINT64_MAX, NULL, NULL, "cannot open: %s",
			    strerror(errno));
		return AL_E_IO;
	}
	enum al_status st = ali_mlmodelc_locate(m, dir, dir_real, rel, real, &f->shown, &f->present, d);
	if (st || !f->present)
		return st;
	return keep_open ? ali_map_file_open(real, f->shown, &f->map, d)
			 : ali_map_file(real, f->shown, &f->map, d);
}

enum al_status ali_mlmodelc_map(struct al_mlmodelc_file *f, struct al_model *m, const char *dir,
				const char *rel, al_diags *d)
{
	return map_rel(f, m, dir, rel, false, d);
}

enum al_status ali_mlmodelc_map_open(struct al_mlmodelc_file *f, struct al_model *m, const char *dir,
				     const char *rel, al_diags *d)
{
	return map_rel(f, m, dir, rel, true, d);
}

/* A JSON document of at most JSON_MAX bytes, JSON_DEPTH deep. */
struct json_object *ali_json_read(al_span s, const char *shown, al_diags *d)
{
	if (s.n == 0 || s.n > JSON_MAX || s.n > INT_MAX) {
		ali_diag_add(d, AL_SEV_ERROR, shown, UINT64_MAX, NULL, NULL,
			    s.n ? "%zu bytes of JSON; more than 64 MiB is refused" : "empty file (%zu bytes)",
			    s.n);
		return NULL;
	}
	struct json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);
	if (!tok) {
		ali_diag_add(d, AL_SEV_ERROR, shown, UINT64_MAX, NULL, NULL, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	struct json_object *top = json_tokener_parse_ex(tok, (const char *)s.p, (int)s.n);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!top) {
		ali_diag_add(d, AL_SEV_ERROR, shown, end, NULL, NULL, "invalid JSON: %s",
			    e == json_tokener_continue ? "unexpected end of file"
							: json_tokener_error_desc(e));
		return NULL;
	}
	while (end < s.n && (s.p[end] == ' ' || s.p[end] == '\t' || s.p[end] == '\n' || s.p[end] == '\r'))
		end++;
	if (end < s.n) {
		ali_diag_add(d, AL_SEV_ERROR, shown, end, NULL, NULL,
			    "invalid JSON: unexpected data after the top-level value");
		json_object_put(top);
		return NULL;
	}
	return top;
}


/* SPDX-License-Identifier: MIT */
/* ci_paths.c: directory arguments searched recursively for models (one table
 * of extensions), in name order, within stated bounds (al_ci_expand_paths). */
#include "ci_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ================================================================ directories */

/* What a directory argument is searched for: one row per model format. */
static const struct model_ext {
	const char *ext;
	bool is_dir; /* a package directory: a model, not descended into */
} model_exts[] = {
	{".mlmodel", false},
	{".mlpackage", true},
	{".mlmodelc", true},
};
#define N_MODEL_EXTS (sizeof model_exts / sizeof model_exts[0])
/* Bounds of a directory argument's search; beyond them, a clear message and a
 * failing exit, never a silent skip (README "Exit codes"): a subdirectory
 * deeper than DIR_MAX_DEPTH is named in a warning and the run exits 3 at least;
 * more than DIR_MAX_MODELS models, or a directory of more than DIR_MAX_ENTRIES
 * entries, is an error (exit 3) before any model is read. */
#define DIR_MAX_DEPTH 32
#define DIR_MAX_MODELS 100000
#define DIR_MAX_ENTRIES 1000000

static const struct model_ext *model_ext_of(const char *name)
{
	size_t n = strlen(name);
	while (n > 1 && name[n - 1] == '/') /* "x.mlpackage/" */
		n--;
	for (size_t i = 0; i < N_MODEL_EXTS; i++) {
		size_t e = strlen(model_exts[i].ext);
		if (n > e && strcasecmp(name + n - e, model_exts[i].ext) == 0)
			return &model_exts[i];
	}
	return NULL;
}

/* Keep a model found: AL_OK, or the error (printed) that ends the search. */
static enum al_status keep_path(struct al_ci *ci, char *p, const char *top)
{
	if (ci->n_path_copies >= DIR_MAX_MODELS) {
		free(p);
		ali_cmd_error_at(ci, top, "more than %u models under this directory (the limit of one run): check its "
			      "subdirectories in separate runs", DIR_MAX_MODELS);
		return AL_E_FORMAT;
	}
	if (ci->n_path_copies == ci->cap_path_copies) {
		size_t cap = ci->cap_path_copies ? 2 * ci->cap_path_copies : 64;
		char **v = realloc(ci->path_copies, cap * sizeof *v);
		if (!v) {
			free(p);
			ali_cmd_printf(ci, "anelint: error: out of memory\n");
			return AL_E_IO;
		}
		ci->path_copies = v;
		ci->cap_path_copies = cap;
	}
	ci->path_copies[ci->n_path_copies++] = p;
	return AL_OK;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every model under dir, in name order (so the output does not depend on the
 * file system's order); symbolic links to directories are not followed; a
 * subdirectory deeper than DIR_MAX_DEPTH below top is not searched and is named
 * in a warning (ci->deep_skipped: the run does not pass over it). */
static enum al_status search_dir(struct al_ci *ci, const char *dir, const char *top, int depth, size_t *found)
{
	DIR *dp = opendir(dir);
	if (!dp) {
		ali_cmd_error_at(ci, dir, "cannot read the directory: %s", strerror(errno));
		return AL_E_IO;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	enum al_status rc = AL_OK;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == DIR_MAX_ENTRIES) {
			ali_cmd_error_at(ci, dir, "more than %u entries in this directory (the limit): its models are not "
				      "searched", DIR_MAX_ENTRIES);
			rc = AL_E_FORMAT;
			break;
		}
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *v);
			if (!v) {
				rc = AL_E_IO;
				break;
			}
			names = v;
		}
		if (!(names[n] = ali_strdup(de->d_name))) {
			rc = AL_E_IO;
			break;
		}
		n++;
	}
	if (!de && errno && !rc) {
		ali_cmd_error_at(ci, dir, "cannot read the directory: %s", strerror(errno));
		rc = AL_E_IO;
	}
	closedir(dp);
	if (rc == AL_E_IO && errno == ENOMEM)
		ali_cmd_printf(ci, "anelint: error: out of memory\n");
	if (n && !rc)
		qsort(names, n, sizeof *names, name_cmp);
	for (size_t i = 0; i < n && !rc; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *p = malloc(len);
		if (!p) {
			rc = AL_E_IO;
			break;
		}
		snprintf(p, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
		struct stat st;
		const struct model_ext *me = model_ext_of(names[i]);
		if (lstat(p, &st) != 0) {
			free(p);
			continue;
		}
		bool isdir = S_ISDIR(st.st_mode);
		if (me && me->is_dir == isdir) {
			if (!(rc = keep_path(ci, p, top)))
				(*found)++;
		} else if (isdir && !S_ISLNK(st.st_mode) && depth >= DIR_MAX_DEPTH) {
			ali_cmd_puts(ci, "anelint: warning: ");
			ali_cmd_put(ci, p, SHOWN_NAME_MAX);
			ali_cmd_printf(ci, ": not searched: more than %d directories below ", DIR_MAX_DEPTH);
			ali_cmd_put(ci, top, SHOWN_NAME_MAX);
			ali_cmd_puts(ci, " (the limit); models in it are not checked, and the run fails (exit 3)\n");
			ci->deep_skipped++;
			free(p);
		} else if (isdir && !S_ISLNK(st.st_mode)) {
			rc = search_dir(ci, p, top, depth + 1, found);
			free(p);
		} else {
			free(p);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* A directory argument to search: not a model's own (a package, by its name or
 * its Manifest.json). */
bool ali_cmd_searched_dir(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || model_ext_of(path))
		return false;
	size_t n = strlen(path) + sizeof "/Manifest.json";
	char *m = malloc(n);
	bool manifest = false;
	if (m) {
		snprintf(m, n, "%s/Manifest.json", path);
		manifest = lstat(m, &st) == 0;
		free(m);
	}
	return !manifest;
}

enum al_status al_ci_expand_paths(al_ci *ci, const char *const *in, size_t n_in, const char *const **out,
				  size_t *n_out)
{
	*out = in;
	*n_out = n_in;
	if (!ci || (n_in && !in))
		return AL_E_INVALID_ARG;
	bool any = false;
	for (size_t i = 0; i < n_in; i++)
		any |= ali_cmd_searched_dir(in[i]);
	if (!any)
		return AL_OK;
	size_t n = 0;
	const char **paths = NULL;
	for (size_t i = 0; i < n_in; i++) {
		size_t first = ci->n_path_copies, found = 0;
		if (ali_cmd_searched_dir(in[i])) {
			size_t deep = ci->deep_skipped;
			enum al_status rc = search_dir(ci, in[i], in[i], 0, &found);
			if (rc) {
				free(paths);
				return rc;
			}
			if (!found && ci->deep_skipped > deep) {
				ali_cmd_error_at(ci, in[i], "no model within %d directories of this one (searched for .mlmodel, "
							".mlpackage and .mlmodelc, recursively); %zu deeper "
							"director%s not searched (the limit)", DIR_MAX_DEPTH,
					     ci->deep_skipped - deep, ci->deep_skipped - deep == 1 ? "y was" : "ies were");
				free(paths);
				return AL_E_FORMAT;
			}
			if (!found) {
				ali_cmd_error_at(ci, in[i], "no model in this directory (searched for .mlmodel, .mlpackage "
							"and .mlmodelc, recursively)");
				free(paths);
				return AL_E_FORMAT;
			}
		}
		size_t add = found ? found : 1;
		const char **v = realloc(paths, (n + add) * sizeof *v);
		if (!v) {
			free(paths);
			return AL_E_NOMEM;
		}
		paths = v;
		if (found)
			for (size_t k = 0; k < found; k++)
				paths[n++] = ci->path_copies[first + k];
		else
			paths[n++] = in[i];
	}
	free(ci->expanded);
	ci->expanded = paths;
	*out = paths;
	*n_out = n;
	return AL_OK;
}

size_t al_ci_unsearched(const al_ci *ci)
{
	return ci ? ci->deep_skipped : 0;
}

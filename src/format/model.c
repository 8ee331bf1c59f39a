/* SPDX-License-Identifier: MIT */
/* model.c: the model handle. al_model_open maps a .mlmodel file or opens a
 * .mlpackage directory and hands the bytes to the loaders (mlmodel.c,
 * mlpackage.c, mil.c); the handle owns the mappings and the arena every IR
 * object lives in, until al_model_free.
 *
 * Path through this file:
 *   al_model_open         stat, then open_file (mmap + ali_load_model_message)
 *                         or ali_load_package (mlpackage.c)
 *   al_model_open_buffer  ali_weights_attach, then ali_load_model_message
 *   al_model_free         unmap, free the arenas */
#include "model.h"
#include "mlmodelc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>


/* ================================================================ model handle */

static enum al_status open_file(struct al_model *m, const char *path, al_diags *d)
{
	enum al_status st = ali_map_file(path, NULL, &m->maps[0], d);
	if (st)
		return st;
	m->n_maps = 1;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return ali_load_model_message(m, m->maps[0].s, path, base, d);
}

/* A compiled model directory (.mlmodelc): coremldata.bin and no Manifest.json. */
static bool is_compiled_dir(const char *path)
{
	size_t cap = strlen(path) + 32;
	char *mf = ali_malloc(cap);
	if (!mf)
		return false;
	struct stat st;
	snprintf(mf, cap, "%s/Manifest.json", path);
	bool manifest = lstat(mf, &st) == 0;
	snprintf(mf, cap, "%s/coremldata.bin", path);
	bool cdata = lstat(mf, &st) == 0;
	ali_free(mf);
	return cdata && !manifest;
}

enum al_status al_model_open(const char *path, al_model **out, al_diags *d)
{
	if (!out || !path)
		return AL_E_INVALID_ARG;
	*out = NULL;
	struct stat st;
	if (stat(path, &st) != 0) {
		ali_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "cannot open: %s",
			    strerror(errno));
		return AL_E_IO;
	}
	struct al_model *m = ali_calloc(1, sizeof *m);
	if (!m) {
		ali_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "out of memory");
		return AL_E_NOMEM;
	}
	m->path = ali_arena_strndup(&m->arena, path, strlen(path));
	enum al_status rc;
	if (!m->path) {
		rc = AL_E_NOMEM;
	} else if (S_ISDIR(st.st_mode) && is_compiled_dir(path)) {
		m->is_package = true;
		rc = ali_load_compiled(m, path, d);
	} else if (S_ISDIR(st.st_mode)) {
		m->is_package = true;
		rc = ali_load_package(m, path, d);
	} else {
		rc = open_file(m, path, d);
	}
	if (rc == AL_OK && m->arena.failed)
		rc = AL_E_NOMEM;
	if (rc != AL_OK) {
		if (rc == AL_E_NOMEM)
			ali_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "out of memory");
		else if (al_diags_errors(d) == 0)
			ali_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "%s",
				    al_status_str(rc));
		al_model_free(m);
		return rc;
	}
	*out = m;
	return AL_OK;
}

enum al_status al_model_open_buffer(const void *bytes, size_t n, const void *weights,
				    size_t n_weights, const char *name, al_model **out, al_diags *d)
{
	if (!out || (!bytes && n) || (!weights && n_weights))
		return AL_E_INVALID_ARG;
	*out = NULL;
	if (!name)
		name = "(buffer)";
	struct al_model *m = ali_calloc(1, sizeof *m);
	if (!m) {
		ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "out of memory");
		return AL_E_NOMEM;
	}
	enum al_status rc = AL_E_NOMEM;
	m->path = ali_arena_strndup(&m->arena, name, strlen(name));
	if (m->path) {
		rc = AL_OK;
		if (weights)
			rc = ali_weights_attach(m, (al_span){weights, n_weights},
					       ali_arena_printf(&m->arena, "%s/weights/weight.bin", name), d);
		if (rc == AL_OK)
			rc = ali_load_model_message(m, (al_span){bytes, n}, m->path, m->path, d);
	}
	if (rc == AL_OK && m->arena.failed)
		rc = AL_E_NOMEM;
	if (rc != AL_OK) {
		if (rc == AL_E_NOMEM)
			ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "out of memory");
		al_model_free(m);
		return rc;
	}
	*out = m;
	return AL_OK;
}

void al_model_free(al_model *m)
{
	if (!m)
		return;
	if (m->interp && m->interp_free)
		m->interp_free(m->interp);
	for (int i = 0; i < m->n_maps; i++)
		ali_unmap(&m->maps[i]);
	ali_arena_free(&m->verdicts);
	ali_arena_free(&m->rule_memo);
	ali_arena_free(&m->arena);
	ali_free(m);
}

enum al_status al_model_select_function(al_model *m, const char *name, al_diags *d)
{
	struct al_submodel *s = m && m->n_subs ? m->subs[0] : NULL;
	if (!s || !name)
		return AL_E_INVALID_ARG;
	uint32_t k = UINT32_MAX;
	for (uint32_t i = 0; s->world == AL_WORLD_MIL && i < s->n_functions && i < s->n_graphs; i++)
		if (s->functions[i] && strcmp(s->functions[i], name) == 0)
			k = i;
	if (k == UINT32_MAX) {
		char names[256] = "";
		size_t len = 0;
		for (uint32_t i = 0; i < s->n_functions && len < sizeof names; i++)
			len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
						s->functions[i] ? s->functions[i] : "?");
		ali_diag_add(d, AL_SEV_ERROR, s->file, UINT64_MAX, NULL, NULL,
			     "the model has no function '%.100s' (%s%s)", name,
			     s->world == AL_WORLD_MIL ? "its functions: " : "it is not an ML Program",
			     names);
		return AL_E_INVALID_ARG;
	}
	s->functions[0] = s->functions[k];
	if (s->opsets)
		s->opsets[0] = s->opsets[k];
	s->graphs[0] = s->graphs[k];
	s->n_functions = s->n_graphs = 1;
	s->default_function = s->functions[0];
	for (uint32_t i = 0; i < s->n_fdescs; i++)
		if (s->fdescs[i].name && strcmp(s->fdescs[i].name, name) == 0) {
			s->inputs = s->fdescs[i].inputs;
			s->n_inputs = s->fdescs[i].n_inputs;
			s->outputs = s->fdescs[i].outputs;
			s->n_outputs = s->fdescs[i].n_outputs;
			s->states = s->fdescs[i].states;
			s->n_states = s->fdescs[i].n_states;
		}
	return AL_OK;
}

const char *al_model_path(const al_model *m)
{
	return m->path;
}

bool al_model_is_package(const al_model *m)
{
	return m->is_package;
}

size_t al_model_count(const al_model *m)
{
	return m ? m->n_subs : 0;
}

const struct al_submodel *al_model_get(const al_model *m, size_t i)
{
	return m && i < m->n_subs ? m->subs[i] : NULL;
}

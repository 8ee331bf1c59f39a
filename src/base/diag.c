/* SPDX-License-Identifier: MIT */
/* diag.c: the diagnostics list every library call appends to (file, byte
 * offset, field path, node, message), and the names of the status codes.
 * Nothing here prints: the caller decides what to show. */
#include "base.h"

#include <stdio.h>
#include <string.h>

/* ================================================================ diagnostics */

al_diags *al_diags_new(void)
{
	return ali_calloc(1, sizeof(al_diags));
}

void al_diags_free(al_diags *d)
{
	if (!d)
		return;
	ali_free(d->items);
	ali_arena_free(&d->strings);
	ali_free(d);
}

size_t al_diags_count(const al_diags *d)
{
	return d ? d->n : 0;
}

size_t al_diags_errors(const al_diags *d)
{
	return d ? d->n_errors : 0;
}

size_t al_diags_dropped(const al_diags *d)
{
	return d ? d->n_dropped : 0;
}

const struct al_diag *al_diags_get(const al_diags *d, size_t i)
{
	return d && i < d->n ? &d->items[i] : NULL;
}

static const char *dup_or_null(struct al_arena *a, const char *s)
{
	return s ? ali_arena_strndup(a, s, strnlen(s, AL_MAX_NAME)) : NULL;
}

void ali_diag_add(al_diags *d, enum al_severity sev, const char *file, uint64_t offset,
		 const char *where, const char *node, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ali_diag_vadd(d, sev, file, offset, where, node, fmt, ap);
	va_end(ap);
}

void ali_diag_vadd(al_diags *d, enum al_severity sev, const char *file, uint64_t offset,
		  const char *where, const char *node, const char *fmt, va_list ap)
{
	if (!d)
		return;
	if (sev == AL_SEV_ERROR)
		d->n_errors++; /* counted even if storing fails, so callers still see it */
	/* A hostile file can raise a warning per layer; keep the first ones, and
	 * always the first errors, and count the rest. */
	if (d->n >= AL_MAX_DIAGS && (sev != AL_SEV_ERROR || d->n_errors > AL_MAX_DIAGS)) {
		d->n_dropped++;
		return;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct al_diag *items = ali_realloc(d->items, cap * sizeof *items);
		if (!items)
			return;
		d->items = items;
		d->cap = cap;
	}
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	/* one line: control characters from hostile names become '?' */
	for (char *c = msg; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	struct al_diag *x = &d->items[d->n];
	x->severity = sev;
	x->file = dup_or_null(&d->strings, file);
	x->offset = offset;
	x->where = dup_or_null(&d->strings, where);
	x->node = dup_or_null(&d->strings, node);
	x->msg = dup_or_null(&d->strings, msg);
	if (!x->msg)
		x->msg = "out of memory while recording a diagnostic";
	d->n++;
}


const char *al_version(void)
{
	return ANELINT_VERSION;
}

const char *al_status_str(enum al_status s)
{
	switch (s) {
	case AL_OK: return "ok";
	case AL_E_IO: return "I/O error";
	case AL_E_NOMEM: return "out of memory";
	case AL_E_FORMAT: return "invalid model";
	case AL_E_UNSUPPORTED: return "unsupported model";
	case AL_E_INVALID_ARG: return "invalid argument";
	}
	return "unknown status";
}

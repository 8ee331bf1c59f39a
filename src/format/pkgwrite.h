/* SPDX-License-Identifier: MIT */
/* pkgwrite.h: the .mlpackage writer. A new package at a path: every file of an
 * opened input package copied, its root model.mlmodel replaced (a splice over
 * the input's bytes, or whole new bytes) and its weight.bin replaced (the
 * input's blobs with new ones appended and the header's count raised, or the
 * bytes a caller's function writes). Built in a temporary directory next to the
 * destination, opened with anelint's own loader, and only then renamed into
 * place (or swapped with the package it replaces).
 *
 * Two calls, so that a caller can plan its content between them:
 * ali_pkg_prepare checks the input and the destination (and says why not);
 * the caller sets the content fields; ali_pkg_write writes. The rewrite stage's
 * ali_surgery_write_package (src/rewrite/mil_build.c) is its caller. */
#ifndef ANELINT_PKGWRITE_H
#define ANELINT_PKGWRITE_H

#include "anelint.h"
#include "model.h"
#include "pbsplice.h"

#include <limits.h>

struct ali_pkg_writer {
	/* the content, set by the caller before ali_pkg_write */
	struct al_splice *sp;       /* model.mlmodel: the splice over the input root's bytes */
	uint64_t root_n;            /* (root_n of them) ... */
	bool model_whole;           /* ... or, when set, model[0..model_n) */
	const uint8_t *model;
	size_t model_n;
	/* weight.bin: n_new blobs appended, tail[0..tail_n), after the input's bytes,
	 * the header's blob count then `count`; a package without weight.bin gets
	 * one when n_new (the tail then starts with the 64-byte storage header) */
	uint32_t n_new;
	uint32_t count;
	const uint8_t *tail;
	size_t tail_n;
	/* or, when weights_whole, the whole weight.bin written by write_weights(ctx,
	 * in_fd, out_fd) (in_fd: the input's weight.bin, or -1), weights_size bytes
	 * of it copied from the input (the budget a sparse input's copy is held to) */
	bool weights_whole;
	bool (*write_weights)(void *ctx, int in_fd, int out_fd);
	void *ctx;
	uint64_t weights_size;
	/* filled by ali_pkg_prepare */
	const al_model *m;
	al_diags *d;
	char in_real[PATH_MAX];
	char model_real[PATH_MAX];
	char weights_real[PATH_MAX];
	char dest[PATH_MAX];
	bool have_weights, exists, wrote_model, wrote_weights;
};

/* Checks that m is a package whose root model is a file in it, and that `path`
 * can take the new package (not a .mlmodel, not inside the input, an existing
 * directory only when it is a package that does not hold the input); fills w
 * (its content fields zero). Errors go to d. */
enum al_status ali_pkg_prepare(struct ali_pkg_writer *w, const al_model *m, const char *path, al_diags *d);
/* Writes the package w describes (after ali_pkg_prepare returned AL_OK). */
enum al_status ali_pkg_write(struct ali_pkg_writer *w);

#endif

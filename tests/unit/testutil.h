/* SPDX-License-Identifier: MIT */
/* testutil.h: what the cmocka unit tests share: where the repo's fixtures and
 * the optional shared corpus are, and small file helpers. Tests that need the
 * corpus call corpus_dir() and skip() when it returns NULL. */
#ifndef ANELINT_TESTUTIL_H
#define ANELINT_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>

/* Repo root: $ANELINT_ROOT, else the current directory (make runs tests there). */
static inline const char *repo_root(void)
{
	const char *r = getenv("ANELINT_ROOT");
	return r && *r ? r : ".";
}

/* "<root>/tests/data/<name>" in a static buffer (one at a time). */
static inline const char *fixture(const char *name)
{
	static char buf[4096];
	int n = snprintf(buf, sizeof buf, "%s/tests/data/%s", repo_root(), name);
	return n > 0 && (size_t)n < sizeof buf ? buf : "";
}

/* The shared corpus ($ANELINT_CORPUS, else <root>/../shared/corpus), or NULL
 * when it is absent (tests then skip). */
static inline const char *corpus_dir(void)
{
	static char buf[4096];
	const char *c = getenv("ANELINT_CORPUS");
	int n;
	if (c && *c)
		n = snprintf(buf, sizeof buf, "%s", c);
	else
		n = snprintf(buf, sizeof buf, "%s/../shared/corpus", repo_root());
	if (n < 0 || (size_t)n >= sizeof buf)
		return NULL;
	struct stat st;
	return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? buf : NULL;
}

/* "<corpus>/<rel>" or NULL when the corpus is absent. */
static inline const char *corpus_file(const char *rel)
{
	static char buf[8192];
	const char *c = corpus_dir();
	if (!c)
		return NULL;
	int n = snprintf(buf, sizeof buf, "%s/%s", c, rel);
	return n > 0 && (size_t)n < sizeof buf ? buf : NULL;
}

static inline int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove path and everything below it (no links followed). */
static inline void rm_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif

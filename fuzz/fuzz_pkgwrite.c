/* SPDX-License-Identifier: MIT */
/* fuzz_pkgwrite.c: libFuzzer harness for the .mlpackage writer of model surgery
 * (al_surgery_write of a package: src/format/pkgwrite.c through mil_build.c's
 * ali_surgery_write_package, the
 * copy of the tree, the spliced model.mlmodel, weight.bin with appended blobs,
 * the re-load before the rename, the swap over an existing package).
 *
 * Input: fuzz_mlpackage's framing (lengths little-endian, clamped; a header cut
 * short counts as 0):
 *     [u32 A][A bytes: Manifest.json][u32 B][B bytes: model.mlmodel][rest: weight.bin]
 * written as the package in.mlpackage in a per-process directory (weight.bin
 * only when `rest` is non-empty). When it opens, the rewrites are planned up
 * to the equivalence class picked by input bits, and written to out.mlpackage
 * beside it; for some inputs (input bits) a second time, over the first, which
 * takes the replace path.
 *
 * Promises checked (anelint.h "surgery"):
 *   - every status agrees with the diagnostics (fuzz_common.h);
 *   - a write that succeeded left a package that opens (al_model_open);
 *   - with no rewrite applied, it holds the input's files byte for byte, and no
 *     other file;
 *   - a write that failed left nothing: no out.mlpackage (or the earlier one,
 *     untouched), no temporary directory beside it;
 *   - the input package is never modified.
 * FUZZ_QUICK (fuzz_common.h) skips the second write for most inputs. */
#include "fuzz_common.h"

#include <dirent.h>

static char dir[600], in_pkg[700], out_pkg[700];
/* FUZZ_STATS=1: how far the inputs got, printed at exit (fuzz/README.md). */
static unsigned long n_loaded, n_planned, n_applied, n_written, n_replaced;
static void print_stats(void)
{
	fprintf(stderr, "fuzz_pkgwrite: %lu loaded, %lu planned, %lu with rewrites, %lu written, "
		"%lu written over\n", n_loaded, n_planned, n_applied, n_written, n_replaced);
}
static const char *const files[3] = {"/Manifest.json", "/Data/com.apple.CoreML/model.mlmodel",
				     "/Data/com.apple.CoreML/weights/weight.bin"};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof dir, "%s/w", fuzz_scratch_dir());
	snprintf(in_pkg, sizeof in_pkg, "%s/in.mlpackage", dir);
	snprintf(out_pkg, sizeof out_pkg, "%s/out.mlpackage", dir);
	if (getenv("FUZZ_STATS"))
		atexit(print_stats);
	return 0;
}

/* The whole file at path, malloc'd (NULL and *n 0 when absent). */
static uint8_t *slurp(const char *path, size_t *n)
{
	*n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	FUZZ_CHECK(fstat(fd, &st) == 0 && S_ISREG(st.st_mode));
	uint8_t *p = malloc((size_t)st.st_size + 1);
	FUZZ_CHECK(p != NULL);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t k = read(fd, p + got, (size_t)st.st_size - got);
		FUZZ_CHECK(k > 0);
		got += (size_t)k;
	}
	close(fd);
	*n = got;
	return p;
}

static bool same_file(const char *a, const char *b)
{
	size_t na, nb;
	uint8_t *pa = slurp(a, &na), *pb = slurp(b, &nb);
	bool same = (pa == NULL) == (pb == NULL) && na == nb && (na == 0 || memcmp(pa, pb, na) == 0);
	free(pa);
	free(pb);
	return same;
}

static size_t n_entries;
static int count_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)p;
	(void)sb;
	(void)flag;
	(void)ftw;
	n_entries++;
	return 0;
}

static size_t count_tree(const char *path)
{
	n_entries = 0;
	FUZZ_CHECK(nftw(path, count_one, 16, FTW_PHYS) == 0);
	return n_entries;
}

/* The names in dir other than in.mlpackage and (when `out_ok`) out.mlpackage. */
static bool only_expected(bool out_ok)
{
	DIR *d = opendir(dir);
	FUZZ_CHECK(d != NULL);
	struct dirent *e;
	bool ok = true;
	while ((e = readdir(d)))
		ok &= strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		      strcmp(e->d_name, "in.mlpackage") == 0 ||
		      (out_ok && strcmp(e->d_name, "out.mlpackage") == 0);
	closedir(d);
	return ok;
}

/* One al_surgery_write to out.mlpackage and its promises. `had_out`: a package
 * written before is there; `was` its model.mlmodel, to find it untouched. */
static bool write_once(al_surgery *s, al_diags *d, bool had_out)
{
	char p[800];
	size_t wn = 0;
	uint8_t *was = NULL;
	if (had_out) {
		snprintf(p, sizeof p, "%s%s", out_pkg, files[1]);
		was = slurp(p, &wn);
	}
	size_t before = al_diags_errors(d);
	enum al_status st = al_surgery_write(s, out_pkg, d);
	fuzz_check_diags(d);
	fuzz_check_status(st, d, before);
	struct stat sb;
	if (st == AL_OK) {
		n_written += !had_out;
		n_replaced += had_out;
		al_diags *d2 = al_diags_new();
		al_model *m2 = NULL;
		FUZZ_CHECK(d2 != NULL);
		FUZZ_CHECK(al_model_open(out_pkg, &m2, d2) == AL_OK);
		al_model_free(m2);
		al_diags_free(d2);
		if (al_surgery_applied(s) == 0) {
			/* the input's files, byte for byte, and nothing else */
			for (size_t i = 0; i < 3; i++) {
				char a[800], b[800];
				snprintf(a, sizeof a, "%s%s", in_pkg, files[i]);
				snprintf(b, sizeof b, "%s%s", out_pkg, files[i]);
				FUZZ_CHECK(same_file(a, b));
			}
			FUZZ_CHECK(count_tree(out_pkg) == count_tree(in_pkg));
		}
	} else if (had_out) {
		size_t n2;
		uint8_t *now = slurp(p, &n2);
		FUZZ_CHECK(now != NULL && n2 == wn && (wn == 0 || memcmp(now, was, wn) == 0));
		free(now);
	} else {
		FUZZ_CHECK(lstat(out_pkg, &sb) != 0);
	}
	FUZZ_CHECK(only_expected(st == AL_OK || had_out));
	free(was);
	return st == AL_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *mf, *mm;
	size_t mf_n, mm_n;
	fuzz_take(&data, &size, &mf, &mf_n);
	fuzz_take(&data, &size, &mm, &mm_n);
	fuzz_rm_tree(dir);
	FUZZ_CHECK(mkdir(dir, 0700) == 0);
	fuzz_put_package(in_pkg, mf, mf_n, mm, mm_n, data, size);
	unsigned seed = fuzz_seed(mm, mm_n);

	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	al_model *m = (al_model *)1;
	enum al_status st = al_model_open(in_pkg, &m, d);
	fuzz_check_diags(d);
	fuzz_check_status(st, d, 0);
	FUZZ_CHECK((st == AL_OK) == (m != NULL));
	if (st == AL_OK) {
		n_loaded++;
		struct al_surgery_opts o = {.allow = (enum al_equiv)(seed % 3)};
		al_surgery *s = NULL;
		size_t before = al_diags_errors(d);
		st = al_surgery_plan(m, &o, &s, d);
		fuzz_check_diags(d);
		fuzz_check_status(st, d, before);
		if (st == AL_OK) {
			FUZZ_CHECK(s != NULL);
			n_planned++;
			n_applied += al_surgery_applied(s) > 0;
			bool wrote = write_once(s, d, false);
			if (wrote && ((seed >> 3) & 1) && fuzz_heavy())
				write_once(s, d, true); /* over the first: the replace path */
			al_surgery_free(s);
		}
		al_model_free(m);
	}
	al_diags_free(d);
	/* the input package is the input, whatever happened */
	for (size_t i = 0; i < 3; i++) {
		char p[800];
		size_t n;
		snprintf(p, sizeof p, "%s%s", in_pkg, files[i]);
		uint8_t *b = slurp(p, &n);
		const uint8_t *want = i == 0 ? mf : i == 1 ? mm : data;
		size_t want_n = i == 0 ? mf_n : i == 1 ? mm_n : size;
		FUZZ_CHECK(i == 2 && want_n == 0 ? b == NULL : (b != NULL && n == want_n &&
								  (n == 0 || memcmp(b, want, n) == 0)));
		free(b);
	}
	return 0;
}

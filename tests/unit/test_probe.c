/* SPDX-License-Identifier: MIT */
/* test_probe: al_probes_write, `anelint probe -o DIR` as one library call
 * (src/command/probe.c): the probe models, manifest.json and run_probes.sh written
 * and counted in the result struct, and each failure as an error in the caller's
 * diagnostics with the exit code the CLI returns (the library prints nothing). */
#include "anelint.h"
#include "testutil.h"

#include <dirent.h>
#include <string.h>
#include <unistd.h>

static const char *tmp_dir(void)
{
	static char dir[64];
	snprintf(dir, sizeof dir, "/tmp/anelint-test-probe.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);
	return n >= k && strcmp(s + n - k, tail) == 0;
}

/* Every probe is a model file or package in the directory, next to the manifest and the script. */
static void test_writes(void **state)
{
	(void)state;
	char dir[128];
	snprintf(dir, sizeof dir, "%s/p", tmp_dir());
	struct al_probe_opts o = {.dir = dir};
	struct al_probe_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_probes_write(&o, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(al_diags_count(d), 0);
	assert_true(r.n_probes >= 100);
	size_t models = 0;
	bool manifest = false, script = false;
	DIR *dd = opendir(dir);
	assert_non_null(dd);
	for (struct dirent *e; (e = readdir(dd));) {
		models += ends_with(e->d_name, ".mlmodel") || ends_with(e->d_name, ".mlpackage");
		manifest |= strcmp(e->d_name, "manifest.json") == 0;
		script |= strcmp(e->d_name, "run_probes.sh") == 0;
	}
	closedir(dd);
	assert_int_equal(models, r.n_probes);
	assert_true(manifest && script);
	al_diags_free(d);
	rm_tree(dir);
	*strrchr(dir, '/') = 0;
	rm_tree(dir);
}

/* A directory whose parent is missing: exit 4, one error naming it; nothing written. */
static void test_no_parent(void **state)
{
	(void)state;
	char dir[160];
	const char *t = tmp_dir();
	snprintf(dir, sizeof dir, "%s/missing/p", t);
	struct al_probe_opts o = {.dir = dir};
	struct al_probe_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_probes_write(&o, &r, d), AL_E_IO);
	assert_int_equal(r.exit_code, 4);
	assert_int_equal(r.n_probes, 0);
	assert_int_equal(al_diags_count(d), 1);
	const struct al_diag *x = al_diags_get(d, 0);
	assert_int_equal(x->severity, AL_SEV_ERROR);
	assert_string_equal(x->file, dir);
	assert_non_null(strstr(x->msg, "No such file"));
	al_diags_free(d);
	rm_tree(t);
}

/* The first probe cannot be written (a directory holds its name): exit 4 at once, its
 * error names that path, and neither the manifest nor the script is written. */
static void test_write_fails(void **state)
{
	(void)state;
	char dir[128], blocked[192], man[192];
	snprintf(dir, sizeof dir, "%s", tmp_dir());
	snprintf(blocked, sizeof blocked, "%s/conv_kw12.mlmodel", dir);
	snprintf(man, sizeof man, "%s/manifest.json", dir);
	assert_int_equal(mkdir(blocked, 0777), 0);
	struct al_probe_opts o = {.dir = dir};
	struct al_probe_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_probes_write(&o, &r, d), AL_E_IO);
	assert_int_equal(r.exit_code, 4);
	assert_int_equal(r.n_probes, 0);
	assert_true(al_diags_count(d) >= 1);
	assert_string_equal(al_diags_get(d, 0)->file, blocked);
	assert_int_not_equal(access(man, F_OK), 0);
	al_diags_free(d);
	rm_tree(dir);
}

static void test_bad_args(void **state)
{
	(void)state;
	struct al_probe_result r;
	struct al_probe_opts o = {0};
	assert_int_equal(al_probes_write(NULL, &r, NULL), AL_E_INVALID_ARG);
	assert_int_equal(al_probes_write(&o, &r, NULL), AL_E_INVALID_ARG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writes),
		cmocka_unit_test(test_no_parent),
		cmocka_unit_test(test_write_fails),
		cmocka_unit_test(test_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

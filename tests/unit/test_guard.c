/* SPDX-License-Identifier: MIT */
/* test_guard.c: the guard-page test mode (src/base/file.c) and the bounded number
 * readers (src/base/span_num.c), and every text parser fed input that ends where
 * a terminator-reliant read would run on: a model.mil ending mid-number, a .npy
 * header ending right after the quote of 'descr', an os_log name escape, a rules
 * file and a configuration ending in digits. Each input sits right before a
 * PROT_NONE page, so a read one byte past its end faults every time (ASan cannot
 * see such reads: past an mmap, or inside libc); each parse runs in a child
 * process so that a fault is reported as this test failing, not the binary
 * dying. main() sets ANELINT_GUARD_MAPS=1, so ali_map_file is in the mode too. */
#include "testutil.h"

#include "analysis.h"
#include "evidence.h"
#include "interp.h"
#include "miltext.h"
#include "report.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka catches SIGSEGV to report it; a child dies of it instead. */
static void child_signals(void)
{
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
}

/* Runs fn(arg) in a child; fails the test when the child was killed by a signal. */
static void survives(void (*fn)(const void *), const void *arg, const char *what)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		child_signals();
		fn(arg);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("%s: killed by signal %d (a read past the end of its input)", what, WTERMSIG(status));
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("%s: exit %d", what, WEXITSTATUS(status));
}

/* Whether fn(arg) dies by SIGSEGV (or SIGBUS) in a child. */
static bool faults(void (*fn)(const void *), const void *arg)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		child_signals();
		fn(arg);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) && (WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS);
}

static void read_byte(const void *p)
{
	volatile uint8_t sink = *(const volatile uint8_t *)p;
	(void)sink;
}

static void test_guarded_copy(void **state)
{
	(void)state;
	struct al_map m;
	assert_int_equal(ali_map_guarded_copy("abc", 3, &m), AL_OK);
	assert_int_equal(m.s.n, 3);
	assert_memory_equal(m.s.p, "abc", 3);
	assert_false(faults(read_byte, m.s.p + 2));
	assert_true(faults(read_byte, m.s.p + 3)); /* the byte after the last one */
	ali_unmap(&m);
	assert_null(m.s.p);

	assert_int_equal(ali_map_guarded_copy(NULL, 0, &m), AL_OK); /* empty: at the guard page */
	assert_int_equal(m.s.n, 0);
	assert_non_null(m.s.p);
	assert_true(faults(read_byte, m.s.p));
	ali_unmap(&m);

	uint8_t page[8192]; /* a copy of whole pages ends at the guard too */
	memset(page, 'x', sizeof page);
	assert_int_equal(ali_map_guarded_copy(page, sizeof page, &m), AL_OK);
	assert_false(faults(read_byte, m.s.p));
	assert_true(faults(read_byte, m.s.p + sizeof page));
	ali_unmap(&m);
}

static const char *temp_file(const char *name, const void *p, size_t n)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/anelint-guard-%ld-%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (long)getpid(), name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void test_file_mode(void **state)
{
	(void)state;
	assert_true(ali_guard_maps()); /* main() set ANELINT_GUARD_MAPS=1 */
	al_diags *d = al_diags_new();
	struct al_map m;
	const char *p = temp_file("five", "12345", 5);
	assert_int_equal(ali_map_file(p, NULL, &m, d), AL_OK);
	assert_int_equal(m.s.n, 5);
	assert_memory_equal(m.s.p, "12345", 5);
	assert_true(faults(read_byte, m.s.p + 5));
	/* still registered as a mapping of that file (al_mapped_file_at) */
	const char *name = al_mapped_file_at(m.s.p + 4);
	assert_non_null(name);
	assert_string_equal(name, p);
	ali_unmap(&m);
	unlink(p);

	p = temp_file("empty", "", 0); /* an empty file maps, to n = 0 */
	assert_int_equal(ali_map_file(p, NULL, &m, d), AL_OK);
	assert_int_equal(m.s.n, 0);
	assert_true(faults(read_byte, m.s.p));
	ali_unmap(&m);
	unlink(p);
	assert_int_equal(al_diags_count(d), 0);
	al_diags_free(d);
}

static void test_span_numbers(void **state)
{
	(void)state;
	uint64_t u = 7;
	assert_int_equal(ali_span_u64("123x", 4, UINT64_MAX, &u), 3);
	assert_int_equal(u, 123);
	assert_int_equal(ali_span_u64("12", 1, UINT64_MAX, &u), 1); /* n bounds it, not a terminator */
	assert_int_equal(u, 1);
	assert_int_equal(ali_span_u64("x1", 2, UINT64_MAX, &u), 0);
	assert_int_equal(ali_span_u64("", 0, UINT64_MAX, &u), 0);
	assert_int_equal(ali_span_u64("18446744073709551615", 20, UINT64_MAX, &u), 20);
	assert_true(u == UINT64_MAX);
	assert_int_equal(ali_span_u64("18446744073709551616", 20, UINT64_MAX, &u), 0);
	assert_int_equal(ali_span_u64("9223372036854775808", 19, INT64_MAX, &u), 0);
	assert_int_equal(ali_span_u64("5", 1, 4, &u), 0);
	assert_int_equal(ali_span_u64("0", 1, 0, &u), 1);

	int64_t i = 7;
	assert_int_equal(ali_span_i64("-9223372036854775808", 20, INT64_MIN, INT64_MAX, &i), 20);
	assert_true(i == INT64_MIN);
	assert_int_equal(ali_span_i64("-9223372036854775809", 20, INT64_MIN, INT64_MAX, &i), 0);
	assert_int_equal(ali_span_i64("+42,", 4, INT64_MIN, INT64_MAX, &i), 3);
	assert_int_equal(i, 42);
	assert_int_equal(ali_span_i64("-", 1, INT64_MIN, INT64_MAX, &i), 0);
	assert_int_equal(ali_span_i64("-3", 2, 0, 10, &i), 0);

	double v = 0;
	assert_int_equal(ali_span_double("1.5e3]", 6, &v), 5);
	assert_true(v == 1500.0);
	assert_int_equal(ali_span_double("2.5", 2, &v), 2); /* "2." */
	assert_true(v == 2.0);
	assert_int_equal(ali_span_double(" 1", 2, &v), 0);
	char longnum[300];
	memset(longnum, '1', sizeof longnum);
	assert_int_equal(ali_span_double(longnum, sizeof longnum, &v), 0); /* longer than the copy */
}

/* ---- the parsers, each on a guarded copy of a hostile input */

struct input {
	const char *text;
	size_t n;
};

static struct al_map guarded(const struct input *in)
{
	struct al_map m;
	assert_int_equal(ali_map_guarded_copy(in->text, in->n, &m), AL_OK);
	return m;
}

static void parse_mil(const void *arg)
{
	struct al_map m = guarded(arg);
	al_diags *d = al_diags_new();
	struct al_buf out = {0};
	if (ali_mil_text_parse(m.s, "model.mil", &out, d) != AL_E_FORMAT || al_diags_errors(d) != 1)
		_exit(3);
	ali_buf_free(&out);
	al_diags_free(d);
	ali_unmap(&m);
}

static void test_miltext_truncated(void **state)
{
	(void)state;
	static const char *const cuts[] = {
		"program(1.0)\n{\n  func main<ios17>(tensor<fp32, [12",
		"program(1.0)\n{\n  func main<ios17>(tensor<fp32, [1, 3, 224",
		"program(1.0)\n{\n  func main<ios17>(tensor<fp32, [1]> x) {\n    tensor<fp32, [1]> y = add(x=x, y=1.",
		"program(1.0)\n{\n  func main<ios17>(tensor<int32, [2]> x) {\n    tensor<int32, [2]> c = const()[val = tensor<int32, [2]>([1, 2",
		"program(1",
		"program(",
	};
	for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
		struct input in = {cuts[i], strlen(cuts[i])};
		survives(parse_mil, &in, cuts[i]);
	}
}

static void parse_npy(const void *arg)
{
	struct al_map m = guarded(arg);
	al_diags *d = al_diags_new();
	al_tensor *t = NULL;
	if (al_npy_read_buffer(m.s.p, m.s.n, "t.npy", &t, d) != AL_E_FORMAT || t)
		_exit(3);
	al_diags_free(d);
	ali_unmap(&m);
}

static void test_npy_truncated(void **state)
{
	(void)state;
	/* headers of exactly hlen bytes, the buffer ending with them */
	static const char *const headers[] = {"{'descr': '", "{'descr': '<", "{'descr': '<f", "{'descr': '<f4",
					      "{'descr': '<f4', 'shape': (12", "{'descr': '<f4', 'shape': (",
					      "{'descr': \"", "{'shape': (1, 2"};
	for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
		char buf[128];
		size_t hl = strlen(headers[i]);
		memcpy(buf, "\x93NUMPY\x01\x00", 8);
		buf[8] = (char)hl;
		buf[9] = 0;
		memcpy(buf + 10, headers[i], hl);
		struct input in = {buf, 10 + hl};
		survives(parse_npy, &in, headers[i]);
	}
}

static void parse_oslog(const void *arg)
{
	struct al_map m = guarded(arg);
	al_diags *d = al_diags_new();
	struct al_evidence *e = NULL;
	if (ali_evidence_parse(m.s.p, m.s.n, "t.log", AL_EVF_OSLOG, &e, d) != AL_OK || e->n_ops != 1 ||
	    strcmp(e->ops[0].name, "aAb") != 0 || e->ops[0].index != 12)
		_exit(3);
	ali_evidence_free(e);
	al_diags_free(d);
	ali_unmap(&m);
}

static void parse_any_evidence(const void *arg)
{
	struct al_map m = guarded(arg);
	al_diags *d = al_diags_new();
	for (int f = 0; f < AL_EVF_COUNT; f++) {
		struct al_evidence *e = NULL;
		(void)ali_evidence_parse(m.s.p, m.s.n, "t.ev", f, &e, d);
		ali_evidence_free(e);
	}
	al_diags_free(d);
	ali_unmap(&m);
}

static void test_evidence_truncated(void **state)
{
	(void)state;
	/* the \x escape was decoded by sscanf, which first reads to a NUL */
	static const char oslog[] = "Kernel validation warning a\\x41b (conv) @ 12: Unsupported: why";
	struct input in = {oslog, sizeof oslog - 1};
	survives(parse_oslog, &in, "os_log with \\x41");
	static const char *const cuts[] = {
		"Kernel validation warning x (conv) @ 12",
		"0.68% G|C  x_1 = ios16.gather",
		"[12] ios18.conv outputs=[var_12] preferred=MLNeuralEngineComputeDevice",
		"{\"schema\": \"anelint-evidence\", \"ops\": [{\"index\": 12",
		"program(1.0)\n{\n  func main<ios17>(tensor<fp32, [12",
		"conv | c1 | ane",
	};
	for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
		struct input c = {cuts[i], strlen(cuts[i])};
		survives(parse_any_evidence, &c, cuts[i]);
	}
}

static void parse_config(const void *arg)
{
	struct al_map m = guarded(arg);
	al_diags *d = al_diags_new();
	struct ali_config *c = NULL;
	(void)ali_config_parse((const char *)m.s.p, m.s.n, "t.toml", &c, d);
	ali_config_free(c);
	al_diags_free(d);
	ali_unmap(&m);
}

static void parse_rules(const void *arg)
{
	struct al_map m = guarded(arg);
	al_diags *d = al_diags_new();
	al_user_rules *u = NULL;
	(void)al_user_rules_parse((const char *)m.s.p, m.s.n, "t.rules", &u, d);
	al_user_rules_free(u);
	al_diags_free(d);
	ali_unmap(&m);
}

static void test_config_rules_truncated(void **state)
{
	(void)state;
	static const char *const configs[] = {"max_ops = 12", "x = -9223372036854775808", "x = [1, 2",
					      "x = \"ab", "[table", "x = tru"};
	for (size_t i = 0; i < sizeof configs / sizeof *configs; i++) {
		struct input in = {configs[i], strlen(configs[i])};
		survives(parse_config, &in, configs[i]);
	}
	/* the value of a number key read back */
	struct al_map m;
	assert_int_equal(ali_map_guarded_copy("n = -12", 7, &m), AL_OK);
	al_diags *d = al_diags_new();
	struct ali_config *c = NULL;
	assert_int_equal(ali_config_parse((const char *)m.s.p, m.s.n, "t.toml", &c, d), AL_OK);
	assert_int_equal(c->n, 1);
	assert_int_equal(c->e[0].v.type, AL_CFG_INT);
	assert_int_equal(c->e[0].v.i, -12);
	ali_config_free(c);
	al_diags_free(d);
	ali_unmap(&m);

	static const char *const rules[] = {"id: X1\nname: x\nop: conv\nreleases: ios17", "id: X1\nconfidence: 1",
					    "id: X1\nname: x\n  ", "id"};
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
		struct input in = {rules[i], strlen(rules[i])};
		survives(parse_rules, &in, rules[i]);
	}
}

/* Through files, in the mode: a compiled model whose model.mil ends mid-number,
 * and a .npy file ending right after the quote of 'descr'. */
static void open_model(const void *arg)
{
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	if (al_model_open(arg, &m, d) != AL_E_FORMAT || m)
		_exit(3);
	al_diags_free(d);
}

static void read_npy_file(const void *arg)
{
	al_diags *d = al_diags_new();
	al_tensor *t = NULL;
	if (al_npy_read(arg, &t, d) != AL_E_FORMAT || t)
		_exit(3);
	al_diags_free(d);
}

static void test_files_truncated(void **state)
{
	(void)state;
	char dir[512];
	snprintf(dir, sizeof dir, "%s/anelint-guard-%ld.mlmodelc", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (long)getpid());
	assert_int_equal(mkdir(dir, 0700), 0);
	char p[700];
	/* coremldata.bin of a compiled ML Program from the fixtures */
	FILE *f = fopen(fixture("compiled/coremltools_add_model.mlmodelc/coremldata.bin"), "rb");
	if (!f) {
		rmdir(dir);
		skip();
	}
	uint8_t cd[65536];
	size_t n = fread(cd, 1, sizeof cd, f);
	fclose(f);
	snprintf(p, sizeof p, "%s/coremldata.bin", dir);
	FILE *o = fopen(p, "wb");
	assert_non_null(o);
	assert_int_equal(fwrite(cd, 1, n, o), n);
	fclose(o);
	static const char mil[] = "program(1.0)\n{\n  func main<ios17>(tensor<fp32, [1, 3, 12";
	snprintf(p, sizeof p, "%s/model.mil", dir);
	o = fopen(p, "wb");
	assert_non_null(o);
	assert_int_equal(fwrite(mil, 1, sizeof mil - 1, o), sizeof mil - 1);
	fclose(o);
	survives(open_model, dir, "model.mil ending mid-number");
	unlink(p);
	snprintf(p, sizeof p, "%s/coremldata.bin", dir);
	unlink(p);
	rmdir(dir);

	static const char npy[] = "\x93NUMPY\x01\x00\x0b\x00{'descr': '";
	const char *np = temp_file("cut.npy", npy, sizeof npy - 1);
	survives(read_npy_file, np, ".npy header ending after the quote of 'descr'");
	unlink(np);
}

int main(void)
{
	setenv("ANELINT_GUARD_MAPS", "1", 1); /* before the first mapping reads it */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guarded_copy),
		cmocka_unit_test(test_file_mode),
		cmocka_unit_test(test_span_numbers),
		cmocka_unit_test(test_miltext_truncated),
		cmocka_unit_test(test_npy_truncated),
		cmocka_unit_test(test_evidence_truncated),
		cmocka_unit_test(test_config_rules_truncated),
		cmocka_unit_test(test_files_truncated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

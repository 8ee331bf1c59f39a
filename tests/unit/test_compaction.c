/* SPDX-License-Identifier: MIT */
/* test_compaction.c: the blob reference walker (src/format/mil_blobs.c) and
 * weight.bin compaction by the package writer (src/rewrite/compact.c): an
 * output's weight.bin holds exactly the blobs its program refers to, each at
 * a 64-byte boundary in the MILBlob chain, with the bytes it had before. */
#include "testutil.h"
#include "pbwrite.h"

#include "analysis.h"
#include "base.h"
#include "mil_blobs.h"
#include "pbsplice.h"

#include <fcntl.h>
#include <unistd.h>

#define WF "@model_path/weights/weight.bin"
#define W_REL "Data/com.apple.CoreML/weights/weight.bin"
#define M_REL "Data/com.apple.CoreML/model.mlmodel"

static char root[] = "/tmp/anelint_compact_XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	rm_tree(root);
	return 0;
}

static const char *at(const char *rel)
{
	static char buf[2][4096];
	static int k;
	k ^= 1;
	snprintf(buf[k], sizeof buf[k], "%s/%s", root, rel);
	return buf[k];
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long len = ftell(f);
	assert_true(len >= 0);
	rewind(f);
	uint8_t *p = malloc((size_t)len + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return p;
}

/* ------------------------------------------------------------------ the walker */

struct seen {
	uint64_t off[64];
	const uint8_t *at[64];
	size_t len[64];
	al_span bfv[64];
	size_t n;
	size_t stop_after; /* 0: never stop */
};

static bool see(void *ctx, const struct ali_blob_ref *r)
{
	struct seen *s = ctx;
	assert_true(s->n < 64);
	assert_true(ali_span_eq(r->file, WF));
	s->off[s->n] = r->offset;
	s->at[s->n] = r->off_at;
	s->len[s->n] = r->off_len;
	s->bfv[s->n] = r->bfv;
	s->n++;
	return !s->stop_after || s->n < s->stop_after;
}

/* Value{blobFileValue 5 {fileName 1, offset 2}} */
static struct buf blob_value(uint64_t off)
{
	struct buf bf = {0}, v = {0};
	put_str(&bf, 1, WF);
	put_uint(&bf, 2, off);
	put_msg(&v, 5, &bf);
	return v;
}

/* A map entry {key 1, value 2}; frees value. */
static struct buf entry(const char *key, struct buf *value)
{
	struct buf e = {0};
	put_str(&e, 1, key);
	put_msg(&e, 2, value);
	return e;
}

/* A Block with one op whose attributes["val"] is the blob at off. */
static struct buf block_with(uint64_t off)
{
	struct buf v = blob_value(off), e = entry("val", &v), op = {0}, blk = {0};
	put_str(&op, 1, "const");
	put_msg(&op, 5, &e);
	put_msg(&blk, 3, &op);
	return blk;
}

/* A Program with a reference in every place MIL.proto allows one, offsets
 * 64, 128, ... in the order the walk meets them. */
static struct buf program_everywhere(void)
{
	/* op: an input binding (128 ... listed first), a nested block, an attribute */
	struct buf bind = {0}, arg = {0}, argent, op = {0}, v;
	v = blob_value(64);
	put_str(&bind, 1, "");
	put_msg(&bind, 2, &v);
	put_msg(&arg, 1, &bind);
	argent = entry("x", &arg);
	put_str(&op, 1, "conv");
	put_msg(&op, 2, &argent);
	/* a nested block whose op's value is a list holding a blob */
	struct buf lst = {0}, imm = {0}, lv = {0}, e, inner = {0}, nested = {0};
	v = blob_value(128);
	put_msg(&lst, 1, &v);
	put_msg(&imm, 3, &lst);
	put_msg(&lv, 3, &imm);
	e = entry("val", &lv);
	put_str(&inner, 1, "const");
	put_msg(&inner, 5, &e);
	put_msg(&nested, 3, &inner);
	put_msg(&op, 4, &nested);
	v = blob_value(192);
	e = entry("weight", &v);
	put_msg(&op, 5, &e);
	struct buf blk = {0};
	put_msg(&blk, 3, &op);
	v = blob_value(256); /* a block attribute */
	e = entry("a", &v);
	put_msg(&blk, 4, &e);
	/* a function with two block specializations and an attribute */
	struct buf fn = {0}, spec = entry("CoreML5", &blk), blk2 = block_with(320), spec2 = entry("CoreML6", &blk2);
	put_str(&fn, 2, "CoreML5");
	put_msg(&fn, 3, &spec);
	put_msg(&fn, 3, &spec2);
	v = blob_value(384);
	e = entry("f", &v);
	put_msg(&fn, 4, &e);
	struct buf prog = {0}, fe = entry("main", &fn);
	put_uint(&prog, 1, 1);
	put_msg(&prog, 2, &fe);
	/* a program attribute: a dictionary whose key and value are blobs */
	struct buf pair = {0}, dict = {0}, imm2 = {0}, dv = {0}, k = blob_value(448), val = blob_value(100000);
	put_msg(&pair, 1, &k);
	put_msg(&pair, 2, &val);
	put_msg(&dict, 1, &pair);
	put_msg(&imm2, 4, &dict);
	put_msg(&dv, 3, &imm2);
	e = entry("p", &dv);
	put_msg(&prog, 4, &e);
	return prog;
}

static void test_walker_finds_every_reference(void **state)
{
	(void)state;
	struct buf prog = program_everywhere();
	struct seen s = {0};
	assert_int_equal(ali_mil_blob_refs((al_span){prog.p, prog.n}, see, &s), AL_OK);
	static const uint64_t want[] = {64, 128, 192, 256, 320, 384, 448, 100000};
	assert_int_equal(s.n, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.off[i], want[i]);
	/* the varint spans are the offsets': move every blob by a splice (one
	 * grows from 2 to 3 bytes, one shrinks) and walk again */
	struct al_splice *sp = ali_splice_new((al_span){prog.p, prog.n});
	assert_non_null(sp);
	for (size_t i = 0; i < s.n; i++) {
		struct al_buf v = {0};
		ali_buf_varint(&v, i == 7 ? 64 : s.off[i] * 1000);
		assert_int_equal(ali_splice_replace(sp, s.bfv[i], s.at[i], s.len[i], v.p, v.n), AL_OK);
		ali_buf_free(&v);
	}
	assert_int_equal(ali_splice_finish(sp, NULL), AL_OK);
	uint8_t *out;
	size_t n;
	assert_int_equal(ali_splice_to_buffer(sp, &out, &n), AL_OK);
	struct seen s2 = {0};
	assert_int_equal(ali_mil_blob_refs((al_span){out, n}, see, &s2), AL_OK);
	assert_int_equal(s2.n, s.n);
	for (size_t i = 0; i < s2.n; i++)
		assert_int_equal(s2.off[i], i == 7 ? 64 : want[i] * 1000);
	ali_free(out);
	ali_splice_free(sp);
	/* a callback that stops the walk */
	struct seen s3 = {.stop_after = 2};
	assert_int_equal(ali_mil_blob_refs((al_span){prog.p, prog.n}, see, &s3), AL_E_NOMEM);
	assert_int_equal(s3.n, 2);
	free(prog.p);
}

static void test_walker_refuses_what_it_cannot_read(void **state)
{
	(void)state;
	struct seen s = {0};
	/* a BlobFileValue with two offsets (a reader takes the last; nothing to guess) */
	struct buf bf = {0}, v = {0}, blk = {0}, op = {0}, e;
	put_str(&bf, 1, WF);
	put_uint(&bf, 2, 64);
	put_uint(&bf, 2, 128);
	put_msg(&v, 5, &bf);
	e = entry("val", &v);
	put_msg(&op, 5, &e);
	put_msg(&blk, 3, &op);
	struct buf spec = entry("CoreML5", &blk), fn = {0}, prog = {0}, fe;
	put_msg(&fn, 3, &spec);
	fe = entry("main", &fn);
	put_msg(&prog, 2, &fe);
	assert_int_equal(ali_mil_blob_refs((al_span){prog.p, prog.n}, see, &s), AL_E_FORMAT);
	free(prog.p);
	/* a blobFileValue that is a varint */
	struct buf v2 = {0}, e2, op2 = {0}, blk2 = {0};
	put_uint(&v2, 5, 64);
	e2 = entry("val", &v2);
	put_msg(&op2, 5, &e2);
	put_msg(&blk2, 3, &op2);
	struct buf spec2 = entry("x", &blk2), fn2 = {0}, prog2 = {0}, fe2;
	put_msg(&fn2, 3, &spec2);
	fe2 = entry("main", &fn2);
	put_msg(&prog2, 2, &fe2);
	assert_int_equal(ali_mil_blob_refs((al_span){prog2.p, prog2.n}, see, &s), AL_E_FORMAT);
	free(prog2.p);
	/* blocks nested past protobuf's limit */
	struct buf b = block_with(64);
	for (int i = 0; i < 60; i++) {
		struct buf o = {0}, nb = {0};
		put_msg(&o, 4, &b);
		put_msg(&nb, 3, &o);
		b = nb;
	}
	struct buf spec3 = entry("x", &b), fn3 = {0}, prog3 = {0}, fe3;
	put_msg(&fn3, 3, &spec3);
	fe3 = entry("main", &fn3);
	put_msg(&prog3, 2, &fe3);
	assert_int_equal(ali_mil_blob_refs((al_span){prog3.p, prog3.n}, see, &s), AL_E_FORMAT);
	free(prog3.p);
	/* cut short */
	struct buf ok = program_everywhere();
	assert_int_equal(ali_mil_blob_refs((al_span){ok.p, ok.n - 3}, see, &s), AL_E_FORMAT);
	/* ali_model_program: exactly one mlProgram */
	struct buf model = {0};
	put_uint(&model, 1, 7);
	al_span p;
	assert_false(ali_model_program((al_span){model.p, model.n}, &p));
	put_bytes(&model, 502, ok.p, ok.n);
	assert_true(ali_model_program((al_span){model.p, model.n}, &p));
	assert_int_equal(p.n, ok.n);
	put_bytes(&model, 502, ok.p, ok.n);
	assert_false(ali_model_program((al_span){model.p, model.n}, &p));
	free(model.p);
	free(ok.p);
}

/* ------------------------------------------------------------------ the writer */

/* The MILBlob chain of weight.bin w (what coremltools' GetAllOffsets walks):
 * every record 64-byte aligned, its data right after it, the header's count
 * of them, nothing after the last but padding. Returns the count. */
static size_t chain(const uint8_t *w, size_t n, uint64_t *off, size_t cap)
{
	assert_true(n >= 64);
	uint32_t count = al_rd32le(w);
	assert_int_equal(al_rd32le(w + 4), 2);
	assert_true(count <= cap);
	uint64_t pos = 64;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t meta = (pos + 63) / 64 * 64;
		assert_true(meta + 64 <= n);
		assert_int_equal(al_rd32le(w + meta), 0xDEADBEEFu);
		uint64_t size = al_rd64le(w + meta + 8), data = al_rd64le(w + meta + 16);
		assert_int_equal(data, meta + 64);
		assert_true(data + size <= n);
		off[i] = meta;
		pos = data + size;
	}
	assert_true(n <= (pos + 63) / 64 * 64);
	return count;
}

static bool in_list(const uint64_t *o, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (o[i] == v)
			return true;
	return false;
}

/* The output package's weight.bin against its program: every reference a
 * blob of the chain, every blob of the chain referenced. */
static void walk_output(const char *pkg, struct seen *refs, uint8_t **w, size_t *wn)
{
	char p[8192];
	size_t mn;
	snprintf(p, sizeof p, "%s/" M_REL, pkg);
	uint8_t *model = slurp(p, &mn);
	snprintf(p, sizeof p, "%s/" W_REL, pkg);
	*w = slurp(p, wn);
	al_span prog;
	assert_true(ali_model_program((al_span){model, mn}, &prog));
	*refs = (struct seen){0};
	assert_int_equal(ali_mil_blob_refs(prog, see, refs), AL_OK);
	uint64_t off[256];
	size_t n = chain(*w, *wn, off, 256);
	for (size_t i = 0; i < refs->n; i++)
		assert_true(in_list(off, n, refs->off[i])); /* every reference a blob */
	for (size_t i = 0; i < n; i++)
		assert_true(in_list(refs->off, refs->n, off[i])); /* no unreferenced blob */
	for (size_t i = 0; i < refs->n; i++) /* bfv spans point into model: not kept */
		refs->bfv[i] = (al_span){0}, refs->at[i] = NULL;
	free(model);
}

static const char *fp32_fixture(void)
{
	return fixture("converted/transformer_encoder__mlp_fp32.mlpackage");
}

/* mil-fp16-compute on an fp32 ML Program: every fp32 blob replaced by an fp16
 * one; the output's weight.bin holds only those (about half the input's),
 * and each reference reaches the same bytes as in the uncompacted image. */
static void test_compaction_fp16_compute(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fp32_fixture(), &m, d), AL_OK);
	struct al_surgery_opts o = {.allow = AL_EQ_APPROXIMATE};
	al_surgery *sg = NULL;
	assert_int_equal(al_surgery_plan(m, &o, &sg, d), AL_OK);
	assert_true(al_surgery_applied(sg) >= 1);
	/* the uncompacted model and image (what the proof runs) */
	uint8_t *before;
	size_t bn, wbn;
	const void *wb;
	assert_int_equal(al_surgery_bytes(sg, &before, &bn, d), AL_OK);
	assert_int_equal(al_surgery_weights(sg, &wb, &wbn, d), AL_OK);
	al_span prog;
	assert_true(ali_model_program((al_span){before, bn}, &prog));
	struct seen old = {0};
	assert_int_equal(ali_mil_blob_refs(prog, see, &old), AL_OK);
	assert_true(old.n > 0);

	assert_int_equal(al_surgery_write(sg, at("fp16.mlpackage"), d), AL_OK);
	struct seen now;
	uint8_t *w;
	size_t wn;
	walk_output(at("fp16.mlpackage"), &now, &w, &wn);
	assert_int_equal(now.n, old.n);
	const uint8_t *img = wb;
	for (size_t i = 0; i < now.n; i++) {
		const uint8_t *a = img + old.off[i], *b = w + now.off[i];
		assert_int_equal(al_rd32le(a + 4), al_rd32le(b + 4));  /* dtype */
		assert_int_equal(al_rd64le(a + 8), al_rd64le(b + 8));  /* size */
		assert_int_equal(al_rd64le(a + 24), al_rd64le(b + 24)); /* padding bits */
		uint64_t size = al_rd64le(a + 8);
		assert_memory_equal(img + al_rd64le(a + 16), b + 64, size);
	}
	/* about half of the fp32 input's weight.bin (it was 1.5x) */
	struct stat st;
	char p[8192];
	snprintf(p, sizeof p, "%s/" W_REL, fp32_fixture());
	assert_int_equal(stat(p, &st), 0);
	assert_true((double)wn <= 0.55 * (double)st.st_size);
	assert_true(wn < wbn);
	/* and it loads, without an error */
	al_diags *d2 = al_diags_new();
	al_model *m2 = NULL;
	assert_int_equal(al_model_open(at("fp16.mlpackage"), &m2, d2), AL_OK);
	assert_int_equal(al_model_check(m2, NULL, d2), AL_OK);
	for (size_t i = 0; i < al_diags_count(d2); i++)
		assert_true(al_diags_get(d2, i)->severity != AL_SEV_ERROR);
	al_model_free(m2);
	al_diags_free(d2);
	free(w);
	free(before);
	al_surgery_free(sg);
	al_model_free(m);
	al_diags_free(d);
	rm_tree(at("fp16.mlpackage"));
}

/* A rewrite that drops no blob (a fill folded to a new const): the writer
 * copies as before, the input's weight.bin bytes first, the model as spliced. */
static void test_compaction_fast_path(void **state)
{
	(void)state;
	const char *in = fixture("crafted/fix_mil_fill.mlpackage");
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(in, &m, d), AL_OK);
	al_surgery *sg = NULL;
	assert_int_equal(al_surgery_plan(m, NULL, &sg, d), AL_OK);
	assert_true(al_surgery_applied(sg) >= 1);
	uint8_t *spliced;
	size_t sn;
	assert_int_equal(al_surgery_bytes(sg, &spliced, &sn, d), AL_OK);
	assert_int_equal(al_surgery_write(sg, at("fill.mlpackage"), d), AL_OK);
	char p[8192];
	size_t mn, win;
	snprintf(p, sizeof p, "%s/" M_REL, at("fill.mlpackage"));
	uint8_t *model = slurp(p, &mn);
	assert_int_equal(mn, sn);
	assert_memory_equal(model, spliced, sn);
	snprintf(p, sizeof p, "%s/" W_REL, in);
	uint8_t *wi = slurp(p, &win);
	struct seen refs;
	uint8_t *w;
	size_t wn;
	walk_output(at("fill.mlpackage"), &refs, &w, &wn);
	assert_true(wn > win);
	assert_memory_equal(w + 4, wi + 4, win - 4);
	free(w);
	free(wi);
	free(model);
	free(spliced);
	al_surgery_free(sg);
	al_model_free(m);
	al_diags_free(d);
	rm_tree(at("fill.mlpackage"));
}

/* A sparse input (1 GiB apparent: a hole after its blobs): the compacted
 * output copies the live blobs only, so it is small, and a copy that cannot
 * keep holes is not refused (it writes no hole). */
static void test_compaction_sparse_input(void **state)
{
	(void)state;
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", fp32_fixture(), at("sp.mlpackage"));
	assert_int_equal(system(cmd), 0);
	char w[8192];
	snprintf(w, sizeof w, "%s/" W_REL, at("sp.mlpackage"));
	assert_int_equal(truncate(w, (off_t)1 << 30), 0);
	struct stat st;
	assert_int_equal(stat(w, &st), 0);
	if (!ali_file_is_sparse(&st))
		skip();
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(at("sp.mlpackage"), &m, d), AL_OK);
	struct al_surgery_opts o = {.allow = AL_EQ_APPROXIMATE};
	al_surgery *sg = NULL;
	assert_int_equal(al_surgery_plan(m, &o, &sg, d), AL_OK);
	bool was = ali_copy_force_dense(true);
	for (int dense = 1; dense >= 0; dense--) {
		ali_copy_force_dense(dense);
		const char *out = at(dense ? "dense.mlpackage" : "holes.mlpackage");
		assert_int_equal(al_surgery_write(sg, out, d), AL_OK);
		char p[8192];
		snprintf(p, sizeof p, "%s/" W_REL, out);
		assert_int_equal(stat(p, &st), 0);
		assert_true(st.st_size < (off_t)1 << 20);
		struct seen refs;
		uint8_t *wo;
		size_t wn;
		walk_output(out, &refs, &wo, &wn);
		free(wo);
		rm_tree(out);
	}
	ali_copy_force_dense(was);
	al_surgery_free(sg);
	al_model_free(m);
	al_diags_free(d);
	rm_tree(at("sp.mlpackage"));
}

/* Rewrite path as a sparse file: every 4 KB block of zeros a hole. Returns
 * whether the file system made it sparse. */
static bool sparsify(const char *path)
{
	size_t n;
	uint8_t *b = slurp(path, &n);
	assert_int_equal(unlink(path), 0);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	static const uint8_t zero[4096];
	for (size_t o = 0; o < n; o += 4096) {
		size_t k = n - o < 4096 ? n - o : 4096;
		if (k == 4096 && memcmp(b + o, zero, k) == 0)
			continue;
		assert_int_equal(pwrite(fd, b + o, k, (off_t)o), (ssize_t)k);
	}
	assert_int_equal(ftruncate(fd, (off_t)n), 0);
	assert_int_equal(fsync(fd), 0);
	close(fd);
	free(b);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return ali_file_is_sparse(&st);
}

/* A live blob with holes (a 64 KB zero weight) next to two that die (an int4
 * weight requantized per channel): the compacted output keeps the holes, and
 * its blobs are the references'. */
static void test_compaction_keeps_holes_of_live_blobs(void **state)
{
	(void)state;
	char cmd[8192], w[8192];
	snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", fixture("crafted/compact_sparse_live.mlpackage"),
		 at("live.mlpackage"));
	assert_int_equal(system(cmd), 0);
	snprintf(w, sizeof w, "%s/" W_REL, at("live.mlpackage"));
	if (!sparsify(w) || !ali_copy_keeps_holes()) {
		rm_tree(at("live.mlpackage"));
		skip();
	}
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(at("live.mlpackage"), &m, d), AL_OK);
	struct al_surgery_opts o = {.allow = AL_EQ_APPROXIMATE};
	al_surgery *sg = NULL;
	assert_int_equal(al_surgery_plan(m, &o, &sg, d), AL_OK);
	assert_int_equal(al_surgery_applied(sg), 1);
	assert_int_equal(al_surgery_write(sg, at("live_out.mlpackage"), d), AL_OK);
	struct seen refs;
	uint8_t *wo;
	size_t wn;
	walk_output(at("live_out.mlpackage"), &refs, &wo, &wn);
	/* 5 blobs in, 2 dropped (int4 data and scale), 2 new (int8 data and scale) */
	assert_int_equal(al_rd32le(wo), 5);
	/* the zero weight's blob is the first, where it was: 128 .. 65664 */
	assert_int_equal(al_rd64le(wo + 64 + 8), 65536);
	static const uint8_t zero[65536];
	assert_memory_equal(wo + 128, zero, sizeof zero);
	struct stat st;
	char p[8192];
	snprintf(p, sizeof p, "%s/" W_REL, at("live_out.mlpackage"));
	assert_int_equal(stat(p, &st), 0);
	/* at least 8 of its 14 whole zero blocks are holes in the output too */
	assert_true((uint64_t)st.st_blocks * 512 + 8 * 4096 <= (uint64_t)st.st_size + 4096);
	free(wo);
	al_surgery_free(sg);
	al_model_free(m);
	al_diags_free(d);
	rm_tree(at("live.mlpackage"));
	rm_tree(at("live_out.mlpackage"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walker_finds_every_reference),
		cmocka_unit_test(test_walker_refuses_what_it_cannot_read),
		cmocka_unit_test(test_compaction_fp16_compute),
		cmocka_unit_test(test_compaction_fast_path),
		cmocka_unit_test(test_compaction_sparse_input),
		cmocka_unit_test(test_compaction_keeps_holes_of_live_blobs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

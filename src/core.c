/* core.c: allocation (hookable), arenas, diagnostics, file mapping, the
 * model handle and the small name tables of the public API.
 * Nothing here knows about Core ML's schema. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ================================================================ allocation */

static unsigned long alloc_count, alloc_fail_at;

unsigned long al_alloc_fail_after(unsigned long n)
{
	unsigned long made = alloc_count;
	alloc_count = 0;
	alloc_fail_at = n;
	return made;
}

static bool alloc_should_fail(void)
{
	alloc_count++;
	return alloc_fail_at && alloc_count >= alloc_fail_at;
}

void *al_malloc(size_t n)
{
	return alloc_should_fail() ? NULL : malloc(n ? n : 1);
}

void *al_calloc(size_t n, size_t size)
{
	return alloc_should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *al_realloc(void *p, size_t n)
{
	return alloc_should_fail() ? NULL : realloc(p, n ? n : 1);
}

void al_free(void *p)
{
	free(p);
}

/* ================================================================ arena */

struct al_arena_chunk {
	struct al_arena_chunk *next;
	size_t cap, used;
	_Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK (64 * 1024)

void *al_arena_alloc(struct al_arena *a, size_t n)
{
	/* Every arena allocation is a fault-injection point, not only the ones
	 * that need a new chunk: that takes test_faults from a handful of failure
	 * points per fixture to every allocation in load and check. */
	if (alloc_should_fail()) {
		a->failed = true;
		return NULL;
	}
	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	struct al_arena_chunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		if (cap > SIZE_MAX - sizeof *c) {
			a->failed = true;
			return NULL;
		}
		c = al_malloc(sizeof *c + cap);
		if (!c) {
			a->failed = true;
			return NULL;
		}
		c->cap = cap;
		c->used = 0;
		c->next = a->head;
		a->head = c;
		a->cap += cap;
	}
	void *p = c->data + c->used;
	c->used += n;
	a->used += n;
	memset(p, 0, n);
	return p;
}

void *al_arena_array(struct al_arena *a, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size) {
		a->failed = true;
		return NULL;
	}
	return al_arena_alloc(a, count * size);
}

char *al_arena_strndup(struct al_arena *a, const void *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *p = al_arena_alloc(a, n + 1);
	if (p && n)
		memcpy(p, s, n);
	return p;
}

char *al_arena_span_str(struct al_arena *a, al_span s)
{
	return al_arena_strndup(a, s.p, s.n);
}

char *al_arena_printf(struct al_arena *a, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = n < 0 ? NULL : al_arena_alloc(a, (size_t)n + 1);
	if (p)
		vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

void al_arena_free(struct al_arena *a)
{
	struct al_arena_chunk *c = a->head;
	while (c) {
		struct al_arena_chunk *next = c->next;
		al_free(c);
		c = next;
	}
	memset(a, 0, sizeof *a);
}

/* ================================================================ names */

struct name_at {
	al_span s;
	size_t i;
};

static bool same_name(al_span a, al_span b)
{
	return a.n == b.n && (!a.n || memcmp(a.p, b.p, a.n) == 0);
}

static int name_at_cmp(const void *a, const void *b)
{
	const struct name_at *x = a, *y = b;
	size_t n = x->s.n < y->s.n ? x->s.n : y->s.n;
	int c = n ? memcmp(x->s.p, y->s.p, n) : 0;
	if (c)
		return c;
	if (x->s.n != y->s.n)
		return x->s.n < y->s.n ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

enum al_status al_first_repeat(const al_span *names, size_t n, size_t *first, size_t *again)
{
	*first = *again = SIZE_MAX;
	if (n < 2)
		return AL_OK;
	/* n is bounded by the bytes holding the names */
	struct name_at *v = n <= SIZE_MAX / sizeof *v ? al_malloc(n * sizeof *v) : NULL;
	if (!v)
		return AL_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct name_at){names[i], i};
	qsort(v, n, sizeof *v, name_at_cmp);
	/* a run of equal names is in index order: [0] the first, [1] its first repeat */
	size_t start = 0;
	for (size_t k = 1; k <= n; k++) {
		if (k < n && same_name(v[k].s, v[start].s))
			continue;
		if (k - start >= 2 && v[start + 1].i < *again) {
			*again = v[start + 1].i;
			*first = v[start].i;
		}
		start = k;
	}
	al_free(v);
	return AL_OK;
}

/* ================================================================ diagnostics */

al_diags *al_diags_new(void)
{
	return al_calloc(1, sizeof(al_diags));
}

void al_diags_free(al_diags *d)
{
	if (!d)
		return;
	al_free(d->items);
	al_arena_free(&d->strings);
	al_free(d);
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
	return s ? al_arena_strndup(a, s, strnlen(s, AL_MAX_NAME)) : NULL;
}

void al_diag_add(al_diags *d, enum al_severity sev, const char *file, uint64_t offset,
		 const char *where, const char *node, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	al_diag_vadd(d, sev, file, offset, where, node, fmt, ap);
	va_end(ap);
}

void al_diag_vadd(al_diags *d, enum al_severity sev, const char *file, uint64_t offset,
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
		struct al_diag *items = al_realloc(d->items, cap * sizeof *items);
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

/* ================================================================ files */

enum al_status al_map_file(const char *path, const char *shown, struct al_map *m, al_diags *d)
{
	memset(m, 0, sizeof *m);
	const char *name = shown ? shown : path;
	/* O_NONBLOCK: opening a FIFO or device must not hang; it is refused below */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		al_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "cannot open: %s",
			    strerror(errno));
		return AL_E_IO;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		al_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "not a regular file");
		close(fd);
		return AL_E_IO;
	}
	if (st.st_size > 0) {
		if ((uint64_t)st.st_size > SIZE_MAX) {
			close(fd);
			al_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "file too large");
			return AL_E_IO;
		}
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			al_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "cannot map: %s",
				    strerror(errno));
			close(fd);
			return AL_E_IO;
		}
		/* Analysis touches layer headers scattered between weights; readahead
		 * would pull the weights in. Measured on a generated 495 MB model (bench/):
		 * a cold check took 376 ms with default readahead, ~10 ms with MADV_RANDOM.
		 * A stage that streams every weight (the interpreter) re-advises. */
		(void)madvise(p, (size_t)st.st_size, MADV_RANDOM);
		m->base = p;
		m->len = (size_t)st.st_size;
		m->s.p = p;
		m->s.n = m->len;
	}
	close(fd);
	return AL_OK;
}

void al_unmap(struct al_map *m)
{
	if (m->base)
		munmap(m->base, m->len);
	memset(m, 0, sizeof *m);
}

void al_model_trim(const struct al_model *m)
{
	/* Why: on each fault the kernel maps a whole page-cache folio, often hundreds
	 * of KB, so reading the tag after every weight array of a warm 495 MB model
	 * left ~199 MB of weight pages mapped (bench/, Linux 6.18). Those pages are
	 * clean file cache; unmapping them as we go keeps the peak near the headers. */
	if (!m)
		return;
	/* Files under 64 MB cannot pile up more than that; skip the syscalls there
	 * (a 3 MB file of 10^6 tiny layers spent a second in madvise otherwise). */
	size_t total = 0;
	for (int i = 0; i < m->n_maps; i++)
		total += m->maps[i].len;
	if (total < ((size_t)64 << 20))
		return;
	for (int i = 0; i < m->n_maps; i++)
		if (m->maps[i].base)
			(void)madvise(m->maps[i].base, m->maps[i].len, MADV_DONTNEED);
}

/* ================================================================ model handle */

bool al_model_reserve_nodes(struct al_model *m, size_t n)
{
	if (n > AL_MAX_NODES || m->n_nodes > AL_MAX_NODES - n)
		return false;
	m->n_nodes += n;
	return true;
}

struct al_submodel *al_model_add_sub(struct al_model *m)
{
	if (m->n_subs == m->cap_subs) {
		size_t cap = m->cap_subs ? m->cap_subs * 2 : 4;
		struct al_submodel **subs = al_arena_array(&m->arena, cap, sizeof *subs);
		if (!subs)
			return NULL;
		if (m->n_subs)
			memcpy(subs, m->subs, m->n_subs * sizeof *subs);
		m->subs = subs;
		m->cap_subs = cap;
	}
	struct al_submodel *s = al_arena_alloc(&m->arena, sizeof *s);
	if (s)
		m->subs[m->n_subs++] = s;
	return s;
}

static enum al_status open_file(struct al_model *m, const char *path, al_diags *d)
{
	enum al_status st = al_map_file(path, NULL, &m->maps[0], d);
	if (st)
		return st;
	m->n_maps = 1;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return al_load_model_message(m, m->maps[0].s, path, base, d);
}

enum al_status al_model_open(const char *path, al_model **out, al_diags *d)
{
	if (!out || !path)
		return AL_E_INVALID_ARG;
	*out = NULL;
	struct stat st;
	if (stat(path, &st) != 0) {
		al_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "cannot open: %s",
			    strerror(errno));
		return AL_E_IO;
	}
	struct al_model *m = al_calloc(1, sizeof *m);
	if (!m) {
		al_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "out of memory");
		return AL_E_NOMEM;
	}
	m->path = al_arena_strndup(&m->arena, path, strlen(path));
	enum al_status rc;
	if (!m->path) {
		rc = AL_E_NOMEM;
	} else if (S_ISDIR(st.st_mode)) {
		m->is_package = true;
		rc = al_load_package(m, path, d);
	} else {
		rc = open_file(m, path, d);
	}
	if (rc == AL_OK && m->arena.failed)
		rc = AL_E_NOMEM;
	if (rc != AL_OK) {
		if (rc == AL_E_NOMEM)
			al_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "out of memory");
		else if (al_diags_errors(d) == 0)
			al_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "%s",
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
	struct al_model *m = al_calloc(1, sizeof *m);
	if (!m) {
		al_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "out of memory");
		return AL_E_NOMEM;
	}
	enum al_status rc = AL_E_NOMEM;
	m->path = al_arena_strndup(&m->arena, name, strlen(name));
	if (m->path) {
		rc = AL_OK;
		if (weights)
			rc = al_weights_attach(m, (al_span){weights, n_weights},
					       al_arena_printf(&m->arena, "%s/weights/weight.bin", name), d);
		if (rc == AL_OK)
			rc = al_load_model_message(m, (al_span){bytes, n}, m->path, m->path, d);
	}
	if (rc == AL_OK && m->arena.failed)
		rc = AL_E_NOMEM;
	if (rc != AL_OK) {
		if (rc == AL_E_NOMEM)
			al_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "out of memory");
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
	for (int i = 0; i < m->n_maps; i++)
		al_unmap(&m->maps[i]);
	al_arena_free(&m->verdicts);
	al_arena_free(&m->arena);
	al_free(m);
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

enum al_status al_model_check(al_model *m, const struct al_check_opts *opts, al_diags *d)
{
	if (!m)
		return AL_E_INVALID_ARG;
	enum al_status rc = al_model_infer_shapes(m, d);
	if (rc != AL_OK)
		return rc;
	struct al_check_opts o = {0};
	if (opts)
		o = *opts;
	if (!o.target)
		o.target = al_target_default();
	rc = al_rules_run(m, &o, d);
	if (rc == AL_OK)
		m->checked = true;
	return rc;
}

/* ================================================================ names */

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

const char *al_unit_name(enum al_unit u)
{
	static const char *const names[AL_UNIT_COUNT] = {
		[AL_UNIT_ANE] = "ane", [AL_UNIT_GPU] = "gpu", [AL_UNIT_CPU] = "cpu",
		[AL_UNIT_GPU_OR_CPU] = "gpu_or_cpu", [AL_UNIT_NONE] = "none",
	};
	return (unsigned)u < AL_UNIT_COUNT ? names[u] : "?";
}

const char *al_rule_kind_name(enum al_rule_kind k)
{
	static const char *const names[AL_RULE_KIND_COUNT] = {
		[AL_RULE_ILLEGAL] = "illegal", [AL_RULE_COST] = "cost", [AL_RULE_WARN] = "warn",
	};
	return (unsigned)k < AL_RULE_KIND_COUNT ? names[k] : "?";
}

const char *al_dtype_name(int dt)
{
	switch (dt) {
	case AL_DT_BOOL: return "bool";
	case AL_DT_STRING: return "string";
	case AL_DT_FP16: return "fp16";
	case AL_DT_FP32: return "fp32";
	case AL_DT_FP64: return "fp64";
	case AL_DT_BF16: return "bf16";
	case AL_DT_INT8: return "int8";
	case AL_DT_INT16: return "int16";
	case AL_DT_INT32: return "int32";
	case AL_DT_INT64: return "int64";
	case AL_DT_INT4: return "int4";
	case AL_DT_UINT8: return "uint8";
	case AL_DT_UINT16: return "uint16";
	case AL_DT_UINT32: return "uint32";
	case AL_DT_UINT64: return "uint64";
	case AL_DT_UINT4: return "uint4";
	case AL_DT_UINT2: return "uint2";
	case AL_DT_UINT1: return "uint1";
	case AL_DT_UINT6: return "uint6";
	case AL_DT_UINT3: return "uint3";
	case AL_DT_FP8E4M3: return "fp8e4m3";
	case AL_DT_FP8E5M2: return "fp8e5m2";
	}
	return "?";
}

const char *al_feature_kind_name(enum al_feature_kind k)
{
	switch (k) {
	case AL_FEAT_INT64: return "int64";
	case AL_FEAT_DOUBLE: return "double";
	case AL_FEAT_STRING: return "string";
	case AL_FEAT_IMAGE: return "image";
	case AL_FEAT_MULTIARRAY: return "multiArray";
	case AL_FEAT_DICTIONARY: return "dictionary";
	case AL_FEAT_SEQUENCE: return "sequence";
	case AL_FEAT_STATE: return "state";
	case AL_FEAT_INVALID: break;
	}
	return "invalid";
}

/* coreml-format-facts.md section 3. */
const char *al_spec_min_os(int v)
{
	static const char *const os[] = {
		[1] = "iOS 11, macOS 10.13, tvOS 11, watchOS 4",
		[2] = "iOS 11.2, macOS 10.13.2, tvOS 11.2, watchOS 4.2",
		[3] = "iOS 12, macOS 10.14, tvOS 12, watchOS 5",
		[4] = "iOS 13, macOS 10.15, tvOS 13, watchOS 6",
		[5] = "iOS 14, macOS 11, tvOS 14, watchOS 7",
		[6] = "iOS 15, macOS 12, tvOS 15, watchOS 8",
		[7] = "iOS 16, macOS 13, tvOS 16, watchOS 9",
		[8] = "iOS 17, macOS 14, tvOS 17, watchOS 10",
		[9] = "iOS 18, macOS 15, tvOS 18, watchOS 11",
		[10] = "iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26",
	};
	return v >= 1 && v <= 10 ? os[v] : "unknown";
}

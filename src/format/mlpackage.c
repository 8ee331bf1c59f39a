/* SPDX-License-Identifier: MIT */
/* mlpackage.c: opens a .mlpackage directory: validates Manifest.json (json-c),
 * refuses item paths that leave the package (absolute, "..", empty components,
 * or a realpath outside <package>/Data), maps weights/weight.bin and checks its
 * storage header, then loads the root model with ali_load_model_message.
 * Read-only; it never reads blob data (mil.c checks blob references).
 */
#include "model.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#define MANIFEST_MAX (16u << 20) /* bytes */
#define MANIFEST_DEPTH 16        /* JSON nesting; the format needs 3 */
#define DEFAULT_WEIGHTS "com.apple.CoreML/weights"
#define STORAGE_HEADER 64        /* weight.bin: u32 count, u32 version, 7 x u64 reserved */
#define STORAGE_VERSION 2

struct pkg {
	struct al_model *m;
	al_diags *d;
	const char *dir;      /* as given, without trailing slashes */
	const char *join;     /* dir as a prefix of "/<file>" ("" for the root) */
	const char *manifest; /* <dir>/Manifest.json */
};

static enum al_status fail(struct pkg *p, enum al_status st, const char *file, uint64_t off,
			   const char *where, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static enum al_status fail(struct pkg *p, enum al_status st, const char *file, uint64_t off,
			   const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ali_diag_vadd(p->d, AL_SEV_ERROR, file, off, where, NULL, fmt, ap);
	va_end(ap);
	return st;
}

/* ================================================================ Manifest.json */

/* "major.minor.patch", each 1-9 digits. */
static bool parse_version(const char *s, unsigned long v[3])
{
	for (int i = 0; i < 3; i++) {
		size_t n = 0;
		v[i] = 0;
		while (s[n] >= '0' && s[n] <= '9' && n < 9)
			v[i] = v[i] * 10 + (unsigned long)(s[n++] - '0');
		if (n == 0 || s[n] != (i < 2 ? '.' : '\0'))
			return false;
		s += n + (i < 2);
	}
	return true;
}

/* A string member of obj, or NULL (with *len) if absent or not a string. */
static const char *get_str(struct json_object *obj, const char *key, size_t *len)
{
	struct json_object *v;
	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	*len = (size_t)json_object_get_string_len(v);
	return json_object_get_string(v);
}

/* Why an item path is unsafe, or NULL. Relative to Data/, '/'-separated; a
 * single trailing '/' (a directory) is tolerated. */
static const char *bad_path(const char *s, size_t len)
{
	if (len == 0)
		return "is empty";
	if (strlen(s) != len)
		return "contains a NUL byte";
	if (s[0] == '/')
		return "is absolute";
	if (len > 1 && s[len - 1] == '/')
		len--;
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && s[j] != '/')
			j++;
		if (j == i)
			return "has an empty component";
		if (j - i == 2 && s[i] == '.' && s[i + 1] == '.')
			return "has a '..' component";
		i = j + 1;
		if (j < len && i == len)
			return "has an empty component";
	}
	return NULL;
}

struct manifest {
	const char *root;    /* item path of the root model */
	const char *weights; /* item path of the weights directory */
};

static enum al_status check_manifest(struct pkg *p, struct json_object *top, struct manifest *out)
{
	const char *mf = p->manifest;
	size_t len;
	if (!json_object_is_type(top, json_type_object))
		return fail(p, AL_E_FORMAT, mf, UINT64_MAX, NULL, "Manifest.json is not a JSON object");

	const char *ver = get_str(top, "fileFormatVersion", &len);
	unsigned long v[3];
	if (!ver)
		return fail(p, AL_E_FORMAT, mf, UINT64_MAX, "fileFormatVersion",
			    "Manifest.json has no string fileFormatVersion");
	if (strlen(ver) != len || !parse_version(ver, v))
		return fail(p, AL_E_FORMAT, mf, UINT64_MAX, "fileFormatVersion",
			    "fileFormatVersion '%.40s' is not major.minor.patch", ver);
	if (v[0] > 1 || (v[0] == 1 && (v[1] || v[2])))
		ali_diag_add(p->d, AL_SEV_WARNING, mf, UINT64_MAX, "fileFormatVersion", NULL,
			    "fileFormatVersion %s is newer than 1.0.0, the newest anelint knows; "
			    "reading it anyway", ver);

	struct json_object *items;
	if (!json_object_object_get_ex(top, "itemInfoEntries", &items) ||
	    !json_object_is_type(items, json_type_object))
		return fail(p, AL_E_FORMAT, mf, UINT64_MAX, "itemInfoEntries",
			    "Manifest.json has no itemInfoEntries object");

	static const char *const fields[] = {"path", "name", "author", "description"};
	const char *weights = NULL;
	json_object_object_foreach(items, id, item) {
		if (!json_object_is_type(item, json_type_object))
			return fail(p, AL_E_FORMAT, mf, UINT64_MAX, "itemInfoEntries",
				    "item '%.80s' is not a JSON object", id);
		for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
			if (!get_str(item, fields[i], &len))
				return fail(p, AL_E_FORMAT, mf, UINT64_MAX, "itemInfoEntries",
					    "item '%.80s' has no string '%s'", id, fields[i]);
		const char *path = get_str(item, "path", &len), *why = bad_path(path, len);
		if (why)
			return fail(p, AL_E_FORMAT, mf, UINT64_MAX, "itemInfoEntries",
				    "Manifest path escapes the package: '%.200s' (item '%.80s') %s",
				    path, id, why);
		const char *name = get_str(item, "name", &len), *author = get_str(item, "author", &len);
		if (!weights && strcmp(name, "weights") == 0 && strcmp(author, "com.apple.CoreML") == 0)
			weights = path;
	}

	const char *root_id = get_str(top, "rootModelIdentifier", &len);
	struct json_object *root;
	if (!root_id)
		return fail(p, AL_E_FORMAT, mf, UINT64_MAX, "rootModelIdentifier",
			    "Manifest.json has no string rootModelIdentifier");
	if (!json_object_object_get_ex(items, root_id, &root))
		return fail(p, AL_E_FORMAT, mf, UINT64_MAX, "rootModelIdentifier",
			    "rootModelIdentifier '%.80s' names no item of itemInfoEntries", root_id);
	const char *rp = get_str(root, "path", &len);
	out->root = ali_arena_strndup(&p->m->arena, rp, len);
	if (!weights)
		weights = DEFAULT_WEIGHTS;
	out->weights = ali_arena_strndup(&p->m->arena, weights, strlen(weights));
	return out->root && out->weights ? AL_OK : AL_E_NOMEM;
}

static enum al_status read_manifest(struct pkg *p, struct manifest *out)
{
	struct al_map map;
	enum al_status st = ali_map_file(p->manifest, NULL, &map, p->d);
	if (st)
		return st;
	const char *s = (const char *)map.s.p;
	size_t n = map.s.n;
	if (n == 0 || n > MANIFEST_MAX) {
		ali_unmap(&map);
		if (n == 0)
			return fail(p, AL_E_FORMAT, p->manifest, UINT64_MAX, NULL,
				    "Manifest.json is empty");
		return fail(p, AL_E_FORMAT, p->manifest, UINT64_MAX, NULL,
			    "Manifest.json is %zu bytes; more than 16 MiB is refused", n);
	}
	size_t skip = n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; /* UTF-8 BOM */
	struct json_tokener *tok = json_tokener_new_ex(MANIFEST_DEPTH);
	if (!tok) {
		ali_unmap(&map);
		return AL_E_NOMEM;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	struct json_object *top = json_tokener_parse_ex(tok, s + skip, (int)(n - skip));
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t end = skip + json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!top) {
		ali_unmap(&map);
		return fail(p, AL_E_FORMAT, p->manifest, end, NULL, "invalid JSON: %s",
			    jerr == json_tokener_continue ? "unexpected end of file"
							  : json_tokener_error_desc(jerr));
	}
	while (end < n && (s[end] == ' ' || s[end] == '\t' || s[end] == '\n' || s[end] == '\r'))
		end++;
	if (end < n)
		st = fail(p, AL_E_FORMAT, p->manifest, end, NULL,
			  "invalid JSON: unexpected data after the top-level value");
	else
		st = check_manifest(p, top, out);
	json_object_put(top);
	ali_unmap(&map);
	return st;
}

/* ================================================================ paths */

/* Whether path `s` (a realpath) is `base` (a realpath) or below it. */
static bool inside(const char *base, const char *s, bool allow_equal)
{
	size_t n = strlen(base);
	if (n == 1 && base[0] == '/')
		return s[0] == '/' && (allow_equal || s[1]);
	return strncmp(s, base, n) == 0 && (s[n] == '/' || (allow_equal && s[n] == '\0'));
}

/* realpath(path) into real; false with errno set when it cannot be resolved. */
static bool resolve(const char *path, char real[PATH_MAX])
{
	return realpath(path, real) != NULL;
}

/* ================================================================ weight.bin */

/* Map <Data>/<weights item>/weight.bin if it exists (absent is fine: mil.c
 * reports ops that refer to it) and check the storage header. */
static enum al_status load_weights(struct pkg *p, const char *rel, const char *data_real)
{
	struct al_model *m = p->m;
	const char *path = ali_arena_printf(&m->arena, "%s/Data/%s%sweight.bin", p->join, rel,
					   rel[strlen(rel) - 1] == '/' ? "" : "/");
	m->weights_rel = ali_arena_printf(&m->arena, "Data/%s%sweight.bin", rel,
					 rel[strlen(rel) - 1] == '/' ? "" : "/");
	if (!path || !m->weights_rel)
		return AL_E_NOMEM;
	char real[PATH_MAX];
	if (!resolve(path, real)) {
		if (errno == ENOENT || errno == ENOTDIR)
			return AL_OK;
		return fail(p, AL_E_IO, path, UINT64_MAX, NULL, "cannot open: %s", strerror(errno));
	}
	if (!inside(data_real, real, false))
		return fail(p, AL_E_FORMAT, p->manifest, UINT64_MAX, "itemInfoEntries",
			    "Manifest path escapes the package: '%.200s/weight.bin' resolves to "
			    "%.200s, outside %.200s", rel, real, data_real);
	if (m->n_maps >= AL_MAX_MAPS)
		return fail(p, AL_E_IO, path, UINT64_MAX, NULL, "too many mapped files");
	struct al_map *map = &m->maps[m->n_maps];
	/* kept open: blob metadata is read with pread (ali_weights_meta) */
	enum al_status st = ali_map_file_open(real, path, map, p->d);
	if (st)
		return st;
	m->n_maps++;
	return ali_weights_attach(m, map->s, path, p->d);
}

enum al_status ali_weights_attach(struct al_model *m, al_span bytes, const char *path, al_diags *d)
{
	m->weights_path = path;
	size_t n = bytes.n;
	if (n == 0) {
		ali_diag_add(d, AL_SEV_WARNING, path, UINT64_MAX, NULL, NULL, "weight.bin is empty");
		return AL_OK;
	}
	uint8_t b[8]; /* count, version: read, not faulted in (ali_weights_meta) */
	if (n < STORAGE_HEADER) {
		ali_diag_add(d, AL_SEV_ERROR, path, 0, NULL, NULL,
			    "weight.bin is %zu bytes, shorter than its %d-byte header", n, STORAGE_HEADER);
		return AL_E_FORMAT;
	}
	errno = 0; /* a short read (the file shrank) sets none */
	if (!ali_model_bytes_read(m, bytes, 0, b, sizeof b)) {
		ali_diag_add(d, AL_SEV_ERROR, path, 0, NULL, NULL,
			    "cannot read weight.bin's header: %s", strerror(errno ? errno : EIO));
		return AL_E_IO;
	}
	uint32_t count = al_rd32le(b), version = al_rd32le(b + 4);
	if (version != STORAGE_VERSION) {
		ali_diag_add(d, AL_SEV_ERROR, path, 4, NULL, NULL,
			    "weight.bin has storage version %u; only version %d is known", version,
			    STORAGE_VERSION);
		return AL_E_FORMAT;
	}
	if (count > (n - STORAGE_HEADER) / 64)
		ali_diag_add(d, AL_SEV_WARNING, path, 0, NULL, NULL,
			    "weight.bin header counts %u blobs, but %zu bytes hold at most %zu", count, n,
			    (n - STORAGE_HEADER) / 64);
	m->weights = bytes;
	return AL_OK;
}

/* ================================================================ the package */

enum al_status ali_load_package(struct al_model *m, const char *dir, al_diags *d)
{
	if (!m || !dir || !*dir)
		return AL_E_INVALID_ARG;
	size_t len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	struct pkg p = {.m = m, .d = d};
	p.dir = ali_arena_strndup(&m->arena, dir, len);
	p.join = p.dir && strcmp(p.dir, "/") == 0 ? "" : p.dir;
	p.manifest = p.dir ? ali_arena_printf(&m->arena, "%s/Manifest.json", p.join) : NULL;
	const char *data = p.dir ? ali_arena_printf(&m->arena, "%s/Data", p.join) : NULL;
	if (!p.manifest || !data)
		return AL_E_NOMEM;
	char dir_real[PATH_MAX], data_real[PATH_MAX], real[PATH_MAX];
	if (!resolve(p.dir, dir_real))
		return fail(&p, AL_E_IO, p.dir, UINT64_MAX, NULL, "cannot open: %s", strerror(errno));
	/* the report path: the package's name as given, or as resolved for "." */
	const char *base = strrchr(p.dir, '/');
	base = base ? base + 1 : p.dir;
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		base = strrchr(dir_real, '/');
		base = base && base[1] ? base + 1 : dir_real;
	}
	if (!resolve(p.manifest, real)) {
		if (errno == ENOENT)
			return fail(&p, AL_E_FORMAT, p.manifest, UINT64_MAX, NULL,
				    "not a model package: Manifest.json is missing");
		return fail(&p, AL_E_IO, p.manifest, UINT64_MAX, NULL, "cannot open: %s",
			    strerror(errno));
	}
	if (!inside(dir_real, real, false))
		return fail(&p, AL_E_FORMAT, p.manifest, UINT64_MAX, NULL,
			    "Manifest.json resolves to %.200s, outside the package", real);

	struct manifest mf = {0};
	enum al_status st = read_manifest(&p, &mf);
	if (st)
		return st;

	if (!resolve(data, data_real))
		return fail(&p, AL_E_IO, data, UINT64_MAX, NULL, "cannot open: %s", strerror(errno));
	if (!inside(dir_real, data_real, false))
		return fail(&p, AL_E_FORMAT, data, UINT64_MAX, NULL,
			    "Data resolves to %.200s, outside the package", data_real);

	/* the root model */
	const char *model = ali_arena_printf(&m->arena, "%s/Data/%s", p.join, mf.root);
	if (!model)
		return AL_E_NOMEM;
	if (!resolve(model, real))
		return fail(&p, AL_E_IO, model, UINT64_MAX, NULL, "cannot open: %s", strerror(errno));
	if (!inside(data_real, real, false))
		return fail(&p, AL_E_FORMAT, p.manifest, UINT64_MAX, "rootModelIdentifier",
			    "Manifest path escapes the package: '%.200s' resolves to %.200s, "
			    "outside %.200s", mf.root, real, data_real);

	/* weights first, so the MIL walker can check blob references */
	st = load_weights(&p, mf.weights, data_real);
	if (st)
		return st;

	if (m->n_maps >= AL_MAX_MAPS)
		return fail(&p, AL_E_IO, model, UINT64_MAX, NULL, "too many mapped files");
	st = ali_map_file(real, model, &m->maps[m->n_maps], d);
	if (st)
		return st;
	al_span bytes = m->maps[m->n_maps++].s;
	return ali_load_model_message(m, bytes, model, base, d);
}

/* SPDX-License-Identifier: MIT */
/* ir.c: what the loaders use to build the model IR (sub-model list, the node
 * budget, trimming the resident pages of the mappings, reading a record of a
 * mapped file with pread: ali_weights_meta) and the small name tables of the
 * public API. Nothing here opens a file or parses bytes. */
#include "model.h"

#include <string.h>

#define TRIM_FAULTS 8 /* see below */

void ali_model_trim(const struct al_model *m)
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
	/* Nor until the process has taken TRIM_FAULTS page faults since the last
	 * trim: the maps are empty after a trim and gain pages only through faults
	 * (each maps at most a PMD's worth, 2 MB), so at most 16 MB of them
	 * can wait for the next trim; heap faults count too, which only trims
	 * sooner. Each madvise walks the page tables of the whole mapping: on the
	 * 3 GB weight.bin of bench/llm_check.sh the ~2600 trims of a check (two
	 * maps each) were half its wall time, and with this 107 are left, the peak
	 * RSS the same (32.5 MB). al_model objects are allocated, never defined
	 * const, so the cast to note the count is sound. */
	struct al_model *mm = (struct al_model *)m;
	uint64_t faults;
	bool counted = ali_fault_count(&faults);
	if (counted && mm->trim_counted && faults - mm->trim_faults < TRIM_FAULTS)
		return;
	for (int i = 0; i < m->n_maps; i++)
		if (m->maps[i].base)
			ali_advise_dontneed(m->maps[i].base, m->maps[i].len);
	/* the madvise calls themselves take no faults; counted after them all the same */
	mm->trim_counted = counted && ali_fault_count(&mm->trim_faults);
}

bool ali_model_bytes_read(const struct al_model *m, al_span bytes, uint64_t off, void *buf, size_t n)
{
	if (!m || off > bytes.n || n > bytes.n - off)
		return false;
	/* the map that holds them, when it keeps its file open: pread */
	for (int i = 0; i < m->n_maps; i++)
		if (m->maps[i].s.p == bytes.p && m->maps[i].s.n == bytes.n)
			return ali_map_read(&m->maps[i], off, buf, n);
	memcpy(buf, bytes.p + off, n);
	return true;
}

bool ali_weights_meta(const struct al_model *m, uint64_t offset, uint8_t out[AL_BLOB_META])
{
	return m && m->weights.n && ali_model_bytes_read(m, m->weights, offset, out, AL_BLOB_META);
}

bool ali_model_reserve_nodes(struct al_model *m, size_t n)
{
	if (n > AL_MAX_NODES || m->n_nodes > AL_MAX_NODES - n)
		return false;
	m->n_nodes += n;
	return true;
}

enum al_status ali_model_note_program(struct al_model *m, const struct al_submodel *sub,
				      al_span program)
{
	size_t n = m->n_mil_progs;
	if ((n & (n - 1)) == 0) { /* 0, 1, 2, 4, ...: grow at powers of two */
		struct al_mil_prog *p = ali_arena_array(&m->arena, n ? 2 * n : 1, sizeof *p);
		if (!p)
			return AL_E_NOMEM;
		if (n)
			memcpy(p, m->mil_progs, n * sizeof *p);
		m->mil_progs = p;
	}
	m->mil_progs[n] = (struct al_mil_prog){sub, program};
	m->n_mil_progs = n + 1;
	return AL_OK;
}

bool ali_mil_program_of(const struct al_model *m, const struct al_submodel *sub, al_span *out)
{
	for (size_t i = 0; m && i < m->n_mil_progs; i++)
		if (m->mil_progs[i].sub == sub) {
			*out = m->mil_progs[i].program;
			return true;
		}
	return false;
}

struct al_submodel *ali_model_add_sub(struct al_model *m)
{
	if (m->n_subs == m->cap_subs) {
		size_t cap = m->cap_subs ? m->cap_subs * 2 : 4;
		struct al_submodel **subs = ali_arena_array(&m->arena, cap, sizeof *subs);
		if (!subs)
			return NULL;
		if (m->n_subs)
			memcpy(subs, m->subs, m->n_subs * sizeof *subs);
		m->subs = subs;
		m->cap_subs = cap;
	}
	struct al_submodel *s = ali_arena_alloc(&m->arena, sizeof *s);
	if (s)
		m->subs[m->n_subs++] = s;
	return s;
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

bool ali_node_is_const(const struct al_node *n)
{
	if (n->kind < 0 || !n->type)
		return false;
	/* ML Program graphs carry their function's name, NeuralNetwork ones none:
	 * the owner is one of a few graphs, where the loader's record is one more
	 * cache miss per node (12% of check on a 20 000-op package) */
	if (n->owner)
		return n->owner->function && (ali_mil_kinds[n->kind].flags & AL_OPF_CONST) != 0;
	const struct al_submodel *s = al_src(n) ? al_src(n)->sub : NULL;
	if (s && s->world != AL_WORLD_MIL)
		return false;
	return (ali_mil_kinds[n->kind].flags & AL_OPF_CONST) != 0;
}

static void walk_graph(const struct al_graph *g, al_node_fn fn, void *ctx, int guard)
{
	if (!g || guard > AL_MAX_DEPTH + 1)
		return;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		fn(ctx, n);
		for (uint32_t k = 0; k < n->n_sub; k++)
			walk_graph(n->sub[k], fn, ctx, guard + 1);
	}
}

void ali_walk_nodes(const struct al_submodel *s, al_node_fn fn, void *ctx)
{
	for (uint32_t g = 0; g < s->n_graphs; g++)
		walk_graph(s->graphs[g], fn, ctx, 0);
}

const struct al_graph *ali_node_sub_graph(const struct al_node *n, const char *which)
{
	size_t wl = strlen(which);
	for (uint32_t i = 0; n && i < n->n_sub; i++) {
		const char *b = n->sub[i] ? n->sub[i]->block : NULL;
		size_t bl = b ? strlen(b) : 0;
		if (bl >= wl && strcmp(b + bl - wl, which) == 0 && (bl == wl || b[bl - wl - 1] == '.'))
			return n->sub[i];
	}
	return NULL;
}

bool ali_submodel_is(const struct al_submodel *s, enum al_model_field f)
{
	const char *name = NULL;
	switch (f) {
#define AL_MODEL(nm, field) case AL_MODEL_FIELD_##nm: name = #nm; break;
#include "model_types.def"
#undef AL_MODEL
	}
	return s && s->type && name && strcmp(s->type, name) == 0;
}

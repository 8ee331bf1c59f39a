/* SPDX-License-Identifier: MIT */
/* mil_int.h: what the ML Program walk (mil.c) shares with the value access
 * (mil_value.c): the value-name scopes of a graph, a const's decoded value, and
 * the few readers of a Value message both need. mil_value.c calls nothing of
 * mil.c, so the two objects do not form a circle. */
#ifndef ANELINT_MIL_INT_H
#define ANELINT_MIL_INT_H

#include "model.h"

/* One value name visible in a graph: an op output or a function/block input. */
struct al_mil_ent {
	const char *name;
	const struct al_node *node; /* producer; NULL for an input */
	const struct al_ttype *type;
	uint32_t seq;               /* definition order in the graph (inputs first) */
	uint32_t len;               /* strlen(name), so lookups need no strlen */
	uint64_t hash;              /* ali_hash_bytes of the name's len bytes */
};

/* A hash index over the distinct names of a scope: slot i holds the run
 * [lo, end) of ents with one name (end 0: empty). Probes are bounded
 * (MAX_PROBE): past that a lookup falls back to the binary searches, so names
 * crafted to collide cost no more than without the index. */
struct mil_run {
	uint32_t lo, end;
};
#define MAX_PROBE 32

struct al_mil_scope {
	const struct al_mil_scope *parent; /* the enclosing graph's scope */
	struct al_mil_ent *ents;              /* sorted by (hash, name, seq) */
	uint32_t n;
	struct mil_run *runs; /* NULL: no index (none built, or no memory for it) */
	uint32_t mask;        /* slots - 1, a power of two less one */
};

/* An immediate tensor: which TensorValue member holds it (floats = 1, ints = 2,
 * bools = 3, strings = 4, longInts = 5, doubles = 6, bytes = 7), the
 * Repeated* message, and the declared TensorType. */
struct tval {
	uint32_t field;
	al_span rep;
	int dtype;
	al_span ttype;
};

/* What a parameter is bound to (param_value). */
enum { CV_ABSENT, CV_OPAQUE, CV_BLOB, CV_VALUE };

/* A const op's attributes["val"] as param_value and read_tensor see it,
 * decoded once by parse_op (node_src.mil_cval). */
struct al_mil_cval {
	al_span val;
	int cv;      /* CV_BLOB, CV_VALUE or CV_OPAQUE */
	bool tensor; /* CV_VALUE and tensor_of read it: t holds the result */
	struct tval t;
};

/* Every ML Program graph is allocated as a mil_graph (ali_mil_block_io reads
 * the block interface the view struct has no room for). */
struct mil_graph {
	struct al_graph g;
	struct al_mil_block_io io;
};

/* BlobDataType (MILBlob BlobDataType.hpp) -> MIL DataType, index 1..17. */
extern const int ali_mil_blob_dtype[18];

/* Sorts e[0..n) by (hash, name, seq); false when there is no memory for the copy. */
bool ali_mil_sort_ents(struct al_mil_ent *e, uint32_t n);
/* Builds s->runs over s->ents (sorted); leaves it NULL when the arena has no room. */
void ali_mil_scope_index(struct al_arena *a, struct al_mil_scope *s);
/* The last definition of `name` visible from op n (n's scope, then its parents). */
const struct al_mil_ent *ali_mil_resolve(const struct al_node *n, al_span name);
/* The immediate tensor of a Value message (false when it has none). */
bool ali_mil_tensor_of(al_span val, struct tval *t);
/* attributes[key] of MIL op p (the last map entry wins). */
bool ali_mil_find_attr(const struct al_node *p, const char *key, al_span *val);
/* What a Value message holds: CV_BLOB, CV_VALUE or CV_OPAQUE. */
int ali_mil_value_class(al_span v);
/* Two's complement without an implementation-defined conversion. */
static inline int64_t ali_mil_u2i(uint64_t u)
{
	return u <= INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

#endif

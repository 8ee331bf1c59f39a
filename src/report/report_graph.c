/* SPDX-License-Identifier: MIT */
/* report_graph.c: a planned sub-model as the report sinks draw it. The rows are
 * every layer/op in model order with its index in the plan; the graph is the
 * dataflow between the top-level layers/ops of each function, collapsed so that
 * it stays drawable for models of thousands of layers: ML Program const ops and
 * NeuralNetwork loadConstant layers are left out (they only feed weights) and
 * nested networks and blocks (loop and
 * branch bodies, cond / while_loop blocks) are folded into the layer/op that
 * owns them. An edge joins the latest writer of a name to each reader of it
 * (NeuralNetwork layers may reuse a blob name), so it follows the model order. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* ---- name -> graph node: borrowed strings, found through the one hash table */
struct name_map {
	struct ali_hashtab t; /* items index key / val */
	const char **key;     /* the names put since the last clear, in order */
	uint32_t *val;
	size_t n, cap;        /* cap: the names the map has room for */
};

static bool map_init(struct name_map *m, size_t names)
{
	m->cap = names;
	m->key = ali_calloc(names ? names : 1, sizeof *m->key);
	m->val = ali_calloc(names ? names : 1, sizeof *m->val);
	return m->key && m->val && ali_hashtab_reserve(&m->t, names);
}

static void map_clear(struct name_map *m)
{
	ali_hashtab_clear(&m->t);
	m->n = 0;
}

static void map_free(struct name_map *m)
{
	ali_hashtab_free(&m->t);
	ali_free(m->key);
	ali_free(m->val);
}

static void map_put(struct name_map *m, const char *k, uint32_t v)
{
	if (!k || !*k)
		return;
	uint64_t h = ali_hash_str(k);
	size_t i = ali_hashtab_find(&m->t, h, ali_hashtab_name_eq, k, (void *)m->key);
	if (i != SIZE_MAX) {
		m->val[i] = v;
		return;
	}
	if (m->n == m->cap || !ali_hashtab_add(&m->t, h, m->n)) /* room reserved: cannot fail */
		return;
	m->key[m->n] = k;
	m->val[m->n++] = v;
}

static bool map_get(const struct name_map *m, const char *k, uint32_t *v)
{
	if (!k || !*k)
		return false;
	size_t i = ali_hashtab_find(&m->t, ali_hash_str(k), ali_hashtab_name_eq, k, (void *)m->key);
	if (i == SIZE_MAX)
		return false;
	*v = m->val[i];
	return true;
}

/* ---- rows */
struct collect {
	struct al_row *rows;
	uint32_t n, cap;
	size_t names;
	const struct al_view *v;
};

static void collect_row(void *vctx, const struct al_node *n)
{
	struct collect *c = vctx;
	if (c->n < c->cap) {
		c->rows[c->n] = (struct al_row){.node = n, .verdict = ali_view_verdict(c->v, n), .index = c->n,
						.plan = -1, .dag = -1};
		c->names += n->n_outputs;
	}
	c->n++;
}

static void count_row(void *vctx, const struct al_node *n)
{
	(void)n;
	(*(uint32_t *)vctx)++;
}

/* The top-level graph a node is in, and the top-level node it is nested in. */
static const struct al_node *top_node(const struct al_node *n)
{
	for (int guard = 0; n && n->owner && n->owner->parent_node && guard <= AL_MAX_DEPTH + 1; guard++)
		n = n->owner->parent_node;
	return n;
}

/* mark[from] == to + 1: that edge is in already (a reader of many names of one writer) */
/* A NeuralNetwork layer that only holds a constant: drawn as little as a MIL const op */
static bool constant_layer(const struct al_node *n)
{
	if (n->n_inputs != 0 || n->n_sub || !n->type)
		return false;
	bool nn_layer = n->kind >= 0 && n->owner && !n->owner->function; /* its kind is the NN table's */
	int k = nn_layer ? n->kind : ali_nn_kind_by_name(n->type);
	return k == AL_NNK_loadConstant || k == AL_NNK_loadConstantND;
}

static bool add_edge(struct al_dag *g, uint32_t *cap, uint32_t *mark, uint32_t from, uint32_t to)
{
	if (from == to || mark[from] == to + 1)
		return true;
	mark[from] = to + 1;
	if (g->n_edges == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 64;
		struct al_edge *v = ali_realloc(g->edges, (size_t)nc * sizeof *v);
		if (!v)
			return false;
		g->edges = v;
		*cap = nc;
	}
	g->edges[g->n_edges++] = (struct al_edge){from, to};
	return true;
}

static int cmp_ref(const void *a, const void *b)
{
	uintptr_t x = ((const struct al_row_ref *)a)->node, y = ((const struct al_row_ref *)b)->node;
	return x < y ? -1 : x > y;
}

long ali_dag_row_of(const struct al_dag *g, const struct al_node *n)
{
	if (!n || !g->by_node)
		return -1;
	struct al_row_ref key = {(uintptr_t)n, 0};
	const struct al_row_ref *hit = bsearch(&key, g->by_node, g->n_rows, sizeof key, cmp_ref);
	return hit ? (long)hit->row : -1;
}

bool ali_dag_build(const struct al_view *v, struct al_dag *g)
{
	const struct al_submodel *s = v->s;
	const struct al_plan *p = v->plan;
	memset(g, 0, sizeof *g);
	uint32_t total = 0;
	ali_walk_nodes(s, count_row, &total);
	struct collect c = {.cap = total, .v = v};
	c.rows = ali_calloc(total ? total : 1, sizeof *c.rows);
	g->top = ali_calloc(total ? total : 1, sizeof *g->top);
	g->nested = ali_calloc(total ? total : 1, sizeof *g->nested);
	uint32_t *mark = ali_calloc(total ? total : 1, sizeof *mark);
	struct name_map map = {0};
	if (!c.rows || !g->top || !g->nested || !mark)
		goto fail;
	ali_walk_nodes(s, collect_row, &c);
	g->rows = c.rows;
	g->n_rows = total;
	if (!map_init(&map, c.names))
		goto fail;
	if (p)
		for (uint32_t k = 0; k < p->n_nodes; k++)
			if (p->index[k] < total && p->nodes[k] == g->rows[p->index[k]].node)
				g->rows[p->index[k]].plan = (int32_t)k;
	uint32_t cap = 0;
	const struct al_graph *graph = NULL;
	for (uint32_t r = 0; r < total; r++) {
		struct al_row *row = &g->rows[r];
		const struct al_node *n = row->node;
		if (ali_node_is_const(n)) {
			g->n_consts++;
			continue;
		}
		const struct al_node *top = top_node(n);
		if (top == n && constant_layer(n)) {
			g->n_hidden++;
			continue;
		}
		if (top == n) {
			if (top->owner != graph) { /* a new function: names start afresh */
				graph = top->owner;
				map_clear(&map);
			}
			row->dag = (int32_t)g->n;
			g->top[g->n++] = r;
		} else if (g->n && g->rows[g->top[g->n - 1]].node == top) {
			row->dag = (int32_t)(g->n - 1);
			g->nested[g->n - 1]++;
		} else {
			continue; /* nested in a const op: not drawn */
		}
		uint32_t to = (uint32_t)row->dag, from;
		for (uint32_t i = 0; i < n->n_inputs; i++)
			if (map_get(&map, n->inputs[i], &from) && !add_edge(g, &cap, mark, from, to))
				goto fail;
		for (uint32_t i = 0; i < n->n_outputs; i++)
			map_put(&map, n->outputs[i], to);
	}
	map_free(&map);
	ali_free(mark);
	g->by_node = ali_calloc(total ? total : 1, sizeof *g->by_node);
	if (!g->by_node) {
		ali_dag_free(g);
		return false;
	}
	for (uint32_t r = 0; r < total; r++)
		g->by_node[r] = (struct al_row_ref){(uintptr_t)g->rows[r].node, r};
	qsort(g->by_node, total, sizeof *g->by_node, cmp_ref);
	return true;
fail:
	map_free(&map);
	ali_free(mark);
	ali_free(c.rows);
	g->rows = NULL;
	ali_dag_free(g);
	return false;
}

void ali_dag_free(struct al_dag *g)
{
	ali_free(g->rows);
	ali_free(g->top);
	ali_free(g->nested);
	ali_free(g->edges);
	ali_free(g->by_node);
	memset(g, 0, sizeof *g);
}

enum al_unit ali_row_unit(const struct al_row *r, const struct al_plan *p)
{
	if (p && r->plan >= 0 && (uint32_t)r->plan < p->n_nodes)
		return p->unit[r->plan];
	return r->verdict->ane ? AL_UNIT_ANE : r->verdict->unit;
}

bool ali_row_moved(const struct al_row *r, const struct al_plan *p)
{
	if (!p || r->plan < 0 || (uint32_t)r->plan >= p->n_nodes)
		return false;
	enum al_place pl = p->place[r->plan];
	return p->unit[r->plan] != AL_UNIT_ANE && pl != AL_PLACE_VERDICT && pl != AL_PLACE_RESOLVED;
}

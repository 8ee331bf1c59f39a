/* SPDX-License-Identifier: MIT */
/* fuzz_config.c: libFuzzer harness for the project configuration (anelint.toml,
 * src/report/config.c). The input is the text of a configuration file, parsed
 * from memory with ali_config_parse. Promises checked:
 *   - the status is AL_OK exactly when a configuration came back, and exactly
 *     when no error diagnostic was added; a refused file has at least one error,
 *     every one a single line naming the file (and a line and a column);
 *   - every entry has a key, a line within the file, a value of a known type;
 *     strings and array items are NUL-terminated and at most 4096 bytes; an
 *     entry of a [[table]] has a table name;
 *   - no two entries of one table element share a key. */
#include "anelint.h"
#include "report.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(c)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

/* every diagnostic: a known severity, one line, naming the file (errors: a line and column) */
static void check_diags(const al_diags *d)
{
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const struct al_diag *x = al_diags_get(d, i);
		FUZZ_CHECK(x != NULL && x->msg != NULL);
		FUZZ_CHECK(x->severity == AL_SEV_NOTE || x->severity == AL_SEV_WARNING || x->severity == AL_SEV_ERROR);
		FUZZ_CHECK(!strchr(x->msg, '\n') && !strchr(x->msg, '\r'));
		FUZZ_CHECK(x->file && strcmp(x->file, "fuzz.toml") == 0);
		if (x->severity == AL_SEV_ERROR && x->offset != UINT64_MAX)
			FUZZ_CHECK(x->where && strncmp(x->where, "line ", 5) == 0);
	}
}

/* The guard-page test mode (fuzz_common.h fuzz_guard_maps): the text is parsed
 * from a copy that ends right before a PROT_NONE page. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("ANELINT_GUARD_MAPS", "1", 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	struct ali_config *c = NULL;
	enum al_status st = ali_config_parse((const char *)data, size, "fuzz.toml", &c, d);
	check_diags(d);
	bool error = false;
	for (size_t i = 0; i < al_diags_count(d); i++)
		if (al_diags_get(d, i)->severity == AL_SEV_ERROR)
			error = true;
	if (st == AL_OK) {
		FUZZ_CHECK(c != NULL && !error);
		uint32_t lines = 1;
		for (size_t i = 0; i < size; i++)
			lines += data[i] == '\n';
		for (size_t i = 0; i < c->n; i++) {
			const struct ali_cfg_entry *e = &c->e[i];
			FUZZ_CHECK(e->key != NULL && e->line >= 1 && e->line <= lines);
			FUZZ_CHECK(!e->array_table || e->table != NULL);
			FUZZ_CHECK(e->v.type == AL_CFG_STRING || e->v.type == AL_CFG_BOOL || e->v.type == AL_CFG_INT ||
				   e->v.type == AL_CFG_ARRAY);
			if (e->v.type == AL_CFG_STRING)
				FUZZ_CHECK(e->v.s != NULL && strlen(e->v.s) <= 4096);
			for (size_t k = 0; k < e->v.n_items; k++)
				FUZZ_CHECK(e->v.items[k] != NULL && strlen(e->v.items[k]) <= 4096);
			for (size_t j = 0; j < i; j++) {
				const struct ali_cfg_entry *f = &c->e[j];
				bool same_table = (e->table == NULL) == (f->table == NULL) &&
						  (!e->table || strcmp(e->table, f->table) == 0) && e->index == f->index;
				FUZZ_CHECK(!(same_table && strcmp(e->key, f->key) == 0));
			}
		}
	} else {
		FUZZ_CHECK(c == NULL);
		FUZZ_CHECK(error || st == AL_E_NOMEM);
	}
	ali_config_free(c);
	al_diags_free(d);
	return 0;
}

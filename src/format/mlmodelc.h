/* SPDX-License-Identifier: MIT */
/* mlmodelc.h: compiled model directories (.mlmodelc): the loader
 * (mlmodelc.c) and the espresso NeuralNetwork reader (espresso.c). */
#ifndef ANELINT_MLMODELC_H
#define ANELINT_MLMODELC_H

#include "model.h"
#include "pbsplice.h"

#include <limits.h>

struct json_object;

/* Open a compiled model directory into m (al_model_open calls it for a
 * directory with coremldata.bin and no Manifest.json). */
enum al_status ali_load_compiled(struct al_model *m, const char *dir, al_diags *d);

/* One file of the directory: `rel` below `dir`, refused when it resolves
 * outside; present false (AL_OK) when absent. Unmap f->map when done. */
struct al_mlmodelc_file {
	struct al_map map;
	const char *shown;
	bool present;
};
enum al_status ali_mlmodelc_locate(struct al_model *m, const char *dir, const char *dir_real,
				   const char *rel, char out[PATH_MAX], const char **shown, bool *present,
				   al_diags *d);
enum al_status ali_mlmodelc_map(struct al_mlmodelc_file *f, struct al_model *m, const char *dir,
				const char *rel, al_diags *d);
/* The same, keeping the file open for ali_map_read (weight.bin: ali_map_file_open). */
enum al_status ali_mlmodelc_map_open(struct al_mlmodelc_file *f, struct al_model *m, const char *dir,
				     const char *rel, al_diags *d);
/* Parse a JSON document (bounded size and depth); NULL with an error in d. */
struct json_object *ali_json_read(al_span s, const char *shown, al_diags *d);

/* The NeuralNetwork message (NeuralNetwork / ...Classifier / ...Regressor
 * fields: layers = 1, arrayInputShapeMapping = 5) of the espresso files in
 * dir/rel (model.espresso.net, .weights). Espresso layer types with no known
 * NeuralNetwork kind get a private field number (AL_ESPRESSO_FIELD + i); spec
 * is the stage's specification version. */
#define AL_ESPRESSO_FIELD 400000000u
#define AL_ESPRESSO_MAX_TYPES AL_ESPRESSO_TYPES
enum al_status ali_espresso_build(struct al_model *m, const char *dir, const char *rel,
				  uint32_t spec, struct al_buf *out, al_diags *d);
/* After the Model walk: name the espresso layers of unknown kind by their
 * espresso type, copy the walk's diagnostics from tmp to d (without its
 * warnings about those private field numbers), set the weight statistics. */
void ali_espresso_finish(struct al_model *m, const al_diags *tmp, al_diags *d);

/* Why the interpreter cannot run compiled model m (an espresso NeuralNetwork:
 * its weights are not attached), or NULL. `run`, `verify` and `fp16` ask. */
const char *ali_compiled_unrunnable(const struct al_model *m);

#endif

/* SPDX-License-Identifier: MIT */
/* miltext.h: the MIL text syntax (a compiled model's model.mil, Xcode's
 * analytics.mil) read into and written from the ML Program protobuf.
 *
 * The reader turns the text into a MILSpec.Program message (MIL.proto field
 * numbers) which the protobuf walker (mil.c) then loads: a program read from
 * text and one read from a .mlpackage give the same model IR, op attributes
 * that anelint does not use (SelectedBackend, ...) included. BLOBFILE values
 * stay references (file name + offset); no weight is read or copied.
 *
 * The writer prints a Program message in the same syntax (miltext_write.c).
 */
#ifndef ANELINT_MILTEXT_H
#define ANELINT_MILTEXT_H

#include "model.h"
#include "pbsplice.h"

/* Limits of the text reader. */
#define AL_MILTEXT_MAX_BYTES ((size_t)1 << 30) /* text larger than this is refused */
#define AL_MILTEXT_MAX_NEST 64                 /* nesting of types, values, blocks */

/* Parse MIL text `text` (named `name` in diagnostics) into a serialized
 * MILSpec.Program message appended to *out. Errors are one diagnostic naming
 * `name`, the byte offset and "line L, column C"; AL_E_FORMAT then (AL_E_NOMEM
 * when out of memory). Nothing in `text` is modified or kept. */
enum al_status ali_mil_text_parse(al_span text, const char *name, struct al_buf *out, al_diags *d);

/* Parse MIL text into sub of m (an mlProgram sub-model): ali_mil_text_parse,
 * then the protobuf walker (ali_load_mil_program). The Program message lives in
 * m's arena. */
enum al_status ali_load_mil_text(struct al_model *m, struct al_submodel *sub, al_span text,
				 const char *file, al_diags *d);

/* Print a serialized MILSpec.Program message as MIL text onto *out. False when
 * the message is malformed (a partial text may have been written). */
bool ali_mil_text_write(al_span program, struct al_buf *out);


#endif

/* SPDX-License-Identifier: MIT */
/* pbsplice.h: rewrite parts of a serialized protobuf message in place of the
 * original bytes, and a small wire writer for the new parts.
 *
 * A splice is a list of edits on one root message (a .mlmodel file): replace
 * bytes [at, at + len) of some enclosing message's payload with new bytes,
 * insert a whole field before a sub-message's field, or delete one. Finishing
 * recomputes the length prefix of every length-delimited field that encloses an
 * edit, up to the root (Model -> neuralNetwork -> layers[i] -> params), and the
 * output copies every other byte verbatim: unknown fields, non-minimal varints
 * and field order survive, and a splice with no edits is the input itself.
 *
 * Enclosing fields are found by walking the wire format from the root towards
 * the edited span (no schema needed); every length is bounded by the bytes
 * present. Spans passed in must point into the root buffer.
 */
#ifndef ANELINT_PBSPLICE_H
#define ANELINT_PBSPLICE_H

#include "anelint.h"
#include "base.h"
#include "pb.h"

/* ------------------------------------------------------------------ writer
 * Protobuf fields appended to an al_buf (base.h: the buffer, ali_buf_put,
 * ali_buf_printf). */
void ali_buf_varint(struct al_buf *b, uint64_t v);
void ali_buf_tag(struct al_buf *b, uint32_t field, enum pb_wire w);
void ali_buf_len(struct al_buf *b, uint32_t field, const void *p, size_t n); /* tag, length, bytes */
void ali_buf_str(struct al_buf *b, uint32_t field, const char *s);
void ali_buf_uint(struct al_buf *b, uint32_t field, uint64_t v);           /* varint field */
void ali_buf_float(struct al_buf *b, uint32_t field, float v);             /* fixed32 field */
void ali_buf_packed(struct al_buf *b, uint32_t field, const uint64_t *v, size_t n); /* packed varints */
size_t ali_varint_size(uint64_t v);

/* ------------------------------------------------------------------ splice */
struct al_splice;
struct al_splice *ali_splice_new(al_span root);
void ali_splice_free(struct al_splice *s);
/* Replace [at, at + len) (at a pointer into parent) with n bytes (copied);
 * parent is the payload of a length-delimited field in root, or root itself.
 * len 0 inserts. AL_E_INVALID_ARG when parent is not an enclosing message of
 * root or the range leaves it. */
enum al_status ali_splice_replace(struct al_splice *s, al_span parent, const uint8_t *at, size_t len,
				 const void *bytes, size_t n);
/* Insert n bytes (whole fields) just before the field whose payload is msg. */
enum al_status ali_splice_insert_before(struct al_splice *s, al_span msg, const void *bytes, size_t n);
/* Delete the whole field (tag, length, payload) whose payload is msg. */
enum al_status ali_splice_delete(struct al_splice *s, al_span msg);
/* Resolve lengths; AL_E_INVALID_ARG when edits overlap. Then the output size. */
enum al_status ali_splice_finish(struct al_splice *s, size_t *out_size);
/* The output into a new buffer (ali_free it) or onto fd. in_fd >= 0: the root
 * as a readable file (root.p = its first byte), copied in the kernel
 * (ali_copy_file_range) where the system can; else written from memory. */
enum al_status ali_splice_to_buffer(struct al_splice *s, uint8_t **out, size_t *n);
enum al_status ali_splice_to_fd(struct al_splice *s, int in_fd, int out_fd);

#endif

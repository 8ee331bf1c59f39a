/* SPDX-License-Identifier: MIT */
/* mil_blobs.h: every blob reference of an ML Program, found in its wire bytes
 * (each Value's blobFileValue wherever MIL.proto allows a Value: program,
 * function, block and op attributes, op input bindings, nested blocks, and the
 * tuples, lists and dictionaries of immediate values), in every function and
 * every block specialization, not only the ones the loader reads. The package
 * writer uses it to drop the blobs nothing refers to any more (compaction). */
#ifndef ANELINT_MIL_BLOBS_H
#define ANELINT_MIL_BLOBS_H

#include "pb.h"

struct ali_blob_ref {
	al_span bfv;            /* the BlobFileValue message's payload */
	al_span file;           /* its fileName */
	uint64_t offset;        /* its offset: where the blob_metadata record is */
	const uint8_t *off_at;  /* the offset field's varint bytes, inside bfv */
	size_t off_len;
};

/* Called once per reference, in file order; false stops the walk. */
typedef bool (*ali_blob_ref_fn)(void *ctx, const struct ali_blob_ref *r);

/* Walk program (an mlProgram message). AL_OK; AL_E_FORMAT when the bytes are
 * not wire format where a message is expected, a BlobFileValue has not exactly
 * one fileName and one offset, or blocks / values nest deeper than the loader
 * allows (so that no reference is missed: a caller must not drop blobs then);
 * AL_E_NOMEM when fn returned false. */
enum al_status ali_mil_blob_refs(al_span program, ali_blob_ref_fn fn, void *ctx);

/* The payload of a Model message's mlProgram field (502); false when none or
 * the bytes are not wire format. */
bool ali_model_program(al_span model, al_span *program);

#endif

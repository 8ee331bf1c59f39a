/* SPDX-License-Identifier: MIT */
/* mil_blobs.c: the blob references of an ML Program (mil_blobs.h).
 *
 * MIL.proto, the fields walked (map entries: key 1, value 2):
 *   Program:   functions 2 (map -> Function), attributes 4 (map -> Value)
 *   Function:  block_specializations 3 (map -> Block), attributes 4
 *   Block:     operations 3 (Operation), attributes 4
 *   Operation: inputs 2 (map -> Argument), blocks 4 (Block), attributes 5
 *   Argument:  arguments 1 (Binding: name 1, value 2 -> Value)
 *   Value:     immediateValue 3, blobFileValue 5 {fileName 1, offset 2}
 *   ImmediateValue: tuple 2 / list 3 {values 1 -> Value},
 *                   dictionary 4 {values 1 -> {key 1, value 2: Values}}
 * Every field of those numbers is visited (a repeated map key included), so
 * the walk finds at least every reference a reader honours.
 */
#include "mil_blobs.h"

#include <string.h>

/* Nesting of messages, counted from the Program: protobuf's own parser
 * refuses deeper messages (its recursion limit, 100), so no reader sees a
 * reference below it. */
#define MAX_NEST 100

enum { MSG_PROGRAM, MSG_FUNCTION, MSG_BLOCK, MSG_OP, MSG_ARG, MSG_BINDING, MSG_VALUE, MSG_IMM, MSG_LIST,
       MSG_DICT, MSG_PAIR, MSG_MAP_FUNCTION, MSG_MAP_BLOCK, MSG_MAP_VALUE, MSG_MAP_ARG, MSG_NONE };

/* What field `num` of a message of kind `kind` holds (MSG_NONE: nothing walked). */
static int child_kind(int kind, uint32_t num)
{
	static const struct {
		int kind;
		uint32_t num;
		int child;
	} table[] = {
		{MSG_PROGRAM, 2, MSG_MAP_FUNCTION}, {MSG_PROGRAM, 4, MSG_MAP_VALUE},
		{MSG_FUNCTION, 3, MSG_MAP_BLOCK},   {MSG_FUNCTION, 4, MSG_MAP_VALUE},
		{MSG_BLOCK, 3, MSG_OP},             {MSG_BLOCK, 4, MSG_MAP_VALUE},
		{MSG_OP, 2, MSG_MAP_ARG},           {MSG_OP, 4, MSG_BLOCK},
		{MSG_OP, 5, MSG_MAP_VALUE},         {MSG_ARG, 1, MSG_BINDING},
		{MSG_BINDING, 2, MSG_VALUE},        {MSG_VALUE, 3, MSG_IMM},
		{MSG_IMM, 2, MSG_LIST},             {MSG_IMM, 3, MSG_LIST},
		{MSG_IMM, 4, MSG_DICT},             {MSG_LIST, 1, MSG_VALUE},
		{MSG_DICT, 1, MSG_PAIR},            {MSG_PAIR, 1, MSG_VALUE},
		{MSG_PAIR, 2, MSG_VALUE},           {MSG_MAP_FUNCTION, 2, MSG_FUNCTION},
		{MSG_MAP_BLOCK, 2, MSG_BLOCK},      {MSG_MAP_VALUE, 2, MSG_VALUE},
		{MSG_MAP_ARG, 2, MSG_ARG},
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].kind == kind && table[i].num == num)
			return table[i].child;
	return MSG_NONE;
}

/* A BlobFileValue: exactly one fileName and one offset. */
static enum al_status blob_file_value(al_span bfv, ali_blob_ref_fn fn, void *ctx)
{
	struct ali_blob_ref r = {.bfv = bfv};
	struct pb_iter it;
	struct pb_field f;
	size_t n_file = 0, n_off = 0;
	pb_iter_init(&it, bfv);
	while (pb_next(&it, &f)) {
		if (f.num == 1) {
			n_file++;
			r.file = f.data;
			if (f.wire != PB_LEN)
				return AL_E_FORMAT;
		} else if (f.num == 2) {
			n_off++;
			if (f.wire != PB_VARINT)
				return AL_E_FORMAT;
			size_t pos = f.start;
			uint64_t tag;
			if (pb_varint(bfv.p, bfv.n, &pos, &tag) != PB_OK || pos > it.pos)
				return AL_E_FORMAT;
			r.offset = f.u;
			r.off_at = bfv.p + pos; /* the varint after the tag, however long either is */
			r.off_len = it.pos - pos;
		}
	}
	if (it.err || n_file != 1 || n_off != 1)
		return AL_E_FORMAT;
	return fn(ctx, &r) ? AL_OK : AL_E_NOMEM;
}

static enum al_status walk(al_span msg, int kind, int depth, ali_blob_ref_fn fn, void *ctx)
{
	if (depth > MAX_NEST)
		return AL_E_FORMAT;
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (kind == MSG_VALUE && f.num == 5) {
			enum al_status st = f.wire == PB_LEN ? blob_file_value(f.data, fn, ctx) : AL_E_FORMAT;
			if (st != AL_OK)
				return st;
			continue;
		}
		int child = child_kind(kind, f.num);
		if (child == MSG_NONE)
			continue;
		if (f.wire != PB_LEN)
			return AL_E_FORMAT; /* a message field that is not one: not what a reader parses */
		enum al_status st = walk(f.data, child, depth + 1, fn, ctx);
		if (st != AL_OK)
			return st;
	}
	return it.err ? AL_E_FORMAT : AL_OK;
}

enum al_status ali_mil_blob_refs(al_span program, ali_blob_ref_fn fn, void *ctx)
{
	if (!fn || (!program.p && program.n))
		return AL_E_INVALID_ARG;
	return walk(program, MSG_PROGRAM, 0, fn, ctx);
}

bool ali_model_program(al_span model, al_span *program)
{
	struct pb_iter it;
	struct pb_field f;
	size_t found = 0;
	bool len = false;
	pb_iter_init(&it, model);
	while (pb_next(&it, &f))
		if (f.num == 502) {
			*program = f.data;
			len = f.wire == PB_LEN;
			found++;
		}
	/* two would be merged by a reader: not one message to walk */
	return found == 1 && len && !it.err;
}

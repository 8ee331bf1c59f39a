/* SPDX-License-Identifier: MIT */
/* hash.c: the one string hash of the library (FNV-1a, 64 bit). Every table
 * keyed by a name (shape scopes, executor environments, last uses, split and
 * plan name maps, report graphs) and the per-input random seeds use it; a
 * table that keys on pointers hashes the address instead (interp_mil.c). */
#include "base.h"

uint64_t ali_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * UINT64_C(1099511628211);
	return h;
}

uint64_t ali_hash_str(const char *s)
{
	uint64_t h = AL_HASH_INIT;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return h;
}

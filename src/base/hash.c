/* SPDX-License-Identifier: MIT */
/* hash.c: the one string hash of the library (FNV-1a, 64 bit). Every table
 * keyed by a name (shape scopes, executor environments, last uses, split and
 * plan name maps, report graphs: ali_hashtab, hashtab.c) and the per-input
 * random seeds use it; the constant cache, keyed by node addresses, gives
 * ali_hashtab the address itself (interp_mil_cache.c). */
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

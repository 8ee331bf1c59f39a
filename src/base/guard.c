/* SPDX-License-Identifier: MIT */
/* guard.c: the registry of live file mappings, so that a fault on one can be told
 * apart from a bug. A mapped model file that another process truncates turns every
 * later read of the lost pages into SIGBUS; a handler (the CLI's, or a library
 * user's: include/anelint.h al_mapped_file_at) asks here whether the faulting
 * address lies in a mapping of ours and, if so, which file it was.
 *
 * The lookup runs inside a signal handler, on any thread: no locks and no
 * allocation, only lock-free atomics over a fixed table. ali_map_file adds a
 * mapping, ali_unmap removes it; a process with more than AL_GUARD_SLOTS mappings
 * live at once leaves the extra ones unregistered (a fault there stays a fault). */
#include "base.h"

#include <stdatomic.h>
#include <string.h>

#define AL_GUARD_SLOTS 64
#define AL_GUARD_NAME 256
#define SLOT_BUSY ((uintptr_t)1) /* being filled or emptied: not a mapping */

static struct slot {
	_Atomic uintptr_t base; /* 0: free; SLOT_BUSY: being written */
	_Atomic size_t len;
	char name[AL_GUARD_NAME];
} slots[AL_GUARD_SLOTS];

void ali_guard_add(const void *base, size_t len, const char *name)
{
	if (!base || !len)
		return;
	for (size_t i = 0; i < AL_GUARD_SLOTS; i++) {
		uintptr_t expect = 0;
		if (!atomic_compare_exchange_strong(&slots[i].base, &expect, SLOT_BUSY))
			continue;
		struct slot *s = &slots[i];
		size_t k = 0;
		/* the name goes to a terminal from a signal handler: no control bytes */
		for (; name && name[k] && k + 1 < AL_GUARD_NAME; k++)
			s->name[k] = (unsigned char)name[k] < 0x20 || name[k] == 0x7f ? '?' : name[k];
		s->name[k] = '\0';
		atomic_store(&s->len, len);
		atomic_store(&s->base, (uintptr_t)base);
		return;
	}
}

void ali_guard_remove(const void *base)
{
	if (!base)
		return;
	for (size_t i = 0; i < AL_GUARD_SLOTS; i++) {
		uintptr_t expect = (uintptr_t)base;
		if (atomic_compare_exchange_strong(&slots[i].base, &expect, SLOT_BUSY)) {
			atomic_store(&slots[i].len, 0);
			atomic_store(&slots[i].base, 0);
			return;
		}
	}
}

const char *al_mapped_file_at(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	for (size_t i = 0; i < AL_GUARD_SLOTS; i++) {
		uintptr_t b = atomic_load(&slots[i].base);
		if (b <= SLOT_BUSY)
			continue;
		size_t len = atomic_load(&slots[i].len);
		if (a >= b && a - b < len)
			return slots[i].name;
	}
	return NULL;
}

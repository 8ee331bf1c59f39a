/* SPDX-License-Identifier: MIT */
/* file.c: opening files for reading, and read-only mappings of whole files.
 * Every file anelint reads (model, Manifest, weights, .npy, rules file, the
 * source of a copy) is opened by ali_open_regular, which refuses what is not a
 * regular file: a FIFO or a device must not hang a run. ali_map_file maps what
 * it opened. */
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ================================================================ files */

enum al_status ali_open_regular(const char *path, const char *shown, int *fd_out, struct stat *st_out,
			       al_diags *d)
{
	*fd_out = -1;
	const char *name = shown ? shown : path;
	/* O_NONBLOCK: opening a FIFO (no writer) or a device must not block; it
	 * is refused below, and cleared again for a regular file. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "cannot open: %s",
			    strerror(errno));
		return AL_E_IO;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "not a regular file");
		close(fd);
		return AL_E_IO;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "cannot open: %s",
			    strerror(errno));
		close(fd);
		return AL_E_IO;
	}
	if (st_out)
		*st_out = st;
	*fd_out = fd;
	return AL_OK;
}

enum al_status ali_map_file(const char *path, const char *shown, struct al_map *m, al_diags *d)
{
	memset(m, 0, sizeof *m);
	const char *name = shown ? shown : path;
	int fd;
	struct stat st;
	enum al_status rc = ali_open_regular(path, shown, &fd, &st, d);
	if (rc != AL_OK)
		return rc;
	if (st.st_size > 0) {
		if ((uint64_t)st.st_size > SIZE_MAX) {
			close(fd);
			ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "file too large");
			return AL_E_IO;
		}
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "cannot map: %s",
				    strerror(errno));
			close(fd);
			return AL_E_IO;
		}
		/* Analysis touches layer headers scattered between weights; readahead
		 * would pull the weights in. Measured on a generated 495 MB model (bench/):
		 * a cold check took 376 ms with default readahead, ~10 ms with MADV_RANDOM.
		 * A stage that streams every weight (the interpreter) re-advises. */
		ali_advise_random(p, (size_t)st.st_size);
		ali_guard_add(p, (size_t)st.st_size, name);
		m->base = p;
		m->len = (size_t)st.st_size;
		m->s.p = p;
		m->s.n = m->len;
	}
	close(fd);
	return AL_OK;
}

void ali_unmap(struct al_map *m)
{
	ali_guard_remove(m->base);
	if (m->base)
		munmap(m->base, m->len);
	memset(m, 0, sizeof *m);
}

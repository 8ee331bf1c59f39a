/* file.c: read-only mappings of whole files. Every model, Manifest and weight
 * file the library reads goes through al_map_file, which refuses what is not a
 * regular file (a FIFO or a device must not hang a run). */
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ================================================================ files */

enum al_status al_map_file(const char *path, const char *shown, struct al_map *m, al_diags *d)
{
	memset(m, 0, sizeof *m);
	const char *name = shown ? shown : path;
	/* O_NONBLOCK: opening a FIFO or device must not hang; it is refused below */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		al_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "cannot open: %s",
			    strerror(errno));
		return AL_E_IO;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		al_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "not a regular file");
		close(fd);
		return AL_E_IO;
	}
	if (st.st_size > 0) {
		if ((uint64_t)st.st_size > SIZE_MAX) {
			close(fd);
			al_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "file too large");
			return AL_E_IO;
		}
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			al_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "cannot map: %s",
				    strerror(errno));
			close(fd);
			return AL_E_IO;
		}
		/* Analysis touches layer headers scattered between weights; readahead
		 * would pull the weights in. Measured on a generated 495 MB model (bench/):
		 * a cold check took 376 ms with default readahead, ~10 ms with MADV_RANDOM.
		 * A stage that streams every weight (the interpreter) re-advises. */
		(void)madvise(p, (size_t)st.st_size, MADV_RANDOM);
		al_guard_add(p, (size_t)st.st_size, name);
		m->base = p;
		m->len = (size_t)st.st_size;
		m->s.p = p;
		m->s.n = m->len;
	}
	close(fd);
	return AL_OK;
}

void al_unmap(struct al_map *m)
{
	al_guard_remove(m->base);
	if (m->base)
		munmap(m->base, m->len);
	memset(m, 0, sizeof *m);
}

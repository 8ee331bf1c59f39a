/* SPDX-License-Identifier: MIT */
/* exec_fail.c: ali_exec_fail, how every part of a run (the tensor allocator, the
 * executors, the driver) reports a failed op: the status is remembered for the
 * run and a diagnostic names the op. It sits below tensor.c and exec.c, which
 * both report through it. */
#include "interp.h"

#include <stdarg.h>
#include <stdio.h>

enum al_status ali_exec_fail(struct al_exec *x, const struct al_node *n, enum al_status status,
			    const char *fmt, ...)
{
	if (x)
		x->last_fail = status;
	if (!x || !x->d)
		return status;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ali_diag_add(x->d, AL_SEV_ERROR, x->sub ? x->sub->file : NULL,
		    n ? n->offset : UINT64_MAX, n ? n->path : NULL, n ? n->name : NULL, "run: %s",
		    msg);
	return status;
}

/* SPDX-License-Identifier: MIT */
/* ci_msg.c: the messages of the configuration and the gate: kept as the lines
 * a tool shows on stderr (every name from a file or an argument escaped and
 * cut, as al_put_escaped does), handed over by al_ci_messages. */
#include "ci_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define MSG_STREAM(ci) ((ci) ? (ci)->msg : NULL)

void ali_cmd_put(const struct al_ci *ci, const char *s, size_t max)
{
	if (MSG_STREAM(ci))
		al_put_escaped(ci->msg, s, max);
}

void ali_cmd_puts(const struct al_ci *ci, const char *s)
{
	if (MSG_STREAM(ci))
		fputs(s, ci->msg);
}

void ali_cmd_printf(const struct al_ci *ci, const char *fmt, ...)
{
	va_list ap;
	if (!MSG_STREAM(ci))
		return;
	va_start(ap, fmt);
	vfprintf(ci->msg, fmt, ap);
	va_end(ap);
}

/* "anelint: error: SUBJECT: MESSAGE" */
void ali_cmd_error_at(const struct al_ci *ci, const char *subject, const char *fmt, ...)
{
	va_list ap;
	if (!MSG_STREAM(ci))
		return;
	fputs("anelint: error: ", ci->msg);
	al_put_escaped(ci->msg, subject, SHOWN_NAME_MAX);
	fputs(": ", ci->msg);
	va_start(ap, fmt);
	vfprintf(ci->msg, fmt, ap);
	va_end(ap);
	fputs("\n", ci->msg);
}

/* The errors of d, one line each: "anelint: error: FILE: offset N: WHERE (NODE): MESSAGE"
 * (the CLI's form of a library diagnostic). */
void ali_cmd_diags(const struct al_ci *ci, const char *path, const al_diags *d)
{
	bool any = false;
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const struct al_diag *x = al_diags_get(d, i);
		if (x->severity != AL_SEV_ERROR)
			continue;
		any = true;
		ali_cmd_puts(ci, "anelint: error: ");
		ali_cmd_put(ci, x->file ? x->file : path, SHOWN_NAME_MAX);
		if (x->offset != UINT64_MAX)
			ali_cmd_printf(ci, ": offset %llu", (unsigned long long)x->offset);
		if (x->where) {
			ali_cmd_puts(ci, ": ");
			ali_cmd_put(ci, x->where, SHOWN_NAME_MAX);
		}
		if (x->node && *x->node) {
			ali_cmd_puts(ci, " (");
			ali_cmd_put(ci, x->node, SHOWN_NAME_MAX);
			ali_cmd_puts(ci, ")");
		}
		ali_cmd_puts(ci, ": ");
		ali_cmd_put(ci, x->msg, SHOWN_MSG_MAX);
		ali_cmd_puts(ci, "\n");
	}
	if (!any) {
		ali_cmd_puts(ci, "anelint: error: ");
		ali_cmd_put(ci, path, SHOWN_NAME_MAX);
		ali_cmd_puts(ci, ": cannot load\n");
	}
}

/* A failed open or read: AL_E_IO and AL_E_NOMEM as they are, anything else a
 * file that is not what it should be. */
enum al_status ali_cmd_file_status(enum al_status st)
{
	return st == AL_E_IO || st == AL_E_NOMEM ? st : AL_E_FORMAT;
}

const char *al_ci_messages(al_ci *ci)
{
	if (!ci || !ci->msg || fflush(ci->msg) != 0 || !ci->msg_buf)
		return "";
	return ci->msg_buf;
}

void al_ci_messages_clear(al_ci *ci)
{
	if (!ci || !ci->msg)
		return;
	fclose(ci->msg);
	free(ci->msg_buf);
	ci->msg_buf = NULL;
	ci->msg_len = 0;
	ci->msg = open_memstream(&ci->msg_buf, &ci->msg_len);
}

/* SPDX-License-Identifier: MIT */
/* src/command/: the commands as library calls (curl's lib/ under its src/, jq's thin main).
 * What a command means (check, plan, report, fix with its proof and keep / refuse decision,
 * split, run / verify, compare, calibrate, probe, what an anelint.toml section does) lives here,
 * behind public functions of include/anelint.h with option and result structs; src/cli/ parses
 * arguments, calls one of them and prints, and the Python package calls the same ones.
 * Stage: above report (a command may write any report), below cli. Internal names: ali_cmd_*. */
#ifndef ANELINT_COMMAND_H
#define ANELINT_COMMAND_H
#include "anelint.h"

/* Moves the errors of one step (from) into the caller's diagnostics (to), each naming
 * file when it names none; fallback when the step failed without saying why (probe.c). */
void ali_cmd_pass_errors(al_diags *to, const al_diags *from, const char *file, const char *fallback);
#endif

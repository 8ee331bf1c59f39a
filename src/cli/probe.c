/* SPDX-License-Identifier: MIT */
/* probe.c: `anelint probe -o DIR` (docs/evidence.md "Probes"): parses, calls
 * al_probes_write (src/command/probe.c: the family table, the probe builders, the
 * manifest) and prints its summary line or its errors. */
#include "cli.h"

int cmd_probe(struct cli *c)
{
	const struct command_row *cmd = command("probe");
	if (!c->output)
		return usage_error(cmd, "probe writes a directory: give -o DIR%s", "");
	int grc = guard_output(c, c->output, AL_OUTPUT_INTO_DIR); /* as every writer (probe reads no input today) */
	if (grc)
		return grc;
	al_diags *d = al_diags_new();
	if (!d)
		return EXIT_IO;
	struct al_probe_opts o = {.dir = c->output};
	struct al_probe_result res;
	if (al_probes_write(&o, &res, d) != AL_OK) {
		print_errors(c->output, d);
		al_diags_free(d);
		return res.exit_code ? res.exit_code : EXIT_INVALID;
	}
	al_diags_free(d);
	printf("probe: %zu probe models, manifest.json and run_probes.sh written to ", res.n_probes);
	put_text(stdout, c->output, CLI_NAME_MAX);
	printf("\n");
	return EXIT_ALL_ANE;
}

/* nwbzarr: the command-line program, a client of the public API. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_export.h"

int main(int argc, char **argv)
{
	nzc_args a;
	char err[512];
	/* export/verify/upgrade parse their own arguments (src/cli/cmd_*.c). */
	if (argc >= 2 && strcmp(argv[1], "export") == 0)
		return nz_cli_export(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "verify") == 0)
		return nz_cli_verify(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "upgrade") == 0)
		return nz_cli_upgrade(argc - 1, argv + 1);
	if (nzc_parse_args(&a, argc, argv, err, sizeof err) < 0) {
		fprintf(stderr, "nwbzarr: %s\n", err);
		fputs(nzc_usage(a.cmd), stderr);
		return 2;
	}
	if (a.help || a.cmd == NZC_HELP) {
		fputs(nzc_usage(a.cmd), stdout);
		return 0;
	}
	switch (a.cmd) {
	case NZC_VERSION:
		printf("nwbzarr %s\nlibraries: %s\n", nz_version(), nz_codec_versions());
		return 0;
	case NZC_CONVERT:
		return nzc_convert(&a);
	case NZC_INFO:
		return nzc_info(&a);
	case NZC_REPAIR:
		return nzc_repair(&a);
	default:
		fputs(nzc_usage(NZC_NONE), stderr);
		return 2;
	}
}

#include <stdio.h>
#include <string.h>

#include "nwbzarr.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: nwbzarr [--version] [--help] <command> [<args>]\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("nwbzarr %s\n", nz_version());
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "nwbzarr: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}

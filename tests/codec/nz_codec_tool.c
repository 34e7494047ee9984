/* nz_codec_tool encode|decode CONFIG_JSON ITEMSIZE [EXPECTED] < in > out
 * Runs one codec over stdin and writes the result to stdout; used by the
 * numcodecs interop test. Exit status 0, or 1 with the error on stderr.
 * `nz_codec_tool versions` prints nz_codec_versions() (which libzstd runs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "util/alloc.h"
#include "util/error.h"

int main(int argc, char **argv)
{
	nz_buf in = {0}, out = {0};
	nz_codec *codec = NULL;
	json_error_t je;
	json_t *cfg;
	char chunk[65536];
	size_t n;
	int rc;
	char mode;
	if (argc == 2 && strcmp(argv[1], "versions") == 0)
		return puts(nz_codec_versions()) < 0;
	if (argc < 4 || (strcmp(argv[1], "encode") != 0 && strcmp(argv[1], "decode") != 0 &&
			 strcmp(argv[1], "config") != 0)) {
		fprintf(stderr, "usage: %s encode|decode|config CONFIG_JSON ITEMSIZE [EXPECTED]\n",
			argv[0]);
		return 2;
	}
	mode = argv[1][0];
	nz__alloc_init();
	if (!(cfg = json_loads(argv[2], 0, &je))) {
		fprintf(stderr, "bad config JSON: %s\n", je.text);
		return 2;
	}
	rc = nz__codec_from_json(&codec, cfg);
	json_decref(cfg);
	if (rc == 0 && mode == 'c') {
		/* Print the config as .zarray would hold it. */
		json_t *j = NULL;
		char *text = NULL;
		if ((rc = nz__codec_to_json(&j, codec)) == 0 &&
		    (text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS)) != NULL)
			printf("%s\n", text);
		nz__free(text);
		json_decref(j);
		mode = 0;
	}
	while (rc == 0 && mode && (n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
		rc = nz__buf_append(&in, chunk, n);
	if (rc == 0 && mode == 'e')
		rc = nz__codec_encode(codec, in.data, in.len, strtoul(argv[3], NULL, 10), &out);
	else if (rc == 0 && mode == 'd')
		rc = nz__codec_decode(codec, in.data, in.len, argc > 4 ? strtoul(argv[4], NULL, 10) : 0,
				      &out);
	if (rc == 0 && out.len && fwrite(out.data, 1, out.len, stdout) != out.len)
		rc = nz__error_set(NZ_EIO, "cannot write stdout");
	if (rc != 0)
		fprintf(stderr, "nz_codec_tool: [%d] %s\n", rc, nz_error_last()->message);
	nz__codec_free(codec);
	nz__buf_free(&in);
	nz__buf_free(&out);
	return rc != 0;
}

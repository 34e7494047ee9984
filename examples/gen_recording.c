/* Write a synthetic raw recording (int16, frames x channels, row-major, no
 * header) for trying `nwbzarr convert`: band-limited noise plus a slow
 * oscillation per channel, compressible about like real wide-band data.
 *
 *   gen_recording OUT.bin [SECONDS=60] [CHANNELS=384] [RATE=30000] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	double seconds = argc > 2 ? atof(argv[2]) : 60;
	long channels = argc > 3 ? atol(argv[3]) : 384;
	double rate = argc > 4 ? atof(argv[4]) : 30000;
	uint64_t frames = (uint64_t)(seconds * rate), state = 0x853c49e6748fea9bULL;
	int16_t *row;
	double *lp;
	FILE *f;

	if (argc < 2 || channels < 1 || frames == 0) {
		fprintf(stderr, "usage: gen_recording OUT.bin [SECONDS] [CHANNELS] [RATE]\n");
		return 2;
	}
	row = calloc((size_t)channels, sizeof *row);
	lp = calloc((size_t)channels, sizeof *lp);
	if (!row || !lp || !(f = fopen(argv[1], "wb"))) {
		perror(argv[1]);
		return 1;
	}
	for (uint64_t t = 0; t < frames; t++) {
		for (long c = 0; c < channels; c++) {
			/* xorshift64 noise, low-pass filtered (one pole) */
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			lp[c] = 0.8 * lp[c] + 0.2 * ((double)(state % 2001) - 1000);
			row[c] = (int16_t)(lp[c] + 300 * sin(2 * M_PI * (4 + c % 8) * (double)t / rate));
		}
		if (fwrite(row, sizeof *row, (size_t)channels, f) != (size_t)channels) {
			perror(argv[1]);
			return 1;
		}
	}
	if (fclose(f) != 0) {
		perror(argv[1]);
		return 1;
	}
	printf("%s: %llu frames x %ld channels int16 at %g Hz (%.1f MB)\n", argv[1],
	       (unsigned long long)frames, channels, rate, frames * channels * 2 / 1e6);
	free(row);
	free(lp);
	return 0;
}

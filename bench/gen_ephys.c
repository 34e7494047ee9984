/* gen_ephys: write a synthetic extracellular recording, row-major int16
 * (frames x channels), reproducible from a seed. Not zeros and not uniform
 * noise: per-channel pink-ish noise, LFP oscillations shared across channels
 * with a depth profile, and spiking units whose waveforms spread over
 * neighbouring channels, so compressors see what they see on real probes.
 *
 * usage: gen_ephys OUT SECONDS [CHANNELS=384] [RATE=30000] [SEED=1] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NUNITS 64
#define WAVE 48
#define SPREAD 6
#define BLOCK 1024
#define PI 3.14159265358979323846

static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static double uniform(void)
{
	return (double)(rng() >> 11) * (1.0 / 9007199254740992.0);
}

/* Roughly N(0, 1) from one draw: the sum of four 16-bit lanes. */
static float gauss4(void)
{
	uint64_t r = rng();
	int s = (int)(r & 0xffff) + (int)(r >> 16 & 0xffff) + (int)(r >> 32 & 0xffff) + (int)(r >> 48);
	return (float)(s - 131070) * (1.0f / 37837.0f);
}

typedef struct unit {
	int channel;      /* peak channel */
	double rate;      /* spikes per second */
	float amp;        /* peak amplitude in counts */
	uint64_t next;    /* frame of the next spike */
	int64_t active;   /* frame of the current spike, -1 none */
} unit;

int main(int argc, char **argv)
{
	int nch = argc > 3 ? atoi(argv[3]) : 384, rate = argc > 4 ? atoi(argv[4]) : 30000;
	uint64_t seed = argc > 5 ? strtoull(argv[5], NULL, 10) : 1, nframes, f, b;
	float *pink1, *pink2, *depth, wave[WAVE], lfp_phase[3], lfp_freq[3] = {2.0f, 7.0f, 11.0f};
	float lfp_amp[3] = {60.0f, 90.0f, 30.0f};
	int16_t *buf;
	unit units[NUNITS];
	FILE *out;
	int c, u, k;

	if (argc < 3 || nch < 1 || rate < 1) {
		fprintf(stderr, "usage: gen_ephys OUT SECONDS [CHANNELS=384] [RATE=30000] [SEED=1]\n");
		return 2;
	}
	nframes = (uint64_t)(atof(argv[2]) * rate);
	rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
	pink1 = calloc((size_t)nch, sizeof *pink1);
	pink2 = calloc((size_t)nch, sizeof *pink2);
	depth = calloc((size_t)nch, sizeof *depth);
	buf = malloc((size_t)BLOCK * (size_t)nch * sizeof *buf);
	if (!pink1 || !pink2 || !depth || !buf || !(out = fopen(argv[1], "wb"))) {
		perror("gen_ephys");
		return 1;
	}
	for (c = 0; c < nch; c++)
		depth[c] = (float)cos(PI * c / nch) * 0.8f + 0.4f;
	for (k = 0; k < 3; k++)
		lfp_phase[k] = (float)(uniform() * 2 * PI);
	/* A biphasic spike: a sharp trough, then a slower positive bump. */
	for (k = 0; k < WAVE; k++) {
		double t = (k - 12) / (double)rate * 1000.0; /* ms */
		wave[k] = (float)(-exp(-t * t / 0.02) + 0.35 * exp(-(t - 0.45) * (t - 0.45) / 0.08));
	}
	for (u = 0; u < NUNITS; u++) {
		units[u].channel = (int)(uniform() * nch);
		units[u].rate = 1.0 + uniform() * 15.0;
		units[u].amp = (float)(80.0 + uniform() * 400.0);
		units[u].next = (uint64_t)(-log(1.0 - uniform()) / units[u].rate * rate);
		units[u].active = -1;
	}
	for (f = 0; f < nframes; f += b) {
		uint64_t n = nframes - f < BLOCK ? nframes - f : BLOCK;
		for (b = 0; b < n; b++) {
			uint64_t fr = f + b;
			float lfp = 0;
			int16_t *row = buf + b * (uint64_t)nch;
			for (k = 0; k < 3; k++)
				lfp += lfp_amp[k] * sinf(lfp_phase[k] + 2.0f * (float)PI * lfp_freq[k] *
								 (float)((double)fr / rate));
			for (c = 0; c < nch; c++) {
				float w = gauss4() * 18.0f;
				/* Pink-ish: white plus two leaky integrators. */
				pink1[c] = 0.997f * pink1[c] + 0.08f * w;
				pink2[c] = 0.9f * pink2[c] + 0.3f * w;
				float v = w + pink1[c] + pink2[c] + lfp * depth[c];
				row[c] = (int16_t)lrintf(v);
			}
			for (u = 0; u < NUNITS; u++) {
				unit *un = &units[u];
				if (un->active < 0 && fr >= un->next) {
					un->active = (int64_t)fr;
					un->next = fr + WAVE + (uint64_t)(-log(1.0 - uniform()) / un->rate * rate);
				}
				if (un->active >= 0) {
					int t = (int)(fr - (uint64_t)un->active);
					int lo = un->channel - SPREAD, hi = un->channel + SPREAD;
					for (c = lo < 0 ? 0 : lo; c <= hi && c < nch; c++) {
						float g = expf(-(float)((c - un->channel) * (c - un->channel)) / 8.0f);
						float v = row[c] + un->amp * g * wave[t];
						row[c] = (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
					}
					if (t + 1 >= WAVE)
						un->active = -1;
				}
			}
		}
		if (fwrite(buf, sizeof *buf * (size_t)nch, (size_t)n, out) != n) {
			perror("gen_ephys: write");
			return 1;
		}
	}
	if (fclose(out) != 0) {
		perror("gen_ephys: close");
		return 1;
	}
	free(pink1);
	free(pink2);
	free(depth);
	free(buf);
	return 0;
}

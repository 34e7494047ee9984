/* One shared nz_codec per config used by several threads at once: every
 * thread's encoding equals the single-threaded one and decodes back (blosc
 * through its context API must not share state between calls). */
#include <pthread.h>

#include "codec/codec.h"
#include "test.h"
#include "util/alloc.h"
#include "codec_configs.h"

#define THREADS 4
#define N 65536

static unsigned char src[N];

typedef struct job {
	const nz_codec *codec;
	const nz_buf *want;
	int bad;
} job;

static void *worker(void *arg)
{
	job *j = arg;
	nz_buf enc = {0}, dec = {0};
	for (int r = 0; r < 10 && !j->bad; r++) {
		if (nz__codec_encode(j->codec, src, N, 4, &enc) != 0 || enc.len != j->want->len ||
		    memcmp(enc.data, j->want->data, enc.len) != 0)
			j->bad = 1;
		else if (nz__codec_decode(j->codec, enc.data, enc.len, N, &dec) != 0 ||
			 memcmp(dec.data, src, N) != 0)
			j->bad = 2;
	}
	nz__buf_free(&enc);
	nz__buf_free(&dec);
	return NULL;
}

int main(void)
{
	for (size_t i = 0; i < N; i++)
		src[i] = (unsigned char)((i / 3) ^ (i % 4 ? 0 : i >> 9));
	nz__alloc_init();
	for (size_t c = 0; c < N_CODEC_CONFIGS; c++) {
		nz_codec *codec = parse_codec(codec_configs[c]);
		nz_buf want = {0};
		pthread_t t[THREADS];
		job jobs[THREADS];
		ASSERT_OK(nz__codec_encode(codec, src, N, 4, &want));
		for (int i = 0; i < THREADS; i++) {
			jobs[i] = (job){codec, &want, 0};
			ASSERT(pthread_create(&t[i], NULL, worker, &jobs[i]) == 0);
		}
		for (int i = 0; i < THREADS; i++) {
			ASSERT(pthread_join(t[i], NULL) == 0);
			if (jobs[i].bad)
				NZ__FAIL("%s: thread %d failed (%d)", codec_configs[c], i, jobs[i].bad);
		}
		nz__buf_free(&want);
		nz__codec_free(codec);
	}
	return 0;
}

/* Concurrent puts of distinct keys (sharing parent folders, so mkdir races)
 * from several threads, then every value reads back intact. */
#include <pthread.h>

#include "test.h"

#define THREADS 8
#define KEYS 40

typedef struct job {
	nz_store *store;
	int id;
	int err;
	nz_error error;
} job;

static void *worker(void *arg)
{
	job *j = arg;
	char key[64], val[64];
	for (int k = 0; k < KEYS && !j->err; k++) {
		/* Threads share the folders "g<k%5>/d": every thread races to create them. */
		snprintf(key, sizeof key, "g%d/d/%d.%d", k % 5, j->id, k);
		snprintf(val, sizeof val, "value %d %d", j->id, k);
		j->err = nz_store_put(j->store, key, val, strlen(val));
		if (j->err)
			j->error = *nz_error_last();
	}
	return NULL;
}

static int count(const char *key, void *payload)
{
	(*(int *)payload)++;
	return 0;
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	char root[512], cmd[600];
	nz_store *s = NULL;
	pthread_t t[THREADS];
	job jobs[THREADS];
	int n = 0;

	snprintf(root, sizeof root, "%s/store_threads", tmp ? tmp : "/tmp");
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	ASSERT(system(cmd) == 0);
	ASSERT_OK(nz_store_open_dir(&s, root, NZ_STORE_CREATE));
	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (job){s, i, 0, {0, ""}};
		ASSERT(pthread_create(&t[i], NULL, worker, &jobs[i]) == 0);
	}
	for (int i = 0; i < THREADS; i++) {
		ASSERT(pthread_join(t[i], NULL) == 0);
		if (jobs[i].err)
			NZ__FAIL("thread %d: %s", i, jobs[i].error.message);
	}
	ASSERT_OK(nz_store_list(s, "", count, &n));
	ASSERT_EQ_INT(n, THREADS * KEYS);
	for (int i = 0; i < THREADS; i++)
		for (int k = 0; k < KEYS; k++) {
			char key[64], val[64];
			void *v;
			size_t len;
			snprintf(key, sizeof key, "g%d/d/%d.%d", k % 5, i, k);
			snprintf(val, sizeof val, "value %d %d", i, k);
			ASSERT_OK(nz_store_get(s, key, &v, &len));
			ASSERT_EQ_U64(len, strlen(val));
			ASSERT_MEM_EQ(v, val, len);
			nz_free(v);
		}
	nz_store_free(s);
	ASSERT(system(cmd) == 0);
	return 0;
}

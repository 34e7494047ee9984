/* Concurrent puts of distinct keys (sharing parent folders, so mkdir races)
 * from several threads, then every value reads back intact. Then streaming
 * puts on the directory, memory and object stores: writers stream distinct
 * keys at once while one thread keeps re-streaming a hot key that readers
 * read all along; every value a reader sees is one whole version. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "objstore.h"
#include "test.h"

#define THREADS 8
#define KEYS 40

typedef struct job {
	nz_store *store;
	int id;
	int err;
	nz_error error;
} job;

/* Key k of thread `id` and its value, for the plain puts (stream 0) and the
 * streamed ones (1). Threads share the folders "g<k%5>/d" and "s<k%3>/c":
 * every thread races to create them. */
static size_t key_value(char key[64], char val[64], int stream, int id, int k)
{
	if (stream)
		snprintf(key, 64, "s%d/c/%d/%d", k % 3, id, k);
	else
		snprintf(key, 64, "g%d/d/%d.%d", k % 5, id, k);
	return (size_t)snprintf(val, 64, stream ? "streamed %d %d" : "value %d %d", id, k);
}

/* Every key of `threads` threads reads back as its value. */
static void check_values(nz_store *s, int stream, int threads)
{
	for (int i = 0; i < threads; i++)
		for (int k = 0; k < KEYS; k++) {
			char key[64], val[64];
			void *v;
			size_t len, n = key_value(key, val, stream, i, k);
			ASSERT_OK(nz_store_get(s, key, &v, &len));
			ASSERT_EQ_U64(len, n);
			ASSERT_MEM_EQ(v, val, len);
			nz_free(v);
		}
}

static void *worker(void *arg)
{
	job *j = arg;
	char key[64], val[64];
	for (int k = 0; k < KEYS && !j->err; k++) {
		key_value(key, val, 0, j->id, k);
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

#define ROUNDS 200 /* < 256: a version's byte identifies it */
enum { WRITERS = 4, READERS = 2 };

typedef struct sjob {
	nz_store *store;
	int id;
	atomic_int *done;
	atomic_int *readers; /* readers started: the hot writer waits for all */
	int err;
	nz_error error;
	long seen; /* reader: whole versions observed */
} sjob;

static size_t version_len(int v)
{
	return 1000 + (size_t)v * 37;
}

static void *stream_writer(void *arg)
{
	sjob *j = arg;
	char key[64], val[64];
	for (int k = 0; k < KEYS && !j->err; k++) {
		nz_store_writer *w = NULL;
		size_t n = key_value(key, val, 1, j->id, k);
		if ((j->err = nz_store_put_begin(&w, j->store, key)) == 0 &&
		    (j->err = nz_store_put_write(w, val, 5)) == 0 &&
		    (j->err = nz_store_put_write(w, val + 5, n - 5)) == 0)
			j->err = nz_store_put_commit(w);
		else
			nz_store_put_abort(w);
		if (j->err)
			j->error = *nz_error_last();
	}
	return NULL;
}

static void *hot_writer(void *arg)
{
	sjob *j = arg;
	static unsigned char buf[1000 + ROUNDS * 37];
	while (atomic_load(j->readers) < READERS)
		sched_yield();
	for (int v = 1; v < ROUNDS && !j->err; v++) {
		nz_store_writer *w = NULL;
		size_t len = version_len(v);
		memset(buf, v, len);
		if ((j->err = nz_store_put_begin(&w, j->store, "hot")) == 0)
			for (size_t off = 0; off < len && !j->err; off += 300)
				j->err = nz_store_put_write(w, buf + off, len - off < 300 ? len - off : 300);
		if (j->err == 0)
			j->err = nz_store_put_commit(w);
		else
			nz_store_put_abort(w);
		if (j->err)
			j->error = *nz_error_last();
	}
	atomic_store(j->done, 1);
	return NULL;
}

static void *hot_reader(void *arg)
{
	sjob *j = arg;
	atomic_fetch_add(j->readers, 1);
	do {
		unsigned char *v = NULL;
		size_t n = 0;
		if ((j->err = nz_store_get(j->store, "hot", (void **)&v, &n)) == 0) {
			if (n != version_len(v[0]))
				j->err = -100; /* a partial or mixed value */
			for (size_t i = 1; i < n && !j->err; i++)
				if (v[i] != v[0])
					j->err = -101;
			j->seen++;
		}
		nz_free(v);
		v = NULL;
		if (!j->err && (j->err = nz_store_get_suffix(j->store, "hot", 16, (void **)&v, &n)) == 0)
			for (size_t i = 1; i < n && !j->err; i++)
				if (v[i] != v[0] || n != 16)
					j->err = -102;
		nz_free(v);
		if (j->err)
			j->error = *nz_error_last();
	} while (!j->err && !atomic_load(j->done));
	return NULL;
}

static void stream_race(nz_store *s)
{
	pthread_t t[WRITERS + 1 + READERS];
	sjob jobs[WRITERS + 1 + READERS];
	atomic_int done, readers;
	int n = 0;
	atomic_init(&done, 0);
	atomic_init(&readers, 0);
	{
		static unsigned char v0[1000]; /* version 0: 1000 zero bytes */
		ASSERT_OK(nz_store_put(s, "hot", v0, sizeof v0));
	}
	for (int i = 0; i < WRITERS + 1 + READERS; i++) {
		void *(*fn)(void *) = i < WRITERS ? stream_writer : i == WRITERS ? hot_writer : hot_reader;
		jobs[i] = (sjob){s, i, &done, &readers, 0, {0, ""}, 0};
		ASSERT(pthread_create(&t[i], NULL, fn, &jobs[i]) == 0);
	}
	for (int i = 0; i < WRITERS + 1 + READERS; i++) {
		ASSERT(pthread_join(t[i], NULL) == 0);
		if (jobs[i].err)
			NZ__FAIL("%s: thread %d: [%d] %s", nz_store_describe(s), i, jobs[i].err,
				 jobs[i].error.message);
	}
	ASSERT(jobs[WRITERS + 1].seen > 0 && jobs[WRITERS + 2].seen > 0);
	ASSERT_OK(nz_store_list(s, "", count, &n));
	ASSERT_EQ_INT(n, WRITERS * KEYS + 1);
	check_values(s, 1, WRITERS);
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	char root[512];
	nz_store *s = NULL;
	pthread_t t[THREADS];
	job jobs[THREADS];
	int n = 0;

	snprintf(root, sizeof root, "%s/store_threads", tmp ? tmp : "/tmp");
	nz_test_rm_rf(root);
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
	check_values(s, 0, THREADS);
	nz_store_free(s);
	nz_test_rm_rf(root);

	ASSERT_OK(nz_store_open_dir(&s, root, NZ_STORE_CREATE));
	stream_race(s);
	nz_store_free(s);
	nz_test_rm_rf(root);
	ASSERT_OK(nz_store_new_memory(&s));
	stream_race(s);
	nz_store_free(s);
	ASSERT_OK(nz_test_objstore_new(&s));
	stream_race(s);
	nz_store_free(s);
	ASSERT_EQ_INT(nz_test_objstore_open_uploads(), 0);
	return 0;
}

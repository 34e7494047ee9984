#include <errno.h>
#include <pthread.h>

#include "test.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

static void *other_thread(void *arg)
{
	(void)arg;
	/* A fresh thread starts with no error, whatever the main thread has. */
	if (nz_error_last()->code != 0)
		return (void *)1;
	nz__error_set(NZ_EIO, "worker failed");
	return NULL;
}

int main(void)
{
	pthread_t t;
	void *res = NULL;
	nz_error saved;
	size_t n;
	nz_buf b = { 0 };

	ASSERT_EQ_INT(nz__error_set(NZ_EFORMAT, "bad '%s'", "x.json"), NZ_EFORMAT);
	ASSERT_EQ_STR(nz_error_last()->message, "bad 'x.json'");

	/* Per-thread: the worker's error does not leak into this thread. */
	ASSERT(pthread_create(&t, NULL, other_thread, NULL) == 0);
	ASSERT(pthread_join(t, &res) == 0);
	ASSERT(res == NULL);
	ASSERT_EQ_INT(nz_error_last()->code, NZ_EFORMAT);

	/* Save / restore carries an error across threads. */
	nz__error_save(&saved);
	nz_error_clear();
	ASSERT_EQ_INT(nz_error_last()->code, 0);
	ASSERT_EQ_INT(nz__error_restore(&saved), NZ_EFORMAT);
	ASSERT_EQ_STR(nz_error_last()->message, "bad 'x.json'");

	ASSERT_EQ_INT(nz__error_wrap("reading %s", "arr"), NZ_EFORMAT);
	ASSERT_EQ_STR(nz_error_last()->message, "reading arr: bad 'x.json'");

	ASSERT_EQ_INT(nz__error_errno(ENOSPC, "write", "/d/f"), NZ_ENOSPC);
	ASSERT_CONTAINS(nz_error_last()->message, "'/d/f'");
	ASSERT_EQ_INT(nz__error_errno(ENOENT, "open", "/x"), NZ_ENOTFOUND);
	ASSERT_EQ_STR(nz_strerror(NZ_ENOMEM), "out of memory");

	ASSERT(nz__mul_size(&n, (size_t)-1, 2) == -1);
	ASSERT(nz__mul_size(&n, 3, 4) == 0 && n == 12);

	/* Allocation failure injection. */
	nz__alloc_fail_after(1);
	ASSERT_ERR(NZ_ENOMEM, nz__buf_append(&b, "abc", 3));
	nz__alloc_fail_after(0);
	ASSERT_OK(nz__buf_append(&b, "abc", 3));
	ASSERT_OK(nz__buf_append(&b, "def", 3));
	ASSERT(b.len == 6 && memcmp(b.data, "abcdef", 6) == 0);
	nz__buf_free(&b);
	nz__buf_free(&b); /* freeing twice is fine: it resets */
	printf("ok\n");
	return 0;
}

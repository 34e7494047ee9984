#include "util/alloc.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Countdown for the failure-injection test; 0 = disabled. Atomic because
 * workers allocate concurrently. */
static atomic_long fail_at;
static atomic_long alloc_count;
static atomic_long refused;
static _Thread_local unsigned long thread_failures;

/* Every allocation's result passes through here. */
static void *counted(void *p)
{
	if (!p)
		thread_failures++;
	return p;
}

unsigned long nz__alloc_failures(void)
{
	return thread_failures;
}

static int should_fail(void)
{
	long n = atomic_fetch_add(&alloc_count, 1) + 1;
	long f = atomic_load(&fail_at);
	if (f > 0 && n >= f) {
		atomic_fetch_add(&refused, 1);
		return 1;
	}
	return 0;
}

long nz__alloc_fail_after(long n)
{
	long made = atomic_exchange(&alloc_count, 0);
	atomic_store(&refused, 0);
	atomic_store(&fail_at, n > 0 ? n : 0);
	return made;
}

long nz__alloc_refused(void)
{
	return atomic_load(&refused);
}

void *nz__malloc(size_t n)
{
	return counted(should_fail() ? NULL : malloc(n ? n : 1));
}

void *nz__calloc(size_t count, size_t size)
{
	return counted(should_fail() ? NULL : calloc(count ? count : 1, size ? size : 1));
}

void *nz__realloc(void *p, size_t n)
{
	return counted(should_fail() ? NULL : realloc(p, n ? n : 1));
}

char *nz__strndup(const char *s, size_t n)
{
	char *d = nz__malloc(n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *nz__strdup(const char *s)
{
	return nz__strndup(s, strlen(s));
}

void nz__free(void *p)
{
	free(p);
}

void nz_free(void *p)
{
	free(p);
}

int nz__mul_size(size_t *out, size_t a, size_t b)
{
	if (a != 0 && b > (size_t)-1 / a)
		return -1;
	*out = a * b;
	return 0;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void *json_malloc(size_t n)
{
	return nz__malloc(n);
}

static void init_json(void)
{
	json_set_alloc_funcs(json_malloc, nz__free);
}

void nz__alloc_init(void)
{
	pthread_once(&init_once, init_json);
}

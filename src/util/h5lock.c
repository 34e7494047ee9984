#include "util/h5lock.h"

#include <pthread.h>

nz__h5_capability nz__h5_cap;
static pthread_mutex_t h5_mutex = PTHREAD_MUTEX_INITIALIZER;

/* The analysis cannot see through pthread_mutex_*: these two are where the
 * capability is taken and given back. */
NZ__TSA(no_thread_safety_analysis) void nz__h5_lock(void)
{
	pthread_mutex_lock(&h5_mutex);
}

NZ__TSA(no_thread_safety_analysis) void nz__h5_unlock(void)
{
	pthread_mutex_unlock(&h5_mutex);
}

#include "util/buf.h"

#include <string.h>

#include "util/alloc.h"
#include "util/error.h"

int nz__buf_reserve(nz_buf *b, size_t n)
{
	size_t cap;
	unsigned char *p;
	if (n <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < n)
		cap = cap > ((size_t)-1) / 2 ? n : cap * 2;
	p = nz__realloc(b->data, cap);
	if (!p)
		return nz__error_set(NZ_ENOMEM, "out of memory growing a buffer to %zu bytes", cap);
	b->data = p;
	b->cap = cap;
	return 0;
}

int nz__buf_append(nz_buf *b, const void *p, size_t n)
{
	int err;
	if (n > (size_t)-1 - b->len)
		return nz__error_set(NZ_ENOMEM, "buffer size overflow");
	if ((err = nz__buf_reserve(b, b->len + n)) < 0)
		return err;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

void nz__buf_free(nz_buf *b)
{
	nz__free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

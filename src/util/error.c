#include "util/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local nz_error tls_error;

const char *nz_version(void)
{
	return NZ_VERSION_STRING;
}

const nz_error *nz_error_last(void)
{
	return &tls_error;
}

void nz_error_clear(void)
{
	tls_error.code = 0;
	tls_error.message[0] = '\0';
}

const char *nz_strerror(int code)
{
	switch (code) {
	case NZ_OK: return "success";
	case NZ_EINVAL: return "invalid argument";
	case NZ_ENOMEM: return "out of memory";
	case NZ_EIO: return "input/output error";
	case NZ_EFORMAT: return "malformed data";
	case NZ_ENOTFOUND: return "not found";
	case NZ_EEXISTS: return "already exists";
	case NZ_EUNSUPPORTED: return "not supported";
	case NZ_ECANCELED: return "canceled";
	case NZ_ECODEC: return "codec failure";
	case NZ_EINCOMPLETE: return "incomplete store";
	case NZ_EMISMATCH: return "mismatch";
	case NZ_ENOSPC: return "no space left on device";
	default: return "unknown error";
	}
}

int nz__error_set(int code, const char *fmt, ...)
{
	va_list ap;
	tls_error.code = code;
	va_start(ap, fmt);
	vsnprintf(tls_error.message, sizeof tls_error.message, fmt, ap);
	va_end(ap);
	return code;
}

int nz__error_errno(int errnum, const char *op, const char *path)
{
	int code = NZ_EIO;
	if (errnum == ENOSPC || errnum == EDQUOT)
		code = NZ_ENOSPC;
	else if (errnum == ENOENT)
		code = NZ_ENOTFOUND;
	else if (errnum == EEXIST || errnum == ENOTEMPTY)
		code = NZ_EEXISTS;
	else if (errnum == ENOMEM)
		code = NZ_ENOMEM;
	return nz__error_set(code, "%s '%s': %s", op, path ? path : "", strerror(errnum));
}

int nz__error_wrap(const char *fmt, ...)
{
	char old[NZ_ERROR_MSG_MAX];
	size_t n;
	va_list ap;
	memcpy(old, tls_error.message, sizeof old);
	va_start(ap, fmt);
	vsnprintf(tls_error.message, sizeof tls_error.message, fmt, ap);
	va_end(ap);
	/* Append ": <old message>", truncating rather than overflowing. */
	n = strlen(tls_error.message);
	if (n + 2 < sizeof tls_error.message) {
		memcpy(tls_error.message + n, ": ", 2);
		n += 2;
		strncpy(tls_error.message + n, old, sizeof tls_error.message - n - 1);
		tls_error.message[sizeof tls_error.message - 1] = '\0';
	}
	if (tls_error.code == 0)
		tls_error.code = NZ_EIO;
	return tls_error.code;
}

void nz__error_save(nz_error *dst)
{
	*dst = tls_error;
}

int nz__error_restore(const nz_error *src)
{
	tls_error = *src;
	return src->code;
}

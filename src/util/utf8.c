/* See utf8.h. */
#include "util/utf8.h"

#include <string.h>

#include "util/error.h"

size_t nz__utf8_invalid_at(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned c = p[i], lo = 0x80, hi = 0xBF;
		size_t len;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			len = 2;
		else if (c >= 0xE0 && c <= 0xEF)
			len = 3;
		else if (c >= 0xF0 && c <= 0xF4)
			len = 4;
		else
			return i;
		/* The second byte's range rules out overlong forms, surrogates
		 * and code points above U+10FFFF. */
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
		else if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
		if (n - i < len || p[i + 1] < lo || p[i + 1] > hi)
			return i;
		for (size_t k = 2; k < len; k++)
			if (p[i + k] < 0x80 || p[i + k] > 0xBF)
				return i;
		i += len;
	}
	return n;
}

int nz__utf8_check(const char *s, const char *what)
{
	size_t n, at;
	if (!s)
		return 0;
	n = strlen(s);
	if ((at = nz__utf8_invalid_at(s, n)) == n)
		return 0;
	return nz__error_set(NZ_EINVAL, "%s is not valid UTF-8 text (byte 0x%02x at offset %zu); "
			     "readers such as zarr-python would fail on it", what,
			     (unsigned)(unsigned char)s[at], at);
}

int nz_text_check(const char *text, const char *what)
{
	return nz__utf8_check(text, what ? what : "text");
}

/* Whole small files (metadata, JSON) read into memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/file.h"

int nz__read_file(char **out, size_t *len, const char *path, size_t max)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd, err = 0;
	*out = NULL;
	/* O_NONBLOCK: a FIFO opens at once (and is then refused below) instead
	 * of waiting for a writer; it changes nothing for regular files. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return nz__error_errno(errno, "cannot open", path);
	if (fstat(fd, &st) != 0) {
		err = nz__error_errno(errno, "cannot stat", path);
		goto done;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		err = nz__error_set(NZ_EFORMAT, "'%s' is not a regular file of at most %zu bytes",
				    path, max);
		goto done;
	}
	if (!(buf = nz__malloc((size_t)st.st_size + 1))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory reading '%s'", path);
		goto done;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? nz__error_errno(errno, "cannot read", path)
				    : nz__error_set(NZ_EIO, "'%s' shrank while being read", path);
			goto done;
		}
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	buf = NULL;
done:
	nz__free(buf);
	close(fd);
	return err;
}

/* Internal: reading a whole small file. */
#ifndef NZ_UTIL_FILE_H
#define NZ_UTIL_FILE_H

#include <stddef.h>

/** Read a whole regular file of at most `max` bytes (NUL-terminated; *len
 *  excludes the NUL; the caller frees *out with nz__free). A FIFO, device
 *  or larger file is NZ_EFORMAT; errors name the path. */
int nz__read_file(char **out, size_t *len, const char *path, size_t max);

#endif

/* Internal: what export.c, zwalk.c and verify.c share. */
#ifndef NZ_EXPORT_IMPL_H
#define NZ_EXPORT_IMPL_H

#include "export/h5.h"
#include "export/model.h"
#include "nwbzarr/export.h"

/** nz__xjson_ctx.oid over a model (ctx = the nz__xmodel): the object_id
 *  attribute of the node at `path`, or NULL. */
char *nz__x_model_oid(void *ctx, const char *path);

#endif

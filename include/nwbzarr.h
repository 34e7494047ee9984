/* nwbzarr: write NWB neurophysiology data as Zarr, in parallel.
 * The umbrella header; each part is documented in its own header. */
#ifndef NWBZARR_H
#define NWBZARR_H

#include "nwbzarr/common.h"
#include "nwbzarr/store.h"
#include "nwbzarr/zarr.h"
#include "nwbzarr/engine.h"
#include "nwbzarr/recording.h"
#include "nwbzarr/nwb.h"
#include "nwbzarr/export.h"
#include "nwbzarr/upgrade.h"
#include "nwbzarr/h5source.h"
#include "nwbzarr/record.h"

#endif

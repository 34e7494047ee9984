/* Multi-process writes for the CLI (docs/mpi.md): the ranks of
 * `mpirun -n K nwbzarr convert|export ...`. The library stays MPI-free; this
 * file is the only one that talks to MPI.
 *
 * A write runs in phases. Rank 0 writes all metadata (series data arrays
 * empty, no .zmetadata), every rank writes its part of the chunks, rank 0
 * finalises. Each phase ends with nzc_mpi_agree: a collective exchange of
 * every rank's status (an MPI_Allreduce, not a bare barrier), so a failure
 * on any rank reaches all of them and none waits for a rank that gave up.
 *
 * Built without NZ_MPI, or started without mpirun, the process is rank 0 of
 * 1 and every call is trivial.
 *
 * State: MPI is process-wide, and so is this module's record of it (whether
 * MPI was initialised, rank, size, exchanges done). Call from the main
 * thread only. */
#ifndef NZ_CLI_CLI_MPI_H
#define NZ_CLI_CLI_MPI_H

#include <signal.h>

#include "nwbzarr.h"

/** Join the MPI job when this process was started by mpirun (and the
 *  program was built with NZ_MPI); otherwise do nothing. Returns 0, or -1
 *  after printing why. Safe to call more than once. */
int nzc_mpi_init(void);

/** Leave the MPI job (no-op when not in one). Call after the last
 *  exchange, before exiting. */
void nzc_mpi_finalize(void);

int nzc_mpi_rank(void);
int nzc_mpi_size(void);

/** The prefix of this process's messages: "" for one process, else
 *  "rank R of K: ". */
const char *nzc_mpi_tag(void);

/** A phase boundary. `status` is this rank's result (0, or negative after
 *  it printed its own message); `phase` names the phase for messages.
 *  Returns 0 when every rank succeeded, -1 on every rank otherwise; a rank
 *  that succeeded then prints which rank failed. Collective: every rank
 *  must make the same number of calls (see nzc_mpi_leave). */
int nzc_mpi_agree(int status, const char *phase);

/** Make, as failed, the exchanges this rank has not reached of the
 *  `nphases` its command has, so that no other rank waits for it. Call on
 *  every exit path of a multi-process command. */
void nzc_mpi_leave(int nphases);

/** Test hook (documented in docs/mpi.md): when the environment has
 *  NZ_TEST_FAIL_RANK=<this rank> and NZ_TEST_FAIL_PHASE is unset or equal
 *  to `phase`, print an "injected failure" message and return -1; else 0. */
int nzc_mpi_test_fail(const char *phase);

/** The exchanges of a multi-process write, in order: "open" (every rank
 *  opened its inputs), "metadata" (rank 0 wrote the metadata),
 *  "data" (every rank wrote its chunks), "finalise" (rank 0 wrote
 *  .zmetadata). */
#define NZC_MPI_PHASES 4

/** This rank's part of the chunks: `part` of `nparts`. Returns 0 or a
 *  negative nz_error_code (message in nz_error_last). */
typedef int (*nzc_mpi_data_fn)(void *ctx, uint64_t part, uint64_t nparts);

/** The phases after rank 0 wrote the metadata (with status `meta_status`,
 *  0 on the other ranks): the "metadata" exchange, data(ctx, rank, size),
 *  the "data" exchange, nz_nwb_finalise(store_path) on rank 0 and the
 *  "finalise" exchange. Returns 0 when every rank succeeded at every step,
 *  -1 otherwise (on every rank; messages printed, tagged). */
int nzc_mpi_finish(const char *store_path, int meta_status, nzc_mpi_data_fn data, void *ctx);

/** Write part `part` of `nparts` of the chunks of the existing array
 *  `array_path` in the directory store `store_path` from `src`, on `jobs`
 *  threads. The task shape is a function of the array's shape, chunks and
 *  item size only, so every rank cuts the same plan whatever its jobs.
 *  `fsync` 1 = fsync every chunk file (--fsync); `resume` 1 = keep the
 *  chunks already stored whole (--resume). Returns 0 or a negative
 *  nz_error_code (message in nz_error_last). */
int nzc_mpi_write_part(const char *store_path, const char *array_path, nz_source *src,
		       uint64_t part, uint64_t nparts, int jobs, int fsync, int resume,
		       const volatile sig_atomic_t *cancel_flag);

#endif

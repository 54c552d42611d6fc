/* amk_mpi: `amk loop` over many hosts through MPI (builds with AMK_MPI=ON only). Rank 0
 * runs the search and owns results.tsv; its evaluator is the `mpi` backend, which splits
 * every batch into chunks over the worker ranks and gathers their verdicts. Worker ranks
 * build the evaluator the command line asks for and serve chunks until told to stop. A rank
 * that misses a chunk's deadline is marked dead and its configs go to the other ranks; with
 * no worker left, rank 0 evaluates the rest itself. Messages carry choice indices (every
 * rank builds the same space from the same command line) and verdicts as plain bytes. */
#ifndef AMK_MPI_H
#define AMK_MPI_H

#include "amk_evaluator.h"

/* amk_mpi_opts is in amk_evaluator.h (amk_evaluator_create_ranked takes it in every build). */

/* Joins the MPI job when the process was started by an MPI launcher (mpirun, srun: its
 * environment says so); otherwise nothing is initialised and *rank = 0, *size = 1, so a
 * plain `amk loop` runs as it always did. AMK_EBACKEND when MPI_Init fails. */
AMK_API int amk_mpi_init(int *rank, int *size, amk_diag *d);
/* MPI_Finalize when amk_mpi_init started MPI; safe to call more than once. exit_status is
 * the process's: if MPI_Finalize has not returned after AMK_MPI_FINALIZE_WAIT_S (Open MPI
 * can wait forever on a rank that died), the process ends with it without finalising. */
#define AMK_MPI_FINALIZE_WAIT_S 20
AMK_API void amk_mpi_finalize(int exit_status);

/* Worker ranks (rank > 0): creates the evaluator, answers rank 0's handshake (device,
 * target, parallelism, a fingerprint of kernel and shape) and evaluates the chunks it is sent
 * until rank 0 says stop. A rank whose evaluator cannot be created reports why in the
 * handshake, waits for stop and returns that error (rank 0 excludes it and goes on). */
AMK_API int amk_mpi_serve(const amk_mpi_opts *o, amk_diag *d);

/* Rank 0: creates the `mpi` evaluator after the handshake with every worker rank. Ranks
 * that fail to start, report another device, or another kernel/shape are excluded with a
 * warning naming them. device/target are the first live worker's, parallelism the sum over
 * live workers. With no usable worker (or a world of size 1) rank 0 evaluates locally with
 * the same backend and says so. Freeing the evaluator tells every worker to stop. */
AMK_API int amk_mpi_evaluator_create(const amk_mpi_opts *o, amk_evaluator **out, amk_diag *d);

#endif

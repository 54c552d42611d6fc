/* `amk loop` under mpirun (builds with AMK_MPI=ON): the one place where the CLI meets MPI.
 * Worker ranks serve rank 0's chunks and are done; rank 0 gets the `mpi` evaluator and runs
 * the loop as usual. Without an MPI launcher (or in other builds) the evaluator is the
 * command line's, exactly as before. */
#include "cli_int.h"

#ifdef AMK_HAVE_MPI
#include "amk_mpi.h"

#include <stdlib.h>

/* on_exit, not atexit: the finalize needs the exit status, to end with it if MPI hangs. */
static void finalize_at_exit(int status, void *arg)
{
    (void)arg;
    amk_mpi_finalize(status);
}
#endif

int cli_loop_world_size(void)
{
#ifdef AMK_HAVE_MPI
    int rank = 0, size = 1;
    amk_diag d;
    amk_diag_clear(&d);
    if (amk_mpi_init(&rank, &size, &d) == AMK_OK)
        return size;
#endif
    return 1;
}

int cli_loop_evaluator(cli_ctx *ctx, const char *backend, const amk_backend_opts *opts,
                       const amk_spec *s, const amk_shape *sh, double rank_timeout_s,
                       amk_evaluator **out, int *served)
{
    *served = 0;
#ifdef AMK_HAVE_MPI
    int rank = 0, size = 1;
    amk_diag d;
    amk_diag_clear(&d);
    if (amk_mpi_init(&rank, &size, &d) != AMK_OK)
        return cli_fail_diag(ctx, CLI_EXIT_INTERNAL, &d);
    /* Finalised at exit, after rank 0 has freed its evaluator (which stops the workers)
     * on whichever path cli_cmd_loop returns. */
    on_exit(finalize_at_exit, NULL);
    if (size > 1) {
        amk_mpi_opts mo = {backend, opts, s, sh, rank_timeout_s};
        if (rank > 0) {
            *served = 1;
            if (amk_mpi_serve(&mo, &d) != AMK_OK)
                /* Rank 0 has excluded this rank and goes on: not a failure of the run. */
                cli_warn(ctx, "rank %d: %s", rank, d.msg);
            return CLI_EXIT_OK;
        }
        int rc = amk_mpi_evaluator_create(&mo, out, &d);
        if (rc == AMK_OK)
            return CLI_EXIT_OK;
        return cli_fail_diag(ctx, rc == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_NODEV, &d);
    }
#else
    (void)rank_timeout_s;
#endif
    return cli_evaluator(ctx, backend, opts, s, sh, out);
}

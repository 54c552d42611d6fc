/* `amk loop`'s evaluator under mpirun or not: the one place outside evaluator/mpi/ that
 * meets MPI. Worker ranks serve rank 0's chunks; rank 0 gets the `mpi` evaluator; without an
 * MPI launcher (or in builds without AMK_MPI) it is amk_evaluator_create's. */
#include "amk_evaluator.h"

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

int amk_evaluator_world_size(void)
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

int amk_evaluator_create_ranked(const amk_mpi_opts *o, amk_evaluator **out,
                                amk_rank_role *role, amk_diag *d)
{
    *out = NULL;
    *role = AMK_RANK_ALONE;
#ifdef AMK_HAVE_MPI
    static int finalize_registered;
    int rank = 0, size = 1;
    *role = AMK_RANK_NONE;
    int e = amk_mpi_init(&rank, &size, d);
    if (e != AMK_OK)
        return e;
    if (!finalize_registered && on_exit(finalize_at_exit, NULL) == 0)
        finalize_registered = 1;
    *role = size == 1 ? AMK_RANK_ALONE : rank == 0 ? AMK_RANK_ZERO : AMK_RANK_WORKER;
    if (*role == AMK_RANK_ZERO)
        return amk_mpi_evaluator_create(o, out, d);
    if (*role == AMK_RANK_WORKER) {
        if (amk_mpi_serve(o, d) != AMK_OK)
            amk_diag_prefix(d, "rank %d", rank);
        return AMK_OK;
    }
#endif
    return amk_evaluator_create(o->backend, o->backend_opts, o->kernel, o->shape, out, d);
}

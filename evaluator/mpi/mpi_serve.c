/* The `mpi` backend's process-wide MPI state (amk_mpi_init, amk_mpi_finalize) and the worker
 * ranks' serve loop (amk_mpi_serve): a worker rank creates its own evaluator, answers rank 0's
 * hello, evaluates the chunks it is sent and returns their verdicts until told to stop. Rank
 * 0 (the backend itself) is backend_mpi.c. */
#include "mpi_int.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------- process-wide MPI state ---------------------------------------------------------- */

MPI_Comm amk__mpi_comm = MPI_COMM_NULL; /* mpi_int.h */
int amk__mpi_started; /* 0 no MPI, 1 initialised here, 2 by the caller */
static int finalized;
int amk__mpi_rank, amk__mpi_size = 1;

static int launched_by_mpi(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return 1;
    }
    return 0;
}

const char *amk__mpi_error_text(int code, char *buf, int cap)
{
    int len = 0;
    if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS || len <= 0)
        snprintf(buf, (size_t)cap, "MPI error %d", code);
    return buf;
}

int amk_mpi_init(int *rank, int *size, amk_diag *d)
{
    *rank = 0;
    *size = 1;
    if (!amk__mpi_started && !launched_by_mpi())
        return AMK_OK;
    if (!amk__mpi_started) {
        int already = 0;
        MPI_Initialized(&already);
        if (!already) {
            int e = MPI_Init(NULL, NULL);
            if (e != MPI_SUCCESS) {
                char msg[MPI_MAX_ERROR_STRING];
                return amk_diag_set(d, AMK_EBACKEND, "MPI_Init failed: %s",
                                    amk__mpi_error_text(e, msg, sizeof msg));
            }
        }
        /* Errors come back as codes: a dead peer is data for rank 0, not an abort. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (MPI_Comm_dup(MPI_COMM_WORLD, &amk__mpi_comm) != MPI_SUCCESS)
            amk__mpi_comm = MPI_COMM_WORLD;
        MPI_Comm_set_errhandler(amk__mpi_comm, MPI_ERRORS_RETURN);
        MPI_Comm_rank(amk__mpi_comm, &amk__mpi_rank);
        MPI_Comm_size(amk__mpi_comm, &amk__mpi_size);
        amk__mpi_started = already ? 2 : 1; /* 1: finalised here; 2: the caller's MPI, left alone */
    }
    *rank = amk__mpi_rank;
    *size = amk__mpi_size;
    return AMK_OK;
}

/* Open MPI 4.1's MPI_Finalize ends with a fence over every process of the job; when a rank
 * was killed (mpirun --enable-recovery), that fence can wait forever: both survivors of
 * cli_mpi.sh's kill test were once found asleep in ompi_mpi_finalize, the run's rows all
 * written. So a watchdog ends the process with its own exit status if the finalize has not
 * returned in time; mpirun with --enable-recovery accepts that as it accepts the dead rank. */
static void *finalize_watchdog(void *arg)
{
    const int status = (int)(intptr_t)arg;
    sleep(AMK_MPI_FINALIZE_WAIT_S);
    static const char msg[] = "amk: mpi: MPI_Finalize did not return (a rank died?); "
                              "exiting without it\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
    _exit(status);
    return NULL;
}

void amk_mpi_finalize(int exit_status)
{
    if (amk__mpi_started == 1 && !finalized) {
        finalized = 1;
        pthread_t t;
        if (pthread_create(&t, NULL, finalize_watchdog, (void *)(intptr_t)exit_status) == 0)
            pthread_detach(t);
        MPI_Finalize();
    }
}

void amk__mpi_sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* A digest of the kernel spec and the shape (mpi_int.h). */
uint64_t amk__mpi_space_fingerprint(const amk_spec *s, const amk_shape *sh)
{
    const char *json = amk_spec_text(s);
    char shape[512];
    amk_shape_format(s, sh, shape, sizeof shape);
    uint64_t h = amk_hash64(shape, strlen(shape));
    if (json)
        h = amk_hash64_update(h, json, strlen(json));
    return h;
}

/* ---------- worker ranks ------------------------------------------------------------------- */

/* Waits for the next message from rank 0 (polling, with a sleep that backs off). */
static int wait_from_root(MPI_Status *st)
{
    long us = POLL_MIN_US;
    for (;;) {
        int flag = 0;
        int e = MPI_Iprobe(0, MPI_ANY_TAG, amk__mpi_comm, &flag, st);
        if (e != MPI_SUCCESS)
            return e;
        if (flag)
            return MPI_SUCCESS;
        amk__mpi_sleep_us(us);
        if (us < POLL_MAX_US)
            us *= 2;
    }
}

static int stop_pending(void)
{
    int flag = 0;
    MPI_Status st;
    return MPI_Iprobe(0, TAG_STOP, amk__mpi_comm, &flag, &st) == MPI_SUCCESS && flag;
}

/* Evaluates one chunk into out[0..n): rebuilds each config from its choice indices, checks
 * that its config_id is the one rank 0 sent, and runs the pipeline on the ones that match
 * (against rank 0's incumbent, so the gpu backend screens here as it would there). */
static void serve_chunk(amk_evaluator *ev, const amk_space *sp, const amk_mpi_opts *o,
                        double incumbent_us,
                        const amk__mpi_chunk_item *items, size_t n, amk_verdict *out)
{
    amk_config *cfgs = malloc(n * sizeof *cfgs);
    const amk_config **run = malloc(n * sizeof *run);
    size_t *at = malloc(n * sizeof *at);
    amk_verdict *got = malloc(n * sizeof *got);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        amk_verdict_init(&out[i]);
        snprintf(out[i].config_id, sizeof out[i].config_id, "%.16s", items[i].config_id);
        if (!cfgs || !run || !at || !got) {
            out[i].status = AMK_STATUS_NOT_RECORDED;
            snprintf(out[i].reason, sizeof out[i].reason, "rank %d: out of memory", amk__mpi_rank);
            continue;
        }
        amk_config *c = &cfgs[i];
        char id[17];
        memset(c, 0, sizeof *c);
        c->spec = o->kernel;
        c->shape = *o->shape;
        memcpy(c->choice, items[i].choice, sizeof c->choice);
        amk_config_id(c, id);
        if (strncmp(id, items[i].config_id, 16) != 0) {
            out[i].status = AMK_STATUS_RUN_ERROR;
            snprintf(out[i].reason, sizeof out[i].reason,
                     "rank %d rebuilt config %s from the choice indices rank 0 sent for %.16s: "
                     "the ranks do not share one kernel spec", amk__mpi_rank, id,
                     items[i].config_id);
            continue;
        }
        run[m] = c;
        at[m++] = i;
    }
    if (m) {
        amk_evaluator_run(ev, sp, run, m, incumbent_us, got); /* failures: statuses in got */
        for (size_t k = 0; k < m; k++)
            out[at[k]] = got[k];
    }
    free(cfgs);
    free(run);
    free(at);
    free(got);
}

int amk_mpi_serve(const amk_mpi_opts *o, amk_diag *d)
{
    if (!o || !o->backend || !o->kernel || !o->shape)
        return amk_diag_set(d, AMK_EINVAL, "mpi: serve needs a backend, a kernel and a shape");
    if (!amk__mpi_started)
        return amk_diag_set(d, AMK_EINVAL, "mpi: serve called outside an MPI job");
    amk_evaluator *ev = NULL;
    amk_space *sp = NULL;
    amk__mpi_hello h;
    memset(&h, 0, sizeof h);
    h.fingerprint = amk__mpi_space_fingerprint(o->kernel, o->shape);
    int rc = amk_evaluator_create(o->backend, o->backend_opts, o->kernel, o->shape, &ev, d);
    if (rc == AMK_OK)
        rc = amk_space_create(o->kernel, o->shape, &amk_evaluator_target(ev)->limits, &sp, d);
    if (rc == AMK_OK) {
        h.ok = 1;
        h.parallelism = amk_evaluator_parallelism(ev);
        snprintf(h.backend, sizeof h.backend, "%s", amk_evaluator_backend(ev));
        snprintf(h.device, sizeof h.device, "%s", amk_evaluator_device(ev));
        h.target = *amk_evaluator_target(ev);
        h.slot_s = amk_backend_slot_seconds(h.backend, o->backend_opts);
    } else {
        snprintf(h.error, sizeof h.error, "%s", d && d->msg[0] ? d->msg : amk_strerror(rc));
    }
    MPI_Send(&h, (int)sizeof h, MPI_BYTE, 0, TAG_HELLO, amk__mpi_comm);

    unsigned char *buf = NULL;
    size_t cap = 0;
    for (;;) {
        MPI_Status st;
        int count = 0;
        if (wait_from_root(&st) != MPI_SUCCESS)
            break; /* rank 0 is gone: nothing left to serve */
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((size_t)count > cap || !buf) {
            unsigned char *nb = realloc(buf, count > 0 ? (size_t)count : 1);
            if (!nb) {
                rc = amk_diag_set(d, AMK_ENOMEM, "mpi rank %d: out of memory", amk__mpi_rank);
                break;
            }
            buf = nb;
            cap = (size_t)count;
        }
        MPI_Recv(buf, count, MPI_BYTE, 0, st.MPI_TAG, amk__mpi_comm, MPI_STATUS_IGNORE);
        if (st.MPI_TAG == TAG_STOP)
            break;
        amk__mpi_chunk_head head;
        if (st.MPI_TAG != TAG_CHUNK || !h.ok || (size_t)count < sizeof head)
            continue;
        memcpy(&head, buf, sizeof head);
        if ((size_t)count != sizeof head + (size_t)head.n * sizeof(amk__mpi_chunk_item))
            continue; /* not a chunk this binary wrote */
        size_t n = head.n, len = sizeof head + n * sizeof(amk_verdict);
        unsigned char *reply = malloc(len);
        if (!reply) {
            rc = amk_diag_set(d, AMK_ENOMEM, "mpi rank %d: out of memory", amk__mpi_rank);
            break;
        }
        memcpy(reply, &head, sizeof head);
        serve_chunk(ev, sp, o, head.incumbent_us, (const amk__mpi_chunk_item *)(buf + sizeof head),
                    n, (amk_verdict *)(void *)(reply + sizeof head));
        /* Rank 0 gave up on this rank (a missed deadline) and is ending: a reply now could
         * block against a process that no longer receives. */
        if (!stop_pending())
            MPI_Send(reply, (int)len, MPI_BYTE, 0, TAG_VERDICTS, amk__mpi_comm);
        free(reply);
    }
    int bye = 0;
    MPI_Send(&bye, 1, MPI_INT, 0, TAG_BYE, amk__mpi_comm);
    free(buf);
    amk_space_free(sp);
    amk_evaluator_free(ev);
    return rc;
}


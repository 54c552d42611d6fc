/* Worker processes: a pool of fork()ed, long-lived children (no exec), each running one
 * handler function on length-prefixed request/response messages over pipes. A worker that
 * dies or passes its deadline is SIGKILLed, reaped and replaced; the request reports why,
 * with the child's captured stderr tail. Generic: no GPU header here. Used by the compile
 * service (one worker per core) and the run worker (one per GPU). Internal to the library. */
#ifndef AMK_WORKER_INT_H
#define AMK_WORKER_INT_H

#include "amk_common.h"

#include <stddef.h>
#include <stdint.h>

/* Largest message either way (a code object or a compiler log): 256 MiB. */
#define AMK_WORKER_MSG_MAX (256u * 1024u * 1024u)
/* Bytes of a failed worker's stderr kept in amk_worker_job.stderr_tail. */
#define AMK_WORKER_TAIL 4096

/* What a handler returns (in the child). */
enum {
    AMK_WORKER_CONTINUE = 0, /* response sent, wait for the next request */
    AMK_WORKER_RECYCLE = 1   /* response sent, then the child exits and is replaced (e.g. a
                                run worker whose GPU context took a sticky error) */
};

/* Runs in the child for every request. req/req_len is the request (borrowed, valid for the
 * call). The handler sets *resp to a malloc'd buffer of *resp_len bytes (or leaves it NULL
 * for an empty response); the pool frees it. It may abort, crash or hang: the parent copes.
 * Returns AMK_WORKER_CONTINUE or AMK_WORKER_RECYCLE. */
typedef int (*amk_worker_fn)(void *ud, const void *req, size_t req_len, void **resp,
                             size_t *resp_len);

typedef struct amk_worker_opts {
    const char *name;          /* for logs and messages: "compile", "run" (NULL = "worker") */
    int n_workers;             /* 0 = one per online core */
    uint64_t as_limit_bytes;   /* RLIMIT_AS per child; 0 = leave as inherited. Ignored in
                                  AddressSanitizer builds (the shadow map needs terabytes). */
    double cpu_limit_s;        /* CPU seconds per REQUEST (RLIMIT_CPU soft limit re-armed in
                                  the child before each request; SIGXCPU when exceeded);
                                  0 = none */
    /* Optional: runs once in each child right after fork, before the first request (e.g.
     * load a compiler library). Must not touch the parent's workers. */
    void (*child_init)(void *ud);
    /* Optional: called in the child while no request is waiting (the run worker keeps the
     * device loaded between jobs); returns 1 to be called again while the pipe stays empty,
     * 0 to block until the next request. A request waits at most one call. */
    int (*child_idle)(void *ud);
    void *ud;                  /* passed to child_init, child_idle and the handler */
} amk_worker_opts;

typedef struct amk_worker_pool amk_worker_pool;

/* Forks opts->n_workers children that run fn(opts->ud, ...) per request. Call it before the
 * process touches a GPU runtime. Ignores SIGPIPE in the process (a dead worker's pipe must
 * not kill the parent). Returns AMK_OK, AMK_ENOMEM, AMK_EINVAL or AMK_EWORKER (fork/pipe
 * failed; d says which); on error nothing is left running and *out is untouched. */
int amk__worker_pool_create(const amk_worker_opts *opts, amk_worker_fn fn,
                            amk_worker_pool **out, amk_diag *d);
/* Closes the request pipes (children exit on EOF), waits briefly, then SIGKILLs and reaps
 * whatever is left. Accepts NULL. */
void amk__worker_pool_free(amk_worker_pool *p);
int amk__worker_pool_size(const amk_worker_pool *p);
/* Pid of worker i (changes when the worker is replaced); -1 when none is running. */
int amk__worker_pool_pid(const amk_worker_pool *p, int i);
/* Number of workers replaced so far (killed, crashed, timed out, recycled). */
long amk__worker_pool_respawns(const amk_worker_pool *p);

/* One request/response. Fill the inputs; amk__worker_pool_run fills the outputs. */
typedef struct amk_worker_job {
    /* in */
    const void *req;
    size_t req_len;
    double timeout_s;          /* wall-clock limit from dispatch to full response; 0 = none */
    /* out */
    int rc;                    /* AMK_OK (response below), AMK_ETIMEDOUT (killed at the
                                  deadline), AMK_EWORKER (the child died or broke the
                                  protocol: see term_signal / exit_status / reason) */
    void *resp;                /* malloc'd response (NULL when empty or on failure); the
                                  caller frees it */
    size_t resp_len;
    int term_signal;           /* signal that ended the child (SIGABRT, SIGSEGV, SIGKILL for
                                  a timeout, SIGXCPU); 0 if none */
    int exit_status;           /* exit code when the child exited by itself; -1 if not */
    int worker;                /* index of the worker that ran it */
    int pid;                   /* its pid */
    double elapsed_s;          /* dispatch to response (or to the kill) */
    char reason[256];          /* on failure: "compile worker 3 (pid 1234) killed by signal 6
                                  (Aborted)"; empty on success */
    char stderr_tail[AMK_WORKER_TAIL]; /* last bytes the child wrote to stderr while it ran
                                  this request (kept on success too); NUL-terminated */
} amk_worker_job;

/* Runs n jobs in parallel across the pool (each on the next free worker, at most one per
 * worker at a time) and waits for all. The outputs of every job are overwritten (clear a job
 * that ran before, or its resp leaks). Per-job failures are reported in the job (rc, reason,
 * stderr_tail), the failed worker is killed, reaped and replaced, and the other jobs go on.
 * Returns AMK_OK, or AMK_EINVAL / AMK_EWORKER when the pool itself cannot go on (no worker
 * could be started: d says why; unfinished jobs then carry rc AMK_EWORKER).
 * Threads: one caller per pool at a time, but different pools may run in different threads
 * at once. A worker dies with the thread that forked it (PR_SET_PDEATHSIG), and a failed
 * worker is replaced by the thread that runs the pool: run a pool only from the main thread
 * or from a thread that outlives the pool. Create and free pools from the main thread. */
int amk__worker_pool_run(amk_worker_pool *p, amk_worker_job *jobs, size_t n, amk_diag *d);

/* Called in the thread of amk__worker_pool_run_cb as soon as job `job`'s outputs are final
 * (answered, failed, timed out, or could not be started), once per job, in completion
 * order. It must not use the pool. */
typedef void (*amk_worker_done_fn)(size_t job, void *ud);
/* amk__worker_pool_run, telling on_done (may be NULL) about each job as it finishes, so the
 * caller can act on early results while later ones still run. Same returns; when it returns
 * AMK_EINVAL for bad arguments, nothing ran and on_done was never called. */
int amk__worker_pool_run_cb(amk_worker_pool *p, amk_worker_job *jobs, size_t n,
                            amk_worker_done_fn on_done, void *ud, amk_diag *d);

/* Frees job->resp and resets the outputs so the job can be run again. */
void amk__worker_job_clear(amk_worker_job *job);

/* "Aborted", "Segmentation fault", ... (strsignal without the locale). */
const char *amk__signal_name(int sig);

#endif

/* Internal header of the `gpu` backend's parent side, shared by gpu_backend.c (devices: run
 * workers, their threads and queue, the job protocol, init) and gpu_pipeline.c (run cases
 * from the compiled spec, batches through the compile pool and the devices, verdicts,
 * re-measure), both in evaluator/backends/. No GPU header is included: the parent never
 * calls the GPU runtime nor the runtime compiler. The run worker (evaluator/gpu/) does not
 * include this: it sees the parent only through gpu_wire.h. */
#ifndef AMK_GPU_BACKEND_INT_H
#define AMK_GPU_BACKEND_INT_H

#include "compile/compile_int.h"
#include "gpu_wire.h"
#include "service/worker_int.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define AMK__GPU_MAX_DEVICES 64

struct amk__gpu_state;

/* One GPU: its run worker and the thread that feeds it (the thread also replaces the worker
 * when it dies, so the worker lives as long as the thread: see worker_int.h). */
typedef struct amk__gpu_dev {
    struct amk__gpu_state *st;
    int index;                 /* the runtime's device index */
    amk_worker_pool *run;      /* one worker, created by the main thread */
    amk__gpu_info info;        /* what its run worker found */
    int asked;                 /* info is final (guarded by st->mu once the thread runs) */
    int quit;                  /* the thread returns (guarded by st->mu) */
    int has_thread;
    pthread_t thread;
} amk__gpu_dev;

/* A config of the batch whose code is final, on its way to a device. */
typedef struct amk__run_slot {
    struct amk__run_slot *next; /* queue link */
    amk__run_job *job;         /* NULL when the job could not be set up (setup says why) */
    amk__run_result res;
    int gpu;                   /* device index that ran it */
    double run_s;              /* its job's wall time, sent to answered (checks + benchmark) */
    char setup[400];
} amk__run_slot;

typedef struct amk__gpu_state {
    amk__gpu_dev *devs[AMK__GPU_MAX_DEVICES]; /* ascending device index; devs[0] runs
                                                 re-measures */
    int ndev;
    amk_compiler *cc;
    amk__gpu_info info;        /* devs[0]'s: every device is this model */
    amk_target target;
    char device[64];
    double run_timeout_s;
    amk__bench_opts bench;
    uint64_t seed;             /* inputs of every check of this backend (see gpu_init) */
    int check_threads;         /* host threads of one run worker's check */
    char outputs_dir[200];     /* amk_backend_opts.outputs_dir; "" = external outputs are not
                                  written (then nothing judges them: see evaluator.c) */
    /* The device threads take run slots from a FIFO and count the ones they finish. */
    int sync_ready;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    amk__run_slot *head, *tail;
    size_t finished;
} amk__gpu_state;

/* Sends a job to a run worker and turns every outcome into a result: a timeout is
 * RUN_TIMEOUT, a dead worker RUN_ERROR (the pool has already respawned it). (gpu_backend.c) */
void amk__gpu_send_job(amk_worker_pool *run, double timeout_s, const amk__run_job *j,
                       amk__run_result *res);
/* The backend's evaluate (amk_backend_type.evaluate; gpu_pipeline.c). */
int amk__gpu_evaluate(void *state, const amk_config *const *cfgs, size_t n, amk_verdict *out);
/* Re-measures two configs of one kernel and shape interleaved (A B A B ... on the same
 * inputs, same regime, one window) in the run worker, so keep/revert can compare them
 * without drift between separate measurements. Both are compiled (cache hits when they
 * were evaluated before). state is the gpu backend's state (amk_backend_gpu). Fills
 * lat_us[2] (medians) and spread[2]. AMK_OK, or AMK_EBACKEND / AMK_ETIMEDOUT with d.
 * (gpu_pipeline.c) */
int amk__gpu_remeasure(void *state, const amk_config *a, const amk_config *b, double decide_gain,
                       double lat_us[2], double spread[2], double *sm_mhz, amk_diag *d);
/* Configs the backend holds in flight on ndev devices with a compile pool of jobs workers
 * (its parallelism): ndev * AMK__GPU_CONFIGS_PER_DEVICE, at most jobs, at least ndev.
 * (gpu_backend.c) */
#define AMK__GPU_CONFIGS_PER_DEVICE 8
int amk__gpu_parallelism_for(int ndev, int jobs);

#endif

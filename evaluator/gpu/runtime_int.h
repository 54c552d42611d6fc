/* Internal header of the run worker (gpu/runtime.c: the process's state, device query,
 * code objects, job dispatch; gpu/run_eval.c: host buffers and the reference cache, device
 * buffers, the correctness check and the benchmark of a job). Lives only in the child. */
#ifndef AMK_RUNTIME_INT_H
#define AMK_RUNTIME_INT_H

#include "gpu_int.h"

#include <stddef.h>
#include <stdint.h>

#define MOD_CACHE 32

/* Host buffers kept across jobs besides the reference cache: the candidate's outputs (the
 * benchmarked case's apart: compared while the next cases run) and the inputs of a
 * re-measure. */
enum { HOST_GOT, HOST_BENCH_GOT, HOST_MEASURE_IN, HOST_KINDS };

typedef struct amk__host_buf {
    void *p;
    size_t cap;
    int pinned;        /* from hipHostMalloc (else malloc) */
    unsigned long job; /* the last job that used it */
} amk__host_buf;

/* The reference cache. A case's inputs and its reference's outputs depend only on its
 * amk__ref_key (the backend gives every job of a run one seed), not on the candidate, so
 * the run worker keeps both on the host and skips fill, reference launch and download when
 * the next job checks the same case. One entry per case of a job at least (an entry in use
 * by the current job is never taken for another case). */
#define REF_SLOTS (AMK__RUN_MAX_CASES + 2)

typedef struct amk__ref_entry {
    int valid;         /* in and want hold exactly what key determines */
    uint64_t hash;
    amk__ref_key key;
    amk__host_buf in[AMK__RUN_MAX_BUFS];   /* inputs (in, inout), as filled from the seed */
    amk__host_buf want[AMK__RUN_MAX_BUFS]; /* reference outputs (out, inout), downloaded */
    /* The inputs again, on the device (large inputs only: run_eval.c "pristine"), or all
     * NULL: each check and benchmark copies them from here, not over the bus. */
    void *dev[AMK__RUN_MAX_BUFS];
    unsigned long job; /* the last job that used it */
} amk__ref_entry;

/* Everything the run worker keeps between jobs (one per process: the child's only GPU
 * context, its module cache, host buffers and reference cache). Defined in runtime.c. */
typedef struct amk__run_worker {
    int ready, device;
    hipStream_t stream;
    amk__gpu_info info;
    struct {
        uint64_t hash;
        size_t size;
        hipModule_t mod;
        unsigned long used;
    } mods[MOD_CACHE];
    int nmods;
    unsigned long tick;
    amk__host_buf host[HOST_KINDS][AMK__RUN_MAX_BUFS];
    amk__ref_entry refs[REF_SLOTS];
    unsigned long jobs;
} amk__run_worker;
extern amk__run_worker amk__rw;

/* The run's failure, built up while unwinding. */
typedef struct amk__run_ctx {
    amk__run_result *res;
    int recycle;
} amk__run_ctx;

/* The run's failure (status and reason) and its notes ("; "-separated), built up while
 * unwinding; the stage the worker is in, on stderr (the parent shows the last line of a hung
 * or dead worker). (runtime.c) */
void amk__rw_fail(amk__run_ctx *x, amk_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void amk__rw_note(amk__run_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void amk__rw_stage(const char *label, const char *what);
/* The module of a code object of the job, loaded or from the cache. (runtime.c) */
hipError_t amk__rw_module(const amk__run_code *code, hipModule_t *out);
/* After an error: is the context still usable? (runtime.c) */
int amk__rw_context_broken(void);
/* "message (hipErrorName)" in buf. (runtime.c) */
const char *amk__rw_errtext(hipError_t e, char *buf, size_t cap);

/* One set of device buffers and the argument arrays of both kernels over it. (run_eval.c) */
typedef struct amk__dev_set {
    void *ptr[AMK__RUN_MAX_BUFS];
    uint64_t ival[2][AMK__RUN_MAX_ARGS]; /* by-value arguments (little-endian: a 4-byte
                                            value in the low half) */
    void *argv[2][AMK__RUN_MAX_ARGS];
    /* The case's tensor maps encoded over ptr[] (encode_maps), passed by value. */
    unsigned long long tmap[AMK__RUN_MAX_TMAPS][16];
} amk__dev_set;

/* run_eval.c: past HOST_KEEP_MAX, drops the host buffers the last job did not use; the
 * host inputs of a case from the job's seed; the benchmark of a case; an EVAL job (every
 * case checked, then the bench case timed). */
void amk__rw_host_trim(void);
int amk__rw_make_inputs(const amk__run_job *j, const amk__run_case *c, uint64_t stream0,
                        amk__host_buf *hb, void **in, char *err, size_t cap);
/* The host inputs of case ci, when the reference cache holds them (an EVAL of the same
 * buffers, seed and case index): 1 and in[] set (NULL for outputs), else 0. A re-measure
 * made its own (50-140 ms a gemm_hopper 4096^3 pair). */
int amk__rw_cached_inputs(const amk__run_job *j, int ci, void **in);
int amk__rw_bench_case(const amk__run_job *j, const amk__run_case *c, hipFunction_t *fns,
                       const amk__run_kernel *const *ks, int nk, void *const *in,
                       void *const *dev_in, const amk__dev_set *first, amk__run_ctx *x);
void amk__rw_eval_job(const amk__run_job *j, const hipFunction_t *fref,
                      const hipFunction_t *fcand, int bench_ci, amk__run_ctx *x);

#endif

/* Shared internal header of the GPU layer (evaluator/gpu/): the only place GPU headers are
 * included. The layer is written against HIP runtime + hipRTC names; on NVIDIA,
 * vendors/cuda.h maps them onto the CUDA runtime (>= 12, library-loading API) and NVRTC.
 * Sections: vendor headers and compile (owner: compile), run worker and correctness (owner:
 * runworker). */
#ifndef AMK_GPU_INT_H
#define AMK_GPU_INT_H

#include "amk_evaluator.h"
#include "compile_int.h"
#include "worker_int.h"

#if defined(AMK_GPU_CUDA)
#include "vendors/cuda.h"
#elif defined(AMK_GPU_HIP)
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>
#else
#error "evaluator/gpu/ is built only with a GPU vendor (AMK_GPU_CUDA or AMK_GPU_HIP)"
#endif

/* ======================================================================================
 * Compile (owner: compile) — evaluator/gpu/compile.c
 * The compile service API (amk_compiler, amk_compile_unit, amk_code, the cache, and the
 * amk__rtc_* functions a compile worker runs) is declared in evaluator/compile_int.h,
 * included above; the run worker loads amk_code.image with hipModuleLoadData.
 * ====================================================================================== */

/* Runtime-compiler result as text: "HIPRTC_ERROR_COMPILATION" / NVRTC's own string. */
const char *amk__rtc_strerror(hiprtcResult r);

/* ======================================================================================
 * Run worker and correctness (owner: runworker)
 * ====================================================================================== */
/* Files: runtime.c (the run worker: the only process that creates a GPU context; wire
 * format; device query; load, check, bench), check.c (element types, inputs, poison,
 * tolerance; host only), bench.c (event timing, cold L2, statistics), backend_gpu.c (the
 * `gpu` backend in the parent: compile pool + run worker, jobs, verdicts, re-measure). */

#include <stdint.h>

/* Vendor differences that are not renames (the CUDA versions live in vendors/cuda.h). */
#if defined(AMK_GPU_HIP)
#include <stdio.h>
#include <string.h>
/* Compute target of device dev as the compiler names it: "gfx90a" (features dropped). */
static inline hipError_t amk__gpu_arch_name(int dev, char *out, size_t cap)
{
    hipDeviceProp_t p;
    hipError_t e = hipGetDeviceProperties(&p, dev);
    if (e == hipSuccess) {
        snprintf(out, cap, "%s", p.gcnArchName);
        char *colon = strchr(out, ':');
        if (colon)
            *colon = '\0';
    }
    return e;
}
/* AMD has no opt-in: LDS per block is fixed (64 KiB); larger requests cannot launch. */
static inline hipError_t amk__gpu_set_dynamic_shared(hipFunction_t f, int bytes)
{
    (void)f;
    return bytes <= 65536 ? hipSuccess : hipErrorInvalidValue;
}
/* hipLaunchHostFunc is declared but not exported by HIP 5.2: hipStreamAddCallback is. */
typedef struct amk__host_call {
    void (*fn)(void *);
    void *ud;
} amk__host_call;
static inline void amk__hip_host_call(hipStream_t s, hipError_t e, void *p)
{
    (void)s;
    (void)e;
    ((amk__host_call *)p)->fn(((amk__host_call *)p)->ud);
}
static inline hipError_t amk__gpu_host_func(hipStream_t s, amk__host_call *call)
{
    return hipStreamAddCallback(s, amk__hip_host_call, call, 0);
}
static inline hipError_t amk__gpu_kernel_resources(hipFunction_t f, int *regs, int *local_bytes)
{
    hipError_t e = hipFuncGetAttribute(regs, HIP_FUNC_ATTRIBUTE_NUM_REGS, f);
    if (e == hipSuccess)
        e = hipFuncGetAttribute(local_bytes, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
    return e;
}
#endif

/* ---------- element types, inputs, tolerance (check.c; host only) ---------------------- */
enum {
    AMK__DT_F32, AMK__DT_F16, AMK__DT_BF16, AMK__DT_FP8E4M3, AMK__DT_INT8, AMK__DT_F64,
    AMK__DT_I32, AMK__DT_COUNT
};
int amk__dtype_from_name(const char *name); /* spec dtype name -> AMK__DT_*; -1 unknown */
const char *amk__dtype_name(int dt);
size_t amk__dtype_size(int dt);
double amk__dtype_eps(int dt);              /* 2^-23 for f32 ...; 1 for integers */
int amk__dtype_is_float(int dt);
double amk__dtype_get(int dt, const void *base, int64_t i);      /* element i as double */
void amk__dtype_put(int dt, void *base, int64_t i, double v);    /* rounds to nearest even */
uint16_t amk__f32_to_f16(float f);
float amk__f16_to_f32(uint16_t h);
uint16_t amk__f32_to_bf16(float f);
float amk__bf16_to_f32(uint16_t b);
uint8_t amk__f32_to_fp8e4m3(float f);
float amk__fp8e4m3_to_f32(uint8_t b);

enum { AMK__INIT_UNIFORM, AMK__INIT_NORMAL, AMK__INIT_POSITIVE, AMK__INIT_ZERO };
int amk__init_from_name(const char *name); /* NULL = uniform; -1 unknown */
/* Threads the check uses on a large buffer: AMK_CHECK_THREADS when set (1..64), else the
 * cores this process may use, at most 16. Buffers below 64Ki elements use one. */
int amk__check_threads(void);
/* The same for one of `sharers` processes checking at once (the run workers of a multi-GPU
 * backend): AMK_CHECK_THREADS when set (it is per process), else the cores divided by
 * sharers, at most 16, at least 1. amk__check_threads() is amk__check_threads_for(1). */
int amk__check_threads_for(int sharers);
/* Fills count elements deterministically from (seed, stream); never a zero element, except
 * for init "zero" (inout workspace buffers only, enforced by the spec loader). Element i is a
 * pure function of (seed, stream, i) (counter-based splitmix64; Box-Muller per pair of
 * elements for "normal"), so the bytes do not depend on the thread count. */
void amk__check_fill(void *dst, int dt, int64_t count, int init, uint64_t seed, uint64_t stream);
/* The same with an explicit thread count (tests, benchmarks): identical bytes for any. */
void amk__check_fill_threads(void *dst, int dt, int64_t count, int init, uint64_t seed,
                             uint64_t stream, int threads);
/* 1 when element i still has the poison pattern (every byte 0xFF: NaN for float types). */
int amk__check_poisoned(int dt, const void *base, int64_t i);

typedef struct amk__tolerance {
    double rtol, atol;
} amk__tolerance;
/* rtol = scale*(2*eps(dt) + 4*eps(f32)*sqrt(reduction)); atol = scale*(eps(dt) +
 * 4*eps(f32)*sqrt(reduction))*max|ref|, or atol_override when it is not NAN. */
void amk__tolerance_for(int dt, double reduction, double rtol_scale, double atol_override,
                        double max_abs_ref, amk__tolerance *out);

enum {
    AMK__CMP_OK, AMK__CMP_MISMATCH, AMK__CMP_NONFINITE, AMK__CMP_UNWRITTEN,
    AMK__CMP_REF_NONFINITE
};
typedef struct amk__compare {
    int64_t count, bad, unwritten, nonfinite;
    int64_t worst;          /* index of the reported element, -1 when all pass */
    int kind;               /* AMK__CMP_* of the reported element */
    double got, want, diff, limit, max_ref;
    amk__tolerance tol;
} amk__compare;
/* 1 when every element passes |got-want| <= atol + rtol*|want| (finite, written). The worst
 * element: the first unwritten, else the first non-finite, else the largest diff/tol (the
 * lowest index among equals), so *out does not depend on the thread count. */
int amk__check_compare(int dt, const void *got, const void *want, int64_t count,
                       double reduction, double rtol_scale, double atol_override,
                       amk__compare *out);
int amk__check_compare_threads(int dt, const void *got, const void *want, int64_t count,
                               double reduction, double rtol_scale, double atol_override,
                               int threads, amk__compare *out);
void amk__compare_describe(const amk__compare *c, const char *buf, char *out, size_t cap);

/* ---------- benchmark statistics and stopping rule (bench.c; host only) ---------------- */
typedef struct amk__bench_opts {
    int cold;               /* 1: every timed launch starts with a cold L2 (rotation/flush) */
    int reps_min, reps_max; /* timed launches per kernel */
    double window_s;        /* the upper cap: reps * time <= window_s (reps_min regardless) */
    double max_s;           /* cap of the timed work per kernel (reps >= 3 regardless) */
    double warmup_s;        /* untimed warm-up per kernel (at least 2 launches) */
    int64_t mem_cap;        /* device bytes the rotating input sets may take */
    /* Adaptive stop (amk__bench_should_stop): before the window is spent, timing ends once
     * the median's 95% CI is within +-ci_rel (after reps_min and min_window_s of timed
     * work), or, when beat_us is set, once the CI's lower bound is above beat_us * (1 +
     * screen_margin) (after reps_min): such a config cannot win keep/revert. */
    double min_window_s;    /* timed work before a CI stop */
    double ci_rel;          /* 0: no CI stop (the full window, as before) */
    double beat_us;         /* the incumbent's latency; NAN = no screening */
    double screen_margin;   /* INFINITY = never screen (AMK_BENCH_SCREEN=0) */
} amk__bench_opts;
/* Defaults (cold, 20..2000 reps, 100 ms window cap, 1 s cap, 5 ms warm-up, 4 GiB, CI stop
 * at +-1% after >= 10 ms, screening margin 10%, no incumbent), then the environment:
 * AMK_BENCH_WINDOW_MS, AMK_BENCH_MIN_WINDOW_MS, AMK_BENCH_MIN_REPS, AMK_BENCH_WARMUP_MS,
 * AMK_BENCH_CI (a fraction; 0 = off), AMK_BENCH_SCREEN=0 (no screening), AMK_BENCH_WARM=1
 * (warm L2). */
void amk__bench_opts_default(amk__bench_opts *o);

/* Why a timing ended: the median was pinned (ci), the config is out of the race (beaten),
 * the window ran out (window: reps = window / time, or reps_min), or reps_max / max_s did
 * (cap). */
enum { AMK__STOP_NONE, AMK__STOP_CI, AMK__STOP_BEATEN, AMK__STOP_WINDOW, AMK__STOP_CAP };
const char *amk__bench_stop_name(int stop); /* "ci", "beaten", "window", "cap", "none" */

typedef struct amk__bench_stats {
    double median_us, q1_us, q3_us, min_us, max_us, mean_us;
    double spread;          /* (q3 - q1) / median */
    double ci_lo_us, ci_hi_us; /* distribution-free 95% CI of the median; NAN under 8 reps */
    int reps;               /* timed launches */
    int sets;               /* input sets rotated (1 = none) */
    int flushed;            /* an L2 flush ran before every timed launch */
    int stop;               /* AMK__STOP_*: why the timing ended */
} amk__bench_stats;
/* Median, quartiles (linear interpolation), spread and median CI of n samples in
 * microseconds (sorted in place). n == 0 leaves NANs. */
void amk__bench_summarize(double *samples_us, int n, amk__bench_stats *out);
/* 95% CI of the median of n sorted samples: the order statistics at 1-based ranks
 * floor(n/2 - 0.98 sqrt(n)) and ceil(n/2 + 0.98 sqrt(n)) + 1. Returns 0 (NANs) when those
 * ranks fall outside 1..n (n < 8). */
int amk__bench_median_ci(const double *sorted, int n, double *lo, double *hi);
/* Reps at most for a kernel of est_ms per launch: ceil(window / est_ms) within reps_min ..
 * reps_max, lowered so that reps * est_ms <= max_s, at least 3. *why = AMK__STOP_WINDOW or
 * AMK__STOP_CAP (reps_max or max_s bound it). */
int amk__bench_reps_cap(double est_ms, const amk__bench_opts *o, int *why);
/* Launches to queue next, done of cap taken (1..64): without an adaptive stop, chunks of 64;
 * with one, first what a stop needs at least (reps_min, then min_window_s), then steps of
 * max(16 launches, 1 ms). */
int amk__bench_next_chunk(int done, int cap, double est_ms, const amk__bench_opts *o);
/* The stopping rule over n sorted samples (us) worth timed_ms: AMK__STOP_BEATEN,
 * AMK__STOP_CI or AMK__STOP_NONE (keep going); fills the median CI (NANs when n < 8). */
int amk__bench_should_stop(const double *sorted_us, int n, double timed_ms,
                           const amk__bench_opts *o, double *ci_lo, double *ci_hi);
/* sorted[0..n) is sorted and sorted[n..n+add) holds new samples: sorts them in (O(n + add
 * log add)); scratch holds n doubles. */
void amk__bench_merge(double *sorted, int n, int add, double *scratch);
/* The row note's words for how a timing ended: "stopped: CI +-0.42% after 37 reps",
 * "stopped: >= 1.23x the incumbent after 20 reps", "stopped: 100 ms window after 370 reps,
 * CI +-0.20%", "stopped: cap after 2000 reps, CI +-0.10%". */
void amk__bench_stop_note(const amk__bench_stats *s, const amk__bench_opts *o, char *out,
                          size_t cap);
/* Input sets to rotate so that between two uses of one set the other sets move at least
 * twice the L2: 1 + ceil(2*l2/footprint), at most 64 and at most mem_cap/footprint; *flush
 * = 1 when that is not enough (an explicit L2 flush is needed). */
int amk__bench_sets(int64_t footprint, int64_t l2_bytes, int64_t mem_cap, int *flush);

/* ---------- run worker wire format (runtime.c) ----------------------------------------- */
#define AMK__RUN_MAX_BUFS 16
#define AMK__RUN_MAX_ARGS 32
#define AMK__RUN_MAX_CODES 4
#define AMK__RUN_MAX_CASES 6

enum { AMK__RUN_OP_QUERY = 1, AMK__RUN_OP_EVAL = 2, AMK__RUN_OP_REMEASURE = 3 };
enum { AMK__ROLE_IN = 1, AMK__ROLE_OUT = 2, AMK__ROLE_INOUT = 3 };

typedef struct amk__run_buf {
    char name[AMK_NAME_MAX];
    int dtype;              /* AMK__DT_* */
    int role;               /* AMK__ROLE_* */
    int init;               /* AMK__INIT_* (inputs) */
    int64_t count;          /* elements, >= 1 */
    double reduction;       /* tolerance reduction length (outputs) */
} amk__run_buf;

typedef struct amk__run_arg {
    int buf;                /* >= 0: device pointer of that buffer; -1: the int32 value */
    int32_t value;
} amk__run_arg;

typedef struct amk__run_kernel {
    int code;               /* index into the job's code objects; -1 = none */
    char entry[AMK__ENTRY_MAX]; /* as the code object names it (amk_code.entry) */
    amk_launch launch;
    int nargs;
    amk__run_arg args[AMK__RUN_MAX_ARGS];
} amk__run_kernel;

typedef struct amk__run_case {
    char label[160];        /* canonical shape text, for reasons */
    int nbufs;
    amk__run_buf bufs[AMK__RUN_MAX_BUFS];
    double rtol_scale;
    double atol;            /* NAN = derived from max|ref| */
    amk__run_kernel ref, cand;
    int bench;              /* 1: the benchmarked case (the config's own shape) */
} amk__run_case;

typedef struct amk__run_code {
    const void *image;      /* borrowed; points into the request in the worker */
    size_t size;
    uint64_t hash;          /* amk_hash64 of the image: the worker's module-cache key */
} amk__run_code;

/* EVAL: check every case (reference, then the poisoned candidate, compare), then time the
 * bench case. REMEASURE: no check; time cases[0].cand and `other` interleaved. */
typedef struct amk__run_job {
    int op;
    int device;
    uint64_t seed;          /* inputs of case c, buffer b: amk__check_fill(seed, stream
                               c * AMK__RUN_MAX_BUFS + b) */
    int check_threads;      /* host threads of fill and compare; 0 = amk__check_threads() */
    amk__bench_opts bench;
    int ncodes;
    amk__run_code codes[AMK__RUN_MAX_CODES];
    int ncases;
    amk__run_case cases[AMK__RUN_MAX_CASES];
    amk__run_kernel other;
} amk__run_job;

typedef struct amk__run_result {
    int status;             /* amk_status */
    int checked;            /* cases that passed the check */
    char reason[512];
    char notes[512];
    char regime[16];        /* "cold_l2" | "warm_l2" | "" */
    int nstats;             /* 0, 1 (EVAL) or 2 (REMEASURE: cand, other) */
    amk__bench_stats stats[2];
} amk__run_result;

/* What the run worker finds (OP_QUERY). ok = 0: error says why (the runtime's message). */
typedef struct amk__gpu_info {
    int ok;
    char error[512];
    int device, count;
    char name[64];
    char arch[32];          /* "sm_90" / "gfx90a" */
    int sm_count, warp, max_threads, max_smem, max_smem_optin, smem_per_sm;
    int regs_per_block, regs_per_sm, max_blocks_per_sm, max_threads_per_sm;
    int max_grid_x, max_grid_yz;
    int64_t l2_bytes, total_mem;
    int clock_khz, mem_clock_khz, bus_width;
    int driver_version, runtime_version;
} amk__gpu_info;

/* Serialises a job for the worker (one malloc'd block: header, the struct, the images).
 * AMK_ENOMEM or AMK_EINVAL (too large). */
int amk__run_job_encode(const amk__run_job *j, void **out, size_t *len);
/* Parses a request in place: the code images point into buf. AMK_EPARSE when malformed. */
int amk__run_job_decode(const void *buf, size_t len, amk__run_job *out);
int amk__run_query_encode(int device, void **out, size_t *len);

/* Everything that determines the inputs of case ci of an EVAL job and its reference's
 * outputs: the seed and the case's stream, the reference code object (by content: hash and
 * size, not its index in the job), entry, launch and arguments, and the buffers (name,
 * dtype, role, init, count). Nothing of the candidate, the label or the tolerance. The run
 * worker keeps a case's host inputs and reference outputs across jobs under this key.
 * Built zeroed field by field, so two keys are equal exactly when memcmp says so. */
typedef struct amk__ref_key { /* members ordered so that there is no padding */
    uint64_t seed, stream;
    uint64_t code_hash, code_size;
    char entry[AMK__ENTRY_MAX];
    int64_t grid[3], block[3], shared_bytes;
    int nargs;
    amk__run_arg args[AMK__RUN_MAX_ARGS]; /* value 0 for a buffer argument */
    int nbufs;
    struct {
        int64_t count;
        char name[AMK_NAME_MAX];
        int dtype, role, init, zero;
    } bufs[AMK__RUN_MAX_BUFS];
} amk__ref_key;
/* Fills *key for case ci of j (a decoded or built job: ci < ncases, its ref.code valid) and
 * returns its amk_hash64. */
uint64_t amk__ref_key_make(const amk__run_job *j, int ci, amk__ref_key *key);

/* The run worker's handler (worker_int.h amk_worker_fn): ud is unused. Answers
 * OP_QUERY with an amk__gpu_info, OP_EVAL/OP_REMEASURE with an amk__run_result. Returns
 * AMK_WORKER_RECYCLE after a sticky error (the context is unusable; the pool respawns). */
int amk__run_worker_handle(void *ud, const void *req, size_t req_len, void **resp,
                           size_t *resp_len);

/* ---------- the benchmark loops (bench.c; run worker only) ----------------------------- */
/* One kernel ready to launch over rotating sets of buffers: argv[s] is the argument array
 * (pointers to the values) for set s. */
typedef struct amk__bench_kernel {
    hipFunction_t fn;
    amk_launch launch;
    void **argv[64];
} amk__bench_kernel;

/* Times k[0..nk-1] (nk = 1, or 2 interleaved) over nsets prepared sets on stream s; when
 * flush_buf is not NULL, flush_bytes of it are overwritten before every timed launch.
 * Chunks of launches (amk__bench_next_chunk) until every kernel meets the stopping rule or
 * the cap is reached. Fills stats[i]. Returns hipSuccess or the first error (msg says which
 * call). */
hipError_t amk__bench_run(hipStream_t s, const amk__bench_kernel *k, int nk, int nsets,
                          void *flush_buf, size_t flush_bytes, const amk__bench_opts *o,
                          amk__bench_stats *stats, char *msg, size_t cap);

/* ---------- the gpu backend (backend_gpu.c; parent) ------------------------------------ */
/* Re-measures two configs of one kernel and shape interleaved (A B A B ... on the same
 * inputs, same regime, one window) in the run worker, so keep/revert can compare them
 * without drift between separate measurements. Both are compiled (cache hits when they
 * were evaluated before). state is the gpu backend's state (amk_backend_gpu). Fills
 * lat_us[2] (medians) and spread[2]. AMK_OK, or AMK_EBACKEND / AMK_ETIMEDOUT with d. */
int amk__gpu_remeasure(void *state, const amk_config *a, const amk_config *b,
                       double lat_us[2], double spread[2], amk_diag *d);
/* The device the backend found (after a successful init). */
const amk__gpu_info *amk__gpu_backend_info(void *state);
/* Configs the backend holds in flight on ndev devices with a compile pool of jobs workers
 * (its parallelism): ndev * AMK__GPU_CONFIGS_PER_DEVICE, at most jobs, at least ndev. */
#define AMK__GPU_CONFIGS_PER_DEVICE 8
int amk__gpu_parallelism_for(int ndev, int jobs);

#endif

/* Host-only part of the GPU layer, shared by the parent (evaluator/gpu_pipeline.c,
 * evaluator/gpu_backend.c) and the run worker (evaluator/gpu/): element types, inputs,
 * tolerance, benchmark statistics, the run-job wire format, and the gpu backend's internal
 * API. No GPU header is included here (those are in gpu/gpu_int.h, which includes this). */
#ifndef AMK_GPU_RUN_INT_H
#define AMK_GPU_RUN_INT_H

#include "amk_evaluator.h"
#include "gpu_layer.h"

#include <stddef.h>
#include <stdint.h>

/* ---------- element types, inputs, tolerance (gpu_check.c; host only) ------------------ */
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

/* ---------- benchmark statistics and stopping rule (gpu_bench_stats.c; host only) ------- */
#define AMK__BENCH_CHUNK_MAX 64 /* timed launches queued behind one gate, per kernel */
int amk__bench_cmp_double(const void *a, const void *b); /* qsort order of doubles */
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

/* ---------- run worker wire format (gpu_wire.c) ---------------------------------------- */
#define AMK__RUN_MAX_BUFS 16
#define AMK__RUN_MAX_ARGS 32
#define AMK__RUN_MAX_CODES 4
#define AMK__RUN_MAX_CASES 6
#define AMK__RUN_MAX_TMAPS 16 /* a spec has at most 8; a re-measure carries two configs' */

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
    int buf;                /* >= 0: device pointer of that buffer; -1: the int32 value;
                               <= -2: the case's tensor map AMK__RUN_ARG_TMAP_INDEX(buf), by
                               value (128 bytes) */
    int32_t value;
} amk__run_arg;
#define AMK__RUN_ARG_TMAP(m) (-2 - (m))
#define AMK__RUN_ARG_TMAP_INDEX(buf) (-2 - (buf))

/* A tensor map of a case, encoded by the run worker for every buffer set (its address is
 * part of it). Member order: no padding (amk__ref_key holds these). */
typedef struct amk__run_tmap {
    int64_t dims[AMK_TMAP_MAX_RANK];        /* elements, innermost first */
    int64_t strides[AMK_TMAP_MAX_RANK - 1]; /* bytes, of dims 1..rank-1 */
    int64_t box[AMK_TMAP_MAX_RANK];
    char name[AMK_NAME_MAX];
    int buf;                /* the case's buffer it maps */
    int dtype;              /* AMK__DT_* */
    int rank, swizzle, l2_promotion;
    int oob;                /* 0: out-of-bounds loads read zero (the only mode) */
} amk__run_tmap;

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
    int nmaps;
    amk__run_tmap maps[AMK__RUN_MAX_TMAPS];
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
 * size, not its index in the job), entry, launch and arguments (with the tensor maps they
 * name), and the buffers (name, dtype, role, init, count). Nothing of the candidate, the
 * label or the tolerance. The run worker keeps a case's host inputs and reference outputs
 * across jobs under this key.
 * Built zeroed field by field, so two keys are equal exactly when memcmp says so. */
typedef struct amk__ref_key { /* members ordered so that there is no padding */
    uint64_t seed, stream;
    uint64_t code_hash, code_size;
    char entry[AMK__ENTRY_MAX];
    int64_t grid[3], block[3], cluster[3], shared_bytes;
    int nargs;
    amk__run_arg args[AMK__RUN_MAX_ARGS]; /* value 0 for a buffer or tensor-map argument */
    int nbufs;
    struct {
        int64_t count;
        char name[AMK_NAME_MAX];
        int dtype, role, init, zero;
    } bufs[AMK__RUN_MAX_BUFS];
    amk__run_tmap maps[AMK__RUN_MAX_TMAPS]; /* those the reference's args name; others zero */
} amk__ref_key;
/* Fills *key for case ci of j (a decoded or built job: ci < ncases, its ref.code valid) and
 * returns its amk_hash64. */
uint64_t amk__ref_key_make(const amk__run_job *j, int ci, amk__ref_key *key);

/* The run worker's handler (worker_int.h amk_worker_fn): ud is unused. Answers
 * OP_QUERY with an amk__gpu_info, OP_EVAL/OP_REMEASURE with an amk__run_result. Returns
 * AMK_WORKER_RECYCLE after a sticky error (the context is unusable; the pool respawns). */
int amk__run_worker_handle(void *ud, const void *req, size_t req_len, void **resp,
                           size_t *resp_len);

/* ---------- the gpu backend (gpu_backend.c, gpu_pipeline.c; parent) ---------------- */
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

/* The run worker's contract (evaluator/gpu/runtime.c implements the handler): the run-job
 * and device-query wire format between the parent (gpu_backend.c, gpu_pipeline.c, here in
 * evaluator/backends/) and a run worker, encoded and decoded by gpu_wire.c, and the
 * reference-cache key. No GPU header; nothing of the evaluator's own internals. */
#ifndef AMK_GPU_WIRE_H
#define AMK_GPU_WIRE_H

#include "amk_space_defs.h"      /* amk_launch, AMK_NAME_MAX, AMK_TMAP_MAX_RANK */
#include "gpu/gpu_layer.h"       /* AMK__ENTRY_MAX */
#include "numeric/numeric_int.h" /* AMK__DT_*, amk__bench_opts, amk__bench_stats */

#include <stddef.h>
#include <stdint.h>

/* ---------- run worker wire format (gpu_wire.c) ---------------------------------------- */
#define AMK__RUN_MAX_BUFS 16
#define AMK__RUN_MAX_ARGS 32
#define AMK__RUN_MAX_CODES 4
#define AMK__RUN_MAX_CASES 6
#define AMK__RUN_MAX_TMAPS 16
#define AMK__RUN_PATH_MAX 256 /* absolute path of a data file (SPEC.md "data", "answer") */ /* a spec has at most 8; a re-measure carries two configs' */

enum { AMK__RUN_OP_QUERY = 1, AMK__RUN_OP_EVAL = 2, AMK__RUN_OP_REMEASURE = 3 };
enum { AMK__ROLE_IN = 1, AMK__ROLE_OUT = 2, AMK__ROLE_INOUT = 3, AMK__ROLE_SCRATCH = 4 };

/* A buffer whose contents the run worker makes, uploads and caches (in, inout), and one it
 * downloads and compares with the reference (out, inout); scratch is neither. */
static inline int amk__role_has_input(int role)
{
    return role == AMK__ROLE_IN || role == AMK__ROLE_INOUT;
}

static inline int amk__role_is_output(int role)
{
    return role == AMK__ROLE_OUT || role == AMK__ROLE_INOUT;
}

typedef struct amk__run_buf {
    char name[AMK_NAME_MAX];
    int dtype;              /* AMK__DT_* */
    int role;               /* AMK__ROLE_* */
    int init;               /* AMK__INIT_* (inputs) */
    int64_t count;          /* elements, >= 1 */
    double reduction;       /* tolerance reduction length (outputs) */
    double fill;            /* AMK__INIT_CONSTANT: every element's value */
    int memory;             /* AMK__MEM_*: constant = also copied into symbol before launches */
    char symbol[AMK_NAME_MAX]; /* the __constant__ symbol ("" unless AMK__MEM_CONSTANT) */
    char data[AMK__RUN_PATH_MAX];   /* "": none; else the file the input's bytes come from */
    char answer[AMK__RUN_PATH_MAX]; /* "": none; else the file of the output's expected bytes,
                                       which replace the reference's output in the compare */
    int external;           /* an output judged outside amk (spec "check": "external"): not
                               compared; the bench case's is written to the job's outputs */
} amk__run_buf;
enum { AMK__MEM_GLOBAL = 0, AMK__MEM_CONSTANT = 1 };

typedef struct amk__run_arg {
    int buf;                /* >= 0: device pointer of that buffer; -1: a value (below);
                               <= -2: the case's tensor map AMK__RUN_ARG_TMAP_INDEX(buf), by
                               value (128 bytes) */
    int32_t value;          /* bytes == 0: the int32 value */
    uint64_t bits;          /* bytes 4 or 8: the value's bytes (a 4-byte one in the low half) */
    int32_t bytes;          /* 0 (int32 `value`), 4 or 8 (a scalar: f32, u32, f64, i64, u64) */
    int32_t reserved;       /* zero: no padding in amk__ref_key */
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

/* The vendor-library peer of a bench case (spec field "peer"), timed interleaved with the
 * candidate. op: AMK__PEER_NONE, or amk_peer_op's values. */
enum { AMK__PEER_NONE = 0, AMK__PEER_GEMM = 1, AMK__PEER_COPY = 2 };
typedef struct amk__run_peer {
    int op;
    int a, b, c;            /* buffer indices (copy: a source, c destination; b -1) */
    int64_t m, n, k;        /* gemm: C[m,n] = A[m,k] B[k,n], row-major */
} amk__run_peer;

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
    amk__run_peer peer;     /* the bench case of an EVAL job only; op NONE otherwise */
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
    /* EVAL: "" or a path prefix: after the bench case's check run, each external output's
     * bytes go to the file <outputs><buffer name> (raw, as downloaded), for the judge that
     * the evaluator calls in the parent (amk_backend_opts.verify). */
    char outputs[AMK__RUN_PATH_MAX];
} amk__run_job;

typedef struct amk__run_result {
    int status;             /* amk_status */
    int checked;            /* cases that passed the check */
    char reason[512];
    char notes[512];
    char regime[16];        /* "cold_l2" | "warm_l2" | "" */
    int nstats;             /* 0, 1 (EVAL) or 2 (REMEASURE: cand, other) */
    amk__bench_stats stats[2];
    /* The peer (EVAL with a peer): its name ("cublas", "copy") and stats when it was timed
     * beside the candidate; peer_why says why not when the case had one. */
    int peer_timed;
    char peer[32];
    char peer_why[200];
    amk__bench_stats peer_stats;
    /* Where the job's time went, by phase since the last job ended ("keeper idle 12.0 ms,
     * modules 0.2 ms, ..."): the parent logs it at debug level. */
    char profile[400];
    /* Of the job's time, the set-up that later jobs reuse (gpu_int.h amk__rw_setup_add):
     * the device's warm-up from cold, a reference made for the cache, the peer's library
     * opened. Not the config's cost (amk_verdict.cost_s leaves it out; setup_s has it). */
    double setup_ms;
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
    int energy_counter;     /* the device's energy counter reads (objectives energy, edp) */
    char energy_why[200];   /* why not, when it does not */
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
 * name), and the buffers (name, dtype, role, init and fill value, count, constant-memory
 * symbol). Nothing of the candidate, the
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
        int dtype, role, init, memory;
        double fill;
        char symbol[AMK_NAME_MAX];
        uint64_t data, answer; /* amk_hash64 of the paths (0: none); files do not change
                                  during a run */
    } bufs[AMK__RUN_MAX_BUFS];
    amk__run_tmap maps[AMK__RUN_MAX_TMAPS]; /* those the reference's args name; others zero */
} amk__ref_key;
/* Fills *key for case ci of j (a decoded or built job: ci < ncases; without a valid
 * ref.code, as in a re-measure, the reference part stays empty) and returns its amk_hash64. */
uint64_t amk__ref_key_make(const amk__run_job *j, int ci, amk__ref_key *key);

/* The run worker's handler (worker_int.h amk_worker_fn): ud is unused. Answers
 * OP_QUERY with an amk__gpu_info, OP_EVAL/OP_REMEASURE with an amk__run_result. Returns
 * AMK_WORKER_RECYCLE after a sticky error (the context is unusable; the pool respawns). */
int amk__run_worker_handle(void *ud, const void *req, size_t req_len, void **resp,
                           size_t *resp_len);
/* The run worker's idle hook (amk_worker_opts.child_idle): keeps the device under the last
 * sustained job's peer while no job waits (gpu/keep_loaded.c). 1 while it does. */
int amk__run_worker_idle(void *ud);

#endif

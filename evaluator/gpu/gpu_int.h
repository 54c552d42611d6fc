/* Shared internal header of the GPU layer (evaluator/gpu/): the only place GPU headers are
 * included. The layer is written against HIP runtime + hipRTC names; on NVIDIA,
 * vendors/cuda.h maps them onto the CUDA runtime (>= 12, library-loading API) and NVRTC.
 * Sections: vendor headers and compile (owner: compile), run worker and correctness (owner:
 * runworker). */
#ifndef AMK_GPU_INT_H
#define AMK_GPU_INT_H

/* From evaluator/: only the contracts this layer implements, and the numeric leaf. */
#include "gpu_layer.h"            /* the runtime compiler (amk__rtc_*) */
#include "backends/gpu_wire.h"    /* run jobs and results, the run worker's handler */
#include "service/worker_int.h"   /* the run worker is a worker-pool handler */
#include "numeric/numeric_int.h"  /* element types, check, timing statistics */

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
 * The amk__rtc_* functions a compile worker runs are declared in evaluator/gpu/gpu_layer.h,
 * included above; the compile service (amk_code, ...) stays in evaluator/compile/compile_int.h,
 * which this layer does not include; the run worker loads a code object with
 * hipModuleLoadData.
 * ====================================================================================== */

/* Runtime-compiler result as text: "HIPRTC_ERROR_COMPILATION" / NVRTC's own string. */
const char *amk__rtc_strerror(hiprtcResult r);
/* 1 and the node's path in out when devdir ("/dev") has a device node of a GPU of vendor
 * ("nvidia": nvidiaN, "amd": kfd), else 0: tells "no GPU here" from "driver too old". */
int amk__gpu_node_present(const char *devdir, const char *vendor, char *out, size_t cap);

/* ======================================================================================
 * Run worker and correctness (owner: runworker)
 * ====================================================================================== */
/* Files: runtime.c (the run worker: the only process that creates a GPU context; device
 * query; code objects; job dispatch), run_eval.c (its buffers, check, bench), bench.c (event
 * timing, cold L2). Host only, outside gpu/: ../gpu_wire.h + ../gpu_wire.c (the run-job wire
 * format, the reference-cache key), ../numeric/ (element types, inputs, poison, tolerance;
 * the benchmark's options, statistics, stopping rule); the parent's side, which this layer
 * does not include: ../gpu_backend.c (devices, run workers, the job protocol) and
 * ../gpu_pipeline.c (run cases, batches, verdicts, re-measure). */

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
/* Thread-block clusters and TMA tensor maps are NVIDIA (sm_90+) features: a spec using them
 * is refused on AMD before compile (amk_spec_compile_arch); these only back that up. */
static inline hipError_t amk__gpu_launch_cluster(hipFunction_t f, const unsigned grid[3],
                                                 const unsigned block[3],
                                                 const unsigned cluster[3], unsigned shared,
                                                 hipStream_t stream, void **args)
{
    (void)f, (void)grid, (void)block, (void)cluster, (void)shared, (void)stream, (void)args;
    return hipErrorNotSupported;
}
static inline hipError_t amk__gpu_allow_large_clusters(hipFunction_t f)
{
    (void)f;
    return hipErrorNotSupported;
}
static inline int amk__gpu_tensor_map_encode(void *out, const char *dtype, int rank, void *base,
                                             const uint64_t *dims, const uint64_t *strides,
                                             const uint32_t *box, int swizzle,
                                             int l2_promotion, char *err, size_t cap)
{
    (void)out, (void)dtype, (void)rank, (void)base, (void)dims, (void)strides, (void)box;
    (void)swizzle, (void)l2_promotion;
    snprintf(err, cap, "tensor maps (TMA) are an NVIDIA feature: not supported on AMD");
    return -1;
}
#endif

/* Launches fn with l's geometry on stream s: the extended (cluster) launch when l asks for
 * a cluster of more than one block. */
static inline hipError_t amk__gpu_launch(hipFunction_t fn, const amk_launch *l, hipStream_t s,
                                         void **argv)
{
    if (l->cluster[0] * l->cluster[1] * l->cluster[2] > 1) {
        const unsigned g[3] = {(unsigned)l->grid[0], (unsigned)l->grid[1], (unsigned)l->grid[2]};
        const unsigned b[3] = {(unsigned)l->block[0], (unsigned)l->block[1],
                               (unsigned)l->block[2]};
        const unsigned c[3] = {(unsigned)l->cluster[0], (unsigned)l->cluster[1],
                               (unsigned)l->cluster[2]};
        return amk__gpu_launch_cluster(fn, g, b, c, (unsigned)l->shared_bytes, s, argv);
    }
    return hipModuleLaunchKernel(fn, (unsigned)l->grid[0], (unsigned)l->grid[1],
                                 (unsigned)l->grid[2], (unsigned)l->block[0],
                                 (unsigned)l->block[1], (unsigned)l->block[2],
                                 (unsigned)l->shared_bytes, s, argv, NULL);
}

/* ---------- the benchmark loops (bench.c; run worker only) ----------------------------- */
/* One kernel ready to launch over rotating sets of buffers: argv[s] is the argument array
 * (pointers to the values) for set s. */
typedef struct amk__bench_kernel {
    hipFunction_t fn;       /* NULL: a library call, run(ctx, set, stream) (a peer) */
    amk_launch launch;
    void **argv[64];
    hipError_t (*run)(void *ctx, int set, hipStream_t s);
    void *ctx;
} amk__bench_kernel;

/* Times k[0..nk-1] (nk = 1, or 2 interleaved) over nsets prepared sets on stream s; when
 * flush_buf is not NULL, flush_bytes of it are overwritten before every timed launch. In
 * o->regime: sustained first runs the kernels until their time and the SM clock settle
 * (within o->settle_max_s); burst leaves the device idle o->burst_gap_s before each chunk.
 * The device is read around every timed chunk (the watcher's latest readings).
 * Chunks of launches (amk__bench_next_chunk) until every kernel meets the stopping rule or
 * the cap is reached. Fills stats[i]. Returns hipSuccess or the first error (msg says which
 * call). */
hipError_t amk__bench_run(hipStream_t s, const amk__bench_kernel *k, int nk, int nsets,
                          void *flush_buf, size_t flush_bytes, const amk__bench_opts *o,
                          amk__bench_stats *stats, char *msg, size_t cap);
/* The device was under load from start to end (amk_now_s() times) outside amk__bench_run:
 * the sustained regime's warm-up counts it (keep_loaded.c). */
void amk__bench_loaded(double start, double end);
/* Where a run worker's job spends its time, by phase (the result's profile, which the
 * parent logs with AMK_LOG=debug): amk__rw_phase closes the running phase now and starts
 * `what` (NULL: none);
 * amk__rw_phase_text writes "name ms, ..." of the phases since the last call and resets.
 * (phases.c) */
void amk__rw_phase(const char *what);
void amk__rw_phase_text(char *buf, size_t cap);
/* Set-up a job does that later jobs reuse, so that it is no config's cost (the result's
 * setup_ms): a cold device's warm-up to the sustained state, reference outputs made for
 * the reference cache, the vendor library opened for the peer. amk__rw_setup_add counts
 * ms of it; amk__rw_setup_take returns the count since the last take and resets it.
 * (phases.c) */
void amk__rw_setup_add(double ms);
double amk__rw_setup_take(void);

/* ---------- the device's state (observe.c; run worker only) ---------------------------- */
/* Opens the management library for device (once per process): 1 when readings will come,
 * else 0 and why (no library, no match for the device). */
int amk__obs_open(int device, char *why, size_t cap);
/* One reading now (NAN fields when the observer is not open). */
void amk__obs_read(amk__obs_sample *s);
/* A watcher thread reads the device continuously while on (amk__obs_watch(1) .. (0)), so
 * the timing thread never waits for a reading: amk__obs_latest gives its newest one (NAN
 * fields before the first; a reading now when not watching). */
void amk__obs_watch(int on);
void amk__obs_latest(amk__obs_sample *s);
/* The watcher's readings taken after time `after` (amk_now_s), oldest first, at most max of
 * the last 32: how many. */
int amk__obs_taken_after(double after, amk__obs_sample *out, int max);

/* ---------- the vendor-library peer (peer.c; run worker only) -------------------------- */
/* A peer ready to time over nsets buffer sets: the operation, its library handle and each
 * set's device pointers. */
typedef struct amk__peer {
    amk__run_peer op;
    int dt_a, dt_b, dt_c;   /* AMK__DT_* of its buffers */
    int64_t copy_bytes;
    void *ptr[64][3];       /* per set: a, b, c */
} amk__peer;
/* Prepares p for case c on stream s: 1 and its name ("cublas", "copy"), or 0 and why it
 * cannot be timed here (no library, an unsupported dtype). */
int amk__peer_prepare(amk__peer *p, const amk__run_case *c, hipStream_t s, char *name,
                      size_t name_cap, char *why, size_t why_cap);
/* The bench callback (amk__bench_kernel.run) of a prepared peer. */
hipError_t amk__peer_run(void *peer, int set, hipStream_t s);

/* ---------- keeping the device loaded between jobs (keep_loaded.c; run worker only) ------ */
/* After a sustained benchmark that timed a peer: keeps running that peer (p's operation on
 * copies of its set-0 buffers, bytes[a, b, c] each, 0 when absent) whenever the worker
 * waits for a job (amk__run_worker_idle), launch_us being one peer launch. Disarms itself
 * when a buffer cannot be had. */
void amk__keep_arm(const amk__peer *p, const size_t bytes[3], double launch_us);
/* Stops keeping the device loaded and frees the buffers (a burst job; a failure). */
void amk__keep_disarm(void);
/* An evaluation's start: stops keeping the device loaded; the buffers stay for the next
 * amk__keep_arm of the same sizes while they take at most a quarter of the free memory
 * (else they are freed, so the keeper never holds memory a job needs). */
void amk__keep_pause(void);
/* A job that left the keeper its buffers (a re-measure) has ended: keep loading from now. */
void amk__keep_resume(void);

#endif

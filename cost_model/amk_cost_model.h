/* cost_model: device targets, the roofline floor (a lower bound that never exceeds the true
 * time of a correct kernel), a predicted time that ranks candidates (tile traffic, occupancy,
 * wave quantization), resource feasibility, measured ceilings and calibration.
 * Never includes a GPU header: the gpu backend fills a target from the device it finds. */
#ifndef AMK_COST_MODEL_H
#define AMK_COST_MODEL_H

#include "amk_space_defs.h"

/* Peak-rate units a spec's cost.unit can name. */
#define AMK_UNIT_MAP(XX) XX(SIMT_F32, "simt_f32") XX(TF32, "tf32") XX(F16, "f16") \
    XX(BF16, "bf16") XX(FP8, "fp8") XX(INT8, "int8") XX(NONE, "none")
typedef enum amk_unit {
#define AMK__UNIT_ENUM(n, s) AMK_UNIT_##n,
    AMK_UNIT_MAP(AMK__UNIT_ENUM)
#undef AMK__UNIT_ENUM
    AMK_UNIT_COUNT
} amk_unit;
AMK_API int amk_unit_parse(const char *name, amk_unit *out);
AMK_API const char *amk_unit_name(amk_unit u);

typedef struct amk_target {
    char name[64];      /* "H100 SXM 80GB" */
    char key[32];       /* short id: "h100", "h200", "a100", "mi300x", "mi250x" */
    char vendor[16];    /* "nvidia" | "amd" */
    char arch[16];      /* "sm_90", "gfx942" */
    amk_limits limits;
    double bw_peak;     /* bytes/s, datasheet */
    double bw_measured; /* bytes/s from `amk calibrate` or a documented measurement; 0 = none */
    double peak[AMK_UNIT_COUNT];     /* flop/s, datasheet dense; 0 = unit absent */
    double measured[AMK_UNIT_COUNT]; /* flop/s achieved ceilings; 0 = none */
    double launch_overhead_us;       /* fixed per-kernel cost used by the prediction only */
    /* Memory-system figures the prediction uses for specs that declare the memory terms of
     * SPEC.md (inflight_bytes, latency_rounds, ...); never the floor. */
    double mem_latency_us;  /* global-memory round trip under load (Little's law) */
    double sync_us;         /* one shuffle / barrier / shared-memory step of a reduction */
    double sector_bytes;    /* smallest memory transaction: a shorter access still pays it */
} amk_target;

AMK_API int amk_target_count(void);
AMK_API const amk_target *amk_target_at(int i);
/* Finds by key ("h100"), arch ("sm_90": first match) or a device name as the runtime
 * reports it ("NVIDIA H100 80GB HBM3"): case-insensitive substring match on keys. */
AMK_API const amk_target *amk_target_find(const char *name);
/* The target used when none is named: $AMK_TARGET, else "h100". */
AMK_API const amk_target *amk_target_default(void);
/* The target a command runs for: name (its --target), else $AMK_TARGET, else "h100". An
 * unknown name is AMK_ENOENT with "unknown target 'x' (known: ...)", saying "from
 * $AMK_TARGET" when that is where it came from. */
AMK_API int amk_target_resolve(const char *name, const amk_target **out, amk_diag *d);
/* The target a user named: name (a --target), else $AMK_TARGET when set, else NULL. A
 * backend is told a target only when one was named: otherwise it tunes for its own device's
 * (sim: the recorded device's, gpu: the one it finds, model: the default). */
AMK_API const char *amk_target_named(const char *name);
/* Measured ceilings files (amk_ceilings_load, _save, _path, amk_target_with_ceilings) are
 * read and written by evaluator/ (amk_evaluator.h): JSON stays out of the cost model. */

/* Resource feasibility: the spec's arch requirement ("requires", amk_spec_compile_arch),
 * threads per block, dynamic shared memory (incl. stages) per block,
 * estimated registers per block and per thread, grid limits, resident blocks per SM.
 * AMK_OK or AMK_ERESTRICT with a reason naming the resource and both numbers. */
AMK_API int amk_cost_feasible(const amk_config *c, const amk_target *t, amk_diag *d);

/* The size of sp on target t (`amk space`): raw points, valid configs (restrictions and
 * launch limits) and feasible ones (amk_cost_feasible too). Enumerated when exact or when
 * the space has at most 2e6 raw points; else estimated from AMK_SPACE_SAMPLES uniform raw
 * samples with a fixed seed. Also says whether the spec's default config is usable there. */
#define AMK_SPACE_SAMPLES 200000
typedef struct amk_space_counts {
    double raw, valid, feasible;   /* valid/feasible rounded when estimated */
    int exact;                     /* 0: estimated from `samples` samples */
    long samples;
    char default_id[17];
    int default_ok;                /* the default config is valid and feasible */
    char default_reason[1024];     /* why not */
} amk_space_counts;
AMK_API int amk_space_size_on(const amk_space *sp, const amk_target *t, int exact,
                              amk_space_counts *out, amk_diag *d);

typedef struct amk_estimate {
    double bound_us;      /* roofline floor: never above the true time of a correct kernel */
    double predicted_us;  /* ranking estimate */
    double compute_us;    /* components of the prediction, kept for calibration */
    double memory_us;     /* max(traffic over the achievable bandwidth, latency chain) */
    double latency_us;    /* the latency chain: waves x a block's memory round trips + syncs */
    double occupancy;     /* resident warps / max warps, 0..1 */
    int64_t blocks;       /* grid size */
    int blocks_per_sm;    /* resident blocks per SM limited by threads, smem, regs */
    double waves;         /* blocks / (sm_count * blocks_per_sm) rounded up */
} amk_estimate;

/* Floor and prediction for one config on one target. The floor uses the larger of
 * datasheet and measured ceilings (so it stays a lower bound); the prediction uses measured
 * ceilings when present. */
AMK_API int amk_cost_estimate(const amk_config *c, const amk_target *t, amk_estimate *out,
                              amk_diag *d);
/* 100 * bound / latency (how close to the roofline a measured latency is). */
AMK_API double amk_cost_pct_of_roofline(double bound_us, double latency_us);

/* Calibration: least-squares fit (GSL multifit) of measured = c0 + c1*compute + c2*memory
 * over trials, plus the Spearman rank correlation of predicted vs measured before and after. */
typedef struct amk_calibration {
    size_t n;
    double c[3];
    double chisq, r2;
    double spearman_before, spearman_after;
} amk_calibration;
AMK_API int amk_cost_calibrate(const double *compute_us, const double *memory_us,
                               const double *predicted_us, const double *measured_us, size_t n,
                               amk_calibration *out, amk_diag *d);

/* Fits the cost model (amk_cost_calibrate) to the measured `ok` rows of results files
 * (cost_model/calibrate.c, which reads them through amk_tsv_read):
 * each row's config is rebuilt from kernel/shape/params through the registry and estimated
 * on target t. kernel NULL = every kernel. Rows whose kernel is unknown or whose config no
 * longer parses are counted in *skipped (may be NULL), not fatal. */
AMK_API int amk_calibrate_fit(const amk_registry *reg, const char *const *paths, size_t n_paths,
                              const char *kernel, const amk_target *t, amk_calibration *out,
                              size_t *skipped, amk_diag *d);

/* ---------- measured ceilings files (the JSON edge of cost_model's targets) ------------- */
/* Overrides measured ceilings from a calibration file written by amk_ceilings_save. */
AMK_API int amk_ceilings_load(amk_target *t, const char *path, amk_diag *d);
AMK_API int amk_ceilings_save(const amk_target *t, const char *path, amk_diag *d);
/* Default per-device ceilings path: <cache dir>/ceilings/<key>.json. */
AMK_API void amk_ceilings_path(const amk_target *t, char *out, size_t cap);
/* Copies t into out and applies the ceilings stored at amk_ceilings_path when that file
 * exists. A malformed file is logged as a warning and ignored (out keeps t's numbers). */
AMK_API void amk_target_with_ceilings(const amk_target *t, amk_target *out);
/* A target as `amk devices` lists it, as JSON text (malloc'd; NULL when out of memory):
 * {key, name, vendor, arch, limits, bandwidth_gbps, bandwidth_measured_gbps, peak_tflops,
 * measured_tflops, launch_overhead_us, calibrated_here}. */
AMK_API char *amk_target_json(const amk_target *t, int calibrated);

#endif

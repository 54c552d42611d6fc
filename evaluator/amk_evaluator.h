/* evaluator: the pipeline validate -> feasibility -> roofline screen -> backend
 * (compile -> correctness -> benchmark -> floor guard), producing one verdict per config.
 * Backends are type objects behind one vtable: `model` (cost model only, latency_kind
 * predicted), `sim` (replays a results.tsv, latency_kind replayed), `gpu` (real hardware,
 * latency_kind measured: evaluator/backends/gpu_backend.c over the GPU layer in
 * evaluator/gpu/). The search loop only sees this header; the results record is not in it
 * (a verdict's row: amk_verdict_to_row in amk_search.h). */
#ifndef AMK_EVALUATOR_H
#define AMK_EVALUATOR_H

#include "amk_cost_model.h"
#include "amk_space_defs.h"

typedef struct amk_verdict {
    amk_status status;
    int valid;                 /* passed schema, choices, restrictions, feasibility */
    int correct;               /* 1 passed, 0 failed, -1 not checked (model/sim/rejected) */
    char config_id[17];
    double latency_us;         /* NAN unless status is ok */
    amk_latency_kind latency_kind;
    double spread;             /* IQR / median of the measurement; NAN when none */
    double predicted_us;       /* NAN when not computed (rejected) */
    double bound_us;           /* roofline floor; NAN when not computed */
    double pct_of_roofline;    /* 100 * bound / latency; NAN when no latency */
    double compile_ms;         /* NAN when nothing compiled */
    int cache_hit;             /* 1 when the code object came from the compile cache, 0 when
                                  compiled now, -1 when nothing was compiled */
    uint64_t seed;             /* input seed of the correctness check; 0 when none */
    char device[64];           /* device or target the verdict is about */
    char regime[16];           /* "cold_l2" | "warm_l2" | "" */
    char reason[512];          /* why rejected / failed: first lines of a compiler log etc. */
    char notes[1024];          /* anything else worth telling (log paths, replay source) */
    double cost_s;             /* seconds the trial cost. sim: as recorded (a Kernel Tuner
                                  file's compile + verification + benchmark + framework,
                                  a results file's cost_s), the loop's simulated clock.
                                  gpu: its share of the wall clock (compile / compile
                                  workers + run job / devices). NAN otherwise (model,
                                  rejected configs, rows recorded without it). The search
                                  weighs candidates by it (strategy evolve). */
    double setup_s;            /* gpu: seconds of set-up this trial's job did that later
                                  trials reuse (a cold device's warm-up to the sustained
                                  state, reference outputs made for the cache, the vendor
                                  library opened), share of the devices as cost_s; not in
                                  cost_s, which would charge it to whichever config ran
                                  first. 0 when none; NAN when no job ran or elsewhere. */
    /* The device while it was measured (gpu backend; NAN/"" when not observed) and the
     * vendor-library peer timed in the same job. */
    char clock_regime[16];     /* "sustained" | "burst" | "" */
    double sm_mhz, sm_mhz_min, sm_mhz_max, mem_mhz; /* SM clock mean/min/max, memory clock */
    double power_w, temp_c;    /* mean power over the timed chunks, highest temperature */
    char throttle[96];         /* clock-event reasons seen, "" none */
    double energy_uj;          /* per launch, uJ: the energy counter's advance over a window
                                  of the config's own load when energy_ticks > 0 (objective
                                  energy or edp), else an estimate: mean power x median */
    char peer[32];             /* "" when no peer was timed */
    double peer_us, vs_peer;   /* the peer's median; peer_us / latency_us */
    double energy_window_ms;   /* the counter window, tick to tick; NAN when none */
    int energy_ticks;          /* counter advances in it; 0 when none (amk_energy_noise) */
} amk_verdict;

/* Sets every field to its "nothing known" value (NAN numbers, correct and cache_hit -1,
 * status not_recorded, valid 0, empty text). */
AMK_API void amk_verdict_init(amk_verdict *v);
/* JSON text per space_defs/schema/verdict.schema.json (unformatted). Caller frees with
 * free(); NULL when out of memory. */
AMK_API char *amk_verdict_to_json(const amk_verdict *v);
typedef struct amk_backend_opts {
    const char *target;        /* target key/name for model & sim ("h100"); NULL = default */
    const char *sim_path;      /* sim: file to replay: a results.tsv, or a Kernel Tuner
                                  cachefile or T4 file (gzipped or not); amk_evaluator_create
                                  fills it from the name "sim:FILE" */
    const amk_spec *kernel;    /* sim: the spec whose params key a Kernel Tuner file's
                                  configs (amk_evaluator_create fills it); borrowed */
    const amk_shape *shape;    /* sim: with kernel, the shape of the replayed configs */
    const char *sim_objective; /* sim, Kernel Tuner files: the field replayed instead of the
                                  recorded time ("GFLOP/s", "GFLOP/s:max"); NULL = time */
    int jobs;                  /* gpu: compile workers (0 = one per core) */
    double compile_timeout_s;  /* gpu: cap of the adaptive compile timeout (0 = default) */
    double run_timeout_s;      /* gpu: per-kernel hang limit (0 = default) */
    int device_index;          /* gpu: the device whose model is tuned when devices is NULL
                                  (default 0) */
    const int *devices;        /* gpu: device indices evaluated together, all of one model
                                  (one run worker each, one shared compile pool); NULL = every
                                  visible device of device_index's model */
    int ndevices;
    const char *cache_dir;     /* gpu: compile cache (NULL = default) */
    uint64_t seed;             /* gpu: seed of the correctness checks' inputs (0 = from the
                                  clock and pid); one per backend instance */
    const char *regime;        /* gpu: the clock/power regime of every timing, "sustained"
                                  or "burst"; NULL = $AMK_BENCH_REGIME, else sustained */
    amk_objective objective;   /* what the search minimises: energy and edp need an energy
                                  per launch from a counter window (gpu: the device's energy
                                  counter, else AMK_ENOENERGY; sim: rows that carry one, else
                                  AMK_ENOENERGY; model: AMK_ENOENERGY) */
    /* Outputs checked outside amk (spec buffers with "check": "external"; Kernel Tuner's
     * verify= in the Python tune_kernel). gpu: the run worker writes each such output of a
     * config's own shape, after its check run, to <outputs_dir>/<config_id>.<buffer> (raw
     * bytes; at most 199 bytes of folder). NULL: not written. */
    const char *outputs_dir;
    /* The judge of those outputs, called by amk_evaluator_run on its calling thread for
     * every config whose run passed amk's own checks (verdict correct = 1), before the
     * verdict is returned, with prefix "<outputs_dir>/<config_id>." (the files are removed
     * after the call). Returns 1: correct; 0: wrong (the verdict becomes `wrong`, its
     * latency dropped, why in its reason); < 0: it could not judge (`run_error`, why).
     * NULL with such buffers: those configs are `run_error` ("cannot check"): nothing
     * judges their outputs, so no latency is reported. */
    int (*verify)(const amk_config *c, const char *prefix, char *why, size_t cap, void *ud);
    void *verify_ud;
} amk_backend_opts;

/* A GPU as the gpu backend sees it. Devices of one model (same name and arch) share one
 * results key (the row's device column is the name) and can be tuned together. */
typedef struct amk_gpu_device {
    int index;                 /* the runtime's device index: what --devices takes */
    char name[64];             /* "NVIDIA H100 80GB HBM3" */
    char arch[32];             /* "sm_90" */
} amk_gpu_device;

typedef struct amk_backend_type {
    int api_version;           /* first, always: 1 */
    const char *name;          /* "model", "sim", "gpu" */
    size_t state_size;
    /* AMK_ENODEV when the backend cannot run here (no device); d says why. */
    int (*init)(void *state, const amk_backend_opts *opts, amk_diag *d);
    /* Evaluates n valid, feasible, unscreened configs; fills out[i] for each (status,
     * latency, ...). Fields predicted_us/bound_us are already set by the pipeline.
     * Returns AMK_OK; an error only when the backend itself broke (it then fills nothing). */
    int (*evaluate)(void *state, const amk_config *const *cfgs, size_t n, amk_verdict *out);
    /* The target the backend tunes for (limits for the space, ceilings for the model). */
    const amk_target *(*target)(void *state);
    const char *(*device)(void *state); /* device name for rows: "NVIDIA H100 80GB HBM3" */
    void (*clear)(void *state);
    /* Optional, NULL when unsupported (model, sim): times configs a and b of one kernel and
     * shape interleaved in one window (A B A B ...) so drift hits both alike; fills the
     * medians lat_us[2], in spread[2] how precisely each is known (the half-width of its 95%
     * CI as a fraction of it; its IQR / median when the CI is unknown), and *sm_mhz with the
     * mean SM clock seen over that window (NAN when not read). Used by keep/revert when a gap is close. With
     * decide_gain > 0 the timing may end as soon as the ratio b / a is known to be below
     * 1 - decide_gain, within 1 +- decide_gain or above 1 + decide_gain (the keep rule's
     * answers at that margin); 0: both medians pinned to a +-0.25% CI, or the window. */
    int (*remeasure)(void *state, const amk_config *a, const amk_config *b, double decide_gain,
                     double lat_us[2], double spread[2], double *sm_mhz, amk_diag *d);
    /* Optional, NULL = 1: how many configs the backend usefully holds in flight at once
     * (the gpu backend: 8 per device, so that compiles overlap runs, at most its compile
     * workers, at least one per device; the mpi backend: the total over its ranks). The
     * loop's default batch is twice this, so that every device stays busy. */
    int (*parallelism)(void *state);
    /* Optional, NULL = it can evaluate any config: 1 when the backend can answer config_id
     * with something other than not_recorded (sim: the file holds a row for it). */
    int (*recorded)(void *state, const char *config_id);
    /* Optional, NULL = 0: 1 when the backend's verdicts carry the recorded cost of each trial
     * (cost_s), so the loop runs its time limit on a simulated clock instead of the wall
     * clock (sim replaying a Kernel Tuner file, or a results file whose rows all carry
     * cost_s). */
    int (*simulated_clock)(void *state);
    /* Optional, NULL = ignored: the latency to beat for the next evaluate call (NAN = none),
     * set by amk_evaluator_run before each evaluate. The gpu backend stops timing a config
     * early once it is clearly slower (its row note says so); its latency stays a measured
     * median, over fewer repetitions. */
    void (*set_incumbent)(void *state, double incumbent_us);
    /* Optional, NULL = 1 s plus $AMK_SIM_DELAY_MS (what model and sim take): how long one
     * config may take, with these options, on an evaluator working through its
     * parallelism's worth at once. Deadlines that span several evaluators (an MPI rank's
     * share of a batch) are built from it (amk_backend_slot_seconds). No state needed. */
    double (*slot_seconds)(const amk_backend_opts *opts);
    /* Optional, NULL = the backend has no devices to choose among: the devices that answer,
     * as amk_gpu_devices says, for --devices and one search per device model
     * (amk_device_groups). No state needed. */
    int (*devices)(amk_gpu_device *out, int cap, int *n, amk_diag *d);
} amk_backend_type;

AMK_API extern const amk_backend_type *const amk_backends[]; /* NULL-terminated */

/* AMK_OK when name is a backend spelling: model, sim:FILE, gpu (even in a build without
 * it: creating the evaluator says why it cannot run), auto; else AMK_EINVAL saying what
 * is wrong. */
AMK_API int amk_backend_check_name(const char *name, amk_diag *d);
/* AMK_OK when name is a measurement regime ("sustained", "burst") or NULL (the default),
 * else AMK_EINVAL naming it and the choices. */
AMK_API int amk_regime_check_name(const char *name, amk_diag *d);
/* --objective TEXT into o: "time", "energy" or "edp" is what the search minimises
 * (o->objective; o->sim_objective NULL); any other text names the field a Kernel Tuner file
 * replays (o->sim_objective = text, o->objective time). NULL: time. Returns o->objective. */
AMK_API amk_objective amk_backend_opts_objective(amk_backend_opts *o, const char *text);
/* How long one config may take on backend `name` ("gpu", "sim", "model", a backend type's
 * name) with these options: its slot_seconds, else the default (see amk_backend_type). */
AMK_API double amk_backend_slot_seconds(const char *name, const amk_backend_opts *opts);
/* Every visible GPU that answers, in index order, each asked by a run worker of its own (in
 * parallel; this process never loads the driver). Fills min(cap, *n) entries; *n = how many
 * answer. AMK_ENODEV when none does (d says why, in the words `amk_evaluator_create("gpu")`
 * would use), AMK_EUNSUPPORTED in a build without a GPU vendor layer. */
AMK_API int amk_gpu_devices(amk_gpu_device *out, int cap, int *n, amk_diag *d);

/* GPUs of one model: one search each (the model is the results key). */
#define AMK_MAX_DEVICES 64
typedef struct amk_device_group {
    int idx[AMK_MAX_DEVICES];
    int n;
    char name[64], arch[32];
} amk_device_group;
/* Splits the devices `want` (nwant of them; nwant == 0: every visible GPU) into model groups
 * for the gpu and auto backends; g has room for AMK_MAX_DEVICES groups. *ng = 0 when there is
 * nothing to split (a backend without devices, one device named on the gpu backend (not
 * asked), or none answers: creating the evaluator then says why). "auto" groups the devices of the first backend that has any. AMK_EINVAL naming the device when a listed one does not answer. */
AMK_API int amk_device_groups(const char *backend, const int *want, int nwant, amk_device_group *g,
                              int *ng, amk_diag *d);
/* A list of devices as --devices takes it: "all" (*n = 0: every visible GPU) or distinct
 * indices "0,1,3" (0..1023, at most AMK_MAX_DEVICES, into out). AMK_EINVAL saying what is
 * wrong with the text. */
AMK_API int amk_devices_parse(const char *text, int *out, int *n, amk_diag *d);
/* The groups for a message: "devices 0,1: NAME; device 2: NAME2" (cut at cap). */
AMK_API void amk_device_groups_describe(const amk_device_group *g, int ng, char *out, size_t cap);
AMK_API const amk_backend_type *amk_backend_find(const char *name);
/* The GPU side of this build as `amk devices` reports it: vendor built ("cuda", "hip" or
 * NULL), the GPUs that answer with the target the gpu backend tunes each for, or why none
 * does (n = 0, reason set). AMK_ENOMEM only; "no GPU" is an answer, not an error. */
typedef struct amk_gpu_status_info {
    const char *vendor;
    int n;
    amk_gpu_device devices[AMK_MAX_DEVICES];
    const amk_target *targets[AMK_MAX_DEVICES];
    char reason[1100];
} amk_gpu_status_info;
AMK_API int amk_gpu_status(amk_gpu_status_info *out);

typedef struct amk_evaluator amk_evaluator;

/* The file part of a "sim:FILE" backend string (empty for "sim:"), NULL when backend is
 * not one: the one place that reads the "sim:" spelling. */
AMK_API const char *amk_backend_sim_file(const char *backend);
/* 1 when backend is "sim:FILE" and FILE (gzipped or not) opens as JSON: a Kernel Tuner
 * cachefile or T4 file, whose faults are bad input, not a results file's. */
AMK_API int amk_backend_sim_foreign(const char *backend);
/* For a sim:FILE backend: AMK_OK when FILE records kernel at shape (or cannot be read: the
 * backend reports that when it opens it), else AMK_ENOTCOVERED naming the shapes it covers.
 * AMK_OK for any other backend. */
AMK_API int amk_sim_check_shape(const char *backend, const char *kernel, const char *shape,
                                amk_diag *d);

/* backend: "model", "sim:FILE", "gpu", or "auto" (gpu when a device answers; else sim when
 * a recorded sweep for kernel+shape exists in space_defs/data; else model; it logs which and
 * why). For "auto", kernel/shape pick the recorded sweep and may be NULL. */
AMK_API int amk_evaluator_create(const char *backend, const amk_backend_opts *opts,
                                 const amk_spec *kernel, const amk_shape *shape,
                                 amk_evaluator **out, amk_diag *d);
AMK_API void amk_evaluator_free(amk_evaluator *ev);

/* `amk loop`'s evaluator in whichever place of an MPI job this process is (evaluator/ranks.c;
 * amk_mpi.h has the MPI side). backend..shape as for amk_evaluator_create; rank_timeout_s is
 * the deadline of one chunk (0 = from the backend). */
typedef struct amk_mpi_opts {
    const char *backend;                 /* as for amk_evaluator_create ("sim:FILE", ...) */
    const amk_backend_opts *backend_opts; /* may be NULL */
    const amk_spec *kernel;              /* borrowed; outlives the evaluator */
    const amk_shape *shape;
    double rank_timeout_s;               /* deadline of one chunk; 0 = from the backend:
                                            generous for gpu, short for model/sim */
} amk_mpi_opts;
typedef enum amk_rank_role {
    AMK_RANK_NONE,   /* MPI failed to start: the error is that */
    AMK_RANK_ALONE,  /* no MPI job (or no MPI in this build): amk_evaluator_create's */
    AMK_RANK_ZERO,   /* rank 0 of a job: the `mpi` evaluator (amk_mpi_evaluator_create) */
    AMK_RANK_WORKER  /* another rank: it has served rank 0 until told to stop; *out = NULL */
} amk_rank_role;
/* Creates the evaluator for this process's role, said in *role whether or not it fails. A
 * worker that could not serve returns AMK_OK too (rank 0 excluded it and went on), with d's
 * message "rank N: why" for a warning. In an AMK_MPI build the first call also registers
 * amk_mpi_finalize to run at exit with the exit status (on_exit), after rank 0 has freed
 * its evaluator, which stops the workers. */
AMK_API int amk_evaluator_create_ranked(const amk_mpi_opts *o, amk_evaluator **out,
                                        amk_rank_role *role, amk_diag *d);
/* Ranks of the MPI job this process belongs to: 1 outside an MPI launcher, when MPI fails
 * to start, or in a build without MPI. */
AMK_API int amk_evaluator_world_size(void);
AMK_API const char *amk_evaluator_backend(const amk_evaluator *ev); /* name actually in use */
AMK_API const amk_target *amk_evaluator_target(const amk_evaluator *ev);
AMK_API const char *amk_evaluator_device(const amk_evaluator *ev);
AMK_API int amk_evaluator_parallelism(const amk_evaluator *ev); /* backend's, >= 1 */
/* 1 when the backend can answer config_id (see amk_backend_type.recorded); 1 for backends
 * that evaluate anything. amk_evaluator_restricted: 1 when some configs may be unanswerable. */
AMK_API int amk_evaluator_recorded(const amk_evaluator *ev, const char *config_id);
AMK_API int amk_evaluator_restricted(const amk_evaluator *ev);
/* 1 when the verdicts of ev carry recorded trial costs (see amk_backend_type.simulated_clock). */
AMK_API int amk_evaluator_simulated_clock(const amk_evaluator *ev);

/* Runs the pipeline on n configs of one space. incumbent_us is the latency to beat (NAN when
 * there is none): a config whose floor exceeds it by more than screen_margin is `screened`;
 * the backend gets it too (set_incumbent) to cut the timing of a clearly slower config short.
 * Every out[i] is filled; failures are statuses, not errors. Returns AMK_OK, AMK_EINVAL, or
 * the backend's error when the backend itself broke: the configs it was handed then read
 * not_recorded with the reason (rejected/screened ones are still decided). */
AMK_API int amk_evaluator_run(amk_evaluator *ev, const amk_space *sp, const amk_config *const *cfgs,
                              size_t n, double incumbent_us, amk_verdict *out);
/* Interleaved re-measure of a and b through the backend (see amk_backend_type.remeasure).
 * AMK_EUNSUPPORTED when the backend has none (its latencies are not measurements). */
AMK_API int amk_evaluator_remeasure(amk_evaluator *ev, const amk_config *a, const amk_config *b,
                                    double decide_gain, double lat_us[2], double spread[2],
                                    double *sm_mhz, amk_diag *d);
/* Screen margin (fraction, default 0.02): floor > incumbent * (1 + margin) is screened. */
AMK_API void amk_evaluator_set_screen_margin(amk_evaluator *ev, double margin);

/* Source text prepended to every template and reference kernel for a vendor ("nvidia" or
 * "amd"): amk_f16/amk_bf16 types, amk_to_float / amk_from_float conversions, AMK_WARP,
 * AMK_KERNEL. Independent of any GPU header so compile checks run anywhere. */
AMK_API const char *amk_prelude(const char *vendor);

/* Built-in host references (tests without a GPU, and cross-checks): compute every output
 * buffer from the inputs in double precision, writing the output dtype. */
typedef struct amk_host_buffer {
    const char *name;
    const char *dtype;   /* "f32", "f16", "bf16", ... (f16/bf16 stored as uint16_t bits) */
    void *data;
    int64_t count;
} amk_host_buffer;
typedef int (*amk_host_ref_fn)(const amk_config *c, amk_host_buffer *bufs, int nbufs,
                               amk_diag *d);
AMK_API amk_host_ref_fn amk_host_ref_find(const char *name); /* spec reference.host; NULL if none */

/* Compile without running (`amk compile`): each config's template (vendor prelude + template
 * with the config's -D defines) is compiled for arch ("sm_90", "gfx90a"; NULL = the arch of
 * the default target) by the isolated compile-worker pool, through the compile cache.
 * opts: jobs, compile_timeout_s, cache_dir are used; may be NULL. A config that does not
 * compile is a status in out[i], not an error of the call. */
typedef struct amk_compile_result {
    amk_status status;         /* ok | compile_error | compile_crash | compile_timeout */
    char config_id[17];        /* for a reference kernel: the config it was built for */
    double compile_ms;         /* compile wall time, or the cache lookup on a hit */
    int cache_hit;
    size_t code_bytes;         /* size of the code object (0 unless ok) */
    char reason[512];          /* failures: first lines of the compiler log / the signal */
    char notes[512];           /* full log path, original compile time of a cached object */
} amk_compile_result;

/* AMK_OK with every out[i] filled; AMK_EUNSUPPORTED in a build without a GPU vendor layer
 * (or for an arch of the other vendor); AMK_EWORKER when no compile worker can start. */
AMK_API int amk_compile_batch(const amk_config *const *cfgs, size_t n, const char *arch,
                              const amk_backend_opts *opts, amk_compile_result *out, amk_diag *d);
/* The spec's reference kernel for each config's dtype, compiled the same way (out[i].config_id
 * is cfgs[i]'s). */
AMK_API int amk_compile_references(const amk_config *const *cfgs, size_t n, const char *arch,
                                   const amk_backend_opts *opts, amk_compile_result *out,
                                   amk_diag *d);

/* The source text and compiler options amk compiles for c on arch (NULL = the default
 * target's arch), for a runtime of another process to build the same kernel (the Python
 * package's amk.torch compiles it with NVRTC inside PyTorch): the vendor prelude + the
 * template, the config's -D defines and dtype macros, the arch and dialect options, and the
 * kernel's name as written. The arch is the effective one (sm_90 becomes sm_90a for a spec
 * that requires it). AMK_EIO (template unreadable), AMK_ESPEC, AMK_EUNSUPPORTED (unknown
 * arch, or one the spec cannot run on), AMK_ENOMEM; on error *out is cleared. */
typedef struct amk_compile_source {
    char arch[16];
    char entry[AMK_NAME_MAX];
    char *text;                /* malloc'd */
    char **options;            /* malloc'd, n_options malloc'd strings */
    int n_options;
} amk_compile_source;
AMK_API int amk_compile_source_get(const amk_config *c, const char *arch,
                                   amk_compile_source *out, amk_diag *d);
AMK_API void amk_compile_source_clear(amk_compile_source *s); /* frees and zeroes; accepts
                                                                  zeroed */

/* `amk compile`'s plan (evaluator/compile/plan.c): units to compile without running them.
 * plan_kernel adds the default config of s at sh (a note through note, warning = 1, when it
 * is not valid on the target) and `random` distinct seeded random valid configs (a warning
 * when fewer are found); plan_config adds
 * one given config (rejected, with the reason, when not valid on the target: never
 * compiled); plan_references adds the reference kernel of each kernel and dtype planned;
 * plan_run compiles every unit that is not rejected (configs, then references) and fills
 * each unit's res. Errors of plan_run are amk_compile_batch's. */
typedef struct amk_compile_job {
    const amk_spec *spec;
    int reference;             /* the spec's reference kernel for cfg's dtype */
    amk_config cfg;
    amk_compile_result res;
} amk_compile_job;
typedef struct amk_compile_plan amk_compile_plan;
AMK_API amk_compile_plan *amk_compile_plan_create(
    const amk_target *t, uint64_t seed, void (*note)(const char *msg, int warning, void *ud),
    void *ud);
AMK_API void amk_compile_plan_free(amk_compile_plan *p);
/* The whole plan of one `amk compile` command line in one call. The target whose limits
 * decide validity: target (--target), else the target of arch, else (a note, warning = 0)
 * the default's; without arch, $AMK_TARGET or the default (amk_target_resolve), measured
 * ceilings applied. The kernels: the built-ins plus spec_dirs (amk_registry_open, owned by
 * the plan). The units: the configs of config_path (each of kernel when one is named), or
 * default + `random` configs at shape (NULL: each kernel's default shape) of every kernel
 * (all) or of kernel; then the references unless no_reference. On failure *out is NULL and
 * *failed_on says which step failed, so callers can keep their exit codes. */
typedef struct amk_compile_plan_opts {
    const char *target;            /* a target key, NULL = see above */
    const char *arch;              /* compile for; NULL = the target's */
    const char *const *spec_dirs;
    int n_spec_dirs;
    const char *kernel;
    int all;
    const char *config_path;
    const char *shape;             /* "M=..,N=.." text */
    long random;
    uint64_t seed;
    int no_reference;
    void (*note)(const char *msg, int warning, void *ud);
    void *ud;
} amk_compile_plan_opts;
typedef enum amk_compile_plan_stage {
    AMK_COMPILE_PLAN_ON_INPUT,     /* target, kernels, kernel, shape, config file, a space */
    AMK_COMPILE_PLAN_ON_UNITS,     /* adding units (out of memory) */
    AMK_COMPILE_PLAN_DONE
} amk_compile_plan_stage;
AMK_API int amk_compile_plan_build(const amk_compile_plan_opts *o, amk_compile_plan **out,
                                   amk_compile_plan_stage *failed_on, amk_diag *d);
/* The arch a built plan compiles for: its opts' arch, else its target's. */
AMK_API const char *amk_compile_plan_arch(const amk_compile_plan *p);
AMK_API int amk_compile_plan_kernel(amk_compile_plan *p, const amk_spec *s, const amk_shape *sh,
                                    long random, amk_diag *d);
AMK_API int amk_compile_plan_config(amk_compile_plan *p, const amk_config *c, amk_diag *d);
AMK_API int amk_compile_plan_references(amk_compile_plan *p, amk_diag *d);
AMK_API int amk_compile_plan_run(amk_compile_plan *p, const char *arch,
                                 const amk_backend_opts *opts, amk_diag *d);
AMK_API const amk_compile_job *amk_compile_plan_units(const amk_compile_plan *p, size_t *n);

#endif

/* search: strategies (one file each, behind one vtable) and the loop that drives them:
 * propose a batch -> evaluate -> keep/revert -> log every trial -> stop on budget, time or
 * an exhausted space. Never includes a GPU header. */
#ifndef AMK_SEARCH_H
#define AMK_SEARCH_H

#include "amk_evaluator.h"
#include "amk_results.h"

typedef struct amk_strategy_opts {
    uint64_t seed;
    int initial;            /* hillclimb: size of the Sobol initial design (0 = default:
                               max(2n+4, 8), at most 3% of a small space's valid configs) */
    int patience;           /* hillclimb: non-improving trials before a restart (0 = default) */
    int no_default;         /* hillclimb (and evolve's walk): begin with the Sobol design, not
                               the spec's default config (how Kernel Tuner's strategies start) */
    /* The device the configs will run on, for the cost model's prediction of configs not
     * yet measured (hillclimb tries the moves it predicts clearly faster first). NULL = no
     * prediction; amk_loop_run fills it from its evaluator when left NULL. Borrowed. */
    const amk_target *target;
    /* The run's limits, for a strategy that plans by them: trials (0 = none) and seconds on
     * the loop's clock (0 = none). amk_loop_run sets them from its own options. */
    int64_t budget;
    double time_limit_s;
} amk_strategy_opts;

/* What a strategy proposes: the config and who proposed it ("sobol", "mutate", ...). */
typedef struct amk_proposal {
    amk_config config;
    char source[32];
} amk_proposal;

typedef struct amk_strategy_type {
    int api_version;        /* first, always: 1 */
    const char *name;       /* "evolve", "hillclimb", "random", "exhaustive", "anneal" */
    const char *doc;
    size_t state_size;
    int (*init)(void *state, const amk_space *sp, const amk_strategy_opts *opts);
    /* Proposes one config. 1 = proposed, 0 = nothing left to propose, <0 = error.
     * `seen` says which config ids are already evaluated; strategies should avoid them
     * (the loop drops repeats anyway). */
    int (*next)(void *state, const amk_idset *seen, amk_proposal *out);
    /* Learns from a verdict. kept = 1 when the loop made this config the incumbent. */
    void (*observe)(void *state, const amk_config *c, const amk_verdict *v, int kept);
    void (*clear)(void *state);
} amk_strategy_type;

AMK_API extern const amk_strategy_type *const amk_strategies[]; /* NULL-terminated; the first
                                                                   is the default */
AMK_API const amk_strategy_type *amk_strategy_find(const char *name);

/* Keep/revert (DESIGN §3): a correct candidate replaces the incumbent only when better by more
 * than max(min_gain, noise) in the incumbent's objective (amk_objective_score: the latency,
 * the energy per launch, or their product), noise = the larger of the two's
 * amk_objective_noise (the spread; the energy counter's quantisation). When both are within
 * that margin the simpler config wins (fewer threads, then less shared memory, then
 * lexicographically smaller choice indices). A candidate the objective cannot score (an
 * energy objective and no energy measured over a counter window) is never kept. Returns 1
 * to keep. */
typedef struct amk_incumbent {
    int has;
    amk_config config;
    double latency_us, spread;
    amk_latency_kind kind;
    int64_t trial;
    /* How it was measured: the regime, and the vendor-library peer timed beside it by amk's
     * harness ("" / NAN when none: not measured on a GPU, or no peer). */
    char clock_regime[16];
    char peer[32];
    double peer_us, vs_peer;
    double sm_mhz;             /* mean SM clock observed while it was timed; NAN unknown */
    /* What the keep rule judges it by (0: time), and its energy per launch: over a counter
     * window of energy_ticks ticks, or (ticks 0) an estimate; NAN unknown. */
    amk_objective objective;
    double energy_uj, energy_window_ms;
    int energy_ticks;
} amk_incumbent;
/* Fills b's measurement (latency, spread, kind, trial, regime, peer) from the row that
 * recorded it; the config is the caller's. */
AMK_API void amk_incumbent_set_row(amk_incumbent *b, const amk_row *r);
AMK_API int amk_keep_decide(const amk_incumbent *inc, const amk_config *cand, const amk_verdict *v,
                            double min_gain);

/* The one definition of "best" (HARNESS.md "Best"; search/history.c says how): the rule that
 * loop resume, `amk evaluate`, propose, report, export and best.json all use. Its replay
 * of rows without a recorded decision uses AMK_HISTORY_MIN_GAIN, `amk loop`'s default
 * --min-gain. */
#define AMK_HISTORY_MIN_GAIN 0.01
AMK_API extern const amk_best_rule amk_history_rule;

/* The history of one search (kernel, shape, device) in a results file: the config ids seen,
 * the trial numbering, the keep rule's incumbent and the one best, built by one streaming
 * read and updated per trial. The loop (--resume), `amk propose` and `amk evaluate
 * --results` all ask it. */
typedef struct amk_history amk_history;
typedef struct amk_history_opts {
    const char *kernel;            /* NULL: the spec's name (or any kernel without a spec) */
    const char *shape;             /* NULL: spec's shape text of `at` (or any without a spec) */
    const char *device;            /* NULL: every device's rows are seen and heard; the
                                      incumbent is that of the device of the latest row */
    const amk_spec *spec;          /* optional: configs are rebuilt from rows' params */
    const amk_shape *at;           /* with spec: the shape configs are rebuilt at */
    const amk_limits *limits;      /* the keep rule's tie-break (NULL: default target's) */
    double min_gain;               /* the keep rule's margin (fraction; 0 = none) */
    amk_objective objective;       /* what the search minimises: a row of this search recorded
                                      under another objective makes the load fail with
                                      AMK_EOBJECTIVE (a search never switches objective) */
    /* Hears every matching row, in file order, with its config (NULL without a spec or
     * when its params do not fit the spec). May be NULL. */
    void (*each)(const amk_row *r, const amk_config *c, void *ud);
    void *ud;
} amk_history_opts;
/* Reads path once (NULL or a missing file: an empty history). Errors are amk_tsv_read's,
 * naming the file, AMK_EOBJECTIVE (a row of this search has another objective: the message
 * names its trial, both objectives and what to do), or AMK_ENOMEM. */
AMK_API int amk_history_load(const char *path, const amk_history_opts *o, amk_history **out,
                             amk_diag *d);
AMK_API void amk_history_free(amk_history *h);
AMK_API int64_t amk_history_last_trial(const amk_history *h); /* over every row of the file */
AMK_API size_t amk_history_rows(const amk_history *h);        /* rows of this search */
AMK_API size_t amk_history_skipped(const amk_history *h);     /* of those, params not fitting */
/* The config ids evaluated (or excluded); strategies avoid them. */
AMK_API const amk_idset *amk_history_seen(const amk_history *h);
/* Marks an id seen: 1 new, 0 already seen, AMK_ENOMEM or AMK_EINVAL (not an id). */
AMK_API int amk_history_see(amk_history *h, const char *config_id);
/* The keep rule's incumbent (has = 0 when none): what a candidate must beat. */
AMK_API const amk_incumbent *amk_history_incumbent(const amk_history *h);
/* The keep rule on cfg's verdict against the incumbent; 1 = keep: cfg becomes the
 * incumbent (its trial is 0 until amk_history_record numbers it). */
AMK_API int amk_history_decide(amk_history *h, const amk_config *cfg, const amk_verdict *v);
/* Records rows appended (numbered) for this search, cfgs[i] the config of rows[i] (may be
 * NULL). Returns 1 when the best changed, else 0. */
AMK_API int amk_history_record(amk_history *h, const amk_row *rows, const amk_config *const *cfgs,
                               size_t n);
/* The one best: its row (NULL when none) and, when out is not NULL, it as an incumbent
 * (out->has = 0 when its config could not be rebuilt). */
AMK_API const amk_row *amk_history_best(const amk_history *h, amk_incumbent *out);

typedef struct amk_loop_progress {
    int64_t trial, budget;         /* budget 0 = none */
    double elapsed_s, time_limit_s;
    const amk_verdict *last;
    const amk_incumbent *best;
} amk_loop_progress;

typedef struct amk_loop_opts {
    const amk_space *space;
    amk_evaluator *ev;
    const char *strategy;          /* NULL = the default, amk_strategies[0] ("evolve") */
    amk_strategy_opts strategy_opts;
    int64_t budget;                /* trials (rows written); 0 = until exhausted/time */
    double time_limit_s;           /* 0 = none; on the simulated clock when the evaluator
                                      replays recorded trial costs (sim of a Kernel Tuner
                                      file, or of a results file with cost_s on every
                                      row): the sum of those costs */
    int batch;                     /* proposals evaluated together (0 = twice the backend's
                                      parallelism, or 1 when it evaluates one at a time) */
    double min_gain;               /* the keep rule's margin, a fraction: a candidate must win
                                      by max(min_gain, measured noise); 0 = no margin beyond
                                      the noise (`amk loop`'s default is AMK_HISTORY_MIN_GAIN) */
    const char *results_path;      /* required */
    const char *best_path;         /* NULL = no best.json */
    int resume;                    /* continue from results_path */
    void (*progress)(const amk_loop_progress *p, void *ud);
    void *progress_ud;
    /* Config ids the search must never propose: they join the seen set before the first
     * proposal, as a resumed run's trials do, and get no row. Used to search exactly the
     * configs a sampled sweep recorded (space_defs/data/README.md). NULL = none; borrowed. */
    const char (*exclude)[17];
    size_t n_exclude;
    amk_objective objective;       /* what the keep rule and the strategy minimise (0: time).
                                      Energy and edp: no roofline screening and no early stop
                                      against the incumbent's time (a slower config may use
                                      less energy), no interleaved latency re-measure */
} amk_loop_opts;

/* The valid configs of sp that ev cannot answer (a sampled sweep replayed by sim), as a
 * malloc'd list for amk_loop_opts.exclude: searching only what was recorded is honest (no
 * number is invented) and keeps the trial budget for configs that give an answer. *n = 0
 * and *out = NULL when ev answers everything. AMK_ENOMEM, or the space's enumeration error. */
AMK_API int amk_loop_unrecorded(const amk_space *sp, const amk_evaluator *ev, char (**out)[17],
                                size_t *n, amk_diag *d);

typedef struct amk_loop_result {
    int64_t trials;                /* rows written by this run */
    int64_t first_trial;           /* trial number of the first row written (0: none) */
    int64_t last_trial;            /* trial number of the last row written (0: none); rows
                                      of a concurrent writer may lie between the two */
    int exhausted;                 /* the strategy ran out of configs */
    amk_incumbent best;
    double elapsed_s;              /* on the clock the time limit used */
    double setup_s;                /* gpu: the set-up no trial was charged (the verdicts'
                                      setup_s, summed); NAN on other backends */
} amk_loop_result;

AMK_API int amk_loop_run(const amk_loop_opts *o, amk_loop_result *out, amk_diag *d);

/* The loop summary's vs_default: the spec's default config at sp's shape, its fastest
 * measured (or replayed) row of this kernel/shape/device in results (a sim evaluator is
 * asked when the file has none), and the speedup of best over it (rounded to 1e-4). NAN
 * speedup with reason when either side has no measured latency. */
typedef struct amk_vs_default {
    char config_id[17];
    double default_us;         /* NAN when not measured */
    amk_latency_kind kind;     /* of default_us */
    int64_t trial;             /* its row, 0 when it came from the sim evaluator or none */
    double speedup;            /* default_us / best; NAN when not comparable */
    char reason[200];          /* why speedup is NAN */
    /* The peer both were timed beside when the speedup holds the default in the best's clock
     * state (amk_peer_scaled: default_us x best's peer / default's peer, over the best), as
     * the best rule compares rows; "" when it compares the latencies themselves. */
    char beside[32];
} amk_vs_default;
AMK_API void amk_loop_vs_default(const char *results, amk_evaluator *ev, const amk_space *sp,
                                 const char *device, const amk_incumbent *best, amk_vs_default *out)
    ;
/* The report's speedup over the default: the spec's default config of each group of rep,
 * from reg (the results library never reads specs). A group whose kernel is unknown, whose
 * shape does not parse, or all of them when reg is NULL (reg_error: why the specs did not
 * load) get the reason instead. */
AMK_API void amk_report_defaults(amk_report *rep, const amk_registry *reg, const char *reg_error);

/* The results.tsv row of one trial of config c (search/verdict_row.c): every verdict field,
 * plus the trial number, shape text, who proposed it (source), the device and whether it
 * became the incumbent. The note joins the verdict's reason and notes. AMK_ENOMEM when
 * params cannot be built. */
AMK_API int amk_verdict_to_row(const amk_verdict *v, const amk_config *c, int64_t trial,
                               const char *shape, const char *source, const char *device, int kept,
                               amk_row *out, amk_diag *d);
/* The verdict a results row records (for strategies and keep/revert replaying history). */
AMK_API void amk_verdict_from_row(const amk_row *r, amk_verdict *out);

/* `amk evaluate --results`: a user trial appended to a results file. Open reads the file's
 * history of cfg's kernel/shape on device first (a foreign or malformed file is refused
 * before the evaluation; rows of cfg's search under another objective: AMK_EOBJECTIVE);
 * append numbers the row under the append's lock, records the objective and sets kept=1
 * when it beats the file's best by the history rule's margin. Results-file errors name the
 * file; amk_verdict_to_row errors come back as they are. */
typedef struct amk_trial_log amk_trial_log;
AMK_API int amk_trial_log_open(const char *path, const amk_config *cfg, const char *device,
                               amk_objective objective, amk_trial_log **out, amk_diag *d);
AMK_API int amk_trial_log_append(amk_trial_log *lg, const amk_config *cfg, const char *device,
                                 const amk_verdict *v, amk_row *row, amk_diag *d);
AMK_API void amk_trial_log_close(amk_trial_log *lg);

/* `amk evaluate` (search/evaluate_one.c): cfg through the pipeline on `backend` (as for
 * amk_evaluator_create; target: the limits when the evaluator names no target), and with
 * results_path one row appended through amk_trial_log (opened before the evaluation). On
 * failure failed_on says which step failed, so callers can keep their exit codes. */
typedef struct amk_evaluate_opts {
    const amk_config *cfg;
    const char *backend;
    const amk_backend_opts *backend_opts;
    const amk_target *target;
    const char *results_path;      /* NULL = no row */
} amk_evaluate_opts;
typedef enum amk_evaluate_stage {
    AMK_EVALUATE_ON_BACKEND,       /* creating the evaluator */
    AMK_EVALUATE_ON_RESULTS,       /* opening or appending to the results file */
    AMK_EVALUATE_ON_SETUP,         /* the space on the target */
    AMK_EVALUATE_ON_RUN,           /* the backend broke (not a verdict: those are data) */
    AMK_EVALUATE_DONE
} amk_evaluate_stage;
typedef struct amk_evaluate_result {
    amk_verdict verdict;
    amk_row row;                   /* the row appended, when logged */
    int logged;
    char backend[32];              /* in use */
    char device[64];               /* the evaluator's device, else the target key */
    char shape[256];
    amk_evaluate_stage failed_on;
} amk_evaluate_result;
AMK_API int amk_evaluate_one(const amk_evaluate_opts *o, amk_evaluate_result *r, amk_diag *d);

/* `amk calibrate` (no --fit): measures the ceilings of the device `backend` runs on by tuning
 * the built-in `copy` (device-copy bandwidth) and `fma` (f32 FMA rate) kernels exhaustively
 * at their default shapes, logging every trial to results (NULL = <cache dir>/calibrate/
 * results.tsv), and saves them to amk_ceilings_path of the target, where every later run's
 * cost model reads them. Ceilings are a device's: opts naming no device measure on device 0.
 * On failure out->stage says which step failed (callers map it to their exit codes) and the
 * measures done so far stay filled. */
typedef struct amk_ceiling_measure {
    const char *kernel;     /* "copy" or "fma" */
    int flops;              /* the rate is flops/s (fma), else minimum bytes/s (copy) */
    int64_t trials;
    double best_us, rate;   /* rate 0 until measured */
} amk_ceiling_measure;
typedef enum amk_calibrate_stage {
    AMK_CALIBRATE_ON_RESULTS,   /* the default results file's folder */
    AMK_CALIBRATE_ON_SPEC,      /* a calibration kernel is missing */
    AMK_CALIBRATE_ON_BACKEND,   /* creating the evaluator */
    AMK_CALIBRATE_ON_RUN,       /* the search (results file, backend) */
    AMK_CALIBRATE_ON_CEILINGS,  /* writing the ceilings file */
    AMK_CALIBRATE_DONE
} amk_calibrate_stage;
typedef struct amk_calibration_run {
    amk_target target;          /* the evaluator's, with the measured ceilings */
    char device[64];
    char results[4096], ceilings_file[4096];
    amk_ceiling_measure copy, fma;
    amk_calibrate_stage stage;
} amk_calibration_run;
AMK_API int amk_calibrate_measure(const amk_registry *reg, const char *backend,
                                  const amk_backend_opts *opts, const char *results,
                                  amk_calibration_run *out, amk_diag *d);

/* `amk export` (search/export_tuned.c): amk_export_db_build over results files with the
 * history rule and the cost model's device table (amk_target_at), rows recorded before a
 * param joined a spec of reg read as today's (amk_registry_upgrader; reg NULL: as
 * recorded); its errors. */
AMK_API int amk_export_tuned(const char *const *paths, size_t n, const char *kernel,
                             int include_replayed, const amk_registry *reg, amk_export_db **out,
                             amk_diag *d);

/* One search as `amk loop` runs it (search/tune.c): the space on the evaluator's target
 * (the sim backend must record the shape), the results file checked before anything is
 * appended (a fresh run over earlier rows of the same search gets a note), the configs a
 * sampled sweep cannot answer left out (with a note), amk_loop_run, and vs_default. The
 * caller creates the evaluator and prints. amk_tune_groups is all of `amk loop`: it creates
 * the evaluators too. */
typedef struct amk_tune_result amk_tune_result;
typedef struct amk_tune_opts {
    const amk_spec *spec;
    amk_shape shape;
    const amk_target *target;      /* when the evaluator names none */
    int target_named;              /* the user named target (amk_target_named): the backend
                                      tunes for it; else for its own device's (a sim: the
                                      recorded device's, not the default's) */
    amk_evaluator *ev;             /* borrowed */
    const char *backend;           /* as asked for ("auto", "sim:FILE", ...) */
    const char *objective;         /* --objective: time, energy or edp, or the field a Kernel
                                      Tuner file replays (amk_backend_opts_objective); NULL:
                                      time */
    const char *strategy;
    uint64_t seed;
    int no_default;                /* as amk_strategy_opts.no_default */
    int64_t budget;
    double time_limit_s;
    int batch;
    double min_gain;               /* as amk_loop_opts.min_gain */
    const char *results_path, *best_path; /* best_path NULL = no best file */
    int resume;
    void (*progress)(const amk_loop_progress *p, void *ud);
    /* What a person should know: warning = 1 when the search covers less than asked for
     * (shown even under --quiet), 0 for information. */
    void (*note)(const char *msg, int warning, void *ud);
    void (*start)(const amk_tune_result *r, void *ud);    /* right before the search runs */
    void *ud;
    /* amk_tune_groups only (amk_tune ignores them): the evaluators' options, and where each
     * search's result goes; g is the devices it ran on (g->n = 0: the backend's choice). */
    int jobs;
    const char *regime;            /* --regime: amk_backend_opts' */
    const int *devices;            /* as --devices: NULL/0 = every visible GPU */
    int ndevices;
    double rank_timeout_s;         /* amk_mpi_opts' */
    void (*done)(const amk_tune_result *r, const amk_device_group *g, void *ud);
    /* Config ids the search must never propose (amk_loop_opts.exclude), on top of those a
     * sampled sweep cannot answer: configs a caller's own rule refuses (the Python
     * tune_kernel's callable restrictions) or already measured elsewhere (its cachefile).
     * NULL = none; borrowed. */
    const char (*exclude)[17];
    size_t n_exclude;
    /* amk_tune_groups: outputs checked outside amk (spec "check": "external"): where the run
     * workers write them and the function that judges them (amk_backend_opts' outputs_dir,
     * verify and verify_ud; the Python tune_kernel's verify=). */
    const char *outputs_dir;
    int (*verify)(const amk_config *c, const char *prefix, char *why, size_t cap, void *ud);
    void *verify_ud;
} amk_tune_opts;
typedef enum amk_tune_stage {
    AMK_TUNE_ON_SETUP,     /* shape, space, or no config satisfies the spec (AMK_EEMPTY) */
    AMK_TUNE_ON_RESULTS,   /* the results file of a fresh run */
    AMK_TUNE_ON_RUN,       /* the search: backend, results file, strategy */
    AMK_TUNE_ON_DEVICES,   /* amk_tune_groups: the --devices list, or its models under MPI */
    AMK_TUNE_ON_MPI,       /* amk_tune_groups: MPI failed to start (AMK_RANK_NONE) */
    AMK_TUNE_ON_RANKS,     /* amk_tune_groups: rank 0's mpi evaluator (AMK_RANK_ZERO) */
    AMK_TUNE_ON_BACKEND,   /* amk_tune_groups: amk_evaluator_create */
    AMK_TUNE_DONE
} amk_tune_stage;
struct amk_tune_result {
    char shape[256];
    const char *backend;           /* in use */
    char device[64];               /* the evaluator's device, else the target key */
    const amk_target *target;
    int parallelism;
    amk_loop_result loop;
    amk_vs_default vs_default;
    amk_tune_stage failed_on;      /* where an error came from; AMK_TUNE_DONE on success */
    int ngroups;                   /* amk_tune_groups: device models (0: the backend picks) */
    char best_file[4096];          /* amk_tune_groups: this search's best file */
};
AMK_API int amk_tune(const amk_tune_opts *o, amk_tune_result *r, amk_diag *d);
/* `amk loop`'s whole plan: o->devices split by model (amk_device_groups), then one amk_tune
 * per model, one after another, each on an evaluator of its own (amk_evaluator_create_ranked;
 * freed after o->done) and, with several models, its own best file (amk_best_path_for_model;
 * refused in an MPI job of several ranks, which would have to go through the groups in step
 * and see only their own host's GPUs). Several models get a note first. Stops at the first
 * failure: *r is the last search's, failed_on says which step failed. An MPI worker rank
 * serves rank 0 and returns AMK_OK without calling done (a rank that could not serve: a
 * warning note). */
AMK_API int amk_tune_groups(const amk_tune_opts *o, amk_tune_result *r, amk_diag *d);

/* `amk propose` (search/propose.c): the next config to try for spec at shape on target.
 * Every recorded trial of the kernel/shape in results_path (NULL or a missing file: no
 * history) is replayed into the strategy; the incumbent is the history rule's best on the
 * device of the file's latest row of the kernel/shape. The proposal is the spec's default
 * config when nothing is recorded and it is valid and feasible, else the strategy's first
 * config not recorded yet, else (exhausted) the incumbent's (or the default). */
typedef struct amk_propose_opts {
    const amk_spec *spec;
    amk_shape shape;
    const amk_target *target;
    const amk_strategy_type *strategy;
    uint64_t seed;
    const char *results_path;      /* NULL = no history */
    amk_objective objective;       /* what the file's search minimises (0: time); a file whose
                                      rows of this kernel/shape have another is refused
                                      (AMK_EOBJECTIVE) */
} amk_propose_opts;
typedef enum amk_propose_stage {
    AMK_PROPOSE_ON_SETUP,     /* space, strategy, or nothing to propose (AMK_EEMPTY) */
    AMK_PROPOSE_ON_RESULTS,   /* reading the results file */
    AMK_PROPOSE_DONE
} amk_propose_stage;
typedef struct amk_proposal_result {
    amk_config config;
    char source[32];               /* "default", "incumbent", or the strategy's source */
    int exhausted;                 /* every config the strategy can propose is recorded */
    size_t history_rows;           /* rows replayed */
    size_t skipped;                /* rows whose params do not fit the current spec */
    int no_file;                   /* results_path does not exist (yet) */
    int has_incumbent;
    amk_row incumbent;             /* its row, and its config */
    amk_config incumbent_config;
    amk_propose_stage failed_on;
} amk_proposal_result;
AMK_API int amk_propose(const amk_propose_opts *o, amk_proposal_result *r, amk_diag *d);

#endif

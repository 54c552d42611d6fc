/* The host numerics of the gpu backend, shared by the parent's pipeline (evaluator/gpu_*.c)
 * and the run worker (evaluator/gpu/): element types, inputs, poison, tolerance and compare
 * (check.c); benchmark options, statistics and the stopping rule (bench_stats.c). A leaf:
 * plain C and libc, nothing of the evaluator, no GPU header, so it builds in every build. */
#ifndef AMK_NUMERIC_INT_H
#define AMK_NUMERIC_INT_H

#include <stddef.h>
#include <stdint.h>

/* ---------- element types, inputs, tolerance (check.c) --------------------------------- */
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

enum { AMK__INIT_UNIFORM, AMK__INIT_NORMAL, AMK__INIT_POSITIVE, AMK__INIT_ZERO,
       AMK__INIT_CONSTANT };
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
/* Init "constant" (a Kernel Tuner input filled with one value): every element is `value`
 * converted to dt (round to nearest even; fp8 and int8 saturate), zero included. */
void amk__check_fill_value(void *dst, int dt, int64_t count, double value);
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
    AMK__CMP_REF_NONFINITE, AMK__CMP_REF_UNWRITTEN
};
typedef struct amk__compare {
    int64_t count, bad, unwritten, nonfinite;
    int64_t skipped;        /* float elements the reference left unwritten: not compared */
    int64_t worst;          /* index of the reported element, -1 when all pass */
    int kind;               /* AMK__CMP_* of the reported element */
    double got, want, diff, limit, max_ref;
    amk__tolerance tol;
} amk__compare;
/* 1 when every element passes |got-want| <= atol + rtol*|want| (finite, written). Float
 * elements the reference left unwritten (the poison pattern in want) are skipped, counted
 * in skipped; a want that is all poison fails (AMK__CMP_REF_UNWRITTEN). The worst
 * element: the first unwritten, else the first non-finite, else the largest diff/tol (the
 * lowest index among equals), so *out does not depend on the thread count. */
int amk__check_compare(int dt, const void *got, const void *want, int64_t count,
                       double reduction, double rtol_scale, double atol_override,
                       amk__compare *out);
int amk__check_compare_threads(int dt, const void *got, const void *want, int64_t count,
                               double reduction, double rtol_scale, double atol_override,
                               int threads, amk__compare *out);
void amk__compare_describe(const amk__compare *c, const char *buf, char *out, size_t cap);

/* ---------- the device's state during a timing (observe_stats.c) ---------------------- */
/* The clock/power regime a timing runs in: sustained (the device brought to its steady
 * clock and power before timing: a training or serving loop) or burst (an idle gap before
 * each timed chunk: the first call after idle). */
enum { AMK__REGIME_SUSTAINED, AMK__REGIME_BURST, AMK__REGIME_COUNT };
const char *amk__regime_name(int regime);       /* "sustained" | "burst" */
int amk__regime_from_name(const char *name);    /* AMK__REGIME_*; -1 unknown */

/* One reading of the device (gpu/observe.c); NAN where the reader could not tell. */
typedef struct amk__obs_sample {
    double t_s;             /* monotonic seconds */
    double sm_mhz, mem_mhz, power_w, temp_c;
    double energy_j;        /* the device's cumulative energy counter */
    uint64_t throttle;      /* clock-event reasons (NVML bit values); 0 = none */
} amk__obs_sample;

/* The readings of one timing, folded. samples = 0: nothing was observed (no reader). */
typedef struct amk__obs {
    int samples;
    double sm_mhz, sm_mhz_min, sm_mhz_max; /* mean, min, max of the readings */
    double mem_mhz, power_w, temp_c;       /* mean, mean, max */
    uint64_t throttle;                     /* every reason seen */
    double span_s, span_j;  /* time and energy-counter advance over this config's own load */
    double last_power_w;    /* the last power reading (NVML's is a ~1 s moving average) */
    int n_clock, n_mem, n_power, n_temp;   /* readings that had each value */
} amk__obs;
void amk__obs_init(amk__obs *o);
void amk__obs_add(amk__obs *o, const amk__obs_sample *s);
/* A timed chunk between two readings: adds `after` as a reading, and the chunk's time and
 * energy-counter advance (when the counter was read both times). */
void amk__obs_add_span(amk__obs *o, const amk__obs_sample *before, const amk__obs_sample *after);
/* Mean power of this config's load: the energy counter's advance over at least
 * AMK__OBS_COUNTER_MIN_S of it (the H100's counter moves every ~100 ms: shorter spans are
 * quantised), else the last power reading; NAN when neither. */
#define AMK__OBS_COUNTER_MIN_S 1.0
double amk__obs_mean_power(const amk__obs *o);
/* Throttle reasons as words ("sw_power_cap,hw_thermal"), "" when none; "idle" is left out
 * (a reading between chunks sees the device idle). */
void amk__obs_throttle_text(uint64_t reasons, char *out, size_t cap);
/* 1 when a sustained warm-up may stop: the device has been under load for at least
 * sustain_s (hot_s; the H100's power controller takes ~1 s to bring the clock down from its
 * idle boost under a power-bound load), and the mean time per launch of the last 3 chunks is
 * within tol (a fraction) of the 3 before (n >= 6). When the device was already loaded that
 * long as the warm-up began (hot_before_s: the keeper or the previous job),
 * AMK__SETTLE_HOT_CHUNKS (2) do:
 * the power state is there, and the controller answers a change of load over ~1 s, longer
 * than waiting for 6 steady chunks could follow; the 2 chunks warm the candidate's caches. */
int amk__obs_settled(const double *chunk_us, int n, double hot_before_s, double hot_s,
                     double sustain_s, double tol);
#define AMK__SETTLE_HOT_CHUNKS 2 /* the warm-up of a device already loaded: see above */
/* The current level of an amdgpu DPM clock table (the text of sysfs pp_dpm_sclk or
 * pp_dpm_mclk: one line per level, "1: 1700Mhz *", the current one starred; "S: 100Mhz *"
 * in deep sleep): its MHz, NAN when no line is starred or the text is not such a table. */
double amk__obs_dpm_mhz(const char *text);

/* The energy per launch over a window of whole energy-counter ticks (objective energy or
 * edp). The H100's counter advances every ~100 ms and its power reading lags a change of
 * load by ~1 s (docs/evidence/h100-2026-11-25-c/trace.txt), so a config's energy is the
 * counter's advance between two of its ticks, under the config's own back-to-back load,
 * over the launches that ran between them. The run worker reads the counter after every
 * short chunk of launches and feeds each reading here: the window opens at the first
 * advance seen and closes at the first advance once want_s has passed. A tick happened
 * between two readings, so the launches at a tick are taken as the mean of the launches
 * completed at those two readings. Pure arithmetic: tested without a device. */
enum { AMK__EWIN_WAIT, AMK__EWIN_OPEN, AMK__EWIN_DONE, AMK__EWIN_FAILED };
typedef struct amk__energy_window {
    double want_s;          /* the least window, tick to tick */
    int state;              /* AMK__EWIN_* */
    double last_j;          /* the counter at the previous reading */
    double last_done;       /* launches completed at the previous reading */
    double e0_j, t0_s, n0;  /* at the opening tick: counter, time, launches */
    double e1_j, t1_s, n1;  /* at the closing tick */
    int ticks;              /* advances after the opening one */
    const char *why;        /* AMK__EWIN_FAILED: why (static text) */
} amk__energy_window;
/* Starts a window of at least want_s with the counter (J) read before the first launch. A
 * non-finite reading fails it (no counter). */
void amk__ewin_start(amk__energy_window *w, double want_s, double counter_j);
/* One reading: the counter (J) at monotonic time t_s with `done` launches completed since the
 * start. Returns the state: WAIT, OPEN, DONE (the window is complete) or FAILED (a
 * non-finite reading, or a counter that went backwards). */
int amk__ewin_feed(amk__energy_window *w, double counter_j, double t_s, double done);
/* A complete window's energy per launch (uJ), its length (ms) and ticks: 1, or 0 when the
 * window is not DONE or saw no launch between its ticks. */
int amk__ewin_result(const amk__energy_window *w, double *uj, double *window_ms, int *ticks);
/* The window energy objectives use: AMK_ENERGY_WINDOW_MS (100 .. 60000), default 1000 ms. */
double amk__energy_window_s(void);

/* ---------- benchmark statistics and stopping rule (bench_stats.c) --------------------- */
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
    int regime;             /* AMK__REGIME_*: the clock/power state timings are taken in */
    double settle_max_s;    /* sustained: the bound on bringing the device to steady state */
    double sustain_s;       /* sustained: load time after which the device is steady */
    double burst_gap_s;     /* burst: the idle gap before each timed chunk */
    double decide_gain;     /* > 0, two kernels (a re-measure): also stop once the ratio of
                               their medians is known to be below 1 - decide_gain, within
                               1 +- decide_gain, or above 1 + decide_gain (the keep rule's
                               three answers); 0: off */
    double energy_window_s; /* > 0: measure the energy per launch of kernel 0 over a window
                               of whole counter ticks this long (objective energy or edp);
                               0: the estimate mean power x median (objective time) */
} amk__bench_opts;
/* Defaults (cold, 20..2000 reps, 100 ms window cap, 1 s cap, 5 ms warm-up, 4 GiB, CI stop
 * at +-1% after >= 10 ms, screening margin 10%, no incumbent, sustained regime settled within
 * after 1 s of load within 2 s, 200 ms burst gaps), then the environment: AMK_BENCH_REGIME
 * (sustained|burst), AMK_BENCH_SUSTAIN_MS, AMK_BENCH_SETTLE_MS, AMK_BENCH_BURST_GAP_MS,
 * AMK_BENCH_WINDOW_MS, AMK_BENCH_MIN_WINDOW_MS, AMK_BENCH_MIN_REPS, AMK_BENCH_WARMUP_MS,
 * AMK_BENCH_CI (a fraction; 0 = off), AMK_BENCH_SCREEN=0 (no screening), AMK_BENCH_WARM=1
 * (warm L2). */
void amk__bench_opts_default(amk__bench_opts *o);

/* Why a timing ended: the median was pinned (ci), the config is out of the race (beaten),
 * the window ran out (window: reps = window / time, or reps_min), or reps_max / max_s did
 * (cap). */
enum { AMK__STOP_NONE, AMK__STOP_CI, AMK__STOP_BEATEN, AMK__STOP_WINDOW, AMK__STOP_CAP,
       AMK__STOP_DECIDED };
const char *amk__bench_stop_name(int stop); /* "ci", "beaten", "window", "cap", "none" */

typedef struct amk__bench_stats {
    double median_us, q1_us, q3_us, min_us, max_us, mean_us;
    double spread;          /* (q3 - q1) / median */
    double ci_lo_us, ci_hi_us; /* distribution-free 95% CI of the median; NAN under 8 reps */
    int reps;               /* timed launches */
    int sets;               /* input sets rotated (1 = none) */
    int flushed;            /* an L2 flush ran before every timed launch */
    double flush_us;        /* its wall time (the fastest in the warm-up), 0 without */
    int stop;               /* AMK__STOP_*: why the timing ended */
    int regime;             /* AMK__REGIME_* it was taken in */
    double settle_ms;       /* sustained: time spent reaching steady state; NAN otherwise */
    double loaded_before_s; /* sustained: how long the device had been loaded as it began */
    amk__obs obs;           /* the device during the timed chunks */
    double energy_uj;       /* per launch: over the counter window when energy_ticks > 0,
                               else mean power x median; NAN when unknown */
    double energy_window_ms;   /* the counter window; NAN when none */
    int energy_ticks;          /* its counter advances; 0 when none */
    double energy_launches;    /* launches between its ticks */
    char energy_why[96];       /* a window was asked for and failed: why */
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
/* The pair rule of decide_gain g: 1 when the ratio b / a of two kernels' medians lies, with
 * both 95% CIs (sorted samples a[0..na), b[0..nb)), wholly below 1 - g, wholly within
 * [1 - g, 1 + g] or wholly above 1 + g; 0 otherwise (or when a CI is not known yet). */
int amk__bench_pair_decided(const double *a, int na, const double *b, int nb, double g);
/* sorted[0..n) is sorted and sorted[n..n+add) holds new samples: sorts them in (O(n + add
 * log add)); scratch holds n doubles. */
void amk__bench_merge(double *sorted, int n, int add, double *scratch);
/* The row note's words for how a timing ended: "stopped: CI +-0.42% after 37 reps",
 * "stopped: decided against +-1% after 60 reps, CI +-0.40%",
 * "stopped: >= 1.23x the incumbent after 20 reps", "stopped: 100 ms window after 370 reps,
 * CI +-0.20%", "stopped: cap after 2000 reps, CI +-0.10%". */
/* How precisely the median is known: the larger distance from it to a bound of its 95% CI,
 * as a fraction of it; NAN when the CI is unknown. */
double amk__bench_ci_rel(const amk__bench_stats *s);
void amk__bench_stop_note(const amk__bench_stats *s, const amk__bench_opts *o, char *out,
                          size_t cap);
/* Input sets to rotate so that between two uses of one set the other sets move at least
 * twice the L2: 1 + ceil(2*l2/footprint), at most 64 and at most mem_cap/footprint; *flush
 * = 1 when that is not enough (an explicit L2 flush is needed). */
int amk__bench_sets(int64_t footprint, int64_t l2_bytes, int64_t mem_cap, int *flush);

#endif

/* results internals shared by the module's files and tests/check_results.c: config-id
 * parsing and the report's statistic type objects; the record format's internals (column
 * table, row parser, header checks) are common/record_int.h. Not installed. */
#ifndef AMK_RESULTS_INT_H
#define AMK_RESULTS_INT_H

#include "amk_results.h"
#include "record_int.h"

#include <cjson/cJSON.h>

/* Parses exactly 16 hex digits (either case) followed by NUL. AMK_OK or AMK_EPARSE. */
int amk__id_parse(const char *s, uint64_t *out);
int amk__idset_add_u64(amk_idset *s, uint64_t id); /* 1 added, 0 present, AMK_ENOMEM */
int amk__idset_has_u64(const amk_idset *s, uint64_t id);

/* Report statistics are type objects (one per statistic, listed in amk__report_stats):
 * each group of (kernel, shape, device) holds one zeroed state of state_size bytes per
 * statistic; add sees every row of the group, json adds members to the group's object,
 * print writes detail lines under the group's table row. New statistics (percentiles,
 * time to best, ...) are a new type object and one line in the table. */
typedef struct amk__report_stat_type {
    int api_version; /* 1 */
    const char *name;
    size_t state_size;
    /* Returns AMK_OK or a negative code (e.g. AMK_ENOMEM). file is the row's file index. */
    int (*add)(void *state, const amk_row *r, size_t file);
    void (*json)(const void *state, const amk_report *rep, cJSON *group);
    void (*print)(const void *state, const amk_report *rep, FILE *f); /* may be NULL */
    void (*clear)(void *state);                                          /* may be NULL */
} amk__report_stat_type;

extern const amk__report_stat_type *const amk__report_stats[]; /* NULL-terminated */

/* Accessors used by the statistics and the tests. */
const char *amk__report_file(const amk_report *rep, size_t file);
size_t amk__report_groups(const amk_report *rep);
/* The state of statistic `type` in group g; NULL when out of range or unknown type. */
const void *amk__report_state(const amk_report *rep, size_t g,
                              const amk__report_stat_type *type);

/* The built-in statistics' states, for tests. */
typedef struct amk__stat_counts {
    size_t status[AMK_STATUS_COUNT];
    size_t kept, trials;
} amk__stat_counts;

typedef struct amk__stat_best {
    const amk_best_rule *rule; /* the report's */
    void *rs;                  /* the rule's state for this group */
    int predicted_only;        /* best_predicted: the rule sees predicted rows only;
                                  best: every other row */
} amk__stat_best;
/* The row the rule chose (NULL: none) and its file index (file may be NULL). */
const amk_row *amk__stat_best_row(const amk__stat_best *b, size_t *file);

extern const amk__report_stat_type amk__stat_counts_type;
extern const amk__report_stat_type amk__stat_best_type;           /* measured or replayed */
extern const amk__report_stat_type amk__stat_best_predicted_type; /* predicted only */

/* ---- analysis statistics (report_stats.c) and plots (svg.c) ---------------------------- */
size_t amk__report_nfiles(const amk_report *rep);

/* Speedup of the group's best over the spec's default config (set by amk_report_set_default). */
typedef struct amk__stat_speedup {
    int has_default;
    char default_id[17];
    char why[400]; /* why there is no default, when has_default is 0 */
    int has_best;
    double best_us;
    char best_peer[32];     /* the best row's peer, "" none */
    double best_peer_us;
    struct {
        uint64_t id;
        int64_t trial;
        uint8_t status;
        double latency_us; /* NAN unless ok with a measured/replayed latency */
        char peer[32];     /* timed beside it, "" none (amk_peer_scaled) */
        double peer_us;
    } *pts;
    size_t n, cap;
} amk__stat_speedup;
typedef struct amk__speedup {
    double best_us, default_us, speedup; /* speedup = default_us / best_us; NAN when unknown */
    int64_t default_trial;
    char reason[500]; /* why speedup is NAN */
    char beside[32];  /* the peer the default was held in the best's clock state by, "" none */
} amk__speedup;
void amk__speedup_compute(const amk__stat_speedup *s, amk__speedup *out);

/* Compile times of compiled rows (compile_ms recorded, not a cache hit), and cache hits. */
typedef struct amk__stat_compile {
    double *ms;
    size_t n, cap, cache_hits;
} amk__stat_compile;
/* Median and p90 (GSL quantiles, linear interpolation) and max; NAN when nothing compiled. */
void amk__compile_compute(const amk__stat_compile *c, double *median, double *p90,
                          double *max);

/* Every row of the group in read order: the convergence statistic and the plots. */
typedef struct amk__trace_pt {
    int64_t trial;
    uint32_t file;
    uint8_t status, kind, measured; /* measured: ok with a measured/replayed latency */
    double latency_us;
    char peer[32];                  /* timed beside it ("" none): amk_peer_scaled */
    double peer_us;
    double cost_s;                  /* the trial's recorded cost (v4); NAN unknown */
} amk__trace_pt;
typedef struct amk__stat_trace {
    amk__trace_pt *pts;
    size_t n, cap;
    const amk_best_rule *rule; /* the report's: each file's best, the one definition */
    void **rs;                 /* the rule's state per file (NULL: no row of that file) */
    size_t nrs;
} amk__stat_trace;
typedef struct amk__convergence {
    size_t file, rows;     /* rows of the group in that file */
    double best_us;        /* that file's best (the rule's, with evidence); NAN if none */
    size_t to_within_1pct; /* rows read until the first within 1% of best_us; 0 if none */
    int64_t trial;         /* that row's trial number */
    /* Seconds of recorded cost (results v4 cost_s) of all the rows, and of those read until
     * that one: what a user paid for them. NAN when a row of them has no cost. */
    double cost_s, cost_to_within_s;
} amk__convergence;
/* One entry per file that has rows of this group, in file order; returns the count.
 * out has room for nfiles entries. */
int amk__trace_files(const amk__stat_trace *t, size_t nfiles, amk__convergence *out);
/* In file f: rows read until the first measured (or replayed) latency within 1% of ref's
 * (held in ref's clock state when both were timed beside its peer: amk_peer_scaled; 0 when
 * none, or ref has no evidence), that row's trial in *trial and, when cost_s is not NULL,
 * the recorded cost of the rows read in *cost_s (NAN when one has none, or no row is). */
size_t amk__trace_to_within(const amk__stat_trace *t, size_t f, const amk_row *ref,
                            int64_t *trial, double *cost_s);

/* Measured (ok, measured/replayed) against predicted latency. */
typedef struct amk__stat_model {
    struct {
        uint32_t file;
        uint8_t kind; /* latency_kind of measured_us: measured or replayed */
        double measured_us, predicted_us;
    } *pts;
    size_t n, cap;
} amk__stat_model;
/* Spearman rank correlation (ties get average ranks); NAN when n < 2 or undefined. */
double amk__spearman(const double *x, const double *y, size_t n);
double amk__model_spearman(const amk__stat_model *m);

extern const amk__report_stat_type amk__stat_speedup_type;
extern const amk__report_stat_type amk__stat_compile_type;
extern const amk__report_stat_type amk__stat_trace_type;
extern const amk__report_stat_type amk__stat_model_type;

/* SVG plotting (svg.c). A plot of series on linear or log axes, or on categories. */
typedef struct amk__plot_series {
    const char *label;
    const double *x, *y;
    size_t n;
    int step; /* 1: a step line through the points (best so far); 0: markers */
} amk__plot_series;
typedef struct amk__plot {
    const char *title, *xlabel, *ylabel;
    int xlog, ylog;
    const char *const *xcats; /* non-NULL: categorical x axis, category i at x = i */
    size_t ncats;
    const amk__plot_series *series;
    size_t nseries;
} amk__plot;
/* Appends a standalone SVG document to out (check out->oom). */
void amk__svg_plot(const amk__plot *p, amk_sb *out);

#endif

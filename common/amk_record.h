/* The record format: one results.tsv row (amk_row), its text form and the streaming reader.
 * Every layer reads the record (the sim backend replays it, the cost model calibrates from it,
 * search resumes from it, results reports and exports it), so it sits at the bottom, in
 * common/; writing results files (locked durable appends), best.json, the report and the
 * export stay in results/ (amk_results.h). */
#ifndef AMK_RECORD_H
#define AMK_RECORD_H

#include "amk_common.h"

#define AMK_TSV_HEADER "# amk results v4"
#define AMK_TSV_HEADER_V3 "# amk results v3" /* still read: its first 34 columns */
#define AMK_TSV_HEADER_V2 "# amk results v2" /* still read: its first 31 columns */
#define AMK_TSV_HEADER_V1 "# amk results v1" /* still read: its first 19 columns */
/* Column order (v4). Every row has exactly these, tab-separated; empty field = none. */
#define AMK_TSV_COLUMNS(XX)                                                                \
    XX(trial) XX(time) XX(kernel) XX(shape) XX(config_id) XX(params) XX(source) XX(status) \
    XX(latency_us) XX(latency_kind) XX(spread) XX(predicted_us) XX(bound_us)               \
    XX(pct_of_roofline) XX(compile_ms) XX(cache_hit) XX(kept) XX(device) XX(note)         \
    XX(clock_regime) XX(sm_mhz) XX(sm_mhz_min) XX(sm_mhz_max) XX(mem_mhz) XX(power_w)      \
    XX(temp_c) XX(throttle) XX(energy_uj) XX(peer) XX(peer_us) XX(vs_peer) XX(objective)   \
    XX(energy_window_ms) XX(energy_ticks) XX(cost_s)

/* One trial. Doubles are NAN when absent. Strings are NUL-terminated, never contain tabs
 * or newlines (the writer replaces them with spaces). */
typedef struct amk_row {
    int64_t trial;
    char time[32];
    char kernel[64];
    char shape[160];
    char config_id[17];
    char params[1024];         /* compact JSON, keys sorted */
    char source[32];           /* who proposed: "sobol", "mutate", "random", "user", ... */
    amk_status status;
    double latency_us;
    amk_latency_kind latency_kind;
    double spread, predicted_us, bound_us, pct_of_roofline, compile_ms;
    int cache_hit;             /* 0/1; -1 unknown */
    int kept;                  /* 1 when this trial became the incumbent */
    char device[64];
    char note[1024];
    /* v2: the device during the measurement (empty/NAN when not observed: no management
     * library, or not a measured row) and the vendor-library peer timed beside it. */
    char clock_regime[16];     /* "sustained" | "burst" */
    double sm_mhz, sm_mhz_min, sm_mhz_max, mem_mhz; /* observed clocks (mean, min, max) */
    double power_w, temp_c;    /* mean power, highest temperature */
    char throttle[96];         /* clock-event reasons seen ("sw_power_cap,..."), "" none */
    double energy_uj;          /* per launch: over a counter window when energy_ticks > 0,
                                  else an estimate (mean power x median latency) */
    char peer[32];             /* the peer timed in the same job ("cublas"), "" none */
    double peer_us, vs_peer;   /* its median latency; peer_us / latency_us */
    /* v3: what the search minimised, and the energy counter window behind energy_uj (0 ticks
     * / NAN: no window; v1 and v2 rows read as objective time). */
    amk_objective objective;
    double energy_window_ms;   /* the window: from one counter tick to the last */
    int energy_ticks;          /* counter advances in it (amk_energy_noise: its error) */
    /* v4: what the trial cost, in seconds of the loop's wall clock (amk_verdict.cost_s) or,
     * replayed, the recorded cost; NAN unknown (the model backend, rows of older files). */
    double cost_s;
} amk_row;

AMK_API void amk_row_init(amk_row *r); /* NANs, -1 cache_hit, empty strings */

/* Rows recorded before a param joined their kernel's spec (SPEC.md "params"): a reader of
 * results files that knows the specs hands each row to fn before it counts, and fn gives it
 * today's config_id and params (amk_registry_upgrader). A NULL upgrader: rows as recorded. */
typedef struct amk_row_upgrader {
    void (*fn)(amk_row *r, const void *ud);
    const void *ud;
} amk_row_upgrader;
/* A row with evidence: status ok and a positive latency measured or replayed (not a
 * prediction). The one test of "measured or replayed" for rows. 1 or 0. */
AMK_API int amk_row_has_evidence(const amk_row *r);

/* Formats one row as a TSV line with the trailing newline. */
AMK_API void amk_row_format(const amk_row *r, amk_sb *out);

typedef struct amk_tsv_stats {
    size_t rows;          /* rows delivered */
    size_t torn;          /* lines skipped as torn (too few fields, no trailing newline) */
    size_t lines;         /* lines read including header lines */
} amk_tsv_stats;

/* Streams rows to cb (nonzero return stops; a negative one is returned as the result, with
 * d set by cb). Blank lines and lines starting with '#' after the header are skipped. Torn
 * rows are skipped and counted: the last line when it lacks its newline, and a line with too
 * few fields whose complete fields (all but its last) parse - a row cut short by a killed
 * writer, isolated by the newline the next writer put after it. Any other malformed line is
 * AMK_ETSV with "FILE:LINE: column latency_us: 'abc' is not a number". A missing file is
 * AMK_ENOENT; an empty file has no rows; a path that is not a regular file is AMK_EIO. */
AMK_API int amk_tsv_read(const char *path, int (*cb)(const amk_row *r, void *ud), void *ud,
                         amk_tsv_stats *st, amk_diag *d);
/* Parses one line (no newline) into r; used by the reader and the fuzz target. */
AMK_API int amk_row_parse(const char *line, size_t len, amk_row *r, amk_diag *d);

#endif

/* results: the record. results.tsv (append-only, versioned header, locked durable appends,
 * torn-last-line tolerant streaming reader), best.json, the report and the export. A
 * search's resume state is search/'s amk_history, which reads results files through this API. */
#ifndef AMK_RESULTS_H
#define AMK_RESULTS_H

#include "amk_common.h"
#include "amk_record.h" /* the row and its reader: the record format, below every module */


typedef struct amk_tsv amk_tsv;

/* Opens (creating with the header when missing or empty) for appending. An existing file
 * must start with a v1, v2, v3 or v4 header, else AMK_ETSV naming the file (rows appended to
 * an older file keep its columns). If the file does not end in a newline (a torn last row),
 * a newline is appended first so the torn row stays isolated.
 * AMK_EIO naming the path when it cannot be created or opened (a missing directory too) or
 * is not a regular file (a FIFO, a device, a directory: refused before any read). */
AMK_API int amk_tsv_open(const char *path, amk_tsv **out, amk_diag *d);
/* AMK_OK when rows of objective o can be appended to t: always for time; for energy and edp
 * only in a v3 or v4 file (an older one has no objective column, so they would read back as
 * time): else AMK_ETSV naming the file and what to do. Writers ask before any work. */
AMK_API int amk_tsv_check_objective(const amk_tsv *t, amk_objective o, amk_diag *d);
/* Appends rows atomically with respect to other processes (one locked write + fsync). On a
 * failed write or fsync (AMK_EIO: a full disk) the file is cut back to where it was: no
 * torn row, no trial number used. */
AMK_API int amk_tsv_append(amk_tsv *t, const amk_row *rows, size_t n, amk_diag *d);
/* As amk_tsv_append, but numbers the rows first: rows[i].trial becomes the highest trial
 * number in the file (read under the same lock as the append, so concurrent writers never
 * share a number and numbers increase through the file across runs) plus 1 + i. AMK_ETSV,
 * with nothing written, when the numbers would pass INT64_MAX. */
AMK_API int amk_tsv_append_next(amk_tsv *t, amk_row *rows, size_t n, amk_diag *d);
/* Group commit for a writer that appends faster than a disk syncs (a model or sim loop: one
 * fsync costs more than a trial). With seconds > 0, an append still writes its rows whole
 * under the lock before returning (a crash of this process loses none of them), but fsyncs
 * only when the last fsync is at least `seconds` old; a slower writer therefore still syncs
 * every append. amk_tsv_sync puts every row written so far on the disk (AMK_EIO when the
 * fsync fails): call it before reporting rows done anywhere that outlives the process
 * (best.json, the summary). seconds <= 0: every append fsyncs (the default). */
AMK_API void amk_tsv_sync_every(amk_tsv *t, double seconds);
AMK_API int amk_tsv_sync(amk_tsv *t, amk_diag *d);
/* Closes; rows not yet synced are fsynced first (best effort: errors are not reported). */
AMK_API void amk_tsv_close(amk_tsv *t);

/* How a group's best row is chosen. results/ holds no rule of its own: the report and the
 * export are handed the one rule (search/'s amk_history_rule, HARNESS.md "Best") and
 * feed it the rows of one group (kernel, shape, device), file by file in the order given,
 * each file's rows in the order they stand (trial order in every file amk writes: numbers
 * are taken under the append lock). */
typedef struct amk_best_rule {
    int api_version;        /* 1 */
    size_t state_size;      /* the caller zero-initialises this many bytes per group */
    /* Sees one row of the group; file is its file's index (never decreasing). */
    void (*add)(void *state, const amk_row *r, size_t file);
    /* The chosen row (borrowed from state; NULL when none) and its file index (may be NULL). */
    const amk_row *(*best)(const void *state, size_t *file);
} amk_best_rule;

/* Hash set of config ids (also used by the loop for dedupe). */
typedef struct amk_idset amk_idset;
AMK_API amk_idset *amk_idset_create(void);
/* 1 added, 0 present, AMK_ENOMEM, or AMK_EINVAL when config_id is not 16 hex digits. */
AMK_API int amk_idset_add(amk_idset *s, const char *config_id);
AMK_API int amk_idset_has(const amk_idset *s, const char *config_id);
AMK_API size_t amk_idset_size(const amk_idset *s);
AMK_API void amk_idset_free(amk_idset *s);

/* best.json: {kernel, shape, device, config (the config JSON), config_id, latency_us,
 * latency_kind, spread, trial, time}. Written atomically (temp + rename). config_json is
 * the config's JSON text (NULL: {kernel, shape, params} rebuilt from the row); AMK_EINVAL
 * when it is not JSON. */
AMK_API int amk_best_write(const char *path, const amk_row *best, const char *config_json,
                           amk_diag *d);
/* The best file of one GPU model when a run spans several: best.json ->
 * best.nvidia-h100-80gb-hbm3.json (the model's name as a lower-case slug before the
 * extension). Truncated to cap. */
AMK_API void amk_best_path_for_model(const char *best, const char *model, char *out, size_t cap);

/* Report over one or more results files: best per kernel/shape/device (chosen by rule, which
 * is required), counts by status; each row through up first (may be NULL). */
typedef struct amk_report amk_report;
AMK_API int amk_report_build(const char *const *paths, size_t n, const amk_best_rule *rule,
                             const amk_row_upgrader *up, amk_report **out, amk_diag *d);
/* The report as compact JSON text (docs/RESULTS.md); the caller frees it. NULL on ENOMEM. */
AMK_API char *amk_report_json(const amk_report *r);
AMK_API void amk_report_print(const amk_report *r, FILE *f); /* human table */
AMK_API void amk_report_free(amk_report *r);
/* The groups, in order of first appearance: kernel, shape and device of group g (borrowed,
 * valid until amk_report_free; any out pointer may be NULL). AMK_EINVAL when out of range. */
AMK_API size_t amk_report_ngroups(const amk_report *r);
AMK_API int amk_report_group(const amk_report *r, size_t g, const char **kernel, const char **shape,
                             const char **device);
/* The spec's default config of group g (its config_id, 16 hex digits) for the speedup over
 * the default ("vs_default"); config_id NULL says there is none, with why (e.g. "kernel
 * not in the registry"). The report itself never reads specs: the caller looks it up.
 * AMK_EINVAL when g is out of range or config_id is malformed. */
AMK_API int amk_report_set_default(amk_report *r, size_t g, const char *config_id, const char *why);
/* Writes three standalone SVG plots per group into dir (created when missing), named
 * KERNEL-SHAPE[-DEVICE]-{progress,model,status}.svg (characters other than [A-Za-z0-9._-]
 * become '_'): best-so-far latency against trial (one line per file), measured against
 * predicted latency (log-log, Spearman in the title), latency by status. written (may be
 * NULL) hears each path once its file is in place. AMK_OK or a negative code with d. */
typedef struct amk_report_written {
    void (*fn)(const char *path, void *ud);
    void *ud;
} amk_report_written;
AMK_API int amk_report_svg(const amk_report *r, const char *dir, const amk_report_written *written,
                           amk_diag *d);

/* ---------- export database and lookup (docs/EXPORT.md) ----------------------------------
 * A JSON database of the best config per vendor → arch → device → kernel → shape, built from
 * results files, with a default at every level and nearest-shape fallback; a C header with
 * the same data and rules; and the lookup over the JSON. results does not know the device
 * targets: the caller passes the device → vendor/arch table (the CLI passes cost_model's). */
typedef struct amk_export_target {
    const char *key, *name, *vendor, *arch; /* "h100", "H100 SXM 80GB", "nvidia", "sm_90" */
} amk_export_target;

typedef struct amk_export_opts {
    const char *kernel;                    /* only this kernel; NULL = every kernel */
    int include_replayed;                  /* also rows with latency_kind replayed */
    const amk_export_target *targets;      /* borrowed; copied into the database */
    size_t n_targets;
    const amk_best_rule *rule;             /* picks each group's row; required */
    const amk_row_upgrader *upgrade;       /* each row through it first; NULL: as recorded */
} amk_export_opts;

/* The database, opaque: built from results files or parsed from its JSON text; every
 * accessor below leaves it unchanged. Free with amk_export_db_free. */
typedef struct amk_export_db amk_export_db;

/* Builds the database from the ok rows (latency measured; replayed too when asked) of the
 * results files. Errors: reading a file (as amk_tsv_read: AMK_ENOENT, AMK_ETSV, AMK_EIO),
 * AMK_ENOENT when opts->kernel has no row, AMK_EEMPTY when no row is eligible, AMK_ENOMEM.
 * On success *out is a new database the caller frees. */
AMK_API int amk_export_db_build(const char *const *paths, size_t n, const amk_export_opts *opts,
                                amk_export_db **out, amk_diag *d);
/* Parses len bytes of JSON text (name labels messages) into *out. The text is not checked
 * against the database format here: check, c_header and lookup do that. AMK_EPARSE
 * (malformed JSON) or AMK_ENOMEM. */
AMK_API int amk_export_db_parse(const char *name, const char *text, size_t len, amk_export_db **out,
                                amk_diag *d);
/* Reads the database file at path (named in messages): amk_fs_read_all's errors, AMK_EPARSE
 * naming the line and column of malformed JSON, or AMK_ENOMEM. */
AMK_API int amk_export_db_read(const char *path, amk_export_db **out, amk_diag *d);
AMK_API void amk_export_db_free(amk_export_db *db);
/* The database as indented JSON text (no trailing newline), malloc'd; NULL when out of
 * memory. */
AMK_API char *amk_export_db_json(const amk_export_db *db);
/* Checks that db is a well-formed database of this version: AMK_OK or AMK_EPARSE naming the
 * member at fault. */
AMK_API int amk_export_db_check(const amk_export_db *db, amk_diag *d);
/* Writes the self-contained C header of every kernel of db (or only `kernel`) into out.
 * AMK_EPARSE (malformed db), AMK_ENOENT (unknown kernel) or AMK_ENOMEM. */
AMK_API int amk_export_db_c_header(const amk_export_db *db, const char *kernel, amk_sb *out,
                                   amk_diag *d);
/* Answers KERNEL on device_name at shape ("M=4096,N=4096[,dtype=f16]"; dtype, when not
 * NULL, overrides the shape's) with the export's rules. *json_out gets the answer as JSON
 * text (malloc'd, indented): {kernel, device, query, matched: {vendor, arch, device, shape,
 * level, nearest, distance, tuned: {latency_us, ...}}, config}. AMK_EPARSE (malformed db),
 * AMK_ENOENT (kernel not in db), AMK_EINVAL (shape: unknown or missing dimension,
 * non-integer value), AMK_ENOMEM. */
AMK_API int amk_export_db_lookup(const amk_export_db *db, const char *kernel,
                                 const char *device_name, const char *shape, const char *dtype,
                                 char **json_out, amk_diag *d);

#endif

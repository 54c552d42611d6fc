/* evaluator internals shared by the pipeline (evaluator.c), the built-in backends
 * (backends/) and the tests: the backend type objects, creation of an evaluator around any
 * backend type (tests register a fake one), auto selection over an explicit backend table,
 * and the recorded-sweep lookup used by `auto` (backends/sim_shapes.c). */
#ifndef AMK_EVALUATOR_INT_H
#define AMK_EVALUATOR_INT_H

#include "amk_evaluator.h"

#include <cjson/cJSON.h>

/* amk_verdict_to_json as a cJSON object, for the tests that inspect its keys. Caller frees
 * with cJSON_Delete. */
cJSON *amk_verdict_json(const amk_verdict *v);

/* Built-in backend types (evaluator/backends/). The gpu one is defined in
 * backends/gpu_backend.c, the parent's side of the GPU layer in evaluator/gpu/, and exists
 * only in builds with a GPU vendor layer. */
extern const amk_backend_type amk_backend_model;
extern const amk_backend_type amk_backend_sim;
#ifdef AMK_HAVE_GPU
extern const amk_backend_type amk_backend_gpu;
#endif

/* Backend contract beyond the public header, relied upon by the evaluator:
 * - state is zeroed (calloc) before init; init either succeeds, or fails having released
 *   whatever it acquired (the evaluator then frees the state block WITHOUT calling clear);
 * - clear is called exactly once after a successful init;
 * - evaluate receives out[i] with config_id, valid = 1, predicted_us, bound_us and device
 *   already set, and must set at least status; anything it leaves alone keeps its value;
 * - target and device may be NULL function pointers or return NULL (the evaluator then
 *   uses amk_target_default() and the backend name). */

/* Creates an evaluator around `type` (api_version >= 1, init/evaluate/clear set).
 * opts may be NULL (all defaults). Returns AMK_OK, AMK_EINVAL (bad type), AMK_ENOMEM, or
 * the error of type->init with d saying why; on error *out is NULL. */
int amk__evaluator_create_type(const amk_backend_type *type, const amk_backend_opts *opts,
                               amk_evaluator **out, amk_diag *d);

/* amk_evaluator_create over an explicit NULL-terminated backend table instead of
 * amk_backends. `auto` tries the table's "gpu" entry when present; the rest of the
 * selection (sim when a recorded sweep exists, else model) is the public behaviour. */
int amk__evaluator_create_from(const amk_backend_type *const *table, const char *backend,
                               const amk_backend_opts *opts, const amk_spec *kernel,
                               const amk_shape *shape, amk_evaluator **out, amk_diag *d);

/* Injected delay of the model and sim backends, for tests and scale-out simulations of slow
 * evaluations: sleeps $AMK_SIM_DELAY_MS milliseconds (read once; fractions allowed) for each
 * of n configs. Does nothing when the variable is unset, empty, zero or not a number. */
void amk__sim_delay(size_t n);

/* The sim backend's reader of Kernel Tuner files (sim_foreign.c). A record, as it reaches
 * the sink: the id of the amk config holding the record's param values, what it replays as,
 * and the seconds it cost when recorded (NAN when the file does not say). key names the
 * record in the file (a cachefile key "16,1,..." or "result N"); key and note are borrowed
 * for the call. */
typedef struct amk__sim_record {
    char id[17];
    amk_status status;
    double latency_us, spread, cost_s;
    const char *key;
    const char *note; /* failures: what the file recorded; NULL otherwise */
} amk__sim_record;
typedef int (*amk__sim_sink)(const amk__sim_record *r, void *ud); /* nonzero = out of memory */
/* Reads a file whole, gunzipping it when it is gzipped; NUL-terminated, caller frees. */
int amk__sim_slurp(const char *path, char **out, size_t *len, amk_diag *d);
/* 1 when text (after blanks) opens a JSON object: a Kernel Tuner file, not a results.tsv. */
int amk__sim_is_json(const char *text);
/* Loads a Kernel Tuner cachefile or T4 file's records as configs of spec at shape into sink;
 * writes the file's device name. Records replay their recorded time, whatever the file's
 * objective; objective (NULL = "time") names another field to replay instead, "NAME:max" or
 * "NAME:min" its direction (a maximised value v replays as latency 1e6 / v). Records whose
 * values are not choices of the spec are skipped with a warning; a spec param the file lacks,
 * an unknown error name, an unknown unit, a record without the replayed field, or text that
 * is not one JSON object (truncated, malformed: the byte offset named) is AMK_EINVAL; a
 * cachefile Kernel Tuner left unclosed is closed as Kernel Tuner's reader does; no usable
 * record is AMK_ENOENT. */
int amk__sim_foreign_load(const char *path, const char *text, const amk_spec *spec,
                          const amk_shape *shape, const char *objective, amk__sim_sink sink,
                          void *ud, char *device, size_t device_cap, amk_diag *d);

/* Data directory of recorded sweeps: $AMK_DATA_DIR when set and non-empty, else
 * amk_fs_share_dir("data") (next to the executable first). Writes into out. */
void amk__data_dir(char *out, size_t cap);

/* Recorded sweep for `kernel` at `shape` (canonical shape text): writes
 * "<data dir>/<kernel>.tsv" into path and returns 1 when that file has at least one ok row
 * with latency_kind measured for this kernel and shape; returns 0 otherwise with `why`
 * (may be NULL) saying what was missing. */
int amk__sim_sweep_find(const char *kernel, const char *shape, char *path, size_t cap,
                        char *why, size_t why_cap);

#endif

/* amk common layer: one error table, per-call diagnostics, trial statuses, logging,
 * hashing, a string builder and the small file-system helpers every module shares.
 * Nothing here knows about kernels, GPUs or search. */
#ifndef AMK_COMMON_H
#define AMK_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define AMK_VERSION "0.1.0"

/* Marks each function and object of the installed headers: libamk.so is built with hidden
 * visibility by default (CMake C_VISIBILITY_PRESET), so these are all it exports; the
 * amk__* internals stay inside it (tests reach them through the static library). */
#if defined(__GNUC__) || defined(__clang__)
#define AMK_API __attribute__((visibility("default")))
#else
#define AMK_API
#endif

/* Library error codes: 0 is success, every error is negative. A config that fails to
 * compile or run is NOT an error of the call: it is an amk_status in a verdict. */
#define AMK_ERRNO_MAP(XX)                                               \
    XX(ENOMEM, -1, "out of memory")                                     \
    XX(EINVAL, -2, "invalid argument")                                  \
    XX(EIO, -3, "input/output error")                                   \
    XX(ENOENT, -4, "not found")                                         \
    XX(EPARSE, -5, "malformed input")                                   \
    XX(ESPEC, -6, "invalid kernel spec")                                \
    XX(ECONFIG, -7, "invalid config")                                   \
    XX(EEXPR, -8, "invalid expression")                                 \
    XX(EDIVZERO, -9, "division or modulo by zero")                      \
    XX(EOVERFLOW, -10, "64-bit integer overflow")                       \
    XX(ECYCLE, -11, "cycle among derived values")                       \
    XX(ERESTRICT, -12, "restriction violated")                          \
    XX(EEMPTY, -13, "search space has no valid config")                 \
    XX(ETSV, -14, "malformed results file")                             \
    XX(ENODEV, -15, "no GPU device answers")                            \
    XX(EBACKEND, -16, "evaluation backend failed")                      \
    XX(ETIMEDOUT, -17, "timed out")                                     \
    XX(EWORKER, -18, "worker process failed")                           \
    XX(EEXIST, -19, "already exists")                                   \
    XX(EUNSUPPORTED, -20, "not supported on this build or machine")    \
    XX(ENOTCOVERED, -21, "the recording does not cover this kernel or shape")  \
    XX(ENOENERGY, -22, "no energy measurement for this objective")            \
    XX(EOBJECTIVE, -23, "the results file's search has another objective")

typedef enum amk_errno {
    AMK_OK = 0,
#define AMK__ERR_ENUM(name, val, msg) AMK_##name = (val),
    AMK_ERRNO_MAP(AMK__ERR_ENUM)
#undef AMK__ERR_ENUM
} amk_errno;

AMK_API const char *amk_strerror(int code); /* "out of memory"; "unknown error" for others */
AMK_API const char *amk_err_name(int code); /* "AMK_ENOMEM" */
/* The process exit code amk's commands give a failure of `code` when the step that failed
 * says nothing more (README "Exit codes"): 0 for AMK_OK; 5 internal (out of memory, a
 * backend or worker that broke, a timeout); 3 a results file (AMK_ETSV, AMK_EIO); 4 no
 * device (AMK_ENODEV, AMK_EUNSUPPORTED); 2 bad input for every other code. Bindings (the
 * Python package) classify errors by it. */
AMK_API int amk_err_exit_code(int code);

/* Diagnostic filled by a failing call: the code and a message naming the culprit,
 * e.g. "kernels/gemm/spec.json: params.BM.values[2]: not an integer". Callers own it
 * (usually on the stack); every API taking one accepts NULL. */
typedef struct amk_diag {
    int code;
    char msg[1024];
} amk_diag;

/* Sets d->code and formats d->msg; returns code so callers can `return amk_diag_set(...)`. */
AMK_API int amk_diag_set(amk_diag *d, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefixes the existing message with "prefix: " (used to add a file name or field path). */
AMK_API int amk_diag_prefix(amk_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
AMK_API void amk_diag_clear(amk_diag *d);

/* Outcome of one trial. Order is part of the TSV contract only through the names. */
#define AMK_STATUS_MAP(XX)                                                              \
    XX(OK, "ok", "correct on every shape; latency_us is set (see latency_kind)")        \
    XX(REJECTED, "rejected", "config invalid: unknown param, value not a choice, "      \
                             "restriction or resource limit violated")                  \
    XX(SCREENED, "screened", "valid, but its roofline floor is slower than the "        \
                             "incumbent: skipped without compiling")                    \
    XX(COMPILE_ERROR, "compile_error", "the compiler rejected the source")              \
    XX(COMPILE_CRASH, "compile_crash", "the compiler crashed (worker killed and "        \
                                       "replaced)")                                      \
    XX(COMPILE_TIMEOUT, "compile_timeout", "the compile ran past its time limit")       \
    XX(WRONG, "wrong", "ran, but an output differs from the reference beyond "          \
                       "tolerance, is NaN, or was left unwritten")                      \
    XX(RUN_ERROR, "run_error", "the kernel faulted (illegal address, launch failure)")  \
    XX(RUN_TIMEOUT, "run_timeout", "the kernel did not finish in time")                 \
    XX(WITHHELD, "withheld", "correct, but measured faster than the roofline floor: "   \
                             "the number is not trusted")                               \
    XX(NOT_RECORDED, "not_recorded", "sim backend: the recorded sweep has no row for "  \
                                     "this config")

typedef enum amk_status {
#define AMK__ST_ENUM(name, str, doc) AMK_STATUS_##name,
    AMK_STATUS_MAP(AMK__ST_ENUM)
#undef AMK__ST_ENUM
    AMK_STATUS_COUNT
} amk_status;

AMK_API const char *amk_status_name(amk_status s);       /* "compile_error" */
AMK_API const char *amk_status_doc(amk_status s);        /* one sentence */
AMK_API int amk_status_parse(const char *name, amk_status *out); /* AMK_OK or AMK_EPARSE */

/* Where a latency came from. NONE prints as an empty TSV field and JSON null. */
typedef enum amk_latency_kind {
    AMK_LAT_NONE = 0,
    AMK_LAT_MEASURED,
    AMK_LAT_PREDICTED,
    AMK_LAT_REPLAYED
} amk_latency_kind;

AMK_API const char *amk_latency_kind_name(amk_latency_kind k); /* "" for NONE */
AMK_API int amk_latency_kind_parse(const char *name, amk_latency_kind *out);
/* Evidence: a latency a device produced, now (measured) or when it was recorded (replayed);
 * a prediction never is. 1 or 0. */
AMK_API int amk_latency_is_evidence(amk_latency_kind k);

/* What a search minimises (--objective; HARNESS.md "Objectives"): the time per launch, the
 * energy per launch (the device's energy counter over a window of the config's own load,
 * evaluator/gpu/bench.c), or their product (energy-delay product). Every row records its
 * objective; a search never mixes two. */
typedef enum amk_objective {
    AMK_OBJ_TIME = 0,
    AMK_OBJ_ENERGY,
    AMK_OBJ_EDP,
    AMK_OBJ_COUNT
} amk_objective;
AMK_API const char *amk_objective_name(amk_objective o);                /* "time" */
AMK_API int amk_objective_parse(const char *name, amk_objective *out);  /* AMK_OK, AMK_EPARSE */
/* The relative error of an energy measured over `ticks` advances of the energy counter: one
 * tick's energy over the window's (the tick instants are known only to within a tick). NAN
 * when ticks < 1 (no counter window: an estimate, or nothing). */
AMK_API double amk_energy_noise(int ticks);
/* The number objective o minimises for a latency (us) and an energy per launch (uJ) with its
 * counter ticks: the latency; the energy; their product (uJ x us). An energy that was not
 * measured over a counter window (ticks < 1: an estimate) scores NAN, as does anything not
 * finite and positive: such a row cannot take part in an energy search. */
AMK_API double amk_objective_score(amk_objective o, double latency_us, double energy_uj,
                                   int energy_ticks);
/* The relative noise of that score: the latency's spread (time); the energy's quantisation,
 * amk_energy_noise (energy); their sum (edp: relative errors of a product add). Absent parts
 * count 0. */
AMK_API double amk_objective_noise(amk_objective o, double spread, int energy_ticks);
/* A latency taken beside a vendor-library peer (peer_us, timed interleaved in the same
 * window), expressed in the clock state of another measurement's window (ref_peer_us, the
 * same peer): latency_us x ref_peer_us / peer_us. Under its power cap an H100 moves a whole
 * search's timings by +-10 % (cuBLAS 180-220 us at 4096^3 within one race), far beyond one
 * window's spread; the peer moves with them, so comparing two configs this way cancels the
 * clock state (in two races' 13 interleaved re-measures it named the winner 13 times, the
 * raw latencies 7). NAN unless both peers are named alike and every number is positive. */
AMK_API double amk_peer_scaled(double latency_us, const char *peer, double peer_us,
                               const char *ref_peer, double ref_peer_us);

/* Logging to stderr. Level from AMK_LOG (error|warn|info|debug), default warn. */
enum { AMK_LOG_ERROR = 0, AMK_LOG_WARN, AMK_LOG_INFO, AMK_LOG_DEBUG };
AMK_API void amk_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
AMK_API int amk_log_level(void);

/* FNV-1a 64-bit. config_id = amk_hash64 of the canonical config JSON, as 16 lowercase hex
 * digits. Stable across runs, machines and endianness (it hashes bytes). */
AMK_API uint64_t amk_hash64(const void *data, size_t len);
AMK_API uint64_t amk_hash64_update(uint64_t h, const void *data, size_t len);
#define AMK_HASH64_INIT UINT64_C(0xcbf29ce484222325)
AMK_API void amk_hash_hex(uint64_t h, char out[17]);

/* Copies s[0..n) into out for a message: at most max bytes of s, then "..." (cap must be at
 * least max + 4, else max shrinks to fit). Control bytes (tab and newline too: a message is
 * one line), C1 controls and every byte of an invalid UTF-8 sequence show as '?', so a
 * message never carries terminal escapes or broken text from what it quotes. Returns out. */
AMK_API const char *amk_text_show(char *out, size_t cap, const char *s, size_t n, size_t max);

/* Growable NUL-terminated string. Zero-initialise (amk_sb sb = {0}); amk_sb_free releases.
 * On allocation failure the builder sets oom and stops growing; check it once at the end. */
typedef struct amk_sb {
    char *p;
    size_t len, cap;
    int oom;
} amk_sb;
AMK_API void amk_sb_printf(amk_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
AMK_API void amk_sb_vprintf(amk_sb *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
AMK_API void amk_sb_putn(amk_sb *sb, const char *s, size_t n);
AMK_API void amk_sb_free(amk_sb *sb);
/* Returns the string and leaves sb empty; NULL on oom. Caller frees. */
AMK_API char *amk_sb_take(amk_sb *sb);

/* Time. */
AMK_API double amk_now_s(void);                 /* monotonic seconds */
AMK_API void amk_time_iso(char out[32]);        /* UTC "2026-11-22T10:12:04Z" */

/* Files. All return AMK_OK or a negative code with detail in d. */
/* Most bytes amk reads from one input file or stream (configs, specs, databases, sources). */
#define AMK_FS_READ_MAX ((size_t)16 << 20)
/* Whole file, NUL-terminated. Only regular files: a FIFO, device or directory is AMK_EINVAL
 * ("not a regular file"), before anything is read; a file over AMK_FS_READ_MAX is AMK_EINVAL
 * too. A missing file is AMK_ENOENT. */
AMK_API int amk_fs_read_all(const char *path, char **data, size_t *len, amk_diag *d);
/* Reads fd (a pipe, stdin: anything) to its end, NUL-terminated, reading at most
 * AMK_FS_READ_MAX + 1 bytes: past the cap it stops with AMK_EINVAL naming `name`. */
AMK_API int amk_fs_read_fd(int fd, const char *name, char **data, size_t *len, amk_diag *d);
/* Writes to PATH.tmp.PID, fsyncs, renames over path, fsyncs the directory. */
AMK_API int amk_fs_write_atomic(const char *path, const void *data, size_t len, amk_diag *d);
/* O_APPEND + flock(LOCK_EX) + write all + fsync + unlock, on an open fd. When the write or
 * the fsync fails (AMK_EIO: a full disk, a quota), the file is cut back to its size before
 * the call: it never keeps part of the data. */
AMK_API int amk_fs_append_locked(int fd, const void *data, size_t len, amk_diag *d);
/* The same without the fsync: the data is in the file (a crash of this process loses none
 * of it) but reaches the disk only with a later fsync. */
AMK_API int amk_fs_append_locked_nosync(int fd, const void *data, size_t len, amk_diag *d);
AMK_API int amk_fs_mkdir_p(const char *path, amk_diag *d);

/* Data files of a spec ("data" / "answer", SPEC.md): a NumPy .npy file (versions 1-3, C
 * order, little-endian float/int/uint items of 1, 2, 4 or 8 bytes) or raw bytes. */
typedef struct amk_data_info {
    int is_npy;
    char kind;      /* npy: 'f', 'i' or 'u'; raw: 0 */
    int elt_size;   /* npy: bytes per item; raw: 0 */
    int64_t count;  /* npy: items; raw: bytes */
    int64_t offset; /* where the data start */
    int64_t bytes;  /* data bytes */
} amk_data_info;
/* AMK_EIO (cannot open or read) or AMK_EPARSE (a malformed or unsupported .npy), the
 * message naming the file. */
AMK_API int amk_data_probe(const char *path, amk_data_info *out, amk_diag *d);
/* Reads the data of path into dst, which holds `bytes` bytes of elt_size-byte elements:
 * AMK_EPARSE when the file holds another amount (or, .npy, another item size). */
AMK_API int amk_data_read(const char *path, void *dst, int64_t bytes, int64_t elt_size,
                          amk_diag *d);
AMK_API int amk_fs_exists(const char *path);
/* amk's shared folder NAME ("kernels" or "data"), first next to the running executable
 * (EXE/../share/amk/NAME, an installed tree; EXE/<source>/space_defs/NAME, a build tree in or
 * beside its source tree), so a moved or copied tree finds its own; then the configure-time
 * install path, then the configure-time source path. AMK_OK with an existing directory in
 * out, else AMK_ENOENT with the last candidate in out. (AMK_KERNELS_DIR and AMK_DATA_DIR are
 * the callers' to honour first.) */
AMK_API int amk_fs_share_dir(const char *name, char *out, size_t cap);
/* $XDG_CACHE_HOME/amk or ~/.cache/amk (AMK_CACHE_DIR overrides). Writes into out. */
AMK_API int amk_fs_cache_dir(char *out, size_t cap);

/* Parses "10m", "90s", "1h", "250ms", "42" (seconds) into seconds. */
AMK_API int amk_parse_duration(const char *text, double *seconds);
/* Strict decimal int64 parse of the whole string; AMK_EPARSE or AMK_EOVERFLOW. */
AMK_API int amk_parse_i64(const char *text, int64_t *out);

#endif

/* The compile service (parent side) and the compile cache: turns configs into code objects
 * through a pool of compile workers (worker_int.h), with adaptive timeouts, a content-
 * addressed on-disk cache and kept compiler logs. No GPU header here: the runtime compiler
 * itself (NVRTC / hipRTC) is reached only inside the workers, through the amk__rtc_*
 * functions of gpu_layer.h, implemented by evaluator/gpu/compile.c in GPU builds. */
#ifndef AMK_COMPILE_INT_H
#define AMK_COMPILE_INT_H

#include "amk_evaluator.h"
#include "gpu/gpu_layer.h"
#include "service/worker_int.h"

#include <stddef.h>
#include <stdint.h>

/* ---------- compile cache (cache.c) -------------------------------------------------------
 * Layout under the cache directory:  objects/<kk>/<key>.bin  (code objects)
 *                                    logs/<name>.log         (compiler logs)
 * An entry is a 64-byte header (magic, key, payload length, payload hash, compile ms of the
 * compile that produced it) followed by the payload; a header that does not match its
 * payload is a miss and the entry is removed. Writes go to a temp file and are renamed. */
typedef struct amk_cache amk_cache;

/* dir NULL or "" = amk_fs_cache_dir(). Creates the directories. AMK_OK or AMK_EIO/ENOMEM. */
int amk__cache_open(const char *dir, amk_cache **out, amk_diag *d);
void amk__cache_close(amk_cache *c); /* accepts NULL */
const char *amk__cache_dir(const amk_cache *c);

/* What identifies a code object: the full source bytes, every option in order, the target
 * arch, the compiler's name and version ("nvrtc 13.0") and AMK_VERSION. */
uint64_t amk__cache_key(const char *source, size_t source_len, const char *const *options,
                        int n_options, const char *arch, const char *compiler);

/* AMK_OK on a verified hit (*data malloc'd, caller frees; *compile_ms = the original compile
 * time, may be NULL); AMK_ENOENT on a miss, including a corrupted or truncated entry (which
 * is removed and logged); AMK_ENOMEM. */
int amk__cache_get(amk_cache *c, uint64_t key, void **data, size_t *len, double *compile_ms,
                   amk_diag *d);
/* Stores atomically (temp + rename); concurrent writers of one key are safe. */
int amk__cache_put(amk_cache *c, uint64_t key, const void *data, size_t len,
                   double compile_ms, amk_diag *d);
/* Path of the entry for key (it may not exist). */
void amk__cache_entry_path(const amk_cache *c, uint64_t key, char *out, size_t cap);
/* Writes a compiler log to logs/<name>.log (atomically); the path goes to path_out. */
int amk__cache_write_log(amk_cache *c, const char *name, const char *log, size_t len,
                         char *path_out, size_t cap, amk_diag *d);

/* ---------- compile units (compile_unit.c) ------------------------------------------------ */
/* One thing to compile: full source text (vendor prelude + template) and options. */
typedef struct amk_compile_unit {
    char name[64];          /* label for logs/cache: config_id, or "<kernel>.reference.<dt>" */
    char kernel[AMK_NAME_MAX]; /* spec name ("" for a text unit) */
    char arch[16];          /* "sm_90", "gfx90a" */
    char entry[AMK_NAME_MAX]; /* the kernel's name as written ("" = none): the compiler
                                 lowers it (C++ mangling) into amk_code.entry */
    char *source;           /* owned */
    size_t source_len;
    char **options;         /* owned, n_options strings */
    int n_options;
} amk_compile_unit;

/* Vendor of an arch string: "nvidia" for sm_NN, "amd" for gfxNNN, NULL otherwise. */
const char *amk__arch_vendor(const char *arch);
/* The compiler options an arch implies, after the kernel's defines: the arch selector
 * ("--gpu-architecture=sm_90" / "--offload-arch=gfx90a") and the dialect/optimisation
 * defaults ("-std=c++17", "-O3" on hipRTC). Writes up to cap options into out; returns the
 * count, or AMK_EUNSUPPORTED for an unknown arch. */
int amk__arch_options(const char *arch, char out[][64], int cap, amk_diag *d);

/* The unit's arch is the effective one (amk_spec_compile_arch: sm_90 becomes sm_90a for a
 * spec that requires sm_90a; AMK_EUNSUPPORTED naming the requirement when arch cannot run it).
 * The template of c's spec with c's params: prelude(vendor of arch) + "\n" + "#line 1" +
 * template text; options = -DNAME=<int> per param, -DAMK_DTYPE=<idx>, -DAMK_ELT=<bytes>,
 * -DAMK_T_<DTYPE>=1, then the compiler's arch and default options. AMK_EIO when the template
 * cannot be read, AMK_ESPEC when the spec names no source, AMK_EUNSUPPORTED for an unknown
 * arch. On error u is left cleared. */
int amk__compile_unit_config(const amk_config *c, const char *arch, amk_compile_unit *u,
                             amk_diag *d);
/* The spec's reference kernel for c's shape dtype: no params, except the "vary" params of
 * a default_config reference at c's values (amk_config_reference_config; its refusal of an
 * invalid reference config is this call's error). */
int amk__compile_unit_reference(const amk_config *c, const char *arch, amk_compile_unit *u,
                                amk_diag *d);
/* Any source text (e.g. a calibration kernel): prelude + "\n" + text, the given extra
 * options (may be NULL/0), then arch and default options. */
int amk__compile_unit_text(const char *name, const char *entry, const char *text,
                           const char *const *extra, int n_extra, const char *arch,
                           amk_compile_unit *u, amk_diag *d);
void amk__compile_unit_clear(amk_compile_unit *u); /* frees and zeroes; accepts zeroed */

/* ---------- the compile service (compile_api.c) -------------------------------------------- */
/* A compiled unit. status is OK, COMPILE_ERROR, COMPILE_CRASH or COMPILE_TIMEOUT (or
 * REJECTED from amk__compiler_configs: the spec requires another arch). */
typedef struct amk_code {
    amk_status status;
    char entry[AMK__ENTRY_MAX]; /* ok: the unit's entry as the code object names it (its
                                   lowered name: "_Z13matmul_kernelPfS_S_", or the name
                                   itself for an extern "C" kernel) */
    void *image;            /* CUBIN (NVIDIA) or code object (AMD); malloc'd; NULL unless ok */
    size_t size;
    double compile_ms;      /* time spent now: compile wall time, or the cache lookup */
    int cache_hit;
    char key[17];           /* cache key, hex */
    char reason[512];       /* failures: first lines of the log / how the worker died */
    char notes[512];        /* log path, original compile time of a cached object, ... */
} amk_code;
void amk__code_clear(amk_code *c); /* frees image, zeroes; accepts zeroed */

typedef struct amk_compiler amk_compiler;

/* Starts the compile workers (opts->jobs, 0 = one per core) and opens the cache
 * (opts->cache_dir, NULL = default). Must run before the process touches a GPU runtime.
 * opts may be NULL. Environment: AMK_COMPILE_MEM_LIMIT (bytes, with K/M/G suffix; "0" = no
 * RLIMIT_AS; default 16G). AMK_EUNSUPPORTED in a build without a GPU vendor layer. */
int amk__compiler_create(const amk_backend_opts *opts, amk_compiler **out, amk_diag *d);
void amk__compiler_free(amk_compiler *c); /* accepts NULL */
/* "nvrtc 13.0" / "hiprtc 5.2": asked of a worker once at creation. */
const char *amk__compiler_version(const amk_compiler *c);
amk_cache *amk__compiler_cache(amk_compiler *c);
amk_worker_pool *amk__compiler_pool(amk_compiler *c);
/* The timeout the next compile gets: min(cap, max(10 s, 10 x median of recent compiles));
 * the cap is opts->compile_timeout_s (default 120 s); before any compile it is the cap. */
double amk__compiler_timeout(const amk_compiler *c);
/* The cap of the compile timeout under opts (may be NULL): opts->compile_timeout_s, else
 * the default (120 s). Exists in every build. */
double amk__compile_cap_s(const amk_backend_opts *opts);

/* Compiles n units in parallel (cache hits skip the workers). Every out[i] is filled (the
 * caller clears each with amk__code_clear). Failures of a unit are statuses; returns an
 * error only when the service itself broke (out of memory, no worker can start).
 * Test-only fault hook: AMK_TEST_COMPILE_FAULT=abort|segv|hang|spin|exit[:WHO] makes the
 * worker do that instead of compiling each missed unit whose name (config_id) starts with
 * WHO or whose kernel is named WHO (all units without :WHO). Read at every call. */
int amk__compiler_run(amk_compiler *c, const amk_compile_unit *units, size_t n,
                      amk_code *out, amk_diag *d);

/* Called in the caller's thread as soon as out[unit] is final: at once for a cache hit or a
 * unit this build cannot target, on the worker's answer (or crash, or timeout) otherwise.
 * Once per unit, in completion order. It must not use the compiler. */
typedef void (*amk_compile_done_fn)(size_t unit, void *ud);
/* amk__compiler_run, telling on_done (may be NULL) about each unit as it becomes final, so
 * the caller can use a finished code object while the rest still compile. Unlike
 * amk__compiler_run, an error return leaves out[] as it is (units already reported stay
 * valid): the caller clears every out[i] in all cases. */
int amk__compiler_run_cb(amk_compiler *c, const amk_compile_unit *units, size_t n,
                         amk_code *out, amk_compile_done_fn on_done, void *ud, amk_diag *d);

/* Convenience: builds the config units (amk__compile_unit_config) and runs them. A unit that
 * cannot be built (unreadable template) comes back as compile_error with the reason; one whose
 * spec "requires" another arch or vendor as rejected, never compiled. */
int amk__compiler_configs(amk_compiler *c, const amk_config *const *cfgs, size_t n,
                          const char *arch, amk_code *out, amk_diag *d);

/* ---------- wire format between the service and a compile worker -------------------------- */
enum { AMK__COMPILE_OP_VERSION = 1, AMK__COMPILE_OP_COMPILE = 2 };
enum {
    AMK__COMPILE_RES_OK = 0,       /* image follows */
    AMK__COMPILE_RES_REJECTED = 1, /* the compiler rejected the source: log follows */
    AMK__COMPILE_RES_FAILED = 2    /* a compiler API call failed otherwise: message in log */
};

#endif

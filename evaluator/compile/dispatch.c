/* The compile service, parent side: looks compile units up in the compile cache, sends the
 * misses to the compile workers with an adaptive timeout, turns a crash or hang into a status
 * with the log kept; also the workers' side of the protocol. The compiler runs only in the
 * workers. Building the units: compile_unit.c; amk_compile_batch for `amk compile`:
 * compile_public.c. */
#include "compile_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_CAP_S 120.0
#define TIMEOUT_FLOOR_S 10.0
#define TIMEOUT_FACTOR 10.0
#define DEFAULT_AS_LIMIT (16ull << 30)
#define N_RECENT 64

/* Cached payloads start with one kind byte: a code object, or the log of a rejection (a
 * compiler's verdict on given bytes is as deterministic as its output). */
#define KIND_IMAGE 'O'
#define KIND_REJECTED 'E'
/* A code object with its entry's lowered name: the kind byte, the name, a NUL, the image. */
#define KIND_NAMED_IMAGE 'N'

/* ---------- wire format -------------------------------------------------------------------- */

static void put_u32(amk_sb *sb, uint32_t v)
{
    amk_sb_putn(sb, (const char *)&v, sizeof v);
}

static void put_bytes(amk_sb *sb, const void *p, size_t n)
{
    put_u32(sb, (uint32_t)n);
    if (n)
        amk_sb_putn(sb, p, n);
}

static void put_str(amk_sb *sb, const char *s)
{
    put_bytes(sb, s ? s : "", s ? strlen(s) : 0);
}

typedef struct rbuf {
    const unsigned char *p;
    size_t left;
    int bad;
} rbuf;

static uint32_t get_u32(rbuf *r)
{
    uint32_t v = 0;
    if (r->bad || r->left < 4) {
        r->bad = 1;
        return 0;
    }
    memcpy(&v, r->p, 4);
    r->p += 4;
    r->left -= 4;
    return v;
}

static double get_f64(rbuf *r)
{
    double v = 0;
    if (r->bad || r->left < 8) {
        r->bad = 1;
        return 0;
    }
    memcpy(&v, r->p, 8);
    r->p += 8;
    r->left -= 8;
    return v;
}

/* Returns a pointer into the buffer (not NUL-terminated) and its length. */
static const char *get_bytes(rbuf *r, size_t *n)
{
    uint32_t len = get_u32(r);
    if (r->bad || r->left < len) {
        r->bad = 1;
        *n = 0;
        return "";
    }
    const char *s = (const char *)r->p;
    r->p += len;
    r->left -= len;
    *n = len;
    return s;
}

#if defined(AMK_HAVE_GPU)
/* A NUL-terminated malloc'd copy of a wire string (NULL on OOM or a bad buffer). */
static char *get_str(rbuf *r)
{
    size_t n;
    const char *s = get_bytes(r, &n);
    if (r->bad)
        return NULL;
    char *out = malloc(n + 1);
    if (!out) {
        r->bad = 1;
        return NULL;
    }
    memcpy(out, s, n);
    out[n] = '\0';
    return out;
}

/* Response: u32 result, f64 ms, bytes log, bytes image, bytes lowered entry name. */
static int respond(int result, double ms, const char *log, size_t log_len, const void *img,
                   size_t img_len, const char *lowered, void **resp, size_t *resp_len)
{
    amk_sb sb = {0};
    put_u32(&sb, (uint32_t)result);
    amk_sb_putn(&sb, (const char *)&ms, sizeof ms);
    put_bytes(&sb, log ? log : "", log ? log_len : 0);
    put_bytes(&sb, img, img ? img_len : 0);
    put_str(&sb, lowered);
    if (sb.oom) {
        amk_sb_free(&sb);
        return -1;
    }
    *resp_len = sb.len;
    *resp = amk_sb_take(&sb);
    return 0;
}

/* ---------- the worker side ---------------------------------------------------------------- */

/* Test-only fault injection (AMK_TEST_COMPILE_FAULT, read by the parent and sent along). */
static void inject_fault(const char *fault)
{
    if (!fault || !*fault)
        return;
    fprintf(stderr, "amk test fault: %s\n", fault);
    fflush(stderr);
    if (strcmp(fault, "abort") == 0)
        abort();
    if (strcmp(fault, "segv") == 0)
        raise(SIGSEGV);
    if (strcmp(fault, "hang") == 0)
        for (;;)
            pause();
    if (strcmp(fault, "spin") == 0) {
        volatile unsigned long x = 0;
        for (;;)
            x++;
    }
    if (strcmp(fault, "exit") == 0)
        _exit(7);
}

/* The compile worker's handler: OP_VERSION -> "nvrtc 13.0"; OP_COMPILE -> code or log. */
static int compile_handler(void *ud, const void *req, size_t req_len, void **resp,
                           size_t *resp_len)
{
    (void)ud;
    rbuf r = {req, req_len, 0};
    uint32_t op = get_u32(&r);
    amk_diag d;
    amk_diag_clear(&d);
    if (op == AMK__COMPILE_OP_VERSION) {
        char v[64];
        int rc = amk__rtc_version(v, sizeof v, &d);
        const char *txt = rc == AMK_OK ? v : d.msg;
        respond(rc == AMK_OK ? AMK__COMPILE_RES_OK : AMK__COMPILE_RES_FAILED, 0, txt,
                strlen(txt), NULL, 0, NULL, resp, resp_len);
        return AMK_WORKER_CONTINUE;
    }
    char *name = get_str(&r), *fault = get_str(&r), *source = get_str(&r);
    uint32_t n = get_u32(&r);
    char **opts = NULL;
    if (!r.bad && n <= 4096)
        opts = calloc(n ? n : 1, sizeof *opts);
    for (uint32_t i = 0; opts && i < n && !r.bad; i++)
        opts[i] = get_str(&r);
    char *entry = get_str(&r);
    int act = AMK_WORKER_CONTINUE;
    if (op != AMK__COMPILE_OP_COMPILE || r.bad || !opts || !name || !source || !entry) {
        const char *m = "malformed compile request";
        respond(AMK__COMPILE_RES_FAILED, 0, m, strlen(m), NULL, 0, NULL, resp, resp_len);
        act = AMK_WORKER_RECYCLE;
    } else {
        inject_fault(fault);
        amk_rtc_out o;
        double t0 = amk_now_s();
        int rc = amk__rtc_compile(name, source, (const char *const *)opts, (int)n, entry, &o,
                                  &d);
        double ms = (amk_now_s() - t0) * 1e3;
        if (rc != AMK_OK) {
            /* The compiler failed without rejecting the source: its state is suspect. */
            respond(AMK__COMPILE_RES_FAILED, ms, d.msg, strlen(d.msg), NULL, 0, NULL, resp,
                    resp_len);
            act = AMK_WORKER_RECYCLE;
        } else {
            respond(o.compiled ? AMK__COMPILE_RES_OK : AMK__COMPILE_RES_REJECTED, ms, o.log,
                    strlen(o.log), o.image, o.size, o.lowered, resp, resp_len);
            free(o.image);
            free(o.log);
            free(o.lowered);
        }
    }
    free(entry);
    for (uint32_t i = 0; opts && i < n; i++)
        free(opts[i]);
    free(opts);
    free(name);
    free(fault);
    free(source);
    return act;
}
#endif

/* ---------- the service -------------------------------------------------------------------- */

struct amk_compiler {
    amk_worker_pool *pool;
    amk_cache *cache;
    char version[64];
    double cap_s;
    double recent[N_RECENT]; /* seconds of recent completed compiles (ring) */
    int n_recent, next_recent;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the recent compile times in seconds; NAN when none was observed. */
static double recent_median(const amk_compiler *c)
{
    if (c->n_recent == 0)
        return NAN;
    double v[N_RECENT];
    memcpy(v, c->recent, (size_t)c->n_recent * sizeof *v);
    qsort(v, (size_t)c->n_recent, sizeof *v, cmp_double);
    return (c->n_recent % 2) ? v[c->n_recent / 2]
                             : 0.5 * (v[c->n_recent / 2 - 1] + v[c->n_recent / 2]);
}

double amk__compile_cap_s(const amk_backend_opts *opts)
{
    return opts && opts->compile_timeout_s > 0 ? opts->compile_timeout_s
                                               : DEFAULT_TIMEOUT_CAP_S;
}

double amk__compiler_timeout(const amk_compiler *c)
{
    if (!c)
        return DEFAULT_TIMEOUT_CAP_S;
    if (c->n_recent == 0)
        return c->cap_s;
    double t = fmax(TIMEOUT_FLOOR_S, TIMEOUT_FACTOR * recent_median(c));
    return fmin(t, c->cap_s);
}

static void observe(amk_compiler *c, double seconds)
{
    c->recent[c->next_recent] = seconds;
    c->next_recent = (c->next_recent + 1) % N_RECENT;
    if (c->n_recent < N_RECENT)
        c->n_recent++;
}

#if defined(AMK_HAVE_GPU)
/* "16G", "512M", "0", "17179869184" -> bytes; -1 when malformed. */
static long long parse_bytes(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0)
        return -1;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B')
        end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
    if (*end)
        return -1;
    return (long long)(v * mul);
}
#endif

amk_cache *amk__compiler_cache(amk_compiler *c)
{
    return c ? c->cache : NULL;
}

amk_worker_pool *amk__compiler_pool(amk_compiler *c)
{
    return c ? c->pool : NULL;
}

const char *amk__compiler_version(const amk_compiler *c)
{
    return c ? c->version : "";
}

void amk__compiler_free(amk_compiler *c)
{
    if (!c)
        return;
    amk__worker_pool_free(c->pool);
    amk__cache_close(c->cache);
    free(c);
}

int amk__compiler_create(const amk_backend_opts *opts, amk_compiler **out, amk_diag *d)
{
#if !defined(AMK_HAVE_GPU)
    (void)opts;
    (void)out;
    return amk_diag_set(d, AMK_EUNSUPPORTED,
                        "this amk was built without a GPU vendor layer (no CUDA toolkit / "
                        "NVRTC, no HIP / hipRTC found at configure time): it cannot compile "
                        "kernels; rebuild with -DAMK_CUDA=ON or -DAMK_HIP=ON");
#else
    amk_backend_opts none = {0};
    if (!opts)
        opts = &none;
    if (opts->jobs < 0 || opts->compile_timeout_s < 0 || isnan(opts->compile_timeout_s))
        return amk_diag_set(d, AMK_EINVAL, "compile service: jobs and compile timeout must be "
                                           ">= 0");
    amk_compiler *c = calloc(1, sizeof *c);
    if (!c)
        return amk_diag_set(d, AMK_ENOMEM, "compile service: out of memory");
    c->cap_s = amk__compile_cap_s(opts);
    int rc = amk__cache_open(opts->cache_dir, &c->cache, d);
    if (rc != AMK_OK)
        goto fail;

    uint64_t as = DEFAULT_AS_LIMIT;
    const char *env = getenv("AMK_COMPILE_MEM_LIMIT");
    if (env && *env) {
        long long v = parse_bytes(env);
        if (v < 0) {
            rc = amk_diag_set(d, AMK_EINVAL, "AMK_COMPILE_MEM_LIMIT='%s': expected bytes "
                                             "with an optional K/M/G suffix", env);
            goto fail;
        }
        as = (uint64_t)v;
    }
    amk_worker_opts wo = {0};
    wo.name = "compile";
    wo.n_workers = opts->jobs;
    wo.as_limit_bytes = as;
    wo.cpu_limit_s = c->cap_s + 30.0; /* wall timeout first; this stops a runaway regardless */
    rc = amk__worker_pool_create(&wo, compile_handler, &c->pool, d);
    if (rc != AMK_OK)
        goto fail;

    /* Ask a worker for the compiler's version: it is part of every cache key. */
    amk_sb sb = {0};
    put_u32(&sb, AMK__COMPILE_OP_VERSION);
    if (sb.oom) {
        rc = amk_diag_set(d, AMK_ENOMEM, "compile service: out of memory");
        goto fail;
    }
    amk_worker_job job = {0};
    job.req = sb.p;
    job.req_len = sb.len;
    job.timeout_s = 60;
    rc = amk__worker_pool_run(c->pool, &job, 1, d);
    amk_sb_free(&sb);
    if (rc == AMK_OK && job.rc != AMK_OK)
        rc = amk_diag_set(d, AMK_EWORKER, "compile worker failed to report the compiler "
                          "version: %s%s%.300s", job.reason, job.stderr_tail[0] ? ": " : "",
                          job.stderr_tail);
    if (rc == AMK_OK) {
        rbuf r = {job.resp, job.resp_len, 0};
        uint32_t res = get_u32(&r);
        (void)get_f64(&r);
        size_t n;
        const char *txt = get_bytes(&r, &n);
        if (r.bad)
            rc = amk_diag_set(d, AMK_EWORKER, "compile worker: malformed version response");
        else if (res != AMK__COMPILE_RES_OK)
            rc = amk_diag_set(d, AMK_EBACKEND, "runtime compiler unavailable: %.*s", (int)n,
                              txt);
        else
            snprintf(c->version, sizeof c->version, "%.*s", (int)n, txt);
    }
    amk__worker_job_clear(&job);
    if (rc != AMK_OK)
        goto fail;
    *out = c;
    return AMK_OK;
fail:
    amk__compiler_free(c);
    return rc;
#endif
}

/* A compiler log line that reports an error: NVRTC "f.hip(6): error: ...", clang
 * "f.hip:6:5: error: ...", "fatal error", "1 error detected", "2 errors generated". */
static int is_error_line(const char *p, size_t n)
{
    static const char *const pats[] = {": error", "fatal error", " error detected",
                                       " errors detected", " error generated",
                                       " errors generated", "LLVM ERROR", NULL};
    for (int i = 0; pats[i]; i++)
        if (memmem(p, n, pats[i], strlen(pats[i])))
            return 1;
    return 0;
}

/* First lines of a compiler log worth showing in a verdict: the lines that say "error"
 * (or, failing that, the first non-empty lines), joined with " | ". */
static void log_summary(const char *log, size_t len, char *out, size_t cap)
{
    size_t k = 0;
    out[0] = '\0';
    for (int pass = 0; pass < 2 && k == 0; pass++) {
        int lines = 0;
        const char *p = log, *end = log + len;
        while (p < end && lines < 4) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
            int want = n > 0 && (pass == 1 || is_error_line(p, n));
            if (want) {
                int w = snprintf(out + k, cap - k, "%s%.*s", k ? " | " : "", (int)n, p);
                if (w < 0 || (size_t)w >= cap - k) {
                    k = cap - 1;
                    break;
                }
                k += (size_t)w;
                lines++;
            }
            p += n + 1;
        }
    }
}

/* Last non-empty line of a stderr tail ("munmap_chunk(): invalid pointer"). */
static void last_line(const char *s, char *out, size_t cap)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        n--;
    size_t b = n;
    while (b > 0 && s[b - 1] != '\n')
        b--;
    snprintf(out, cap, "%.*s", (int)(n - b), s + b);
}

static void keep_log(amk_compiler *c, amk_code *o, const char *name, const char *log,
                     size_t len)
{
    char path[PATH_MAX];
    amk_diag d;
    if (amk__cache_write_log(c->cache, name, log, len, path, sizeof path, &d) == AMK_OK)
        snprintf(o->notes, sizeof o->notes, "log: %s", path);
    else
        snprintf(o->notes, sizeof o->notes, "log not kept: %s", d.msg);
}

/* Fills o from a cached payload. */
static void from_cache(amk_compiler *c, const amk_compile_unit *u, amk_code *o, void *data,
                       size_t len, double orig_ms)
{
    unsigned char *p = data;
    size_t skip = 1;
    if (p[0] == KIND_NAMED_IMAGE) {
        const unsigned char *nul = memchr(p + 1, '\0', len - 1);
        skip = nul ? (size_t)(nul - p) + 1 : len;
        snprintf(o->entry, sizeof o->entry, "%.*s", (int)(skip - 2), (const char *)p + 1);
    } else
        snprintf(o->entry, sizeof o->entry, "%s", u->entry);
    if (p[0] == KIND_IMAGE || p[0] == KIND_NAMED_IMAGE) {
        o->status = AMK_STATUS_OK;
        memmove(p, p + skip, len - skip);
        o->image = p;
        o->size = len - skip;
        snprintf(o->notes, sizeof o->notes, "cached code object (compiled in %.0f ms)",
                 orig_ms);
    } else {
        o->status = AMK_STATUS_COMPILE_ERROR;
        char sum[400];
        log_summary((const char *)p + 1, len - 1, sum, sizeof sum);
        snprintf(o->reason, sizeof o->reason, "compiler rejected the source (cached): %s", sum);
        keep_log(c, o, u->name, (const char *)p + 1, len - 1);
        free(data);
    }
}

static int cache_store(amk_compiler *c, uint64_t key, char kind, const void *data, size_t len,
                       double ms)
{
    unsigned char *buf = malloc(len + 1);
    if (!buf)
        return AMK_ENOMEM;
    buf[0] = (unsigned char)kind;
    if (len)
        memcpy(buf + 1, data, len);
    amk_diag d;
    int rc = amk__cache_put(c->cache, key, buf, len + 1, ms, &d);
    if (rc != AMK_OK)
        amk_log(AMK_LOG_WARN, "compile cache: not stored: %s", d.msg);
    free(buf);
    return rc;
}

/* The fault the test hook asks for on unit u, or NULL: AMK_TEST_COMPILE_FAULT=FAULT[:WHO]
 * where WHO is a prefix of the unit's name (config_id) or its kernel's name. */
static const char *fault_for(const amk_compile_unit *u, char *buf, size_t cap)
{
    const char *env = getenv("AMK_TEST_COMPILE_FAULT");
    if (!env || !*env)
        return NULL;
    snprintf(buf, cap, "%s", env);
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = '\0';
        const char *who = colon + 1;
        if (strncmp(u->name, who, strlen(who)) != 0 && strcmp(u->kernel, who) != 0)
            return NULL;
    }
    return buf;
}

/* Turns a worker job's outcome into o; stores successes and rejections in the cache. */
static void finish(amk_compiler *c, const amk_compile_unit *u, uint64_t key,
                   amk_worker_job *job, double timeout_s, double med, amk_code *o)
{
    o->compile_ms = job->elapsed_s * 1e3;
    if (job->rc == AMK_ETIMEDOUT ||
        (job->rc == AMK_EWORKER && job->term_signal == SIGXCPU)) {
        o->status = AMK_STATUS_COMPILE_TIMEOUT;
        if (job->rc == AMK_ETIMEDOUT && isnan(med))
            snprintf(o->reason, sizeof o->reason,
                     "compile passed its %.3g s limit (the cap: no compile time observed "
                     "yet); worker killed and replaced", timeout_s);
        else if (job->rc == AMK_ETIMEDOUT)
            snprintf(o->reason, sizeof o->reason,
                     "compile passed its %.3g s limit (min(cap %.3g s, max(%.0f s, %.0f x "
                     "median compile %.3g s))); worker killed and replaced",
                     timeout_s, c->cap_s, TIMEOUT_FLOOR_S, TIMEOUT_FACTOR, med);
        else
            snprintf(o->reason, sizeof o->reason,
                     "compile passed its CPU-time limit (SIGXCPU); worker replaced");
        if (job->stderr_tail[0])
            keep_log(c, o, u->name, job->stderr_tail, strlen(job->stderr_tail));
        return;
    }
    if (job->rc != AMK_OK) {
        char last[200];
        last_line(job->stderr_tail, last, sizeof last);
        o->status = AMK_STATUS_COMPILE_CRASH;
        snprintf(o->reason, sizeof o->reason, "compiler crashed: %s%s%s", job->reason,
                 last[0] ? ": " : "", last);
        amk_sb sb = {0};
        amk_sb_printf(&sb, "%s\n--- worker stderr (tail) ---\n%s", job->reason,
                      job->stderr_tail);
        if (!sb.oom)
            keep_log(c, o, u->name, sb.p, sb.len);
        amk_sb_free(&sb);
        return;
    }
    rbuf r = {job->resp, job->resp_len, 0};
    uint32_t res = get_u32(&r);
    double ms = get_f64(&r);
    size_t log_len, img_len;
    size_t low_len;
    const char *log = get_bytes(&r, &log_len);
    const char *img = get_bytes(&r, &img_len);
    const char *low = get_bytes(&r, &low_len);
    if (r.bad || res > AMK__COMPILE_RES_FAILED || low_len >= sizeof o->entry ||
        memchr(low, '\0', low_len) || (res == AMK__COMPILE_RES_OK && u->entry[0] && !low_len)) {
        o->status = AMK_STATUS_COMPILE_CRASH;
        snprintf(o->reason, sizeof o->reason, "compile worker sent a malformed response");
        return;
    }
    if (res == AMK__COMPILE_RES_FAILED) {
        o->status = AMK_STATUS_COMPILE_CRASH;
        snprintf(o->reason, sizeof o->reason, "compiler failed: %.*s", (int)log_len, log);
        keep_log(c, o, u->name, log, log_len);
        return;
    }
    o->compile_ms = ms;
    observe(c, ms / 1e3);
    if (res == AMK__COMPILE_RES_REJECTED) {
        char sum[400];
        o->status = AMK_STATUS_COMPILE_ERROR;
        log_summary(log, log_len, sum, sizeof sum);
        snprintf(o->reason, sizeof o->reason, "compiler rejected the source: %s", sum);
        keep_log(c, o, u->name, log, log_len);
        cache_store(c, key, KIND_REJECTED, log, log_len, ms);
        return;
    }
    o->image = malloc(img_len ? img_len : 1);
    if (!o->image) {
        o->status = AMK_STATUS_COMPILE_CRASH;
        snprintf(o->reason, sizeof o->reason, "out of memory for a %zu-byte code object",
                 img_len);
        return;
    }
    memcpy(o->image, img, img_len);
    o->size = img_len;
    o->status = AMK_STATUS_OK;
    if (!low_len) {
        snprintf(o->entry, sizeof o->entry, "%s", u->entry);
        cache_store(c, key, KIND_IMAGE, img, img_len, ms);
        return;
    }
    snprintf(o->entry, sizeof o->entry, "%.*s", (int)low_len, low);
    /* the lowered name is stored with the image: a hit needs no compiler to know it */
    unsigned char *named = malloc(low_len + 1 + img_len);
    if (named) {
        memcpy(named, low, low_len);
        named[low_len] = '\0';
        memcpy(named + low_len + 1, img, img_len);
        cache_store(c, key, KIND_NAMED_IMAGE, named, low_len + 1 + img_len, ms);
        free(named);
    }
}

int amk__compiler_run(amk_compiler *c, const amk_compile_unit *units, size_t n,
                      amk_code *out, amk_diag *d)
{
    int rc = amk__compiler_run_cb(c, units, n, out, NULL, NULL, d);
    if (rc != AMK_OK)
        for (size_t i = 0; i < n && out; i++)
            amk__code_clear(&out[i]);
    return rc;
}

/* What the pool's completion callback needs to finish a compile unit and pass it on. */
typedef struct run_ctx {
    amk_compiler *c;
    const amk_compile_unit *units;
    amk_code *out;
    amk_worker_job *jobs;
    const size_t *which;
    const uint64_t *keys;
    double timeout_s, med;
    amk_compile_done_fn on_done;
    void *ud;
} run_ctx;

static void job_finished(size_t k, void *ud)
{
    run_ctx *x = ud;
    size_t i = x->which[k];
    finish(x->c, &x->units[i], x->keys[i], &x->jobs[k], x->timeout_s, x->med, &x->out[i]);
    if (x->on_done)
        x->on_done(i, x->ud);
}

int amk__compiler_run_cb(amk_compiler *c, const amk_compile_unit *units, size_t n,
                         amk_code *out, amk_compile_done_fn on_done, void *ud, amk_diag *d)
{
    if (!c || (n && (!units || !out)))
        return amk_diag_set(d, AMK_EINVAL, "compile service: invalid arguments");
    for (size_t i = 0; i < n; i++)
        memset(&out[i], 0, sizeof out[i]);
    amk_worker_job *jobs = calloc(n ? n : 1, sizeof *jobs);
    size_t *which = calloc(n ? n : 1, sizeof *which);
    uint64_t *keys = calloc(n ? n : 1, sizeof *keys);
    amk_sb *reqs = calloc(n ? n : 1, sizeof *reqs);
    if (!jobs || !which || !keys || !reqs) {
        free(jobs);
        free(which);
        free(keys);
        free(reqs);
        return amk_diag_set(d, AMK_ENOMEM, "compile service: out of memory");
    }
#if defined(AMK_HAVE_GPU)
    const char *vendor = amk__rtc_vendor();
#else
    const char *vendor = "";
#endif
    double timeout_s = amk__compiler_timeout(c), med = recent_median(c);
    size_t nj = 0;
    int rc = AMK_OK;
    for (size_t i = 0; i < n; i++) {
        const amk_compile_unit *u = &units[i];
        amk_code *o = &out[i];
        o->status = AMK_STATUS_COMPILE_ERROR;
        const char *uv = amk__arch_vendor(u->arch);
        if (!uv || strcmp(uv, vendor) != 0) {
            snprintf(o->reason, sizeof o->reason,
                     "this build's compiler (%s) cannot target '%s'", c->version, u->arch);
            if (on_done)
                on_done(i, ud);
            continue;
        }
        keys[i] = amk__cache_key(u->source, u->source_len, (const char *const *)u->options,
                                 u->n_options, u->arch, c->version);
        if (u->entry[0]) /* the name expression is an input of the compile too */
            keys[i] = amk_hash64_update(keys[i], u->entry, strlen(u->entry) + 1);
        amk_hash_hex(keys[i], o->key);
        double t0 = amk_now_s(), orig = 0;
        void *data = NULL;
        size_t len = 0;
        int g = amk__cache_get(c->cache, keys[i], &data, &len, &orig, d);
        if (g == AMK_ENOMEM) {
            rc = g;
            goto done;
        }
        if (g == AMK_OK && len >= 1 &&
            (((unsigned char *)data)[0] == KIND_IMAGE ||
             ((unsigned char *)data)[0] == KIND_NAMED_IMAGE ||
             ((unsigned char *)data)[0] == KIND_REJECTED)) {
            o->cache_hit = 1;
            from_cache(c, u, o, data, len, orig);
            o->compile_ms = (amk_now_s() - t0) * 1e3;
            if (on_done)
                on_done(i, ud);
            continue;
        }
        free(data);
        char fb[128];
        const char *fault = fault_for(u, fb, sizeof fb);
        amk_sb *sb = &reqs[nj];
        put_u32(sb, AMK__COMPILE_OP_COMPILE);
        put_str(sb, u->name);
        put_str(sb, fault);
        put_bytes(sb, u->source, u->source_len);
        put_u32(sb, (uint32_t)u->n_options);
        for (int k = 0; k < u->n_options; k++)
            put_str(sb, u->options[k]);
        put_str(sb, u->entry);
        if (sb->oom) {
            rc = amk_diag_set(d, AMK_ENOMEM, "compile service: out of memory");
            goto done;
        }
        jobs[nj].req = sb->p;
        jobs[nj].req_len = sb->len;
        jobs[nj].timeout_s = timeout_s;
        which[nj++] = i;
    }
    if (nj > 0) {
        amk_diag pd;
        amk_diag_clear(&pd);
        run_ctx x = {c, units, out, jobs, which, keys, timeout_s, med, on_done, ud};
        int prc = amk__worker_pool_run_cb(c->pool, jobs, nj, job_finished, &x, &pd);
        if (prc != AMK_OK)
            rc = amk_diag_set(d, prc, "%s", pd.msg);
    }
done:
    for (size_t k = 0; k < n; k++) {
        amk__worker_job_clear(&jobs[k]);
        amk_sb_free(&reqs[k]);
    }
    free(jobs);
    free(which);
    free(keys);
    free(reqs);
    return rc;
}

int amk__compiler_configs(amk_compiler *c, const amk_config *const *cfgs, size_t n,
                          const char *arch, amk_code *out, amk_diag *d)
{
    amk_compile_unit *units = calloc(n ? n : 1, sizeof *units);
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    amk_code *codes = calloc(n ? n : 1, sizeof *codes);
    if (!units || !idx || !codes) {
        free(units);
        free(idx);
        free(codes);
        return amk_diag_set(d, AMK_ENOMEM, "compile service: out of memory");
    }
    size_t nu = 0;
    int rc = AMK_OK;
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        amk_diag ud;
        amk_diag_clear(&ud);
        int u = amk__compile_unit_config(cfgs[i], arch, &units[nu], &ud);
        if (u == AMK_ENOMEM) {
            rc = amk_diag_set(d, u, "%s", ud.msg);
            goto done;
        }
        if (u == AMK_EUNSUPPORTED && amk__arch_vendor(arch)) {
            /* A known arch the spec's "requires" rules out: never compiled. */
            out[i].status = AMK_STATUS_REJECTED;
            amk_config_id(cfgs[i], out[i].key);
            snprintf(out[i].reason, sizeof out[i].reason, "%s", ud.msg);
            continue;
        }
        if (u != AMK_OK) {
            out[i].status = AMK_STATUS_COMPILE_ERROR;
            amk_config_id(cfgs[i], out[i].key);
            snprintf(out[i].reason, sizeof out[i].reason, "cannot build the source: %s",
                     ud.msg);
            continue;
        }
        idx[nu++] = i;
    }
    rc = amk__compiler_run(c, units, nu, codes, d);
    if (rc == AMK_OK)
        for (size_t k = 0; k < nu; k++)
            out[idx[k]] = codes[k]; /* moves the image */
done:
    for (size_t k = 0; k < nu; k++)
        amk__compile_unit_clear(&units[k]);
    free(units);
    free(idx);
    free(codes);
    return rc;
}

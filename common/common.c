/* Error and status tables, diagnostics, logging, hashing, string builder and time. */
#include "amk_common.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>

const char *amk_strerror(int code)
{
    switch (code) {
    case AMK_OK: return "success";
#define XX(name, val, msg) case AMK_##name: return msg;
        AMK_ERRNO_MAP(XX)
#undef XX
    default: return "unknown error";
    }
}

const char *amk_err_name(int code)
{
    switch (code) {
    case AMK_OK: return "AMK_OK";
#define XX(name, val, msg) case AMK_##name: return "AMK_" #name;
        AMK_ERRNO_MAP(XX)
#undef XX
    default: return "AMK_EUNKNOWN";
    }
}

int amk_err_exit_code(int code)
{
    switch (code) {
    case AMK_OK: return 0;
    case AMK_ENOMEM:
    case AMK_EBACKEND:
    case AMK_EWORKER:
    case AMK_ETIMEDOUT: return 5;
    case AMK_ETSV:
    case AMK_EOBJECTIVE:
    case AMK_EIO: return 3;
    case AMK_ENODEV:
    case AMK_EUNSUPPORTED: return 4;
    default: return 2;
    }
}

int amk_diag_set(amk_diag *d, int code, const char *fmt, ...)
{
    if (d) {
        va_list ap;
        va_start(ap, fmt);
        d->code = code;
        vsnprintf(d->msg, sizeof d->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int amk_diag_prefix(amk_diag *d, const char *fmt, ...)
{
    if (!d)
        return AMK_OK;
    char prefix[512], old[sizeof d->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, d->msg, sizeof old);
    snprintf(d->msg, sizeof d->msg, "%s: %s", prefix, old);
    return d->code;
}

void amk_diag_clear(amk_diag *d)
{
    if (d) {
        d->code = AMK_OK;
        d->msg[0] = '\0';
    }
}

static const char *const status_names[] = {
#define XX(name, str, doc) str,
    AMK_STATUS_MAP(XX)
#undef XX
};
static const char *const status_docs[] = {
#define XX(name, str, doc) doc,
    AMK_STATUS_MAP(XX)
#undef XX
};

const char *amk_status_name(amk_status s)
{
    return (unsigned)s < AMK_STATUS_COUNT ? status_names[s] : "invalid";
}

const char *amk_status_doc(amk_status s)
{
    return (unsigned)s < AMK_STATUS_COUNT ? status_docs[s] : "";
}

int amk_status_parse(const char *name, amk_status *out)
{
    for (int i = 0; i < AMK_STATUS_COUNT; i++)
        if (name && strcmp(name, status_names[i]) == 0) {
            *out = (amk_status)i;
            return AMK_OK;
        }
    return AMK_EPARSE;
}

static const char *const kind_names[] = {"", "measured", "predicted", "replayed"};

const char *amk_latency_kind_name(amk_latency_kind k)
{
    return (unsigned)k < 4 ? kind_names[k] : "";
}

int amk_latency_is_evidence(amk_latency_kind k)
{
    return k == AMK_LAT_MEASURED || k == AMK_LAT_REPLAYED;
}

int amk_latency_kind_parse(const char *name, amk_latency_kind *out)
{
    if (!name)
        return AMK_EPARSE;
    if (strcmp(name, "empty") == 0) { /* accepted as a synonym of the empty field */
        *out = AMK_LAT_NONE;
        return AMK_OK;
    }
    for (int i = 0; i < 4; i++)
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (amk_latency_kind)i;
            return AMK_OK;
        }
    return AMK_EPARSE;
}

static const char *const objective_names[AMK_OBJ_COUNT] = {"time", "energy", "edp"};

const char *amk_objective_name(amk_objective o)
{
    return (unsigned)o < AMK_OBJ_COUNT ? objective_names[o] : "";
}

int amk_objective_parse(const char *name, amk_objective *out)
{
    for (int i = 0; name && i < AMK_OBJ_COUNT; i++)
        if (strcmp(name, objective_names[i]) == 0) {
            *out = (amk_objective)i;
            return AMK_OK;
        }
    return AMK_EPARSE;
}

double amk_energy_noise(int ticks)
{
    return ticks >= 1 ? 1.0 / ticks : NAN;
}

static int positive(double v)
{
    return isfinite(v) && v > 0;
}

double amk_objective_score(amk_objective o, double latency_us, double energy_uj,
                           int energy_ticks)
{
    int has_e = energy_ticks >= 1 && positive(energy_uj);
    switch (o) {
    case AMK_OBJ_TIME: return positive(latency_us) ? latency_us : NAN;
    case AMK_OBJ_ENERGY: return has_e ? energy_uj : NAN;
    case AMK_OBJ_EDP: return has_e && positive(latency_us) ? energy_uj * latency_us : NAN;
    default: return NAN;
    }
}

double amk_objective_noise(amk_objective o, double spread, int energy_ticks)
{
    double t = isfinite(spread) && spread > 0 ? spread : 0;
    double e = energy_ticks >= 1 ? amk_energy_noise(energy_ticks) : 0;
    return o == AMK_OBJ_TIME ? t : o == AMK_OBJ_ENERGY ? e : t + e;
}

double amk_peer_scaled(double latency_us, const char *peer, double peer_us,
                       const char *ref_peer, double ref_peer_us)
{
    if (!peer || !ref_peer || !peer[0] || strcmp(peer, ref_peer) != 0 || !positive(latency_us) ||
        !positive(peer_us) || !positive(ref_peer_us))
        return NAN;
    return latency_us * ref_peer_us / peer_us;
}

int amk_log_level(void)
{
    static int level = -1;
    if (level < 0) {
        const char *e = getenv("AMK_LOG");
        level = AMK_LOG_WARN;
        if (e) {
            if (!strcmp(e, "error")) level = AMK_LOG_ERROR;
            else if (!strcmp(e, "info")) level = AMK_LOG_INFO;
            else if (!strcmp(e, "debug")) level = AMK_LOG_DEBUG;
        }
    }
    return level;
}

void amk_log(int level, const char *fmt, ...)
{
    static const char *const tag[] = {"error", "warning", "info", "debug"};
    if (level > amk_log_level())
        return;
    va_list ap;
    va_start(ap, fmt);
    char raw[8192], safe[sizeof raw + 4]; /* quoted input shown safely (amk_text_show) */
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1;
    fprintf(stderr, "amk: %s: %s\n", tag[level < 0 ? 0 : level > 3 ? 3 : level],
            amk_text_show(safe, sizeof safe, raw, len, len));
}

uint64_t amk_hash64_update(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

uint64_t amk_hash64(const void *data, size_t len)
{
    return amk_hash64_update(AMK_HASH64_INIT, data, len);
}

void amk_hash_hex(uint64_t h, char out[17])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--) {
        out[i] = hex[h & 15];
        h >>= 4;
    }
    out[16] = '\0';
}

static int sb_reserve(amk_sb *sb, size_t extra)
{
    if (sb->oom)
        return 0;
    size_t need = sb->len + extra + 1;
    if (need <= sb->cap)
        return 1;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap *= 2;
    char *p = realloc(sb->p, cap);
    if (!p) {
        sb->oom = 1;
        return 0;
    }
    sb->p = p;
    sb->cap = cap;
    return 1;
}

void amk_sb_vprintf(amk_sb *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !sb_reserve(sb, (size_t)n))
        return;
    vsnprintf(sb->p + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void amk_sb_printf(amk_sb *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    amk_sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

void amk_sb_putn(amk_sb *sb, const char *s, size_t n)
{
    if (!sb_reserve(sb, n))
        return;
    memcpy(sb->p + sb->len, s, n);
    sb->len += n;
    sb->p[sb->len] = '\0';
}

void amk_sb_free(amk_sb *sb)
{
    free(sb->p);
    memset(sb, 0, sizeof *sb);
}

char *amk_sb_take(amk_sb *sb)
{
    if (sb->oom) {
        amk_sb_free(sb);
        return NULL;
    }
    if (!sb->p && !sb_reserve(sb, 0))
        return NULL;
    if (sb->len == 0)
        sb->p[0] = '\0';
    char *p = sb->p;
    memset(sb, 0, sizeof *sb);
    return p;
}

double amk_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void amk_time_iso(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int amk_parse_i64(const char *text, int64_t *out)
{
    if (!text || !*text)
        return AMK_EPARSE;
    const char *p = text;
    if (*p == '-' || *p == '+')
        p++;
    if (*p < '0' || *p > '9')
        return AMK_EPARSE;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (*end != '\0')
        return AMK_EPARSE;
    if (errno == ERANGE)
        return AMK_EOVERFLOW;
    *out = (int64_t)v;
    return AMK_OK;
}

int amk_parse_duration(const char *text, double *seconds)
{
    if (!text || !*text)
        return AMK_EPARSE;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno == ERANGE || !(v >= 0) || v > 1e9)
        return AMK_EPARSE;
    double scale;
    if (!*end || !strcmp(end, "s")) scale = 1;
    else if (!strcmp(end, "ms")) scale = 1e-3;
    else if (!strcmp(end, "m") || !strcmp(end, "min")) scale = 60;
    else if (!strcmp(end, "h")) scale = 3600;
    else return AMK_EPARSE;
    *seconds = v * scale;
    return AMK_OK;
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 when invalid (overlong
 * forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F) || (c == 0xF0 && p[1] < 0x90) ||
        (c == 0xF4 && p[1] > 0x8F))
        return 0;
    return len;
}

const char *amk_text_show(char *out, size_t cap, const char *s, size_t n, size_t max)
{
    if (!cap)
        return out;
    if (max + 4 > cap)
        max = cap > 4 ? cap - 4 : 0;
    const unsigned char *p = (const unsigned char *)s;
    size_t k = n > max ? max : n, i = 0, j = 0;
    while (i < k) {
        size_t len = utf8_len(p + i, k - i);
        int c1 = len == 2 && p[i] == 0xC2 && p[i + 1] < 0xA0; /* U+0080..U+009F */
        if (len == 1 && p[i] >= 0x20 && p[i] != 0x7f) {
            out[j++] = (char)p[i++];
        } else if (len > 1 && !c1) {
            memcpy(out + j, p + i, len);
            i += len;
            j += len;
        } else {
            out[j++] = '?';
            i += c1 ? 2 : 1;
        }
    }
    if (k < n) {
        memcpy(out + j, "...", 3);
        j += 3;
    }
    out[j] = '\0';
    return out;
}

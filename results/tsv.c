/* results.tsv v1: the row codec (one table of columns drives format and parse), the
 * appender (versioned header, torn-row isolation, locked durable appends) and the
 * streaming reader with the torn-row rule. Numbers are always written and read in the
 * C locale, whatever the embedding program set. */
#include "results_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the column table ------------------------------------------------------------ */

typedef enum col_type {
    COL_TRIAL,  /* int64 >= 0, required */
    COL_STR,    /* free text, bounded by the struct member */
    COL_ID,     /* 16 lowercase hex digits or empty */
    COL_STATUS, /* amk_status name */
    COL_DBL,    /* finite decimal number or empty (NAN) */
    COL_KIND,   /* amk_latency_kind name or empty */
    COL_CACHE,  /* 0, 1, -1 or empty (-1) */
    COL_KEPT    /* 0 or 1 */
} col_type;

typedef struct col_def {
    const char *name;
    col_type type;
    size_t off, size;
    int prec; /* %.*g digits for COL_DBL */
} col_def;

#define MEMBER_SIZE(f) sizeof(((amk_row *)0)->f)
#define C_STR(f) {#f, COL_STR, offsetof(amk_row, f), MEMBER_SIZE(f), 0}
#define C_DBL(f, p) {#f, COL_DBL, offsetof(amk_row, f), sizeof(double), p}
/* One definition per column name: a column added to AMK_TSV_COLUMNS without a definition
 * here fails to compile, and the table is always in header order. */
#define COLDEF_trial {"trial", COL_TRIAL, offsetof(amk_row, trial), sizeof(int64_t), 0}
#define COLDEF_time C_STR(time)
#define COLDEF_kernel C_STR(kernel)
#define COLDEF_shape C_STR(shape)
#define COLDEF_config_id {"config_id", COL_ID, offsetof(amk_row, config_id), 17, 0}
#define COLDEF_params C_STR(params)
#define COLDEF_source C_STR(source)
#define COLDEF_status {"status", COL_STATUS, offsetof(amk_row, status), sizeof(amk_status), 0}
#define COLDEF_latency_us C_DBL(latency_us, 9)
#define COLDEF_latency_kind                                                             \
    {"latency_kind", COL_KIND, offsetof(amk_row, latency_kind), sizeof(amk_latency_kind), 0}
#define COLDEF_spread C_DBL(spread, 6)
#define COLDEF_predicted_us C_DBL(predicted_us, 9)
#define COLDEF_bound_us C_DBL(bound_us, 9)
#define COLDEF_pct_of_roofline C_DBL(pct_of_roofline, 6)
#define COLDEF_compile_ms C_DBL(compile_ms, 9)
#define COLDEF_cache_hit {"cache_hit", COL_CACHE, offsetof(amk_row, cache_hit), sizeof(int), 0}
#define COLDEF_kept {"kept", COL_KEPT, offsetof(amk_row, kept), sizeof(int), 0}
#define COLDEF_device C_STR(device)
#define COLDEF_note C_STR(note)

static const col_def cols[AMK__TSV_NCOLS] = {
#define XX(c) COLDEF_##c,
    AMK_TSV_COLUMNS(XX)
#undef XX
};

#define XX(c) "\t" #c
static const char column_line_tab[] = AMK_TSV_COLUMNS(XX);
#undef XX
/* AMK_TSV_HEADER "\n" column line "\n", built once. */
static char header_fixed[sizeof AMK_TSV_HEADER + sizeof column_line_tab];
static pthread_once_t header_once = PTHREAD_ONCE_INIT;

static void header_init(void)
{
    size_t hl = sizeof AMK_TSV_HEADER - 1;
    memcpy(header_fixed, AMK_TSV_HEADER "\n", hl + 1);
    memcpy(header_fixed + hl + 1, column_line_tab + 1, sizeof column_line_tab - 1);
    header_fixed[hl + sizeof column_line_tab - 1] = '\n';
    header_fixed[hl + sizeof column_line_tab] = '\0';
}

const char *amk__tsv_column_name(int i)
{
    return i >= 0 && i < AMK__TSV_NCOLS ? cols[i].name : NULL;
}

const char *amk__tsv_column_line(void)
{
    return column_line_tab + 1;
}

const char *amk__tsv_header_block(void)
{
    pthread_once(&header_once, header_init);
    return header_fixed;
}

static locale_t c_loc;
static pthread_once_t c_loc_once = PTHREAD_ONCE_INIT;

static void c_loc_init(void)
{
    c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static locale_t c_locale(void)
{
    pthread_once(&c_loc_once, c_loc_init);
    return c_loc;
}

/* ---- rows -------------------------------------------------------------------------- */

void amk_row_init(amk_row *r)
{
    memset(r, 0, sizeof *r);
    r->status = AMK_STATUS_OK;
    r->latency_us = r->spread = r->predicted_us = r->bound_us = NAN;
    r->pct_of_roofline = r->compile_ms = NAN;
    r->latency_kind = AMK_LAT_NONE;
    r->cache_hit = -1;
}

#define FIELD(r, c, T) (*(T *)((char *)(r) + (c)->off))
#define CFIELD(r, c, T) (*(const T *)((const char *)(r) + (c)->off))

/* Writes free text so that it survives TSV and pandas: control bytes (tab, newline, CR, …)
 * and '#' (pandas' comment="#" would cut the line there) become spaces, and a leading '"'
 * becomes '\'' (pandas would open a quoted field). */
static void put_text(amk_sb *out, const char *s, size_t cap)
{
    char buf[1024];
    size_t n = strnlen(s, cap - 1);
    if (n > sizeof buf)
        n = sizeof buf;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        buf[i] = (ch < 0x20 || ch == 0x7f || ch == '#') ? ' ' : (char)ch;
    }
    if (n > 0 && buf[0] == '"')
        buf[0] = '\'';
    amk_sb_putn(out, buf, n);
}

static void put_double(amk_sb *out, double v, int prec)
{
    if (!isfinite(v))
        return; /* NAN (and, never expected, inf) is the empty field */
    char buf[40];
    int n = snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (n > 0)
        amk_sb_putn(out, buf, (size_t)n);
}

void amk_row_format(const amk_row *r, amk_sb *out)
{
    locale_t loc = c_locale(), old = loc ? uselocale(loc) : (locale_t)0;
    char buf[32];
    int n;
    for (int i = 0; i < AMK__TSV_NCOLS; i++) {
        const col_def *c = &cols[i];
        if (i)
            amk_sb_putn(out, "\t", 1);
        switch (c->type) {
        case COL_TRIAL:
            n = snprintf(buf, sizeof buf, "%" PRId64, CFIELD(r, c, int64_t));
            amk_sb_putn(out, buf, (size_t)n);
            break;
        case COL_STR:
        case COL_ID:
            put_text(out, (const char *)r + c->off, c->size);
            break;
        case COL_STATUS: {
            amk_status s = CFIELD(r, c, amk_status);
            const char *name = amk_status_name(s);
            amk_sb_putn(out, name, strlen(name));
            break;
        }
        case COL_DBL:
            put_double(out, CFIELD(r, c, double), c->prec);
            break;
        case COL_KIND: {
            const char *name = amk_latency_kind_name(CFIELD(r, c, amk_latency_kind));
            amk_sb_putn(out, name, strlen(name));
            break;
        }
        case COL_CACHE: {
            int v = CFIELD(r, c, int);
            if (v == 0 || v == 1)
                amk_sb_putn(out, v ? "1" : "0", 1);
            break;
        }
        case COL_KEPT:
            amk_sb_putn(out, CFIELD(r, c, int) ? "1" : "0", 1);
            break;
        }
    }
    amk_sb_putn(out, "\n", 1);
    if (loc)
        uselocale(old);
}

int amk__row_check(const amk_row *r, amk_diag *d)
{
    if (r->trial < 0)
        return amk_diag_set(d, AMK_EINVAL, "column trial: %" PRId64 " is negative", r->trial);
    if ((unsigned)r->status >= AMK_STATUS_COUNT)
        return amk_diag_set(d, AMK_EINVAL, "column status: %d is not a status", (int)r->status);
    if ((unsigned)r->latency_kind > AMK_LAT_REPLAYED)
        return amk_diag_set(d, AMK_EINVAL, "column latency_kind: %d is not a latency kind",
                            (int)r->latency_kind);
    if (r->cache_hit < -1 || r->cache_hit > 1)
        return amk_diag_set(d, AMK_EINVAL, "column cache_hit: %d is not -1, 0 or 1",
                            r->cache_hit);
    if (r->kept != 0 && r->kept != 1)
        return amk_diag_set(d, AMK_EINVAL, "column kept: %d is not 0 or 1", r->kept);
    size_t n = strnlen(r->config_id, sizeof r->config_id);
    if (n != 0) {
        int ok = n == 16;
        for (size_t i = 0; ok && i < 16; i++)
            ok = (r->config_id[i] >= '0' && r->config_id[i] <= '9') ||
                 (r->config_id[i] >= 'a' && r->config_id[i] <= 'f');
        if (!ok)
            return amk_diag_set(d, AMK_EINVAL,
                                "column config_id: '%.16s' is not 16 lowercase hex digits",
                                r->config_id);
    }
    return AMK_OK;
}

/* Quotes a field for a message: at most 40 bytes, control bytes shown as '?'. */
static const char *show(char out[64], const char *p, size_t n)
{
    size_t k = n > 40 ? 40 : n, j = 0;
    for (size_t i = 0; i < k; i++)
        out[j++] = ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) ? '?' : p[i];
    if (k < n) {
        memcpy(out + j, "...", 3);
        j += 3;
    }
    out[j] = '\0';
    return out;
}

/* Exact powers of ten: every 10^k with k <= 22 is a double. */
static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Strict decimal syntax [+-](digits[.digits]|.digits)[(e|E)[+-]digits]: returns 1 and sets
 * *v when the text is such a number and its value is exact by one IEEE operation (at most 15
 * significant digits, |exponent| <= 22: Clinger's fast path, correctly rounded), returns 0
 * when the syntax holds but the fast path does not apply, -1 on bad syntax. */
static int decimal_fast(const char *p, size_t n, double *v)
{
    size_t i = 0;
    int neg = 0, digits = 0, sig = 0, exp10 = 0, any = 0;
    uint64_t m = 0;
    if (i < n && (p[i] == '+' || p[i] == '-'))
        neg = p[i++] == '-';
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, any = 1) {
        if (sig || p[i] != '0')
            sig++;
        if (sig > 0 && sig <= 19)
            m = m * 10 + (uint64_t)(p[i] - '0');
        else if (sig > 19)
            exp10++;
    }
    if (i < n && p[i] == '.') {
        for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++, any = 1) {
            if (sig || p[i] != '0')
                sig++;
            if (sig <= 19) {
                m = m * 10 + (uint64_t)(p[i] - '0');
                exp10--;
            }
        }
    }
    if (!any)
        return -1;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        int eneg = 0, e = 0, edigits = 0;
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            eneg = p[i++] == '-';
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, edigits++)
            if (e < 100000)
                e = e * 10 + (p[i] - '0');
        if (!edigits)
            return -1;
        exp10 += eneg ? -e : e;
    }
    if (i != n)
        return -1;
    digits = sig;
    if (digits > 15 || exp10 < -22 || exp10 > 22)
        return 0;
    double x = (double)m;
    x = exp10 < 0 ? x / pow10_exact[-exp10] : x * pow10_exact[exp10];
    *v = neg ? -x : x;
    return 1;
}

static int parse_double(const col_def *c, const char *p, size_t n, double *out, amk_diag *d)
{
    char buf[64], q[64];
    int fast = decimal_fast(p, n, out);
    if (fast == 1)
        return AMK_OK;
    if (fast < 0 || n >= sizeof buf)
        return amk_diag_set(d, AMK_ETSV, "column %s: '%s' is not a number", c->name,
                            show(q, p, n));
    /* Valid syntax outside the fast path: let the C library round it. */
    memcpy(buf, p, n);
    buf[n] = '\0';
    char *end;
    locale_t loc = c_locale();
    double v = loc ? strtod_l(buf, &end, loc) : strtod(buf, &end);
    if (end != buf + n)
        return amk_diag_set(d, AMK_ETSV, "column %s: '%s' is not a number", c->name,
                            show(q, p, n));
    if (!isfinite(v))
        return amk_diag_set(d, AMK_ETSV, "column %s: '%s' is not a finite number", c->name,
                            show(q, p, n));
    *out = v;
    return AMK_OK;
}

/* Strict decimal int64: [+-]digits. */
static int parse_int64(const char *p, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    uint64_t v = 0, lim;
    if (i < n && (p[i] == '+' || p[i] == '-'))
        neg = p[i++] == '-';
    if (i == n)
        return AMK_EPARSE;
    lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    int overflow = 0;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return AMK_EPARSE;
        unsigned dg = (unsigned)(p[i] - '0');
        if (v > (lim - dg) / 10)
            overflow = 1;
        else
            v = v * 10 + dg;
    }
    if (overflow)
        return AMK_EOVERFLOW;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return AMK_OK;
}

/* check_bytes: whether text fields must still be searched for NUL and newline bytes (the
 * row parser skips that when the whole line is known to hold none). */
static int parse_col(const col_def *c, const char *p, size_t n, amk_row *r, int check_bytes,
                     amk_diag *d)
{
    char buf[64], q[64];
    switch (c->type) {
    case COL_TRIAL: {
        int64_t v;
        if (n == 0)
            return amk_diag_set(d, AMK_ETSV, "column trial: empty (a trial number is required)");
        int rc = parse_int64(p, n, &v);
        if (rc == AMK_EOVERFLOW)
            return amk_diag_set(d, AMK_ETSV, "column trial: '%s' is out of range",
                                show(q, p, n));
        if (rc != AMK_OK)
            return amk_diag_set(d, AMK_ETSV, "column trial: '%s' is not an integer",
                                show(q, p, n));
        if (v < 0)
            return amk_diag_set(d, AMK_ETSV, "column trial: '%s' is negative", show(q, p, n));
        FIELD(r, c, int64_t) = v;
        return AMK_OK;
    }
    case COL_STR: {
        if (n > c->size - 1)
            return amk_diag_set(d, AMK_ETSV, "column %s: %zu bytes, longer than the %zu allowed",
                                c->name, n, c->size - 1);
        if (check_bytes && (memchr(p, '\0', n) || memchr(p, '\n', n)))
            return amk_diag_set(d, AMK_ETSV, "column %s: '%s' contains a NUL or newline byte",
                                c->name, show(q, p, n));
        char *dst = (char *)r + c->off;
        memcpy(dst, p, n);
        dst[n] = '\0';
        return AMK_OK;
    }
    case COL_ID: {
        int ok = n == 0 || n == 16;
        for (size_t i = 0; ok && i < n; i++)
            ok = (p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f');
        if (!ok)
            return amk_diag_set(d, AMK_ETSV,
                                "column config_id: '%s' is not 16 lowercase hex digits",
                                show(q, p, n));
        memcpy(r->config_id, p, n);
        r->config_id[n] = '\0';
        return AMK_OK;
    }
    case COL_STATUS: {
        amk_status s;
        if (n < sizeof buf) {
            memcpy(buf, p, n);
            buf[n] = '\0';
            if (amk_status_parse(buf, &s) == AMK_OK) {
                FIELD(r, c, amk_status) = s;
                return AMK_OK;
            }
        }
        char names[400];
        size_t k = 0;
        names[0] = '\0';
        for (int i = 0; i < AMK_STATUS_COUNT && k < sizeof names; i++)
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "",
                                  amk_status_name((amk_status)i));
        return amk_diag_set(d, AMK_ETSV, "column status: '%s' is not a status (one of %s)",
                            show(q, p, n), names);
    }
    case COL_DBL: {
        double v = NAN;
        if (n > 0) {
            int rc = parse_double(c, p, n, &v, d);
            if (rc)
                return rc;
        }
        FIELD(r, c, double) = v;
        return AMK_OK;
    }
    case COL_KIND: {
        amk_latency_kind k;
        if (n < sizeof buf) {
            memcpy(buf, p, n);
            buf[n] = '\0';
            if (amk_latency_kind_parse(buf, &k) == AMK_OK) {
                FIELD(r, c, amk_latency_kind) = k;
                return AMK_OK;
            }
        }
        return amk_diag_set(d, AMK_ETSV,
                            "column latency_kind: '%s' is not measured, predicted, replayed "
                            "or empty",
                            show(q, p, n));
    }
    case COL_CACHE:
        if (n == 0 || (n == 2 && p[0] == '-' && p[1] == '1')) {
            FIELD(r, c, int) = -1;
            return AMK_OK;
        }
        if (n == 1 && (p[0] == '0' || p[0] == '1')) {
            FIELD(r, c, int) = p[0] - '0';
            return AMK_OK;
        }
        return amk_diag_set(d, AMK_ETSV, "column cache_hit: '%s' is not 0, 1 or empty",
                            show(q, p, n));
    case COL_KEPT:
        if (n == 1 && (p[0] == '0' || p[0] == '1')) {
            FIELD(r, c, int) = p[0] - '0';
            return AMK_OK;
        }
        return amk_diag_set(d, AMK_ETSV, "column kept: '%s' is not 0 or 1", show(q, p, n));
    }
    return amk_diag_set(d, AMK_ETSV, "column %s: unknown column type", c->name);
}

int amk__row_parse(const char *line, size_t len, amk_row *r, int allow_torn, amk_diag *d)
{
    const char *fp[AMK__TSV_NCOLS];
    size_t fl[AMK__TSV_NCOLS], nf = 0;
    const char *p = line, *end = line + len;
    if (!line && len) {
        amk_row_init(r);
        return amk_diag_set(d, AMK_EINVAL, "no line");
    }
    for (;;) {
        const char *tab = p < end ? memchr(p, '\t', (size_t)(end - p)) : NULL;
        const char *fe = tab ? tab : end;
        if (nf < AMK__TSV_NCOLS) {
            fp[nf] = p;
            fl[nf] = (size_t)(fe - p);
        }
        nf++;
        if (!tab)
            break;
        p = tab + 1;
    }
    /* A full row sets every member; a short one leaves the rest at their defaults. */
    if (nf != AMK__TSV_NCOLS)
        amk_row_init(r);
    if (nf > AMK__TSV_NCOLS)
        return amk_diag_set(d, AMK_ETSV, "%zu fields, expected %d", nf, AMK__TSV_NCOLS);
    /* A torn row: its last field may be cut anywhere, the ones before it must be intact. */
    size_t complete = nf < AMK__TSV_NCOLS ? nf - 1 : nf;
    int check_bytes = len && (memchr(line, '\0', len) || memchr(line, '\n', len));
    for (size_t i = 0; i < complete; i++) {
        int rc = parse_col(&cols[i], fp[i], fl[i], r, check_bytes, d);
        if (rc)
            return rc;
    }
    if (nf < AMK__TSV_NCOLS) {
        if (allow_torn)
            return AMK__ROW_TORN;
        return amk_diag_set(d, AMK_ETSV, "%zu fields, expected %d (a torn row?)", nf,
                            AMK__TSV_NCOLS);
    }
    return AMK_OK;
}

int amk_row_parse(const char *line, size_t len, amk_row *r, amk_diag *d)
{
    return amk__row_parse(line, len, r, 0, d);
}

/* ---- header ------------------------------------------------------------------------ */

int amk__tsv_check_header_line(const char *path, int lineno, const char *line, size_t len,
                               amk_diag *d)
{
    char q[64];
    if (lineno == 1) {
        static const char h[] = AMK_TSV_HEADER;
        static const char v[] = "# amk results v";
        if (len == sizeof h - 1 && memcmp(line, h, len) == 0)
            return AMK_OK;
        if (len >= sizeof v - 1 && memcmp(line, v, sizeof v - 1) == 0)
            return amk_diag_set(d, AMK_ETSV,
                                "%s:1: unsupported format '%s' (this amk reads '%s')", path,
                                show(q, line, len), h);
        return amk_diag_set(d, AMK_ETSV,
                            "%s:1: not an amk results file: first line is '%s', expected '%s'",
                            path, show(q, line, len), h);
    }
    /* Line 2: the column names, in order. */
    const char *p = line, *end = line + len;
    for (int i = 0;; i++) {
        const char *tab = p < end ? memchr(p, '\t', (size_t)(end - p)) : NULL;
        const char *fe = tab ? tab : end;
        size_t n = (size_t)(fe - p);
        if (i >= AMK__TSV_NCOLS)
            return amk_diag_set(d, AMK_ETSV, "%s:2: unexpected column %d '%s' (v1 has %d)",
                                path, i + 1, show(q, p, n), AMK__TSV_NCOLS);
        if (strlen(cols[i].name) != n || memcmp(cols[i].name, p, n) != 0)
            return amk_diag_set(d, AMK_ETSV, "%s:2: column %d is '%s', expected '%s'", path,
                                i + 1, show(q, p, n), cols[i].name);
        if (!tab) {
            if (i + 1 < AMK__TSV_NCOLS)
                return amk_diag_set(d, AMK_ETSV, "%s:2: column %d '%s' is missing", path,
                                    i + 2, cols[i + 1].name);
            return AMK_OK;
        }
        p = tab + 1;
    }
}

/* ---- the appender ------------------------------------------------------------------ */

struct amk_tsv {
    int fd;
    char *path;
    off_t scanned;     /* bytes of the file already searched for trial numbers */
    int64_t max_trial; /* highest trial number in those bytes (0: none) */
};

static int lock_ex(amk_tsv *t, amk_diag *d)
{
    while (flock(t->fd, LOCK_EX) < 0)
        if (errno != EINTR)
            return amk_diag_set(d, AMK_EIO, "%s: lock: %s", t->path, strerror(errno));
    return AMK_OK;
}

static ssize_t pread_all(int fd, char *buf, size_t n, off_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Under the lock: what must precede new rows so they land in a well-formed file. The full
 * header for an empty file, the rest of it for a file whose creation was cut short, a
 * newline after a torn row. With check_head the existing header is validated. */
static int prefix_needed(amk_tsv *t, int check_head, const char **pre, size_t *pre_len,
                         amk_diag *d)
{
    const char *hb = amk__tsv_header_block();
    size_t hb_len = strlen(hb);
    struct stat st;
    *pre = "";
    *pre_len = 0;
    if (fstat(t->fd, &st) < 0)
        return amk_diag_set(d, AMK_EIO, "%s: %s", t->path, strerror(errno));
    if (st.st_size == 0) {
        *pre = hb;
        *pre_len = hb_len;
        return AMK_OK;
    }
    if (check_head) {
        char head[4096];
        ssize_t n = pread_all(t->fd, head, sizeof head, 0);
        if (n < 0)
            return amk_diag_set(d, AMK_EIO, "%s: %s", t->path, strerror(errno));
        if ((size_t)n < hb_len && n == st.st_size && memcmp(head, hb, (size_t)n) == 0) {
            *pre = hb + n; /* a header cut short while the file was created */
            *pre_len = hb_len - (size_t)n;
            return AMK_OK;
        }
        const char *nl1 = memchr(head, '\n', (size_t)n);
        int rc = amk__tsv_check_header_line(t->path, 1, head,
                                            nl1 ? (size_t)(nl1 - head) : (size_t)n, d);
        if (rc)
            return rc;
        if (!nl1)
            return amk_diag_set(d, AMK_ETSV, "%s:1: header line truncated", t->path);
        const char *l2 = nl1 + 1, *nl2 = memchr(l2, '\n', (size_t)(head + n - l2));
        if (!nl2)
            return amk_diag_set(d, AMK_ETSV, "%s:2: column-name line missing or truncated",
                                t->path);
        rc = amk__tsv_check_header_line(t->path, 2, l2, (size_t)(nl2 - l2), d);
        if (rc)
            return rc;
    }
    char last;
    if (pread_all(t->fd, &last, 1, st.st_size - 1) != 1)
        return amk_diag_set(d, AMK_EIO, "%s: %s", t->path, strerror(errno));
    if (last != '\n') {
        amk_log(AMK_LOG_WARN, "%s: last row is torn (no newline); isolating it", t->path);
        *pre = "\n";
        *pre_len = 1;
    }
    return AMK_OK;
}

/* Writes pre + body with one locked append (amk_fs_append_locked re-takes the lock this
 * open file description already holds, which flock treats as a no-op, and releases it). */
static int write_locked(amk_tsv *t, const char *pre, size_t pre_len, const char *body,
                        size_t body_len, amk_diag *d)
{
    const char *buf = body;
    size_t len = body_len;
    char *joined = NULL;
    if (pre_len) {
        joined = malloc(pre_len + body_len);
        if (!joined) {
            flock(t->fd, LOCK_UN);
            return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", t->path);
        }
        memcpy(joined, pre, pre_len);
        if (body_len)
            memcpy(joined + pre_len, body, body_len);
        buf = joined;
        len = pre_len + body_len;
    }
    int rc = AMK_OK;
    if (len)
        rc = amk_fs_append_locked(t->fd, buf, len, d);
    flock(t->fd, LOCK_UN);
    free(joined);
    if (rc)
        amk_diag_prefix(d, "%s", t->path);
    return rc;
}

/* Under the lock: brings t->max_trial up to date with the lines appended (by anyone) since
 * the last look. A line counts when it is a whole row as the reader sees it (digits, then
 * all the columns), so torn rows and header or comment lines count for nothing; a number
 * past INT64_MAX counts as INT64_MAX (the next number is then refused, never wrapped). */
static int scan_trials(amk_tsv *t, amk_diag *d)
{
    struct stat st;
    if (fstat(t->fd, &st) < 0)
        return amk_diag_set(d, AMK_EIO, "%s: %s", t->path, strerror(errno));
    char buf[1 << 16];
    off_t off = t->scanned, line_end = t->scanned;
    int ndig = 0, tabs = 0, bad = 0, plus = 0;
    uint64_t v = 0;
    while (off < st.st_size) {
        size_t want = (size_t)(st.st_size - off) < sizeof buf ? (size_t)(st.st_size - off)
                                                              : sizeof buf;
        ssize_t r = pread_all(t->fd, buf, want, off);
        if (r < 0)
            return amk_diag_set(d, AMK_EIO, "%s: %s", t->path, strerror(errno));
        if (r == 0)
            break;
        for (ssize_t i = 0; i < r; i++) {
            char c = buf[i];
            if (c == '\n') {
                if (!bad && ndig > 0 && tabs == AMK__TSV_NCOLS - 1 && (int64_t)v > t->max_trial)
                    t->max_trial = (int64_t)v;
                ndig = tabs = bad = plus = 0;
                v = 0;
                line_end = off + i + 1;
            } else if (c == '\t') {
                tabs++;
            } else if (tabs == 0 && !bad) {
                if (c == '+' && ndig == 0 && v == 0 && !plus) {
                    plus = 1; /* the reader takes "+7" as 7: so does the count */
                } else if (c >= '0' && c <= '9') {
                    unsigned dg = (unsigned)(c - '0');
                    v = v > ((uint64_t)INT64_MAX - dg) / 10 ? (uint64_t)INT64_MAX : v * 10 + dg;
                    ndig++;
                } else {
                    bad = 1;
                }
            }
        }
        off += r;
    }
    t->scanned = line_end; /* a line still being written is read again next time */
    return AMK_OK;
}

/* A results file must be a regular file: a FIFO or a device would block or never end, a
 * directory cannot hold rows. Clears O_NONBLOCK (used only so opening a FIFO cannot wait). */
static int regular_fd(int fd, const char *path, amk_diag *d)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return amk_diag_set(d, AMK_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return amk_diag_set(d, AMK_EIO, "%s: not a regular file (%s); a results file must be "
                            "one", path, S_ISDIR(st.st_mode) ? "a directory"
                                         : S_ISFIFO(st.st_mode) ? "a FIFO"
                                         : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                                    : "a socket");
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return AMK_OK;
}

int amk_tsv_open(const char *path, amk_tsv **out, amk_diag *d)
{
    const char *pre;
    size_t pre_len;
    int rc;
    if (!out || !path)
        return amk_diag_set(d, AMK_EINVAL, "amk_tsv_open: NULL argument");
    *out = NULL;
    amk_tsv *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        free(t);
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
    }
    /* O_NONBLOCK: a FIFO must be refused, not waited on (see regular_fd). */
    t->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    if (t->fd < 0) {
        /* Whatever the cause (a missing directory included), the results file cannot be
         * written: a results file problem, not bad input. */
        int e = errno;
        char dir[4096];
        const char *slash = strrchr(path, '/');
        if (e == ENOENT && slash)
            snprintf(dir, sizeof dir, " (directory %.*s does not exist)", (int)(slash - path),
                     path);
        else
            dir[0] = '\0';
        if (e == EISDIR)
            rc = amk_diag_set(d, AMK_EIO, "%s: not a regular file (a directory); a results file "
                              "must be one", path);
        else
            rc = amk_diag_set(d, AMK_EIO, "%s: cannot create or open the results file: %s%s",
                              path, strerror(e), dir);
        goto fail;
    }
    if ((rc = regular_fd(t->fd, path, d)))
        goto fail;
    if ((rc = lock_ex(t, d)))
        goto fail;
    if ((rc = prefix_needed(t, 1, &pre, &pre_len, d))) {
        flock(t->fd, LOCK_UN);
        goto fail;
    }
    if ((rc = write_locked(t, pre, pre_len, NULL, 0, d)))
        goto fail;
    *out = t;
    return AMK_OK;
fail:
    amk_tsv_close(t);
    return rc;
}

int amk_tsv_append(amk_tsv *t, const amk_row *rows, size_t n, amk_diag *d)
{
    if (!t || (!rows && n))
        return amk_diag_set(d, AMK_EINVAL, "amk_tsv_append: NULL argument");
    if (n == 0)
        return AMK_OK;
    amk_sb body = {0};
    for (size_t i = 0; i < n; i++) {
        int rc = amk__row_check(&rows[i], d);
        if (rc) {
            amk_sb_free(&body);
            amk_diag_prefix(d, "%s: row %zu (trial %" PRId64 ")", t->path, i, rows[i].trial);
            return rc;
        }
        amk_row_format(&rows[i], &body);
    }
    if (body.oom) {
        amk_sb_free(&body);
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", t->path);
    }
    const char *pre;
    size_t pre_len;
    int rc = lock_ex(t, d);
    if (rc == AMK_OK && (rc = prefix_needed(t, 0, &pre, &pre_len, d)))
        flock(t->fd, LOCK_UN);
    if (rc == AMK_OK)
        rc = write_locked(t, pre, pre_len, body.p, body.len, d);
    amk_sb_free(&body);
    return rc;
}

int amk_tsv_append_next(amk_tsv *t, amk_row *rows, size_t n, amk_diag *d)
{
    if (!t || (!rows && n))
        return amk_diag_set(d, AMK_EINVAL, "amk_tsv_append_next: NULL argument");
    if (n == 0)
        return AMK_OK;
    int rc = lock_ex(t, d);
    if (rc)
        return rc;
    if ((rc = scan_trials(t, d))) {
        flock(t->fd, LOCK_UN);
        return rc;
    }
    if ((uint64_t)n > (uint64_t)(INT64_MAX - t->max_trial)) {
        flock(t->fd, LOCK_UN);
        return amk_diag_set(d, AMK_ETSV, "%s: trial numbers exhausted: the file already holds "
                            "trial %" PRId64 " and %zu more would pass %" PRId64
                            " (start a new results file)", t->path, t->max_trial, n, INT64_MAX);
    }
    for (size_t i = 0; i < n; i++)
        rows[i].trial = t->max_trial + 1 + (int64_t)i;
    /* The lock is held across the append: flock on the same open file description is a
     * no-op, and the append releases it once the rows are on disk. */
    rc = amk_tsv_append(t, rows, n, d);
    flock(t->fd, LOCK_UN);
    return rc;
}

void amk_tsv_close(amk_tsv *t)
{
    if (!t)
        return;
    if (t->fd >= 0)
        close(t->fd);
    free(t->path);
    free(t);
}

/* ---- the reader -------------------------------------------------------------------- */

/* A buffered line reader over a file descriptor: lines are handed out in place (no copy),
 * the buffer doubles only for a line longer than it. */
typedef struct line_reader {
    int fd;
    char *buf;
    size_t cap, start, end, scanned; /* scanned: bytes after start known to hold no '\n' */
    int eof;
} line_reader;

#define LR_MAX_LINE ((size_t)1 << 30)

/* 1 and a line (without its newline; *has_nl says whether it had one), 0 at end of file,
 * AMK_EIO / AMK_ENOMEM / AMK_ETSV (a line over 1 GiB) on failure. */
static int lr_next(line_reader *lr, const char **line, size_t *len, int *has_nl)
{
    for (;;) {
        char *from = lr->buf + lr->start + lr->scanned;
        char *nl = memchr(from, '\n', lr->end - lr->start - lr->scanned);
        if (nl) {
            *line = lr->buf + lr->start;
            *len = (size_t)(nl - *line);
            *has_nl = 1;
            lr->start += *len + 1;
            lr->scanned = 0;
            return 1;
        }
        lr->scanned = lr->end - lr->start;
        if (lr->eof) {
            if (lr->start == lr->end)
                return 0;
            *line = lr->buf + lr->start;
            *len = lr->end - lr->start;
            *has_nl = 0;
            lr->start = lr->end;
            lr->scanned = 0;
            return 1;
        }
        if (lr->start > 0) {
            memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
            lr->end -= lr->start;
            lr->start = 0;
        }
        if (lr->end == lr->cap) {
            if (lr->cap >= LR_MAX_LINE)
                return AMK_ETSV;
            char *nb = realloc(lr->buf, lr->cap * 2);
            if (!nb)
                return AMK_ENOMEM;
            lr->buf = nb;
            lr->cap *= 2;
        }
        ssize_t r = read(lr->fd, lr->buf + lr->end, lr->cap - lr->end);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return AMK_EIO;
        }
        if (r == 0)
            lr->eof = 1;
        lr->end += (size_t)r;
    }
}

int amk_tsv_read(const char *path, int (*cb)(const amk_row *r, void *ud), void *ud,
                 amk_tsv_stats *st, amk_diag *d)
{
    amk_tsv_stats local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    if (!path)
        return amk_diag_set(d, AMK_EINVAL, "amk_tsv_read: NULL path");
    line_reader lr = {.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), .cap = 1 << 18};
    if (lr.fd < 0)
        return amk_diag_set(d, errno == ENOENT ? AMK_ENOENT : AMK_EIO, "%s: %s", path,
                            strerror(errno));
    int reg = regular_fd(lr.fd, path, d);
    if (reg) {
        close(lr.fd);
        return reg;
    }
    amk_row *row = malloc(sizeof *row);
    lr.buf = malloc(lr.cap);
    if (!row || !lr.buf) {
        free(row);
        free(lr.buf);
        close(lr.fd);
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
    }
    const char *hb = amk__tsv_header_block();
    size_t hb_len = strlen(hb), hb_seen = 0, lineno = 0, len;
    const char *line;
    int has_nl, got, rc = AMK_OK;
    while ((got = lr_next(&lr, &line, &len, &has_nl)) == 1) {
        lineno++;
        st->lines++;
        if (lineno <= 2) {
            /* A header cut short at creation (a prefix of the block, nothing after it):
             * the file has no rows yet. */
            if (!has_nl && hb_seen + len < hb_len && memcmp(line, hb + hb_seen, len) == 0) {
                st->torn++;
                break;
            }
            if ((rc = amk__tsv_check_header_line(path, (int)lineno, line, len, d)))
                break;
            hb_seen += len + 1;
            continue;
        }
        if (!has_nl) { /* only the last line can lack it: a row cut while being written */
            st->torn++;
            amk_log(AMK_LOG_INFO, "%s:%zu: skipping torn last row (no newline)", path, lineno);
            break;
        }
        if (len == 0 || line[0] == '#')
            continue; /* blank and comment lines, as pandas skips them */
        int pr = amk__row_parse(line, len, row, 1, d);
        if (pr < 0) {
            rc = pr;
            amk_diag_prefix(d, "%s:%zu", path, lineno);
            break;
        }
        if (pr == AMK__ROW_TORN) {
            st->torn++;
            amk_log(AMK_LOG_INFO, "%s:%zu: skipping torn row (isolated by a later writer)",
                    path, lineno);
            continue;
        }
        st->rows++;
        int c = cb ? cb(row, ud) : 0;
        if (c) {
            rc = c < 0 ? c : AMK_OK;
            break;
        }
    }
    if (got < 0)
        rc = amk_diag_set(d, got, "%s:%zu: %s", path, lineno + 1,
                          got == AMK_EIO ? strerror(errno)
                          : got == AMK_ETSV ? "line longer than 1 GiB"
                                            : "out of memory");
    free(lr.buf);
    free(row);
    close(lr.fd);
    return rc;
}

/* The record format (v4; v1, v2 and v3 still read): the row codec (one table of columns drives
 * format and parse) and the header lines. The streaming reader is record_read.c, the appender
 * results/tsv_append.c. Numbers are
 * always written and read in the C locale, whatever the embedding program set. */
#include "record_int.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the column table ------------------------------------------------------------ */

typedef enum col_type {
    COL_TRIAL,  /* int64 >= 0, required */
    COL_STR,    /* free text, bounded by the struct member */
    COL_ID,     /* 16 lowercase hex digits or empty */
    COL_STATUS, /* amk_status name */
    COL_DBL,    /* finite decimal number or empty (NAN) */
    COL_KIND,   /* amk_latency_kind name or empty */
    COL_CACHE,  /* 0, 1, -1 or empty (-1) */
    COL_KEPT,   /* 0 or 1 */
    COL_OBJ,    /* amk_objective name (empty reads as time) */
    COL_COUNT   /* int >= 0, 0 written and read as empty */
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
#define COLDEF_clock_regime C_STR(clock_regime)
#define COLDEF_sm_mhz C_DBL(sm_mhz, 6)
#define COLDEF_sm_mhz_min C_DBL(sm_mhz_min, 6)
#define COLDEF_sm_mhz_max C_DBL(sm_mhz_max, 6)
#define COLDEF_mem_mhz C_DBL(mem_mhz, 6)
#define COLDEF_power_w C_DBL(power_w, 6)
#define COLDEF_temp_c C_DBL(temp_c, 4)
#define COLDEF_throttle C_STR(throttle)
#define COLDEF_energy_uj C_DBL(energy_uj, 6)
#define COLDEF_peer C_STR(peer)
#define COLDEF_peer_us C_DBL(peer_us, 9)
#define COLDEF_vs_peer C_DBL(vs_peer, 6)
#define COLDEF_objective                                                                \
    {"objective", COL_OBJ, offsetof(amk_row, objective), sizeof(amk_objective), 0}
#define COLDEF_energy_window_ms C_DBL(energy_window_ms, 6)
#define COLDEF_energy_ticks                                                             \
    {"energy_ticks", COL_COUNT, offsetof(amk_row, energy_ticks), sizeof(int), 0}
#define COLDEF_cost_s C_DBL(cost_s, 6)

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
    r->sm_mhz = r->sm_mhz_min = r->sm_mhz_max = r->mem_mhz = NAN;
    r->power_w = r->temp_c = r->energy_uj = r->peer_us = r->vs_peer = NAN;
    r->energy_window_ms = r->cost_s = NAN;
    r->latency_kind = AMK_LAT_NONE;
    r->cache_hit = -1;
}

int amk_row_has_evidence(const amk_row *r)
{
    return r && r->status == AMK_STATUS_OK && isfinite(r->latency_us) && r->latency_us > 0 &&
           amk_latency_is_evidence(r->latency_kind);
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
    amk__row_format_cols(r, AMK__TSV_NCOLS, out);
}

void amk__row_format_cols(const amk_row *r, int ncols, amk_sb *out)
{
    locale_t loc = c_locale(), old = loc ? uselocale(loc) : (locale_t)0;
    char buf[32];
    int n;
    for (int i = 0; i < ncols && i < AMK__TSV_NCOLS; i++) {
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
        case COL_OBJ: {
            const char *name = amk_objective_name(CFIELD(r, c, amk_objective));
            amk_sb_putn(out, name, strlen(name));
            break;
        }
        case COL_COUNT:
            if (CFIELD(r, c, int) > 0) {
                n = snprintf(buf, sizeof buf, "%d", CFIELD(r, c, int));
                amk_sb_putn(out, buf, (size_t)n);
            }
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
    if ((unsigned)r->objective >= AMK_OBJ_COUNT)
        return amk_diag_set(d, AMK_EINVAL, "column objective: %d is not an objective",
                            (int)r->objective);
    if (r->energy_ticks < 0)
        return amk_diag_set(d, AMK_EINVAL, "column energy_ticks: %d is negative",
                            r->energy_ticks);
    if (r->cost_s < 0 || isinf(r->cost_s))
        return amk_diag_set(d, AMK_EINVAL, "column cost_s: %g is not a cost in seconds "
                            "(finite, >= 0, or NAN for unknown)", r->cost_s);
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

/* Quotes a field for a message: at most 40 bytes, control bytes and bad UTF-8 shown as '?'. */
static const char *show(char out[64], const char *p, size_t n)
{
    return amk_text_show(out, 64, p, n, 40);
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
    case COL_OBJ: {
        amk_objective o = AMK_OBJ_TIME;
        if (n < sizeof buf) {
            memcpy(buf, p, n);
            buf[n] = '\0';
            if (n == 0 || amk_objective_parse(buf, &o) == AMK_OK) {
                FIELD(r, c, amk_objective) = o;
                return AMK_OK;
            }
        }
        return amk_diag_set(d, AMK_ETSV, "column objective: '%s' is not time, energy, edp or "
                            "empty", show(q, p, n));
    }
    case COL_COUNT: {
        int64_t v = 0;
        if (n > 0 && (parse_int64(p, n, &v) != AMK_OK || v < 0 || v > INT32_MAX))
            return amk_diag_set(d, AMK_ETSV, "column %s: '%s' is not a count", c->name,
                                show(q, p, n));
        FIELD(r, c, int) = (int)v;
        return AMK_OK;
    }
    }
    return amk_diag_set(d, AMK_ETSV, "column %s: unknown column type", c->name);
}

int amk__row_parse(const char *line, size_t len, amk_row *r, int allow_torn, int ncols,
                   amk_diag *d)
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
        if (nf < (size_t)ncols) {
            fp[nf] = p;
            fl[nf] = (size_t)(fe - p);
        }
        nf++;
        if (!tab)
            break;
        p = tab + 1;
    }
    /* A full row sets every member; a short one leaves the rest at their defaults. */
    if (ncols < 1 || ncols > AMK__TSV_NCOLS)
        ncols = AMK__TSV_NCOLS;
    if (nf != (size_t)AMK__TSV_NCOLS)
        amk_row_init(r);
    if (nf > (size_t)ncols)
        return amk_diag_set(d, AMK_ETSV, "%zu fields, expected %d", nf, ncols);
    /* A torn row: its last field may be cut anywhere, the ones before it must be intact. */
    size_t complete = nf < (size_t)ncols ? nf - 1 : nf;
    int check_bytes = len && (memchr(line, '\0', len) || memchr(line, '\n', len));
    for (size_t i = 0; i < complete; i++) {
        int rc = parse_col(&cols[i], fp[i], fl[i], r, check_bytes, d);
        if (rc)
            return rc;
    }
    if (nf < (size_t)ncols) {
        if (allow_torn)
            return AMK__ROW_TORN;
        return amk_diag_set(d, AMK_ETSV, "%zu fields, expected %d (a torn row?)", nf, ncols);
    }
    return AMK_OK;
}

int amk_row_parse(const char *line, size_t len, amk_row *r, amk_diag *d)
{
    return amk__row_parse(line, len, r, 0, AMK__TSV_NCOLS, d);
}

/* ---- header ------------------------------------------------------------------------ */

int amk__tsv_version(int ncols)
{
    switch (ncols) {
    case AMK__TSV_NCOLS_V1:
        return 1;
    case AMK__TSV_NCOLS_V2:
        return 2;
    case AMK__TSV_NCOLS_V3:
        return 3;
    case AMK__TSV_NCOLS:
        return 4;
    default:
        return 0;
    }
}

int amk__tsv_check_header_line(const char *path, int lineno, const char *line, size_t len,
                               int *ncols, amk_diag *d)
{
    char q[64];
    if (lineno == 1) {
        static const struct {
            const char *header;
            int ncols;
        } versions[] = {{AMK_TSV_HEADER, AMK__TSV_NCOLS},
                        {AMK_TSV_HEADER_V3, AMK__TSV_NCOLS_V3},
                        {AMK_TSV_HEADER_V2, AMK__TSV_NCOLS_V2},
                        {AMK_TSV_HEADER_V1, AMK__TSV_NCOLS_V1}};
        static const char h[] = AMK_TSV_HEADER, v[] = "# amk results v";
        for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
            if (len == strlen(versions[i].header) &&
                memcmp(line, versions[i].header, len) == 0) {
                *ncols = versions[i].ncols;
                return AMK_OK;
            }
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
        if (i >= *ncols)
            return amk_diag_set(d, AMK_ETSV, "%s:2: unexpected column %d '%s' (v%d has %d)",
                                path, i + 1, show(q, p, n), amk__tsv_version(*ncols), *ncols);
        if (strlen(cols[i].name) != n || memcmp(cols[i].name, p, n) != 0)
            return amk_diag_set(d, AMK_ETSV, "%s:2: column %d is '%s', expected '%s'", path,
                                i + 1, show(q, p, n), cols[i].name);
        if (!tab) {
            if (i + 1 < *ncols)
                return amk_diag_set(d, AMK_ETSV, "%s:2: column %d '%s' is missing", path,
                                    i + 2, cols[i + 1].name);
            return AMK_OK;
        }
        p = tab + 1;
    }
}

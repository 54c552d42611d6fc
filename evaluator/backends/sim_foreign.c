/* The sim backend's reader of the tuning community's recorded files: Kernel Tuner cachefiles
 * ({"tune_params_keys", "cache": {"v1,v2,...": {..., "time": ms | "RuntimeFailedConfig"}}})
 * and T4 results files ({"results": [{"configuration", "times", "measurements",
 * "invalidity"}], "metadata"}), gzipped or not. Each record is keyed by its param values, so
 * it becomes the amk config of the spec with those values and reaches the backend under that
 * config's id. What a record cost on the device (compile + verification + benchmark +
 * framework) is kept for the loop's simulated clock. */
#include "evaluator_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define SLURP_MAX ((size_t)1 << 31) /* 2 GiB of text: far beyond any recorded space */

int amk__sim_slurp(const char *path, char **out, size_t *len, amk_diag *d)
{
    *out = NULL;
    *len = 0;
    gzFile f = gzopen(path, "rb"); /* reads plain files unchanged */
    if (!f)
        return amk_diag_set(d, AMK_EIO, "%s: cannot open", path);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    int rc = AMK_OK;
    for (;;) {
        if (!buf) {
            rc = amk_diag_set(d, AMK_ENOMEM, "%s: out of memory while reading", path);
            break;
        }
        if (cap - n < 2) {
            if (cap >= SLURP_MAX) {
                rc = amk_diag_set(d, AMK_EINVAL, "%s: larger than %zu bytes uncompressed",
                                  path, SLURP_MAX);
                break;
            }
            char *nb = realloc(buf, 2 * cap);
            if (!nb) {
                rc = amk_diag_set(d, AMK_ENOMEM, "%s: out of memory while reading", path);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        unsigned want = (unsigned)(cap - n - 1 > (1u << 30) ? (1u << 30) : cap - n - 1);
        int got = gzread(f, buf + n, want);
        int err = 0;
        const char *msg = gzerror(f, &err);
        size_t pl = strlen(path); /* zlib names the file itself */
        if (msg && strncmp(msg, path, pl) == 0 && strncmp(msg + pl, ": ", 2) == 0)
            msg += pl + 2;
        /* A gzip stream that ends early (zlib: Z_BUF_ERROR, with a short or empty read rather
         * than -1) or does not decompress is bad input, not an I/O failure: say where it broke,
         * in the compressed file and in its text. */
        if (err == Z_BUF_ERROR || err == Z_DATA_ERROR) {
            rc = amk_diag_set(d, AMK_EINVAL, "%s: %s gzip stream (%s) at byte %lld of the "
                              "compressed file, after %zu bytes of text", path,
                              err == Z_BUF_ERROR ? "truncated" : "corrupt", msg ? msg : "?",
                              (long long)gzoffset(f), n + (got > 0 ? (size_t)got : 0));
            break;
        }
        if (got < 0) {
            rc = amk_diag_set(d, AMK_EIO, "%s: read failed: %s", path, msg ? msg : "?");
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    gzclose(f);
    if (rc != AMK_OK) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return AMK_OK;
}

int amk__sim_is_json(const char *text)
{
    while (*text && isspace((unsigned char)*text))
        text++;
    return *text == '{';
}

/* How the file's params map onto the spec's: file param i is spec param map[i], or -1 for
 * a param the spec does not have (then every record must hold fixed[i], the value the first
 * record had). */
typedef struct fmap {
    int n;
    char name[AMK_MAX_PARAMS * 2][64];
    int map[AMK_MAX_PARAMS * 2];
    const cJSON *fixed[AMK_MAX_PARAMS * 2];
} fmap;

typedef struct floader {
    const char *path;
    const amk_spec *spec;
    const amk_shape *shape;
    amk__sim_sink sink;
    void *ud;
    const char *kind; /* how a record is named: "cache key", "T4" */
    double to_us;   /* recorded latency unit -> µs */
    const char *want; /* --objective: the field to replay; NULL = the recorded time */
    char field[64];   /* the field replayed: "time" or the objective's name */
    int higher;       /* field is maximised: it replays as 1e6 / value */
    double cost_ms; /* recorded cost unit -> ms */
    fmap fm;
    size_t used, outside, differ;
    char first_outside[160];
} floader;

static int fmap_add(floader *L, const char *name, amk_diag *d)
{
    fmap *m = &L->fm;
    if (m->n == (int)(sizeof m->map / sizeof m->map[0]))
        return amk_diag_set(d, AMK_EINVAL, "%s: more than %d tuning parameters", L->path,
                            m->n);
    int i = amk_spec_param_index(L->spec, name);
    for (int k = 0; i < 0 && k < amk_spec_n_params(L->spec); k++)
        if (strcasecmp(amk_spec_param_name(L->spec, k), name) == 0)
            i = k;
    snprintf(m->name[m->n], sizeof m->name[m->n], "%s", name);
    m->map[m->n] = i;
    m->fixed[m->n] = NULL;
    m->n++;
    return AMK_OK;
}

/* Every spec param must come from the file, once. */
static int fmap_check(floader *L, amk_diag *d)
{
    int np = amk_spec_n_params(L->spec);
    for (int p = 0; p < np; p++) {
        int hits = 0;
        for (int i = 0; i < L->fm.n; i++)
            hits += L->fm.map[i] == p;
        if (hits != 1)
            return amk_diag_set(d, AMK_ENOTCOVERED, "%s: param %s of kernel %s is %s in the file's "
                                "tuning parameters", L->path, amk_spec_param_name(L->spec, p),
                                amk_spec_name(L->spec), hits ? "named twice" : "not");
    }
    return AMK_OK;
}

/* The choice index of param p whose value is v (a number, a bool or an enum label); -1. */
static int choice_of(const amk_spec *s, int p, const cJSON *v)
{
    int nc = amk_spec_param_n_choices(s, p);
    if (cJSON_IsNumber(v) || cJSON_IsBool(v)) {
        double x = cJSON_IsBool(v) ? cJSON_IsTrue(v) : v->valuedouble;
        if (x != floor(x) || fabs(x) > 9e15)
            return -1;
        for (int k = 0; k < nc; k++)
            if ((double)amk_spec_param_value(s, p, k) == x)
                return k;
    } else if (cJSON_IsString(v)) {
        for (int k = 0; k < nc; k++) {
            const char *lab = amk_spec_param_label(s, p, k);
            if (lab && strcmp(lab, v->valuestring) == 0)
                return k;
        }
    }
    return -1;
}

static void value_text(const cJSON *v, char *out, size_t cap)
{
    char *t = v ? cJSON_PrintUnformatted(v) : NULL;
    snprintf(out, cap, "%s", t ? t : "?");
    free(t);
}

/* Builds the config of one record from its values vals[i] (file param order). 1 = built,
 * 0 = skipped (counted), <0 = error. */
static int build_config(floader *L, const cJSON *const *vals, const char *key, amk_config *c)
{
    amk_config_default(L->spec, L->shape, c);
    for (int i = 0; i < L->fm.n; i++) {
        int p = L->fm.map[i];
        if (p < 0) {
            if (!L->fm.fixed[i])
                L->fm.fixed[i] = vals[i];
            else if (!cJSON_Compare(L->fm.fixed[i], vals[i], 1)) {
                L->differ++;
                return 0;
            }
            continue;
        }
        int k = choice_of(L->spec, p, vals[i]);
        if (k < 0) {
            if (!L->outside++) {
                char vt[64];
                value_text(vals[i], vt, sizeof vt);
                snprintf(L->first_outside, sizeof L->first_outside, "%s = %s (record %s)",
                         L->fm.name[i], vt, key);
            }
            return 0;
        }
        c->choice[p] = (uint8_t)k;
    }
    return 1;
}

/* IQR / median of n times (sorted in place); NAN for fewer than two. */
static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (pos - (double)lo) * (v[hi] - v[lo]);
}

static double spread_of(const cJSON *times)
{
    int n = cJSON_IsArray(times) ? cJSON_GetArraySize(times) : 0;
    if (n < 2)
        return NAN;
    double *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return NAN;
    size_t k = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, times)
        if (cJSON_IsNumber(t) && isfinite(t->valuedouble))
            v[k++] = t->valuedouble;
    double r = NAN;
    if (k >= 2) {
        qsort(v, k, sizeof *v, dbl_cmp);
        double med = quantile(v, k, 0.5);
        if (med > 0)
            r = (quantile(v, k, 0.75) - quantile(v, k, 0.25)) / med;
    }
    free(v);
    return r;
}

static double num_or(const cJSON *o, const char *name, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : dflt;
}

/* Kernel Tuner's error names, as its cachefiles and T4 files spell them. */
static int status_of_error(const char *e, amk_status *st)
{
    if (strcmp(e, "RuntimeFailedConfig") == 0 || strcmp(e, "runtime") == 0)
        *st = AMK_STATUS_RUN_ERROR;
    else if (strcmp(e, "CompilationFailedConfig") == 0 || strcmp(e, "compile") == 0)
        *st = AMK_STATUS_COMPILE_ERROR;
    else if (strcmp(e, "InvalidConfig") == 0 || strcmp(e, "constraints") == 0)
        *st = AMK_STATUS_REJECTED;
    else if (strcmp(e, "correctness") == 0)
        *st = AMK_STATUS_WRONG;
    else
        return 0;
    return 1;
}

static int emit(floader *L, const amk_config *c, amk_status st, double lat_us, double spread,
                double cost_ms, const char *key, const char *note)
{
    amk__sim_record r = {0};
    amk_config_id(c, r.id);
    r.status = st;
    r.latency_us = lat_us;
    r.spread = spread;
    r.cost_s = isfinite(cost_ms) ? cost_ms * L->cost_ms / 1000.0 : NAN;
    char label[96];
    snprintf(label, sizeof label, "%s %s", L->kind, key);
    r.key = label;
    r.note = note;
    L->used++;
    return L->sink(&r, L->ud);
}

/* Names of objectives that are maximised when the file does not say (Kernel Tuner's own
 * metrics: GFLOP/s, GB/s, TFLOP/s; throughput, bandwidth). */
static int maximised_name(const char *name)
{
    return strstr(name, "/s") || strcasestr(name, "flop") || strcasestr(name, "throughput") ||
           strcasestr(name, "bandwidth");
}

/* Picks what the records replay as. By default the recorded time, whatever the file's
 * objective (every Kernel Tuner record carries "time"); --objective NAME replays NAME itself,
 * NAME:max or NAME:min saying its direction when neither the file ("objective_higher_is_better")
 * nor the name does. A maximised value v replays as latency 1e6 / v: the configs' order and
 * each one's ratio to the best are the objective's. */
static int pick_field(floader *L, const cJSON *root, const char *file_obj, amk_diag *d)
{
    const char *w = L->want && *L->want ? L->want : "time";
    const char *colon = strrchr(w, ':');
    size_t n = colon && (!strcmp(colon, ":max") || !strcmp(colon, ":min")) ? (size_t)(colon - w)
                                                                          : strlen(w);
    if (n == 0 || n >= sizeof L->field)
        return amk_diag_set(d, AMK_EINVAL, "%s: objective \"%s\": a field name of up to %zu "
                            "characters, optionally followed by :max or :min", L->path, w,
                            sizeof L->field - 1);
    memcpy(L->field, w, n);
    L->field[n] = '\0';
    const cJSON *hib = cJSON_GetObjectItemCaseSensitive(root, "objective_higher_is_better");
    if (n < strlen(w))
        L->higher = !strcmp(w + n, ":max");
    else if (file_obj && !strcmp(L->field, file_obj) && cJSON_IsBool(hib))
        L->higher = cJSON_IsTrue(hib);
    else
        L->higher = maximised_name(L->field);
    if (!strcmp(L->field, "time") && L->higher)
        return amk_diag_set(d, AMK_EINVAL, "%s: objective \"%s\": time is minimised", L->path,
                            w);
    if (file_obj && strcmp(file_obj, "time") != 0 && !strcmp(L->field, "time"))
        amk_log(AMK_LOG_INFO, "sim: %s: the file's objective is \"%s\"; replaying the "
                "recorded times (--objective %s replays the objective itself)", L->path,
                file_obj, file_obj);
    else if (strcmp(L->field, "time") != 0)
        amk_log(AMK_LOG_INFO, "sim: %s: replaying objective \"%s\" (%s is better)%s", L->path,
                L->field, L->higher ? "higher" : "lower",
                L->higher ? " as latency 1e6 / value" : " as the latency in µs");
    return AMK_OK;
}

/* The latency a positive recorded value of the replayed field stands for. */
static double replay_us(const floader *L, double v)
{
    if (strcmp(L->field, "time") == 0)
        return v * L->to_us;
    return L->higher ? 1e6 / v : v;
}

/* Kernel Tuner cachefile. */
static int load_cachefile(floader *L, const cJSON *root, amk_diag *d)
{
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(root, "tune_params_keys");
    const cJSON *cache = cJSON_GetObjectItemCaseSensitive(root, "cache");
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "objective");
    if (!cJSON_IsArray(keys) || !cJSON_IsObject(cache))
        return amk_diag_set(d, AMK_EINVAL, "%s: a Kernel Tuner cachefile needs "
                            "\"tune_params_keys\" (a list) and \"cache\" (an object)", L->path);
    const char *file_obj = cJSON_IsString(obj) ? obj->valuestring : "time";
    int rc = pick_field(L, root, file_obj, d);
    if (rc != AMK_OK)
        return rc;
    const cJSON *k;
    cJSON_ArrayForEach(k, keys) {
        if (!cJSON_IsString(k))
            return amk_diag_set(d, AMK_EINVAL, "%s: tune_params_keys holds a non-string",
                                L->path);
        if ((rc = fmap_add(L, k->valuestring, d)) != AMK_OK)
            return rc;
    }
    if ((rc = fmap_check(L, d)) != AMK_OK)
        return rc;
    L->kind = "cache key";
    L->to_us = 1000.0; /* Kernel Tuner records milliseconds */
    L->cost_ms = 1.0;
    const cJSON *vals[AMK_MAX_PARAMS * 2];
    const cJSON *e;
    cJSON_ArrayForEach(e, cache) {
        if (!cJSON_IsObject(e))
            return amk_diag_set(d, AMK_EINVAL, "%s: cache entry \"%s\" is not an object",
                                L->path, e->string);
        for (int i = 0; i < L->fm.n; i++) {
            vals[i] = cJSON_GetObjectItemCaseSensitive(e, L->fm.name[i]);
            if (!vals[i])
                return amk_diag_set(d, AMK_EINVAL, "%s: cache entry \"%s\" has no value of %s",
                                    L->path, e->string, L->fm.name[i]);
        }
        amk_config c;
        rc = build_config(L, vals, e->string, &c);
        if (rc <= 0)
            continue;
        /* A failed config carries the error name in its time and objective fields alike;
         * a record without the replayed field stands for a failure only then. */
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, L->field);
        if (!t) {
            const cJSON *alt = cJSON_GetObjectItemCaseSensitive(e, "time");
            if (!cJSON_IsString(alt))
                alt = cJSON_GetObjectItemCaseSensitive(e, file_obj);
            if (!cJSON_IsString(alt))
                return amk_diag_set(d, AMK_EINVAL, "%s: cache entry \"%s\" has no \"%s\"",
                                    L->path, e->string, L->field);
            t = alt;
        }
        double cost = num_or(e, "compile_time", 0) + num_or(e, "verification_time", 0) +
                      num_or(e, "benchmark_time", 0) + num_or(e, "framework_time", 0);
        if (cJSON_IsNumber(t) && isfinite(t->valuedouble) && t->valuedouble > 0) {
            rc = emit(L, &c, AMK_STATUS_OK, replay_us(L, t->valuedouble),
                      spread_of(cJSON_GetObjectItemCaseSensitive(e, "times")), cost,
                      e->string, NULL);
        } else if (cJSON_IsString(t)) {
            amk_status st;
            if (!status_of_error(t->valuestring, &st))
                return amk_diag_set(d, AMK_EINVAL, "%s: cache entry \"%s\": unknown error "
                                    "\"%s\" (known: RuntimeFailedConfig, "
                                    "CompilationFailedConfig, InvalidConfig)", L->path,
                                    e->string, t->valuestring);
            char note[96];
            snprintf(note, sizeof note, "recorded by Kernel Tuner as %s", t->valuestring);
            rc = emit(L, &c, st, NAN, NAN, cost, e->string, note);
        } else {
            return amk_diag_set(d, AMK_EINVAL, "%s: cache entry \"%s\": \"%s\" is neither a "
                                "positive number nor an error name", L->path, e->string,
                                L->field);
        }
        if (rc)
            return AMK_ENOMEM;
    }
    return AMK_OK;
}

/* T4 results file: the configuration object of each result names the params. */
static int load_t4(floader *L, const cJSON *root, amk_diag *d)
{
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(root, "results");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(meta, "timeunit");
    const char *u = cJSON_IsString(unit) ? unit->valuestring : "milliseconds";
    if (!strcmp(u, "milliseconds") || !strcmp(u, "miliseconds") || !strcmp(u, "ms"))
        L->to_us = 1e3;
    else if (!strcmp(u, "seconds") || !strcmp(u, "s"))
        L->to_us = 1e6;
    else if (!strcmp(u, "microseconds") || !strcmp(u, "us"))
        L->to_us = 1.0;
    else
        return amk_diag_set(d, AMK_EINVAL, "%s: metadata.timeunit \"%s\" is not a known unit "
                            "(seconds, milliseconds, microseconds)", L->path, u);
    L->cost_ms = L->to_us / 1e3;
    L->kind = "T4";
    int rc = pick_field(L, root, NULL, d), mapped = 0;
    if (rc != AMK_OK)
        return rc;
    const cJSON *r;
    size_t idx = 0;
    cJSON_ArrayForEach(r, results) {
        char key[64];
        snprintf(key, sizeof key, "result %zu", idx++);
        const cJSON *conf = cJSON_GetObjectItemCaseSensitive(r, "configuration");
        if (!cJSON_IsObject(conf))
            return amk_diag_set(d, AMK_EINVAL, "%s: %s has no configuration object", L->path,
                                key);
        if (!mapped) {
            const cJSON *p;
            cJSON_ArrayForEach(p, conf)
                if ((rc = fmap_add(L, p->string, d)) != AMK_OK)
                    return rc;
            if ((rc = fmap_check(L, d)) != AMK_OK)
                return rc;
            mapped = 1;
        }
        const cJSON *vals[AMK_MAX_PARAMS * 2];
        for (int i = 0; i < L->fm.n; i++) {
            vals[i] = cJSON_GetObjectItemCaseSensitive(conf, L->fm.name[i]);
            if (!vals[i])
                return amk_diag_set(d, AMK_EINVAL, "%s: %s has no value of %s", L->path, key,
                                    L->fm.name[i]);
        }
        amk_config c;
        rc = build_config(L, vals, key, &c);
        if (rc <= 0)
            continue;
        const cJSON *times = cJSON_GetObjectItemCaseSensitive(r, "times");
        const cJSON *runs = cJSON_GetObjectItemCaseSensitive(times, "runtimes");
        /* T4 keeps no benchmark time: the runtimes themselves stand for it. */
        double cost = num_or(times, "compilation", 0) + num_or(times, "validation", 0) +
                      num_or(times, "framework", 0);
        const cJSON *t;
        cJSON_ArrayForEach(t, runs)
            if (cJSON_IsNumber(t) && isfinite(t->valuedouble))
                cost += t->valuedouble;
        const cJSON *inv = cJSON_GetObjectItemCaseSensitive(r, "invalidity");
        const char *invalidity = cJSON_IsString(inv) ? inv->valuestring : "correct";
        if (strcmp(invalidity, "correct") == 0) {
            double lat = NAN;
            const cJSON *m;
            cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(r, "measurements")) {
                const cJSON *nm = cJSON_GetObjectItemCaseSensitive(m, "name");
                if (cJSON_IsString(nm) && strcmp(nm->valuestring, L->field) == 0)
                    lat = num_or(m, "value", NAN);
            }
            if (!(lat > 0) || !isfinite(lat))
                return amk_diag_set(d, AMK_EINVAL, "%s: %s is \"correct\" but has no positive "
                                    "\"%s\" measurement", L->path, key, L->field);
            rc = emit(L, &c, AMK_STATUS_OK, replay_us(L, lat), spread_of(runs), cost, key, NULL);
        } else {
            amk_status st;
            if (!status_of_error(invalidity, &st))
                return amk_diag_set(d, AMK_EINVAL, "%s: %s: unknown invalidity \"%s\" (known: "
                                    "correct, compile, runtime, constraints, correctness)",
                                    L->path, key, invalidity);
            char note[96];
            snprintf(note, sizeof note, "recorded in the T4 file as invalidity \"%s\"",
                     invalidity);
            rc = emit(L, &c, st, NAN, NAN, cost, key, note);
        }
        if (rc)
            return AMK_ENOMEM;
    }
    if (!mapped)
        return amk_diag_set(d, AMK_EINVAL, "%s: a T4 file with no results", L->path);
    return AMK_OK;
}

/* The file's device name: a cachefile's device_name, a T4 file's metadata device; else
 * the file name without its directory and extensions ("MI250X" of MI250X.json.gz). */
static void device_of(const cJSON *root, const char *path, char *out, size_t cap)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    const char *names[] = {"device_name", "device", "gpu"};
    for (int i = 0; i < 3; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, names[i]);
        if (!cJSON_IsString(v) || !v->valuestring[0])
            v = cJSON_GetObjectItemCaseSensitive(meta, names[i]);
        if (cJSON_IsString(v) && v->valuestring[0]) {
            snprintf(out, cap, "%s", v->valuestring);
            return;
        }
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(out, cap, "%s", base);
    char *dot = strchr(out, '.');
    if (dot && dot != out)
        *dot = '\0';
    amk_log(AMK_LOG_INFO, "sim: %s names no device; calling it '%s' after the file", path, out);
}

/* 1-based line of byte off of text. */
static size_t line_of(const char *text, size_t off)
{
    size_t line = 1;
    for (size_t i = 0; i < off && text[i]; i++)
        line += text[i] == '\n';
    return line;
}

/* Parses the whole text (nothing but blanks may follow the object). Kernel Tuner appends
 * each record to its cachefile as it goes ("\n\"key\": {...},") and closes the file with
 * "}\n}" only when tuning ends; its own reader closes an unclosed file by dropping a trailing
 * comma and appending "}\n}". So does this one, so that the file of a running or interrupted
 * tune replays. Anything else that does not parse is bad input, named by its byte offset. */
static cJSON *parse_text(const char *path, const char *text, amk_diag *d)
{
    size_t len = strlen(text);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (root)
        return root;
    size_t at = end && end >= text ? (size_t)(end - text) : len;
    size_t trim = len;
    while (trim && isspace((unsigned char)text[trim - 1]))
        trim--;
    /* Only at a record's end (or before the first): a text cut inside a number could
     * otherwise close into a record with a wrong value. */
    size_t keep = trim && text[trim - 1] == ',' ? trim - 1 : trim;
    while (keep && isspace((unsigned char)text[keep - 1]) && text[trim - 1] == ',')
        keep--;
    int boundary = keep && (text[keep - 1] == '}' || (text[keep - 1] == '{' && keep == trim));
    if (at >= trim && boundary && strstr(text, "\"cache\"")) { /* the text stops early */
        char *closed = malloc(keep + 4);
        if (!closed) {
            amk_diag_set(d, AMK_ENOMEM, "%s: out of memory while parsing", path);
            return NULL;
        }
        memcpy(closed, text, keep);
        memcpy(closed + keep, "}\n}", 4);
        root = cJSON_ParseWithLengthOpts(closed, keep + 3, NULL, 0);
        free(closed);
        if (root && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "cache"))) {
            amk_log(AMK_LOG_WARN, "sim: %s is not closed (a Kernel Tuner run still writing "
                    "it, or one that stopped); replaying its complete records, as Kernel "
                    "Tuner's own reader does", path);
            return root;
        }
        cJSON_Delete(root);
    }
    if (at >= trim) {
        amk_diag_set(d, AMK_EINVAL, "%s: truncated: the text ends at byte %zu (line %zu) "
                     "before its JSON does%s", path, trim, line_of(text, trim),
                     boundary ? "" : ", inside a record");
        return NULL;
    }
    char near[24];
    size_t k = 0;
    for (size_t i = at; i < len && k < sizeof near - 1 && text[i] != '\n'; i++)
        near[k++] = isprint((unsigned char)text[i]) ? text[i] : '?';
    near[k] = '\0';
    amk_diag_set(d, AMK_EINVAL, "%s: not valid JSON at byte %zu (line %zu), at \"%s\"", path,
                 at, line_of(text, at), near);
    return NULL;
}

int amk__sim_foreign_load(const char *path, const char *text, const amk_spec *spec,
                          const amk_shape *shape, const char *objective, amk__sim_sink sink,
                          void *ud, char *device, size_t device_cap, amk_diag *d)
{
    if (!spec || !shape)
        return amk_diag_set(d, AMK_EINVAL, "%s: a Kernel Tuner file is keyed by parameter "
                            "values; replaying it needs the kernel spec (--kernel, --spec-dir)",
                            path);
    cJSON *root = parse_text(path, text, d);
    if (!root)
        return d && d->code == AMK_ENOMEM ? AMK_ENOMEM : AMK_EINVAL;
    floader L = {.path = path, .spec = spec, .shape = shape, .sink = sink, .ud = ud,
                 .want = objective};
    int rc;
    if (cJSON_GetObjectItemCaseSensitive(root, "cache"))
        rc = load_cachefile(&L, root, d);
    else if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "results")))
        rc = load_t4(&L, root, d);
    else
        rc = amk_diag_set(d, AMK_EINVAL, "%s: JSON, but neither a Kernel Tuner cachefile "
                          "(\"cache\") nor a T4 results file (\"results\")", path);
    if (rc == AMK_ENOMEM && d && d->code == AMK_OK)
        amk_diag_set(d, rc, "%s: out of memory while loading", path);
    if (rc == AMK_OK) {
        device_of(root, path, device, device_cap);
        if (L.outside)
            amk_log(AMK_LOG_WARN, "sim: %s: %zu records hold values that are not choices of "
                    "kernel %s (first: %s); they are not replayed", path, L.outside,
                    amk_spec_name(spec), L.first_outside);
        if (L.differ)
            amk_log(AMK_LOG_WARN, "sim: %s: %zu records differ in a param kernel %s does not "
                    "have; only those matching the first record are replayed", path, L.differ,
                    amk_spec_name(spec));
        if (L.used == 0)
            rc = amk_diag_set(d, AMK_ENOTCOVERED, "%s: no record maps onto a config of kernel %s",
                              path, amk_spec_name(spec));
    }
    cJSON_Delete(root);
    return rc;
}

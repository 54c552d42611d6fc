/* The `sim` backend: replays a recorded sweep instead of running anything: amk's own
 * results.tsv, or the tuning community's Kernel Tuner cachefile or T4 file (sim_foreign.c;
 * told apart by content). Measured ok rows replay as `replayed` latencies (median when a
 * config was measured more than once), recorded failures replay as the same status, and a
 * config the file does not hold is `not_recorded` — a number is never invented. Kernel Tuner
 * files and amk's own (v4, column cost_s) also record what each trial cost; verdicts carry it
 * (cost_s), and when every config has one the loop's time limit runs on a simulated clock.
 * Strategies are tested on it. */
#include "evaluator_int.h"

#include "amk_record.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

/* One usable row of the file, kept while loading. */
typedef struct sim_rec {
    char id[17];
    amk_status status;
    double latency_us, spread;
    int64_t trial;
    size_t order; /* line order, breaks trial ties */
    int dev;      /* index into the device table */
    char *note;   /* failures only: the recorded reason */
    char *key;    /* Kernel Tuner files: the record's name in the file */
    double cost_s; /* what the trial cost when recorded; NAN unknown */
    double energy_uj, energy_window_ms; /* over a counter window (ticks > 0), else NAN */
    int energy_ticks;
} sim_rec;

/* What a config replays as. */
typedef struct sim_outcome {
    char id[17];
    uint64_t key;
    amk_status status;
    double latency_us, spread;
    char *reason; /* failures: recorded reason (may be NULL) */
    char *notes;  /* "replayed from FILE (trial N)" */
    double cost_s; /* recorded cost of the trial; NAN when unknown */
    double energy_uj, energy_window_ms; /* the median window energy of its rows; NAN none */
    int energy_ticks;                   /* the fewest ticks among them (the widest noise) */
} sim_outcome;

typedef struct sim_state {
    char *path;
    sim_outcome *outs;
    size_t n_outs;
    uint32_t *slots; /* open addressing, index + 1, 0 = empty */
    size_t cap;      /* power of two */
    const amk_target *target;
    char device[96];
    int clocked; /* every outcome has a recorded cost: the loop may simulate its clock */
} sim_state;

typedef struct sim_load {
    sim_rec *recs;
    size_t n, cap;
    char **devs;
    size_t *dev_rows;
    size_t n_devs, devs_cap;
    size_t lines;
    int oom;
    const amk_spec *kernel; /* the tuned spec, when known: rows of it missing a param */
} sim_load;

static int is_failure(amk_status s)
{
    switch (s) {
    case AMK_STATUS_COMPILE_ERROR:
    case AMK_STATUS_COMPILE_CRASH:
    case AMK_STATUS_COMPILE_TIMEOUT:
    case AMK_STATUS_WRONG:
    case AMK_STATUS_RUN_ERROR:
    case AMK_STATUS_RUN_TIMEOUT:
    case AMK_STATUS_WITHHELD:
        return 1;
    default:
        return 0;
    }
}

/* The next record slot of L, zeroed (not yet counted: L->n moves once it is filled); the
 * array doubles from first_cap. NULL when out of memory. */
static sim_rec *next_rec(sim_load *L, size_t first_cap)
{
    if (L->n == L->cap) {
        size_t nc = L->cap ? 2 * L->cap : first_cap;
        sim_rec *nr = realloc(L->recs, nc * sizeof *nr);
        if (!nr)
            return NULL;
        L->recs = nr;
        L->cap = nc;
    }
    sim_rec *rec = &L->recs[L->n];
    memset(rec, 0, sizeof *rec);
    return rec;
}

/* 16 hex digits -> the 64-bit value they spell (config ids are hashes already); any other
 * text is hashed. */
static uint64_t id_key(const char *id)
{
    uint64_t k = 0;
    size_t n = strlen(id);
    if (n != 16)
        return amk_hash64(id, n);
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        int v = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (v < 0)
            return amk_hash64(id, n);
        k = k << 4 | (uint64_t)v;
    }
    return k;
}

static int intern_device(sim_load *L, const char *name)
{
    for (size_t i = 0; i < L->n_devs; i++)
        if (strcmp(L->devs[i], name) == 0)
            return (int)i;
    if (L->n_devs == L->devs_cap) {
        size_t nc = L->devs_cap ? 2 * L->devs_cap : 4;
        char **nd = realloc(L->devs, nc * sizeof *nd);
        if (!nd)
            return -1;
        L->devs = nd;
        size_t *nr = realloc(L->dev_rows, nc * sizeof *nr);
        if (!nr)
            return -1;
        L->dev_rows = nr;
        L->devs_cap = nc;
    }
    char *copy = strdup(name);
    if (!copy)
        return -1;
    L->devs[L->n_devs] = copy;
    L->dev_rows[L->n_devs] = 0;
    return (int)L->n_devs++;
}

static int load_row(const amk_row *r, void *ud)
{
    sim_load *L = ud;
    size_t order = L->lines++;
    int ok = r->status == AMK_STATUS_OK &&
             amk_latency_is_evidence(r->latency_kind) &&
             isfinite(r->latency_us) && r->latency_us > 0;
    if (!ok && !is_failure(r->status))
        return 0; /* rejected, screened, predicted, not_recorded: nothing to replay */
    if (!r->config_id[0])
        return 0;
    sim_rec *rec = next_rec(L, 64);
    if (!rec)
        goto oom;
    amk_row_config_id(L->kernel, r, rec->id); /* rows older than a param: its default's */
    rec->status = r->status;
    rec->latency_us = ok ? r->latency_us : NAN;
    rec->spread = r->spread;
    rec->trial = r->trial;
    rec->order = order;
    rec->cost_s = isfinite(r->cost_s) && r->cost_s >= 0 ? r->cost_s : NAN; /* NAN before v4 */
    /* Only an energy measured over a counter window replays: an estimate is not evidence
     * for an energy search. */
    int windowed = ok && r->energy_ticks > 0 && isfinite(r->energy_uj) && r->energy_uj > 0;
    rec->energy_uj = windowed ? r->energy_uj : NAN;
    rec->energy_window_ms = windowed ? r->energy_window_ms : NAN;
    rec->energy_ticks = windowed ? r->energy_ticks : 0;
    rec->dev = intern_device(L, r->device);
    if (rec->dev < 0)
        goto oom;
    if (!ok && r->note[0] && !(rec->note = strdup(r->note)))
        goto oom;
    L->dev_rows[rec->dev]++;
    L->n++;
    return 0;
oom:
    L->oom = 1;
    return 1;
}

/* A Kernel Tuner record: one row of the file's single device (index 0). */
static int load_foreign(const amk__sim_record *r, void *ud)
{
    sim_load *L = ud;
    sim_rec *rec = next_rec(L, 1024);
    if (!rec)
        goto oom;
    memcpy(rec->id, r->id, sizeof rec->id);
    rec->status = r->status;
    rec->latency_us = r->status == AMK_STATUS_OK ? r->latency_us : NAN;
    rec->spread = r->spread;
    rec->cost_s = r->cost_s;
    rec->energy_uj = rec->energy_window_ms = NAN; /* Kernel Tuner records: no counter window */
    rec->order = L->lines++;
    rec->dev = 0;
    if (!(rec->key = strdup(r->key)) || (r->note && !(rec->note = strdup(r->note)))) {
        free(rec->key);
        goto oom;
    }
    L->n++;
    return 0;
oom:
    L->oom = 1;
    return 1;
}

int amk_backend_sim_foreign(const char *backend)
{
    const char *path = amk_backend_sim_file(backend);
    char head[256] = {0};
    gzFile f = path && *path ? gzopen(path, "rb") : NULL;
    if (!f)
        return 0;
    int got = gzread(f, head, sizeof head - 1);
    gzclose(f);
    return got > 0 && amk__sim_is_json(head);
}

/* Loads path into L: a Kernel Tuner file (its JSON, gzipped or not) through sim_foreign.c,
 * else amk's results.tsv. */
static int load_file(const char *path, const amk_backend_opts *opts, sim_load *L, amk_diag *d)
{
    char head[256] = {0};
    gzFile f = gzopen(path, "rb");
    if (!f)
        return amk_diag_set(d, AMK_ENOENT, "%s: cannot open", path);
    int got = gzread(f, head, sizeof head - 1);
    int gz = !gzdirect(f);
    gzclose(f);
    if (got < 0)
        return amk_diag_set(d, AMK_EIO, "%s: cannot read", path);
    if (!amk__sim_is_json(head)) {
        if (opts->sim_objective && *opts->sim_objective)
            return amk_diag_set(d, AMK_EINVAL, "%s: an objective (\"%s\") is chosen in Kernel "
                                "Tuner files only; a results.tsv replays its latencies", path,
                                opts->sim_objective);
        if (gz)
            return amk_diag_set(d, AMK_EINVAL, "%s: gzipped, but not a Kernel Tuner JSON file; "
                                "a results.tsv is replayed uncompressed", path);
        L->kernel = opts->kernel;
        return amk_tsv_read(path, load_row, L, NULL, d);
    }
    char *text = NULL, device[96];
    size_t len;
    int rc = amk__sim_slurp(path, &text, &len, d);
    if (rc != AMK_OK)
        return rc;
    rc = amk__sim_foreign_load(path, text, opts->kernel, opts->shape, opts->sim_objective,
                               load_foreign, L, device, sizeof device, d);
    free(text);
    if (rc != AMK_OK)
        return rc;
    if (intern_device(L, device) != 0) /* the only device: index 0 */
        L->oom = 1;
    else
        L->dev_rows[0] = L->n;
    return AMK_OK;
}

static void load_free(sim_load *L)
{
    for (size_t i = 0; i < L->n; i++) {
        free(L->recs[i].note);
        free(L->recs[i].key);
    }
    for (size_t i = 0; i < L->n_devs; i++)
        free(L->devs[i]);
    free(L->recs);
    free(L->devs);
    free(L->dev_rows);
}

static int rec_cmp(const void *a, const void *b)
{
    const sim_rec *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    if (c)
        return c;
    if (x->trial != y->trial)
        return x->trial < y->trial ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Picks the device whose rows are replayed: the one matching the requested target when one
 * is named and present, else the device with the most rows. */
static int choose_device(const sim_load *L, const amk_target *want)
{
    int best = -1;
    if (want) {
        for (size_t i = 0; i < L->n_devs; i++) {
            const amk_target *t = L->devs[i][0] ? amk_target_find(L->devs[i]) : NULL;
            if (t && strcmp(t->key, want->key) == 0 &&
                (best < 0 || L->dev_rows[i] > L->dev_rows[best]))
                best = (int)i;
        }
        if (best >= 0)
            return best;
    }
    for (size_t i = 0; i < L->n_devs; i++)
        if (best < 0 || L->dev_rows[i] > L->dev_rows[best])
            best = (int)i;
    return best;
}

/* Where a record stands in its file: the trial number of a results.tsv row, the key of a
 * Kernel Tuner record. Static buffer: used at once. */
static const char *source_of(const sim_rec *r)
{
    static _Thread_local char buf[64];
    if (r->key)
        return r->key;
    snprintf(buf, sizeof buf, "%lld", (long long)r->trial);
    return buf;
}

/* The energy a config replays as: the median of its rows' window energies (scratch holds n
 * doubles), the median window and the fewest ticks (the widest noise); NAN when none. */
static void energy_outcome(const sim_rec *recs, size_t n, double *scratch, sim_outcome *o)
{
    size_t k = 0;
    double *win = scratch;
    for (size_t i = 0; i < n; i++)
        if (recs[i].energy_ticks > 0 &&
            (o->energy_ticks == 0 || recs[i].energy_ticks < o->energy_ticks))
            o->energy_ticks = recs[i].energy_ticks;
    if (!o->energy_ticks)
        return;
    for (size_t i = 0; i < n; i++)
        if (recs[i].energy_ticks > 0)
            win[k++] = recs[i].energy_uj;
    qsort(win, k, sizeof *win, dbl_cmp);
    o->energy_uj = k % 2 ? win[k / 2] : 0.5 * (win[k / 2 - 1] + win[k / 2]);
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (recs[i].energy_ticks > 0)
            win[k++] = recs[i].energy_window_ms;
    qsort(win, k, sizeof *win, dbl_cmp);
    o->energy_window_ms = k % 2 ? win[k / 2] : 0.5 * (win[k / 2 - 1] + win[k / 2]);
}

/* Builds the outcome of one config from its rows recs[0..n) (sorted by trial). */
static int build_outcome(sim_state *s, const sim_rec *recs, size_t n, sim_outcome *o)
{
    memset(o, 0, sizeof *o);
    memcpy(o->id, recs[0].id, sizeof o->id);
    o->key = id_key(o->id);
    o->latency_us = NAN;
    o->spread = NAN;
    o->cost_s = NAN;
    o->energy_uj = o->energy_window_ms = NAN;
    size_t n_ok = 0, n_fail = 0;
    for (size_t i = 0; i < n; i++)
        recs[i].status == AMK_STATUS_OK ? n_ok++ : n_fail++;
    amk_sb sb = {0};
    if (n_ok) {
        double *lat = malloc(n_ok * sizeof *lat), *spr = malloc(n_ok * sizeof *spr);
        if (!lat || !spr) {
            free(lat);
            free(spr);
            return AMK_ENOMEM;
        }
        size_t k = 0, ks = 0;
        for (size_t i = 0; i < n; i++) {
            if (recs[i].status != AMK_STATUS_OK)
                continue;
            lat[k++] = recs[i].latency_us;
            if (isfinite(recs[i].spread))
                spr[ks++] = recs[i].spread;
        }
        qsort(lat, k, sizeof *lat, dbl_cmp);
        qsort(spr, ks, sizeof *spr, dbl_cmp);
        o->status = AMK_STATUS_OK;
        o->latency_us = k % 2 ? lat[k / 2] : 0.5 * (lat[k / 2 - 1] + lat[k / 2]);
        if (ks)
            o->spread = ks % 2 ? spr[ks / 2] : 0.5 * (spr[ks / 2 - 1] + spr[ks / 2]);
        free(spr);
        double cost = 0;
        for (size_t i = 0; i < n; i++)
            if (recs[i].status == AMK_STATUS_OK)
                cost += recs[i].cost_s;
        o->cost_s = cost / (double)n_ok; /* NAN when any is unknown */
        if (n_ok == 1) {
            for (size_t i = 0; i < n; i++)
                if (recs[i].status == AMK_STATUS_OK)
                    amk_sb_printf(&sb, "replayed from %s (%s%s)", s->path,
                                  recs[i].key ? "" : "trial ", source_of(&recs[i]));
        } else {
            amk_sb_printf(&sb, "replayed from %s (median of %zu trials:", s->path, n_ok);
            const char *sep = " ";
            for (size_t i = 0; i < n; i++)
                if (recs[i].status == AMK_STATUS_OK) {
                    amk_sb_printf(&sb, "%s%lld", sep, (long long)recs[i].trial);
                    sep = ", ";
                }
            amk_sb_printf(&sb, ")");
        }
        if (n_fail)
            amk_sb_printf(&sb, "; %zu failed trial(s) of this config also recorded", n_fail);
        energy_outcome(recs, n, lat, o);
        free(lat);
    } else {
        const sim_rec *last = &recs[n - 1]; /* the most recent failure */
        o->status = last->status;
        o->cost_s = last->cost_s;
        if (last->note && !(o->reason = strdup(last->note)))
            return AMK_ENOMEM;
        amk_sb_printf(&sb, "replayed from %s (%s%s)", s->path, last->key ? "" : "trial ",
                      source_of(last));
        if (n > 1)
            amk_sb_printf(&sb, "; %zu recorded trials of this config, all failed", n);
    }
    if (isfinite(o->cost_s))
        amk_sb_printf(&sb, "; recorded cost %.3f s", o->cost_s);
    o->notes = amk_sb_take(&sb);
    return o->notes ? AMK_OK : AMK_ENOMEM;
}

static const sim_outcome *lookup(const sim_state *s, const char *id)
{
    if (!s->cap)
        return NULL;
    uint64_t key = id_key(id);
    for (size_t i = (size_t)key & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        uint32_t slot = s->slots[i];
        if (!slot)
            return NULL;
        const sim_outcome *o = &s->outs[slot - 1];
        if (o->key == key && strcmp(o->id, id) == 0)
            return o;
    }
}

static void sim_clear(void *state)
{
    sim_state *s = state;
    for (size_t i = 0; i < s->n_outs; i++) {
        free(s->outs[i].reason);
        free(s->outs[i].notes);
    }
    free(s->outs);
    free(s->slots);
    free(s->path);
    memset(s, 0, sizeof *s);
}

static int sim_init(void *state, const amk_backend_opts *opts, amk_diag *d)
{
    sim_state *s = state;
    sim_load L = {0};
    int rc;
    const char *path = opts ? opts->sim_path : NULL;
    const amk_target *want = NULL;
    if (!path || !*path)
        return amk_diag_set(d, AMK_EINVAL,
                            "sim backend needs a recorded results.tsv, Kernel Tuner "
                            "cachefile or T4 file (backend \"sim:FILE\")");
    if (opts->target && *opts->target) {
        want = amk_target_find(opts->target);
        if (!want)
            return amk_diag_set(d, AMK_EINVAL, "sim backend: unknown target '%s'", opts->target);
    }
    if (!(s->path = strdup(path)))
        return amk_diag_set(d, AMK_ENOMEM, "sim backend: out of memory");

    rc = load_file(path, opts, &L, d);
    if (rc == AMK_OK && L.oom)
        rc = amk_diag_set(d, AMK_ENOMEM, "%s: out of memory while loading", path);
    if (rc != AMK_OK)
        goto fail;
    if (L.n == 0) {
        rc = amk_diag_set(d, AMK_ENOENT,
                          "%s: no measured or failed trials to replay (only rejected, "
                          "screened or predicted rows, or none at all)", path);
        goto fail;
    }

    int dev = choose_device(&L, want);
    const char *devname = L.devs[dev];
    if (want) {
        const amk_target *t = devname[0] ? amk_target_find(devname) : NULL;
        if (!t || strcmp(t->key, want->key) != 0)
            amk_log(AMK_LOG_WARN,
                    "sim: %s holds no trials measured on target '%s'; replaying those of "
                    "'%s' while tuning for %s", path, want->key,
                    devname[0] ? devname : "an unnamed device", want->name);
        s->target = want;
    } else {
        s->target = devname[0] ? amk_target_find(devname) : NULL;
        if (!s->target) {
            s->target = amk_target_default();
            amk_log(AMK_LOG_INFO, "sim: device '%s' of %s matches no known target; using %s",
                    devname, path, s->target ? s->target->name : "none");
        }
    }
    if (!s->target) {
        rc = amk_diag_set(d, AMK_ENOENT, "sim backend: no target to tune for");
        goto fail;
    }
    if (L.n_devs > 1)
        amk_log(AMK_LOG_INFO, "sim: %s holds trials of %zu devices; replaying '%s'", path,
                L.n_devs, devname);
    /* A sweep that was itself replayed already carries the suffix. */
    size_t dl = strlen(devname), sl = strlen(" (replayed)");
    if (dl >= sl && strcmp(devname + dl - sl, " (replayed)") == 0)
        snprintf(s->device, sizeof s->device, "%s", devname);
    else
        snprintf(s->device, sizeof s->device, "%s (replayed)",
                 devname[0] ? devname : "unknown device");

    /* Keep the chosen device's rows, group them by config id, one outcome per group. */
    size_t m = 0;
    for (size_t i = 0; i < L.n; i++) {
        if (L.recs[i].dev == dev) {
            L.recs[m++] = L.recs[i];
        } else {
            free(L.recs[i].note);
            free(L.recs[i].key);
        }
    }
    L.n = m;
    qsort(L.recs, L.n, sizeof *L.recs, rec_cmp);
    s->outs = calloc(L.n, sizeof *s->outs);
    if (!s->outs) {
        rc = amk_diag_set(d, AMK_ENOMEM, "sim backend: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < L.n;) {
        size_t j = i + 1;
        while (j < L.n && strcmp(L.recs[j].id, L.recs[i].id) == 0)
            j++;
        rc = build_outcome(s, &L.recs[i], j - i, &s->outs[s->n_outs]);
        if (rc != AMK_OK) {
            free(s->outs[s->n_outs].reason);
            rc = amk_diag_set(d, rc, "sim backend: out of memory");
            goto fail;
        }
        s->n_outs++;
        i = j;
    }
    for (s->cap = 16; s->cap < 2 * s->n_outs; s->cap *= 2) {
    }
    s->slots = calloc(s->cap, sizeof *s->slots);
    if (!s->slots) {
        rc = amk_diag_set(d, AMK_ENOMEM, "sim backend: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < s->n_outs; i++) {
        size_t h = (size_t)s->outs[i].key & (s->cap - 1);
        while (s->slots[h])
            h = (h + 1) & (s->cap - 1);
        s->slots[h] = (uint32_t)(i + 1);
    }
    s->clocked = 1;
    size_t with_energy = 0;
    for (size_t i = 0; i < s->n_outs; i++) {
        s->clocked &= isfinite(s->outs[i].cost_s);
        with_energy += s->outs[i].energy_ticks > 0;
    }
    if (opts->objective != AMK_OBJ_TIME && with_energy == 0) {
        rc = amk_diag_set(d, AMK_ENOENERGY, "%s: --objective %s replays energies measured over "
                          "the energy counter's window, and no trial of '%s' carries one (rows "
                          "recorded with --objective time hold an estimate only)", path,
                          amk_objective_name(opts->objective), devname);
        goto fail;
    }
    amk_log(AMK_LOG_INFO, "sim: replaying %zu configs of %s from %s%s", s->n_outs, devname,
            path, s->clocked ? " (recorded trial costs: the loop's clock is simulated)" : "");
    load_free(&L);
    return AMK_OK;
fail:
    load_free(&L);
    sim_clear(s);
    return rc;
}

void amk__sim_delay(size_t n)
{
    static double ms = -1;
    if (ms < 0) {
        const char *e = getenv("AMK_SIM_DELAY_MS");
        char *end = NULL;
        double v = e && *e ? strtod(e, &end) : 0;
        ms = end && !*end && isfinite(v) && v > 0 ? v : 0;
    }
    if (ms <= 0 || n == 0)
        return;
    double total = ms * (double)n / 1000.0;
    struct timespec ts = {(time_t)total, (long)((total - floor(total)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) /* interrupted: sleep the rest */
        ;
}

static int sim_evaluate(void *state, const amk_config *const *cfgs, size_t n, amk_verdict *out)
{
    sim_state *s = state;
    amk__sim_delay(n);
    for (size_t i = 0; i < n; i++) {
        amk_verdict *v = &out[i];
        char id[17];
        amk_config_id(cfgs[i], id);
        const sim_outcome *o = lookup(s, id);
        v->correct = -1;
        v->latency_us = NAN;
        v->latency_kind = AMK_LAT_NONE;
        v->spread = NAN;
        v->compile_ms = NAN;
        v->cache_hit = -1;
        if (!o) {
            v->status = AMK_STATUS_NOT_RECORDED;
            snprintf(v->reason, sizeof v->reason, "config %s is not in %s", id, s->path);
            v->notes[0] = '\0';
            continue;
        }
        v->status = o->status;
        v->cost_s = o->cost_s;
        if (o->status == AMK_STATUS_REJECTED)
            v->valid = 0; /* the recording tuner found it invalid (Kernel Tuner InvalidConfig) */
        if (o->status == AMK_STATUS_OK) {
            v->latency_us = o->latency_us;
            v->latency_kind = AMK_LAT_REPLAYED;
            v->spread = o->spread;
            v->energy_uj = o->energy_uj;
            v->energy_window_ms = o->energy_window_ms;
            v->energy_ticks = o->energy_ticks;
            v->reason[0] = '\0';
        } else if (o->reason) {
            snprintf(v->reason, sizeof v->reason, "%s", o->reason);
        } else {
            snprintf(v->reason, sizeof v->reason, "recorded as %s",
                     amk_status_name(o->status));
        }
        snprintf(v->notes, sizeof v->notes, "%s", o->notes);
    }
    return AMK_OK;
}

static const amk_target *sim_target(void *state)
{
    return ((sim_state *)state)->target;
}

static const char *sim_device(void *state)
{
    return ((sim_state *)state)->device;
}

static int sim_recorded(void *state, const char *config_id)
{
    return lookup(state, config_id) != NULL;
}

static int sim_simulated_clock(void *state)
{
    return ((sim_state *)state)->clocked;
}

const amk_backend_type amk_backend_sim = {
    .api_version = 1,
    .name = "sim",
    .state_size = sizeof(sim_state),
    .init = sim_init,
    .evaluate = sim_evaluate,
    .target = sim_target,
    .device = sim_device,
    .clear = sim_clear,
    .recorded = sim_recorded,
    .simulated_clock = sim_simulated_clock,
};

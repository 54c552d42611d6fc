/* The history of a search and the one definition of "best" (HARNESS.md "Best").
 *
 * The rule (amk_history_rule, which the report and the export are handed): the incumbent
 * the keep rule yields when a group's rows (one kernel, shape and device) are replayed in
 * the order they were recorded.
 * - Evidence first: a measured latency (or one replayed from a recorded measurement)
 *   outranks a prediction; each kind is decided on its own rows and the better kind
 *   present answers.
 * - Writers record the keep rule's decision in the kept column (the loop's may rest on an
 *   interleaved re-measure that the row cannot show), so a recorded decision is honoured:
 *   each ok row with kept=1 becomes the incumbent, unless it is slower than the one before
 *   (the loop's "simpler config" tie-break may step to a config measured slower within
 *   min_gain to move the search; the best never gets slower). A resumed search continues
 *   from the last kept row, as the loop did.
 * - Rows without a recorded kept=1 (recorded sweeps, imports, bench files) replay the keep
 *   rule (search/keep.c) on what the rows show; inside the margin the earlier trial stays
 *   (rows alone carry no spec for the "simpler config" tie-break of a live loop).
 * - Several files: each file's incumbent, then the same replay across files in the order
 *   they were given (a higher kind of evidence always wins).
 * - What is handed back (DESIGN §3 "Keep / revert", issue 21 item 5): whatever the
 *   tie-breaks and margins, never a config measurably slower than another row of the same
 *   kind of evidence. When the fastest such row is faster than the incumbent by more than
 *   their measured noise (a replayed or predicted number has none: it comes back the same
 *   every time), the fastest row is the best; otherwise the incumbent is. On replayed rows
 *   the best is therefore the fastest row, and never slower than the default's.
 * - Clock state (issue 21): under objective time, rows timed beside the same vendor peer
 *   (interleaved in their window) are compared by their latency in one clock state, the
 *   group's first such row's (amk_peer_scaled): an H100 under its power cap moved cuBLAS
 *   180-220 us within one race, and a row measured in a slow moment (the default's first
 *   trial, 209 us beside a 201 us cuBLAS) lost on raw latency to a config that every
 *   interleaved re-measure found slower. Rows without that peer compare raw.
 *
 * - Objectives (issue 21): a group's rows are compared by the objective they were recorded
 *   under (its first row's; a search never mixes two): "faster" above reads "lower score"
 *   (amk_objective_score: latency, energy per launch, or their product) and the noise is
 *   amk_objective_noise. Under energy or edp only rows with an energy measured over a
 *   counter window take part, and there are no predictions.
 *
 * The history object (amk_history) applies that rule to one search of one results file,
 * read once, and carries it on trial by trial: the seen set, the trial numbering, the keep
 * rule's incumbent (the loop's and `amk evaluate`'s) and the best. */
#include "search_int.h"

#include "amk_cost_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the rule over rows ---------------------------------------------------------------- */

enum { TIER_MEASURED, TIER_PREDICTED, NTIERS }; /* measured includes replayed */

typedef struct tier {
    int has_kept, has_last, has_replay;
    amk_row kept;           /* the kept rows' incumbent: never slower than an earlier one */
    amk_row last;           /* the last kept row: where a resumed search continues */
    amk_row replay;         /* the keep rule replayed on every row */
} tier;

typedef struct history_state {
    int started;
    int has_objective;      /* objective is set: by the search, else by the first row */
    amk_objective objective;
    size_t file;            /* the file whose rows `cur` holds */
    tier cur[NTIERS];
    int has_best;           /* the incumbent over the files before `file` */
    size_t best_file;
    amk_row best;
    char peer[32];          /* the group's peer and its time in the first row that has one: */
    double peer_ref_us;     /* the clock state peered rows are compared in (0: none yet) */
    int has_fast[NTIERS];   /* the fastest row of each kind over every file */
    size_t fast_file[NTIERS];
    amk_row fast[NTIERS];
} history_state;

/* What the group minimises, for row r: NAN when r cannot be scored. */
static double score(const history_state *h, const amk_row *r)
{
    double s = h->objective == AMK_OBJ_TIME && amk_row_has_evidence(r)
                   ? amk_peer_scaled(r->latency_us, r->peer, r->peer_us, h->peer, h->peer_ref_us)
                   : NAN;
    return isfinite(s) ? s
                       : amk_objective_score(h->objective, r->latency_us, r->energy_uj,
                                             r->energy_ticks);
}

static int tier_of(const history_state *h, const amk_row *r)
{
    if (amk_row_has_evidence(r))
        return isfinite(score(h, r)) ? TIER_MEASURED : -1;
    return h->objective == AMK_OBJ_TIME && r->status == AMK_STATUS_OK &&
                   r->latency_kind == AMK_LAT_PREDICTED && isfinite(r->latency_us) &&
                   r->latency_us > 0 ? TIER_PREDICTED : -1;
}

/* The noise of comparing two rows for the keep rule: the larger of the two. */
static double rows_noise(const history_state *h, const amk_row *a, const amk_row *b)
{
    return fmax(amk_objective_noise(h->objective, a->spread, a->energy_ticks),
                amk_objective_noise(h->objective, b->spread, b->energy_ticks));
}

/* The keep rule on two rows: does cand replace inc? A better kind of evidence always does;
 * within one kind the keep rule with the history's margin, the earlier row winning ties. */
static int replaces(const history_state *h, const amk_row *inc, const amk_row *cand)
{
    int ti = tier_of(h, inc), tc = tier_of(h, cand);
    if (ti != tc)
        return tc < ti;
    return amk__keep_rule(score(h, inc), score(h, cand), rows_noise(h, inc, cand),
                          AMK_HISTORY_MIN_GAIN) == AMK__KEEP_FASTER;
}

/* The current file's incumbent: its best kind present, recorded decision first. */
static const amk_row *file_best(const history_state *h)
{
    for (int t = 0; t < NTIERS; t++) {
        if (h->cur[t].has_kept)
            return &h->cur[t].kept;
        if (h->cur[t].has_replay)
            return &h->cur[t].replay;
    }
    return NULL;
}

/* Folds the finished file into the incumbent over files, then clears it. */
static void close_file(history_state *h)
{
    const amk_row *fb = file_best(h);
    if (fb && (!h->has_best || replaces(h, &h->best, fb))) {
        h->best = *fb;
        h->best_file = h->file;
        h->has_best = 1;
    }
    for (int t = 0; t < NTIERS; t++)
        h->cur[t].has_kept = h->cur[t].has_last = h->cur[t].has_replay = 0;
}

static void history_add(void *state, const amk_row *r, size_t file)
{
    history_state *h = state;
    if (h->started && file != h->file)
        close_file(h);
    h->started = 1;
    h->file = file;
    if (!h->has_objective) {
        h->objective = r->objective;
        h->has_objective = 1;
    }
    int t = tier_of(h, r);
    if (t < 0)
        return;
    if (!(h->peer_ref_us > 0) && t == TIER_MEASURED && r->peer[0] && r->peer_us > 0) {
        snprintf(h->peer, sizeof h->peer, "%s", r->peer);
        h->peer_ref_us = r->peer_us;
    }
    tier *tr = &h->cur[t];
    if (!h->has_fast[t] || score(h, r) < score(h, &h->fast[t])) {
        h->fast[t] = *r;
        h->fast_file[t] = file;
        h->has_fast[t] = 1;
    }
    if (r->kept == 1) {
        tr->last = *r;
        tr->has_last = 1;
    }
    if (r->kept == 1 && (!tr->has_kept || score(h, r) <= score(h, &tr->kept))) {
        tr->kept = *r;
        tr->has_kept = 1;
    }
    if (!tr->has_replay || replaces(h, &tr->replay, r)) {
        tr->replay = *r;
        tr->has_replay = 1;
    }
}

/* The keep rule's incumbent over every row so far. */
static const amk_row *history_incumbent(const history_state *h, size_t *file)
{
    const amk_row *fb = file_best(h);
    if (fb && (!h->has_best || replaces(h, &h->best, fb))) {
        if (file)
            *file = h->file;
        return fb;
    }
    if (file && h->has_best)
        *file = h->best_file;
    return h->has_best ? &h->best : NULL;
}

/* The noise of one row's score, for what is handed back. */
static double measured_noise(const history_state *h, const amk_row *r)
{
    return amk__measured_noise(h->objective, r->latency_kind, r->spread, r->energy_ticks);
}

/* 1 when fast is better than inc by more than their measured noise: inc is measurably
 * worse, and is not handed back. */
static int measurably_faster(const history_state *h, const amk_row *inc, const amk_row *fast)
{
    double noise = fmax(measured_noise(h, inc), measured_noise(h, fast));
    return (score(h, inc) - score(h, fast)) / score(h, inc) > noise;
}

/* Where a search of one file continues: its best kind present, the last kept row first. */
static const amk_row *search_incumbent(const history_state *h)
{
    for (int t = 0; t < NTIERS; t++) {
        if (h->cur[t].has_last)
            return &h->cur[t].last;
        if (h->cur[t].has_replay)
            return &h->cur[t].replay;
    }
    return NULL;
}

static const amk_row *history_best(const void *state, size_t *file)
{
    const history_state *h = state;
    size_t f = 0;
    const amk_row *inc = history_incumbent(h, &f);
    int t = inc ? tier_of(h, inc) : -1;
    if (t >= 0 && h->has_fast[t] && measurably_faster(h, inc, &h->fast[t])) {
        inc = &h->fast[t];
        f = h->fast_file[t];
    }
    if (file && inc)
        *file = f;
    return inc;
}

const amk_best_rule amk_history_rule = {1, sizeof(history_state), history_add, history_best};

/* ---- the history of one search ----------------------------------------------------------- */

/* The rule's state per device: one for a search on a device, several when every device's
 * rows are heard (`amk propose`; further devices than HISTORY_MAX_DEVICES only inform). */
#define HISTORY_MAX_DEVICES 64

typedef struct device_state {
    char name[64];
    history_state rule;
} device_state;

struct amk_history {
    amk_history_opts o;
    char kernel[64], shape[256], device[64];
    const amk_limits *limits;
    amk_idset *seen;
    int64_t last_trial;
    size_t rows, skipped;
    device_state *dev;
    int ndev, last_dev;
    amk_incumbent inc;      /* the keep rule's */
    amk_incumbent best;     /* the best's config, when it could be rebuilt */
    int64_t best_trial;     /* the row best describes (0: none yet) */
    int64_t other_trial;    /* the first row of this search under another objective */
    amk_objective other;
};

static int matches(const amk_history *h, const amk_row *r)
{
    return (!h->kernel[0] || !strcmp(r->kernel, h->kernel)) &&
           (!h->shape[0] || !strcmp(r->shape, h->shape)) &&
           (!h->device[0] || !strcmp(r->device, h->device));
}

/* The rule state of device `name`, created on first sight; NULL past HISTORY_MAX_DEVICES
 * or out of memory (*oom set). */
static history_state *device_rule(amk_history *h, const char *name, int *oom)
{
    for (int i = 0; i < h->ndev; i++)
        if (!strcmp(h->dev[i].name, name)) {
            h->last_dev = i;
            return &h->dev[i].rule;
        }
    if (h->ndev == HISTORY_MAX_DEVICES)
        return NULL;
    device_state *p = realloc(h->dev, (size_t)(h->ndev + 1) * sizeof *p);
    if (!p) {
        *oom = 1;
        return NULL;
    }
    h->dev = p;
    memset(&p[h->ndev], 0, sizeof *p);
    snprintf(p[h->ndev].name, sizeof p[h->ndev].name, "%s", name);
    p[h->ndev].rule.objective = h->o.objective;
    p[h->ndev].rule.has_objective = 1;
    h->last_dev = h->ndev++;
    return &p[h->last_dev].rule;
}

/* Feeds one row of this search to the seen set and the rule; AMK_ENOMEM or AMK_OK. */
static int add_row(amk_history *h, const amk_row *r)
{
    int oom = 0;
    history_state *rs = device_rule(h, r->device, &oom);
    if (oom || (r->config_id[0] && amk_idset_add(h->seen, r->config_id) < 0))
        return AMK_ENOMEM;
    if (rs)
        history_add(rs, r, 0);
    h->rows++;
    return AMK_OK;
}

/* The config of a row's params at the history's spec and shape; 0 when none. */
static int row_config(const amk_history *h, const amk_row *r, amk_config *c)
{
    return h->o.spec && amk_config_from_params_json(h->o.spec, h->o.at, r->params, c,
                                                    NULL) == AMK_OK;
}

typedef struct load_ctx {
    amk_history *h;
    const char *path;
    amk_diag *d;
} load_ctx;

/* Row r's config at the history's spec and shape (*has: whether its params fit), read once.
 * A row recorded before a param joined the spec reads as that param's default (SPEC.md): it
 * is returned rewritten into buf, with that config's params and id. */
static const amk_row *row_read(const amk_history *h, const amk_row *r, amk_config *c, int *has,
                               amk_row *buf)
{
    int filled = h->o.spec ? amk_config_from_recorded(h->o.spec, h->o.at, r->params, c, NULL)
                           : -1;
    *has = filled >= 0;
    if (filled <= 0 || !h->shape[0]) /* a row of another shape is not at h->o.at */
        return r;
    *buf = *r;
    return amk_row_set_config(buf, c) ? buf : r;
}

static int load_row(const amk_row *row, void *ud)
{
    load_ctx *c = ud;
    amk_history *h = c->h;
    if (row->trial > h->last_trial)
        h->last_trial = row->trial;
    if (!matches(h, row))
        return 0;
    amk_config cfg;
    amk_row buf;
    int has;
    const amk_row *r = row_read(h, row, &cfg, &has, &buf);
    if (r->objective != h->o.objective && !h->other_trial) {
        h->other_trial = r->trial;
        h->other = r->objective;
    }
    if (add_row(h, r) != AMK_OK)
        return amk_diag_set(c->d, AMK_ENOMEM, "%s: out of memory", c->path);
    if (h->o.spec && !has)
        h->skipped++; /* recorded with another version of the spec */
    if (h->o.each)
        h->o.each(r, has ? &cfg : NULL, h->o.ud);
    return 0;
}

static const amk_row *rule_best(const amk_history *h)
{
    return h->ndev ? history_best(&h->dev[h->last_dev].rule, NULL) : NULL;
}

static const amk_row *rule_incumbent(const amk_history *h)
{
    return h->ndev ? search_incumbent(&h->dev[h->last_dev].rule) : NULL;
}

/* An incumbent from a row: its config rebuilt (has = 0 when its params no longer fit). */
static void incumbent_of(const amk_history *h, const amk_row *r, amk_incumbent *out)
{
    memset(out, 0, sizeof *out);
    out->objective = h->o.objective;
    if (!r || !row_config(h, r, &out->config))
        return;
    out->has = 1;
    amk_incumbent_set_row(out, r);
}

void amk_incumbent_set_row(amk_incumbent *b, const amk_row *r)
{
    b->latency_us = r->latency_us;
    b->spread = r->spread;
    b->kind = r->latency_kind;
    b->trial = r->trial;
    snprintf(b->clock_regime, sizeof b->clock_regime, "%s", r->clock_regime);
    snprintf(b->peer, sizeof b->peer, "%s", r->peer);
    b->peer_us = r->peer_us;
    b->vs_peer = r->vs_peer;
    b->sm_mhz = r->sm_mhz;
    b->objective = r->objective;
    b->energy_uj = r->energy_uj;
    b->energy_window_ms = r->energy_window_ms;
    b->energy_ticks = r->energy_ticks;
}

/* After the read: the keep rule's incumbent and the best, from the rule's choices. A row
 * whose params no longer parse (the spec changed) is no incumbent; a warning says so. */
static void restore(amk_history *h)
{
    const amk_row *b = rule_best(h), *r = rule_incumbent(h);
    h->inc.objective = h->best.objective = h->o.objective;
    if (!r)
        return;
    incumbent_of(h, b, &h->best);
    h->best_trial = b->trial;
    incumbent_of(h, r, &h->inc);
    if (!h->o.spec)
        return;
    if (!h->inc.has) {
        amk_log(AMK_LOG_WARN, "history: trial %lld: incumbent not restored: its params do "
                "not fit %s now", (long long)r->trial, amk_spec_name(h->o.spec));
        return;
    }
    char id[17];
    amk_config_id(&h->inc.config, id);
    if (strcmp(id, r->config_id) != 0)
        amk_log(AMK_LOG_WARN, "history: trial %lld: config_id %s recomputes as %s",
                (long long)r->trial, r->config_id, id);
}

static void set_key(amk_history *h, const amk_history_opts *o)
{
    const char *k = o->kernel ? o->kernel : o->spec ? amk_spec_name(o->spec) : "";
    snprintf(h->kernel, sizeof h->kernel, "%s", k);
    if (o->shape)
        snprintf(h->shape, sizeof h->shape, "%s", o->shape);
    else if (o->spec && o->at)
        amk_shape_format(o->spec, o->at, h->shape, sizeof h->shape);
    snprintf(h->device, sizeof h->device, "%s", o->device ? o->device : "");
    const amk_target *t = amk_target_default();
    h->limits = o->limits ? o->limits : t ? &t->limits : NULL;
}

int amk_history_load(const char *path, const amk_history_opts *o, amk_history **out,
                     amk_diag *d)
{
    if (!o || !out || (o->spec && !o->at))
        return amk_diag_set(d, AMK_EINVAL, "amk_history_load: NULL argument");
    *out = NULL;
    amk_history *h = calloc(1, sizeof *h);
    if (!h || !(h->seen = amk_idset_create())) {
        free(h);
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path ? path : "history");
    }
    h->o = *o;
    set_key(h, o);
    int rc = AMK_OK;
    if (path) {
        load_ctx c = {h, path, d};
        rc = amk_tsv_read(path, load_row, &c, NULL, d);
        if (rc == AMK_ENOENT) { /* nothing recorded yet: an empty history */
            amk_diag_clear(d);
            rc = AMK_OK;
        } else if (rc != AMK_OK && !strstr(d->msg, path)) {
            amk_diag_prefix(d, "%s", path);
        }
    }
    if (rc == AMK_OK && h->other_trial)
        rc = amk_diag_set(d, AMK_EOBJECTIVE, "%s: trial %lld of %s at %s%s%s was recorded with "
                          "--objective %s, and this run asks for --objective %s: a search "
                          "never switches objective (pass --objective %s to go on with it, or "
                          "use another results file)", path, (long long)h->other_trial,
                          h->kernel[0] ? h->kernel : "this search", h->shape,
                          h->device[0] ? " on " : "", h->device,
                          amk_objective_name(h->other), amk_objective_name(o->objective),
                          amk_objective_name(h->other));
    if (rc != AMK_OK) {
        amk_history_free(h);
        return rc;
    }
    restore(h);
    *out = h;
    return AMK_OK;
}

void amk_history_free(amk_history *h)
{
    if (!h)
        return;
    amk_idset_free(h->seen);
    free(h->dev);
    free(h);
}

int64_t amk_history_last_trial(const amk_history *h)
{
    return h ? h->last_trial : 0;
}

size_t amk_history_rows(const amk_history *h)
{
    return h ? h->rows : 0;
}

size_t amk_history_skipped(const amk_history *h)
{
    return h ? h->skipped : 0;
}

const amk_idset *amk_history_seen(const amk_history *h)
{
    return h ? h->seen : NULL;
}

int amk_history_see(amk_history *h, const char *config_id)
{
    return amk_idset_add(h->seen, config_id);
}

const amk_incumbent *amk_history_incumbent(const amk_history *h)
{
    return &h->inc;
}

amk_incumbent *amk__history_incumbent(amk_history *h)
{
    return &h->inc;
}

int amk_history_decide(amk_history *h, const amk_config *cfg, const amk_verdict *v)
{
    if (!amk__keep_decide_lim(&h->inc, cfg, v, h->o.min_gain, h->limits))
        return 0;
    h->inc.has = 1;
    h->inc.config = *cfg;
    h->inc.latency_us = v->latency_us;
    h->inc.spread = v->spread;
    h->inc.kind = v->latency_kind;
    h->inc.trial = 0; /* numbered when its row is recorded */
    snprintf(h->inc.clock_regime, sizeof h->inc.clock_regime, "%s", v->clock_regime);
    snprintf(h->inc.peer, sizeof h->inc.peer, "%s", v->peer);
    h->inc.peer_us = v->peer_us;
    h->inc.vs_peer = v->vs_peer;
    h->inc.sm_mhz = v->sm_mhz;
    h->inc.objective = h->o.objective;
    h->inc.energy_uj = v->energy_uj;
    h->inc.energy_window_ms = v->energy_window_ms;
    h->inc.energy_ticks = v->energy_ticks;
    return 1;
}

int amk_history_record(amk_history *h, const amk_row *rows, const amk_config *const *cfgs,
                       size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const amk_row *r = &rows[i];
        if (r->trial > h->last_trial)
            h->last_trial = r->trial;
        if (!matches(h, r) || add_row(h, r) != AMK_OK)
            continue; /* out of memory: the id is not remembered, nothing else is lost */
        if (r->kept == 1 && h->inc.has && h->inc.trial == 0 &&
            (!cfgs || !cfgs[i] || amk_config_equal(cfgs[i], &h->inc.config)))
            h->inc.trial = r->trial;
    }
    const amk_row *b = rule_best(h);
    if (!b || b->trial == h->best_trial)
        return 0;
    h->best_trial = b->trial;
    memset(&h->best, 0, sizeof h->best);
    for (size_t i = 0; i < n; i++)
        if (rows[i].trial == b->trial && cfgs && cfgs[i]) {
            h->best.has = 1;
            h->best.config = *cfgs[i];
            amk_incumbent_set_row(&h->best, b);
            return 1;
        }
    incumbent_of(h, b, &h->best);
    return 1;
}

const amk_row *amk_history_best(const amk_history *h, amk_incumbent *out)
{
    const amk_row *b = h ? rule_best(h) : NULL;
    if (out) {
        if (b && h->best_trial == b->trial)
            *out = h->best;
        else
            memset(out, 0, sizeof *out);
    }
    return b;
}

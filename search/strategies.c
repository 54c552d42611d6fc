/* The strategy table (one NULL-terminated list of type objects) and the helpers the
 * strategies share: seeding, seen checks, the unseen-config sampler and jump moves. */
#include "search_int.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const amk_strategy_type *const amk_strategies[] = {
    &amk__strategy_evolve, /* first = default */
    &amk__strategy_hillclimb,
    &amk__strategy_random,
    &amk__strategy_exhaustive,
    &amk__strategy_anneal,
    NULL,
};

const amk_strategy_type *amk_strategy_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; amk_strategies[i]; i++)
        if (strcmp(amk_strategies[i]->name, name) == 0)
            return amk_strategies[i];
    return NULL;
}

gsl_rng *amk__rng_create(uint64_t seed)
{
    gsl_set_error_handler_off();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        return NULL;
    /* unsigned long is 64-bit where we build; on a 32-bit long fold the high word in. */
    unsigned long s = (unsigned long)seed;
    if (sizeof(unsigned long) < 8)
        s = (unsigned long)(seed ^ (seed >> 32));
    gsl_rng_set(r, s);
    return r;
}

int amk__config_seen(const amk_idset *seen, const amk_config *c)
{
    if (!seen)
        return 0;
    char id[17];
    amk_config_id(c, id);
    return amk_idset_has(seen, id);
}

int amk__space_valid(const amk_space *sp, const amk_config *c)
{
    return amk_space_valid(sp, c, NULL) == AMK_OK;
}

void amk__config_zero(const amk_space *sp, amk_config *out)
{
    memset(out, 0, sizeof *out);
    out->spec = amk_space_spec(sp);
    out->shape = *amk_space_shape(sp);
}

void amk__proposal_set(amk_proposal *p, const amk_config *c, const char *source)
{
    p->config = *c;
    snprintf(p->source, sizeof p->source, "%s", source);
}

/* ---- visited memo ----------------------------------------------------------------------- */

#define VISITED_MAX_POINTS (UINT64_C(1) << 27) /* 16 MiB of bits at most */

void amk__visited_init(amk__visited *m, const amk_space *sp)
{
    memset(m, 0, sizeof *m);
    const amk_spec *spec = amk_space_spec(sp);
    m->n = amk_spec_n_params(spec);
    uint64_t points = 1;
    for (int i = m->n - 1; i >= 0; i--) {
        m->stride[i] = points;
        uint64_t nc = (uint64_t)amk_spec_param_n_choices(spec, i);
        if (nc == 0 || points > VISITED_MAX_POINTS / nc) {
            m->disabled = 1;
            return;
        }
        points *= nc;
    }
    m->npoints = points;
}

static int visited_index(amk__visited *m, const amk_config *c, uint64_t *idx)
{
    if (m->disabled)
        return 0;
    if (!m->bits) {
        m->bits = calloc((size_t)((m->npoints + 63) / 64), sizeof *m->bits);
        if (!m->bits) {
            m->disabled = 1; /* still correct, only slower */
            return 0;
        }
    }
    uint64_t k = 0;
    for (int i = 0; i < m->n; i++)
        k += (uint64_t)c->choice[i] * m->stride[i];
    if (k >= m->npoints)
        return 0;
    *idx = k;
    return 1;
}

void amk__visited_mark(amk__visited *m, const amk_config *c)
{
    uint64_t k;
    if (m && visited_index(m, c, &k))
        m->bits[k / 64] |= UINT64_C(1) << (k % 64);
}

int amk__visited_has(amk__visited *m, const amk_idset *seen, const amk_config *c)
{
    uint64_t k;
    int have = m && visited_index(m, c, &k);
    if (have && (m->bits[k / 64] >> (k % 64) & 1))
        return 1;
    if (!amk__config_seen(seen, c))
        return 0;
    if (have)
        m->bits[k / 64] |= UINT64_C(1) << (k % 64);
    return 1;
}

void amk__visited_clear(amk__visited *m)
{
    free(m->bits);
    memset(m, 0, sizeof *m);
}

/* ---- sampler ---------------------------------------------------------------------------- */

#define SAMPLER_MISSES 256     /* consecutive seen draws before switching to the pool */
#define SAMPLER_TRIES 100000L  /* rejection draws per amk_space_sample call */

void amk__sampler_init(amk__sampler *s, const amk_space *sp, gsl_rng *rng, amk__visited *vis)
{
    memset(s, 0, sizeof *s);
    s->sp = sp;
    s->rng = rng;
    s->vis = vis;
    s->n = amk_spec_n_params(amk_space_spec(sp));
}

void amk__sampler_clear(amk__sampler *s)
{
    free(s->pool);
    memset(s, 0, sizeof *s);
}

typedef struct pool_ctx {
    amk__sampler *s;
    const amk_idset *seen;
    int oom;
} pool_ctx;

static int pool_add(const amk_config *c, void *ud)
{
    pool_ctx *x = ud;
    amk__sampler *s = x->s;
    if (amk__visited_has(s->vis, x->seen, c))
        return 0;
    size_t width = s->n ? (size_t)s->n : 1;
    if (s->npool == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        uint8_t *p = realloc(s->pool, cap * width);
        if (!p) {
            x->oom = 1;
            return 1;
        }
        s->pool = p;
        s->cap = cap;
    }
    memcpy(s->pool + s->npool * width, c->choice, (size_t)s->n);
    s->npool++;
    return 0;
}

static int build_pool(amk__sampler *s, const amk_idset *seen)
{
    pool_ctx x = {s, seen, 0};
    int rc = amk_space_enumerate(s->sp, pool_add, &x);
    if (x.oom)
        return AMK_ENOMEM;
    if (rc < 0)
        return rc;
    /* Shuffle so the pool is served in a uniformly random order. */
    size_t w = s->n ? (size_t)s->n : 1;
    uint8_t tmp[AMK_MAX_PARAMS + 1];
    for (size_t i = s->npool; i > 1; i--) {
        size_t j = (size_t)gsl_rng_uniform_int(s->rng, (unsigned long)i);
        memcpy(tmp, s->pool + (i - 1) * w, w);
        memcpy(s->pool + (i - 1) * w, s->pool + j * w, w);
        memcpy(s->pool + j * w, tmp, w);
    }
    s->pooled = 1;
    s->next = 0;
    return AMK_OK;
}

int amk__sampler_next(amk__sampler *s, const amk_idset *seen, amk_config *out)
{
    if (!s->pooled) {
        for (int miss = 0; miss < SAMPLER_MISSES; miss++) {
            amk_config c;
            amk__config_zero(s->sp, &c);
            int rc = amk_space_sample(s->sp, AMK__RNG(s->rng), &c, SAMPLER_TRIES);
            if (rc == AMK_EEMPTY)
                break; /* too sparse for rejection: enumerate instead */
            if (rc < 0)
                return rc;
            if (!amk__visited_has(s->vis, seen, &c)) {
                *out = c;
                return 1;
            }
        }
        int rc = build_pool(s, seen);
        if (rc < 0)
            return rc;
    }
    size_t w = s->n ? (size_t)s->n : 1;
    while (s->next < s->npool) {
        amk_config c;
        amk__config_zero(s->sp, &c);
        memcpy(c.choice, s->pool + s->next * w, (size_t)s->n);
        s->next++;
        if (!amk__visited_has(s->vis, seen, &c)) {
            *out = c;
            return 1;
        }
    }
    return 0;
}

/* ---- jumps ------------------------------------------------------------------------------ */

int amk__jump(const amk_space *sp, gsl_rng *rng, const amk_config *from, int k,
              amk__visited *vis, const amk_idset *seen, int tries, amk_config *out)
{
    const amk_spec *spec = amk_space_spec(sp);
    int n = amk_spec_n_params(spec);
    int movable[AMK_MAX_PARAMS], nm = 0;
    for (int i = 0; i < n; i++)
        if (amk_spec_param_n_choices(spec, i) > 1)
            movable[nm++] = i;
    if (nm == 0)
        return 0;
    if (k > nm)
        k = nm;
    for (int t = 0; t < tries; t++) {
        amk_config c = *from;
        /* Partial Fisher-Yates: the first k entries of movable become the moved params. */
        for (int i = 0; i < k; i++) {
            int j = i + (int)gsl_rng_uniform_int(rng, (unsigned long)(nm - i));
            int tmp = movable[i];
            movable[i] = movable[j];
            movable[j] = tmp;
        }
        for (int i = 0; i < k; i++) {
            int p = movable[i];
            int nc = amk_spec_param_n_choices(spec, p);
            int r = nc / 4 > 2 ? nc / 4 : 2;
            int step = 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)r);
            if (gsl_rng_uniform_int(rng, 2))
                step = -step;
            int v = (int)c.choice[p] + step;
            if (v < 0 || v >= nc)
                v = (int)c.choice[p] - step; /* reflect off the edge */
            if (v < 0)
                v = 0;
            if (v >= nc)
                v = nc - 1;
            if (v == (int)c.choice[p])
                v = (v + 1 < nc) ? v + 1 : v - 1;
            c.choice[p] = (uint8_t)v;
        }
        if (amk__space_valid(sp, &c) && !amk__visited_has(vis, seen, &c)) {
            *out = c;
            return 1;
        }
    }
    return 0;
}

/* ---- marginals -------------------------------------------------------------------------- */

void amk__marginals_add(amk__marginals *m, const amk_config *c, double latency_us)
{
    if (!(latency_us > 0) || !isfinite(latency_us))
        return;
    double lg = log(latency_us);
    int n = amk_spec_n_params(c->spec);
    m->nparams = n;
    for (int i = 0; i < n; i++) {
        m->sum[i][c->choice[i]] += lg;
        m->cnt[i][c->choice[i]]++;
    }
    m->total += lg;
    m->n++;
}

/* Mean log latency of configs with param p at choice k, shrunk toward the overall mean as
 * if one more config at the overall mean had been seen. */
static double marginal_mean(const amk__marginals *m, int p, int k)
{
    double mean = m->total / (double)m->n;
    return (m->sum[p][k] + mean) / (double)(m->cnt[p][k] + 1);
}

double amk__marginals_gain(const amk__marginals *m, const amk_config *from, int p, int to)
{
    if (!m || m->n < 2 || p >= m->nparams)
        return 0.0;
    return marginal_mean(m, p, to) - marginal_mean(m, p, from->choice[p]);
}

/* ---- neighbourhood walk ------------------------------------------------------------------ */

static double move_gain(const amk__marginals *m, const amk_config *centre, const amk__move *mv)
{
    double g = amk__marginals_gain(m, centre, mv->p, mv->vp);
    if (mv->q != mv->p)
        g += amk__marginals_gain(m, centre, mv->q, mv->vq);
    return g;
}

typedef struct ranked_move {
    amk__move mv;
    int pos;
    double gain;
} ranked_move;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked_move *x = a, *y = b;
    if (x->gain != y->gain)
        return x->gain < y->gain ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void model_first(amk__near *nr, const amk_space *sp, const amk_config *centre);

/* Builds the move list of centre: its single moves, then its diagonal moves, each stage
 * shuffled. With a guide the single moves are then ordered by predicted gain; the diagonal
 * ones stay shuffled, since they are there for the coupling of params that a guide reading
 * params one at a time cannot see. Without memory for the ranking the walk stays valid,
 * only unguided. */
static void moves_init(amk__near *nr, const amk_space *sp, gsl_rng *rng,
                       const amk_config *centre)
{
    const amk_spec *spec = amk_space_spec(sp);
    int n = amk_spec_n_params(spec);
    int stage_end[2], m = 0;
    for (int stage = 0; stage < 2; stage++) {
        int first = m;
        for (int i = 0; i < n; i++) {
            int nci = amk_spec_param_n_choices(spec, i), ci = centre->choice[i];
            for (int di = -1; di <= 1 && stage == 0; di += 2)
                if (ci + di >= 0 && ci + di < nci)
                    nr->move[m++] = (amk__move){(uint8_t)i, (uint8_t)i, (uint8_t)(ci + di),
                                                (uint8_t)(ci + di)};
            for (int j = i + 1; j < n && stage == 1; j++) {
                int ncj = amk_spec_param_n_choices(spec, j), cj = centre->choice[j];
                for (int signs = 0; signs < 4; signs++) {
                    int vi = ci + (signs & 1 ? 1 : -1), vj = cj + (signs & 2 ? 1 : -1);
                    if (vi >= 0 && vi < nci && vj >= 0 && vj < ncj)
                        nr->move[m++] = (amk__move){(uint8_t)i, (uint8_t)j, (uint8_t)vi,
                                                    (uint8_t)vj};
                }
            }
        }
        for (int k = m - 1; k > first; k--) {
            int r = first + (int)gsl_rng_uniform_int(rng, (unsigned long)(k - first) + 1);
            amk__move t = nr->move[k];
            nr->move[k] = nr->move[r];
            nr->move[r] = t;
        }
        stage_end[stage] = m;
    }
    nr->nmove = m;
    nr->next = 0;
    int ns = stage_end[0];
    if (nr->guide && ns >= 2) {
        ranked_move rk[2 * AMK_MAX_PARAMS];
        for (int k = 0; k < ns; k++)
            rk[k] = (ranked_move){nr->move[k], k, move_gain(nr->guide, centre, &nr->move[k])};
        qsort(rk, (size_t)ns, sizeof *rk, ranked_cmp);
        for (int k = 0; k < ns; k++)
            nr->move[k] = rk[k].mv;
    }
    if (nr->model)
        model_first(nr, sp, centre);
}

/* The cost model's prediction for c, or NAN when it has none (an invalid config). */
static double model_predict(const amk_target *t, const amk_space *sp, const amk_config *c)
{
    amk_estimate e;
    if (!amk__space_valid(sp, c) || amk_cost_estimate(c, t, &e, NULL) != AMK_OK ||
        !isfinite(e.predicted_us) || e.predicted_us <= 0)
        return NAN;
    return e.predicted_us;
}

/* Moves the moves predicted faster than the centre by more than AMK__MODEL_MARGIN to the
 * front, fastest first (equal predictions keep their order); the others keep theirs. */
static void model_first(amk__near *nr, const amk_space *sp, const amk_config *centre)
{
    double base = model_predict(nr->model, sp, centre);
    if (!isfinite(base))
        return;
    ranked_move fast[AMK__NEAR_MAX_MOVES];
    amk__move slow[AMK__NEAR_MAX_MOVES];
    int nf = 0, nsl = 0;
    for (int k = 0; k < nr->nmove; k++) {
        const amk__move *mv = &nr->move[k];
        amk_config c = *centre;
        c.shape = *amk_space_shape(sp);
        c.choice[mv->p] = mv->vp;
        c.choice[mv->q] = mv->vq;
        double pred = model_predict(nr->model, sp, &c);
        if (isfinite(pred) && pred < base * (1.0 - AMK__MODEL_MARGIN))
            fast[nf++] = (ranked_move){*mv, k, pred};
        else
            slow[nsl++] = *mv;
    }
    if (nf == 0)
        return;
    qsort(fast, (size_t)nf, sizeof *fast, ranked_cmp);
    for (int k = 0; k < nf; k++)
        nr->move[k] = fast[k].mv;
    memcpy(&nr->move[nf], slow, (size_t)nsl * sizeof *slow);
}

/* A single move that breaks a restriction, repaired by one step of one other param (the
 * first valid and new, from a random param and direction on): a restriction that couples
 * two params (dedispersion's tile size of 1 only with a stride of 0) would otherwise let the
 * walk reach the pair's other corner only in its diagonal stage, after every single move of
 * every centre on the way. */
static int repaired(const amk_space *sp, gsl_rng *rng, int p, amk__visited *vis,
                    const amk_idset *seen, amk_config *c)
{
    const amk_spec *spec = amk_space_spec(sp);
    int n = amk_spec_n_params(spec);
    int q0 = (int)gsl_rng_uniform_int(rng, (unsigned long)n);
    int d0 = gsl_rng_uniform_int(rng, 2) ? 1 : -1;
    for (int i = 0; i < n; i++) {
        int q = (q0 + i) % n, v = c->choice[q], nc = amk_spec_param_n_choices(spec, q);
        for (int k = 0; k < 2 && q != p; k++) {
            int d = k ? -d0 : d0;
            if (v + d < 0 || v + d >= nc)
                continue;
            c->choice[q] = (uint8_t)(v + d);
            if (amk__space_valid(sp, c) && !amk__visited_has(vis, seen, c))
                return 1;
        }
        c->choice[q] = (uint8_t)v;
    }
    return 0;
}

int amk__near_next(amk__near *nr, const amk_space *sp, gsl_rng *rng, const amk_config *centre,
                   amk__visited *vis, const amk_idset *seen, amk_config *out)
{
    enum { JUMP_TRIES = 64 };
    if (!nr->ready) {
        moves_init(nr, sp, rng, centre);
        nr->ready = 1;
    }
    while (nr->next < nr->nmove) {
        const amk__move *mv = &nr->move[nr->next++];
        *out = *centre;
        out->shape = *amk_space_shape(sp);
        out->choice[mv->p] = mv->vp;
        out->choice[mv->q] = mv->vq;
        if (amk__space_valid(sp, out)) {
            if (!amk__visited_has(vis, seen, out))
                return AMK__NEAR_NEIGHBOUR;
        } else if (mv->p == mv->q && repaired(sp, rng, mv->p, vis, seen, out)) {
            return AMK__NEAR_NEIGHBOUR;
        }
    }
    int k = 2 + (int)gsl_rng_uniform_int(rng, 2);
    if (amk__jump(sp, rng, centre, k, vis, seen, JUMP_TRIES, out))
        return AMK__NEAR_JUMP;
    return AMK__NEAR_NONE;
}

/* A small Gaussian process over configs (amk__gp, search_int.h), with which evolve ranks
 * candidate children by the improvement it expects of them. Two configs are as alike as the
 * params they share: a Matern 5/2 kernel of the weighted count of params whose choices
 * differ (a Hamming distance), not of the distance between choice indices. The recorded
 * spaces are not smooth in the index (convolution on MI250X: tile_size_y 2, 3, 4 run at
 * 1.5, 50 and 1.0 times the optimum), and an index-distance kernel, fitted on them, steered
 * evolve away from the optimum (best / optimum after 200 evaluations 1.43 against 1.10 on
 * that pair; docs/PERFORMANCE.md). Each param's weight is a shared length scale times a
 * stretch of its own, chosen by marginal likelihood (automatic relevance: a param that does
 * not move the latency gets a long one, so a difference in it costs little similarity). */
#include "search_int.h"

#include <math.h>
#include <string.h>

/* Shared length scales, in params of difference. */
static const double GP_SCALES[] = {0.5, 1.0, 2.0, 4.0, 8.0};
#define GP_NSCALES ((int)(sizeof GP_SCALES / sizeof GP_SCALES[0]))
/* Per-param stretches of the shared scale. */
static const double GP_RELS[] = {0.5, 1.0, 2.0, 4.0, 16.0};
#define GP_NRELS ((int)(sizeof GP_RELS / sizeof GP_RELS[0]))
#define GP_REL_ONE 1
#define GP_NOISE 0.01  /* noise variance of a standardised log latency */
#define GP_JITTER 1e-8
/* The hyperparameters are tuned on at most this many of the points (every other one of a
 * larger set): a factorisation costs m^3, and a tune makes 1 + (GP_NSCALES - 1) +
 * n (GP_NRELS - 1) of them. */
#define GP_TUNE_MAX 48

/* a . b over n terms, in four running sums (the compiler may not reorder a single sum; four
 * let it pipeline and vectorise, and the order stays fixed, so results repeat exactly) */
static double dot(const double *a, const double *b, int n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += a[k] * b[k];
        s1 += a[k + 1] * b[k + 1];
        s2 += a[k + 2] * b[k + 2];
        s3 += a[k + 3] * b[k + 3];
    }
    for (; k < n; k++)
        s0 += a[k] * b[k];
    return (s0 + s1) + (s2 + s3);
}

static double kernel(const amk__gp *g, const uint8_t *a, const uint8_t *b)
{
    double r2 = 0;
    for (int p = 0; p < g->n; p++)
        r2 += g->w[p] * (double)(a[p] != b[p]); /* branch-free: differences are unpredictable */
    double r = sqrt(r2);
    return (1.0 + r + r * r / 3.0) * exp(-r);
}

/* Cholesky of the kernel matrix of g's first m points into g->L and alpha = K^-1 y; the log
 * marginal likelihood (up to a constant), or -INFINITY when K is not positive definite. */
static double factor(amk__gp *g)
{
    int m = g->m;
    double *L = g->L;
    for (int i = 0; i < m; i++)
        for (int j = 0; j <= i; j++)
            L[i * AMK__GP_MAX + j] =
                kernel(g, g->x[i], g->x[j]) + (i == j ? GP_NOISE + GP_JITTER : 0.0);
    double logdet = 0;
    for (int j = 0; j < m; j++) {
        double *lj = L + j * AMK__GP_MAX;
        double d = lj[j] - dot(lj, lj, j);
        if (!(d > 0))
            return -INFINITY;
        d = sqrt(d);
        lj[j] = d;
        logdet += log(d);
        for (int i = j + 1; i < m; i++) {
            double *li = L + i * AMK__GP_MAX;
            li[j] = (li[j] - dot(li, lj, j)) / d;
        }
    }
    double *a = g->alpha, fit = 0;
    for (int i = 0; i < m; i++) { /* L a = y */
        a[i] = (g->y[i] - dot(L + i * AMK__GP_MAX, a, i)) / L[i * AMK__GP_MAX + i];
        fit += a[i] * a[i];
    }
    for (int i = m - 1; i >= 0; i--) { /* L^T alpha = a */
        double s = a[i];
        for (int k = i + 1; k < m; k++)
            s -= L[k * AMK__GP_MAX + i] * a[k];
        a[i] = s / L[i * AMK__GP_MAX + i];
    }
    return -0.5 * fit - logdet;
}

static void set_weights(amk__gp *g)
{
    for (int p = 0; p < g->n; p++) {
        double ls = GP_SCALES[g->scale_i] * GP_RELS[g->rel_i[p]];
        g->w[p] = 5.0 / (ls * ls);
    }
}

/* Tries *idx = v; keeps it when the marginal likelihood rises. */
static void try_index(amk__gp *g, int *idx, int v, double *best_ml)
{
    if (v == *idx)
        return;
    int keep = *idx;
    *idx = v;
    set_weights(g);
    double ml = factor(g);
    if (ml > *best_ml)
        *best_ml = ml;
    else
        *idx = keep;
}

/* Raises the marginal likelihood of the first m points over the hyperparameters: every
 * shared scale, then every stretch of each param in turn (one coordinate sweep). */
static void tune(amk__gp *g, int m)
{
    int all = g->m;
    g->m = m;
    set_weights(g);
    double best_ml = factor(g);
    for (int k = 0; k < GP_NSCALES; k++)
        try_index(g, &g->scale_i, k, &best_ml);
    for (int p = 0; p < g->n; p++)
        for (int k = 0; k < GP_NRELS; k++)
            try_index(g, &g->rel_i[p], k, &best_ml);
    g->m = all;
}

int amk__gp_fit(amk__gp *g, int n, const uint8_t (*x)[AMK_MAX_PARAMS], const double *lg,
                int m, int retune)
{
    if (m < 2 || m > AMK__GP_MAX || n < 1 || n > AMK_MAX_PARAMS)
        return 0;
    if (g->n != n) {
        g->n = n;
        g->scale_i = GP_NSCALES / 2;
        for (int p = 0; p < n; p++)
            g->rel_i[p] = GP_REL_ONE;
        retune = 1;
    }
    g->m = m;
    double mean = 0, var = 0;
    for (int i = 0; i < m; i++)
        mean += lg[i];
    mean /= m;
    for (int i = 0; i < m; i++)
        var += (lg[i] - mean) * (lg[i] - mean);
    double sd = sqrt(var / m);
    if (!(sd > 0))
        sd = 1;
    /* a set too large to tune on whole: every other point first, the tuning subset */
    int half = m > GP_TUNE_MAX ? (m + 1) / 2 : m;
    g->best = INFINITY;
    for (int i = 0; i < m; i++) {
        int d = m > GP_TUNE_MAX ? (i % 2 == 0 ? i / 2 : half + i / 2) : i;
        memcpy(g->x[d], x[i], sizeof g->x[d]);
        g->y[d] = (lg[i] - mean) / sd;
        if (g->y[d] < g->best)
            g->best = g->y[d];
    }
    if (retune)
        tune(g, half < GP_TUNE_MAX ? half : GP_TUNE_MAX);
    set_weights(g);
    return factor(g) > -INFINITY;
}

double amk__gp_ei(const amk__gp *g, const uint8_t *x)
{
    double k[AMK__GP_MAX], v[AMK__GP_MAX];
    int m = g->m;
    double mu = 0, var = 1.0;
    for (int i = 0; i < m; i++) {
        k[i] = kernel(g, x, g->x[i]);
        mu += k[i] * g->alpha[i];
    }
    for (int i = 0; i < m; i++) { /* v = L^-1 k: the variance the data explain */
        v[i] = (k[i] - dot(g->L + i * AMK__GP_MAX, v, i)) / g->L[i * AMK__GP_MAX + i];
        var -= v[i] * v[i];
    }
    double sd = var > 1e-12 ? sqrt(var) : 1e-6;
    double z = (g->best - mu) / sd;
    /* minimising: E[max(best - f, 0)] = sd (z Phi(z) + phi(z)) */
    return sd * (z * 0.5 * erfc(-z * 0.70710678118654752) +
                 exp(-0.5 * z * z) * 0.39894228040143268);
}

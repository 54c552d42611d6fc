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

#include <limits.h>
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
/* A difference mask has one bit per param, AMK_MAX_PARAMS / 8 bytes of them. */
#define GP_MASK_BYTES (AMK_MAX_PARAMS / 8)
/* Expected improvement is computed for this many candidates side by side. */
#define GP_EI_CHUNK 16
/* Doubles to a vector (AVX2), and trials of a tune factorised side by side. */
#define GP_LANES AMK__GP_TUNE_LANES

/* AVX2 where the compiler can target it and the CPU has it: vectors of four doubles, each
 * lane doing the scalar code's operations in its order, so every number is the scalar
 * path's, bit for bit (the target is avx2 without fma, and -std=c11 keeps products and sums
 * apart: no fused multiply-add rounds differently). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define GP_AVX2 __attribute__((target("avx2")))
typedef double gp_v4 __attribute__((vector_size(GP_LANES * sizeof(double))));

static int have_avx2(void)
{
    static int has = -1;
    if (has < 0)
        has = __builtin_cpu_supports("avx2") != 0;
    return has;
}
#endif

/* a . b over n terms, in four running sums (the compiler may not reorder a single sum; four
 * let it pipeline and vectorise, and the order stays fixed, so results repeat exactly) */
static inline double dot(const double *a, const double *b, int n)
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

/* The Matern 5/2 kernel at squared distance r2. */
static double matern(double r2)
{
    double r = sqrt(r2);
    return (1.0 + r + r * r / 3.0) * exp(-r);
}

/* r^2 of two configs that differ in the params of mask: a sum of weights looked up a byte of
 * params at a time. The weights are 5 times powers of two (the grids' length scales are), so
 * every such sum is exact and equals the one over params in order. */
static inline double r2_of(const double (*wsum)[256], uint32_t mask)
{
    double r2 = 0;
    for (int b = 0; b < GP_MASK_BYTES; b++)
        r2 += wsum[b][(mask >> (8 * b)) & 0xff];
    return r2;
}

/* The bits of r^2 (a key), and their slot in a table of 2^bits. */
static inline uint64_t r2_key(double r2)
{
    uint64_t key;
    memcpy(&key, &r2, sizeof key);
    return key;
}

static inline unsigned key_slot(uint64_t key, int bits)
{
    return (unsigned)(((key ^ key >> 29) * 0x9e3779b97f4a7c15ULL) >> (64 - bits));
}

/* The memo's slot for key: where it is, or the empty one ending its probe. */
static inline unsigned memo_slot(const amk__gp *g, uint64_t key)
{
    const unsigned slots = AMK__GP_MEMO - 1;
    unsigned h = key_slot(key, AMK__GP_MEMO_BITS);
    while (g->memo[h].key && g->memo[h].key != key)
        h = (h + 1) & slots;
    return h;
}

static void memo_clear(amk__gp *g)
{
    memset(g->memo, 0, sizeof g->memo);
    g->memo_used = 0;
}

/* A miss of kernel_of: computes the kernel and remembers it in slot h. */
static double memo_add(amk__gp *g, uint64_t key, unsigned h, double r2)
{
    double k = matern(r2);
    if (g->memo_used >= AMK__GP_MEMO / 2) { /* half full: start afresh, probes stay short */
        memo_clear(g);
        h = memo_slot(g, key);
    }
    g->memo[h].key = key;
    g->memo[h].k = k;
    g->memo_used++;
    return k;
}

/* The kernel at r2. It is a function of r^2 alone, whatever the weights, and a model meets
 * few distinct r^2 (sums of a handful of weights), so each one's value is remembered, keyed
 * on its bits: a look-up instead of a sqrt and an exp, and the same number. */
static inline double kernel_of(amk__gp *g, double r2)
{
    uint64_t key = r2_key(r2) + 1; /* 0 marks an empty slot */
    unsigned h = memo_slot(g, key);
    return g->memo[h].key ? g->memo[h].k : memo_add(g, key, h, r2);
}

double amk__gp_kernel(amk__gp *g, double r2)
{
    return kernel_of(g, r2);
}

/* A param's weight at shared scale scale_i and stretch rel_i: 5 / length scale^2, 5 times
 * a power of two (the grids hold powers of two). */
static double weight(int scale_i, int rel_i)
{
    double ls = GP_SCALES[scale_i] * GP_RELS[rel_i];
    return 5.0 / (ls * ls);
}

/* The weights of hyperparameters (scale_i, rel_i) over n params, into w (may be NULL) and
 * the byte tables of their sums. */
static void weights(int n, int scale_i, const int *rel_i, double *w, double (*wsum)[256])
{
    double wp[AMK_MAX_PARAMS] = {0};
    for (int p = 0; p < n; p++) {
        wp[p] = weight(scale_i, rel_i[p]);
        if (w)
            w[p] = wp[p];
    }
    /* a byte with top bit k: the sum without it, plus w of param 8 b + k */
    for (int b = 0; b < GP_MASK_BYTES; b++) {
        wsum[b][0] = 0;
        for (int k = 0; k < 8; k++)
            for (int v = 1 << k; v < 2 << k; v++)
                wsum[b][v] = wsum[b][v - (1 << k)] + wp[8 * b + k];
    }
}

static inline __attribute__((always_inline)) double factor_in(double *L, int ld,
                                                               const double *y, int m,
                                                               double *alpha)
{
    double scratch[AMK__GP_MAX];
    double logdet = 0;
    for (int j = 0; j < m; j++) {
        double *lj = L + j * ld;
        double d = lj[j] - dot(lj, lj, j);
        if (!(d > 0))
            return -INFINITY;
        d = sqrt(d);
        lj[j] = d;
        logdet += log(d);
        for (int i = j + 1; i < m; i++) {
            double *li = L + i * ld;
            li[j] = (li[j] - dot(li, lj, j)) / d;
        }
    }
    double *a = alpha ? alpha : scratch, fit = 0;
    for (int i = 0; i < m; i++) { /* L a = y */
        a[i] = (y[i] - dot(L + i * ld, a, i)) / L[i * ld + i];
        fit += a[i] * a[i];
    }
    if (!alpha)
        return -0.5 * fit - logdet;
    for (int i = m - 1; i >= 0; i--) { /* L^T alpha = a */
        double s = a[i];
        for (int k = i + 1; k < m; k++)
            s -= L[k * ld + i] * a[k];
        a[i] = s / L[i * ld + i];
    }
    return -0.5 * fit - logdet;
}

#ifdef GP_AVX2
static GP_AVX2 double factor_avx2(double *L, int ld, const double *y, int m, double *alpha)
{
    return factor_in(L, ld, y, m, alpha);
}
#endif

/* Cholesky of the kernel matrix in L's lower triangle (m points, row stride ld), in place,
 * and alpha = K^-1 y (alpha NULL: not wanted, a tune needs only the likelihood); the log
 * marginal likelihood (up to a constant), or -INFINITY when K is not positive definite.
 * simd: compiled for AVX2 where the CPU has it (dot's four sums one vector), same numbers. */
static double factor(double *L, int ld, const double *y, int m, double *alpha, int simd)
{
#ifdef GP_AVX2
    if (simd && have_avx2())
        return factor_avx2(L, ld, y, m, alpha);
#endif
    (void)simd;
    return factor_in(L, ld, y, m, alpha);
}

/* A tune tries the values of one weight (a param's stretch, or the shared scale) side by
 * side, GP_LANES of them: their kernels differ from the best's in that weight alone, so none
 * depends on another's outcome. The lanes' matrices are interleaved, element at of lane l at
 * at * GP_LANES + l. Each lane is factorised by factor's arithmetic exactly: the same
 * operations in the same order on its own numbers (sums of products in dot's four running
 * sums, then the subtraction, division, sqrt and log), only several lanes per instruction.
 * Where the CPU has AVX2 the lanes are one 256-bit vector (no FMA: -ffp-contract=off keeps
 * products and sums apart as in factor); elsewhere each lane goes through factor. */
_Static_assert(GP_NSCALES - 1 <= GP_LANES && GP_NRELS - 1 <= GP_LANES,
               "a batch holds every other value of a weight");

#ifdef GP_AVX2
static inline GP_AVX2 gp_v4 v4_load(const double *p)
{
    gp_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* dot() of lane vectors */
static inline GP_AVX2 gp_v4 dot_v4(const double *a, const double *b, int n)
{
    const int W = GP_LANES;
    gp_v4 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += v4_load(a + k * W) * v4_load(b + k * W);
        s1 += v4_load(a + (k + 1) * W) * v4_load(b + (k + 1) * W);
        s2 += v4_load(a + (k + 2) * W) * v4_load(b + (k + 2) * W);
        s3 += v4_load(a + (k + 3) * W) * v4_load(b + (k + 3) * W);
    }
    for (; k < n; k++)
        s0 += v4_load(a + k * W) * v4_load(b + k * W);
    return (s0 + s1) + (s2 + s3);
}

/* factor(L, ld, y, m, NULL) of each lane into ml[]. A lane that is not positive definite
 * gets -INFINITY and goes on with a pivot of 1, its numbers unused. */
static GP_AVX2 void factor_v4(double *L, int ld, const double *y, int m, double *ml)
{
    const int W = GP_LANES;
    double logdet[GP_LANES] = {0}, a[AMK__GP_TUNE_MAX * GP_LANES];
    int bad[GP_LANES] = {0};
    for (int j = 0; j < m; j++) {
        double *lj = L + j * ld * W, d[GP_LANES];
        gp_v4 dv = v4_load(lj + j * W) - dot_v4(lj, lj, j);
        memcpy(d, &dv, sizeof d);
        for (int l = 0; l < W; l++) {
            if (!(d[l] > 0)) {
                bad[l] = 1;
                d[l] = 1;
            }
            d[l] = sqrt(d[l]);
            logdet[l] += log(d[l]);
        }
        memcpy(&dv, d, sizeof dv);
        memcpy(lj + j * W, &dv, sizeof dv);
        for (int i = j + 1; i < m; i++) {
            double *li = L + i * ld * W;
            gp_v4 v = (v4_load(li + j * W) - dot_v4(li, lj, j)) / dv;
            memcpy(li + j * W, &v, sizeof v);
        }
    }
    gp_v4 fit = {0};
    for (int i = 0; i < m; i++) { /* L a = y */
        gp_v4 yi = {y[i], y[i], y[i], y[i]};
        gp_v4 ai = (yi - dot_v4(L + i * ld * W, a, i)) / v4_load(L + (i * ld + i) * W);
        memcpy(a + i * W, &ai, sizeof ai);
        fit += ai * ai;
    }
    double f[GP_LANES];
    memcpy(f, &fit, sizeof f);
    for (int l = 0; l < W; l++)
        ml[l] = bad[l] ? -INFINITY : -0.5 * f[l] - logdet[l];
}

#endif

/* The log marginal likelihood of the first nl lanes of the tune's matrices (t_L) into ml,
 * and into t_ml (where tests compare the paths). */
static void factor_lanes(amk__gp *g, int nl, double *ml)
{
    const int ld = AMK__GP_TUNE_MAX, m = g->t_m;
    g->t_nml = nl;
#ifdef GP_AVX2
    if (have_avx2() && !g->no_simd) {
        factor_v4(g->t_L, ld, g->t_y, m, g->t_ml);
        memcpy(ml, g->t_ml, (size_t)nl * sizeof *ml);
        return;
    }
#endif
    for (int l = 0; l < nl; l++) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j <= i; j++)
                g->t_L1[i * ld + j] = g->t_L[(i * ld + j) * GP_LANES + l];
        ml[l] = g->t_ml[l] = factor(g->t_L1, ld, g->t_y, m, NULL, !g->no_simd);
    }
}

static void set_weights(amk__gp *g)
{
    weights(g->n, g->scale_i, g->rel_i, g->w, g->wsum);
    g->k_ok = 0; /* the kept kernel is of other weights */
}

int amk__gp_tune_cost(int n)
{
    return 1 + (GP_NSCALES - 1) + n * (GP_NRELS - 1);
}

void amk__gp_tune_begin(amk__gp *g)
{
    if (g->m < 2)
        return;
    /* the first points of a fit: all of a small set, else every other one (amk__gp_fit
     * stores those first) */
    int m = g->m > AMK__GP_TUNE_MAX ? (g->m + 1) / 2 : g->m;
    if (m > AMK__GP_TUNE_MAX)
        m = AMK__GP_TUNE_MAX;
    g->t_m = m;
    g->t_varied = 0;
    memset(g->t_pairs, 0, sizeof g->t_pairs);
    double wsum[GP_MASK_BYTES][256]; /* of the weights the tune starts at */
    weights(g->n, g->scale_i, g->rel_i, NULL, wsum);
    for (int i = 0, q = 0; i < m; i++) {
        g->t_y[i] = g->y[i];
        for (int j = 0; j <= i; j++) {
            uint32_t mask = amk__diff_mask(g->x[i], g->x[j]);
            g->t_r2[i * AMK__GP_TUNE_MAX + j] = r2_of((const double(*)[256])wsum, mask);
            if (j == i)
                continue;
            g->t_varied |= mask;
            g->t_at[q] = (uint16_t)(i * AMK__GP_TUNE_MAX + j);
            for (uint32_t b = mask; b; b &= b - 1)
                g->t_pairs[__builtin_ctz(b)][q / 64] |= 1ull << (q % 64);
            q++;
        }
    }
    g->t_scale_i = g->scale_i;
    memcpy(g->t_rel_i, g->rel_i, sizeof g->t_rel_i);
    g->t_step = 0;
    g->tuning = 1;
}

/* The tune's marginal likelihood at nl trials' hyperparameters, into ml[]. t_r2 and t_K hold
 * r^2 and the kernel of every pair at the best hyperparameters so far. A trial of another
 * shared scale (p < 0) multiplies every r^2 by by[l] (the ratio of the old scale's square to
 * the new one's, a power of two); a trial of param p's stretch adds by[l] (its new weight less
 * its old) to the r^2 of the pairs that differ in p and leaves the others. Both are exact
 * (r^2 is a sum of a few multiples of 5 times powers of two, far inside a double's 53 bits),
 * so every r^2 is the one a sum over the params at the new weights gives, bit for bit, and so
 * is its kernel. Lanes past nl repeat lane 0. */
static void tune_trials(amk__gp *g, int p, const double *by, int nl, double *ml)
{
    const int ld = AMK__GP_TUNE_MAX, m = g->t_m, W = GP_LANES;
    double *restrict L = g->t_L, b[GP_LANES];
    const double *restrict K = g->t_K;
    for (int l = 0; l < W; l++)
        b[l] = by[l < nl ? l : 0];
    if (p < 0) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j <= i; j++) {
                int at = i * ld + j;
                double diag = i == j ? GP_NOISE + GP_JITTER : 0.0, r2 = g->t_r2[at];
                for (int l = 0; l < W; l++)
                    L[at * W + l] = kernel_of(g, r2 * b[l]) + diag;
            }
        factor_lanes(g, nl, ml);
        return;
    }
    for (int i = 0; i < m; i++) { /* the best's kernel in every lane, then what p changes */
        for (int j = 0; j < i; j++)
            for (int l = 0; l < W; l++)
                L[(i * ld + j) * W + l] = K[i * ld + j];
        for (int l = 0; l < W; l++)
            L[(i * ld + i) * W + l] = K[i * ld + i] + (GP_NOISE + GP_JITTER);
    }
    /* most pairs p moves share their r^2 with others: the lanes' kernels of this batch's
     * r^2 in a small direct-mapped table, one look-up there instead of four in the memo */
    struct {
        double r2, k[GP_LANES];
    } near[256];
    for (int h = 0; h < 256; h++)
        near[h].r2 = -1; /* no r^2 is negative */
    for (int w = 0; w * 64 < m * (m - 1) / 2; w++)
        for (uint64_t bits = g->t_pairs[p][w]; bits; bits &= bits - 1) {
            int at = g->t_at[w * 64 + __builtin_ctzll(bits)];
            double r2 = g->t_r2[at];
            unsigned h = key_slot(r2_key(r2), 8);
            if (near[h].r2 != r2) {
                near[h].r2 = r2;
                for (int l = 0; l < W; l++)
                    near[h].k[l] = kernel_of(g, r2 + b[l]);
            }
            memcpy(L + at * W, near[h].k, sizeof near[h].k);
        }
    factor_lanes(g, nl, ml);
}

/* A trial's hyperparameters become the best: r^2 and the kernel of the pairs it changed (the
 * kernel values are the memo's, just computed). */
static void tune_keep(amk__gp *g, int p, double by)
{
    const int ld = AMK__GP_TUNE_MAX, m = g->t_m;
    if (p < 0) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j <= i; j++) {
                g->t_r2[i * ld + j] *= by;
                g->t_K[i * ld + j] = kernel_of(g, g->t_r2[i * ld + j]);
            }
        return;
    }
    for (int w = 0; w * 64 < m * (m - 1) / 2; w++)
        for (uint64_t b = g->t_pairs[p][w]; b; b &= b - 1) {
            int at = g->t_at[w * 64 + __builtin_ctzll(b)];
            g->t_r2[at] += by;
            g->t_K[at] = kernel_of(g, g->t_r2[at]);
        }
}

/* One coordinate sweep raising the marginal likelihood of the tune's points: every shared
 * scale, then every stretch of each param in turn; a value is kept when the likelihood
 * rises. Step 0 is the likelihood of the starting point, step 1 + k tries scale k, step
 * 1 + GP_NSCALES + p GP_NRELS + k stretch k of param p. The steps of one weight are
 * factorised side by side (tune_trials) and then decided in order, as one at a time. */
int amk__gp_tune_step(amk__gp *g, int max_factor)
{
    if (!g->tuning)
        return 0;
    int last = GP_NSCALES + g->n * GP_NRELS, done = 0;
    while (g->t_step <= last && done < max_factor) {
        if (g->t_step == 0) {
            double one = 1.0;
            tune_trials(g, -1, &one, 1, &g->t_best_ml);
            tune_keep(g, -1, one);
            g->t_step++;
            done++;
            continue;
        }
        /* the steps [first, first + nval) of one weight: the shared scale (p < 0) or the
         * stretch of param p */
        int p = -1, first = 1, nval = GP_NSCALES, *idx = &g->t_scale_i;
        if (g->t_step > GP_NSCALES) {
            p = (g->t_step - 1 - GP_NSCALES) / GP_NRELS;
            first = 1 + GP_NSCALES + p * GP_NRELS;
            nval = GP_NRELS;
            idx = &g->t_rel_i[p];
        }
        /* a param the tune's points all share: its weight is in no pair's r^2, the kernel
         * and the likelihood stay the best's, and an equal likelihood is never kept */
        if (p >= 0 && !(g->t_varied >> p & 1)) {
            g->t_step = first + nval;
            continue;
        }
        /* the next steps of this weight but the value in use, as many as are allowed */
        int start = *idx, kv[GP_LANES], nl = 0;
        double by[GP_LANES], ml[GP_LANES];
        for (; g->t_step < first + nval && nl < GP_LANES && done + nl < max_factor;
             g->t_step++) {
            int k = g->t_step - first;
            if (k == start)
                continue;
            kv[nl] = k;
            by[nl] = p < 0 ? weight(k, GP_REL_ONE) / weight(start, GP_REL_ONE)
                           : weight(g->t_scale_i, k) - weight(g->t_scale_i, start);
            nl++;
        }
        if (!nl)
            continue;
        tune_trials(g, p, by, nl, ml);
        done += nl;
        /* in step order, as one at a time. One at a time would also try the value in use at
         * the start again after a keep: the kernel of the start, whose likelihood is below
         * the kept one's, so it is never kept. */
        int kept = -1;
        for (int l = 0; l < nl; l++)
            if (ml[l] > g->t_best_ml) {
                g->t_best_ml = ml[l];
                kept = l;
            }
        if (kept >= 0) {
            *idx = kv[kept];
            tune_keep(g, p, by[kept]);
        }
    }
    if (g->t_step <= last)
        return 0;
    g->scale_i = g->t_scale_i;
    memcpy(g->rel_i, g->t_rel_i, sizeof g->rel_i);
    set_weights(g);
    g->tuning = 0;
    return 1;
}

int amk__gp_fit(amk__gp *g, int n, const uint8_t (*x)[AMK_MAX_PARAMS], const long *ids,
                const double *lg, int m, int retune)
{
    if (m < 2 || m > AMK__GP_MAX || n < 1 || n > AMK_MAX_PARAMS)
        return 0;
    if (g->n != n) {
        g->n = n;
        g->scale_i = GP_NSCALES / 2;
        for (int p = 0; p < n; p++)
            g->rel_i[p] = GP_REL_ONE;
        g->tuning = 0;
        set_weights(g);
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
    int half = m > AMK__GP_TUNE_MAX ? (m + 1) / 2 : m;
    long old_id[AMK__GP_MAX];
    int old_m = g->k_ok && ids ? g->m_k : 0;
    memcpy(old_id, g->id, sizeof old_id);
    g->best = INFINITY;
    for (int i = 0; i < m; i++) {
        int d = m > AMK__GP_TUNE_MAX ? (i % 2 == 0 ? i / 2 : half + i / 2) : i;
        memcpy(g->x[d], x[i], sizeof g->x[d]);
        g->y[d] = (lg[i] - mean) / sd;
        g->id[d] = ids ? ids[i] : -1;
        if (g->y[d] < g->best)
            g->best = g->y[d];
    }
    /* the kernel among the first `tuned` points: the tune's, at the weights it ended with */
    int tuned = 0;
    if (retune) {
        amk__gp_tune_begin(g);
        if (amk__gp_tune_step(g, INT_MAX))
            tuned = g->t_m;
    }
    /* where each point was in the last fit (-1: new, or no kernel kept) */
    int was[AMK__GP_MAX];
    for (int d = 0; d < m; d++) {
        was[d] = -1;
        for (int e = 0; e < (g->k_ok ? old_m : 0) && was[d] < 0; e++)
            if (old_id[e] == g->id[d])
                was[d] = e;
    }
    const double(*wsum)[256] = (const double(*)[256])g->wsum;
    const double *ko = g->K[g->k_cur];
    double *kn = g->K[!g->k_cur];
    for (int i = 0; i < m; i++)
        for (int j = 0; j <= i; j++) {
            int a = was[i] > was[j] ? was[i] : was[j], b = was[i] > was[j] ? was[j] : was[i];
            double k = b >= 0      ? ko[a * AMK__GP_MAX + b]
                       : i < tuned ? g->t_K[i * AMK__GP_TUNE_MAX + j]
                                   : kernel_of(g, r2_of(wsum, amk__diff_mask(g->x[i], g->x[j])));
            kn[i * AMK__GP_MAX + j] = k;
            g->L[i * AMK__GP_MAX + j] = k + (i == j ? GP_NOISE + GP_JITTER : 0.0);
        }
    g->k_cur = !g->k_cur;
    g->k_ok = ids != NULL;
    g->m_k = m;
    return factor(g->L, AMK__GP_MAX, g->y, m, g->alpha, !g->no_simd) > -INFINITY;
}

/* v = L^-1 k for GP_EI_CHUNK candidates side by side, and the variance the data explain
 * taken from var: each lane sums in dot's order, so a candidate's numbers do not depend on
 * its neighbours (nor on whether AVX2 runs four of them to an instruction). */
#ifdef GP_AVX2
static GP_AVX2 void solve_v4(const double *L, int m, double (*k)[GP_EI_CHUNK],
                             double (*v)[GP_EI_CHUNK], double *var)
{
    for (int c = 0; c < GP_EI_CHUNK; c += GP_LANES) {
        gp_v4 vr = v4_load(var + c);
        for (int i = 0; i < m; i++) {
            const double *li = L + i * AMK__GP_MAX;
            gp_v4 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
            int j = 0;
            for (; j + 4 <= i; j += 4) {
                s0 += li[j] * v4_load(&v[j][c]);
                s1 += li[j + 1] * v4_load(&v[j + 1][c]);
                s2 += li[j + 2] * v4_load(&v[j + 2][c]);
                s3 += li[j + 3] * v4_load(&v[j + 3][c]);
            }
            for (; j < i; j++)
                s0 += li[j] * v4_load(&v[j][c]);
            gp_v4 vi = (v4_load(&k[i][c]) - ((s0 + s1) + (s2 + s3))) / li[i];
            memcpy(&v[i][c], &vi, sizeof vi);
            vr -= vi * vi;
        }
        memcpy(var + c, &vr, sizeof vr);
    }
}
_Static_assert(GP_EI_CHUNK % GP_LANES == 0, "whole vectors of candidates");
#endif

static void solve_lanes(const amk__gp *g, double (*k)[GP_EI_CHUNK], double (*v)[GP_EI_CHUNK],
                        double *var)
{
    enum { C = GP_EI_CHUNK };
    int m = g->m;
#ifdef GP_AVX2
    if (have_avx2() && !g->no_simd) {
        solve_v4(g->L, m, k, v, var);
        return;
    }
#endif
    for (int i = 0; i < m; i++) {
        const double *li = g->L + i * AMK__GP_MAX;
        double s0[C] = {0}, s1[C] = {0}, s2[C] = {0}, s3[C] = {0};
        int j = 0;
        for (; j + 4 <= i; j += 4)
            for (int c = 0; c < C; c++) {
                s0[c] += li[j] * v[j][c];
                s1[c] += li[j + 1] * v[j + 1][c];
                s2[c] += li[j + 2] * v[j + 2][c];
                s3[c] += li[j + 3] * v[j + 3][c];
            }
        for (; j < i; j++)
            for (int c = 0; c < C; c++)
                s0[c] += li[j] * v[j][c];
        for (int c = 0; c < C; c++) {
            v[i][c] = (k[i][c] - ((s0[c] + s1[c]) + (s2[c] + s3[c]))) / li[i];
            var[c] -= v[i][c] * v[i][c];
        }
    }
}

void amk__gp_ei_many(amk__gp *g, const uint8_t (*x)[AMK_MAX_PARAMS], int count,
                     double *ei)
{
    enum { C = GP_EI_CHUNK };
    int m = g->m;
    for (int base = 0; base < count; base += C) {
        int nc = count - base < C ? count - base : C;
        double k[AMK__GP_MAX][C], v[AMK__GP_MAX][C], mu[C], var[C];
        for (int c = 0; c < C; c++) {
            mu[c] = 0;
            var[c] = 1.0;
        }
        for (int i = 0; i < m; i++)
            for (int c = 0; c < C; c++) { /* lanes past count: zeros, solved and dropped */
                k[i][c] = c < nc ? kernel_of(g, r2_of((const double(*)[256])g->wsum,
                                                   amk__diff_mask(x[base + c], g->x[i])))
                                 : 0.0;
                mu[c] += k[i][c] * g->alpha[i];
            }
        solve_lanes(g, k, v, var);
        for (int c = 0; c < nc; c++) {
            double sd = var[c] > 1e-12 ? sqrt(var[c]) : 1e-6;
            double z = (g->best - mu[c]) / sd;
            /* minimising: E[max(best - f, 0)] = sd (z Phi(z) + phi(z)) */
            ei[base + c] = sd * (z * 0.5 * erfc(-z * 0.70710678118654752) +
                                 exp(-0.5 * z * z) * 0.39894228040143268);
        }
    }
}

double amk__gp_ei(amk__gp *g, const uint8_t *x)
{
    double ei;
    amk__gp_ei_many(g, (const uint8_t(*)[AMK_MAX_PARAMS])x, 1, &ei);
    return ei;
}

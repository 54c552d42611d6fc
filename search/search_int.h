/* search internals shared by the strategies, keep/revert and the loop (and reached by
 * tests/check_search.c): the strategy type objects, an unseen-config sampler that notices an
 * exhausted space, jump moves and the "simpler config" order used by ties. */
#ifndef AMK_SEARCH_INT_H
#define AMK_SEARCH_INT_H

#include "amk_search.h"

#include <gsl/gsl_rng.h>
#include <string.h>

#define AMK__STRATEGY_API 1

extern const amk_strategy_type amk__strategy_hillclimb;
extern const amk_strategy_type amk__strategy_random;
extern const amk_strategy_type amk__strategy_exhaustive;
extern const amk_strategy_type amk__strategy_anneal;
extern const amk_strategy_type amk__strategy_evolve;

/* mt19937 seeded from a 64-bit seed (both halves folded in, so seeds differing only in the
 * high word give different streams). NULL on ENOMEM. Also turns GSL's abort handler off. */
gsl_rng *amk__rng_create(uint64_t seed);
/* The search's GSL stream as the amk_rng that amk_space_sample and amk_space_from_unit take. */
static inline unsigned long amk__gsl_below(void *rng, unsigned long n)
{
    return gsl_rng_uniform_int(rng, n);
}
#define AMK__RNG(g) (&(amk_rng){amk__gsl_below, (g)})

/* The params in which two choice vectors (AMK_MAX_PARAMS bytes each) differ, bit p for
 * param p, and their count: eight bytes at a time (a byte's top bit set when it is not
 * zero; the eight top bits gathered, or summed, by a multiply), cheaper than a compare per
 * param; the surrogate's kernel was most of a fit's time. */
_Static_assert(AMK_MAX_PARAMS % 8 == 0 && AMK_MAX_PARAMS <= 32, "difference masks are 32 bits");
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Word w of a and b compared: 1 in the low bit of each byte that differs. */
static inline uint64_t amk__diff_bytes(const uint8_t *a, const uint8_t *b, int w)
{
    const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL;
    uint64_t u, v;
    memcpy(&u, a + 8 * w, 8);
    memcpy(&v, b + 8 * w, 8);
    uint64_t x = u ^ v;
    return ((((x & lo7) + lo7) | x) & ~lo7) >> 7;
}
#endif
static inline uint32_t amk__diff_mask(const uint8_t *a, const uint8_t *b)
{
    uint32_t mask = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (int w = 0; w < AMK_MAX_PARAMS / 8; w++)
        mask |= (uint32_t)((amk__diff_bytes(a, b, w) * 0x0102040810204080ULL) >> 56) << (8 * w);
#else
    for (int p = 0; p < AMK_MAX_PARAMS; p++)
        mask |= (uint32_t)(a[p] != b[p]) << p;
#endif
    return mask;
}
static inline int amk__diff_count(const uint8_t *a, const uint8_t *b)
{
    int n = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (int w = 0; w < AMK_MAX_PARAMS / 8; w++)
        n += (int)((amk__diff_bytes(a, b, w) * 0x0101010101010101ULL) >> 56);
#else
    for (int p = 0; p < AMK_MAX_PARAMS; p++)
        n += a[p] != b[p];
#endif
    return n;
}

/* 1 when c's config_id is in seen (seen may be NULL: never). */
int amk__config_seen(const amk_idset *seen, const amk_config *c);
/* 1 when c is a valid point of sp (restrictions with the space's limits). */
int amk__space_valid(const amk_space *sp, const amk_config *c);
/* A config of sp with every choice index 0 (shape and spec from the space). */
void amk__config_zero(const amk_space *sp, amk_config *out);
void amk__proposal_set(amk_proposal *p, const amk_config *c, const char *source);

/* A strategy's memory of what it has proposed or found in `seen`: one bit per point of the
 * raw product (when that is at most 2^27 points; else it falls back to config ids every
 * time). `seen` only grows, so a config once found there stays known, and a strategy
 * answers most "already seen?" questions without hashing a canonical config. */
typedef struct amk__visited {
    uint64_t *bits;        /* allocated on first mark; NULL when disabled or unused */
    uint64_t stride[AMK_MAX_PARAMS];
    uint64_t npoints;
    int n, disabled;
} amk__visited;
void amk__visited_init(amk__visited *m, const amk_space *sp);
/* 1 when c was marked or its id is in seen (then it gets marked); m may be NULL. */
int amk__visited_has(amk__visited *m, const amk_idset *seen, const amk_config *c);
void amk__visited_mark(amk__visited *m, const amk_config *c);
void amk__visited_clear(amk__visited *m);

/* Uniform draws of valid configs not yet seen. Rejection sampling from the raw product
 * while that works; after many consecutive misses (a nearly exhausted or very sparse
 * space) it enumerates the unseen valid configs once, shuffles them and serves from that
 * pool, so it can answer "nothing left" exactly. Caller-owned; rng and vis are borrowed. */
typedef struct amk__sampler {
    const amk_space *sp;
    gsl_rng *rng;
    amk__visited *vis;
    int n;                 /* params */
    int pooled;            /* the pool has been built */
    uint8_t *pool;         /* npool choice vectors of n bytes */
    size_t npool, cap, next;
} amk__sampler;
void amk__sampler_init(amk__sampler *s, const amk_space *sp, gsl_rng *rng, amk__visited *vis);
/* 1 = drew *out, 0 = every valid config is seen, <0 = AMK_ENOMEM or a space error. */
int amk__sampler_next(amk__sampler *s, const amk_idset *seen, amk_config *out);
void amk__sampler_clear(amk__sampler *s);

/* A jump: k distinct params (capped at the movable ones) each moved by a random non-zero
 * step of up to max(2, choices/4) indices. Up to `tries` draws; 1 when *out is valid and
 * not seen (vis may be NULL). */
int amk__jump(const amk_space *sp, gsl_rng *rng, const amk_config *from, int k,
              amk__visited *vis, const amk_idset *seen, int tries, amk_config *out);

/* What the observed latencies say about each param value, read as if params acted
 * independently: the mean log latency of the ok configs holding that value, shrunk toward
 * the mean of all of them. Cheap, and enough to try first the moves that the evidence so
 * far favours (VEC 4 -> 8 after the VEC=8 points were fast). Zero-initialise. */
typedef struct amk__marginals {
    double sum[AMK_MAX_PARAMS][256];
    int cnt[AMK_MAX_PARAMS][256];
    double total;
    long n;
    int nparams;
} amk__marginals;
void amk__marginals_add(amk__marginals *m, const amk_config *c, double latency_us);
/* Predicted change of log latency when param p of `from` takes choice `to` (0 while fewer
 * than two latencies are known). */
double amk__marginals_gain(const amk__marginals *m, const amk_config *from, int p, int to);

/* The neighbourhood of a centre, walked once: its single moves (one param one step), then
 * its diagonal moves (two params one step each: coupled params such as THREADS and ROWS of
 * THREADS/ROWS threads per row lie along valleys that single moves cannot follow), then
 * random jumps of 2 or 3 params. Each stage comes in an order shuffled when the walk starts;
 * with a guide the single moves come best-predicted first (ties shuffled). With a model,
 * the moves (single or diagonal) that the cost model predicts faster than the centre by
 * more than AMK__MODEL_MARGIN go before all others, fastest first: it tells tile shapes
 * apart, not the launch shapes of a memory-bound kernel, which it predicts alike, so those
 * keep the order above. A single move that breaks a restriction comes with one step of
 * another param that repairs it (the first found), else it is skipped, as are invalid
 * diagonal moves. Set `ready` to 0 whenever the centre moves. Zero-initialise. */
#define AMK__MODEL_MARGIN 0.05
#define AMK__NEAR_MAX_MOVES (2 * AMK_MAX_PARAMS + 2 * AMK_MAX_PARAMS * (AMK_MAX_PARAMS - 1))
typedef struct amk__move {
    uint8_t p, q;          /* params moved; q == p for a single-param move */
    uint8_t vp, vq;        /* their new choice indices */
} amk__move;
typedef struct amk__near {
    const amk__marginals *guide; /* optional: orders the single moves */
    const amk_target *model;     /* optional: moves it predicts clearly faster go first */
    amk__move move[AMK__NEAR_MAX_MOVES];
    int nmove, next, ready;
} amk__near;
enum { AMK__NEAR_NONE = 0, AMK__NEAR_NEIGHBOUR = 1, AMK__NEAR_JUMP = 2 };
/* Next valid config near centre that is neither visited nor seen (the caller marks it
 * visited): AMK__NEAR_NEIGHBOUR (a move of the list) or AMK__NEAR_JUMP with *out set, or
 * AMK__NEAR_NONE when all are used up. */
int amk__near_next(amk__near *nr, const amk_space *sp, gsl_rng *rng, const amk_config *centre,
                   amk__visited *vis, const amk_idset *seen, amk_config *out);

/* Order by simplicity: fewer threads per block (product of the launch block), then fewer
 * dynamic shared bytes, then lexicographically smaller choice indices. <0 when a is
 * simpler, >0 when b is, 0 when indistinguishable. A launch that cannot be evaluated
 * skips the first two criteria. */
int amk__config_simpler(const amk_config *a, const amk_config *b, const amk_limits *lim);

/* The keep rule (search/keep.c), a pure function of numbers so that it has one home and
 * is easy to extend. The numbers are the objective's scores (amk_objective_score: latency,
 * energy per launch or their product). The noise of one score: amk_objective_noise (the
 * spread, the energy counter's quantisation; 0 when absent; a replayed row carries its
 * recorded measurement's, so a replayed search decides as it would have live). The noise of
 * a measurement, for what is handed back (amk__measured_noise): that when measured, 0 for a
 * replayed or predicted number (it comes back the same every time). The margin a gain must
 * clear: max(min_gain, noise). amk__keep_rule says whether a candidate
 * of cand_us replaces an incumbent of inc_us, noise being that of their comparison (the
 * larger of the two): AMK__KEEP_FASTER (faster by more than the margin), AMK__KEEP_REVERT,
 * or AMK__KEEP_TIE: inside the margin and not slower by more than min_gain, where the
 * caller's tie-break decides (the loop: the simpler config; a replay of rows: the earlier
 * trial stays). */
enum { AMK__KEEP_REVERT = 0, AMK__KEEP_FASTER = 1, AMK__KEEP_TIE = 2 };
double amk__measured_noise(amk_objective objective, amk_latency_kind kind, double spread,
                           int energy_ticks);
double amk__keep_margin(double noise, double min_gain);
int amk__keep_rule(double inc_us, double cand_us, double noise, double min_gain);
/* 1 when the incumbent and the candidate were timed beside the same peer (objective time):
 * the keep rule then holds the candidate's latency in the incumbent's clock state
 * (amk_peer_scaled) against the incumbent's. */
int amk__keep_peered(const amk_incumbent *inc, const amk_verdict *v);
/* 1 when candidate and incumbent are both measured and their gap (peer-scaled when peered)
 * is within twice the keep margin: close enough that separate measurements may have decided
 * it by drift, so the loop re-measures both interleaved before deciding. */
int amk__keep_close(const amk_incumbent *inc, const amk_config *cand, const amk_verdict *v,
                    double min_gain);
/* 1 when both were measured with an observed SM clock and not beside the same peer, the
 * clocks differ by more than the keep margin, the faster of the two ran at the higher
 * clock, and the gap between them is
 * small enough that the clock could have decided it (within twice the margin plus the
 * clock's move): the loop re-measures both interleaved, at one clock, instead of deciding. */
int amk__keep_clock_moved(const amk_incumbent *inc, const amk_config *cand,
                          const amk_verdict *v, double min_gain);
/* amk_keep_decide with the limits used to evaluate launch geometry (the loop passes its
 * space's limits; the public function uses the default target's). */
int amk__keep_decide_lim(const amk_incumbent *inc, const amk_config *cand,
                         const amk_verdict *v, double min_gain, const amk_limits *lim);
/* The clock state a search shows its strategy latencies in: the first verdict (or row) timed
 * beside a peer, its peer and that peer's time (us 0: none seen yet). */
typedef struct amk__peer_frame {
    char peer[32];
    double us;
} amk__peer_frame;
/* Strategies rank configs by a verdict's latency_us. Under another objective they are shown
 * its score in that place (amk_objective_score: the energy per launch, or energy x latency;
 * NAN, i.e. no usable number, when the energy was not measured over a counter window), so
 * every strategy follows the objective without knowing of it. Under time, a verdict timed
 * beside the frame's peer is shown its latency in the frame's clock state (amk_peer_scaled,
 * as the keep rule and the best compare; the first such verdict sets the frame); others are
 * left unchanged. */
void amk__verdict_for_strategy(amk_objective objective, amk__peer_frame *frame, amk_verdict *v);
/* The history's incumbent, for the loop's interleaved re-measure (which refreshes its
 * latency and spread). */
amk_incumbent *amk__history_incumbent(amk_history *h);

/* A small Gaussian process over configs (search/surrogate.c), for ranking candidates by
 * expected improvement: a Matern 5/2 kernel of the weighted count of params two configs
 * differ in, over standardised log latencies; the weights (a shared length scale and a
 * stretch per param) by marginal likelihood, tuned at once (amk__gp_fit's retune) or a few
 * factorisations at a time (amk__gp_tune_begin, amk__gp_tune_step: a caller that must bound
 * the cost of each call). At most AMK__GP_MAX points: the caller picks which. */
#define AMK__GP_MAX 96
#define AMK__GP_TUNE_MAX 48 /* points a tune uses (every other one of a larger set) */
#define AMK__GP_TUNE_PAIRS (AMK__GP_TUNE_MAX * (AMK__GP_TUNE_MAX - 1) / 2)
#define AMK__GP_TUNE_LANES 4 /* trials of one weight factorised side by side */
#define AMK__GP_MEMO_BITS 14 /* a table of 2^14 kernel values (256 KB), cleared half full */
#define AMK__GP_MEMO (1 << AMK__GP_MEMO_BITS)
typedef struct amk__gp {
    int n, m;
    int scale_i, rel_i[AMK_MAX_PARAMS]; /* hyperparameters, as indices into their grids */
    double w[AMK_MAX_PARAMS];           /* 5 / length scale^2 per param */
    double wsum[AMK_MAX_PARAMS / 8][256]; /* sums of w over each byte of a difference mask */
    uint8_t x[AMK__GP_MAX][AMK_MAX_PARAMS];
    double y[AMK__GP_MAX], alpha[AMK__GP_MAX];
    double L[AMK__GP_MAX * AMK__GP_MAX];
    double best;                        /* lowest standardised y */
    /* the kernel matrix of the last fit (K[k_cur]) and the caller's ids of its points, kept
     * while the weights stay (k_ok): the next fit's points are mostly the same */
    long id[AMK__GP_MAX];
    double K[2][AMK__GP_MAX * AMK__GP_MAX];
    int k_cur, k_ok, m_k;
    /* a tune under way (tuning 1): its own copy of the points and hyperparameters; the
     * fitted model above keeps its weights until the tune ends */
    int tuning, t_m, t_step, t_scale_i, t_rel_i[AMK_MAX_PARAMS];
    double t_best_ml;
    uint32_t t_varied; /* params some pair differs in */
    /* the pairs (i, j), j < i, of the tune's points numbered 0, 1, 2, ... row by row: where
     * each one sits in the matrices below (i AMK__GP_TUNE_MAX + j), and those differing in
     * param p as bits of t_pairs[p] */
    uint16_t t_at[AMK__GP_TUNE_PAIRS];
    uint64_t t_pairs[AMK_MAX_PARAMS][(AMK__GP_TUNE_PAIRS + 63) / 64];
    double t_y[AMK__GP_TUNE_MAX];
    double t_r2[AMK__GP_TUNE_MAX * AMK__GP_TUNE_MAX]; /* r^2 of each pair at the best so far */
    double t_K[AMK__GP_TUNE_MAX * AMK__GP_TUNE_MAX]; /* the kernel at the best so far */
    double t_L[AMK__GP_TUNE_MAX * AMK__GP_TUNE_MAX * AMK__GP_TUNE_LANES]; /* interleaved */
    double t_L1[AMK__GP_TUNE_MAX * AMK__GP_TUNE_MAX]; /* one of them, factorised alone */
    double t_ml[AMK__GP_TUNE_LANES]; /* the likelihoods of the last ones, t_nml of them */
    int t_nml;
    int no_simd; /* 1: the scalar paths even where the CPU has AVX2 (tests compare them) */
    /* the kernel's value at each r^2 met (key: r^2's bits + 1; 0: an empty slot), whatever
     * the weights: the fits, tunes and expected improvements look it up */
    struct {
        uint64_t key;
        double k;
    } memo[AMK__GP_MEMO];
    int memo_used;
} amk__gp;
/* 1 when fitted to the m choice vectors x and log latencies lg; 0 for fewer than 2 points,
 * more than AMK__GP_MAX or a failed factorisation (the model is then unusable). ids (may be
 * NULL): the caller's names of the points, distinct, one per choice vector for good: the
 * kernel between two points the last fit also had is taken from it. retune:
 * tune the weights on these points first, whole (1 + 4 + 4 n factorisations), and drop a
 * tune under way; else the last weights (the defaults the first time) are kept. */
int amk__gp_fit(amk__gp *g, int n, const uint8_t (*x)[AMK_MAX_PARAMS], const long *ids,
                const double *lg, int m, int retune);
/* Starts a tune on the points of the last fit (a no-op without one); the weights in use do
 * not change until amk__gp_tune_step finishes it. */
void amk__gp_tune_begin(amk__gp *g);
/* Goes on with the tune under way for at most max_factor factorisations (each at most
 * AMK__GP_TUNE_MAX points). 1 when it finished: the new weights are in place and the fitted
 * model no longer matches them (fit again); else 0. */
int amk__gp_tune_step(amk__gp *g, int max_factor);
/* About the factorisations a whole tune of n params makes (fewer where the tune's points
 * all share a param: its stretches are not tried, they would change no kernel value). */
int amk__gp_tune_cost(int n);
/* The Matern 5/2 kernel at squared distance r2, remembered in g's memo (as every kernel
 * value the model computes). */
double amk__gp_kernel(amk__gp *g, double r2);
/* Expected improvement of choice vector x (AMK_MAX_PARAMS bytes, zero past n) below the
 * fitted minimum (standardised units). */
double amk__gp_ei(amk__gp *g, const uint8_t *x);
/* amk__gp_ei of count choice vectors into ei[], the same numbers, the triangular solves of
 * several candidates run side by side. */
void amk__gp_ei_many(amk__gp *g, const uint8_t (*x)[AMK_MAX_PARAMS], int count,
                     double *ei);

#endif

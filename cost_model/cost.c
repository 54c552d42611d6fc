/* Resource feasibility, the roofline floor, the predicted time and calibration.
 *
 * The floor is a lower bound: it uses the larger of datasheet and measured ceilings, counts
 * only compulsory traffic (min_bytes, cold L2) and useful flops, and applies wave
 * quantization only when the spec declares every block does equal work (cost.uniform_blocks).
 * The prediction is a ranking heuristic: modelled tile traffic, measured ceilings, occupancy
 * and wave efficiency; for specs that declare memory terms (SPEC.md), the bandwidth their
 * loads in flight can sustain (Little's law), short-access and L2-reuse losses, and the
 * latency chain of each wave. Nothing here may be labelled a measurement. */
#include "amk_cost_model.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct resources {
    amk_launch launch;
    amk_cost_terms cost;
    int64_t threads;      /* per block */
    int64_t blocks;       /* grid size */
    int64_t warps;        /* per block, rounded up */
    int64_t regs;         /* estimated per thread, capped at the per-thread maximum */
} resources;

static int gather(const amk_config *c, const amk_target *t, resources *r, amk_diag *d)
{
    const amk_limits *lim = &t->limits;
    int rc = amk_config_launch(c, lim, &r->launch, d);
    if (rc != AMK_OK)
        return rc;
    if ((rc = amk_config_cost(c, lim, &r->cost, d)) != AMK_OK)
        return rc;
    r->threads = 1;
    r->blocks = 1;
    for (int i = 0; i < 3; i++) {
        if (r->launch.block[i] < 1)
            return amk_diag_set(d, AMK_ERESTRICT, "launch.block[%d] = %lld is not positive", i,
                                (long long)r->launch.block[i]);
        if (r->launch.grid[i] < 1)
            return amk_diag_set(d, AMK_ERESTRICT, "launch.grid[%d] = %lld is not positive", i,
                                (long long)r->launch.grid[i]);
        if (__builtin_mul_overflow(r->threads, r->launch.block[i], &r->threads) ||
            __builtin_mul_overflow(r->blocks, r->launch.grid[i], &r->blocks))
            return amk_diag_set(d, AMK_ERESTRICT, "launch geometry overflows 64 bits");
    }
    r->warps = (r->threads + lim->warp - 1) / lim->warp;
    r->regs = r->cost.regs_estimate;
    if (r->regs > lim->max_regs_per_thread)
        r->regs = lim->max_regs_per_thread; /* the compiler spills beyond this */
    return AMK_OK;
}

/* Resident blocks per SM given threads, shared memory and registers; 0 = cannot launch. */
static int blocks_per_sm(const resources *r, const amk_limits *lim)
{
    int64_t by_threads = lim->max_threads_per_sm / (r->warps * lim->warp);
    int64_t n = lim->max_blocks_per_sm < by_threads ? lim->max_blocks_per_sm : by_threads;
    if (r->launch.shared_bytes > 0) {
        int64_t by_smem = lim->smem_per_sm / r->launch.shared_bytes;
        if (by_smem < n)
            n = by_smem;
    }
    if (r->regs > 0) {
        int64_t by_regs = lim->regs_per_sm / (r->regs * r->warps * lim->warp);
        if (by_regs < n)
            n = by_regs;
    }
    return n < 0 ? 0 : (int)n;
}

int amk_cost_feasible(const amk_config *c, const amk_target *t, amk_diag *d)
{
    /* A spec that "requires" an arch (wgmma: sm_90a) cannot run on other targets at all. */
    char arch[16];
    amk_diag ad;
    if (amk_spec_compile_arch(c->spec, t->vendor, t->arch, arch, sizeof arch, &ad) != AMK_OK)
        return amk_diag_set(d, AMK_ERESTRICT, "%s", ad.msg);
    resources r;
    int rc = gather(c, t, &r, d);
    if (rc != AMK_OK)
        return rc;
    const amk_limits *lim = &t->limits;
    if (r.threads > lim->max_threads)
        return amk_diag_set(d, AMK_ERESTRICT, "%lld threads per block exceed %s's limit of %lld",
                            (long long)r.threads, t->key, (long long)lim->max_threads);
    if (r.launch.shared_bytes > lim->max_smem_optin)
        return amk_diag_set(d, AMK_ERESTRICT,
                            "%lld bytes of shared memory per block exceed %s's limit of %lld",
                            (long long)r.launch.shared_bytes, t->key,
                            (long long)lim->max_smem_optin);
    if (r.regs > 0 && r.regs * r.warps * lim->warp > lim->regs_per_sm)
        return amk_diag_set(d, AMK_ERESTRICT,
                            "an estimated %lld registers x %lld threads exceed %s's %lld "
                            "registers per SM",
                            (long long)r.regs, (long long)(r.warps * lim->warp), t->key,
                            (long long)lim->regs_per_sm);
    if (r.launch.grid[0] > lim->max_grid_x || r.launch.grid[1] > lim->max_grid_yz ||
        r.launch.grid[2] > lim->max_grid_yz)
        return amk_diag_set(d, AMK_ERESTRICT, "grid %lldx%lldx%lld exceeds %s's grid limits",
                            (long long)r.launch.grid[0], (long long)r.launch.grid[1],
                            (long long)r.launch.grid[2], t->key);
    if (blocks_per_sm(&r, lim) < 1)
        return amk_diag_set(d, AMK_ERESTRICT, "no block of this config fits on one %s SM",
                            t->key);
    return AMK_OK;
}

static double larger(double a, double b) { return a > b ? a : b; }

/* The rate the floor may assume: never below any rate the hardware has shown. Where the unit
 * is absent on the target, the fastest unit it has still bounds the time from below. */
static double floor_rate(const amk_target *t, amk_unit u)
{
    double rate = larger(t->peak[u], t->measured[u]);
    if (rate > 0)
        return rate;
    for (int i = 0; i < AMK_UNIT_COUNT; i++)
        rate = larger(rate, larger(t->peak[i], t->measured[i]));
    return rate;
}

/* The rate the prediction assumes: measured when known, else a typical fraction of peak. */
static double predict_rate(const amk_target *t, amk_unit u)
{
    if (t->measured[u] > 0)
        return t->measured[u];
    return t->peak[u] > 0 ? 0.75 * t->peak[u] : 0.5 * floor_rate(t, u);
}

static int uniform_blocks(const amk_config *c, const amk_target *t)
{
    const amk_expr *u = amk_spec_cost_expr(c->spec, "uniform_blocks");
    int64_t v = 0;
    if (!u || amk_config_eval_expr(c, &t->limits, u, &v, NULL) != AMK_OK)
        return 0;
    return v != 0;
}

/* The optional memory terms of a spec's cost section (SPEC.md), each < 0 when absent. */
typedef struct memory_terms {
    double inflight_bytes;  /* per thread, global loads in flight at once */
    double latency_rounds;  /* dependent global-memory round trips on a block's critical path */
    double sync_steps;      /* reduction steps (shuffle, barrier, shared memory) on that path */
    double reread_bytes;    /* bytes read again that L2 serves only while the blocks fit */
    double block_footprint; /* bytes a resident block keeps live between those reads */
    double segment_bytes;   /* contiguous bytes of one address stream per warp access */
} memory_terms;

/* Reads the memory terms of c's spec. AMK_OK, or the error of an expression that cannot be
 * evaluated for c (named after its field); a negative value is an error too. */
static int read_memory_terms(const amk_config *c, const amk_target *t, memory_terms *m,
                             amk_diag *d)
{
    double *out[AMK_MEMORY_TERMS] = {
        [AMK_MEM_INFLIGHT_BYTES] = &m->inflight_bytes, [AMK_MEM_LATENCY_ROUNDS] = &m->latency_rounds,
        [AMK_MEM_SYNC_STEPS] = &m->sync_steps, [AMK_MEM_REREAD_BYTES] = &m->reread_bytes,
        [AMK_MEM_BLOCK_FOOTPRINT] = &m->block_footprint,
        [AMK_MEM_SEGMENT_BYTES] = &m->segment_bytes};
    for (int i = 0; i < AMK_MEMORY_TERMS; i++) {
        const char *name = amk_memory_term_name((amk_memory_term)i);
        const amk_expr *e = amk_spec_cost_expr(c->spec, name);
        *out[i] = -1;
        if (!e)
            continue;
        int64_t v = 0;
        int rc = amk_config_eval_expr(c, &t->limits, e, &v, d);
        if (rc != AMK_OK) {
            amk_diag_prefix(d, "cost.%s", name);
            return rc;
        }
        if (v < 0)
            return amk_diag_set(d, AMK_ESPEC, "cost.%s = %lld is negative", name,
                                (long long)v);
        *out[i] = (double)v;
    }
    return AMK_OK;
}

int amk_cost_estimate(const amk_config *c, const amk_target *t, amk_estimate *out, amk_diag *d)
{
    resources r;
    int rc = gather(c, t, &r, d);
    if (rc != AMK_OK)
        return rc;
    const amk_limits *lim = &t->limits;
    amk_unit unit = AMK_UNIT_NONE;
    if (amk_unit_parse(r.cost.unit, &unit) != AMK_OK)
        return amk_diag_set(d, AMK_ESPEC, "cost.unit '%s' is not a known unit", r.cost.unit);
    int bps = blocks_per_sm(&r, lim);
    if (bps < 1)
        return amk_diag_set(d, AMK_ERESTRICT, "no block of this config fits on one %s SM",
                            t->key);
    double sms = (double)lim->sm_count;
    double flops = (double)r.cost.flops, blocks = (double)r.blocks;
    double min_bytes = (double)r.cost.min_bytes;
    double traffic = larger((double)r.cost.traffic_bytes, min_bytes);

    /* Floor. */
    double compute_floor = 0;
    if (flops > 0) {
        double rate = floor_rate(t, unit);
        compute_floor = flops / rate;
        if (uniform_blocks(c, t) && blocks > 0) /* the busiest SM runs ceil(blocks/sms) blocks */
            compute_floor = larger(compute_floor, ceil(blocks / sms) * (flops / blocks) / (rate / sms));
    }
    double memory_floor = min_bytes / larger(t->bw_peak, t->bw_measured);
    out->bound_us = larger(compute_floor, memory_floor) * 1e6;

    /* Prediction. */
    double max_warps = (double)lim->max_threads_per_sm / (double)lim->warp;
    out->blocks = r.blocks;
    out->blocks_per_sm = bps;
    out->occupancy = (double)bps * (double)r.warps / max_warps;
    if (out->occupancy > 1)
        out->occupancy = 1;
    double slots = sms * bps;
    out->waves = ceil(blocks / slots);
    /* Fraction of the machine busy on average: partial last wave, or too few blocks. */
    double busy = blocks / (out->waves * slots);
    double sm_busy = blocks < sms ? blocks / sms : 1.0;
    double hide = out->occupancy < 0.25 ? 0.4 + 2.4 * out->occupancy : 1.0; /* latency hiding */
    double bw = t->bw_measured > 0 ? t->bw_measured : 0.9 * t->bw_peak;
    out->compute_us = flops > 0 ? flops / (predict_rate(t, unit) * larger(busy, sm_busy) * hide) * 1e6 : 0;
    memory_terms m;
    if ((rc = read_memory_terms(c, t, &m, d)) != AMK_OK)
        return rc;
    out->latency_us = 0;
    if (t->mem_latency_us > 0 && (m.inflight_bytes >= 0 || m.latency_rounds >= 0)) {
        double lat_s = t->mem_latency_us * 1e-6;
        double resident_blocks = blocks < slots ? blocks : slots;
        /* Little's law: the bandwidth the resident threads' loads in flight can sustain. */
        double mem_bw = bw * sm_busy;
        if (m.inflight_bytes > 0)
            mem_bw = fmin(mem_bw, resident_blocks * (double)r.threads * m.inflight_bytes / lat_s);
        /* A contiguous run shorter than a sector still moves one: part of whatever bandwidth
         * is reached is wasted. */
        if (m.segment_bytes > 0 && t->sector_bytes > 0)
            mem_bw *= m.segment_bytes / (m.segment_bytes + t->sector_bytes);
        /* A second read hits L2 in the proportion of the resident footprint that fits it. */
        if (m.reread_bytes > 0) {
            double live = resident_blocks * larger(m.block_footprint, 0);
            double hit = live > (double)lim->l2_bytes ? (double)lim->l2_bytes / live : 1.0;
            traffic += m.reread_bytes * (1.0 - hit);
        }
        /* Each wave of blocks waits out its chain of round trips and reduction steps. */
        out->latency_us = out->waves * (larger(m.latency_rounds, 0) * t->mem_latency_us +
                                        larger(m.sync_steps, 0) * t->sync_us);
        out->memory_us = larger(traffic / mem_bw * 1e6, out->latency_us);
    } else {
        out->memory_us = traffic / (bw * sm_busy * hide) * 1e6;
    }
    /* Overlap is imperfect: the smaller term shows through partly. */
    double hi = larger(out->compute_us, out->memory_us);
    double lo = out->compute_us + out->memory_us - hi;
    out->predicted_us = hi + 0.2 * lo + t->launch_overhead_us;
    if (out->predicted_us < out->bound_us)
        out->predicted_us = out->bound_us;
    return AMK_OK;
}

double amk_cost_pct_of_roofline(double bound_us, double latency_us)
{
    if (!(latency_us > 0) || !(bound_us >= 0) || !isfinite(latency_us))
        return NAN;
    return 100.0 * bound_us / latency_us;
}

static double spearman(const double *a, const double *b, size_t n)
{
    double *work = malloc(2 * n * sizeof *work);
    if (!work)
        return NAN;
    double rho = gsl_stats_spearman(a, 1, b, 1, n, work);
    free(work);
    return rho;
}

int amk_cost_calibrate(const double *compute_us, const double *memory_us,
                       const double *predicted_us, const double *measured_us, size_t n,
                       amk_calibration *out, amk_diag *d)
{
    gsl_set_error_handler_off();
    memset(out, 0, sizeof *out);
    if (n < 4)
        return amk_diag_set(d, AMK_EINVAL,
                            "calibration needs at least 4 measured trials, got %zu", n);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(compute_us[i]) || !isfinite(memory_us[i]) || !isfinite(predicted_us[i]) ||
            !(measured_us[i] > 0) || !isfinite(measured_us[i]))
            return amk_diag_set(d, AMK_EINVAL, "calibration trial %zu has a non-finite value", i);
    gsl_matrix *X = gsl_matrix_alloc(n, 3);
    gsl_vector *y = gsl_vector_alloc(n), *c = gsl_vector_alloc(3);
    gsl_matrix *cov = gsl_matrix_alloc(3, 3);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, 3);
    double *fitted = malloc(n * sizeof *fitted);
    int rc = AMK_OK;
    if (!X || !y || !c || !cov || !ws || !fitted) {
        rc = amk_diag_set(d, AMK_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        gsl_matrix_set(X, i, 0, 1.0);
        gsl_matrix_set(X, i, 1, compute_us[i]);
        gsl_matrix_set(X, i, 2, memory_us[i]);
        gsl_vector_set(y, i, measured_us[i]);
    }
    /* SVD-based: a column that is all zeros (memory-bound kernels have no compute term) is
     * rank-deficient and gets a zero coefficient rather than an error. */
    size_t rank;
    if (gsl_multifit_linear_tsvd(X, y, 1e-12, c, cov, &out->chisq, &rank, ws) != GSL_SUCCESS) {
        rc = amk_diag_set(d, AMK_EINVAL, "least-squares fit failed");
        goto out;
    }
    double mean = gsl_stats_mean(measured_us, 1, n), tss = 0;
    for (size_t i = 0; i < n; i++) {
        fitted[i] = gsl_vector_get(c, 0) + gsl_vector_get(c, 1) * compute_us[i] +
                    gsl_vector_get(c, 2) * memory_us[i];
        tss += (measured_us[i] - mean) * (measured_us[i] - mean);
    }
    out->n = n;
    for (int k = 0; k < 3; k++)
        out->c[k] = gsl_vector_get(c, (size_t)k);
    out->r2 = tss > 0 ? 1.0 - out->chisq / tss : NAN;
    out->spearman_before = spearman(predicted_us, measured_us, n);
    out->spearman_after = spearman(fitted, measured_us, n);
out:
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(c);
    gsl_matrix_free(cov);
    if (ws)
        gsl_multifit_linear_free(ws);
    free(fitted);
    return rc;
}

/* The report's plots: per (kernel, shape, device) group, best so far against trial (one line
 * per file), measured against predicted latency (log-log, Spearman in the title) and latency
 * by status, each a standalone SVG file. */
#include "results_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void sanitize(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 1 < cap; s++) {
        char c = *s;
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '_' || c == '-';
        out[n++] = keep ? c : '_';
    }
    out[n] = 0;
}

static int write_plot(const amk__plot *p, const char *dir, const char *stem, const char *what,
                      const amk_report_written *written, amk_diag *d)
{
    amk_sb sb = {0};
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%s.svg", dir, stem, what);
    amk__svg_plot(p, &sb);
    if (sb.oom) {
        amk_sb_free(&sb);
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
    }
    int rc = amk_fs_write_atomic(path, sb.p, sb.len, d);
    amk_sb_free(&sb);
    if (rc == AMK_OK && written && written->fn)
        written->fn(path, written->ud);
    return rc;
}

/* What a plot's latencies are, from the kinds drawn (a bit per amk_latency_kind): the axis
 * and the title say "replayed" or "predicted" when that is what they show. */
static const char *kind_word(unsigned kinds)
{
    unsigned m = 1u << AMK_LAT_MEASURED, r = 1u << AMK_LAT_REPLAYED, p = 1u << AMK_LAT_PREDICTED;
    kinds &= m | r | p;
    if (kinds == r)
        return "replayed";
    if (kinds == p)
        return "predicted";
    if (kinds == (m | r))
        return "measured or replayed";
    if (kinds & p)
        return kinds == (m | p) ? "measured or predicted" : "replayed or predicted";
    return "measured";
}

/* Title "KERNEL SHAPE [DEVICE]: what". */
static void title(char *out, size_t cap, const char *k, const char *s, const char *dev,
                  const char *what)
{
    snprintf(out, cap, "%s %s%s%s: %s", k, s, dev[0] ? " " : "", dev, what);
}

static int group_plots(const amk_report *rep, size_t g, const char *dir,
                       const amk_report_written *written,
                       amk_diag *d)
{
    const char *k, *s, *dev;
    amk_report_group(rep, g, &k, &s, &dev);
    const amk__stat_trace *t = amk__report_state(rep, g, &amk__stat_trace_type);
    const amk__stat_model *m = amk__report_state(rep, g, &amk__stat_model_type);
    const amk__stat_counts *c = amk__report_state(rep, g, &amk__stat_counts_type);
    size_t nf = amk__report_nfiles(rep), n = t->n;
    char stem[400], a[64], b[160], e[64], ttl[600];
    sanitize(a, sizeof a, k);
    sanitize(b, sizeof b, s);
    sanitize(e, sizeof e, dev);
    snprintf(stem, sizeof stem, "%s-%s%s%s", a, b, dev[0] ? "-" : "", e);

    int rc = AMK_ENOMEM;
    double *x = malloc((n + nf + 1) * 2 * sizeof *x);
    amk__plot_series *se = calloc(nf ? nf : 1, sizeof *se);
    char(*labels)[80] = calloc(nf ? nf : 1, sizeof *labels);
    if (!x || !se || !labels) {
        amk_diag_set(d, AMK_ENOMEM, "report plots: out of memory");
        goto done;
    }

    /* (1) best so far against the row number of the group within each file: measured (or
     * replayed) latencies; predicted ones only for a group that has nothing else. */
    int any_measured = 0;
    for (size_t i = 0; i < n; i++)
        any_measured |= t->pts[i].measured;
    double *y = x + n + nf + 1;
    size_t used = 0, ns = 0;
    unsigned kinds = 0;
    for (size_t f = 0; f < nf; f++) {
        size_t k0 = used, rows = 0;
        double best = NAN;
        for (size_t i = 0; i < n; i++) {
            if (t->pts[i].file != f)
                continue;
            rows++;
            int use = any_measured ? t->pts[i].measured
                                   : t->pts[i].status == AMK_STATUS_OK &&
                                         t->pts[i].kind == AMK_LAT_PREDICTED &&
                                         isfinite(t->pts[i].latency_us);
            if (use && (!isfinite(best) || t->pts[i].latency_us < best)) {
                kinds |= 1u << t->pts[i].kind;
                best = t->pts[i].latency_us;
                x[used] = (double)rows;
                y[used++] = best;
            }
        }
        if (!rows)
            continue;
        if (used > k0 && x[used - 1] < (double)rows) { /* the line runs to the last trial */
            x[used] = (double)rows;
            y[used++] = best;
        }
        snprintf(labels[ns], sizeof labels[ns], "%s", amk__report_file(rep, f));
        se[ns] = (amk__plot_series){labels[ns], x + k0, y + k0, used - k0, 1};
        ns++;
    }
    char what[160], ylab[80];
    snprintf(what, sizeof what, "best %s latency so far", kind_word(kinds));
    snprintf(ylab, sizeof ylab, "best %s latency (us)", kind_word(kinds));
    title(ttl, sizeof ttl, k, s, dev, what);
    amk__plot p1 = {ttl, "trial (rows of this kernel/shape/device in the file)", ylab, 0, 1,
                    NULL, 0, se, ns};
    if ((rc = write_plot(&p1, dir, stem, "progress", written, d)) != AMK_OK)
        goto done;

    /* (2) measured against predicted, one marker series per file */
    used = ns = 0;
    kinds = 0;
    for (size_t f = 0; f < nf; f++) {
        size_t k0 = used;
        for (size_t i = 0; i < m->n; i++)
            if (m->pts[i].file == f) {
                kinds |= 1u << m->pts[i].kind;
                x[used] = m->pts[i].predicted_us;
                y[used++] = m->pts[i].measured_us;
            }
        if (used == k0)
            continue;
        snprintf(labels[ns], sizeof labels[ns], "%s", amk__report_file(rep, f));
        se[ns] = (amk__plot_series){labels[ns], x + k0, y + k0, used - k0, 0};
        ns++;
    }
    double rho = amk__model_spearman(m);
    if (isfinite(rho))
        snprintf(what, sizeof what, "%s vs predicted, Spearman rho = %.3f (n = %zu)",
                 kind_word(kinds), rho, m->n);
    else
        snprintf(what, sizeof what, "%s vs predicted, Spearman rho = n/a (n = %zu)",
                 kind_word(kinds), m->n);
    snprintf(ylab, sizeof ylab, "%s latency (us)", kind_word(kinds));
    title(ttl, sizeof ttl, k, s, dev, what);
    amk__plot p2 = {ttl, "predicted latency (us)", ylab, 1, 1, NULL, 0, se, ns};
    if ((rc = write_plot(&p2, dir, stem, "model", written, d)) != AMK_OK)
        goto done;

    /* (3) latency by status: a strip per status that occurred, labelled with its count */
    const char *cats[AMK_STATUS_COUNT];
    char catbuf[AMK_STATUS_COUNT][48];
    int catof[AMK_STATUS_COUNT];
    size_t nc = 0;
    for (int st = 0; st < AMK_STATUS_COUNT; st++) {
        catof[st] = -1;
        if (!c->status[st])
            continue;
        snprintf(catbuf[nc], sizeof catbuf[nc], "%s (%zu)", amk_status_name((amk_status)st),
                 c->status[st]);
        cats[nc] = catbuf[nc];
        catof[st] = (int)nc++;
    }
    used = ns = 0;
    kinds = 0;
    int any_real = 0; /* measured or replayed latencies; else predicted ones are drawn */
    for (size_t i = 0; i < n; i++)
        any_real |= amk_latency_is_evidence((amk_latency_kind)t->pts[i].kind) &&
                    isfinite(t->pts[i].latency_us) && t->pts[i].latency_us > 0;
    for (size_t f = 0; f < nf; f++) {
        size_t k0 = used, j = 0;
        for (size_t i = 0; i < n; i++) {
            const amk__trace_pt *q = &t->pts[i];
            if (q->file != f || q->status >= AMK_STATUS_COUNT || catof[q->status] < 0 ||
                q->kind == AMK_LAT_NONE || (any_real && q->kind == AMK_LAT_PREDICTED) ||
                !isfinite(q->latency_us) || q->latency_us <= 0)
                continue;
            kinds |= 1u << q->kind;
            double jit = fmod((double)j++ * 0.618034, 1.0) - 0.5; /* deterministic jitter */
            x[used] = catof[q->status] + 0.5 * jit;
            y[used++] = q->latency_us;
        }
        if (used == k0)
            continue;
        snprintf(labels[ns], sizeof labels[ns], "%s", amk__report_file(rep, f));
        se[ns] = (amk__plot_series){labels[ns], x + k0, y + k0, used - k0, 0};
        ns++;
    }
    snprintf(what, sizeof what, "%s latency by status (count in brackets)", kind_word(kinds));
    snprintf(ylab, sizeof ylab, "%s latency (us)", kind_word(kinds));
    title(ttl, sizeof ttl, k, s, dev, what);
    amk__plot p3 = {ttl, "status", ylab, 0, 1, cats, nc, se, ns};
    rc = write_plot(&p3, dir, stem, "status", written, d);
done:
    free(x);
    free(se);
    free(labels);
    return rc;
}

int amk_report_svg(const amk_report *rep, const char *dir, const amk_report_written *written,
                   amk_diag *d)
{
    if (!rep || !dir)
        return amk_diag_set(d, AMK_EINVAL, "amk_report_svg: NULL argument");
    int rc = amk_fs_mkdir_p(dir, d);
    if (rc != AMK_OK)
        return rc;
    for (size_t g = 0; g < amk_report_ngroups(rep); g++)
        if ((rc = group_plots(rep, g, dir, written, d)) != AMK_OK)
            return rc;
    return AMK_OK;
}

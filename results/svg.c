/* Standalone SVG plots without a library: linear, log or categorical axes with ticks and
 * labels, step lines and markers, a legend. Used by the report's plots (report_svg.c). */
#include "results_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { W = 900, H = 500, PX0 = 80, PX1 = 640, PY0 = 50, PY1 = 420, LEGX = 660 };

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

typedef struct axis {
    int log;
    double lo, hi; /* in axis space (log10 when log) */
    double ticks[64];
    int nticks;
    int series; /* how ticks step: TICKS_LINEAR (by step), TICKS_125 or TICKS_DECADES (log) */
    double step;
} axis;

enum { TICKS_LINEAR, TICKS_125, TICKS_DECADES };

static void esc(amk_sb *sb, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': amk_sb_printf(sb, "&lt;"); break;
        case '>': amk_sb_printf(sb, "&gt;"); break;
        case '&': amk_sb_printf(sb, "&amp;"); break;
        case '"': amk_sb_printf(sb, "&quot;"); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                amk_sb_putn(sb, s, 1);
        }
    }
}

static double nice_step(double range, int target)
{
    double raw = range / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

/* Linear ticks of [lo, hi] (values) into a->ticks as values; returns the count. */
static int linear_ticks(double lo, double hi, double *out, int cap, double *step)
{
    double st = nice_step(hi - lo, 6);
    *step = st;
    int n = 0;
    for (double v = ceil(lo / st - 1e-9) * st; v <= hi + st * 1e-9 && n < cap; v += st)
        out[n++] = fabs(v) < st * 1e-9 ? 0 : v;
    return n;
}

static int ok_value(const axis *a, double v)
{
    return isfinite(v) && (!a->log || v > 0);
}

/* The tick next to value v (a tick) going down (dir -1) or up (+1) in a's series; NAN when
 * there is none (a log axis cannot go to 0). */
static double next_tick(const axis *a, double v, int dir)
{
    if (a->series == TICKS_LINEAR) {
        double w = v + dir * a->step;
        return a->log && w <= 0 ? NAN : w;
    }
    if (a->series == TICKS_DECADES)
        return dir < 0 ? v / 10 : v * 10;
    double k = floor(log10(v) + 1e-9), p = pow(10, k), m = round(v / p);
    if (dir < 0)
        return m >= 5 ? 2 * p : m >= 2 ? p : 0.5 * p;
    return m >= 5 ? 10 * p : m >= 2 ? 5 * p : 2 * p;
}

/* Widens the axis to the ticks just outside the data, so the lowest and the highest values
 * drawn always lie between two labelled ticks (an unlabelled bottom reads as missing). */
static void ends_on_ticks(axis *a)
{
    if (a->nticks < 1)
        return;
    double first = a->log ? log10(a->ticks[0]) : a->ticks[0];
    if (first > a->lo + 1e-9 * (a->hi - a->lo)) {
        double v = next_tick(a, a->ticks[0], -1);
        if (isfinite(v) && (!a->log || v > 0)) {
            memmove(a->ticks + 1, a->ticks, (size_t)a->nticks * sizeof a->ticks[0]);
            a->ticks[0] = v;
            a->nticks++;
            a->lo = a->log ? log10(v) : v;
        }
    }
    double last = a->log ? log10(a->ticks[a->nticks - 1]) : a->ticks[a->nticks - 1];
    if (last < a->hi - 1e-9 * (a->hi - a->lo)) {
        double v = next_tick(a, a->ticks[a->nticks - 1], 1);
        if (isfinite(v)) {
            a->ticks[a->nticks++] = v;
            a->hi = a->log ? log10(v) : v;
        }
    }
}

/* Fits the axis to the values of every series (x or y); pads 5%. */
static void axis_fit(axis *a, const amk__plot *p, int y)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t s = 0; s < p->nseries; s++)
        for (size_t i = 0; i < p->series[s].n; i++) {
            double v = y ? p->series[s].y[i] : p->series[s].x[i];
            if (ok_value(a, v)) {
                double t = a->log ? log10(v) : v;
                lo = t < lo ? t : lo;
                hi = t > hi ? t : hi;
            }
        }
    if (!isfinite(lo)) {
        lo = 0;
        hi = 1;
    }
    if (hi - lo < 1e-12) {
        double w = a->log ? 0.1 : (fabs(lo) > 0 ? fabs(lo) * 0.1 : 1);
        lo -= w;
        hi += w;
    }
    double pad = (hi - lo) * 0.05;
    a->lo = lo - pad;
    a->hi = hi + pad;
    if (!a->log && lo >= 0 && a->lo < 0)
        a->lo = 0;
    a->nticks = 0;
    a->series = TICKS_LINEAR;
    if (a->log) {
        for (int pass = 0; pass < 2 && a->nticks < 3; pass++) {
            static const double m1[] = {1, 2, 5}, m2[] = {1};
            const double *m = pass == 0 && a->hi - a->lo < 4 ? m1 : m2;
            int nm = m == m1 ? 3 : 1;
            a->series = m == m1 ? TICKS_125 : TICKS_DECADES;
            a->nticks = 0;
            for (int k = (int)floor(a->lo); k <= (int)ceil(a->hi) && a->nticks < 60; k++)
                for (int j = 0; j < nm; j++) {
                    double v = log10(m[j]) + k;
                    if (v >= a->lo && v <= a->hi)
                        a->ticks[a->nticks++] = pow(10, v);
                }
            if (pass == 0 && a->nticks >= 3)
                break;
        }
        if (a->nticks < 3) { /* a narrow range: linear ticks placed on the log axis */
            a->series = TICKS_LINEAR;
            a->nticks = linear_ticks(pow(10, a->lo), pow(10, a->hi), a->ticks, 60, &a->step);
        }
    } else {
        a->nticks = linear_ticks(a->lo, a->hi, a->ticks, 60, &a->step);
    }
    ends_on_ticks(a);
}

static double map(const axis *a, double v, double p0, double p1)
{
    double t = a->log ? log10(v) : v;
    return p0 + (t - a->lo) / (a->hi - a->lo) * (p1 - p0);
}

/* Width of text at 13 px in a sans-serif font, from above: 8 px per character (DejaVu
 * Sans, Chromium's default here, averages 7.9 on amk's titles). */
#define TITLE_CHAR_PX 8.0
#define TITLE_MAX_PX (W - 20)

static void title_line(amk_sb *sb, const char *s, size_t n, int y)
{
    char buf[1024];
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    amk_sb_printf(sb, "<text class=\"title\" x=\"10\" y=\"%d\" text-anchor=\"start\" "
                      "font-size=\"13\"", y);
    /* Still too wide: the browser squeezes it into the canvas rather than clip it. */
    if ((double)n * TITLE_CHAR_PX > TITLE_MAX_PX)
        amk_sb_printf(sb, " textLength=\"%d\" lengthAdjust=\"spacingAndGlyphs\"", TITLE_MAX_PX);
    amk_sb_printf(sb, ">");
    esc(sb, buf);
    amk_sb_printf(sb, "</text>\n");
}

/* Left-anchored, on one line when it fits the canvas, else on two: "KERNEL SHAPE DEVICE:"
 * and what the plot shows. Never wider than the canvas. */
static void title_lines(amk_sb *sb, const char *t)
{
    size_t n = strlen(t);
    const char *cut = NULL;
    for (const char *q = strstr(t, ": "); q; q = strstr(q + 1, ": "))
        cut = q;
    if ((double)n * TITLE_CHAR_PX <= TITLE_MAX_PX || !cut) {
        title_line(sb, t, n, 24);
        return;
    }
    title_line(sb, t, (size_t)(cut - t) + 1, 18);
    title_line(sb, cut + 2, strlen(cut + 2), 36);
}

void amk__svg_plot(const amk__plot *p, amk_sb *sb)
{
    axis ax = {0}, ay = {0};
    ax.log = p->xlog && !p->xcats;
    ay.log = p->ylog;
    if (p->xcats) {
        ax.lo = -0.5;
        ax.hi = (double)p->ncats - 0.5;
        if (p->ncats == 0)
            ax.hi = 0.5;
    } else {
        axis_fit(&ax, p, 0);
    }
    axis_fit(&ay, p, 1);

    amk_sb_printf(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                      "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
                  W, H, W, H);
    amk_sb_printf(sb, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W,
                  H);
    title_lines(sb, p->title);

    /* grid, ticks and tick labels */
    amk_sb_printf(sb, "<g class=\"axes\" stroke=\"#ddd\">\n");
    for (int i = 0; i < ay.nticks; i++) {
        double y = map(&ay, ay.ticks[i], PY1, PY0);
        amk_sb_printf(sb, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", PX0, y, PX1,
                      y);
    }
    size_t nx = p->xcats ? p->ncats : (size_t)ax.nticks;
    for (size_t i = 0; i < nx; i++) {
        double x = p->xcats ? map(&ax, (double)i, PX0, PX1) : map(&ax, ax.ticks[i], PX0, PX1);
        amk_sb_printf(sb, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x, PY0, x,
                      PY1);
    }
    amk_sb_printf(sb, "</g>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                      "stroke=\"#333\"/>\n",
                  PX0, PY0, PX1 - PX0, PY1 - PY0);
    amk_sb_printf(sb, "<g class=\"ticks\" fill=\"#333\">\n");
    for (int i = 0; i < ay.nticks; i++) {
        double y = map(&ay, ay.ticks[i], PY1, PY0);
        amk_sb_printf(sb, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333\"/>"
                          "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                      PX0 - 5, y, PX0, y, PX0 - 8, y + 4, ay.ticks[i]);
    }
    for (size_t i = 0; i < nx; i++) {
        double x = p->xcats ? map(&ax, (double)i, PX0, PX1) : map(&ax, ax.ticks[i], PX0, PX1);
        amk_sb_printf(sb, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>"
                          "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
                      x, PY1, x, PY1 + 5, x, PY1 + 20);
        if (p->xcats)
            esc(sb, p->xcats[i]);
        else
            amk_sb_printf(sb, "%g", ax.ticks[i]);
        amk_sb_printf(sb, "</text>\n");
    }
    amk_sb_printf(sb, "</g>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (PX0 + PX1) / 2,
                  PY1 + 44);
    esc(sb, p->xlabel);
    amk_sb_printf(sb, "%s</text>\n", ax.log ? " (log scale)" : "");
    amk_sb_printf(sb, "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" "
                      "transform=\"rotate(-90 18 %d)\">",
                  (PY0 + PY1) / 2, (PY0 + PY1) / 2);
    esc(sb, p->ylabel);
    amk_sb_printf(sb, "%s</text>\n", ay.log ? " (log scale)" : "");

    /* series */
    size_t shown = 0;
    for (size_t s = 0; s < p->nseries; s++) {
        const amk__plot_series *se = &p->series[s];
        const char *col = palette[s % (sizeof palette / sizeof *palette)];
        amk_sb_printf(sb, "<g class=\"series\" data-label=\"");
        esc(sb, se->label);
        amk_sb_printf(sb, "\">\n");
        if (se->step) {
            int first = 1;
            for (size_t i = 0; i < se->n; i++) {
                if (!ok_value(&ax, se->x[i]) || !ok_value(&ay, se->y[i]))
                    continue;
                double x = map(&ax, se->x[i], PX0, PX1), y = map(&ay, se->y[i], PY1, PY0);
                if (first)
                    amk_sb_printf(sb, "<path class=\"line\" fill=\"none\" stroke=\"%s\" "
                                      "stroke-width=\"2\" d=\"M%.1f %.1f",
                                  col, x, y);
                else
                    amk_sb_printf(sb, " H%.1f V%.1f", x, y);
                first = 0;
                shown++;
            }
            if (!first)
                amk_sb_printf(sb, "\"/>\n");
        } else {
            for (size_t i = 0; i < se->n; i++) {
                if (!ok_value(&ax, se->x[i]) || !ok_value(&ay, se->y[i]))
                    continue;
                amk_sb_printf(sb, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
                                  "fill=\"%s\" fill-opacity=\"0.7\"/>\n",
                              map(&ax, se->x[i], PX0, PX1), map(&ay, se->y[i], PY1, PY0), col);
                shown++;
            }
        }
        amk_sb_printf(sb, "</g>\n");
    }
    if (!shown)
        amk_sb_printf(sb, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#888\">"
                          "no data</text>\n",
                      (PX0 + PX1) / 2, (PY0 + PY1) / 2);

    /* legend */
    amk_sb_printf(sb, "<g class=\"legend\">\n");
    for (size_t s = 0; s < p->nseries; s++) {
        const char *col = palette[s % (sizeof palette / sizeof *palette)];
        int y = PY0 + 10 + 20 * (int)s;
        if (p->series[s].step)
            amk_sb_printf(sb, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                              "stroke-width=\"2\"/>",
                          LEGX, y, LEGX + 20, y, col);
        else
            amk_sb_printf(sb, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>",
                          LEGX + 5, y - 5, col);
        /* The legend has W - LEGX - 30 px (about 28 characters at 12 px): keep the tail of a
         * long path, and let the browser squeeze what is still too wide, never clip it. */
        const int room = W - (LEGX + 26) - 4;
        const char *l = p->series[s].label ? p->series[s].label : "";
        size_t shown_len = strlen(l) > 28 ? 28 : strlen(l);
        amk_sb_printf(sb, "<text x=\"%d\" y=\"%d\"", LEGX + 26, y + 4);
        if ((double)shown_len * 7.5 > room)
            amk_sb_printf(sb, " textLength=\"%d\" lengthAdjust=\"spacingAndGlyphs\"", room);
        amk_sb_printf(sb, ">");
        if (strlen(l) > 28) { /* keep the tail of a long path */
            amk_sb_printf(sb, "...");
            l += strlen(l) - 25;
            while (((unsigned char)*l & 0xC0) == 0x80) /* not inside a UTF-8 sequence */
                l++;
        }
        esc(sb, l);
        amk_sb_printf(sb, "</text>\n");
    }
    amk_sb_printf(sb, "</g>\n</svg>\n");
}

/* The one definition of "best" (HARNESS.md): the incumbent the keep rule yields when a group's
 * rows (one kernel, shape and device) are replayed in trial order. Writers record the keep
 * rule's decision in the kept column (a loop's decision may rest on an interleaved re-measure
 * the row cannot show), so a recorded decision is honoured: the last ok row with kept=1 wins.
 * A group with ok rows but no kept=1 row (recorded sweeps, imports, bench files) replays the
 * keep rule on what the rows show: a row replaces the incumbent only when faster by more than
 * max(min_gain, either spread); otherwise the earlier trial stays. */
#include "amk_search.h"

#include <math.h>

static double spread_of(const amk_row *r)
{
    return isfinite(r->spread) && r->spread > 0 ? r->spread : 0;
}

static int usable(const amk_row *r)
{
    return r->status == AMK_STATUS_OK && isfinite(r->latency_us) && r->latency_us > 0;
}

/* Earlier in trial order; equal trials keep file order (the lower index). */
static int before(const amk_row *rows, long a, long b)
{
    return rows[a].trial != rows[b].trial ? rows[a].trial < rows[b].trial : a < b;
}

/* The usable row right after `after` in trial order (-1: from the start), or -1. */
static long next_usable(const amk_row *rows, size_t n, long after)
{
    long next = -1;
    for (size_t i = 0; i < n; i++)
        if (usable(&rows[i]) && (after < 0 || before(rows, after, (long)i)) &&
            (next < 0 || before(rows, (long)i, next)))
            next = (long)i;
    return next;
}

/* Replaying ok rows without recorded decisions: the keep rule on latency and spread alone. */
static long replay_keep(const amk_row *rows, size_t n, double min_gain)
{
    double floor_gain = isfinite(min_gain) && min_gain > 0 ? min_gain : 0;
    long inc = next_usable(rows, n, -1);
    for (long r = inc; r >= 0 && (r = next_usable(rows, n, r)) >= 0;) {
        double margin = fmax(floor_gain, fmax(spread_of(&rows[inc]), spread_of(&rows[r])));
        if ((rows[inc].latency_us - rows[r].latency_us) / rows[inc].latency_us > margin)
            inc = r; /* clearly faster; otherwise the earlier trial stays */
    }
    return inc;
}

long amk_history_best_row(const amk_row *rows, size_t n, double min_gain)
{
    if (!rows)
        return -1;
    long kept = -1;
    for (size_t i = 0; i < n; i++)
        if (rows[i].kept == 1 && rows[i].status == AMK_STATUS_OK &&
            (kept < 0 || before(rows, kept, (long)i)))
            kept = (long)i;
    return kept >= 0 ? kept : replay_keep(rows, n, min_gain);
}

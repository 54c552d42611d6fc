/* The one definition of "best" (HARNESS.md "Best"): the incumbent the keep rule yields when a
 * group's rows (one kernel, shape and device) are replayed in the order they were recorded.
 *
 * - Evidence first: a measured latency (or one replayed from a recorded measurement)
 *   outranks a prediction; each kind is decided on its own rows and the better kind
 *   present answers.
 * - Writers record the keep rule's decision in the kept column (the loop's may rest on an
 *   interleaved re-measure that the row cannot show), so a recorded decision is honoured:
 *   the last ok row with kept=1 is the incumbent.
 * - Rows without a recorded kept=1 (recorded sweeps, imports, bench files) replay the keep
 *   rule on what the rows show: a later row replaces the incumbent only when faster by more
 *   than max(min_gain, either spread); otherwise the earlier trial stays. Rows alone carry no
 *   spec, so the "simpler config" tie-break of a live loop does not apply.
 * - Several files: each file's incumbent, then the same replay across files in the order
 *   they were given (a higher kind of evidence always wins). */
#include "amk_search.h"

#include <math.h>
#include <stddef.h>

enum { TIER_MEASURED, TIER_PREDICTED, NTIERS }; /* measured includes replayed */

typedef struct tier {
    int has_kept, has_replay;
    amk_row kept, replay;
} tier;

typedef struct history_state {
    int started;
    size_t file;            /* the file whose rows `cur` holds */
    tier cur[NTIERS];
    int has_best;           /* the incumbent over the files before `file` */
    size_t best_file;
    amk_row best;
} history_state;

static int tier_of(const amk_row *r)
{
    if (r->status != AMK_STATUS_OK || !isfinite(r->latency_us) || r->latency_us <= 0)
        return -1;
    switch (r->latency_kind) {
    case AMK_LAT_MEASURED:
    case AMK_LAT_REPLAYED: return TIER_MEASURED;
    case AMK_LAT_PREDICTED: return TIER_PREDICTED;
    default: return -1;
    }
}

static double spread_of(const amk_row *r)
{
    return isfinite(r->spread) && r->spread > 0 ? r->spread : 0;
}

/* The keep rule on two rows: does cand replace inc? A better kind of evidence always does;
 * within one kind only a gain above max(AMK_HISTORY_MIN_GAIN, either spread). */
static int replaces(const amk_row *inc, const amk_row *cand)
{
    int ti = tier_of(inc), tc = tier_of(cand);
    if (ti != tc)
        return tc < ti;
    double margin = fmax(AMK_HISTORY_MIN_GAIN, fmax(spread_of(inc), spread_of(cand)));
    return (inc->latency_us - cand->latency_us) / inc->latency_us > margin;
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
    if (fb && (!h->has_best || replaces(&h->best, fb))) {
        h->best = *fb;
        h->best_file = h->file;
        h->has_best = 1;
    }
    for (int t = 0; t < NTIERS; t++)
        h->cur[t].has_kept = h->cur[t].has_replay = 0;
}

static void history_add(void *state, const amk_row *r, size_t file)
{
    history_state *h = state;
    if (h->started && file != h->file)
        close_file(h);
    h->started = 1;
    h->file = file;
    int t = tier_of(r);
    if (t < 0)
        return;
    tier *tr = &h->cur[t];
    if (r->kept == 1) {
        tr->kept = *r;
        tr->has_kept = 1;
    }
    if (!tr->has_replay || replaces(&tr->replay, r)) {
        tr->replay = *r;
        tr->has_replay = 1;
    }
}

static const amk_row *history_best(const void *state, size_t *file)
{
    const history_state *h = state;
    const amk_row *fb = file_best(h);
    if (fb && (!h->has_best || replaces(&h->best, fb))) {
        if (file)
            *file = h->file;
        return fb;
    }
    if (file && h->has_best)
        *file = h->best_file;
    return h->has_best ? &h->best : NULL;
}

const amk_best_rule amk_history_rule = {1, sizeof(history_state), history_add, history_best};

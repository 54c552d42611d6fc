/* The trial log of `amk evaluate --results`: one user trial appended to a results file,
 * numbered under the append's lock and marked kept when it beats the file's best of the
 * same kernel/shape/device by the history rule's margin (HARNESS.md "Best"). The file is
 * opened and read before the evaluation, so a foreign or malformed file is refused before
 * anyone pays for a GPU run. */
#include "amk_search.h"

#include <stdlib.h>
#include <string.h>

struct amk_trial_log {
    char *path;
    amk_tsv *tsv;
    amk_history *history;
    amk_objective objective;
};

/* Every error names the file once. */
static int file_error(int e, const char *path, amk_diag *d)
{
    if (!d->msg[0])
        amk_diag_set(d, e, "%s: %s", path, amk_strerror(e));
    else if (!strstr(d->msg, path))
        amk_diag_prefix(d, "%s", path);
    return e;
}

int amk_trial_log_open(const char *path, const amk_config *cfg, const char *device,
                       amk_objective objective, amk_trial_log **out, amk_diag *d)
{
    *out = NULL;
    amk_trial_log *lg = calloc(1, sizeof *lg);
    if (!lg || !(lg->path = strdup(path))) {
        free(lg);
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
    }
    lg->objective = objective;
    amk_history_opts ho = {.device = device, .spec = cfg->spec, .at = &cfg->shape,
                           .min_gain = AMK_HISTORY_MIN_GAIN, .objective = objective};
    int e = amk_tsv_open(path, &lg->tsv, d);
    if (e == AMK_OK)
        e = amk_tsv_check_objective(lg->tsv, objective, d);
    if (e == AMK_OK)
        e = amk_history_load(path, &ho, &lg->history, d);
    if (e != AMK_OK) {
        amk_trial_log_close(lg);
        return file_error(e, path, d);
    }
    *out = lg;
    return AMK_OK;
}

int amk_trial_log_append(amk_trial_log *lg, const amk_config *cfg, const char *device,
                         const amk_verdict *v, amk_row *row, amk_diag *d)
{
    char shape[256];
    amk_shape_format(cfg->spec, &cfg->shape, shape, sizeof shape);
    int e = amk_verdict_to_row(v, cfg, 0, shape, "user", device, 0, row, d);
    if (e != AMK_OK)
        return e;
    row->kept = amk_history_decide(lg->history, cfg, v);
    row->objective = lg->objective;
    e = amk_tsv_append_next(lg->tsv, row, 1, d); /* numbered under the append's lock */
    if (e != AMK_OK)
        return file_error(e, lg->path, d);
    const amk_config *cp = cfg;
    amk_history_record(lg->history, row, &cp, 1);
    return AMK_OK;
}

void amk_trial_log_close(amk_trial_log *lg)
{
    if (!lg)
        return;
    amk_history_free(lg->history);
    amk_tsv_close(lg->tsv);
    free(lg->path);
    free(lg);
}

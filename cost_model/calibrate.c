/* Calibration of the cost model against measured trials of results files: rebuild each
 * measured row's config, estimate it, and fit measured ~ c0 + c1*compute + c2*memory. */
#include "amk_cost_model.h"
#include "amk_record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct fit_data {
    const amk_registry *reg;
    const char *kernel;
    const amk_target *t;
    double *compute, *memory, *predicted, *measured;
    size_t n, cap, skipped;
    int oom;
} fit_data;

static int grow(fit_data *f)
{
    size_t cap = f->cap ? f->cap * 2 : 256;
    double **arrs[4] = {&f->compute, &f->memory, &f->predicted, &f->measured};
    for (int k = 0; k < 4; k++) {
        double *p = realloc(*arrs[k], cap * sizeof **arrs[k]);
        if (!p)
            return -1;
        *arrs[k] = p;
    }
    f->cap = cap;
    return 0;
}

static int on_row(const amk_row *r, void *ud)
{
    fit_data *f = ud;
    if (r->status != AMK_STATUS_OK || r->latency_kind != AMK_LAT_MEASURED ||
        !(r->latency_us > 0))
        return 0;
    if (f->kernel && strcmp(f->kernel, r->kernel) != 0)
        return 0;
    const amk_spec *s = amk_registry_find(f->reg, r->kernel);
    amk_shape sh;
    amk_config c;
    amk_estimate e;
    if (!s || amk_shape_parse(s, r->shape, &sh, NULL) != AMK_OK ||
        amk_config_from_params_json(s, &sh, r->params, &c, NULL) != AMK_OK ||
        amk_cost_estimate(&c, f->t, &e, NULL) != AMK_OK) {
        f->skipped++;
        return 0;
    }
    if (f->n == f->cap && grow(f) < 0) {
        f->oom = 1;
        return 1;
    }
    f->compute[f->n] = e.compute_us;
    f->memory[f->n] = e.memory_us;
    f->predicted[f->n] = e.predicted_us;
    f->measured[f->n] = r->latency_us;
    f->n++;
    return 0;
}

int amk_calibrate_fit(const amk_registry *reg, const char *const *paths, size_t n_paths,
                      const char *kernel, const amk_target *t, amk_calibration *out,
                      size_t *skipped, amk_diag *d)
{
    fit_data f = {.reg = reg, .kernel = kernel, .t = t};
    int rc = AMK_OK;
    for (size_t i = 0; i < n_paths && rc == AMK_OK; i++)
        rc = amk_tsv_read(paths[i], on_row, &f, NULL, d);
    if (rc == AMK_OK && f.oom)
        rc = amk_diag_set(d, AMK_ENOMEM, "out of memory");
    if (rc == AMK_OK && f.n < 4)
        rc = amk_diag_set(d, AMK_EINVAL,
                          "calibration needs at least 4 measured ok rows%s%s, found %zu",
                          kernel ? " of " : "", kernel ? kernel : "", f.n);
    if (rc == AMK_OK)
        rc = amk_cost_calibrate(f.compute, f.memory, f.predicted, f.measured, f.n, out, d);
    if (skipped)
        *skipped = f.skipped;
    free(f.compute);
    free(f.memory);
    free(f.predicted);
    free(f.measured);
    return rc;
}

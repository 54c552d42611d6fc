/* What a recording holds, asked before anything replays it, and which file a `sim:FILE`
 * backend names (the sim backend, the pipeline and the CLI ask here). Before a search on
 * sim:FILE: does the recording hold the kernel/shape asked for? A search elsewhere could only
 * end with no config and a results file holding a header and nothing else, so the question
 * is answered first, naming the shapes the recording covers. And for `auto`: is there a
 * recorded sweep of the kernel/shape in the data directory? The sim backend and this file
 * are the evaluator's only readers of the record (common's amk_tsv_read); the pipeline and
 * the public header know nothing of it. */
#include "evaluator_int.h"

#include "amk_record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMED_SHAPES 8

typedef struct sweep_shapes {
    const char *kernel, *want;
    int has_want;
    size_t n;
    char seen[NAMED_SHAPES][160];
} sweep_shapes;

static int sweep_shape_row(const amk_row *r, void *ud)
{
    sweep_shapes *s = ud;
    if (strcmp(r->kernel, s->kernel) != 0)
        return 0;
    if (!strcmp(r->shape, s->want)) {
        s->has_want = 1;
        return 1; /* enough: the shape is covered */
    }
    size_t k = 0, m = s->n < NAMED_SHAPES ? s->n : NAMED_SHAPES;
    while (k < m && strcmp(s->seen[k], r->shape) != 0)
        k++;
    if (k < m)
        return 0;
    if (s->n < NAMED_SHAPES)
        snprintf(s->seen[s->n], sizeof s->seen[0], "%s", r->shape);
    s->n++;
    return 0;
}

const char *amk_backend_sim_file(const char *backend)
{
    return backend && strncmp(backend, "sim:", 4) == 0 ? backend + 4 : NULL;
}

int amk_sim_check_shape(const char *backend, const char *kernel, const char *shape,
                        amk_diag *d)
{
    const char *file = amk_backend_sim_file(backend);
    if (!file)
        return AMK_OK;
    sweep_shapes s;
    memset(&s, 0, sizeof s);
    s.kernel = kernel;
    s.want = shape;
    amk_diag quiet;
    amk_diag_clear(&quiet);
    if (amk_tsv_read(file, sweep_shape_row, &s, NULL, &quiet) != AMK_OK || s.has_want)
        return AMK_OK; /* a read error is the backend's to report, when it opens the file */
    if (!s.n)
        return amk_diag_set(d, AMK_ENOTCOVERED, "backend %s: the recording has no trial of %s "
                            "at any shape (%s was asked); nothing was run or written", backend,
                            kernel, shape);
    amk_sb list = {0};
    for (size_t k = 0; k < s.n && k < NAMED_SHAPES; k++)
        amk_sb_printf(&list, "%s%s", k ? "; " : "", s.seen[k]);
    if (s.n > NAMED_SHAPES)
        amk_sb_printf(&list, "; and %zu more", s.n - NAMED_SHAPES);
    int rc = amk_diag_set(d, AMK_ENOTCOVERED, "backend %s: the recording has no trial of %s "
                          "at %s; it covers %s (pass one with --shape); nothing was run or "
                          "written", backend, kernel, shape, list.p ? list.p : "");
    amk_sb_free(&list);
    return rc;
}

/* ---------- recorded sweeps ------------------------------------------------------------ */

void amk__data_dir(char *out, size_t cap)
{
    const char *env = getenv("AMK_DATA_DIR");
    if (env && *env)
        snprintf(out, cap, "%s", env);
    else
        amk_fs_share_dir("data", out, cap); /* next to the executable first */
}

typedef struct sweep_scan {
    const char *kernel, *shape;
    int found;
} sweep_scan;

static int scan_row(const amk_row *r, void *ud)
{
    sweep_scan *s = ud;
    if (r->status == AMK_STATUS_OK && r->latency_kind == AMK_LAT_MEASURED &&
        isfinite(r->latency_us) && strcmp(r->kernel, s->kernel) == 0 &&
        strcmp(r->shape, s->shape) == 0) {
        s->found = 1;
        return 1;
    }
    return 0;
}

int amk__sim_sweep_find(const char *kernel, const char *shape, char *path, size_t cap,
                        char *why, size_t why_cap)
{
    char dir[4096], dummy[8];
    if (!why) {
        why = dummy;
        why_cap = sizeof dummy;
    }
    amk__data_dir(dir, sizeof dir);
    snprintf(path, cap, "%s/%s.tsv", dir, kernel);
    if (!amk_fs_exists(path)) {
        snprintf(why, why_cap, "no file %s", path);
        return 0;
    }
    sweep_scan s = {kernel, shape, 0};
    amk_diag d = {0};
    if (amk_tsv_read(path, scan_row, &s, NULL, &d) != AMK_OK) {
        snprintf(why, why_cap, "%s", d.msg);
        return 0;
    }
    if (!s.found) {
        snprintf(why, why_cap, "%s has no measured ok trial of %s at %s", path, kernel, shape);
        return 0;
    }
    return 1;
}

/* `amk export`'s database: results files through the history rule (the one "best") with the
 * cost model's device table. Here because search is the room that sees both: results does
 * not know the targets, and the cost model knows nothing of results. */
#include "amk_search.h"

#include <stdlib.h>

int amk_export_tuned(const char *const *paths, size_t n, const char *kernel,
                     int include_replayed, const amk_registry *reg, amk_export_db **out,
                     amk_diag *d)
{
    int nt = amk_target_count();
    amk_export_target *t = calloc((size_t)nt + 1, sizeof *t);
    if (!t)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    for (int i = 0; i < nt; i++) {
        const amk_target *x = amk_target_at(i);
        t[i] = (amk_export_target){x->key, x->name, x->vendor, x->arch};
    }
    amk_row_upgrader up = amk_registry_upgrader(reg);
    amk_export_opts o = {.kernel = kernel, .include_replayed = include_replayed,
                         .targets = t, .n_targets = (size_t)nt, .rule = &amk_history_rule,
                         .upgrade = &up};
    int e = amk_export_db_build(paths, n, &o, out, d);
    free(t);
    return e;
}

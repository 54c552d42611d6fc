/* The spec loader's shared parts (spec.c reads the space: dims, dtypes, shapes, params,
 * derived values, restrictions, and runs the whole load; spec_kernel.c reads the kernel:
 * args, buffers, launch, tensor maps, cost, reference, tolerance, requires). Every reader
 * turns spec.json fields into the compiled amk_spec; nothing outside space_defs sees these. */
#ifndef AMK_SPEC_LOAD_INT_H
#define AMK_SPEC_LOAD_INT_H

#include "space_defs_int.h"

#include <cjson/cJSON.h>

/* Largest integer a JSON number holds exactly (a double's mantissa). */
#define JSON_INT_MAX ((int64_t)1 << 53)

typedef struct loader {
    amk_spec *s;
    amk_diag *d;
    int err; /* first error; every later fail() keeps it */
} loader;

int amk__ld_fail(loader *L, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const char *amk__ld_json_type(const cJSON *j);
int amk__ld_is_identifier(const char *n);
int amk__ld_json_int(const cJSON *j, int64_t lo, int64_t hi, int64_t *out);
int amk__ld_check_keys(loader *L, const cJSON *obj, const char *path, const char *const *allowed,
                       const char *const *required);
int amk__ld_check_new_name(loader *L, const char *path, const char *name);
char *amk__ld_dup_or_fail(loader *L, const char *src);
const char *amk__ld_get_string(loader *L, const cJSON *obj, const char *key, const char *path,
                               int required);
amk_expr *amk__ld_get_expr(loader *L, const cJSON *j, const char *path);
int amk__ld_load_buffers(loader *L, const cJSON *root);
int amk__ld_check_file(loader *L, const char *path, const char *rel);
int amk__ld_load_launch(loader *L, const cJSON *j, const char *path, amk__launch_exprs *out);
int amk__ld_load_tensor_maps(loader *L, const cJSON *root);
int amk__ld_load_cost(loader *L, const cJSON *root);
int amk__ld_load_reference(loader *L, const cJSON *root);
int amk__ld_load_tolerance(loader *L, const cJSON *root);
int amk__ld_load_peer(loader *L, const cJSON *root);
int amk__ld_load_requires(loader *L, const cJSON *root);
int amk__ld_load_args(loader *L, const cJSON *arr, const char *path, char (*out)[AMK_NAME_MAX],
                      int *nout);
/* Vendors a "requires" object may name, in amk_spec.requires order. */
extern const char *const amk__spec_vendors[];

int amk__ld_name_eq(const char *a, const char *name, size_t len);

#endif

/* Internals shared by the export files: build (export_build.c), check (export_check.c),
 * lookup (export_lookup.c) and the C header writer (export_c.c). The helpers in
 * export_shape.c are the rules all of them must apply alike. Not installed. */
#ifndef AMK_EXPORT_INT_H
#define AMK_EXPORT_INT_H

#include "amk_results.h"

#include <cjson/cJSON.h>

#define AMK__EXPORT_DB_FORMAT "amk-tuned-db"
#define AMK__EXPORT_DB_VERSION 1
#define AMK__EXPORT_MAX_DIMS 16
/* a dimension one side lacks: 64 octaves */
#define AMK__EXPORT_MISSING_DIM_PENALTY (64LL * 65536)

/* A parsed shape: named positive dimensions and an optional dtype. */
typedef struct amk__export_shape {
    int n;
    char name[AMK__EXPORT_MAX_DIMS][32];
    long long val[AMK__EXPORT_MAX_DIMS];
    char dtype[32]; /* "" = none */
} amk__export_shape;

/* "M=4096,N=4096,dtype=f16" → dims (positive integers) and dtype. AMK_EINVAL otherwise. */
int amk__export_shape_parse(const char *text, amk__export_shape *s, amk_diag *d);
/* log2(x) in units of 1/65536 (x >= 1); the generated C header carries the same code. */
long long amk__export_lg_fixed(long long x);
/* A query dtype matches an entry when either is absent or both are equal. */
int amk__export_dtype_matches(const char *query, const char *entry);
/* Device name → its target (exact key or name, then arch, then a key inside the name);
 * NULL when none matches. */
const amk_export_target *amk__export_resolve(const amk_export_target *t, size_t n,
                                             const char *dev);
/* *info = kernel_info[kernel]; AMK_ENOENT listing the database's kernels when absent. */
int amk__export_known_kernel(const cJSON *db, const char *kernel, const cJSON **info,
                             amk_diag *d);
/* node.kernels[kernel], or NULL. */
const cJSON *amk__export_kernel_node(const cJSON *node, const char *kernel);

/* The database behind the opaque handle: the JSON tree itself. */
struct amk_export_db {
    cJSON *root;
};

/* The tree-level operations behind amk_export_db_*; same contracts, on the cJSON tree. */
int amk__export_build(const char *const *paths, size_t n, const amk_export_opts *opts,
                      cJSON **out, amk_diag *d);
int amk__export_check(const cJSON *db, amk_diag *d);
int amk__export_c(const cJSON *db, const char *kernel, amk_sb *out, amk_diag *d);
int amk__export_lookup(const cJSON *db, const char *kernel, const char *device_name,
                       const char *shape, const char *dtype, cJSON **out, amk_diag *d);

#endif

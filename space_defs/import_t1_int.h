/* amk import's shared parts: import_t1.c reads the T1 space (params, conditions, problem
 * size) and writes the folder; import_t1_kernel.c turns the KernelSpecification (--kernel)
 * into the spec's kernel and reference sections. */
#ifndef AMK_IMPORT_T1_INT_H
#define AMK_IMPORT_T1_INT_H

#include "space_defs_int.h"

#include <cjson/cJSON.h>

typedef struct imp_param {
    char name[AMK_NAME_MAX];
    py_val vals; /* PY_V_LIST of ints or strs, sorted ascending when ints */
    int def;     /* index into vals */
} imp_param;

typedef struct importer {
    const char *path; /* the T1 file, for messages */
    cJSON *root;
    int nparams;
    imp_param params[AMK_MAX_PARAMS];
    int ndims;
    char dims[3][AMK_NAME_MAX];
    int64_t problem[3];
    /* the condition being checked: one value per param (by index), bound names */
    int64_t env[AMK_MAX_PARAMS];
    int kernel;   /* importing with --kernel */
    const amk_import_opts *opts;
    amk_diag *d;
} importer;

/* A file written into the kernel folder besides spec.json. */
typedef struct out_file {
    char *name, *text;
    char *src; /* not NULL: copy this file (data files: binary, large) instead of text */
    int link;  /* with src: hard-link it where the filesystem allows (opts->link_data) */
} out_file;

int amk__imp_fail(importer *im, int code, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int amk__imp_param_index(const importer *im, const char *name);
int amk__imp_space_only_kernel(cJSON *spec, const char *name, char **src_name, char **src_text);
/* files[0..2]: spec.json, the kernel, reference.cu; *nfiles grows past 3 by the headers
 * the kernel includes from its own folder (`#include "x.h"`), copied as they are. */
#define AMK__IMP_MAX_FILES (3 + AMK__MAX_HEADERS + 2 * AMK__MAX_BUFFERS)
int amk__imp_with_kernel(importer *im, cJSON *spec, const char *kernel_file, out_file *files,
                         int *nfiles);

#endif

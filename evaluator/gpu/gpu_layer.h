/* The interface between the evaluator and its GPU layer (evaluator/gpu/), on the evaluator's
 * side: what the layer implements for the compile workers (the amk__rtc_* runtime-compiler
 * entry points) and the sizes it shares with the compile service. The run worker's contract
 * (the run-job wire format) is gpu_wire.h. No GPU header here: the evaluator includes this
 * in builds without a GPU layer too. */
#ifndef AMK_GPU_LAYER_H
#define AMK_GPU_LAYER_H

#include "amk_common.h"

#include <stddef.h>

/* Longest lowered (mangled) kernel name looked up in a code object. */
#define AMK__ENTRY_MAX 256

/* ---------- the runtime compiler (evaluator/gpu/compile.c, GPU builds only) -------------- */
#if defined(AMK_HAVE_GPU)
typedef struct amk_rtc_out {
    int compiled;           /* 1: image produced; 0: the compiler rejected the source */
    void *image;            /* malloc'd */
    size_t size;
    char *log;              /* malloc'd, NUL-terminated (may be empty) */
    char *lowered;          /* malloc'd lowered name of the entry (compiled with an entry) */
} amk_rtc_out;

const char *amk__rtc_name(void);   /* "nvrtc" | "hiprtc" */
const char *amk__rtc_vendor(void); /* "nvidia" | "amd" */
/* "nvrtc 13.0". Call it in a worker only (it may initialise the compiler library). */
int amk__rtc_version(char *out, size_t cap, amk_diag *d);
/* Compiles in the calling process (a worker). entry (NULL or "" = none) is the kernel's name
 * as written: it goes in as the name expression "&entry" and its lowered name comes back in
 * out->lowered, so a plain C++ __global__ function is found without extern "C". AMK_OK when
 * the compiler ran (out->compiled says whether it accepted the source); AMK_EBACKEND when a
 * compiler call failed otherwise (d says which); AMK_ENOMEM. On AMK_OK the caller frees
 * out->image, out->log and out->lowered. */
int amk__rtc_compile(const char *name, const char *source, const char *const *options,
                     int n_options, const char *entry, amk_rtc_out *out, amk_diag *d);
#endif

#endif

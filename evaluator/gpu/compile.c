/* The runtime compiler, as a compile worker runs it: hipRTC names (NVRTC through
 * vendors/cuda.h) turning one source text + options into a code object (CUBIN on NVIDIA,
 * a code object on AMD) and the compiler log. Runs only inside a worker process. */
#include "gpu_int.h"

#include <stdlib.h>
#include <string.h>

#if defined(AMK_GPU_CUDA)
#define RTC_NAME "nvrtc"
#define RTC_VENDOR "nvidia"
#define RTC_BUILD_FMT " (CUDA runtime headers %d)", CUDART_VERSION
#else
#include <hip/hip_version.h>
#define RTC_NAME "hiprtc"
#define RTC_VENDOR "amd"
/* hiprtcVersion says little on Debian's 5.2.3 ("9.0"): the HIP release is added. */
#define RTC_BUILD_FMT " (HIP %d.%d.%d)", HIP_VERSION_MAJOR, HIP_VERSION_MINOR, HIP_VERSION_PATCH
#endif

const char *amk__rtc_name(void)
{
    return RTC_NAME;
}

const char *amk__rtc_vendor(void)
{
    return RTC_VENDOR;
}

const char *amk__rtc_strerror(hiprtcResult r)
{
    const char *s = hiprtcGetErrorString(r);
    return s ? s : "unknown runtime-compiler error";
}

int amk__rtc_version(char *out, size_t cap, amk_diag *d)
{
    int major = 0, minor = 0;
    hiprtcResult r = hiprtcVersion(&major, &minor);
    if (r != HIPRTC_SUCCESS)
        return amk_diag_set(d, AMK_EBACKEND, RTC_NAME "Version: %s", amk__rtc_strerror(r));
    int n = snprintf(out, cap, RTC_NAME " %d.%d", major, minor);
    if (n > 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, RTC_BUILD_FMT);
    return AMK_OK;
}

/* Copies the program log (NUL-terminated, possibly empty) into a malloc'd string. */
static char *program_log(hiprtcProgram prog)
{
    size_t n = 0;
    if (hiprtcGetProgramLogSize(prog, &n) != HIPRTC_SUCCESS)
        n = 0;
    char *log = malloc(n + 1);
    if (!log)
        return NULL;
    log[0] = '\0';
    if (n > 0 && hiprtcGetProgramLog(prog, log) != HIPRTC_SUCCESS)
        log[0] = '\0';
    log[n] = '\0';
    return log;
}

int amk__rtc_compile(const char *name, const char *source, const char *const *options,
                     int n_options, const char *entry, amk_rtc_out *out, amk_diag *d)
{
    memset(out, 0, sizeof *out);
    hiprtcProgram prog;
    hiprtcResult r = hiprtcCreateProgram(&prog, source, name, 0, NULL, NULL);
    if (r != HIPRTC_SUCCESS)
        return amk_diag_set(d, r == HIPRTC_ERROR_OUT_OF_MEMORY ? AMK_ENOMEM : AMK_EBACKEND,
                            RTC_NAME "CreateProgram(%s): %s", name, amk__rtc_strerror(r));
    /* The kernel's address as a name expression: the compiler lowers it to the symbol in the
     * code object (the C++-mangled name of a plain __global__ function, the name itself for
     * an extern "C" one); a name that is not a kernel of the source fails the compile. */
    char expr[AMK_NAME_MAX + 2];
    int lower = entry && *entry;
    if (lower) {
        snprintf(expr, sizeof expr, "&%s", entry);
        r = hiprtcAddNameExpression(prog, expr);
        if (r != HIPRTC_SUCCESS) {
            hiprtcDestroyProgram(&prog);
            return amk_diag_set(d, AMK_EBACKEND, RTC_NAME "AddNameExpression(%s): %s", expr,
                                amk__rtc_strerror(r));
        }
    }
    /* The hipRTC/NVRTC signature takes non-const char ** on some versions. */
    r = hiprtcCompileProgram(prog, n_options, (const char **)options);
    char *log = program_log(prog);
    if (!log) {
        hiprtcDestroyProgram(&prog);
        return amk_diag_set(d, AMK_ENOMEM, "compile %s: out of memory for the log", name);
    }
    if (r == HIPRTC_ERROR_COMPILATION) {
        hiprtcDestroyProgram(&prog);
        out->compiled = 0;
        out->log = log;
        return AMK_OK;
    }
    if (r != HIPRTC_SUCCESS) {
        amk_diag_set(d, AMK_EBACKEND, RTC_NAME "CompileProgram(%s): %s%s%.400s", name,
                     amk__rtc_strerror(r), *log ? ": " : "", log);
        free(log);
        hiprtcDestroyProgram(&prog);
        return AMK_EBACKEND;
    }
    size_t size = 0;
    r = hiprtcGetCodeSize(prog, &size);
    if (r != HIPRTC_SUCCESS || size == 0) {
        amk_diag_set(d, AMK_EBACKEND, "compile %s: no code object (%s)", name,
                     r != HIPRTC_SUCCESS ? amk__rtc_strerror(r) : "size 0");
        free(log);
        hiprtcDestroyProgram(&prog);
        return AMK_EBACKEND;
    }
    const char *low = NULL;
    if (lower && ((r = hiprtcGetLoweredName(prog, expr, &low)) != HIPRTC_SUCCESS || !low ||
                  strlen(low) >= AMK__ENTRY_MAX)) {
        amk_diag_set(d, AMK_EBACKEND, RTC_NAME "GetLoweredName(%s): %s", expr,
                     r != HIPRTC_SUCCESS ? amk__rtc_strerror(r)
                                         : low ? "name too long" : "no name");
        free(log);
        hiprtcDestroyProgram(&prog);
        return AMK_EBACKEND;
    }
    if (lower && !(out->lowered = strdup(low))) {
        free(log);
        hiprtcDestroyProgram(&prog);
        return amk_diag_set(d, AMK_ENOMEM, "compile %s: out of memory", name);
    }
    char *image = malloc(size);
    if (!image) {
        free(out->lowered);
        out->lowered = NULL;
        free(log);
        hiprtcDestroyProgram(&prog);
        return amk_diag_set(d, AMK_ENOMEM, "compile %s: out of memory for %zu bytes", name,
                            size);
    }
    r = hiprtcGetCode(prog, image);
    hiprtcDestroyProgram(&prog);
    if (r != HIPRTC_SUCCESS) {
        free(image);
        free(log);
        free(out->lowered);
        out->lowered = NULL;
        return amk_diag_set(d, AMK_EBACKEND, RTC_NAME " get code (%s): %s", name,
                            amk__rtc_strerror(r));
    }
    out->compiled = 1;
    out->image = image;
    out->size = size;
    out->log = log;
    return AMK_OK;
}

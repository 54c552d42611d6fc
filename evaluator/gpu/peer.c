/* The vendor-library peer a spec names ("peer"), timed by the benchmark beside the
 * candidate on the same buffers: gemm through cuBLAS (cublasGemmEx, the library opened at
 * run time, so libamk gains no link dependency), copy through the runtime's device-to-device
 * copy. AMD has the copy only: rocBLAS is not wired yet, and the row says so. */
#include "gpu_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#if defined(AMK_GPU_CUDA)
/* cuBLAS's enum values (cublas_api.h, library_types.h), by value. */
enum {
    CUBLAS_OK = 0, OP_N = 0, COMPUTE_32F = 68, GEMM_DEFAULT = -1,
    R_32F = 0, R_16F = 2, R_16BF = 14
};
typedef int (*gemm_ex_fn)(void *, int, int, int, int, int, const void *, const void *, int, int,
                          const void *, int, int, const void *, void *, int, int, int, int);

static struct {
    int tried, ok;
    char why[200];
    void *handle;
    int (*set_stream)(void *, hipStream_t);
    gemm_ex_fn gemm_ex;
} blas;

/* Opens cuBLAS once per run worker and creates its handle. */
static int blas_open(char *why, size_t cap)
{
    if (!blas.tried) {
        static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                            NULL};
        void *lib = NULL;
        blas.tried = 1;
        for (int i = 0; names[i] && !lib; i++)
            lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            snprintf(blas.why, sizeof blas.why, "cuBLAS not found (libcublas.so.13/.12: %s)",
                     dlerror());
        } else {
            int (*create)(void **) = (int (*)(void **))dlsym(lib, "cublasCreate_v2");
            blas.set_stream = (int (*)(void *, hipStream_t))dlsym(lib, "cublasSetStream_v2");
            blas.gemm_ex = (gemm_ex_fn)dlsym(lib, "cublasGemmEx");
            int rc = -1;
            if (!create || !blas.set_stream || !blas.gemm_ex)
                snprintf(blas.why, sizeof blas.why, "cuBLAS lacks cublasGemmEx");
            else if ((rc = create(&blas.handle)) != CUBLAS_OK)
                snprintf(blas.why, sizeof blas.why, "cublasCreate failed (status %d)", rc);
            blas.ok = rc == CUBLAS_OK;
        }
    }
    if (!blas.ok)
        snprintf(why, cap, "%s", blas.why);
    return blas.ok;
}

static int blas_type(int dt)
{
    return dt == AMK__DT_F32 ? R_32F : dt == AMK__DT_F16 ? R_16F : dt == AMK__DT_BF16 ? R_16BF : -1;
}
#endif

int amk__peer_prepare(amk__peer *p, const amk__run_case *c, hipStream_t s, char *name,
                      size_t name_cap, char *why, size_t why_cap)
{
    const amk__run_peer *op = &c->peer;
    p->op = *op;
    p->dt_a = c->bufs[op->a].dtype;
    p->dt_b = op->b >= 0 ? c->bufs[op->b].dtype : -1;
    p->dt_c = c->bufs[op->c].dtype;
    if (op->op == AMK__PEER_COPY) {
        int64_t src = c->bufs[op->a].count * (int64_t)amk__dtype_size(p->dt_a);
        int64_t dst = c->bufs[op->c].count * (int64_t)amk__dtype_size(p->dt_c);
        p->copy_bytes = src < dst ? src : dst;
        snprintf(name, name_cap, "copy");
        return 1;
    }
#if defined(AMK_GPU_CUDA)
    if (blas_type(p->dt_a) < 0 || blas_type(p->dt_b) < 0 || blas_type(p->dt_c) < 0 ||
        p->dt_a != p->dt_b) {
        snprintf(why, why_cap, "cublasGemmEx does not take %s x %s -> %s",
                 amk__dtype_name(p->dt_a), amk__dtype_name(p->dt_b), amk__dtype_name(p->dt_c));
        return 0;
    }
    if (op->m > 0x7fffffff || op->n > 0x7fffffff || op->k > 0x7fffffff) {
        snprintf(why, why_cap, "gemm dims beyond cuBLAS's int");
        return 0;
    }
    if (!blas_open(why, why_cap))
        return 0;
    if (blas.set_stream(blas.handle, s) != CUBLAS_OK) {
        snprintf(why, why_cap, "cublasSetStream failed");
        return 0;
    }
    snprintf(name, name_cap, "cublas");
    return 1;
#else
    (void)s;
    (void)name;
    (void)name_cap;
    snprintf(why, why_cap, "no gemm peer on AMD yet (rocBLAS is not wired)");
    return 0;
#endif
}

hipError_t amk__peer_run(void *peer, int set, hipStream_t s)
{
    amk__peer *p = peer;
    void *const *ptr = p->ptr[set];
    if (p->op.op == AMK__PEER_COPY)
        return hipMemcpyAsync(ptr[2], ptr[0], (size_t)p->copy_bytes, hipMemcpyDeviceToDevice, s);
#if defined(AMK_GPU_CUDA)
    /* Row-major C = A B is column-major C^T = B^T A^T: B first, n x m x k. */
    const float one = 1.0f, zero = 0.0f;
    int m = (int)p->op.m, n = (int)p->op.n, k = (int)p->op.k;
    int st = blas.gemm_ex(blas.handle, OP_N, OP_N, n, m, k, &one, ptr[1], blas_type(p->dt_b), n,
                          ptr[0], blas_type(p->dt_a), k, &zero, ptr[2], blas_type(p->dt_c), n,
                          COMPUTE_32F, GEMM_DEFAULT);
    return st == CUBLAS_OK ? hipSuccess : hipErrorLaunchFailure;
#else
    (void)s;
    return hipErrorNotSupported;
#endif
}

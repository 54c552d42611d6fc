/* The vendor-library peer a spec names ("peer"), timed by the benchmark beside the
 * candidate on the same buffers: gemm through the vendor's BLAS (cuBLAS's cublasGemmEx on
 * NVIDIA, rocBLAS's rocblas_gemm_ex on AMD; the library opened at run time, so libamk gains
 * no link dependency), copy through the runtime's device-to-device copy. The two BLAS
 * differ only in names and enum values (below); what is done with them is one flow. */
#include "gpu_int.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(AMK_GPU_CUDA)
/* cuBLAS's enum values (cublas_api.h, library_types.h), by value. */
enum { BLAS_OK = 0, OP_N = 0, COMPUTE_32F = 68, ALGO_DEFAULT = -1, T_F32 = 0, T_F16 = 2,
       T_BF16 = 14 };
static const char *const blas_libs[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                        NULL};
static const char *const blas_syms[] = {"cublasCreate_v2", "cublasSetStream_v2",
                                        "cublasGemmEx"};
#define BLAS_NAME "cublas"
#define BLAS_TITLE "cuBLAS"
typedef int (*gemm_ex_fn)(void *, int, int, int, int, int, const void *, const void *, int, int,
                          const void *, int, int, const void *, void *, int, int, int, int);
#else
/* rocBLAS's enum values (rocblas-types.h), by value. Not run on AMD hardware here. */
enum { BLAS_OK = 0, OP_N = 111, COMPUTE_32F = 151, ALGO_DEFAULT = 0, T_F32 = 151, T_F16 = 150,
       T_BF16 = 168 };
static const char *const blas_libs[] = {"librocblas.so.4", "librocblas.so.3", "librocblas.so",
                                        NULL};
static const char *const blas_syms[] = {"rocblas_create_handle", "rocblas_set_stream",
                                        "rocblas_gemm_ex"};
#define BLAS_NAME "rocblas"
#define BLAS_TITLE "rocBLAS"
/* rocblas_gemm_ex: ..., c (input) then d (output) with their types and leading dimensions,
 * compute type, algo, solution index, flags. */
typedef int (*gemm_ex_fn)(void *, int, int, int, int, int, const void *, const void *, int, int,
                          const void *, int, int, const void *, const void *, int, int, void *,
                          int, int, int, int, int32_t, uint32_t);
#endif

static struct {
    int tried, ok;
    char why[200];
    void *handle;
    int (*set_stream)(void *, hipStream_t);
    gemm_ex_fn gemm_ex;
} blas;

/* Opens the BLAS once per run worker and creates its handle. */
static int blas_open(char *why, size_t cap)
{
    if (!blas.tried) {
        void *lib = NULL;
        double t0 = amk_now_s();
        blas.tried = 1;
        for (int i = 0; blas_libs[i] && !lib; i++)
            lib = dlopen(blas_libs[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            snprintf(blas.why, sizeof blas.why, "%s not found (%s: %s)", BLAS_TITLE,
                     blas_libs[0], dlerror());
        } else {
            int (*create)(void **) = (int (*)(void **))dlsym(lib, blas_syms[0]);
            blas.set_stream = (int (*)(void *, hipStream_t))dlsym(lib, blas_syms[1]);
            blas.gemm_ex = (gemm_ex_fn)dlsym(lib, blas_syms[2]);
            int rc = -1;
            if (!create || !blas.set_stream || !blas.gemm_ex)
                snprintf(blas.why, sizeof blas.why, "%s lacks %s", BLAS_TITLE, blas_syms[2]);
            else if ((rc = create(&blas.handle)) != BLAS_OK)
                snprintf(blas.why, sizeof blas.why, "%s failed (status %d)", blas_syms[0], rc);
            blas.ok = rc == BLAS_OK;
        }
        amk__rw_setup_add((amk_now_s() - t0) * 1e3); /* once per run worker */
    }
    if (!blas.ok)
        snprintf(why, cap, "%s", blas.why);
    return blas.ok;
}

static int blas_type(int dt)
{
    return dt == AMK__DT_F32 ? T_F32 : dt == AMK__DT_F16 ? T_F16 : dt == AMK__DT_BF16 ? T_BF16 : -1;
}

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
    if (blas_type(p->dt_a) < 0 || blas_type(p->dt_b) < 0 || blas_type(p->dt_c) < 0 ||
        p->dt_a != p->dt_b) {
        snprintf(why, why_cap, "%s does not take %s x %s -> %s", blas_syms[2],
                 amk__dtype_name(p->dt_a), amk__dtype_name(p->dt_b), amk__dtype_name(p->dt_c));
        return 0;
    }
    if (op->m > 0x7fffffff || op->n > 0x7fffffff || op->k > 0x7fffffff) {
        snprintf(why, why_cap, "gemm dims beyond %s's int", BLAS_TITLE);
        return 0;
    }
    if (!blas_open(why, why_cap))
        return 0;
    if (blas.set_stream(blas.handle, s) != BLAS_OK) {
        snprintf(why, why_cap, "%s failed", blas_syms[1]);
        return 0;
    }
    snprintf(name, name_cap, BLAS_NAME);
    return 1;
}

hipError_t amk__peer_run(void *peer, int set, hipStream_t s)
{
    amk__peer *p = peer;
    void *const *ptr = p->ptr[set];
    if (p->op.op == AMK__PEER_COPY)
        return hipMemcpyAsync(ptr[2], ptr[0], (size_t)p->copy_bytes, hipMemcpyDeviceToDevice, s);
    /* On s: amk__peer_prepare bound the BLAS handle to it. Row-major C = A B is column-major
     * C^T = B^T A^T: B first, n x m x k. */
    const float one = 1.0f, zero = 0.0f;
    int m = (int)p->op.m, n = (int)p->op.n, k = (int)p->op.k;
    int ta = blas_type(p->dt_a), tb = blas_type(p->dt_b), tc = blas_type(p->dt_c);
#if defined(AMK_GPU_CUDA)
    int st = blas.gemm_ex(blas.handle, OP_N, OP_N, n, m, k, &one, ptr[1], tb, n, ptr[0], ta, k,
                          &zero, ptr[2], tc, n, COMPUTE_32F, ALGO_DEFAULT);
#else
    int st = blas.gemm_ex(blas.handle, OP_N, OP_N, n, m, k, &one, ptr[1], tb, n, ptr[0], ta, k,
                          &zero, ptr[2], tc, n, ptr[2], tc, n, COMPUTE_32F, ALGO_DEFAULT, 0, 0u);
#endif
    return st == BLAS_OK ? hipSuccess : hipErrorLaunchFailure;
}

/* HIP runtime + hipRTC names mapped onto the CUDA runtime (>= 12, library-loading API) and
 * NVRTC, one #define per name, so evaluator/gpu/ is written once. Differences that are not a
 * rename are small named static inline functions at the end of their group. */
#ifndef AMK_VENDORS_CUDA_H
#define AMK_VENDORS_CUDA_H

#include <cuda.h> /* driver types only (CUtensorMap ...): libcuda is reached at run time */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <nvrtc.h>

#if !defined(CUDART_VERSION) || CUDART_VERSION < 12000
#error "amk needs the CUDA runtime >= 12 (library-loading API)"
#endif

/* ---------- runtime compiler: hipRTC -> NVRTC ---------------------------------------------- */
#define hiprtcResult nvrtcResult
#define hiprtcProgram nvrtcProgram
#define HIPRTC_SUCCESS NVRTC_SUCCESS
#define HIPRTC_ERROR_OUT_OF_MEMORY NVRTC_ERROR_OUT_OF_MEMORY
#define HIPRTC_ERROR_PROGRAM_CREATION_FAILURE NVRTC_ERROR_PROGRAM_CREATION_FAILURE
#define HIPRTC_ERROR_INVALID_INPUT NVRTC_ERROR_INVALID_INPUT
#define HIPRTC_ERROR_INVALID_PROGRAM NVRTC_ERROR_INVALID_PROGRAM
#define HIPRTC_ERROR_INVALID_OPTION NVRTC_ERROR_INVALID_OPTION
#define HIPRTC_ERROR_COMPILATION NVRTC_ERROR_COMPILATION
#define HIPRTC_ERROR_INTERNAL_ERROR NVRTC_ERROR_INTERNAL_ERROR
#define hiprtcGetErrorString nvrtcGetErrorString
#define hiprtcVersion nvrtcVersion
#define hiprtcCreateProgram nvrtcCreateProgram
#define hiprtcDestroyProgram nvrtcDestroyProgram
#define hiprtcCompileProgram nvrtcCompileProgram
#define hiprtcGetProgramLogSize nvrtcGetProgramLogSize
#define hiprtcGetProgramLog nvrtcGetProgramLog
#define hiprtcAddNameExpression nvrtcAddNameExpression
#define hiprtcGetLoweredName nvrtcGetLoweredName
/* The code object of a real architecture (sm_XX): a CUBIN, loaded by cudaLibraryLoadData. */
#define hiprtcGetCodeSize nvrtcGetCUBINSize
#define hiprtcGetCode nvrtcGetCUBIN

/* ---------- runtime: errors, devices ------------------------------------------------------- */
#define hipError_t cudaError_t
#define hipSuccess cudaSuccess
#define hipErrorNotReady cudaErrorNotReady
#define hipErrorNoDevice cudaErrorNoDevice
#define hipErrorInsufficientDriver cudaErrorInsufficientDriver
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipErrorLaunchFailure cudaErrorLaunchFailure
#define hipErrorIllegalAddress cudaErrorIllegalAddress
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipDriverGetVersion cudaDriverGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipGetDeviceCount cudaGetDeviceCount
#define hipSetDevice cudaSetDevice
#define hipGetDevice cudaGetDevice
#define hipDeviceProp_t struct cudaDeviceProp
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceGetPCIBusId cudaDeviceGetPCIBusId
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipDeviceReset cudaDeviceReset
#define hipMemGetInfo cudaMemGetInfo

/* ---------- runtime: memory ---------------------------------------------------------------- */
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
/* ---------- runtime: streams and events ---------------------------------------------------- */
#define hipStream_t cudaStream_t
#define hipStreamCreate cudaStreamCreate
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamQuery cudaStreamQuery
#define hipEvent_t cudaEvent_t
#define hipEventCreate cudaEventCreate
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventQuery cudaEventQuery
#define hipEventElapsedTime cudaEventElapsedTime

/* ---------- runtime: code objects (HIP module API -> CUDA library API) -------------------- */
#define hipModule_t cudaLibrary_t
#define hipFunction_t cudaKernel_t
#define hipModuleUnload cudaLibraryUnload
#define hipModuleGetFunction cudaLibraryGetKernel

/* hipModuleLoadData(&lib, image): no JIT or library options. */
static inline cudaError_t amk__cuda_module_load_data(cudaLibrary_t *lib, const void *image)
{
    return cudaLibraryLoadData(lib, image, NULL, NULL, 0, NULL, NULL, 0);
}
#define hipModuleLoadData amk__cuda_module_load_data

/* hipModuleLaunchKernel: HIP takes the geometry as six ints (and an `extra` array amk never
 * uses); cudaLaunchKernel takes dim3s and accepts a cudaKernel_t as the function. */
static inline cudaError_t amk__cuda_module_launch_kernel(cudaKernel_t f, unsigned int gx,
                                                         unsigned int gy, unsigned int gz,
                                                         unsigned int bx, unsigned int by,
                                                         unsigned int bz, unsigned int shared,
                                                         cudaStream_t stream, void **args,
                                                         void **extra)
{
    dim3 grid = {gx, gy, gz}, block = {bx, by, bz};
    if (extra)
        return cudaErrorInvalidValue;
    return cudaLaunchKernel((const void *)f, grid, block, args, shared, stream);
}
#define hipModuleLaunchKernel amk__cuda_module_launch_kernel

/* ---------- appended by the run worker (owner: runworker) ---------------------------------- */
#define hipErrorNotSupported cudaErrorNotSupported
#define hipDeviceAttribute_t enum cudaDeviceAttr
#define hipDeviceAttributeComputeCapabilityMajor cudaDevAttrComputeCapabilityMajor
#define hipDeviceAttributeComputeCapabilityMinor cudaDevAttrComputeCapabilityMinor
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipDeviceAttributeWarpSize cudaDevAttrWarpSize
#define hipDeviceAttributeMaxThreadsPerBlock cudaDevAttrMaxThreadsPerBlock
#define hipDeviceAttributeMaxSharedMemoryPerBlock cudaDevAttrMaxSharedMemoryPerBlock
#define hipDeviceAttributeSharedMemPerBlockOptin cudaDevAttrMaxSharedMemoryPerBlockOptin
#define hipDeviceAttributeSharedMemPerMultiprocessor cudaDevAttrMaxSharedMemoryPerMultiprocessor
#define hipDeviceAttributeMaxRegistersPerBlock cudaDevAttrMaxRegistersPerBlock
#define hipDeviceAttributeMaxRegistersPerMultiprocessor cudaDevAttrMaxRegistersPerMultiprocessor
#define hipDeviceAttributeMaxBlocksPerMultiProcessor cudaDevAttrMaxBlocksPerMultiprocessor
#define hipDeviceAttributeMaxThreadsPerMultiProcessor cudaDevAttrMaxThreadsPerMultiProcessor
#define hipDeviceAttributeMaxGridDimX cudaDevAttrMaxGridDimX
#define hipDeviceAttributeMaxGridDimY cudaDevAttrMaxGridDimY
#define hipDeviceAttributeL2CacheSize cudaDevAttrL2CacheSize
#define hipDeviceAttributeClockRate cudaDevAttrClockRate
#define hipDeviceAttributeMemoryClockRate cudaDevAttrMemoryClockRate
#define hipDeviceAttributeMemoryBusWidth cudaDevAttrGlobalMemoryBusWidth
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipEventCreateWithFlags cudaEventCreateWithFlags
#define hipEventDefault cudaEventDefault
/* Pinned host memory: the run worker's kept check buffers. */
#define hipHostMalloc cudaHostAlloc
#define hipHostMallocDefault cudaHostAllocDefault
#define hipHostFree cudaFreeHost

/* Compute target of device dev as the compiler names it: "sm_90". */
static inline cudaError_t amk__gpu_arch_name(int dev, char *out, size_t cap)
{
    int major = 0, minor = 0;
    cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    if (e == cudaSuccess)
        snprintf(out, cap, "sm_%d%d", major, minor);
    return e;
}

/* Raises a kernel's dynamic shared-memory limit (needed above 48 KiB on NVIDIA). A
 * cudaKernel_t is accepted as the function "as is" by cudaFuncSetAttribute. */
static inline cudaError_t amk__gpu_set_dynamic_shared(cudaKernel_t f, int bytes)
{
    return cudaFuncSetAttribute((const void *)f, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                bytes);
}

/* Registers per thread and local (spill/stack) bytes per thread of a loaded kernel. */
static inline cudaError_t amk__gpu_kernel_resources(cudaKernel_t f, int *regs, int *local_bytes)
{
    struct cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, (const void *)f);
    if (e == cudaSuccess) {
        *regs = a.numRegs;
        *local_bytes = (int)a.localSizeBytes;
    }
    return e;
}


/* A host function queued on a stream (bench.c holds the stream with one while it queues a
 * chunk of timed launches). call must stay alive until the stream has run it. */
typedef struct amk__host_call {
    void (*fn)(void *);
    void *ud;
} amk__host_call;
static inline cudaError_t amk__gpu_host_func(cudaStream_t s, amk__host_call *call)
{
    return cudaLaunchHostFunc(s, call->fn, call->ud);
}

/* ---------- Hopper features: cluster launch, tensor maps (no HIP counterpart) ----------- */
/* Launches f with thread-block clusters of cluster[] blocks (cudaLaunchKernelEx). */
static inline cudaError_t amk__gpu_launch_cluster(cudaKernel_t f, const unsigned grid[3],
                                                  const unsigned block[3],
                                                  const unsigned cluster[3], unsigned shared,
                                                  cudaStream_t stream, void **args)
{
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr;
    memset(&cfg, 0, sizeof cfg);
    memset(&attr, 0, sizeof attr);
    cfg.gridDim = (dim3){grid[0], grid[1], grid[2]};
    cfg.blockDim = (dim3){block[0], block[1], block[2]};
    cfg.dynamicSmemBytes = shared;
    cfg.stream = stream;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cluster[0];
    attr.val.clusterDim.y = cluster[1];
    attr.val.clusterDim.z = cluster[2];
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelExC(&cfg, (const void *)f, args);
}

/* Clusters of more than 8 blocks (the portable size) must be allowed per kernel. */
static inline cudaError_t amk__gpu_allow_large_clusters(cudaKernel_t f)
{
    return cudaFuncSetAttribute((const void *)f, cudaFuncAttributeNonPortableClusterSizeAllowed,
                                1);
}

/* A driver function through the runtime's entry-point query (no link-time libcuda); NULL
 * with why (the runtime's message) when there is none. */
static inline void *amk__cuda_driver_symbol(const char *name, char *why, size_t cap)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q);
#else
    cudaError_t e = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &q);
#endif
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
        snprintf(why, cap, "%s", e != cudaSuccess ? cudaGetErrorString(e)
                                 : q == cudaDriverEntryPointVersionNotSufficent
                                     ? "the driver is older than CUDA 12"
                                     : "the driver does not export it");
        (void)cudaGetLastError();
        return NULL;
    }
    return fn;
}

typedef CUresult (*amk__cu_encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t,
                                            void *, const cuuint64_t *, const cuuint64_t *,
                                            const cuuint32_t *, const cuuint32_t *,
                                            CUtensorMapInterleave, CUtensorMapSwizzle,
                                            CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
typedef CUresult (*amk__cu_error_string_fn)(CUresult, const char **);

/* Encodes a tiled TMA descriptor (cuTensorMapEncodeTiled; interleave none, element strides 1,
 * out-of-bounds elements read as zero) of rank dims (innermost first) over base into out
 * (128 bytes). dtype is amk's element type name. 0 on success, else -1 with err set to the
 * driver's reason. */
static inline int amk__gpu_tensor_map_encode(void *out, const char *dtype, int rank, void *base,
                                             const uint64_t *dims, const uint64_t *strides,
                                             const uint32_t *box, int swizzle,
                                             int l2_promotion, char *err, size_t cap)
{
    static amk__cu_encode_tiled_fn encode;
    static amk__cu_error_string_fn errstr;
    static char unavailable[160];
    static const struct {
        const char *name;
        CUtensorMapDataType t;
    } types[] = {{"f32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32},
                 {"f16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16},
                 {"bf16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16},
                 {"fp8e4m3", CU_TENSOR_MAP_DATA_TYPE_UINT8},
                 {"int8", CU_TENSOR_MAP_DATA_TYPE_UINT8},
                 {"i32", CU_TENSOR_MAP_DATA_TYPE_INT32},
                 {"f64", CU_TENSOR_MAP_DATA_TYPE_FLOAT64}};
    int ti = -1;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(types[i].name, dtype) == 0)
            ti = (int)i;
    if (ti < 0 || rank < 1 || rank > 5) {
        snprintf(err, cap, "element type %s or rank %d has no tensor-map encoding", dtype, rank);
        return -1;
    }
    if (!encode) {
        char unused[8];
        encode = (amk__cu_encode_tiled_fn)amk__cuda_driver_symbol(
            "cuTensorMapEncodeTiled", unavailable, sizeof unavailable);
        errstr = (amk__cu_error_string_fn)amk__cuda_driver_symbol("cuGetErrorString", unused,
                                                                  sizeof unused);
    }
    if (!encode) {
        snprintf(err, cap, "cuTensorMapEncodeTiled is not available from the driver: %s",
                 unavailable);
        return -1;
    }
    CUtensorMap map; /* 64-byte aligned by its type, as the encoder requires */
    cuuint64_t d[5], st[4];
    cuuint32_t b[5], one[5] = {1, 1, 1, 1, 1};
    for (int i = 0; i < rank; i++) {
        d[i] = dims[i];
        b[i] = box[i];
        if (i + 1 < rank)
            st[i] = strides[i];
    }
    CUtensorMapSwizzle sw = swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                            : swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                            : swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                            : CU_TENSOR_MAP_SWIZZLE_NONE;
    CUtensorMapL2promotion l2 = l2_promotion == 256   ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                : l2_promotion == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                                : l2_promotion == 64  ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                                                      : CU_TENSOR_MAP_L2_PROMOTION_NONE;
    CUresult r = encode(&map, types[ti].t, (cuuint32_t)rank, base, d, st, b, one,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, sw, l2,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        const char *why = NULL;
        if (!errstr || errstr(r, &why) != CUDA_SUCCESS || !why)
            why = "unknown driver error";
        snprintf(err, cap, "cuTensorMapEncodeTiled: %s (CUresult %d)", why, (int)r);
        return -1;
    }
    memcpy(out, &map, sizeof map);
    return 0;
}

#endif

/* HIP runtime + hipRTC names mapped onto the CUDA runtime (>= 12, library-loading API) and
 * NVRTC, one #define per name, so evaluator/gpu/ is written once. Differences that are not a
 * rename are small named static inline functions at the end of their group. */
#ifndef AMK_VENDORS_CUDA_H
#define AMK_VENDORS_CUDA_H

#include <cuda_runtime_api.h>
#include <stdio.h>
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

#endif

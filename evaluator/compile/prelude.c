/* The vendor prelude: source text the evaluator puts in front of every template and reference
 * kernel. It defines the storage types of every spec dtype, exact conversions to and from
 * float, AMK_WARP, AMK_KERNEL, a warp shuffle, and `amk_t` from the -DAMK_T_<DTYPE> define.
 * It includes no header: NVRTC 13 does not find <cuda_fp16.h> without an -I path, and
 * Debian's hipRTC 5.2 has no hip_fp16/hip_bfloat16 built in, so 16-bit and 8-bit types are
 * plain bit containers converted by PTX (NVIDIA f16) or bit arithmetic. */
#include "amk_evaluator.h"

#include <string.h>

/* Parts common to both vendors; AMK_INLINE, amk__f16_bits_to_float and
 * amk__float_to_f16_bits are defined by the vendor part placed before this text. */
#define AMK__PRELUDE_COMMON                                                                   \
    "struct amk_f16 { unsigned short bits; };\n"                                              \
    "struct amk_bf16 { unsigned short bits; };\n"                                             \
    "struct amk_fp8e4m3 { unsigned char bits; };\n"                                           \
    "\n"                                                                                      \
    "AMK_INLINE float amk_to_float(float x) { return x; }\n"                                  \
    "AMK_INLINE float amk_to_float(amk_f16 x) { return amk__f16_bits_to_float(x.bits); }\n"  \
    "AMK_INLINE float amk_to_float(amk_bf16 x) {\n"                                           \
    "    return __uint_as_float(((unsigned int)x.bits) << 16);\n"                             \
    "}\n"                                                                                     \
    "AMK_INLINE float amk_to_float(signed char x) { return (float)x; }\n"                     \
    "AMK_INLINE float amk_to_float(amk_fp8e4m3 x) {\n"                                        \
    "    unsigned int s = (x.bits & 0x80u) << 24, e = (x.bits >> 3) & 15u, m = x.bits & 7u;\n" \
    "    if (e == 15u && m == 7u) return __uint_as_float(s | 0x7fc00000u);\n"                  \
    "    float v = e ? __uint_as_float(((e + 120u) << 23) | (m << 20))\n"                      \
    "                : (float)m * 0.001953125f; /* subnormal: m * 2^-9 */\n"                    \
    "    return s ? -v : v;\n"                                                                \
    "}\n"                                                                                     \
    "\n"                                                                                      \
    "/* Round to nearest even; NaN stays NaN, overflow gives inf. */\n"                      \
    "AMK_INLINE amk_f16 amk_f16_from_float(float f) {\n"                                      \
    "    amk_f16 h; h.bits = amk__float_to_f16_bits(f); return h;\n"                           \
    "}\n"                                                                                     \
    "AMK_INLINE amk_bf16 amk_bf16_from_float(float f) {\n"                                    \
    "    unsigned int u = __float_as_uint(f);\n"                                              \
    "    amk_bf16 h;\n"                                                                       \
    "    if ((u & 0x7fffffffu) > 0x7f800000u) { /* NaN: keep it, made quiet */\n"             \
    "        h.bits = (unsigned short)((u >> 16) | 0x40u);\n"                                  \
    "        return h;\n"                                                                     \
    "    }\n"                                                                                 \
    "    u += 0x7fffu + ((u >> 16) & 1u);\n"                                                  \
    "    h.bits = (unsigned short)(u >> 16);\n"                                               \
    "    return h;\n"                                                                         \
    "}\n"                                                                                     \
    "/* Round to nearest even, saturating to +-448 (OCP e4m3 'satfinite'); NaN -> 0x7f. */\n" \
    "AMK_INLINE amk_fp8e4m3 amk_fp8e4m3_from_float(float f) {\n"                              \
    "    unsigned int u = __float_as_uint(f);\n"                                              \
    "    unsigned int s = (u >> 24) & 0x80u, a = u & 0x7fffffffu;\n"                          \
    "    amk_fp8e4m3 r;\n"                                                                    \
    "    if (a > 0x7f800000u) { r.bits = (unsigned char)(s | 0x7fu); return r; }\n"            \
    "    if (a >= 0x43e00000u) { r.bits = (unsigned char)(s | 0x7eu); return r; } /* 448 */\n" \
    "    if (a < 0x3c800000u) { /* below 2^-6: subnormal steps of 2^-9 */\n"                   \
    "        r.bits = (unsigned char)(s | (unsigned int)rintf(__uint_as_float(a) * 512.0f));\n" \
    "        return r;\n"                                                                     \
    "    }\n"                                                                                 \
    "    unsigned int e = (a >> 23) - 120u, m = (a >> 20) & 7u, rem = a & 0xfffffu;\n"         \
    "    if (rem > 0x80000u || (rem == 0x80000u && (m & 1u))) /* to nearest, ties even */\n"  \
    "        if (++m == 8u) { m = 0u; ++e; }\n"                                                 \
    "    unsigned int b = (e << 3) | m;\n"                                                    \
    "    r.bits = (unsigned char)(s | (b > 0x7eu ? 0x7eu : b));\n"                             \
    "    return r;\n"                                                                         \
    "}\n"                                                                                     \
    "/* Two at once, packed as stored: lo in bits 0-7, hi in bits 8-15. Same results as two\n" \
    " * amk_fp8e4m3_from_float calls; where the vendor part has a hardware conversion\n"        \
    " * (AMK__FP8E4M3X2_HW) it is used, see there for where the two could differ. */\n"        \
    "AMK_INLINE unsigned short amk_fp8e4m3x2_from_float(float lo, float hi) {\n"            \
    "#if defined(AMK__FP8E4M3X2_HW)\n"                                                        \
    "    return amk__fp8e4m3x2_hw(lo, hi);\n"                                                 \
    "#else\n"                                                                                 \
    "    return (unsigned short)(amk_fp8e4m3_from_float(lo).bits |\n"                          \
    "                            (amk_fp8e4m3_from_float(hi).bits << 8));\n"                   \
    "#endif\n"                                                                                \
    "}\n"                                                                                     \
    "/* Round half away from zero, saturating to [-128, 127]; NaN -> 0. */\n"               \
    "AMK_INLINE signed char amk_i8_from_float(float f) {\n"                                   \
    "    if (!(f == f)) return 0;\n"                                                          \
    "    f = roundf(f);\n"                                                                    \
    "    return (signed char)(f > 127.0f ? 127.0f : (f < -128.0f ? -128.0f : f));\n"           \
    "}\n"                                                                                     \
    "\n"                                                                                      \
    "template <typename T> struct amk__from_float;\n"                                         \
    "template <> struct amk__from_float<float> {\n"                                           \
    "    static AMK_INLINE float cvt(float x) { return x; } };\n"                             \
    "template <> struct amk__from_float<amk_f16> {\n"                                         \
    "    static AMK_INLINE amk_f16 cvt(float x) { return amk_f16_from_float(x); } };\n"       \
    "template <> struct amk__from_float<amk_bf16> {\n"                                        \
    "    static AMK_INLINE amk_bf16 cvt(float x) { return amk_bf16_from_float(x); } };\n"     \
    "template <> struct amk__from_float<amk_fp8e4m3> {\n"                                     \
    "    static AMK_INLINE amk_fp8e4m3 cvt(float x) { return amk_fp8e4m3_from_float(x); } };\n" \
    "template <> struct amk__from_float<signed char> {\n"                                     \
    "    static AMK_INLINE signed char cvt(float x) { return amk_i8_from_float(x); } };\n"    \
    "/* amk_from_float<amk_t>(x): float to any storage type. */\n"                            \
    "template <typename T> AMK_INLINE T amk_from_float(float x) {\n"                          \
    "    return amk__from_float<T>::cvt(x);\n"                                                \
    "}\n"                                                                                     \
    "\n"                                                                                      \
    "/* amk_t: the element type of the shape's dtype (-DAMK_T_<DTYPE>=1 from the evaluator).\n" \
    " * Left undefined when no dtype define is given, so a template that needs it fails to\n" \
    " * compile with a clear message instead of silently picking a type. */\n"              \
    "#if defined(AMK_T_F32)\n"                                                                \
    "typedef float amk_t;\n"                                                                  \
    "#elif defined(AMK_T_F16)\n"                                                              \
    "typedef amk_f16 amk_t;\n"                                                                \
    "#elif defined(AMK_T_BF16)\n"                                                             \
    "typedef amk_bf16 amk_t;\n"                                                               \
    "#elif defined(AMK_T_FP8E4M3)\n"                                                          \
    "typedef amk_fp8e4m3 amk_t;\n"                                                            \
    "#elif defined(AMK_T_INT8)\n"                                                             \
    "typedef signed char amk_t;\n"                                                            \
    "#endif\n"                                                                                \
    "/* ---- end of amk prelude ---- */\n"

static const char prelude_nvidia[] =
    "/* ---- amk prelude: nvidia (NVRTC, CUDA dialect) ---- */\n"
    "#define AMK_VENDOR_NVIDIA 1\n"
    "#define AMK_WARP 32\n"
    "#define AMK_KERNEL extern \"C\" __global__\n"
    "#define AMK_INLINE __device__ __forceinline__\n"
    "/* A spec's tensor map (\"tensor_maps\"), as the kernel receives it: by value, declared\n"
    " * `const __grid_constant__ amk_tensor_map tm`; &tm feeds cp.async.bulk.tensor. */\n"
    "struct __align__(64) amk_tensor_map { unsigned long long opaque[16]; };\n"
    "/* Butterfly exchange within the warp; every lane of the warp must call it. */\n"
    "AMK_INLINE float amk_shfl_xor(float v, int lane_mask) {\n"
    "    return __shfl_xor_sync(0xffffffffu, v, lane_mask);\n"
    "}\n"
    "AMK_INLINE float amk__f16_bits_to_float(unsigned short b) {\n"
    "    float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(b)); return f;\n"
    "}\n"
    "AMK_INLINE unsigned short amk__float_to_f16_bits(float f) {\n"
    "    unsigned short b; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(b) : \"f\"(f)); return b;\n"
    "}\n"
    "/* sm_89+: two floats to two OCP e4m3 in one instruction (a -> bits 8-15, b -> bits 0-7),\n"
    " * round to nearest even with subnormals, satfinite: +-inf and |v| that rounds above 448\n"
    " * give +-448, as amk_fp8e4m3_from_float. Only a NaN input may come out differently (the\n"
    " * PTX ISA promises a NaN, not the software's sign-kept s|0x7f); v = x / scale of a finite\n"
    " * x is never NaN. bench/fp8_cvt_check.sh compares the two on all 2^32 inputs. */\n"
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890\n"
    "#define AMK__FP8E4M3X2_HW 1\n"
    "AMK_INLINE unsigned short amk__fp8e4m3x2_hw(float lo, float hi) {\n"
    "    unsigned short b;\n"
    "    asm(\"cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\" : \"=h\"(b) : \"f\"(hi), \"f\"(lo));\n"
    "    return b;\n"
    "}\n"
    "#endif\n" AMK__PRELUDE_COMMON;

static const char prelude_amd[] =
    "/* ---- amk prelude: amd (hipRTC, HIP dialect) ---- */\n"
    "#define AMK_VENDOR_AMD 1\n"
    "#ifdef __AMDGCN_WAVEFRONT_SIZE\n"
    "#define AMK_WARP __AMDGCN_WAVEFRONT_SIZE\n"
    "#else\n"
    "#define AMK_WARP 64\n"
    "#endif\n"
    "#define AMK_KERNEL extern \"C\" __global__\n"
    "#define AMK_INLINE __device__ __forceinline__\n"
    "/* Butterfly exchange within the wavefront; every lane of the wavefront must call it. */\n"
    "AMK_INLINE float amk_shfl_xor(float v, int lane_mask) {\n"
    "    return __shfl_xor(v, lane_mask);\n"
    "}\n"
    "/* _Float16 is a native clang type on AMDGPU: the conversions are single instructions. */\n"
    "AMK_INLINE float amk__f16_bits_to_float(unsigned short b) {\n"
    "    _Float16 h; __builtin_memcpy(&h, &b, 2); return (float)h;\n"
    "}\n"
    "AMK_INLINE unsigned short amk__float_to_f16_bits(float f) {\n"
    "    _Float16 h = (_Float16)f; unsigned short b; __builtin_memcpy(&b, &h, 2); return b;\n"
    "}\n" AMK__PRELUDE_COMMON;

const char *amk_prelude(const char *vendor)
{
    if (!vendor)
        return NULL;
    if (strcmp(vendor, "nvidia") == 0)
        return prelude_nvidia;
    if (strcmp(vendor, "amd") == 0)
        return prelude_amd;
    return NULL;
}

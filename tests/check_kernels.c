/* Check suite for the built-in kernels: the vendor preludes, the host references (against
 * values worked out here by other means: closed forms, hand examples, exhaustive bit
 * patterns) and the gemm / rmsnorm spec folders (valid JSON, existing sources, loadable,
 * default configs valid, cost and launch as designed). */
#include "amk_cost_model.h"
#include "amk_evaluator.h"
#include "amk_test.h"

#include <cjson/cJSON.h>

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KDIR AMK_SOURCE_KERNELS_DIR

/* H100 limits as in DESIGN.md section 4 (what the restrictions are written against). */
static amk_limits h100_limits(void)
{
    amk_limits l;
    memset(&l, 0, sizeof l);
    l.max_threads = 1024;
    l.max_smem = 49152;
    l.max_smem_optin = 232448;
    l.smem_per_sm = 233472;
    l.warp = 32;
    l.sm_count = 132;
    l.regs_per_sm = 65536;
    l.max_regs_per_thread = 255;
    l.max_blocks_per_sm = 32;
    l.max_threads_per_sm = 2048;
    l.max_grid_x = 2147483647;
    l.max_grid_yz = 65535;
    l.l2_bytes = 50LL << 20;
    return l;
}

static amk_spec *load_kernel(const char *name)
{
    char dir[512];
    amk_spec *s = NULL;
    amk_diag d = {0};
    snprintf(dir, sizeof dir, "%s/%s", KDIR, name);
    int rc = amk_spec_load(dir, &s, &d);
    ck_assert_msg(rc == AMK_OK, "%s: %s", dir, d.msg);
    return s;
}

static amk_config config_at(const amk_spec *s, const char *shape)
{
    amk_shape sh;
    amk_config c;
    amk_diag d = {0};
    ck_assert_msg(amk_shape_parse(s, shape, &sh, &d) == AMK_OK, "%s: %s", shape, d.msg);
    amk_config_default(s, &sh, &c);
    return c;
}

/* ---------- amk_prelude ------------------------------------------------------------------ */

static void assert_prelude_contract(const char *p)
{
    ck_assert_ptr_nonnull(p);
    ck_assert_int_gt((int)strlen(p), 500);
    const char *must[] = {"struct amk_f16", "struct amk_bf16", "amk_to_float(amk_f16",
                          "amk_to_float(amk_bf16", "amk_from_float", "AMK_WARP",
                          "#define AMK_KERNEL extern \"C\" __global__", "amk_shfl_xor",
                          "AMK_T_F32", "AMK_T_F16", "AMK_T_BF16", "typedef amk_bf16 amk_t"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        ck_assert_msg(strstr(p, must[i]), "prelude lacks '%s'", must[i]);
    /* Templates and the prelude include no headers (they must compile with no -I). */
    ck_assert_ptr_null(strstr(p, "#include"));
}

START_TEST(test_amk_prelude_nvidia_defines_the_contract)
{
    const char *p = amk_prelude("nvidia");
    assert_prelude_contract(p);
    ck_assert_ptr_nonnull(strstr(p, "#define AMK_WARP 32"));
    ck_assert_ptr_nonnull(strstr(p, "__shfl_xor_sync"));
    ck_assert_ptr_nonnull(strstr(p, "cvt.rn.f16.f32"));
    /* fp8 pairs: the hardware conversion only where the arch has it, else the software one. */
    const char *hw = strstr(p, "cvt.rn.satfinite.e4m3x2.f32");
    const char *guard = strstr(p, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890");
    ck_assert_ptr_nonnull(hw);
    ck_assert_ptr_nonnull(guard);
    ck_assert(guard < hw);
    ck_assert_ptr_nonnull(strstr(p, "amk_fp8e4m3x2_from_float(float lo, float hi)"));
}
END_TEST

START_TEST(test_amk_prelude_amd_defines_the_contract)
{
    const char *p = amk_prelude("amd");
    assert_prelude_contract(p);
    ck_assert_ptr_nonnull(strstr(p, "#define AMK_WARP 64"));
    ck_assert_ptr_nonnull(strstr(p, "__shfl_xor(v"));
    ck_assert_ptr_null(strstr(p, "__shfl_xor_sync"));
    ck_assert_ptr_null(strstr(p, "asm("));
    ck_assert_ptr_null(strstr(p, "e4m3x2.f32"));
    ck_assert_ptr_nonnull(strstr(p, "amk_fp8e4m3x2_from_float(float lo, float hi)"));
    ck_assert_str_ne(p, amk_prelude("nvidia"));
}
END_TEST

START_TEST(test_amk_prelude_unknown_vendor_is_null)
{
    ck_assert_ptr_null(amk_prelude("intel"));
    ck_assert_ptr_null(amk_prelude(""));
    ck_assert_ptr_null(amk_prelude(NULL));
    ck_assert_ptr_null(amk_prelude("NVIDIA"));
}
END_TEST

/* ---------- amk_host_ref_find ------------------------------------------------------------ */

START_TEST(test_amk_host_ref_find_knows_the_builtins)
{
    ck_assert_ptr_nonnull(amk_host_ref_find("gemm_f32"));
    ck_assert_ptr_nonnull(amk_host_ref_find("rmsnorm"));
    ck_assert_ptr_ne((void *)amk_host_ref_find("gemm_f32"), (void *)amk_host_ref_find("rmsnorm"));
    ck_assert_ptr_null(amk_host_ref_find("gemm"));
    ck_assert_ptr_null(amk_host_ref_find(""));
    ck_assert_ptr_null(amk_host_ref_find(NULL));
}
END_TEST

/* ---------- gemm_f32 --------------------------------------------------------------------- */

START_TEST(test_gemm_f32_hand_example)
{
    amk_spec *s = load_kernel("gemm");
    amk_config c = config_at(s, "M=2,N=2,K=3");
    float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {7, 8, 9, 10, 11, 12}, C[4] = {NAN, NAN, NAN, NAN};
    amk_host_buffer bufs[3] = {{"C", "f32", C, 4}, {"A", "f32", A, 6}, {"B", "f32", B, 6}};
    amk_diag d = {0};
    ck_assert_msg(amk_host_ref_find("gemm_f32")(&c, bufs, 3, &d) == AMK_OK, "%s", d.msg);
    ck_assert_float_eq(C[0], 58);
    ck_assert_float_eq(C[1], 64);
    ck_assert_float_eq(C[2], 139);
    ck_assert_float_eq(C[3], 154);
    amk_spec_free(s);
}
END_TEST

/* A[m][k] = m + 1 - k, B[k][n] = k + 2n - 3: with a = m + 1, b = 2n - 3,
 * C[m][n] = sum_k (a - k)(k + b) = (a - b) S1 + a b K - S2, S1 = sum k, S2 = sum k^2.
 * Small integers: every product and sum is exact in float. */
START_TEST(test_gemm_f32_integer_closed_form_odd_sizes)
{
    enum { M = 5, N = 7, K = 9 };
    amk_spec *s = load_kernel("gemm");
    amk_config c = config_at(s, "M=5,N=7,K=9");
    float A[M * K], B[K * N], C[M * N];
    for (int m = 0; m < M; m++)
        for (int k = 0; k < K; k++)
            A[m * K + k] = (float)(m + 1 - k);
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++)
            B[k * N + n] = (float)(k + 2 * n - 3);
    for (int i = 0; i < M * N; i++)
        C[i] = NAN;
    amk_host_buffer bufs[3] = {{"A", "f32", A, M * K}, {"B", "f32", B, K * N},
                               {"C", "f32", C, M * N}};
    amk_diag d = {0};
    ck_assert_msg(amk_host_ref_find("gemm_f32")(&c, bufs, 3, &d) == AMK_OK, "%s", d.msg);
    const long S1 = (long)K * (K - 1) / 2, S2 = (long)(K - 1) * K * (2 * K - 1) / 6;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            long a = m + 1, b = 2 * n - 3;
            long want = (a - b) * S1 + a * b * K - S2;
            ck_assert_msg(C[m * N + n] == (float)want, "C[%d][%d] = %g, want %ld", m, n,
                          C[m * N + n], want);
        }
    amk_spec_free(s);
}
END_TEST

START_TEST(test_gemm_f32_reads_bf16_bit_patterns)
{
    amk_spec *s = load_kernel("gemm");
    amk_config c = config_at(s, "M=1,N=1,K=3");
    uint16_t A[3] = {0x3fc0, 0xbe80, 0x0001}; /* 1.5, -0.25, 2^-133 (subnormal) */
    uint16_t B[3] = {0x4000, 0x4040, 0x0000}; /* 2, 3, 0 */
    float C[1] = {NAN};
    amk_host_buffer bufs[3] = {{"A", "bf16", A, 3}, {"B", "bf16", B, 3}, {"C", "f32", C, 1}};
    amk_diag d = {0};
    ck_assert_msg(amk_host_ref_find("gemm_f32")(&c, bufs, 3, &d) == AMK_OK, "%s", d.msg);
    ck_assert_float_eq(C[0], 2.25f);
    /* Infinity decodes as infinity: inf * 0 is NaN, inf * 1 stays inf (f16 input). */
    uint16_t inf_zero[3] = {0x7f80, 0, 0}, f16_inf[3] = {0x7c00, 0, 0}, f16_one[3] = {0x3c00, 0, 0};
    amk_host_buffer nan_case[3] = {{"A", "bf16", inf_zero, 3}, {"B", "bf16", B + 0, 3},
                                   {"C", "f32", C, 1}};
    B[0] = 0;
    ck_assert_msg(amk_host_ref_find("gemm_f32")(&c, nan_case, 3, &d) == AMK_OK, "%s", d.msg);
    ck_assert(isnan(C[0]));
    amk_host_buffer inf_case[3] = {{"A", "f16", f16_inf, 3}, {"B", "f16", f16_one, 3},
                                   {"C", "f32", C, 1}};
    ck_assert_msg(amk_host_ref_find("gemm_f32")(&c, inf_case, 3, &d) == AMK_OK, "%s", d.msg);
    ck_assert(isinf(C[0]) && C[0] > 0);
    amk_spec_free(s);
}
END_TEST

/* One product per case, written to a 16-bit output: the exact value sits on or near a
 * rounding boundary, so the expected bit pattern checks round-to-nearest-even directly. */
START_TEST(test_gemm_f32_rounds_16_bit_outputs_to_nearest_even)
{
    static const struct {
        const char *dtype;
        double value;
        uint16_t bits;
    } cases[] = {
        {"f16", 1.0 + 0x1p-11, 0x3c00},       /* tie: to even mantissa 0 */
        {"f16", 1.0 + 3 * 0x1p-11, 0x3c02},   /* tie: to even mantissa 2 */
        {"f16", 1.0 + 0x1p-11 + 0x1p-20, 0x3c01}, /* just above the tie: up */
        {"f16", -2.0, 0xc000},
        {"f16", 65504.0, 0x7bff},             /* largest finite */
        {"f16", 65519.0, 0x7bff},             /* below the overflow tie */
        {"f16", 65520.0, 0x7c00},             /* overflow tie rounds to inf */
        {"f16", 0x1p-24, 0x0001},             /* smallest subnormal */
        {"f16", 0x1p-25, 0x0000},             /* tie between 0 and 2^-24: to 0 */
        {"f16", 3 * 0x1p-25, 0x0002},         /* tie between 1 and 2 ulps: to 2 */
        {"f16", 0x1p-14 - 0x1p-25, 0x0400},   /* subnormal rounds up to the min normal */
        {"bf16", 1.0 + 0x1p-8, 0x3f80},
        {"bf16", 1.0 + 3 * 0x1p-8, 0x3f82},
        {"bf16", -0.15625, 0xbe20},
        {"bf16", 0x1p-133, 0x0001},
        {"bf16", 0x1p127 * (2.0 - 0x1p-8), 0x7f80}, /* overflow tie rounds to inf */
    };
    amk_spec *s = load_kernel("gemm");
    amk_config c = config_at(s, "M=1,N=1,K=1");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* C = 1 * value: every case value is exact in f32, so only C's rounding acts. */
        float a = 1.0f, b = (float)cases[i].value;
        ck_assert_msg((double)b == cases[i].value, "case %zu is not exact in f32", i);
        uint16_t out = 0xffff;
        amk_host_buffer bufs[3] = {{"A", "f32", &a, 1}, {"B", "f32", &b, 1},
                                   {"C", cases[i].dtype, &out, 1}};
        amk_diag d = {0};
        ck_assert_msg(amk_host_ref_find("gemm_f32")(&c, bufs, 3, &d) == AMK_OK, "%s", d.msg);
        ck_assert_msg(out == cases[i].bits, "%s(%a) = 0x%04x, want 0x%04x", cases[i].dtype,
                      cases[i].value, out, cases[i].bits);
    }
    amk_spec_free(s);
}
END_TEST

START_TEST(test_gemm_f32_rejects_bad_buffers)
{
    amk_spec *s = load_kernel("gemm");
    amk_config c = config_at(s, "M=2,N=2,K=3");
    float A[6] = {0}, B[6] = {0}, C[4] = {0};
    amk_host_ref_fn f = amk_host_ref_find("gemm_f32");
    amk_diag d = {0};

    amk_host_buffer missing[2] = {{"A", "f32", A, 6}, {"C", "f32", C, 4}};
    ck_assert_int_eq(f(&c, missing, 2, &d), AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "no buffer named B"));

    amk_host_buffer short_c[3] = {{"A", "f32", A, 6}, {"B", "f32", B, 6}, {"C", "f32", C, 3}};
    ck_assert_int_eq(f(&c, short_c, 3, &d), AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "C holds 3 elements, needs 4"));

    amk_host_buffer int8[3] = {{"A", "int8", A, 6}, {"B", "f32", B, 6}, {"C", "f32", C, 4}};
    ck_assert_int_eq(f(&c, int8, 3, &d), AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "int8"));

    ck_assert_int_eq(f(&c, NULL, 0, NULL), AMK_EINVAL); /* NULL diag is accepted */
    amk_spec_free(s);
}
END_TEST

/* ---------- rmsnorm ---------------------------------------------------------------------- */

START_TEST(test_rmsnorm_f32_known_rows)
{
    amk_spec *s = load_kernel("rmsnorm");
    amk_config c = config_at(s, "M=3,N=2,dtype=f32");
    float x[6] = {3, 4, 0, 0, -1e-3f, 1e-3f}, w[2] = {1, -2}, y[6];
    for (int i = 0; i < 6; i++)
        y[i] = NAN;
    amk_host_buffer bufs[3] = {{"x", "f32", x, 6}, {"w", "f32", w, 2}, {"y", "f32", y, 6}};
    amk_diag d = {0};
    ck_assert_msg(amk_host_ref_find("rmsnorm")(&c, bufs, 3, &d) == AMK_OK, "%s", d.msg);
    /* Row 0: mean square 12.5, so y = [3, -8] / sqrt(12.5 + 1e-6). */
    ck_assert_double_eq_tol(y[0], 0.8485281034827336, 1e-7);
    ck_assert_double_eq_tol(y[1], -2.2627416092872896, 1e-7);
    /* Row 1: all zero: eps keeps it finite and the output is zero. */
    ck_assert_float_eq(y[2], 0.0f);
    ck_assert_float_eq(y[3], 0.0f);
    /* Row 2: mean square 1e-6 equals eps: y = x / sqrt(2e-6) * w. */
    ck_assert_double_eq_tol(y[4], -1e-3 / sqrt(2e-6), 1e-6);
    ck_assert_double_eq_tol(y[5], -2e-3 / sqrt(2e-6), 1e-6);
    amk_spec_free(s);
}
END_TEST

/* x = one row of ones, so y = w / sqrt(1 + 1e-6) = w * (1 - 5e-7): that relative change is
 * far below half an ulp for every finite 16-bit value (subnormals included), so rounding
 * must give back exactly the input pattern. Run over all 65536 patterns. */
static void roundtrip_all_patterns(const char *dtype, uint16_t one, uint16_t exp_mask)
{
    enum { N = 65536 };
    amk_spec *s = load_kernel("rmsnorm");
    char shape[64];
    snprintf(shape, sizeof shape, "M=1,N=%d,dtype=%s", N, dtype);
    amk_config c = config_at(s, shape);
    uint16_t *x = malloc(N * sizeof *x), *w = malloc(N * sizeof *w), *y = malloc(N * sizeof *y);
    ck_assert(x && w && y);
    for (int i = 0; i < N; i++) {
        x[i] = one;
        w[i] = (uint16_t)i;
        y[i] = 0x5555;
    }
    amk_host_buffer bufs[3] = {{"x", dtype, x, N}, {"w", dtype, w, N}, {"y", dtype, y, N}};
    amk_diag d = {0};
    ck_assert_msg(amk_host_ref_find("rmsnorm")(&c, bufs, 3, &d) == AMK_OK, "%s", d.msg);
    int nan_seen = 0;
    for (int i = 0; i < N; i++) {
        int is_nan = (i & exp_mask) == exp_mask && (i & ~exp_mask & 0x7fff);
        if (is_nan) { /* NaN in, NaN out (quiet, any payload) */
            ck_assert_msg((y[i] & exp_mask) == exp_mask && (y[i] & ~exp_mask & 0x7fff),
                          "%s: NaN 0x%04x gave 0x%04x", dtype, i, y[i]);
            nan_seen++;
        } else {
            ck_assert_msg(y[i] == i, "%s: w = 0x%04x gave y = 0x%04x", dtype, i, y[i]);
        }
    }
    ck_assert_int_gt(nan_seen, 100);
    free(x);
    free(w);
    free(y);
    amk_spec_free(s);
}

START_TEST(test_rmsnorm_bf16_roundtrips_every_pattern)
{
    roundtrip_all_patterns("bf16", 0x3f80, 0x7f80);
}
END_TEST

START_TEST(test_rmsnorm_f16_roundtrips_every_pattern)
{
    roundtrip_all_patterns("f16", 0x3c00, 0x7c00);
}
END_TEST

/* Mean square computed from 16-bit inputs: row [1, 2, 2] in f16 has mean square 3, so
 * y = w / sqrt(3 + 1e-6) * x; check against the value computed here in long double. */
START_TEST(test_rmsnorm_f16_row_matches_long_double)
{
    amk_spec *s = load_kernel("rmsnorm");
    amk_config c = config_at(s, "M=1,N=3,dtype=f16");
    uint16_t x[3] = {0x3c00, 0x4000, 0x4000}, w[3] = {0x3c00, 0x3c00, 0xbc00}, y[3];
    amk_host_buffer bufs[3] = {{"x", "f16", x, 3}, {"w", "f16", w, 3}, {"y", "f16", y, 3}};
    amk_diag d = {0};
    ck_assert_msg(amk_host_ref_find("rmsnorm")(&c, bufs, 3, &d) == AMK_OK, "%s", d.msg);
    /* 1/sqrt(3) = 0.57735: f16 spacing in [0.5, 1) is 2^-11, so 0.57735 -> 1182.4 * 2^-11
     * -> mantissa 1182 - 1024 = 158 with exponent -1: 0x3800 | 158 = 0x389e. 2/sqrt(3) =
     * 1.1547 -> spacing 2^-10: 1182.4 -> 0x3c00 | 158 = 0x3c9e, negated 0xbc9e. */
    long double inv = 1.0L / sqrtl(3.0L + 1e-6L);
    ck_assert(fabsl(inv * 2048 - 1182.4L) < 0.1L);
    ck_assert_uint_eq(y[0], 0x389e);
    ck_assert_uint_eq(y[1], 0x3c9e);
    ck_assert_uint_eq(y[2], 0xbc9e);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_rmsnorm_rejects_bad_buffers)
{
    amk_spec *s = load_kernel("rmsnorm");
    amk_config c = config_at(s, "M=2,N=4,dtype=f32");
    float x[8] = {0}, w[4] = {0}, y[8] = {0};
    amk_host_ref_fn f = amk_host_ref_find("rmsnorm");
    amk_diag d = {0};
    amk_host_buffer short_w[3] = {{"x", "f32", x, 8}, {"w", "f32", w, 3}, {"y", "f32", y, 8}};
    ck_assert_int_eq(f(&c, short_w, 3, &d), AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "w holds 3 elements, needs 4"));
    amk_host_buffer fp8[3] = {{"x", "fp8e4m3", x, 8}, {"w", "f32", w, 4}, {"y", "f32", y, 8}};
    ck_assert_int_eq(f(&c, fp8, 3, &d), AMK_EINVAL);
    amk_host_buffer nodata[3] = {{"x", "f32", x, 8}, {"w", "f32", w, 4}, {"y", "f32", NULL, 8}};
    ck_assert_int_eq(f(&c, nodata, 3, &d), AMK_EINVAL);
    amk_spec_free(s);
}
END_TEST

/* ---------- spec folders ----------------------------------------------------------------- */

static void check_folder(const char *name, const char *host)
{
    char path[600];
    char *text = NULL;
    size_t len = 0;
    amk_diag d = {0};
    snprintf(path, sizeof path, "%s/%s/spec.json", KDIR, name);
    ck_assert_msg(amk_fs_read_all(path, &text, &len, &d) == AMK_OK, "%s", d.msg);
    cJSON *j = cJSON_Parse(text);
    ck_assert_msg(j, "%s is not valid JSON", path);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "name")->valuestring, name);

    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(j, "reference");
    const cJSON *srcs[2] = {j, ref};
    for (int k = 0; k < 2; k++) {
        const char *src = cJSON_GetObjectItemCaseSensitive(srcs[k], "source")->valuestring;
        const char *entry = cJSON_GetObjectItemCaseSensitive(srcs[k], "entry")->valuestring;
        char spath[600], *body = NULL, needle[128];
        size_t blen = 0;
        snprintf(spath, sizeof spath, "%s/%s/%s", KDIR, name, src);
        ck_assert_msg(amk_fs_read_all(spath, &body, &blen, &d) == AMK_OK, "%s", d.msg);
        /* The entry is defined as an AMK_KERNEL and no system header is pulled in. */
        snprintf(needle, sizeof needle, "%s(", entry);
        ck_assert_msg(strstr(body, needle), "%s does not define %s", spath, entry);
        ck_assert_msg(strstr(body, "AMK_KERNEL"), "%s: no AMK_KERNEL", spath);
        ck_assert_msg(!strstr(body, "#include"), "%s includes a header", spath);
        free(body);
    }
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(ref, "host")->valuestring, host);
    ck_assert_ptr_nonnull(amk_host_ref_find(host));
    cJSON_Delete(j);
    free(text);
}

START_TEST(test_specs_are_json_and_name_existing_sources)
{
    check_folder("gemm", "gemm_f32");
    check_folder("rmsnorm", "rmsnorm");
    check_folder("gemm_tc", "gemm_tc");
    check_folder("softmax", "softmax");
    check_folder("gemv", "gemv");
    check_folder("quant_per_tensor", "quant_per_tensor");
}
END_TEST

/* Every named shape: the default config is valid on H100 limits. */
static void defaults_valid(const char *name)
{
    amk_spec *s = load_kernel(name);
    amk_limits lim = h100_limits();
    ck_assert_int_ge(amk_spec_n_shapes(s), 4);
    for (int i = 0; i < amk_spec_n_shapes(s); i++) {
        amk_shape sh;
        amk_config c;
        amk_diag d = {0};
        amk_spec_shape(s, i, &sh);
        amk_config_default(s, &sh, &c);
        ck_assert_msg(amk_config_check(&c, &lim, &d) == AMK_OK, "%s shape %s: %s", name,
                      amk_spec_shape_name(s, i), d.msg);
    }
    amk_spec_free(s);
}

START_TEST(test_specs_default_configs_valid_on_every_shape)
{
    defaults_valid("gemm");
    defaults_valid("rmsnorm");
    defaults_valid("gemm_tc");
    defaults_valid("quant_per_tensor");
}
END_TEST

/* The restrictions do not depend on the problem size (beyond grid limits): the odd `small`
 * gemm shape admits exactly the configs of the default shape. 10392 of the 15000 raw gemm
 * points and 120 of 120 rmsnorm points are valid on H100, counted independently from the
 * same rules (BM%TM, BN%TN, BK%VEC, 32 <= threads <= 1024, smem <= 232448; power-of-two
 * row groups). A change of choices or restrictions must update these numbers. */
START_TEST(test_specs_space_sizes)
{
    amk_limits lim = h100_limits();
    amk_diag d = {0};
    const struct {
        const char *kernel, *shape;
        int64_t count;
    } want[] = {{"gemm", "default", 10392}, {"gemm", "small", 10392},
                {"gemm", "M=1,N=1,K=1", 10392}, {"rmsnorm", "default", 120},
                {"rmsnorm", "ragged", 120}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        amk_spec *s = load_kernel(want[i].kernel);
        amk_shape sh;
        amk_space *sp = NULL;
        ck_assert_msg(amk_shape_parse(s, want[i].shape, &sh, &d) == AMK_OK, "%s", d.msg);
        ck_assert_msg(amk_space_create(s, &sh, &lim, &sp, &d) == AMK_OK, "%s", d.msg);
        ck_assert_msg(amk_space_count(sp) == want[i].count, "%s %s: %lld valid, want %lld",
                      want[i].kernel, want[i].shape, (long long)amk_space_count(sp),
                      (long long)want[i].count);
        amk_space_free(sp);
        amk_spec_free(s);
    }
}
END_TEST

START_TEST(test_specs_gemm_cost_and_launch)
{
    amk_spec *s = load_kernel("gemm");
    amk_limits lim = h100_limits();
    amk_config c = config_at(s, "default");
    amk_cost_terms t;
    amk_launch l;
    amk_diag d = {0};
    ck_assert_msg(amk_config_cost(&c, &lim, &t, &d) == AMK_OK, "%s", d.msg);
    const int64_t n = 4096;
    ck_assert_int_eq(t.flops, 2 * n * n * n);
    ck_assert_int_eq(t.min_bytes, 3 * n * n * 4);
    /* 128x128 tiles: A re-read 32 times, B 32 times, C written once. */
    ck_assert_int_eq(t.traffic_bytes, (n * n * 32 + n * n * 32 + n * n) * 4);
    ck_assert_int_gt(t.regs_estimate, 64 + 16);
    ck_assert_int_le(t.regs_estimate, 255);
    ck_assert_str_eq(t.unit, "simt_f32");
    ck_assert_msg(amk_config_launch(&c, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(l.grid[0], 32);
    ck_assert_int_eq(l.grid[1], 32);
    ck_assert_int_eq(l.grid[2], 1);
    ck_assert_int_eq(l.block[0], 256);
    ck_assert_int_eq(l.shared_bytes, 2 * 8 * (132 + 128) * 4); /* 2 stages, As padded +4 */

    /* small: grid rounds up, the restriction set is satisfied as for the default shape. */
    amk_config small = config_at(s, "small");
    ck_assert_msg(amk_config_launch(&small, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(l.grid[0], 4); /* cdiv(511, 128) */
    ck_assert_int_eq(l.grid[1], 3); /* cdiv(257, 128) */
    amk_spec_free(s);
}
END_TEST

START_TEST(test_specs_rmsnorm_cost_and_launch)
{
    amk_spec *s = load_kernel("rmsnorm");
    amk_limits lim = h100_limits();
    amk_config c = config_at(s, "ragged"); /* M=1023, N=3001, f16 */
    amk_cost_terms t;
    amk_launch l;
    amk_diag d = {0};
    ck_assert_msg(amk_config_cost(&c, &lim, &t, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(t.min_bytes, (2 * 1023LL * 3001 + 3001) * 2);
    ck_assert_int_eq(t.flops, 3 * 1023LL * 3001);
    ck_assert_str_eq(t.unit, "none");
    ck_assert_msg(amk_config_launch(&c, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(l.grid[0], 1023); /* ROWS = 1 by default */
    ck_assert_int_eq(l.block[0], 128); /* THREADS = 128 by default */
    amk_config b = config_at(s, "default");
    ck_assert_msg(amk_config_cost(&b, &lim, &t, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(t.min_bytes, (2 * 4096LL * 4096 + 4096) * 2); /* bf16 */
    amk_spec_free(s);
}
END_TEST

/* ---------- gemm_tc ---------------------------------------------------------------------- */

/* bf16 and f16 inputs, f32 output: a hand example with exactly representable values, and the
 * reference refuses an f32 input or a 16-bit output (the spec's C is always f32). */
START_TEST(test_gemm_tc_host_reference)
{
    amk_spec *s = load_kernel("gemm_tc");
    amk_config c = config_at(s, "M=2,N=2,K=3");
    /* A = [[1.5, -0.25, 2], [1, 0, -3]], B = [[2, 1], [3, 0.5], [0.5, -1]] in bf16. */
    uint16_t A[6] = {0x3fc0, 0xbe80, 0x4000, 0x3f80, 0x0000, 0xc040};
    uint16_t B[6] = {0x4000, 0x3f80, 0x4040, 0x3f00, 0x3f00, 0xbf80};
    float C[4] = {NAN, NAN, NAN, NAN};
    amk_host_buffer bufs[3] = {{"A", "bf16", A, 6}, {"B", "bf16", B, 6}, {"C", "f32", C, 4}};
    amk_diag d = {0};
    amk_host_ref_fn f = amk_host_ref_find("gemm_tc");
    ck_assert_ptr_nonnull(f);
    ck_assert_msg(f(&c, bufs, 3, &d) == AMK_OK, "%s", d.msg);
    ck_assert_float_eq(C[0], 3.0f - 0.75f + 1.0f);  /* 3.25 */
    ck_assert_float_eq(C[1], 1.5f - 0.125f - 2.0f); /* -0.625 */
    ck_assert_float_eq(C[2], 2.0f - 1.5f);          /* 0.5 */
    ck_assert_float_eq(C[3], 1.0f + 3.0f);          /* 4 */
    /* The same values in f16 bit patterns give the same sums. */
    uint16_t Ah[6] = {0x3e00, 0xb400, 0x4000, 0x3c00, 0x0000, 0xc200};
    uint16_t Bh[6] = {0x4000, 0x3c00, 0x4200, 0x3800, 0x3800, 0xbc00};
    amk_host_buffer hb[3] = {{"A", "f16", Ah, 6}, {"B", "f16", Bh, 6}, {"C", "f32", C, 4}};
    ck_assert_msg(f(&c, hb, 3, &d) == AMK_OK, "%s", d.msg);
    ck_assert_float_eq(C[0], 3.25f);
    ck_assert_float_eq(C[3], 4.0f);
    float Af[6] = {0};
    amk_host_buffer bad_in[3] = {{"A", "f32", Af, 6}, {"B", "bf16", B, 6}, {"C", "f32", C, 4}};
    ck_assert_int_ne(f(&c, bad_in, 3, &d), AMK_OK);
    uint16_t C16[4];
    amk_host_buffer bad_out[3] = {{"A", "bf16", A, 6}, {"B", "bf16", B, 6}, {"C", "bf16", C16, 4}};
    ck_assert_int_ne(f(&c, bad_out, 3, &d), AMK_OK);
    amk_spec_free(s);
}
END_TEST

/* The default config: 128x128 tile of 4 warps, 3 stages of padded bf16 slices, a 1-D grid. */
START_TEST(test_specs_gemm_tc_cost_and_launch)
{
    amk_spec *s = load_kernel("gemm_tc");
    amk_limits lim = h100_limits();
    amk_config c = config_at(s, "default");
    amk_launch l;
    amk_cost_terms t;
    amk_diag d = {0};
    ck_assert_msg(amk_config_launch(&c, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(l.grid[0], 32 * 32);
    ck_assert_int_eq(l.block[0], 128);
    ck_assert_int_eq(l.shared_bytes, 3 * (128 * 40 + 32 * 136) * 2);
    ck_assert_msg(amk_config_cost(&c, &lim, &t, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(t.flops, 2 * 4096LL * 4096 * 4096);
    ck_assert_int_eq(t.min_bytes, 2 * 4096LL * 4096 * 2 + 4096LL * 4096 * 4);
    amk_config o = config_at(s, "small");
    ck_assert_msg(amk_config_launch(&o, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(l.grid[0], 3 * 4); /* cdiv(257,128) * cdiv(511,128) */
    amk_spec_free(s);
}
END_TEST

/* A gemm_tc config on a shape from params given as compact JSON (SPLIT_K included). */
static amk_config tc_config(const amk_spec *s, const char *shape, const char *params)
{
    amk_shape sh;
    amk_config c;
    amk_diag d = {0};
    ck_assert_msg(amk_shape_parse(s, shape, &sh, &d) == AMK_OK, "%s: %s", shape, d.msg);
    ck_assert_msg(amk_config_from_params_json(s, &sh, params, &c, &d) == AMK_OK, "%s: %s",
                  params, d.msg);
    return c;
}

#define TC_DECODE_S16 \
    "{\"BK\":64,\"BM\":16,\"BN\":128,\"GROUP_M\":1,\"SPLIT_K\":16,\"STAGES\":3,\"WM\":16,\"WN\":32}"
#define TC_DECODE_S1 \
    "{\"BK\":64,\"BM\":16,\"BN\":128,\"GROUP_M\":1,\"SPLIT_K\":1,\"STAGES\":3,\"WM\":16,\"WN\":32}"

/* Split-K on the decode shape (16x4096x14336): SPLIT_K blocks per tile in the grid, a
 * workspace of SPLIT_K partial tiles per tile plus one counter each, partial traffic in the
 * model; SPLIT_K = 1 keeps the plain kernel's grid, traffic and a one-element workspace. */
START_TEST(test_specs_gemm_tc_split_k_cost_and_launch)
{
    amk_spec *s = load_kernel("gemm_tc");
    amk_limits lim = h100_limits();
    amk_diag d = {0};
    amk_launch l;
    amk_cost_terms t1, t16;
    int64_t ws = 0, uniform = 0;
    const int64_t M = 16, N = 4096, K = 14336, tiles = N / 128;

    amk_config c1 = tc_config(s, "decode", TC_DECODE_S1);
    ck_assert_msg(amk_config_check(&c1, &lim, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_config_launch(&c1, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(l.grid[0], tiles);
    ck_assert_msg(amk_config_eval(&c1, &lim, "ws_count", &ws, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(ws, 1);
    ck_assert_msg(amk_config_cost(&c1, &lim, &t1, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(t1.traffic_bytes, (M * K * tiles + K * N * 1) * 2 + M * N * 4);

    amk_config c16 = tc_config(s, "decode", TC_DECODE_S16);
    ck_assert_msg(amk_config_check(&c16, &lim, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_config_launch(&c16, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(l.grid[0], tiles * 16);
    ck_assert_int_eq(l.block[0], 4 * 32); /* 128/32 warps of 16x32 */
    ck_assert_msg(amk_config_eval(&c16, &lim, "ws_count", &ws, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(ws, tiles * 16 * 16 * 128 + tiles);
    ck_assert_msg(amk_config_cost(&c16, &lim, &t16, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(t16.flops, t1.flops);
    ck_assert_int_eq(t16.min_bytes, t1.min_bytes);
    /* Every split stores its partial, the last reads the others and zeroes all of them. */
    ck_assert_int_eq(t16.traffic_bytes - t1.traffic_bytes, (3 * 16 - 1) * tiles * 16 * 128 * 4);
    /* 224 K slices of 64 split 16 ways evenly: every block does the same work. */
    const amk_expr *u = amk_spec_cost_expr(s, "uniform_blocks");
    ck_assert_ptr_nonnull(u);
    ck_assert_msg(amk_config_eval_expr(&c16, &lim, u, &uniform, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(uniform, 1);
    amk_spec_free(s);
}
END_TEST

/* SPLIT_K is at most the number of K slices, and the workspace must fit in L2: the square
 * shapes keep exactly the 3528 valid configs of the recorded SPLIT_K = 1 sweep. */
START_TEST(test_specs_gemm_tc_split_k_restrictions)
{
    amk_spec *s = load_kernel("gemm_tc");
    amk_limits lim = h100_limits();
    amk_diag d = {0};
    /* small: K = 129 is 3 slices of 64. */
    amk_config ok = tc_config(s, "small", "{\"BK\":64,\"BM\":64,\"BN\":64,\"GROUP_M\":4,"
                                          "\"SPLIT_K\":2,\"STAGES\":3,\"WM\":32,\"WN\":32}");
    ck_assert_msg(amk_config_check(&ok, &lim, &d) == AMK_OK, "%s", d.msg);
    amk_config many = tc_config(s, "small", "{\"BK\":64,\"BM\":64,\"BN\":64,\"GROUP_M\":4,"
                                            "\"SPLIT_K\":4,\"STAGES\":3,\"WM\":32,\"WN\":32}");
    ck_assert_int_ne(amk_config_check(&many, &lim, &d), AMK_OK);
    ck_assert_msg(strstr(d.msg, "SPLIT_K <= cdiv(K, BK)"), "%s", d.msg);
    /* default 4096^3, 128x128 tiles: 1024 tiles x 2 partials of 64 KiB = 128 MiB > L2. */
    amk_config big = tc_config(s, "default", "{\"BK\":32,\"BM\":128,\"BN\":128,\"GROUP_M\":8,"
                                             "\"SPLIT_K\":2,\"STAGES\":3,\"WM\":64,\"WN\":64}");
    ck_assert_int_ne(amk_config_check(&big, &lim, &d), AMK_OK);
    ck_assert_msg(strstr(d.msg, "l2_bytes"), "%s", d.msg);
    amk_shape sh;
    amk_space *sp = NULL;
    ck_assert_msg(amk_shape_parse(s, "default", &sh, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_space_create(s, &sh, &lim, &sp, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_space_count(sp), 3528);
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

/* Representative split-K configs (and the plain kernel) compile with the build's runtime
 * compiler: NVRTC for sm_90, hipRTC for gfx90a in the HIP configuration. Each is valid on
 * that target. A build without a GPU vendor layer has no compiler: the case is then skipped
 * (check_kernels_compiler, tests/amk_test.h). */
static const char *why_no_compiler(void)
{
#if defined(AMK_HAVE_GPU)
    return NULL;
#else
    return "this build has no runtime compiler (configure with AMK_CUDA=ON or AMK_HIP=ON)";
#endif
}

START_TEST(test_gemm_tc_split_k_compiles)
{
#if defined(AMK_GPU_HIP)
    const char *arch = "gfx90a", *target = "mi250x";
#else
    const char *arch = "sm_90", *target = "h100";
#endif
    static const struct {
        const char *shape, *params;
    } want[] = {
        {"decode", TC_DECODE_S16},
        {"decode", "{\"BK\":32,\"BM\":16,\"BN\":64,\"GROUP_M\":8,\"SPLIT_K\":8,"
                   "\"STAGES\":3,\"WM\":16,\"WN\":16}"},
        {"small_f16", "{\"BK\":32,\"BM\":64,\"BN\":64,\"GROUP_M\":4,\"SPLIT_K\":4,"
                      "\"STAGES\":2,\"WM\":32,\"WN\":32}"},
        {"small", "{\"BK\":16,\"BM\":32,\"BN\":32,\"GROUP_M\":1,\"SPLIT_K\":2,"
                  "\"STAGES\":2,\"WM\":16,\"WN\":16}"},
        {"decode", TC_DECODE_S1},
    };
    enum { N_CFG = sizeof want / sizeof want[0] };
    const amk_target *t = amk_target_find(target);
    ck_assert_ptr_nonnull(t);
    amk_spec *s = load_kernel("gemm_tc");
    amk_config cfgs[N_CFG];
    const amk_config *ptr[N_CFG];
    amk_diag d = {0};
    for (int i = 0; i < N_CFG; i++) {
        cfgs[i] = tc_config(s, want[i].shape, want[i].params);
        ck_assert_msg(amk_config_check(&cfgs[i], &t->limits, &d) == AMK_OK, "%s on %s: %s",
                      want[i].params, target, d.msg);
        ptr[i] = &cfgs[i];
    }
    amk_backend_opts o = {0};
    o.jobs = 2;
    amk_compile_result r[N_CFG];
    int rc = amk_compile_batch(ptr, N_CFG, arch, &o, r, &d);
    ck_assert_msg(rc == AMK_OK, "%s", d.msg);
    for (int i = 0; i < N_CFG; i++)
        ck_assert_msg(r[i].status == AMK_STATUS_OK && r[i].code_bytes > 0, "%s %s for %s: %s: %s",
                      want[i].shape, want[i].params, arch, amk_status_name(r[i].status),
                      r[i].reason);
    amk_spec_free(s);
}
END_TEST

/* ---------- softmax, gemv, quant_per_tensor -------------------------------------------- */

/* softmax: closed forms (equal entries give 1/N, [0, ln 3] gives [1/4, 3/4]) and shift
 * invariance (a row of large values does not overflow). */
START_TEST(test_softmax_host_reference)
{
    amk_spec *s = load_kernel("softmax");
    amk_config c = config_at(s, "M=3,N=2,dtype=f32");
    float x[6] = {5, 5, 0, (float)log(3.0), 1000, 1000 + (float)log(3.0)}, y[6];
    for (int i = 0; i < 6; i++)
        y[i] = NAN;
    amk_host_buffer bufs[2] = {{"x", "f32", x, 6}, {"y", "f32", y, 6}};
    amk_diag d = {0};
    amk_host_ref_fn f = amk_host_ref_find("softmax");
    ck_assert_ptr_nonnull(f);
    ck_assert_msg(f(&c, bufs, 2, &d) == AMK_OK, "%s", d.msg);
    ck_assert_double_eq_tol(y[0], 0.5, 1e-7);
    ck_assert_double_eq_tol(y[1], 0.5, 1e-7);
    ck_assert_double_eq_tol(y[2], 0.25, 1e-7);
    ck_assert_double_eq_tol(y[3], 0.75, 1e-7);
    ck_assert_double_eq_tol(y[4], 0.25, 1e-4); /* 1000 + ln 3 is not exact in f32 */
    ck_assert_double_eq_tol(y[5], 0.75, 1e-4);
    /* bf16 in and out: one row of four equal values gives 0.25 exactly (0x3e80). */
    amk_config c2 = config_at(s, "M=1,N=4,dtype=bf16");
    uint16_t xb[4] = {0x3f80, 0x3f80, 0x3f80, 0x3f80}, yb[4] = {0};
    amk_host_buffer bb[2] = {{"x", "bf16", xb, 4}, {"y", "bf16", yb, 4}};
    ck_assert_msg(f(&c2, bb, 2, &d) == AMK_OK, "%s", d.msg);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(yb[i], 0x3e80);
    amk_host_buffer short_y[2] = {{"x", "f32", x, 6}, {"y", "f32", y, 5}};
    ck_assert_int_ne(f(&c, short_y, 2, &d), AMK_OK);
    amk_spec_free(s);
}
END_TEST

/* gemv: a hand example in bf16 with exactly representable products; y is f32. */
START_TEST(test_gemv_host_reference)
{
    amk_spec *s = load_kernel("gemv");
    amk_config c = config_at(s, "N=2,K=3");
    /* W = [[1.5, -0.25, 2], [1, 0, -3]], x = [2, 3, 0.5] in bf16. */
    uint16_t W[6] = {0x3fc0, 0xbe80, 0x4000, 0x3f80, 0x0000, 0xc040};
    uint16_t x[3] = {0x4000, 0x4040, 0x3f00};
    float y[2] = {NAN, NAN};
    amk_host_buffer bufs[3] = {{"W", "bf16", W, 6}, {"x", "bf16", x, 3}, {"y", "f32", y, 2}};
    amk_diag d = {0};
    amk_host_ref_fn f = amk_host_ref_find("gemv");
    ck_assert_ptr_nonnull(f);
    ck_assert_msg(f(&c, bufs, 3, &d) == AMK_OK, "%s", d.msg);
    ck_assert_float_eq(y[0], 3.0f - 0.75f + 1.0f);
    ck_assert_float_eq(y[1], 2.0f - 1.5f);
    amk_host_buffer short_x[3] = {{"W", "bf16", W, 6}, {"x", "bf16", x, 2}, {"y", "f32", y, 2}};
    ck_assert_int_ne(f(&c, short_x, 3, &d), AMK_OK);
    amk_spec_free(s);
}
END_TEST

/* quant_per_tensor: absmax 4 gives scale 4/127 (int8) or 4/448 (fp8); hand-checked codes,
 * saturation at the absmax element, round half to even at an exact tie, the workspace
 * left at zero. */
START_TEST(test_quant_per_tensor_host_reference)
{
    amk_spec *s = load_kernel("quant_per_tensor");
    amk_config c = config_at(s, "M=1,N=4,dtype=int8");
    /* x = [-4, 1, 0.5, 2] in bf16. */
    uint16_t x[4] = {0xc080, 0x3f80, 0x3f00, 0x4000};
    int8_t q[4] = {0};
    float scale = NAN, ws[2] = {7, 7};
    amk_host_buffer bufs[4] = {{"x", "bf16", x, 4}, {"q", "int8", q, 4},
                               {"scale", "f32", &scale, 1}, {"ws", "f32", ws, 2}};
    amk_diag d = {0};
    amk_host_ref_fn f = amk_host_ref_find("quant_per_tensor");
    ck_assert_ptr_nonnull(f);
    ck_assert_msg(f(&c, bufs, 4, &d) == AMK_OK, "%s", d.msg);
    ck_assert_float_eq(scale, 4.0f / 127.0f);
    ck_assert_int_eq(q[0], -127);
    ck_assert_int_eq(q[1], 32);  /* 31.75 */
    ck_assert_int_eq(q[2], 16);  /* 15.875 */
    ck_assert_int_eq(q[3], 64);  /* 63.5 in f32 arithmetic: tie, to even */
    ck_assert_float_eq(ws[0], 0.0f);
    ck_assert_float_eq(ws[1], 0.0f);
    /* fp8 e4m3: scale 4/448 = 1/112; x / scale = -448, 112, 56, 224 exactly. */
    amk_config c8 = config_at(s, "M=1,N=4,dtype=fp8e4m3");
    uint8_t q8[4] = {0};
    amk_host_buffer b8[3] = {{"x", "bf16", x, 4}, {"q", "fp8e4m3", q8, 4},
                             {"scale", "f32", &scale, 1}};
    ck_assert_msg(f(&c8, b8, 3, &d) == AMK_OK, "%s", d.msg);
    ck_assert_float_eq(scale, 4.0f / 448.0f);
    ck_assert_uint_eq(q8[0], 0xfe); /* -448: sign, exponent 15, mantissa 6 */
    ck_assert_uint_eq(q8[1], 0x6e); /* 112 = 1.75 * 2^6: exponent 6+7, mantissa 6 */
    ck_assert_uint_eq(q8[2], 0x66); /* 56 = 1.75 * 2^5 */
    ck_assert_uint_eq(q8[3], 0x76); /* 224 = 1.75 * 2^7 */
    amk_host_buffer bad_q[3] = {{"x", "bf16", x, 4}, {"q", "f32", &scale, 4},
                                {"scale", "f32", &scale, 1}};
    ck_assert_int_ne(f(&c8, bad_q, 3, &d), AMK_OK);
    amk_spec_free(s);
}
END_TEST

/* The three memory-bound specs: launch geometry and compulsory bytes of the defaults. */
START_TEST(test_specs_memory_bound_cost_and_launch)
{
    amk_limits lim = h100_limits();
    amk_launch l;
    amk_cost_terms t;
    amk_diag d = {0};
    amk_spec *s = load_kernel("softmax");
    amk_config c = config_at(s, "default");
    ck_assert_msg(amk_config_launch(&c, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(l.grid[0], 32768);
    ck_assert_msg(amk_config_cost(&c, &lim, &t, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(t.min_bytes, 2 * 32768LL * 4096 * 2);
    amk_spec_free(s);
    s = load_kernel("gemv");
    c = config_at(s, "default");
    ck_assert_msg(amk_config_launch(&c, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(l.grid[0], 14336 / 8); /* 256 threads, groups of 32, 1 row each */
    ck_assert_msg(amk_config_cost(&c, &lim, &t, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(t.min_bytes, (14336LL * 4096 + 4096) * 2 + 14336LL * 4);
    amk_spec_free(s);
    s = load_kernel("quant_per_tensor");
    c = config_at(s, "default");
    ck_assert_msg(amk_config_launch(&c, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(l.grid[0], 132 * 2); /* persistent: sm_count * BPS */
    ck_assert_msg(amk_config_cost(&c, &lim, &t, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(t.min_bytes, 16384LL * 4096 * 3 + 4);
    ck_assert_int_eq(l.shared_bytes, 256); /* SMEM=0: the reduction slots and the scale */
    c = config_at(s, "decode");
    ck_assert_msg(amk_config_launch(&c, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(l.grid[0], 32 * 4096 / (1024 * 8)); /* small tensors: fewer blocks */
    amk_spec_free(s);
}
END_TEST

/* quant_per_tensor's on-chip keep: the register rule against ptxas's counts for sm_90
 * (EIATTR_FRAME_SIZE of cubins compiled by amk under __launch_bounds__(THREADS, BPS), fp8
 * and int8, SMEM 0 and 1: these spill in at least one or in none), the whole space counted
 * again here from the rules, and the shared memory, argument and traffic of a config that
 * keeps in both. */
static int quant_valid(amk_spec *s, const amk_limits *lim, int threads, int vec, int bps,
                       int keep, int smem, int loads)
{
    char js[192];
    amk_shape sh;
    amk_config c;
    amk_diag d = {0};
    ck_assert_int_eq(amk_shape_parse(s, "default", &sh, &d), AMK_OK);
    snprintf(js, sizeof js,
             "{\"THREADS\":%d,\"VEC\":%d,\"BPS\":%d,\"KEEP\":%d,\"SMEM\":%d,\"LOADS\":%d}",
             threads, vec, bps, keep, smem, loads);
    ck_assert_msg(amk_config_from_params_json(s, &sh, js, &c, &d) == AMK_OK, "%s", d.msg);
    return amk_config_check(&c, lim, &d) == AMK_OK;
}

START_TEST(test_quant_per_tensor_keep_space)
{
    amk_limits lim = h100_limits();
    amk_spec *s = load_kernel("quant_per_tensor");
    /* Pairs on either side of the rule's boundary: the largest KEEP that fits, the next
     * that spills (register keep and the stream loop's LOADS vectors are live together in
     * phase 2). */
    const struct {
        int threads, vec, bps, keep, loads, fits;
    } ptxas[] = {
        {1024, 16, 2, 0, 1, 1}, {1024, 16, 2, 2, 1, 0}, {1024, 32, 2, 0, 1, 1},
        {1024, 32, 2, 2, 1, 0}, {1024, 8, 1, 6, 4, 1},  {1024, 8, 1, 8, 4, 0},
        {1024, 8, 1, 8, 2, 1},  {1024, 8, 1, 12, 2, 0}, {1024, 16, 1, 4, 1, 1},
        {1024, 16, 1, 6, 1, 0}, {1024, 32, 1, 0, 2, 1}, {1024, 32, 1, 2, 2, 0},
        {512, 16, 1, 8, 4, 1},  {512, 16, 1, 12, 4, 0}, {512, 32, 1, 4, 2, 1},
        {512, 32, 1, 6, 2, 0},  {512, 32, 1, 6, 1, 1},  {512, 32, 1, 8, 1, 0},
    };
    for (size_t i = 0; i < sizeof ptxas / sizeof ptxas[0]; i++)
        ck_assert_msg(quant_valid(s, &lim, ptxas[i].threads, ptxas[i].vec, ptxas[i].bps,
                                  ptxas[i].keep, 0, ptxas[i].loads) == ptxas[i].fits,
                      "THREADS=%d VEC=%d BPS=%d KEEP=%d LOADS=%d: ptxas says %s",
                      ptxas[i].threads, ptxas[i].vec, ptxas[i].bps, ptxas[i].keep,
                      ptxas[i].loads, ptxas[i].fits ? "fits" : "spills");
    /* Every point: valid iff at least a quarter of the SM's threads, registers per thread
     * within the share of BPS blocks, and (SMEM) one vector per thread of shared memory. */
    const int T[] = {256, 512, 1024}, V[] = {8, 16, 32}, B[] = {1, 2, 4, 8},
              K[] = {0, 2, 4, 6, 8, 12, 16}, L[] = {1, 2, 4};
    int n = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int e = 0; e < 4; e++)
                for (int k = 0; k < 7; k++)
                    for (int m = 0; m < 2; m++)
                        for (int l = 0; l < 3; l++) {
                            int tpsm = T[a] * B[e];
                            int cap = 65536 / tpsm > 255 ? 255 : 65536 / tpsm;
                            int regs = 26 + V[b] * (K[k] + L[l] - 1) / 2;
                            int fill = (233472 / B[e] - 1024 - 256) / (T[a] * V[b] * 2);
                            int want = tpsm <= 2048 && tpsm >= 512 && regs <= cap &&
                                       (m == 0 || fill >= 1);
                            ck_assert_int_eq(quant_valid(s, &lim, T[a], V[b], B[e], K[k], m, L[l]),
                                             want);
                            n += want;
                        }
    ck_assert_int_eq(n, 346); /* an exhaustive GPU sweep stays affordable */

    /* 512 threads, 1 block per SM, 16 vectors of 8 in registers and 28 in shared memory:
     * (232448 - 256) / (512 * 8 * 2) = 28 of the 125 vectors of each thread's walk. */
    amk_shape sh;
    amk_config c;
    amk_launch l;
    amk_cost_terms t;
    amk_diag d = {0};
    int64_t skeep = 0, total = 16384LL * 4096;
    ck_assert_int_eq(amk_shape_parse(s, "default", &sh, &d), AMK_OK);
    ck_assert_int_eq(amk_config_from_params_json(
                         s, &sh, "{\"THREADS\":512,\"VEC\":8,\"BPS\":1,\"KEEP\":16,\"SMEM\":1,\"LOADS\":2}",
                         &c, &d),
                     AMK_OK);
    ck_assert_msg(amk_config_launch(&c, &lim, &l, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_config_eval(&c, &lim, "skeep", &skeep, &d), AMK_OK);
    ck_assert_int_eq(skeep, 28);
    ck_assert_int_eq(l.grid[0], 132);
    ck_assert_int_eq(l.shared_bytes, 256 + 28 * 512 * 8 * 2);
    ck_assert_int_le(l.shared_bytes + 1024, lim.smem_per_sm);
    ck_assert_msg(amk_config_cost(&c, &lim, &t, &d) == AMK_OK, "%s", d.msg);
    /* Kept on chip: 132 * 512 threads * 44 vectors * 8; the rest is read twice, minus the
     * half of the L2 that serves the newest part of it. */
    int64_t kept = 132LL * 512 * 44 * 8, reread = 2 * (total - kept) - (50LL << 20) / 2;
    ck_assert_int_eq(t.traffic_bytes, total * 3 + reread + 4);
    ck_assert_int_eq(t.min_bytes, total * 3 + 4);
    /* prefill_8k: the same keep leaves less than half of the L2 to re-read: no traffic. */
    ck_assert_int_eq(amk_shape_parse(s, "prefill_8k", &sh, &d), AMK_OK);
    ck_assert_int_eq(amk_config_from_params_json(
                         s, &sh, "{\"THREADS\":512,\"VEC\":8,\"BPS\":1,\"KEEP\":16,\"SMEM\":1,\"LOADS\":2}",
                         &c, &d),
                     AMK_OK);
    ck_assert_msg(amk_config_cost(&c, &lim, &t, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(t.traffic_bytes, t.min_bytes);
    amk_spec_free(s);
}
END_TEST

/* quant_per_tensor divides by the scale without a division (qt_div in the kernel): rc =
 * 1 / sc once, then q0 = x * rc, residual q0 * sc - x in an fma, q = q0 - residual * rc in
 * another. Checked here against true f32 division x / sc (what the reference computes) on
 * the codes that matter: every finite bf16 x with |x| <= absmax (larger ones cannot occur)
 * against the scales of thousands of absmax values: all 128 bf16 significands at the
 * smallest, clamp-boundary (sc = 1e-12 below absmax ~2^-31 for fp8, ~2^-33 for int8),
 * middle and largest exponents, every power of two, every subnormal, 0 and pseudo-random
 * ones. x / sc only depends on the significands and the exponent difference until
 * something underflows, so the sweep covers every scale that way. C's fmaf is the exact
 * fused operation the GPU's fma.rn is. */
static float qt_div_fma(float x, float sc, float rc)
{
    const float q0 = x * rc;
    return fmaf(-fmaf(q0, sc, -x), rc, q0);
}

/* Two wrong variants the check must catch: the plain product, and the residual written
 * x - q0 * sc, which turns x = -0 into +0 (fp8 code 0x00 instead of 0x80). */
static float qt_div_product(float x, float sc, float rc)
{
    (void)sc;
    return x * rc;
}

static float qt_div_plus_zero(float x, float sc, float rc)
{
    const float q0 = x * rc;
    return fmaf(fmaf(-q0, sc, x), rc, q0);
}

static float bf16_value(unsigned bits)
{
    uint32_t u = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* OCP e4m3 code by rounding to the grid (steps of 2^(e-3), at least 2^-9) with nearbyintf:
 * written differently from both the host reference and the prelude on purpose. */
static unsigned e4m3_code(float v)
{
    const unsigned s = signbit(v) ? 0x80u : 0u;
    const float a = fabsf(v);
    int e;
    if (a == 0.0f)
        return s;
    frexpf(a, &e);
    e = e - 1 < -6 ? -6 : e - 1;
    float r = nearbyintf(ldexpf(a, 3 - e));
    r = ldexpf(r, e - 3);
    r = r > 448.0f ? 448.0f : r;
    if (r == 0.0f)
        return s;
    frexpf(r, &e);
    e -= 1;
    if (e < -6)
        return s | (unsigned)ldexpf(r, 9);
    return s | (unsigned)((e + 7) << 3) | (unsigned)(ldexpf(r, 3 - e) - 8.0f);
}

static unsigned i8_code(float v)
{
    float r = nearbyintf(v);
    r = r > 127.0f ? 127.0f : (r < -128.0f ? -128.0f : r);
    return (unsigned)(unsigned char)(signed char)r;
}

typedef struct {
    long pairs, float_diff, float_diff_big, fp8_diff, i8_diff;
} qt_div_tally;

/* Every absmax of the sweep (bf16 bits) into a[]; returns the count. */
static int qt_absmax_sweep(unsigned *a, int cap)
{
    static const int exps[] = {1, 2, 93, 94, 95, 96, 97, 98, 127, 128, 200, 253, 254};
    int n = 0;
    for (int m = 0; m < 128; m++)
        for (size_t k = 0; k < sizeof exps / sizeof exps[0]; k++)
            a[n++] = (unsigned)(exps[k] << 7 | m);
    for (int e = 1; e < 255; e++)
        a[n++] = (unsigned)(e << 7);
    for (unsigned m = 0; m < 128; m++) /* 0 and the subnormals */
        a[n++] = m;
    uint32_t lcg = 12345u;
    while (n < cap) {
        lcg = lcg * 1664525u + 1013904223u;
        a[n++] = 1u + (lcg >> 8) % 0x7f7fu; /* finite, positive */
    }
    return n;
}

static qt_div_tally qt_div_check(float (*div)(float, float, float), const unsigned *amax,
                                 int n_amax, int every)
{
    qt_div_tally t = {0};
    for (int a = 0; a < n_amax; a += every) {
        const float am = bf16_value(amax[a]);
        for (int fp8 = 0; fp8 < 2; fp8++) {
            float sc = am / (fp8 ? 448.0f : 127.0f);
            sc = sc < 1e-12f ? 1e-12f : sc;
            const float rc = 1.0f / sc;
            for (unsigned b = 0; b < 65536; b++) {
                const float x = bf16_value(b);
                if (!(fabsf(x) <= am)) /* also skips NaN and inf */
                    continue;
                t.pairs++;
                const float want = x / sc, got = div(x, sc, rc);
                if (memcmp(&want, &got, sizeof want) == 0)
                    continue;
                t.float_diff++;
                t.float_diff_big += fabsf(want) >= 0x1p-64f;
                if (fp8)
                    t.fp8_diff += e4m3_code(want) != e4m3_code(got);
                else
                    t.i8_diff += i8_code(want) != i8_code(got);
            }
        }
    }
    return t;
}

START_TEST(test_quant_per_tensor_division_without_dividing)
{
    enum { N_AMAX = 2600 };
    static unsigned amax[N_AMAX];
    const int n = qt_absmax_sweep(amax, N_AMAX);
    ck_assert_int_eq(n, N_AMAX);
    /* The codes agree everywhere; the quotients themselves differ only where the residual
     * or the quotient underflows (|x / sc| far below the smallest nonzero code). */
    qt_div_tally t = qt_div_check(qt_div_fma, amax, n, 1);
    ck_assert_int_gt(t.pairs, 100000000);
    ck_assert_msg(t.fp8_diff == 0 && t.i8_diff == 0 && t.float_diff_big == 0,
                  "fma division: %ld fp8 and %ld int8 codes, %ld quotients >= 2^-64 differ "
                  "(of %ld pairs)",
                  t.fp8_diff, t.i8_diff, t.float_diff_big, t.pairs);
    /* The check has teeth: the product alone and the +0 residual give other codes. */
    t = qt_div_check(qt_div_product, amax, n, 4);
    ck_assert_msg(t.fp8_diff > 0 && t.i8_diff > 0, "product: %ld fp8, %ld int8 codes differ",
                  t.fp8_diff, t.i8_diff);
    t = qt_div_check(qt_div_plus_zero, amax, n, 4);
    ck_assert_msg(t.fp8_diff > 0, "x - q0 * sc: %ld fp8 codes differ", t.fp8_diff);
    ck_assert_int_eq(t.i8_diff, 0); /* int8 has one zero */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("amk_prelude");
    tcase_add_test(tc, test_amk_prelude_nvidia_defines_the_contract);
    tcase_add_test(tc, test_amk_prelude_amd_defines_the_contract);
    tcase_add_test(tc, test_amk_prelude_unknown_vendor_is_null);
    suite_add_tcase(s, tc);

    tc = tcase_create("amk_host_ref_find");
    tcase_add_test(tc, test_amk_host_ref_find_knows_the_builtins);
    suite_add_tcase(s, tc);

    tc = tcase_create("gemm_f32");
    tcase_add_test(tc, test_gemm_f32_hand_example);
    tcase_add_test(tc, test_gemm_f32_integer_closed_form_odd_sizes);
    tcase_add_test(tc, test_gemm_f32_reads_bf16_bit_patterns);
    tcase_add_test(tc, test_gemm_f32_rounds_16_bit_outputs_to_nearest_even);
    tcase_add_test(tc, test_gemm_f32_rejects_bad_buffers);
    suite_add_tcase(s, tc);

    tc = tcase_create("gemm_tc");
    tcase_add_test(tc, test_gemm_tc_host_reference);
    suite_add_tcase(s, tc);

    tc = tcase_create("gemm_tc_compile");
    tcase_set_tags(tc, "compiler");
    tcase_add_test(tc, test_gemm_tc_split_k_compiles);
    suite_add_tcase(s, tc);

    tc = tcase_create("rmsnorm");
    tcase_add_test(tc, test_rmsnorm_f32_known_rows);
    tcase_add_test(tc, test_rmsnorm_bf16_roundtrips_every_pattern);
    tcase_add_test(tc, test_rmsnorm_f16_roundtrips_every_pattern);
    tcase_add_test(tc, test_rmsnorm_f16_row_matches_long_double);
    tcase_add_test(tc, test_rmsnorm_rejects_bad_buffers);
    suite_add_tcase(s, tc);

    tc = tcase_create("memory_bound");
    tcase_add_test(tc, test_softmax_host_reference);
    tcase_add_test(tc, test_gemv_host_reference);
    tcase_add_test(tc, test_quant_per_tensor_host_reference);
    tcase_add_test(tc, test_specs_memory_bound_cost_and_launch);
    tcase_add_test(tc, test_quant_per_tensor_keep_space);
    tcase_add_test(tc, test_quant_per_tensor_division_without_dividing);
    suite_add_tcase(s, tc);

    tc = tcase_create("specs");
    tcase_add_test(tc, test_specs_are_json_and_name_existing_sources);
    tcase_add_test(tc, test_specs_default_configs_valid_on_every_shape);
    tcase_add_test(tc, test_specs_space_sizes);
    tcase_add_test(tc, test_specs_gemm_cost_and_launch);
    tcase_add_test(tc, test_specs_rmsnorm_cost_and_launch);
    tcase_add_test(tc, test_specs_gemm_tc_cost_and_launch);
    tcase_add_test(tc, test_specs_gemm_tc_split_k_cost_and_launch);
    tcase_add_test(tc, test_specs_gemm_tc_split_k_restrictions);
    suite_add_tcase(s, tc);
    return s;
}

static const amk_test_need needs[] = {
    AMK_TEST_NEED(compiler, why_no_compiler),
};

int main(int argc, char **argv)
{
    return amk_test_main(argc, argv, suite(), needs, sizeof needs / sizeof *needs);
}

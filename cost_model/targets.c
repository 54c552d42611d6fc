/* The target table (DESIGN §4: datasheet dense rates unless marked measured) and the
 * per-device measured ceilings that `amk calibrate` stores. */
#include "amk_cost_model.h"

#include <ctype.h>
#include <strings.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TF 1e12
#define TB 1e12
#define KiB 1024LL
#define MiB (1024LL * 1024LL)

/* NVIDIA limits shared by sm_80 / sm_90: 1024 threads per block, 48 KiB static shared memory
 * without opt-in, 64K registers per SM, 255 registers per thread, 32 resident blocks and
 * 2048 resident threads per SM. */
#define NV_LIMITS(sms, optin, per_sm, l2)                                                   \
    {.max_threads = 1024, .max_smem = 48 * KiB, .max_smem_optin = (optin),                 \
     .smem_per_sm = (per_sm), .warp = 32, .sm_count = (sms), .regs_per_sm = 65536,         \
     .max_regs_per_thread = 255, .max_blocks_per_sm = 32, .max_threads_per_sm = 2048,      \
     .max_grid_x = 2147483647LL, .max_grid_yz = 65535, .l2_bytes = (l2)}

/* CDNA: 64 KiB LDS per workgroup, wave64, 4 SIMDs x 512 VGPRs x 64 lanes per CU,
 * 512 registers per lane (256 arch VGPRs + 256 AGPRs), 32 waves (2048 threads) per CU. */
#define AMD_LIMITS(cus, l2)                                                                 \
    {.max_threads = 1024, .max_smem = 64 * KiB, .max_smem_optin = 64 * KiB,                \
     .smem_per_sm = 64 * KiB, .warp = 64, .sm_count = (cus), .regs_per_sm = 131072,        \
     .max_regs_per_thread = 512, .max_blocks_per_sm = 32, .max_threads_per_sm = 2048,      \
     .max_grid_x = 2147483647LL, .max_grid_yz = 65535, .l2_bytes = (l2)}

/* Memory-system figures for the prediction of memory-bound kernels (not datasheet numbers;
 * none of them reaches the floor). A DRAM round trip under load is 0.5-0.7 us on sm_80/sm_90
 * in published pointer-chase measurements and longer on CDNA (HBM behind Infinity Fabric);
 * a reduction step (shuffle, barrier, shared-memory round trip) is ~30-40 cycles; an L2
 * sector is 32 bytes on NVIDIA, and CDNA moves 64-byte requests. */
#define NV_MEMORY .mem_latency_us = 0.6, .sync_us = 0.02, .sector_bytes = 32
#define AMD_MEMORY .mem_latency_us = 0.8, .sync_us = 0.03, .sector_bytes = 64

static const amk_target targets[] = {
    {.name = "H100 SXM 80GB", .key = "h100", .vendor = "nvidia", .arch = "sm_90",
     /* 227 KiB opt-in = 232448 B, measured here; 228 KiB per SM. */
     .limits = NV_LIMITS(132, 232448, 233472, 50 * MiB),
     .bw_peak = 3.35 * TB, .bw_measured = 3.03 * TB, /* device copy, measured here */
     .peak = {[AMK_UNIT_SIMT_F32] = 67 * TF, [AMK_UNIT_TF32] = 495 * TF,
              [AMK_UNIT_F16] = 989 * TF, [AMK_UNIT_BF16] = 989 * TF,
              [AMK_UNIT_FP8] = 1979 * TF, [AMK_UNIT_INT8] = 1979 * TF},
     /* cuBLAS measured here: SGEMM 51.7, fp16 725 and bf16 744 TFLOP/s at 4096^3. */
     .measured = {[AMK_UNIT_SIMT_F32] = 51.7 * TF, [AMK_UNIT_F16] = 725 * TF,
                  [AMK_UNIT_BF16] = 744 * TF},
     .launch_overhead_us = 2.0, NV_MEMORY},
    {.name = "H200 SXM 141GB", .key = "h200", .vendor = "nvidia", .arch = "sm_90",
     .limits = NV_LIMITS(132, 232448, 233472, 60 * MiB),
     .bw_peak = 4.8 * TB, .bw_measured = 0, /* ~4.3 TB/s copy seen, not yet calibrated */
     .peak = {[AMK_UNIT_SIMT_F32] = 67 * TF, [AMK_UNIT_TF32] = 495 * TF,
              [AMK_UNIT_F16] = 989 * TF, [AMK_UNIT_BF16] = 989 * TF,
              [AMK_UNIT_FP8] = 1979 * TF, [AMK_UNIT_INT8] = 1979 * TF},
     .launch_overhead_us = 2.0, NV_MEMORY},
    {.name = "A100 SXM 80GB", .key = "a100", .vendor = "nvidia", .arch = "sm_80",
     /* 163 KiB opt-in per block, 164 KiB per SM. */
     .limits = NV_LIMITS(108, 163 * KiB, 164 * KiB, 40 * MiB),
     .bw_peak = 2.04 * TB,
     .peak = {[AMK_UNIT_SIMT_F32] = 19.5 * TF, [AMK_UNIT_TF32] = 156 * TF,
              [AMK_UNIT_F16] = 312 * TF, [AMK_UNIT_BF16] = 312 * TF,
              [AMK_UNIT_INT8] = 624 * TF},
     .launch_overhead_us = 2.5, NV_MEMORY},
    {.name = "MI300X", .key = "mi300x", .vendor = "amd", .arch = "gfx942",
     /* 4 MiB L2 per XCD x 8; the 256 MiB Infinity Cache sits behind it. */
     .limits = AMD_LIMITS(304, 32 * MiB),
     .bw_peak = 5.3 * TB, /* ~4.1 TB/s copy reported elsewhere, not measured by amk */
     .peak = {[AMK_UNIT_SIMT_F32] = 81.7 * TF, [AMK_UNIT_TF32] = 653 * TF,
              [AMK_UNIT_F16] = 1307 * TF, [AMK_UNIT_BF16] = 1307 * TF,
              [AMK_UNIT_FP8] = 2615 * TF, [AMK_UNIT_INT8] = 2615 * TF},
     .launch_overhead_us = 4.0, AMD_MEMORY},
    {.name = "MI250X (one GCD)", .key = "mi250x", .vendor = "amd", .arch = "gfx90a",
     .limits = AMD_LIMITS(110, 8 * MiB),
     .bw_peak = 1.6 * TB,
     .peak = {[AMK_UNIT_SIMT_F32] = 23.9 * TF, [AMK_UNIT_F16] = 191.5 * TF,
              [AMK_UNIT_BF16] = 191.5 * TF, [AMK_UNIT_INT8] = 383 * TF},
     .launch_overhead_us = 4.0, AMD_MEMORY},
};

#define N_TARGETS ((int)(sizeof targets / sizeof targets[0]))

int amk_target_count(void) { return N_TARGETS; }

const amk_target *amk_target_at(int i)
{
    return (i >= 0 && i < N_TARGETS) ? &targets[i] : NULL;
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0)
        return 0;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

const amk_target *amk_target_find(const char *name)
{
    if (!name || !*name)
        return NULL;
    for (int i = 0; i < N_TARGETS; i++) /* exact key, arch or full name */
        if (!strcasecmp(name, targets[i].key) || !strcasecmp(name, targets[i].name))
            return &targets[i];
    for (int i = 0; i < N_TARGETS; i++) /* arch: first listed target of that arch */
        if (!strcasecmp(name, targets[i].arch))
            return &targets[i];
    /* A runtime device name ("NVIDIA H100 80GB HBM3", "AMD Instinct MI300X") contains a key. */
    for (int i = 0; i < N_TARGETS; i++)
        if (contains_ci(name, targets[i].key))
            return &targets[i];
    return NULL;
}

const amk_target *amk_target_default(void)
{
    const char *e = getenv("AMK_TARGET");
    const amk_target *t = e && *e ? amk_target_find(e) : NULL;
    if (e && *e && !t)
        amk_log(AMK_LOG_WARN, "AMK_TARGET=%s matches no known target; using h100", e);
    return t ? t : &targets[0];
}

const char *amk_target_named(const char *name)
{
    const char *env = getenv("AMK_TARGET");
    return name ? name : env && *env ? env : NULL;
}

int amk_target_resolve(const char *name, const amk_target **out, amk_diag *d)
{
    const char *want = amk_target_named(name);
    *out = want ? amk_target_find(want) : &targets[0];
    if (*out)
        return AMK_OK;
    amk_sb sb = {0};
    for (int i = 0; i < N_TARGETS; i++)
        amk_sb_printf(&sb, "%s%s", i ? ", " : "", targets[i].key);
    int rc = amk_diag_set(d, AMK_ENOENT, "unknown target '%s'%s (known: %s)", want,
                          name ? "" : " from $AMK_TARGET", sb.p ? sb.p : "none");
    amk_sb_free(&sb);
    return rc;
}

static const char *const unit_names[] = {
#define XX(n, s) s,
    AMK_UNIT_MAP(XX)
#undef XX
};

const char *amk_unit_name(amk_unit u)
{
    return (unsigned)u < AMK_UNIT_COUNT ? unit_names[u] : "none";
}

int amk_unit_parse(const char *name, amk_unit *out)
{
    for (int i = 0; i < AMK_UNIT_COUNT; i++)
        if (name && !strcmp(name, unit_names[i])) {
            *out = (amk_unit)i;
            return AMK_OK;
        }
    return AMK_EPARSE;
}

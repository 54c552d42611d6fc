/* `amk devices`: the GPUs that answer (each asked by a run worker of its own, so this
 * process never loads a driver), or why none does, and the known targets with their limits,
 * peaks and measured ceilings. */
#include "cli_int.h"

#include <stdlib.h>
#include <string.h>

static cJSON *target_json(const amk_target *t, int calibrated)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", t->key);
    cJSON_AddStringToObject(o, "name", t->name);
    cJSON_AddStringToObject(o, "vendor", t->vendor);
    cJSON_AddStringToObject(o, "arch", t->arch);
    cJSON *lim = cJSON_AddObjectToObject(o, "limits");
#define XX(name, doc) cJSON_AddNumberToObject(lim, #name, (double)t->limits.name);
    AMK_LIMITS_MAP(XX)
#undef XX
    cJSON_AddNumberToObject(o, "bandwidth_gbps", t->bw_peak / 1e9);
    if (t->bw_measured > 0)
        cJSON_AddNumberToObject(o, "bandwidth_measured_gbps", t->bw_measured / 1e9);
    else
        cJSON_AddNullToObject(o, "bandwidth_measured_gbps");
    cJSON *peak = cJSON_AddObjectToObject(o, "peak_tflops");
    cJSON *meas = cJSON_AddObjectToObject(o, "measured_tflops");
    for (int u = 0; u < AMK_UNIT_COUNT; u++) {
        if (u == AMK_UNIT_NONE)
            continue;
        if (t->peak[u] > 0)
            cJSON_AddNumberToObject(peak, amk_unit_name((amk_unit)u), t->peak[u] / 1e12);
        if (t->measured[u] > 0)
            cJSON_AddNumberToObject(meas, amk_unit_name((amk_unit)u), t->measured[u] / 1e12);
    }
    cJSON_AddNumberToObject(o, "launch_overhead_us", t->launch_overhead_us);
    cJSON_AddBoolToObject(o, "calibrated_here", calibrated);
    return o;
}

static const char *gpu_vendor_built(void)
{
#if defined(AMK_GPU_CUDA)
    return "cuda";
#elif defined(AMK_GPU_HIP)
    return "hip";
#else
    return NULL;
#endif
}

int cli_cmd_devices(cli_ctx *ctx, int argc, char **argv)
{
    cli_args a;
    int k, rc, require = 0;
    cli_args_init(&a, "devices", argc, argv);
    while ((k = cli_args_next(&a)) != CLI_ARG_END) {
        if (k == CLI_ARG_POS) {
            cli_args_fail(&a, "unexpected argument '%s'", a.arg);
            continue;
        }
        if (cli_common_option(ctx, &a))
            continue;
        if (cli_args_flag(&a, "--require")) {
            require = 1;
            continue;
        }
        cli_args_unknown(&a);
    }
    if ((rc = cli_args_done(ctx, &a)) >= 0)
        return rc;

    const char *vendor = gpu_vendor_built();
    cJSON *out = cJSON_CreateObject();
    cJSON *gpu = cJSON_AddObjectToObject(out, "gpu");
    cJSON *devs = cJSON_AddArrayToObject(out, "devices");
    char reason[1100] = "";
    int found = 0;

    const amk_backend_type *bt = amk_backend_find("gpu");
    if (!bt) {
        snprintf(reason, sizeof reason, "amk was built without a GPU backend: neither the "
                 "CUDA toolkit (-DAMK_CUDA=ON, needs CUDA >= 12 with NVRTC) nor HIP "
                 "(-DAMK_HIP=ON, needs libamdhip64-dev) was found at configure time");
    } else {
        /* Every visible device, each asked by a run worker of its own. */
        amk_gpu_device *list = calloc(CLI_MAX_DEVICES, sizeof *list);
        int n = 0;
        amk_diag d;
        amk_diag_clear(&d);
        int e = list ? amk_gpu_devices(list, CLI_MAX_DEVICES, &n, &d) : AMK_ENOMEM;
        if (e != AMK_OK) {
            const char *why = d.msg[0] ? d.msg : amk_strerror(e);
            if (!vendor)
                snprintf(reason, sizeof reason, "amk was built without CUDA/HIP (the CUDA "
                         "toolkit and HIP were not found at configure time): %s", why);
            else
                snprintf(reason, sizeof reason, "%s", why);
            n = 0;
        }
        for (int i = 0; i < n && i < CLI_MAX_DEVICES; i++) {
            /* The target the gpu backend would tune for: by name, else by arch. */
            const amk_target *t = amk_target_find(list[i].name);
            if (!t)
                t = amk_target_find(list[i].arch);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "index", list[i].index);
            cJSON_AddStringToObject(o, "name", list[i].name);
            cJSON_AddStringToObject(o, "target", t ? t->key : amk_target_default()->key);
            cJSON_AddStringToObject(o, "arch", list[i].arch);
            cJSON_AddItemToArray(devs, o);
            found++;
        }
        free(list);
    }
    cJSON_AddBoolToObject(gpu, "built", vendor != NULL);
    if (vendor)
        cJSON_AddStringToObject(gpu, "vendor", vendor);
    else
        cJSON_AddNullToObject(gpu, "vendor");
    cJSON_AddBoolToObject(gpu, "available", found > 0);
    if (found)
        cJSON_AddNullToObject(gpu, "reason");
    else
        cJSON_AddStringToObject(gpu, "reason", reason);

    cJSON *targets = cJSON_AddArrayToObject(out, "targets");
    int tables = cli_tables(ctx);
    if (tables) {
        if (found)
            fprintf(stderr, "%d GPU(s) answer\n", found);
        else
            fprintf(stderr, "no GPU answers: %s\n", reason);
        const cJSON *dv;
        cJSON_ArrayForEach(dv, devs)
            fprintf(stderr, "  device %d: %s (%s)\n",
                    (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(dv, "index")),
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(dv, "name")),
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(dv, "arch")));
        fprintf(stderr, "%-8s %-16s %-7s %5s %5s %8s %10s %9s %9s\n", "TARGET", "NAME", "ARCH",
                "CUs", "WARP", "SMEM/BLK", "BW GB/s", "F32 TF/s", "F16 TF/s");
    }
    for (int i = 0; i < amk_target_count(); i++) {
        amk_target t;
        amk_target_with_ceilings(amk_target_at(i), &t);
        int calibrated = memcmp(&t, amk_target_at(i), sizeof t) != 0; /* a ceilings file applied */
        cJSON_AddItemToArray(targets, target_json(&t, calibrated));
        if (tables)
            fprintf(stderr, "%-8s %-16.16s %-7s %5lld %5lld %8lld %10.0f %9.1f %9.1f\n", t.key,
                    t.name, t.arch, (long long)t.limits.sm_count, (long long)t.limits.warp,
                    (long long)t.limits.max_smem_optin,
                    (t.bw_measured > 0 ? t.bw_measured : t.bw_peak) / 1e9,
                    t.peak[AMK_UNIT_SIMT_F32] / 1e12, t.peak[AMK_UNIT_F16] / 1e12);
    }
    rc = cli_print_json(ctx, out);
    if (rc == CLI_EXIT_OK && require && !found)
        return cli_fail(ctx, CLI_EXIT_NODEV, "no GPU answers: %s", reason);
    return rc;
}

/* `amk devices`: the GPUs that answer (each asked by a run worker of its own, so this
 * process never loads a driver), or why none does, and the known targets with their limits,
 * peaks and measured ceilings. */
#include "cli_int.h"

#include <stdlib.h>
#include <string.h>

int cli_cmd_devices(cli_ctx *ctx, int argc, char **argv)
{
    int rc, require = 0;
    cli_opt opts[] = {CLI_FLAG("--require", &require), CLI_END};
    if ((rc = cli_parse(ctx, argc, argv, opts, NULL)) >= 0)
        return rc;

    amk_gpu_status_info *gs = malloc(sizeof *gs);
    if (!gs || amk_gpu_status(gs) != AMK_OK) {
        free(gs);
        return cli_fail(ctx, CLI_EXIT_INTERNAL, "out of memory");
    }
    cJSON *out = cJSON_CreateObject();
    cJSON *gpu = cJSON_AddObjectToObject(out, "gpu");
    cJSON *devs = cJSON_AddArrayToObject(out, "devices");
    for (int i = 0; i < gs->n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", gs->devices[i].index);
        cJSON_AddStringToObject(o, "name", gs->devices[i].name);
        cJSON_AddStringToObject(o, "target", gs->targets[i]->key);
        cJSON_AddStringToObject(o, "arch", gs->devices[i].arch);
        cJSON_AddItemToArray(devs, o);
    }
    cJSON_AddBoolToObject(gpu, "built", gs->vendor != NULL);
    if (gs->vendor)
        cJSON_AddStringToObject(gpu, "vendor", gs->vendor);
    else
        cJSON_AddNullToObject(gpu, "vendor");
    cJSON_AddBoolToObject(gpu, "available", gs->n > 0);
    if (gs->n)
        cJSON_AddNullToObject(gpu, "reason");
    else
        cJSON_AddStringToObject(gpu, "reason", gs->reason);

    cJSON *targets = cJSON_AddArrayToObject(out, "targets");
    int tables = cli_tables(ctx);
    if (tables) {
        if (gs->n)
            fprintf(stderr, "%d GPU(s) answer\n", gs->n);
        else
            fprintf(stderr, "no GPU answers: %s\n", gs->reason);
        for (int i = 0; i < gs->n; i++)
            fprintf(stderr, "  device %d: %s (%s)\n", gs->devices[i].index, gs->devices[i].name,
                    gs->devices[i].arch);
        fprintf(stderr, "%-8s %-16s %-7s %5s %5s %8s %10s %9s %9s\n", "TARGET", "NAME", "ARCH",
                "CUs", "WARP", "SMEM/BLK", "BW GB/s", "F32 TF/s", "F16 TF/s");
    }
    for (int i = 0; i < amk_target_count(); i++) {
        amk_target t;
        amk_target_with_ceilings(amk_target_at(i), &t);
        int calibrated = memcmp(&t, amk_target_at(i), sizeof t) != 0; /* a ceilings file applied */
        char *tj = amk_target_json(&t, calibrated);
        cJSON_AddItemToArray(targets, tj ? cJSON_Parse(tj) : NULL);
        free(tj);
        if (tables)
            fprintf(stderr, "%-8s %-16.16s %-7s %5lld %5lld %8lld %10.0f %9.1f %9.1f\n", t.key,
                    t.name, t.arch, (long long)t.limits.sm_count, (long long)t.limits.warp,
                    (long long)t.limits.max_smem_optin,
                    (t.bw_measured > 0 ? t.bw_measured : t.bw_peak) / 1e9,
                    t.peak[AMK_UNIT_SIMT_F32] / 1e12, t.peak[AMK_UNIT_F16] / 1e12);
    }
    rc = cli_print_json(ctx, out);
    if (rc == CLI_EXIT_OK && require && !gs->n)
        rc = cli_fail(ctx, CLI_EXIT_NODEV, "no GPU answers: %s", gs->reason);
    free(gs);
    return rc;
}

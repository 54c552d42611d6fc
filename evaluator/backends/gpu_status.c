/* What `amk devices` reports about the GPU side of this build: which vendor layer was
 * built, which GPUs answer (each asked by a run worker of its own, so this process never
 * loads a driver) with the target the gpu backend would tune each for, or why none does. */
#include "amk_evaluator.h"

#include <stdio.h>
#include <string.h>

static const char *vendor_built(void)
{
#if defined(AMK_GPU_CUDA)
    return "cuda";
#elif defined(AMK_GPU_HIP)
    return "hip";
#else
    return NULL;
#endif
}

/* The target the gpu backend tunes a device for: by name, else by arch, else the default. */
static const amk_target *device_target(const amk_gpu_device *dv)
{
    const amk_target *t = amk_target_find(dv->name);
    if (!t)
        t = amk_target_find(dv->arch);
    return t ? t : amk_target_default();
}

int amk_gpu_status(amk_gpu_status_info *out)
{
    memset(out, 0, sizeof *out);
    out->vendor = vendor_built();
    if (!amk_backend_find("gpu")) {
        snprintf(out->reason, sizeof out->reason, "amk was built without a GPU backend: "
                 "neither the CUDA toolkit (-DAMK_CUDA=ON, needs CUDA >= 12 with NVRTC) nor "
                 "HIP (-DAMK_HIP=ON, needs libamdhip64-dev) was found at configure time");
        return AMK_OK;
    }
    amk_diag d;
    amk_diag_clear(&d);
    int n = 0, e = amk_gpu_devices(out->devices, AMK_MAX_DEVICES, &n, &d);
    if (e == AMK_ENOMEM)
        return e;
    if (e != AMK_OK) {
        const char *why = d.msg[0] ? d.msg : amk_strerror(e);
        if (!out->vendor)
            snprintf(out->reason, sizeof out->reason, "amk was built without CUDA/HIP (the "
                     "CUDA toolkit and HIP were not found at configure time): %s", why);
        else
            snprintf(out->reason, sizeof out->reason, "%s", why);
        return AMK_OK;
    }
    out->n = n < AMK_MAX_DEVICES ? n : AMK_MAX_DEVICES;
    for (int i = 0; i < out->n; i++)
        out->targets[i] = device_target(&out->devices[i]);
    return AMK_OK;
}

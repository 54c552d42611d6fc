/* Observing the device around timed chunks: SM and memory clock, power, temperature, clock-
 * event (throttle) reasons and the energy counter, read through the vendor's management
 * library opened at run time (NVML's libnvidia-ml.so.1 on NVIDIA, ROCm SMI's
 * librocm_smi64.so on AMD, with the clocks from the amdgpu driver's sysfs text), so libamk
 * gains no link dependency. Without the library, or
 * without a match for the device, every reading is NAN and amk__obs_open says why. One
 * observer per run worker (the process owns one device).
 * A reading takes milliseconds (3-7 ms for the six NVML queries on the H100, measured in the
 * race of 2026-11-26: 20 ms a config of device idle while the timing thread read around its
 * chunks), so the timed loops read a watcher thread's latest sample instead (amk__obs_watch,
 * amk__obs_latest); the energy window, which pairs a reading with a launch count, reads
 * itself. */
#include "gpu_int.h"

#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct observer {
    int tried, ok, device;
    char why[200];
    void *lib;
    void *dev; /* nvmlDevice_t */
    unsigned rsmi_index;
    /* NVML (return 0 = success) */
    int (*nv_clock)(void *, int, unsigned *);
    int (*nv_power)(void *, unsigned *);
    int (*nv_temp)(void *, int, unsigned *);
    int (*nv_reasons)(void *, unsigned long long *);
    int (*nv_energy)(void *, unsigned long long *);
    /* ROCm SMI (return 0 = success) */
    int (*rs_power)(unsigned, unsigned, uint64_t *);
    int (*rs_temp)(unsigned, unsigned, int, int64_t *);
    int (*rs_energy)(unsigned, uint64_t *, float *, uint64_t *);
} observer;

static observer obs;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#if defined(AMK_GPU_CUDA)
enum { NV_CLOCK_SM = 1, NV_CLOCK_MEM = 2, NV_TEMP_GPU = 0 };

static int open_lib(const char *bus)
{
    obs.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!obs.lib) {
        snprintf(obs.why, sizeof obs.why, "NVML not available (libnvidia-ml.so.1: %s)",
                 dlerror());
        return 0;
    }
    int (*init)(void) = (int (*)(void))dlsym(obs.lib, "nvmlInit_v2");
    int (*by_bus)(const char *, void **) =
        (int (*)(const char *, void **))dlsym(obs.lib, "nvmlDeviceGetHandleByPciBusId_v2");
    obs.nv_clock = (int (*)(void *, int, unsigned *))dlsym(obs.lib, "nvmlDeviceGetClockInfo");
    obs.nv_power = (int (*)(void *, unsigned *))dlsym(obs.lib, "nvmlDeviceGetPowerUsage");
    obs.nv_temp = (int (*)(void *, int, unsigned *))dlsym(obs.lib, "nvmlDeviceGetTemperature");
    obs.nv_reasons = (int (*)(void *, unsigned long long *))dlsym(
        obs.lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!obs.nv_reasons)
        obs.nv_reasons = (int (*)(void *, unsigned long long *))dlsym(
            obs.lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    obs.nv_energy = (int (*)(void *, unsigned long long *))dlsym(
        obs.lib, "nvmlDeviceGetTotalEnergyConsumption");
    if (!init || !by_bus || !obs.nv_clock) {
        snprintf(obs.why, sizeof obs.why, "NVML lacks the device queries amk reads");
        return 0;
    }
    int rc = init();
    if (rc != 0) {
        snprintf(obs.why, sizeof obs.why, "nvmlInit failed (NVML error %d)", rc);
        return 0;
    }
    rc = by_bus(bus, &obs.dev);
    if (rc != 0) {
        snprintf(obs.why, sizeof obs.why, "NVML has no device at PCI %s (NVML error %d)", bus,
                 rc);
        return 0;
    }
    return 1;
}

static void read_lib(amk__obs_sample *s)
{
    unsigned v;
    unsigned long long u;
    if (obs.nv_clock(obs.dev, NV_CLOCK_SM, &v) == 0)
        s->sm_mhz = v;
    if (obs.nv_clock(obs.dev, NV_CLOCK_MEM, &v) == 0)
        s->mem_mhz = v;
    if (obs.nv_power && obs.nv_power(obs.dev, &v) == 0)
        s->power_w = v * 1e-3;
    if (obs.nv_temp && obs.nv_temp(obs.dev, NV_TEMP_GPU, &v) == 0)
        s->temp_c = v;
    if (obs.nv_reasons && obs.nv_reasons(obs.dev, &u) == 0)
        s->throttle = (uint64_t)u;
    if (obs.nv_energy && obs.nv_energy(obs.dev, &u) == 0)
        s->energy_j = (double)u * 1e-3;
}
#else
/* ROCm SMI for power, temperature and energy. The clocks come from the amdgpu driver's
 * sysfs text (pp_dpm_sclk, pp_dpm_mclk) instead: ROCm SMI's rsmi_frequencies_t changed
 * layout between releases, the driver's text did not. */
static char dpm_path[2][96]; /* sclk, mclk of the device */

static double read_dpm(const char *path)
{
    char text[1024];
    FILE *f = fopen(path, "r");
    if (!f)
        return NAN;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return amk__obs_dpm_mhz(text);
}

static int open_lib(const char *bus)
{
    for (int i = 0; i < 2; i++) {
        int n = snprintf(dpm_path[i], sizeof dpm_path[i], "/sys/bus/pci/devices/%s/%s", bus,
                         i ? "pp_dpm_mclk" : "pp_dpm_sclk");
        for (int c = 0; c < n; c++) /* sysfs names the device in lower case */
            dpm_path[i][c] = (char)tolower((unsigned char)dpm_path[i][c]);
    }
    obs.lib = dlopen("librocm_smi64.so", RTLD_NOW | RTLD_LOCAL);
    if (!obs.lib)
        obs.lib = dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!obs.lib) {
        snprintf(obs.why, sizeof obs.why, "ROCm SMI not available (librocm_smi64.so: %s)",
                 dlerror());
        return 0;
    }
    int (*init)(uint64_t) = (int (*)(uint64_t))dlsym(obs.lib, "rsmi_init");
    int (*count)(unsigned *) = (int (*)(unsigned *))dlsym(obs.lib, "rsmi_num_monitor_devices");
    int (*pci)(unsigned, uint64_t *) = (int (*)(unsigned, uint64_t *))dlsym(obs.lib,
                                                                          "rsmi_dev_pci_id_get");
    obs.rs_power = (int (*)(unsigned, unsigned, uint64_t *))dlsym(obs.lib,
                                                                 "rsmi_dev_power_ave_get");
    obs.rs_temp = (int (*)(unsigned, unsigned, int, int64_t *))dlsym(obs.lib,
                                                                    "rsmi_dev_temp_metric_get");
    obs.rs_energy = (int (*)(unsigned, uint64_t *, float *, uint64_t *))dlsym(
        obs.lib, "rsmi_dev_energy_count_get");
    unsigned dom = 0, b = 0, d = 0, f = 0, n = 0;
    if (!init || !count || !pci || init(0) != 0 || count(&n) != 0 ||
        sscanf(bus, "%x:%x:%x.%x", &dom, &b, &d, &f) != 4) {
        snprintf(obs.why, sizeof obs.why, "ROCm SMI could not be initialised");
        return 0;
    }
    uint64_t want = ((uint64_t)dom << 32) | ((b & 0xffu) << 8) | ((d & 0x1fu) << 3) | (f & 7u);
    for (unsigned i = 0; i < n; i++) {
        uint64_t id;
        if (pci(i, &id) == 0 && id == want) {
            obs.rsmi_index = i;
            return 1;
        }
    }
    snprintf(obs.why, sizeof obs.why, "ROCm SMI has no device at PCI %s", bus);
    return 0;
}

static void read_lib(amk__obs_sample *s)
{
    uint64_t p, e, ts;
    int64_t t;
    float res;
    if (obs.rs_power && obs.rs_power(obs.rsmi_index, 0, &p) == 0)
        s->power_w = p * 1e-6;
    if (obs.rs_temp && obs.rs_temp(obs.rsmi_index, 0, 0, &t) == 0)
        s->temp_c = t * 1e-3;
    if (obs.rs_energy && obs.rs_energy(obs.rsmi_index, &e, &res, &ts) == 0)
        s->energy_j = (double)e * res * 1e-6;
    s->sm_mhz = read_dpm(dpm_path[0]);
    s->mem_mhz = read_dpm(dpm_path[1]);
}
#endif

int amk__obs_open(int device, char *why, size_t cap)
{
    if (!obs.tried || obs.device != device) {
        char bus[32];
        memset(&obs, 0, sizeof obs);
        obs.tried = 1;
        obs.device = device;
        if (hipDeviceGetPCIBusId(bus, (int)sizeof bus, device) != hipSuccess) {
            (void)hipGetLastError();
            snprintf(obs.why, sizeof obs.why, "the runtime gave no PCI bus id for device %d",
                     device);
        } else {
            obs.ok = open_lib(bus);
        }
    }
    if (!obs.ok && why && cap)
        snprintf(why, cap, "%s", obs.why);
    return obs.ok;
}

void amk__obs_read(amk__obs_sample *s)
{
    s->t_s = now_s();
    s->sm_mhz = s->mem_mhz = s->power_w = s->temp_c = s->energy_j = NAN;
    s->throttle = 0;
    if (obs.ok)
        read_lib(s);
}

/* ---------- the watcher: readings taken beside the timing thread ------------------------- */

#define WATCH_PERIOD_S 0.005 /* pause between two readings while watching */
#define WATCH_RING 32         /* readings kept for amk__obs_taken_after */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake, fresh;
    pthread_t thread;
    int started, on;
    amk__obs_sample latest; /* t_s < 0: none since the watch began */
    amk__obs_sample ring[WATCH_RING];
    long taken;             /* readings since the watch began (ring[taken % WATCH_RING]) */
} watch = {.mu = PTHREAD_MUTEX_INITIALIZER,
           .wake = PTHREAD_COND_INITIALIZER,
           .fresh = PTHREAD_COND_INITIALIZER};

static void *watcher(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&watch.mu);
    for (;;) {
        while (!watch.on)
            pthread_cond_wait(&watch.wake, &watch.mu);
        pthread_mutex_unlock(&watch.mu);
        amk__obs_sample s;
        amk__obs_read(&s);
        struct timespec pause = {0, (long)(WATCH_PERIOD_S * 1e9)};
        pthread_mutex_lock(&watch.mu);
        if (watch.on) {
            watch.latest = s;
            watch.ring[watch.taken++ % WATCH_RING] = s;
            pthread_cond_broadcast(&watch.fresh);
        }
        pthread_mutex_unlock(&watch.mu);
        nanosleep(&pause, NULL);
        pthread_mutex_lock(&watch.mu);
    }
    return NULL;
}

void amk__obs_watch(int on)
{
    pthread_mutex_lock(&watch.mu);
    if (on && !watch.started && obs.ok)
        watch.started = pthread_create(&watch.thread, NULL, watcher, NULL) == 0;
    watch.on = on && watch.started;
    watch.latest.t_s = -1;
    watch.taken = 0;
    pthread_cond_signal(&watch.wake);
    pthread_mutex_unlock(&watch.mu);
}

void amk__obs_latest(amk__obs_sample *s)
{
    pthread_mutex_lock(&watch.mu);
    int on = watch.on;
    while (watch.on && watch.latest.t_s < 0) /* the window's first reading is a real one */
        pthread_cond_wait(&watch.fresh, &watch.mu);
    if (on)
        *s = watch.latest;
    pthread_mutex_unlock(&watch.mu);
    if (!on) /* not watching (no library, no thread): a reading now */
        amk__obs_read(s);
}

int amk__obs_taken_after(double after, amk__obs_sample *out, int max)
{
    int n = 0;
    pthread_mutex_lock(&watch.mu);
    long first = watch.taken > WATCH_RING ? watch.taken - WATCH_RING : 0;
    for (long i = first; i < watch.taken && n < max; i++)
        if (watch.ring[i % WATCH_RING].t_s > after)
            out[n++] = watch.ring[i % WATCH_RING];
    pthread_mutex_unlock(&watch.mu);
    return n;
}

/* bench_check: the host side of the correctness gate on big shapes: input generation
 * (amk__check_fill) and comparison (amk__check_compare) for gemm 4096^3 f32 (A and B, 16Mi
 * elements each; C compared, 16Mi) and rmsnorm bf16 32768x4096 (x and w filled; y compared,
 * 128Mi elements), with 1 thread and with the default count (AMK_CHECK_THREADS, else the
 * cores, at most 16), plus any counts given. Buffers are touched before timing (the run
 * worker keeps its host buffers across jobs), each figure is the best of --reps runs, and the
 * bytes and the compare verdicts must be identical for every thread count (exit 1 if not).
 *
 *   bench_check [--reps N] [--threads T]...      (the device machine: 16 cores)
 */
#include "numeric/numeric_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_ms(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Wall and CPU (all threads) time; on a loaded machine the CPU time is the steadier one. */
typedef struct stamp {
    double wall, cpu;
} stamp;

static stamp now(void)
{
    return (stamp){clock_ms(CLOCK_MONOTONIC), clock_ms(CLOCK_PROCESS_CPUTIME_ID)};
}

typedef struct timing {
    double wall, cpu; /* best of the runs, ms */
} timing;

static void keep_best(timing *t, stamp a, stamp b)
{
    if (b.wall - a.wall < t->wall) {
        t->wall = b.wall - a.wall;
        t->cpu = b.cpu - a.cpu;
    }
}

typedef struct bufspec {
    const char *name;
    int dt, init;
    int64_t count;
    int compared; /* 1: an output (compared against a perturbed copy), else an input */
} bufspec;

typedef struct workload {
    const char *name;
    double reduction;
    int nbufs;
    bufspec bufs[3];
} workload;

static const workload loads[] = {
    {"gemm f32 4096^3", 4096, 3,
     {{"A", AMK__DT_F32, AMK__INIT_UNIFORM, 4096LL * 4096, 0},
      {"B", AMK__DT_F32, AMK__INIT_UNIFORM, 4096LL * 4096, 0},
      {"C", AMK__DT_F32, AMK__INIT_UNIFORM, 4096LL * 4096, 1}}},
    {"rmsnorm bf16 32768x4096", 1, 3,
     {{"x", AMK__DT_BF16, AMK__INIT_NORMAL, 32768LL * 4096, 0},
      {"w", AMK__DT_BF16, AMK__INIT_POSITIVE, 4096, 0},
      {"y", AMK__DT_BF16, AMK__INIT_NORMAL, 32768LL * 4096, 1}}},
};

/* FNV-1a of a buffer: the fingerprint that must not change with the thread count. */
static uint64_t fingerprint(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    return h;
}

/* Times one workload with `threads` threads: fill of the inputs, compare of the output
 * (want = a fill, got = want with one element nudged out of tolerance, so the whole
 * buffer is scanned and one mismatch is reported). */
static int run(const workload *w, int threads, int reps, void **mem, uint64_t *sig,
               int64_t *worst, timing *fill, timing *cmp)
{
    *fill = *cmp = (timing){INFINITY, INFINITY};
    for (int r = 0; r < reps; r++) {
        stamp t0 = now();
        for (int b = 0; b < w->nbufs; b++)
            if (!w->bufs[b].compared)
                amk__check_fill_threads(mem[b], w->bufs[b].dt, w->bufs[b].count,
                                        w->bufs[b].init, 7, (uint64_t)b, threads);
        keep_best(fill, t0, now());
    }
    *sig = 0;
    for (int b = 0; b < w->nbufs; b++)
        if (!w->bufs[b].compared)
            *sig ^= fingerprint(mem[b], (size_t)w->bufs[b].count * amk__dtype_size(w->bufs[b].dt));
    for (int b = 0; b < w->nbufs; b++) {
        const bufspec *o = &w->bufs[b];
        if (!o->compared)
            continue;
        void *want = mem[b], *got = mem[w->nbufs];
        size_t bytes = (size_t)o->count * amk__dtype_size(o->dt);
        amk__check_fill_threads(want, o->dt, o->count, o->init, 7, 99, threads);
        memcpy(got, want, bytes);
        int64_t k = o->count / 3;
        amk__dtype_put(o->dt, got, k, amk__dtype_get(o->dt, want, k) * 1.5 + 1.0);
        for (int r = 0; r < reps; r++) {
            amk__compare c;
            stamp t0 = now();
            int pass = amk__check_compare_threads(o->dt, got, want, o->count, w->reduction, 1.0,
                                                  NAN, threads, &c);
            keep_best(cmp, t0, now());
            if (pass || c.worst != k || c.bad != 1) {
                fprintf(stderr, "bench_check: %s: compare reported %lld (%lld bad), want %lld\n",
                        w->name, (long long)c.worst, (long long)c.bad, (long long)k);
                return 0;
            }
            *worst = c.worst;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    int reps = 3, counts[16], ncounts = 0;
    counts[ncounts++] = 1;
    counts[ncounts++] = amk__check_threads();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && ncounts < 16)
            counts[ncounts++] = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_check [--reps N] [--threads T]...\n");
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    printf("bench_check: host fill + compare of the correctness gate, best of %d; default "
           "threads here: %d\n", reps, amk__check_threads());
    printf("%-24s %7s %9s %9s %12s %12s %10s\n", "workload", "threads", "fill_ms",
           "fill_cpu", "compare_ms", "compare_cpu", "total_ms");
    int ok = 1;
    for (size_t l = 0; l < sizeof loads / sizeof loads[0]; l++) {
        const workload *w = &loads[l];
        void *mem[4] = {0};
        size_t biggest = 0;
        for (int b = 0; b <= w->nbufs; b++) {
            size_t bytes = b < w->nbufs
                               ? (size_t)w->bufs[b].count * amk__dtype_size(w->bufs[b].dt)
                               : biggest;
            if (bytes > biggest)
                biggest = bytes;
            mem[b] = malloc(bytes);
            if (!mem[b]) {
                fprintf(stderr, "bench_check: out of memory\n");
                return 1;
            }
            memset(mem[b], 0, bytes); /* page faults are not what is measured */
        }
        uint64_t sig0 = 0;
        int64_t worst0 = -1;
        for (int t = 0; t < ncounts; t++) {
            uint64_t sig;
            int64_t worst = -1;
            timing fill = {0, 0}, cmp = {0, 0};
            if (!run(w, counts[t], reps, mem, &sig, &worst, &fill, &cmp)) {
                ok = 0;
                continue;
            }
            if (t == 0) {
                sig0 = sig;
                worst0 = worst;
            } else if (sig != sig0 || worst != worst0) {
                fprintf(stderr, "bench_check: %s: %d threads gave other results than 1\n",
                        w->name, counts[t]);
                ok = 0;
            }
            printf("%-24s %7d %9.1f %9.1f %12.1f %12.1f %10.1f\n", w->name, counts[t],
                   fill.wall, fill.cpu, cmp.wall, cmp.cpu, fill.wall + cmp.wall);
        }
        for (int b = 0; b <= w->nbufs; b++)
            free(mem[b]);
    }
    return ok ? 0 : 1;
}

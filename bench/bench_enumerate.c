/* Times amk_space_enumerate over a 10^7-point raw space with 3 restrictions (fixture
 * tests/fixtures/specs/good/big, or the spec folder given as argv[1]) and, for comparison,
 * the per-point path (amk_config_check on each raw point) on a prefix of the same space.
 * Usage: bench_enumerate [SPEC_DIR] [REPEATS] */
#include "amk_space_defs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU time of this process: the machine may be shared, so wall time alone misleads. */
static double cpu_s(void)
{
    return (double)clock() / CLOCKS_PER_SEC;
}

static int count_cb(const amk_config *c, void *ud)
{
    (void)c;
    (*(long long *)ud)++;
    return 0;
}

static int next_point(const amk_spec *s, amk_config *c)
{
    for (int i = amk_spec_n_params(s) - 1; i >= 0; i--) {
        if (++c->choice[i] < amk_spec_param_n_choices(s, i))
            return 1;
        c->choice[i] = 0;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : AMK_TEST_FIXTURES "/specs/good/big";
    int repeats = argc > 2 ? atoi(argv[2]) : 3;
    if (repeats < 1)
        repeats = 1;
    amk_diag d = {0};
    amk_spec *s = NULL;
    if (amk_spec_load(dir, &s, &d)) {
        fprintf(stderr, "bench_enumerate: %s\n", d.msg);
        return 1;
    }
    /* H100-like limits */
    amk_limits lim = {.max_threads = 1024, .max_smem = 49152, .max_smem_optin = 232448,
                      .smem_per_sm = 233472, .warp = 32, .sm_count = 132, .regs_per_sm = 65536,
                      .max_regs_per_thread = 255, .max_blocks_per_sm = 32,
                      .max_threads_per_sm = 2048, .max_grid_x = 2147483647,
                      .max_grid_yz = 65535, .l2_bytes = 52428800};
    amk_space *sp = NULL;
    if (amk_space_create(s, NULL, &lim, &sp, &d)) {
        fprintf(stderr, "bench_enumerate: %s\n", d.msg);
        amk_spec_free(s);
        return 1;
    }
    double raw = amk_space_raw_size(sp);
    double best = 1e30, best_cpu = 1e30;
    long long valid = 0;
    for (int r = 0; r < repeats; r++) {
        long long n = 0;
        double t0 = amk_now_s(), c0 = cpu_s();
        int rc = amk_space_enumerate(sp, count_cb, &n);
        double dt = amk_now_s() - t0, dc = cpu_s() - c0;
        if (dc < best_cpu)
            best_cpu = dc;
        if (rc) {
            fprintf(stderr, "bench_enumerate: enumerate failed: %s\n", amk_strerror(rc));
            return 1;
        }
        if (dt < best)
            best = dt;
        valid = n;
    }
    printf("spec            %s (%d params, raw %.0f points)\n", amk_spec_name(s),
           amk_spec_n_params(s), raw);
    printf("enumerate       valid %lld, best of %d: %.3f s wall (%.3f s CPU), %.3g raw "
           "points/s\n", valid, repeats, best, best_cpu, raw / best);

    /* The per-point path on the first 10^6 raw points (or all of a smaller space). */
    long long limit = raw < 1e6 ? (long long)raw : 1000000, seen = 0, ok = 0;
    amk_config c;
    amk_config_default(s, NULL, &c);
    memset(c.choice, 0, sizeof c.choice);
    double t0 = amk_now_s(), c0 = cpu_s();
    do {
        if (amk_config_check(&c, &lim, NULL) == AMK_OK)
            ok++;
        seen++;
    } while (seen < limit && next_point(s, &c));
    double dt = amk_now_s() - t0, dc = cpu_s() - c0;
    printf("per-point check %lld points (%lld valid) in %.3f s wall (%.3f s CPU), %.3g "
           "points/s\n", seen, ok, dt, dc, (double)seen / dt);
    amk_space_free(sp);
    amk_spec_free(s);
    return 0;
}

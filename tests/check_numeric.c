/* Check suite for evaluator/numeric/, the host numerics of the correctness gate and the
 * benchmark; no GPU needed, nor a GPU layer: the leaf is in every build.
 * - check.c on large buffers, where the fill and the comparison run on several threads: the
 *   bytes and the reported worst element must not depend on the thread count, inputs are
 *   never zero in any type, and the NaN poison is still caught.
 * - bench_stats.c, the stopping rule (the host side of evaluator/gpu/bench.c): the median's
 *   confidence interval, the reps cap, chunk sizes, the merge that keeps samples sorted, and
 *   whole timings replayed on synthetic samples the way amk__bench_run drives them: tight
 *   samples stop at the minimums, noisy ones run to the window, a clearly slower config
 *   stops as beaten, ci_rel = 0 keeps the fixed window.
 * - the element types' conversions, fill and comparison on small buffers, the tolerance's
 *   scaling, the median/IQR summary and the L2 rotation sets. */
#include "amk_test.h"
#include "numeric/numeric_int.h"

#include <check.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Seven parts need 7 x 64Ki elements; odd, so the last normal pair is cut in half. */
#define BIG (7 * 65536 + 12345)

static const int all_types[] = {AMK__DT_F32, AMK__DT_F16, AMK__DT_BF16, AMK__DT_FP8E4M3,
                                AMK__DT_INT8, AMK__DT_F64, AMK__DT_I32};
#define NTYPES (int)(sizeof all_types / sizeof all_types[0])
static const int thread_counts[] = {1, 2, 7};

/* ---------- amk__check_fill ------------------------------------------------------------- */

START_TEST(test_check_fill_same_bytes_for_any_thread_count)
{
    size_t cap = (size_t)BIG * 8;
    unsigned char *ref = malloc(cap), *other = malloc(cap);
    ck_assert(ref && other);
    for (int t = 0; t < NTYPES; t++)
        for (int init = AMK__INIT_UNIFORM; init <= AMK__INIT_POSITIVE; init++) {
            int dt = all_types[t];
            size_t bytes = (size_t)BIG * amk__dtype_size(dt);
            amk__check_fill_threads(ref, dt, BIG, init, 1234, 5, 1);
            for (size_t k = 1; k < sizeof thread_counts / sizeof thread_counts[0]; k++) {
                memset(other, 0, bytes);
                amk__check_fill_threads(other, dt, BIG, init, 1234, 5, thread_counts[k]);
                ck_assert_msg(memcmp(ref, other, bytes) == 0, "%s init %d: %d threads differ",
                              amk__dtype_name(dt), init, thread_counts[k]);
            }
            /* the default count (AMK_CHECK_THREADS or the cores) too */
            memset(other, 0, bytes);
            amk__check_fill(other, dt, BIG, init, 1234, 5);
            ck_assert(memcmp(ref, other, bytes) == 0);
        }
    free(ref);
    free(other);
}
END_TEST

/* Element i is a function of (seed, stream, i) alone: a shorter buffer is a prefix, a
 * buffer filled in pieces by hand would be the same. */
START_TEST(test_check_fill_prefix_is_shorter_fill)
{
    static const int64_t lens[] = {1, 2, 63, 64, 65, 65537, 131071};
    float *big = malloc(sizeof(float) * BIG), *small = malloc(sizeof(float) * BIG);
    ck_assert(big && small);
    for (int init = AMK__INIT_UNIFORM; init <= AMK__INIT_POSITIVE; init++) {
        amk__check_fill_threads(big, AMK__DT_F32, BIG, init, 99, 0, 7);
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
            amk__check_fill_threads(small, AMK__DT_F32, lens[k], init, 99, 0, 2);
            ck_assert_msg(memcmp(big, small, sizeof(float) * (size_t)lens[k]) == 0,
                          "init %d: first %lld elements differ", init, (long long)lens[k]);
        }
    }
    free(big);
    free(small);
}
END_TEST

START_TEST(test_check_fill_never_zero_in_any_type)
{
    size_t cap = (size_t)BIG * 8;
    unsigned char *a = malloc(cap), *b = malloc(cap);
    ck_assert(a && b);
    for (int t = 0; t < NTYPES; t++)
        for (int init = AMK__INIT_UNIFORM; init <= AMK__INIT_POSITIVE; init++) {
            int dt = all_types[t], is_float = amk__dtype_is_float(dt);
            amk__check_fill_threads(a, dt, BIG, init, 7, 1, 7);
            double lo = INFINITY, hi = -INFINITY, sum = 0, sum2 = 0;
            int64_t negative = 0, within_sigma = 0;
            /* per element: plain tests (a ck_assert writes to Check's pipe every time) */
            for (int64_t i = 0; i < BIG; i++) {
                double v = amk__dtype_get(dt, a, i);
                if (v == 0.0 || !isfinite(v) || (is_float && amk__check_poisoned(dt, a, i)) ||
                    (!is_float && v != nearbyint(v)))
                    ck_abort_msg("%s init %d: element %lld is %g", amk__dtype_name(dt), init,
                                 (long long)i, v);
                lo = fmin(lo, v);
                hi = fmax(hi, v);
                negative += v < 0;
                within_sigma += fabs(v) < 1.0;
                sum += v;
                sum2 += v * v;
            }
            if (init == AMK__INIT_POSITIVE) {
                ck_assert_msg(lo > 0 && (is_float ? hi <= 1.5 : hi <= 2), "%s: [%g, %g]",
                              amk__dtype_name(dt), lo, hi);
            } else if (init == AMK__INIT_UNIFORM) {
                double bound = is_float ? 1.0 : 8.0; /* integers: round(8u), exact */
                ck_assert_msg(lo >= -bound && hi <= bound && lo < -0.9 * bound &&
                                  hi > 0.9 * bound, "%s: [%g, %g]", amk__dtype_name(dt), lo, hi);
            } else { /* normal: about half negative, tails past 3 sigma */
                double sigma = is_float ? 1.0 : 8.0;
                ck_assert(negative > BIG * 0.45 && negative < BIG * 0.55);
                ck_assert_msg(hi > 3 * sigma || dt == AMK__DT_INT8, "%s: max %g",
                              amk__dtype_name(dt), hi);
                if (dt == AMK__DT_F64) { /* the moments and P(|x| < 1) of N(0, 1) */
                    double mean = sum / BIG, var = sum2 / BIG - mean * mean;
                    double p1 = (double)within_sigma / BIG;
                    ck_assert_msg(fabs(mean) < 0.01 && fabs(var - 1) < 0.02 &&
                                      fabs(p1 - 0.6827) < 0.005,
                                  "normal: mean %g var %g P(|x|<1) %g", mean, var, p1);
                }
            }
            /* other seed, other stream: other data */
            size_t bytes = (size_t)BIG * amk__dtype_size(dt);
            amk__check_fill_threads(b, dt, BIG, init, 8, 1, 7);
            ck_assert(memcmp(a, b, bytes) != 0);
            amk__check_fill_threads(b, dt, BIG, init, 7, 2, 7);
            ck_assert(memcmp(a, b, bytes) != 0);
        }
    /* workspace buffers: zero bytes */
    memset(a, 0x5a, cap);
    amk__check_fill_threads(a, AMK__DT_F32, BIG, AMK__INIT_ZERO, 7, 1, 7);
    for (int64_t i = 0; i < BIG; i++)
        if (amk__dtype_get(AMK__DT_F32, a, i) != 0.0)
            ck_abort_msg("init zero: element %lld is not 0", (long long)i);
    free(a);
    free(b);
}
END_TEST

/* Init "constant": every element is the value in the buffer's type, zero included
 * (Kernel Tuner's FillType Constant); int8 saturates like every conversion to it. */
START_TEST(test_check_fill_value_every_element)
{
    float f[1000];
    amk__check_fill_value(f, AMK__DT_F32, 1000, 3.5);
    for (int i = 0; i < 1000; i++)
        ck_assert(f[i] == 3.5f);
    amk__check_fill_value(f, AMK__DT_F32, 10, 0.0);
    ck_assert(f[0] == 0.0f && f[9] == 0.0f && f[10] == 3.5f); /* only count elements */
    uint16_t h[7];
    amk__check_fill_value(h, AMK__DT_F16, 7, 0.25);
    for (int i = 0; i < 7; i++)
        ck_assert_uint_eq(h[i], 0x3400); /* 0.25 in binary16 */
    signed char c[5];
    amk__check_fill_value(c, AMK__DT_INT8, 5, 200.0);
    ck_assert_int_eq(c[4], 127);
    ck_assert_int_eq(amk__init_from_name("constant"), AMK__INIT_CONSTANT);
}
END_TEST

/* An .npy file (version 1 header padded to 64 bytes) for the data-file tests. */
static void write_npy(const char *path, const char *dict, const void *data, size_t bytes)
{
    char hdr[119]; /* 10 + 118 = 128 bytes before the data */
    size_t hl = sizeof hdr;
    snprintf(hdr, sizeof hdr, "%-117s\n", dict);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl - 1), 0};
    fwrite(pre, 1, 10, f);
    fwrite(hdr, 1, hl - 1, f);
    fwrite(data, 1, bytes, f);
    fclose(f);
}

/* Data files ("data" inputs, "answer" outputs): .npy headers parsed (type, count, offset),
 * raw files taken as bytes, and a file of another size or item type refused by the read. */
START_TEST(test_data_probe_and_read)
{
    char dir[256], p[512];
    amk_test_tmpdir_make(dir, sizeof dir, "numeric-data");
    float six[6] = {1, 2, 3, 4, 5, 6}, got[6] = {0};
    snprintf(p, sizeof p, "%s/a.npy", dir);
    write_npy(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", six, sizeof six);
    amk_data_info in;
    amk_diag d = {0};
    ck_assert_int_eq(amk_data_probe(p, &in, &d), AMK_OK);
    ck_assert(in.is_npy && in.kind == 'f' && in.elt_size == 4 && in.count == 6);
    ck_assert_int_eq(in.offset, 128);
    ck_assert_int_eq(in.bytes, 24);
    ck_assert_int_eq(amk_data_read(p, got, 24, 4, &d), AMK_OK);
    ck_assert(got[0] == 1 && got[5] == 6);
    ck_assert_int_eq(amk_data_read(p, got, 20, 4, &d), AMK_EPARSE); /* another count */
    ck_assert_int_eq(amk_data_read(p, got, 24, 2, &d), AMK_EPARSE); /* another item size */
    ck_assert_msg(strstr(d.msg, "a.npy holds 24 bytes"), "%s", d.msg);
    snprintf(p, sizeof p, "%s/u8.npy", dir);
    write_npy(p, "{'descr': '|u1', 'fortran_order': False, 'shape': (6,), }", six, 6);
    ck_assert_int_eq(amk_data_probe(p, &in, &d), AMK_OK);
    ck_assert(in.kind == 'u' && in.elt_size == 1 && in.count == 6);
    static const char *const bad[] = {
        "{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }",   /* big-endian */
        "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }",   /* complex */
        "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",  /* Fortran order */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }",   /* more than the data */
        "{'fortran_order': False, 'shape': (6,), }",                   /* no descr */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(p, sizeof p, "%s/bad%zu.npy", dir, i);
        write_npy(p, bad[i], six, sizeof six);
        ck_assert_msg(amk_data_probe(p, &in, &d) == AMK_EPARSE, "bad %zu accepted", i);
    }
    snprintf(p, sizeof p, "%s/raw.bin", dir);
    amk_test_write_file(p, "0123456789");
    ck_assert_int_eq(amk_data_probe(p, &in, &d), AMK_OK);
    ck_assert(!in.is_npy && in.bytes == 10 && in.offset == 0);
    char ten[10];
    ck_assert_int_eq(amk_data_read(p, ten, 10, 1, &d), AMK_OK);
    ck_assert(ten[9] == '9');
    snprintf(p, sizeof p, "%s/none", dir);
    ck_assert_int_eq(amk_data_probe(p, &in, &d), AMK_EIO);
    amk_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_check_threads_from_environment)
{
    setenv("AMK_CHECK_THREADS", "3", 1);
    ck_assert_int_eq(amk__check_threads(), 3);
    setenv("AMK_CHECK_THREADS", "1000", 1);
    ck_assert_int_eq(amk__check_threads(), 64);
    setenv("AMK_CHECK_THREADS", "many", 1);
    int n = amk__check_threads();
    ck_assert(n >= 1 && n <= 16);
    unsetenv("AMK_CHECK_THREADS");
    ck_assert_int_eq(amk__check_threads(), n);
}
END_TEST

START_TEST(test_check_threads_for_shares_the_cores)
{
    unsetenv("AMK_CHECK_THREADS");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < cores)
        cores = CPU_COUNT(&set);
    ck_assert_int_eq(amk__check_threads_for(1), amk__check_threads());
    for (int sharers = 1; sharers <= 9; sharers++) {
        long want = cores / sharers;
        want = want < 1 ? 1 : want > 16 ? 16 : want;
        ck_assert_int_eq(amk__check_threads_for(sharers), (int)want);
    }
    ck_assert_int_eq(amk__check_threads_for(1000), 1);
    ck_assert_int_eq(amk__check_threads_for(0), amk__check_threads());
    /* The variable is per process: it is not divided. */
    setenv("AMK_CHECK_THREADS", "3", 1);
    ck_assert_int_eq(amk__check_threads_for(8), 3);
    unsetenv("AMK_CHECK_THREADS");
}
END_TEST

/* ---------- amk__check_compare ---------------------------------------------------------- */

/* Compares with 1, 2 and 7 threads; the reports must agree field by field. Returns the
 * verdict and leaves the 1-thread report in *out. */
static int compare_all(int dt, const void *got, const void *want, int64_t n, double atol,
                       amk__compare *out)
{
    int pass = amk__check_compare_threads(dt, got, want, n, 256, 1.0, atol, 1, out);
    for (size_t k = 1; k < sizeof thread_counts / sizeof thread_counts[0]; k++) {
        amk__compare c;
        int p = amk__check_compare_threads(dt, got, want, n, 256, 1.0, atol, thread_counts[k],
                                           &c);
        ck_assert_int_eq(p, pass);
        ck_assert_msg(c.worst == out->worst && c.kind == out->kind && c.bad == out->bad,
                      "%d threads: worst %lld kind %d bad %lld; 1 thread: %lld %d %lld",
                      thread_counts[k], (long long)c.worst, c.kind, (long long)c.bad,
                      (long long)out->worst, out->kind, (long long)out->bad);
        ck_assert_int_eq(c.unwritten, out->unwritten);
        ck_assert_int_eq(c.nonfinite, out->nonfinite);
        ck_assert(c.max_ref == out->max_ref);
        ck_assert(memcmp(&c.tol, &out->tol, sizeof c.tol) == 0);
        ck_assert(c.worst < 0 || isnan(c.got) || c.got == out->got);
        ck_assert(c.worst < 0 || c.want == out->want || (isnan(c.want) && isnan(out->want)));
        ck_assert(c.worst < 0 || c.diff == out->diff || isnan(c.diff));
        ck_assert(c.limit == out->limit || isnan(c.limit));
    }
    return pass;
}

START_TEST(test_check_compare_same_worst_for_any_thread_count)
{
    float *want = malloc(sizeof(float) * BIG), *got = malloc(sizeof(float) * BIG);
    ck_assert(want && got);
    amk__check_fill_threads(want, AMK__DT_F32, BIG, AMK__INIT_UNIFORM, 3, 0, 7);
    memcpy(got, want, sizeof(float) * BIG);
    amk__compare c;
    ck_assert(compare_all(AMK__DT_F32, got, want, BIG, NAN, &c));
    ck_assert_int_eq(c.worst, -1);
    ck_assert_int_eq(c.bad, 0);

    /* Equal ratios in different parts: the lowest index wins; a smaller miss does not. */
    static const int64_t ties[] = {400001, 100003, 300007, BIG - 1};
    for (size_t k = 0; k < sizeof ties / sizeof ties[0]; k++) {
        want[ties[k]] = 0.5f;
        got[ties[k]] = 0.75f;
    }
    want[20] = 0.5f;
    got[20] = 0.625f;
    ck_assert(!compare_all(AMK__DT_F32, got, want, BIG, NAN, &c));
    ck_assert_int_eq(c.kind, AMK__CMP_MISMATCH);
    ck_assert_int_eq(c.worst, 100003);
    ck_assert_int_eq(c.bad, 5);

    /* a larger miss in the last part beats them */
    want[BIG - 2] = 0.5f;
    got[BIG - 2] = 0.875f;
    ck_assert(!compare_all(AMK__DT_F32, got, want, BIG, NAN, &c));
    ck_assert_int_eq(c.worst, BIG - 2);

    /* non-finite (not poison) beats numeric: the first one */
    got[450000] = INFINITY;
    got[250000] = -INFINITY;
    ck_assert(!compare_all(AMK__DT_F32, got, want, BIG, NAN, &c));
    ck_assert_int_eq(c.kind, AMK__CMP_NONFINITE);
    ck_assert_int_eq(c.worst, 250000);
    ck_assert_int_eq(c.nonfinite, 2);

    /* a reference that is not finite: the first one, whatever the parts */
    want[330000] = NAN;
    want[390000] = INFINITY;
    ck_assert(!compare_all(AMK__DT_F32, got, want, BIG, NAN, &c));
    ck_assert_int_eq(c.kind, AMK__CMP_REF_NONFINITE);
    ck_assert_int_eq(c.worst, 330000);
    free(want);
    free(got);
}
END_TEST

START_TEST(test_check_compare_poison_caught_for_any_thread_count)
{
    static const int types[] = {AMK__DT_F32, AMK__DT_BF16, AMK__DT_F16, AMK__DT_FP8E4M3,
                                AMK__DT_INT8};
    unsigned char *want = malloc((size_t)BIG * 4), *got = malloc((size_t)BIG * 4);
    ck_assert(want && got);
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        int dt = types[t];
        size_t sz = amk__dtype_size(dt);
        amk__check_fill_threads(want, dt, BIG, AMK__INIT_NORMAL, 11, 0, 7);
        memcpy(got, want, (size_t)BIG * sz);
        /* The candidate left its last 70000 elements and one early element unwritten; a
         * non-finite value before them still loses to the unwritten ones. */
        int64_t tail = BIG - 70000;
        memset(got + (size_t)tail * sz, 0xff, (size_t)70000 * sz);
        memset(got + (size_t)123457 * sz, 0xff, sz);
        if (amk__dtype_is_float(dt))
            amk__dtype_put(dt, got, 1000, INFINITY);
        /* int8 poison is -1: an element whose reference is -1 is a right answer. */
        int64_t first = -1, unwritten = 0;
        for (int64_t i = 0; i < BIG; i++)
            if ((i == 123457 || i >= tail) &&
                (amk__dtype_is_float(dt) || amk__dtype_get(dt, want, i) != -1.0)) {
                unwritten++;
                if (first < 0)
                    first = i;
            }
        ck_assert(first >= 123457 && first < tail && unwritten > 60000);
        amk__compare c;
        ck_assert(!compare_all(dt, got, want, BIG, NAN, &c));
        ck_assert_msg(c.kind == AMK__CMP_UNWRITTEN && c.worst == first, "%s: kind %d worst %lld",
                      amk__dtype_name(dt), c.kind, (long long)c.worst);
        ck_assert_int_eq(c.unwritten, unwritten);
        char text[400], expect[64];
        amk__compare_describe(&c, "y", text, sizeof text);
        snprintf(expect, sizeof expect, "y[%lld] left unwritten", (long long)first);
        ck_assert_msg(strstr(text, expect), "%s", text);
    }
    /* An int8 element whose reference is -1 (the poison byte) is a correct answer. */
    int8_t w8[4] = {3, -1, 5, -7}, g8[4] = {3, -1, 5, -7};
    amk__compare c;
    ck_assert(amk__check_compare_threads(AMK__DT_INT8, g8, w8, 4, 1, 1.0, NAN, 7, &c));
    g8[2] = -1;
    ck_assert(!amk__check_compare_threads(AMK__DT_INT8, g8, w8, 4, 1, 1.0, NAN, 7, &c));
    ck_assert_int_eq(c.kind, AMK__CMP_UNWRITTEN);
    ck_assert_int_eq(c.worst, 2);
    free(want);
    free(got);
}
END_TEST

/* ---------- deterministic samples ------------------------------------------------------- */

static double uniform01(uint64_t *st) /* splitmix64 -> (0, 1) */
{
    uint64_t z = (*st += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(uint64_t *st)
{
    double u = uniform01(st), v = uniform01(st);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* A kernel's launch times as a fraction of its median. */
typedef double (*draw_fn)(uint64_t *st);
static double tight(uint64_t *st) { return 1 + 0.004 * normal(st); }       /* IQR ~0.5% */
static double noisy(uint64_t *st) { return 0.5 + uniform01(st); }          /* IQR 50% */
static double skewed(uint64_t *st) { return -log(uniform01(st)) / log(2); } /* exp, median 1 */

/* Defaults with no AMK_BENCH_* variable in the way. */
static void defaults(amk__bench_opts *o)
{
    static const char *vars[] = {"AMK_BENCH_WINDOW_MS", "AMK_BENCH_MIN_WINDOW_MS",
                                 "AMK_BENCH_MIN_REPS", "AMK_BENCH_WARMUP_MS", "AMK_BENCH_CI",
                                 "AMK_BENCH_SCREEN", "AMK_BENCH_WARM"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    amk__bench_opts_default(o);
}

/* One timing replayed as amk__bench_run drives it (cap, chunks, merge, rule), with samples
 * median_us * draw() for a kernel whose warm-up estimate was median_us. */
static void replay(const amk__bench_opts *o, double median_us, draw_fn draw,
                   amk__bench_stats *st)
{
    double est_ms = median_us / 1e3, timed_ms = 0;
    int cap_why, why = AMK__STOP_NONE, done = 0, ruled = 0;
    int cap = amk__bench_reps_cap(est_ms, o, &cap_why);
    double *s = malloc((size_t)cap * sizeof *s), *scratch = malloc((size_t)cap * sizeof *s);
    ck_assert(s && scratch);
    uint64_t rng = 12345;
    while (!ruled && done < cap) {
        int chunk = amk__bench_next_chunk(done, cap, est_ms, o);
        ck_assert_int_ge(chunk, 1);
        ck_assert_int_le(chunk, 64);
        ck_assert_int_le(done + chunk, cap);
        for (int r = 0; r < chunk; r++) {
            s[done + r] = median_us * draw(&rng);
            timed_ms += s[done + r] / 1e3;
        }
        amk__bench_merge(s, done, chunk, scratch);
        double lo, hi;
        why = amk__bench_should_stop(s, done + chunk, timed_ms, o, &lo, &hi);
        ruled = why != AMK__STOP_NONE;
        done += chunk;
    }
    amk__bench_summarize(s, done, st);
    st->stop = ruled ? why : cap_why;
    free(s);
    free(scratch);
}

/* ---------- amk__bench_median_ci -------------------------------------------------------- */

START_TEST(test_bench_median_ci_ranks)
{
    double s[40], lo, hi;
    for (int i = 0; i < 40; i++)
        s[i] = i + 1; /* value = 1-based rank */
    ck_assert(!amk__bench_median_ci(s, 7, &lo, &hi));
    ck_assert(isnan(lo) && isnan(hi));
    ck_assert(amk__bench_median_ci(s, 8, &lo, &hi));
    ck_assert(lo == 1 && hi == 8);
    ck_assert(amk__bench_median_ci(s, 20, &lo, &hi)); /* 10 -+ 4.38: ranks 5 and 16 */
    ck_assert(lo == 5 && hi == 16);
    ck_assert(amk__bench_median_ci(s, 40, &lo, &hi)); /* 20 -+ 6.20: ranks 13 and 28 */
    ck_assert(lo == 13 && hi == 28);
}
END_TEST

/* The interval holds the true median about 95% of the time (a little more: the ranks are
 * rounded outwards) on a skewed distribution, for several n. */
START_TEST(test_bench_median_ci_covers_the_median)
{
    static const int ns[] = {20, 37, 100};
    double s[100];
    uint64_t rng = 7;
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        int n = ns[t], hit = 0, trials = 4000;
        for (int k = 0; k < trials; k++) {
            double lo, hi;
            for (int i = 0; i < n; i++)
                s[i] = skewed(&rng);
            amk__bench_stats st;
            amk__bench_summarize(s, n, &st); /* sorts */
            ck_assert(amk__bench_median_ci(s, n, &lo, &hi));
            ck_assert(lo == st.ci_lo_us && hi == st.ci_hi_us);
            hit += lo <= 1.0 && 1.0 <= hi;
        }
        double cover = (double)hit / trials;
        ck_assert_msg(cover >= 0.94 && cover <= 0.995, "n %d: coverage %.4f", n, cover);
    }
}
END_TEST

/* ---------- cap, chunks, merge ----------------------------------------------------------- */

START_TEST(test_bench_reps_cap_window_and_caps)
{
    amk__bench_opts o;
    defaults(&o);
    int why;
    ck_assert_int_eq(amk__bench_reps_cap(0.27, &o, &why), 371); /* 100 ms / 270 us */
    ck_assert_int_eq(why, AMK__STOP_WINDOW);
    ck_assert_int_eq(amk__bench_reps_cap(10.0, &o, &why), 20); /* reps_min */
    ck_assert_int_eq(why, AMK__STOP_WINDOW);
    ck_assert_int_eq(amk__bench_reps_cap(0.005, &o, &why), 2000); /* reps_max */
    ck_assert_int_eq(why, AMK__STOP_CAP);
    ck_assert_int_eq(amk__bench_reps_cap(100.0, &o, &why), 10); /* 1 s of work */
    ck_assert_int_eq(why, AMK__STOP_CAP);
    ck_assert_int_eq(amk__bench_reps_cap(5000.0, &o, &why), 3);
}
END_TEST

START_TEST(test_bench_next_chunk_minimums_then_steps)
{
    amk__bench_opts o;
    defaults(&o);
    /* 270 us: first the 10 ms minimum window (38 launches), then steps of 16. */
    ck_assert_int_eq(amk__bench_next_chunk(0, 371, 0.27, &o), 38);
    ck_assert_int_eq(amk__bench_next_chunk(38, 371, 0.27, &o), 16);
    ck_assert_int_eq(amk__bench_next_chunk(365, 371, 0.27, &o), 6); /* never past the cap */
    /* 5 us: a step is 1 ms of work (200 launches), so 64 at a time. */
    ck_assert_int_eq(amk__bench_next_chunk(2000 - 100, 2000, 0.005, &o), 64);
    /* Screening: reps_min first (a beaten config may stop there), then the window. */
    o.beat_us = 100;
    ck_assert_int_eq(amk__bench_next_chunk(0, 371, 0.27, &o), 20);
    ck_assert_int_eq(amk__bench_next_chunk(20, 371, 0.27, &o), 18);
    /* No adaptive stop: the fixed window in chunks of 64. */
    o.beat_us = NAN;
    o.ci_rel = 0;
    ck_assert_int_eq(amk__bench_next_chunk(0, 371, 0.27, &o), 64);
    ck_assert_int_eq(amk__bench_next_chunk(320, 371, 0.27, &o), 51);
}
END_TEST

START_TEST(test_bench_merge_keeps_samples_sorted)
{
    double s[320], want[320], scratch[320];
    uint64_t rng = 99;
    int n = 0;
    static const int chunks[] = {37, 1, 16, 64, 5, 64, 64, 53}; /* 304 in all */
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        for (int r = 0; r < chunks[c]; r++)
            want[n + r] = s[n + r] = floor(uniform01(&rng) * 50); /* with ties */
        amk__bench_merge(s, n, chunks[c], scratch);
        n += chunks[c];
        amk__bench_stats st;
        amk__bench_summarize(want, n, &st); /* qsort: the reference order */
        ck_assert(memcmp(s, want, (size_t)n * sizeof *s) == 0);
    }
}
END_TEST

/* ---------- the stopping rule on replayed timings ---------------------------------------- */

START_TEST(test_bench_should_stop_tight_at_minimums)
{
    amk__bench_opts o;
    amk__bench_stats st;
    defaults(&o);
    /* 270 us (the gemm race): the 10 ms minimum window decides, not the CI. */
    replay(&o, 270, tight, &st);
    ck_assert_int_eq(st.stop, AMK__STOP_CI);
    ck_assert_int_eq(st.reps, 38);
    ck_assert(fabs(st.median_us - 270) < 270 * 0.005);
    /* 2 ms: reps_min decides (20 reps = 40 ms). */
    replay(&o, 2000, tight, &st);
    ck_assert_int_eq(st.stop, AMK__STOP_CI);
    ck_assert_int_eq(st.reps, 20);
    /* The note says so. */
    char note[128];
    amk__bench_stop_note(&st, &o, note, sizeof note);
    ck_assert_msg(strncmp(note, "stopped: CI +-0.", 16) == 0 && strstr(note, "after 20 reps"),
                  "%s", note);
}
END_TEST

START_TEST(test_bench_should_stop_noisy_runs_to_the_window)
{
    amk__bench_opts o;
    amk__bench_stats st;
    defaults(&o);
    replay(&o, 270, noisy, &st);
    ck_assert_int_eq(st.stop, AMK__STOP_WINDOW);
    ck_assert_int_eq(st.reps, 371);
    /* Past reps_max, the cap says so. */
    replay(&o, 5, noisy, &st);
    ck_assert_int_eq(st.stop, AMK__STOP_CAP);
    ck_assert_int_eq(st.reps, 2000);
    /* A looser CI lets the same noise stop early, after the minimum window. */
    o.ci_rel = 0.2;
    replay(&o, 270, noisy, &st);
    ck_assert_int_eq(st.stop, AMK__STOP_CI);
    ck_assert_int_lt(st.reps, 371);
}
END_TEST

START_TEST(test_bench_should_stop_beaten_config)
{
    amk__bench_opts o;
    amk__bench_stats st;
    char note[128];
    defaults(&o);
    /* Twice the incumbent's latency, even noisy: out after reps_min. */
    o.beat_us = 135;
    replay(&o, 270, noisy, &st);
    ck_assert_int_eq(st.stop, AMK__STOP_BEATEN);
    ck_assert_int_eq(st.reps, 20);
    ck_assert(st.ci_lo_us > 135 * 1.10);
    amk__bench_stop_note(&st, &o, note, sizeof note);
    ck_assert_msg(strncmp(note, "stopped: >= 1.", 14) == 0 && strstr(note, "x the incumbent "
                  "after 20 reps"), "%s", note);
    /* 5% slower is inside the 10% margin: measured like any other config. */
    o.beat_us = 270 / 1.05;
    replay(&o, 270, tight, &st);
    ck_assert_int_eq(st.stop, AMK__STOP_CI);
    ck_assert_int_eq(st.reps, 38);
    /* Faster than the incumbent: never beaten, the noise runs it to the window. */
    o.beat_us = 540;
    replay(&o, 270, noisy, &st);
    ck_assert_int_eq(st.stop, AMK__STOP_WINDOW);
    /* AMK_BENCH_SCREEN=0: the same slow config runs its course. */
    setenv("AMK_BENCH_SCREEN", "0", 1);
    amk__bench_opts_default(&o);
    unsetenv("AMK_BENCH_SCREEN");
    o.beat_us = 135;
    replay(&o, 270, noisy, &st);
    ck_assert_int_eq(st.stop, AMK__STOP_WINDOW);
    ck_assert_int_eq(st.reps, 371);
}
END_TEST

START_TEST(test_bench_should_stop_ci_zero_keeps_the_window)
{
    amk__bench_opts o;
    amk__bench_stats st;
    defaults(&o);
    o.ci_rel = 0;
    replay(&o, 270, tight, &st);
    ck_assert_int_eq(st.stop, AMK__STOP_WINDOW);
    ck_assert_int_eq(st.reps, 371);
    replay(&o, 2000, tight, &st);
    ck_assert_int_eq(st.stop, AMK__STOP_WINDOW);
    ck_assert_int_eq(st.reps, 50);
    /* Directly: pinned samples, far past every minimum, still no stop. */
    double s[400], lo, hi;
    for (int i = 0; i < 400; i++)
        s[i] = 100;
    ck_assert_int_eq(amk__bench_should_stop(s, 400, 40.0, &o, &lo, &hi), AMK__STOP_NONE);
    o.ci_rel = 0.01;
    ck_assert_int_eq(amk__bench_should_stop(s, 400, 40.0, &o, &lo, &hi), AMK__STOP_CI);
    ck_assert_int_eq(amk__bench_should_stop(s, 400, 9.9, &o, &lo, &hi), AMK__STOP_NONE);
    ck_assert_int_eq(amk__bench_should_stop(s, 19, 40.0, &o, &lo, &hi), AMK__STOP_NONE);
}
END_TEST

/* n sorted samples spread evenly over center * (1 +- half). */
static void even(double *s, int n, double center, double half)
{
    for (int i = 0; i < n; i++)
        s[i] = center * (1 - half + 2 * half * i / (n - 1));
}

START_TEST(test_bench_pair_decided_only_clear_of_the_boundaries)
{
    double a[64], b[64];
    even(a, 64, 100, 0.004);
    /* 3% faster: the ratio's interval lies below 1 - 1% */
    even(b, 64, 97, 0.004);
    ck_assert_int_eq(amk__bench_pair_decided(a, 64, b, 64, 0.01), 1);
    /* the same work: within +-1% whatever the noise left */
    even(b, 64, 100.2, 0.004);
    ck_assert_int_eq(amk__bench_pair_decided(a, 64, b, 64, 0.01), 1);
    /* 3% slower: above 1 + 1% */
    even(b, 64, 103, 0.004);
    ck_assert_int_eq(amk__bench_pair_decided(a, 64, b, 64, 0.01), 1);
    /* 1% faster: the interval straddles 1 - 1%: undecided, more reps needed */
    even(b, 64, 99, 0.004);
    ck_assert_int_eq(amk__bench_pair_decided(a, 64, b, 64, 0.01), 0);
    /* wide samples straddle a boundary, the same medians pinned do not */
    even(b, 64, 97.5, 0.1);
    ck_assert_int_eq(amk__bench_pair_decided(a, 64, b, 64, 0.01), 0);
    even(b, 64, 97.5, 0.001);
    ck_assert_int_eq(amk__bench_pair_decided(a, 64, b, 64, 0.01), 1);
    /* no CI yet (under 8 samples), or no gain asked: never */
    ck_assert_int_eq(amk__bench_pair_decided(a, 7, b, 7, 0.01), 0);
    ck_assert_int_eq(amk__bench_pair_decided(a, 64, b, 64, 0), 0);
}
END_TEST

START_TEST(test_bench_opts_default_environment)
{
    amk__bench_opts o;
    defaults(&o);
    ck_assert(o.ci_rel == 0.01 && o.min_window_s == 0.010 && o.warmup_s == 0.005);
    ck_assert(o.window_s == 0.100 && o.screen_margin == 0.10 && isnan(o.beat_us));
    setenv("AMK_BENCH_CI", "0.005", 1);
    setenv("AMK_BENCH_MIN_WINDOW_MS", "25", 1);
    setenv("AMK_BENCH_WARMUP_MS", "20", 1);
    setenv("AMK_BENCH_SCREEN", "1", 1);
    amk__bench_opts_default(&o);
    ck_assert(o.ci_rel == 0.005 && o.min_window_s == 0.025 && o.warmup_s == 0.020);
    ck_assert(o.screen_margin == 0.10);
    setenv("AMK_BENCH_CI", "junk", 1); /* not a number: the default */
    setenv("AMK_BENCH_SCREEN", "0", 1);
    amk__bench_opts_default(&o);
    ck_assert(o.ci_rel == 0.01 && isinf(o.screen_margin));
    defaults(&o);
}
END_TEST

/* Readings around timed chunks fold into means, extremes, every throttle reason, and the
 * energy counter's advance inside the chunks only (idle gaps between them do not count). */
START_TEST(test_obs_add_span_folds_readings)
{
    amk__obs o;
    amk__obs_init(&o);
    ck_assert(isnan(amk__obs_mean_power(&o)) && o.samples == 0);
    amk__obs_sample a = {10.0, 1980, 2619, 300, 40, 1000.0, 0};
    amk__obs_sample b = {10.6, 1800, 2619, 650, 55, 1420.0, 0x4};  /* 420 J in 0.6 s */
    amk__obs_sample c = {12.0, 1700, 2619, 90, 50, 1500.0, 0x1};   /* after an idle gap */
    amk__obs_sample e = {12.6, 1600, 2619, 640, 58, 1920.0, 0x40}; /* 420 J in 0.6 s */
    amk__obs_add_span(&o, &a, &b);
    amk__obs_add_span(&o, &c, &e);
    ck_assert_int_eq(o.samples, 2);
    ck_assert(o.sm_mhz == 1700 && o.sm_mhz_min == 1600 && o.sm_mhz_max == 1800);
    ck_assert(o.temp_c == 58 && o.throttle == (0x4 | 0x40));
    /* 1.2 s of the config's own load in two spans (the idle gap between them not counted) */
    ck_assert_msg(fabs(amk__obs_mean_power(&o) - 700) < 1e-6, "%g", amk__obs_mean_power(&o));
    char t[64];
    amk__obs_throttle_text(o.throttle | 0x1, t, sizeof t);
    ck_assert_str_eq(t, "sw_power_cap,hw_thermal"); /* idle is not a throttle */
    /* No energy counter: the last power reading. */
    amk__obs_init(&o);
    amk__obs_sample n1 = {1, NAN, NAN, 500, NAN, NAN, 0}, n2 = {2, NAN, NAN, 600, NAN, NAN, 0};
    amk__obs_add_span(&o, &n1, &n2);
    amk__obs_add_span(&o, &n2, &n1);
    ck_assert(fabs(amk__obs_mean_power(&o) - 500) < 1e-9 && isnan(o.sm_mhz));
    ck_assert(fabs(o.power_w - 550) < 1e-9);
    /* Nothing read: nothing counted. */
    amk__obs_sample none = {3, NAN, NAN, NAN, NAN, NAN, 0};
    amk__obs_add(&o, &none);
    ck_assert_int_eq(o.samples, 2);
}
END_TEST

START_TEST(test_obs_settled_needs_load_time_and_steady_chunks)
{
    /* The clock coming down under a power cap: 3% per 100 ms, then flat. */
    double us[] = {100, 103, 106, 109, 112, 114, 115, 115.2, 115.1, 115.3, 115.2, 115.2};
    ck_assert(!amk__obs_settled(us, 5, 0.0, 5.0, 1.0, 0.005));  /* fewer than 6 chunks */
    ck_assert(!amk__obs_settled(us, 6, 0.0, 5.0, 1.0, 0.005));  /* still slowing */
    ck_assert(!amk__obs_settled(us, 12, 0.0, 0.5, 1.0, 0.005)); /* steady, loaded 0.5 s only */
    ck_assert(amk__obs_settled(us, 12, 0.0, 1.0, 1.0, 0.005));
    double zero[] = {0, 0, 0, 0, 0, 0};
    ck_assert(!amk__obs_settled(zero, 6, 0.0, 2.0, 1.0, 0.005));
    /* Loaded for the sustain time before the warm-up began: 2 chunks warm the caches, the
     * power state is already there; not loaded that long: the whole rule. */
    ck_assert(!amk__obs_settled(us, 1, 1.5, 1.5, 1.0, 0.005));
    ck_assert(amk__obs_settled(us, 2, 1.5, 1.5, 1.0, 0.005));
    ck_assert(!amk__obs_settled(us, 2, 0.9, 1.5, 1.0, 0.005));
    ck_assert(!amk__obs_settled(zero, 2, 1.5, 1.5, 1.0, 0.005));
    /* Power: the counter over >= 1 s of load, else the last reading (a moving average). */
    amk__obs o;
    amk__obs_init(&o);
    amk__obs_sample a = {0.0, 1980, 2619, 150, 50, 100.0, 0};
    amk__obs_sample b = {1.2, 1400, 2619, 640, 66, 940.0, 0x4}; /* 840 J over 1.2 s */
    amk__obs_add_span(&o, &a, &b);
    ck_assert(fabs(amk__obs_mean_power(&o) - 700) < 1e-9);
    amk__obs_init(&o);
    amk__obs_sample c = {0.0, 1980, 2619, 300, 50, 100.0, 0};
    amk__obs_sample e = {0.3, 1700, 2619, 500, 55, 300.0, 0}; /* 0.3 s: the reading */
    amk__obs_add_span(&o, &c, &e);
    ck_assert(fabs(amk__obs_mean_power(&o) - 500) < 1e-9);
    ck_assert_int_eq(amk__regime_from_name("burst"), AMK__REGIME_BURST);
    ck_assert_int_eq(amk__regime_from_name("sustained"), AMK__REGIME_SUSTAINED);
    ck_assert_int_eq(amk__regime_from_name("hot"), -1);
    ck_assert_str_eq(amk__regime_name(AMK__REGIME_BURST), "burst");
    amk__bench_opts bo;
    setenv("AMK_BENCH_REGIME", "burst", 1);
    setenv("AMK_BENCH_BURST_GAP_MS", "50", 1);
    amk__bench_opts_default(&bo);
    ck_assert(bo.regime == AMK__REGIME_BURST && fabs(bo.burst_gap_s - 0.05) < 1e-12);
    unsetenv("AMK_BENCH_REGIME");
    unsetenv("AMK_BENCH_BURST_GAP_MS");
    amk__bench_opts_default(&bo);
    ck_assert(bo.regime == AMK__REGIME_SUSTAINED && bo.settle_max_s == 2.0 && bo.sustain_s == 1.0);
}
END_TEST

/* A simulated device: constant power, one launch every launch_s, an energy counter that
 * advances every tick_s (first at phase_s) to the energy used up to that instant, read
 * after every chunk of `per` launches. Returns the window's energy per launch (uJ). */
static double ewin_simulate(double power_w, double launch_s, double tick_s, double phase_s,
                            int per, double want_s, amk__energy_window *w)
{
    amk__ewin_start(w, want_s, 5000.0); /* the counter at the start: 5 kJ since boot */
    for (long n = 1; n < 100000; n++) {
        double t = n * per * launch_s;
        double last_tick = t < phase_s ? 0 : phase_s + floor((t - phase_s) / tick_s) * tick_s;
        double counter = 5000.0 + power_w * last_tick;
        int st = amk__ewin_feed(w, counter, t, (double)(n * per));
        if (st == AMK__EWIN_DONE || st == AMK__EWIN_FAILED)
            break;
    }
    double uj = NAN, ms = NAN;
    int ticks = 0;
    return amk__ewin_result(w, &uj, &ms, &ticks) ? uj : NAN;
}

START_TEST(test_ewin_counts_launches_between_whole_ticks)
{
    /* 700 W, 1.4 ms launches (0.98 J each), ticks every 100 ms, a reading every 5 launches:
     * the window opens at the first tick and closes at the first tick after 1 s. */
    amk__energy_window w;
    double want = 700 * 1.4e-3 * 1e6;
    for (int k = 0; k < 7; k++) {
        double phase = 0.013 + k * 0.0137; /* ticks fall anywhere between two readings */
        double uj = ewin_simulate(700, 1.4e-3, 0.1, phase, 5, 1.0, &w);
        /* the tick instants are known to half a chunk (3.5 ms) at each end of ~1.1 s */
        ck_assert_msg(fabs(uj - want) / want < 0.0075, "phase %g: %g uJ, want %g", phase, uj,
                      want);
        double u, ms;
        int ticks;
        ck_assert(amk__ewin_result(&w, &u, &ms, &ticks));
        ck_assert_msg(ticks >= 10 && ticks <= 11 && ms >= 1000 && ms < 1110, "%d ticks %g ms",
                      ticks, ms);
        ck_assert(w.t0_s >= phase); /* opened at a tick, not at the start */
    }
    /* A longer window: more ticks, a smaller quantisation error. */
    double uj = ewin_simulate(700, 1.4e-3, 0.1, 0.05, 5, 2.0, &w);
    ck_assert(fabs(uj - want) / want < 0.004);
    ck_assert_int_ge(w.ticks, 20);
    ck_assert(fabs(amk_energy_noise(w.ticks) - 1.0 / w.ticks) < 1e-15);
    /* Wrong by a whole tick if the window were not aligned: the arithmetic must not be. */
    ck_assert(fabs(ewin_simulate(300, 20e-6, 0.1, 0.0371, 250, 1.0, &w) - 300 * 20) < 300 * 20 *
                                                                                         0.01);
}
END_TEST

START_TEST(test_ewin_fails_without_a_usable_counter)
{
    amk__energy_window w;
    double uj, ms;
    int ticks;
    amk__ewin_start(&w, 1.0, NAN); /* no counter */
    ck_assert_int_eq(w.state, AMK__EWIN_FAILED);
    ck_assert_ptr_nonnull(w.why);
    ck_assert_int_eq(amk__ewin_feed(&w, 10, 0.1, 5), AMK__EWIN_FAILED);
    ck_assert(!amk__ewin_result(&w, &uj, &ms, &ticks));
    amk__ewin_start(&w, 1.0, 10);
    ck_assert_int_eq(amk__ewin_feed(&w, 10, 0.05, 5), AMK__EWIN_WAIT); /* no advance yet */
    ck_assert_int_eq(amk__ewin_feed(&w, 12, 0.10, 10), AMK__EWIN_OPEN);
    ck_assert(w.n0 == 7.5); /* the tick fell between the readings after 5 and 10 launches */
    ck_assert(!amk__ewin_result(&w, &uj, &ms, &ticks)); /* not complete */
    ck_assert_int_eq(amk__ewin_feed(&w, 11, 0.15, 15), AMK__EWIN_FAILED); /* backwards */
    ck_assert_str_eq(w.why, "the energy counter went backwards");
    /* A window shorter than asked never closes, however many ticks. */
    amk__ewin_start(&w, 1.0, 0);
    for (int i = 1; i <= 9; i++)
        ck_assert_int_ne(amk__ewin_feed(&w, i, 0.1 * i, 10.0 * i), AMK__EWIN_DONE);
    ck_assert_int_eq(amk__ewin_feed(&w, 10, 1.0, 100), AMK__EWIN_OPEN);
    ck_assert_int_eq(amk__ewin_feed(&w, 11, 1.1, 110), AMK__EWIN_DONE);
    ck_assert(amk__ewin_result(&w, &uj, &ms, &ticks));
    ck_assert_int_eq(ticks, 10);
    ck_assert(fabs(uj - 10 * 1e6 / 100) < 1e-6 && fabs(ms - 1000) < 1e-6);
    /* The window's length: AMK_ENERGY_WINDOW_MS, else 1 s. */
    ck_assert(amk__energy_window_s() == 1.0);
    setenv("AMK_ENERGY_WINDOW_MS", "2500", 1);
    ck_assert(amk__energy_window_s() == 2.5);
    setenv("AMK_ENERGY_WINDOW_MS", "5", 1); /* below a counter tick: the default */
    ck_assert(amk__energy_window_s() == 1.0);
    unsetenv("AMK_ENERGY_WINDOW_MS");
}
END_TEST

START_TEST(test_objective_score_and_noise)
{
    ck_assert(amk_objective_score(AMK_OBJ_TIME, 100, NAN, 0) == 100);
    ck_assert(amk_objective_score(AMK_OBJ_ENERGY, 100, 5e4, 10) == 5e4);
    ck_assert(amk_objective_score(AMK_OBJ_EDP, 100, 5e4, 10) == 5e6);
    /* an estimate (no counter window) is not an energy measurement */
    ck_assert(isnan(amk_objective_score(AMK_OBJ_ENERGY, 100, 5e4, 0)));
    ck_assert(isnan(amk_objective_score(AMK_OBJ_EDP, NAN, 5e4, 10)));
    ck_assert(isnan(amk_objective_score(AMK_OBJ_TIME, -1, 5e4, 10)));
    ck_assert(amk_objective_noise(AMK_OBJ_TIME, 0.02, 10) == 0.02);
    ck_assert(fabs(amk_objective_noise(AMK_OBJ_ENERGY, 0.02, 10) - 0.1) < 1e-15);
    ck_assert(fabs(amk_objective_noise(AMK_OBJ_EDP, 0.02, 10) - 0.12) < 1e-15);
    ck_assert(amk_objective_noise(AMK_OBJ_ENERGY, NAN, 0) == 0);
    ck_assert(isnan(amk_energy_noise(0)));
    amk_objective o;
    ck_assert_int_eq(amk_objective_parse("edp", &o), AMK_OK);
    ck_assert_int_eq(o, AMK_OBJ_EDP);
    ck_assert_int_eq(amk_objective_parse("GFLOP/s", &o), AMK_EPARSE);
    ck_assert_str_eq(amk_objective_name(AMK_OBJ_ENERGY), "energy");
}
END_TEST

/* amdgpu's DPM tables: the starred level is the current clock. */
START_TEST(test_obs_dpm_mhz_reads_the_starred_level)
{
    ck_assert(amk__obs_dpm_mhz("0: 500Mhz\n1: 1700Mhz *\n2: 2100Mhz\n") == 1700);
    ck_assert(amk__obs_dpm_mhz("S: 100Mhz *\n0: 500Mhz\n1: 1700Mhz\n") == 100);
    ck_assert(amk__obs_dpm_mhz("0: 1600Mhz *") == 1600);      /* no final newline */
    ck_assert(amk__obs_dpm_mhz("0: 96MHz\n1: 1000MHZ *\n") == 1000);
    ck_assert(isnan(amk__obs_dpm_mhz("0: 500Mhz\n1: 1700Mhz\n"))); /* none starred */
    ck_assert(isnan(amk__obs_dpm_mhz("")));
    ck_assert(isnan(amk__obs_dpm_mhz("1: fast *\n")));        /* not a clock */
    ck_assert(isnan(amk__obs_dpm_mhz("1: 1700 *\n")));        /* no unit */
    ck_assert(isnan(amk__obs_dpm_mhz("1700Mhz *\n")));        /* no level */
}
END_TEST

START_TEST(test_bench_stop_note_words)
{
    amk__bench_opts o;
    defaults(&o);
    amk__bench_stats st = {.median_us = 100, .ci_lo_us = 99.5, .ci_hi_us = 100.4, .reps = 37,
                           .stop = AMK__STOP_CI};
    char note[128];
    amk__bench_stop_note(&st, &o, note, sizeof note);
    ck_assert_str_eq(note, "stopped: CI +-0.50% after 37 reps");
    st.stop = AMK__STOP_WINDOW;
    amk__bench_stop_note(&st, &o, note, sizeof note);
    ck_assert_str_eq(note, "stopped: 100 ms window after 37 reps, CI +-0.50%");
    st.stop = AMK__STOP_BEATEN;
    o.beat_us = 80;
    amk__bench_stop_note(&st, &o, note, sizeof note);
    ck_assert_str_eq(note, "stopped: >= 1.24x the incumbent after 37 reps");
    st.stop = AMK__STOP_CAP;
    st.ci_lo_us = NAN;
    amk__bench_stop_note(&st, &o, note, sizeof note);
    ck_assert_str_eq(note, "stopped: cap after 37 reps");
    ck_assert_str_eq(amk__bench_stop_name(AMK__STOP_BEATEN), "beaten");
}
END_TEST

/* ---------- element types --------------------------------------------------------- */

START_TEST(test_dtype_conversions_round_to_nearest_even)
{
    ck_assert_uint_eq(amk__f32_to_f16(1.0f), 0x3c00);
    ck_assert_uint_eq(amk__f32_to_f16(-2.0f), 0xc000);
    ck_assert_uint_eq(amk__f32_to_f16(65504.0f), 0x7bff);
    ck_assert_uint_eq(amk__f32_to_f16(65520.0f), 0x7c00);             /* rounds up to inf */
    ck_assert_uint_eq(amk__f32_to_f16(1.0f + 0x1p-11f), 0x3c00);      /* tie -> even */
    ck_assert_uint_eq(amk__f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);  /* tie -> even (up) */
    ck_assert_uint_eq(amk__f32_to_f16(0x1p-24f), 0x0001);             /* smallest subnormal */
    ck_assert_uint_eq(amk__f32_to_f16(0x1p-26f), 0x0000);
    ck_assert(amk__f16_to_f32(0x0001) == 0x1p-24f);
    ck_assert(amk__f16_to_f32(0x3555) == 0x1.554p-2f);
    ck_assert(isnan(amk__f16_to_f32(0xffff)));
    ck_assert_uint_eq(amk__f32_to_bf16(1.0f), 0x3f80);
    ck_assert_uint_eq(amk__f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);      /* tie -> even */
    ck_assert_uint_eq(amk__f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
    ck_assert(isnan(amk__bf16_to_f32(0xffff)));
    ck_assert_uint_eq(amk__f32_to_fp8e4m3(1.0f), 0x38);
    ck_assert_uint_eq(amk__f32_to_fp8e4m3(448.0f), 0x7e);
    ck_assert_uint_eq(amk__f32_to_fp8e4m3(1000.0f), 0x7e);            /* saturates */
    ck_assert_uint_eq(amk__f32_to_fp8e4m3(0x1p-9f), 0x01);
    ck_assert_uint_eq(amk__f32_to_fp8e4m3(-1.125f), 0xb9);
    ck_assert(isnan(amk__fp8e4m3_to_f32(0xff)));
    for (int b = 0; b < 256; b++) { /* every finite fp8 value survives a round trip */
        float f = amk__fp8e4m3_to_f32((uint8_t)b);
        if (!isnan(f) && !(f == 0 && b == 0x80))
            ck_assert_uint_eq(amk__f32_to_fp8e4m3(f), (unsigned)b);
    }
    ck_assert_int_eq(amk__dtype_from_name("bf16"), AMK__DT_BF16);
    ck_assert_int_eq(amk__dtype_from_name("f13"), -1);
}
END_TEST

START_TEST(test_check_fill_deterministic_never_zero)
{
    /* 20000 draws: the mean bound below is still about 5 sigma, and the suite stays fast
     * under sanitizers. */
    enum { N = 20000 };
    static const int types[] = {AMK__DT_F32, AMK__DT_F16, AMK__DT_BF16, AMK__DT_FP8E4M3,
                                AMK__DT_INT8};
    static unsigned char a[N * 4], b[N * 4];
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int init = AMK__INIT_UNIFORM; init <= AMK__INIT_POSITIVE; init++) {
            int dt = types[t];
            amk__check_fill(a, dt, N, init, 42, 3);
            amk__check_fill(b, dt, N, init, 42, 3);
            ck_assert_mem_eq(a, b, N * amk__dtype_size(dt));
            double lo = INFINITY, hi = -INFINITY, sum = 0;
            for (int i = 0; i < N; i++) {
                double v = amk__dtype_get(dt, a, i);
                ck_assert_msg(v != 0.0 && isfinite(v), "%s init %d: element %d is %g",
                              amk__dtype_name(dt), init, i, v);
                lo = fmin(lo, v);
                hi = fmax(hi, v);
                sum += v;
            }
            if (init == AMK__INIT_POSITIVE && amk__dtype_is_float(dt)) {
                ck_assert(lo >= 0.5 && hi <= 1.5);
            } else if (init == AMK__INIT_UNIFORM && amk__dtype_is_float(dt)) {
                ck_assert(lo >= -1.0 && hi <= 1.0 && lo < -0.9 && hi > 0.9);
                ck_assert(fabs(sum / N) < 0.02);
            }
            amk__check_fill(b, dt, N, init, 43, 3); /* another seed: other data */
            ck_assert(memcmp(a, b, N * amk__dtype_size(dt)) != 0);
            amk__check_fill(b, dt, N, init, 42, 4); /* another buffer: other data */
            ck_assert(memcmp(a, b, N * amk__dtype_size(dt)) != 0);
        }
}
END_TEST

/* ---------- comparison ------------------------------------------------------------ */

START_TEST(test_check_compare_detects_each_failure)
{
    enum { N = 1000 };
    float want[N], got[N];
    amk__compare c;
    char text[400];
    for (int i = 0; i < N; i++)
        want[i] = got[i] = (float)(i % 17) - 8.5f;
    ck_assert(amk__check_compare(AMK__DT_F32, got, want, N, 64, 1.0, NAN, &c));
    ck_assert_int_eq(c.bad, 0);
    ck_assert_int_eq(c.worst, -1);

    /* within tolerance: off by a tenth of the bound */
    amk__tolerance tol;
    amk__tolerance_for(AMK__DT_F32, 64, 1.0, NAN, 8.5, &tol);
    got[10] = want[10] + (float)(0.1 * (tol.atol + tol.rtol * fabs(want[10])));
    ck_assert(amk__check_compare(AMK__DT_F32, got, want, N, 64, 1.0, NAN, &c));

    /* beyond: two elements, the worse one is reported */
    got[20] = want[20] + 1e-3f;
    got[30] = want[30] + 1e-2f;
    ck_assert(!amk__check_compare(AMK__DT_F32, got, want, N, 64, 1.0, NAN, &c));
    ck_assert_int_eq(c.kind, AMK__CMP_MISMATCH);
    ck_assert_int_eq(c.bad, 2);
    ck_assert_int_eq(c.worst, 30);
    amk__compare_describe(&c, "C", text, sizeof text);
    ck_assert_msg(strstr(text, "C[30]") && strstr(text, "2 of 1000"), "%s", text);

    /* NaN that is not the poison pattern beats a numeric mismatch */
    uint32_t nan_bits = 0x7fc00001;
    memcpy(&got[40], &nan_bits, 4);
    ck_assert(!amk__check_compare(AMK__DT_F32, got, want, N, 64, 1.0, NAN, &c));
    ck_assert_int_eq(c.kind, AMK__CMP_NONFINITE);
    ck_assert_int_eq(c.worst, 40);

    /* an unwritten element (still 0xFF poison) beats everything */
    memset(&got[50], 0xff, 4 * 5);
    ck_assert(!amk__check_compare(AMK__DT_F32, got, want, N, 64, 1.0, NAN, &c));
    ck_assert_int_eq(c.kind, AMK__CMP_UNWRITTEN);
    ck_assert_int_eq(c.worst, 50);
    ck_assert_int_eq(c.unwritten, 5);
    amk__compare_describe(&c, "y", text, sizeof text);
    ck_assert_msg(strstr(text, "unwritten"), "%s", text);

    /* Inf never passes, even with a huge explicit atol */
    for (int i = 0; i < N; i++)
        got[i] = want[i];
    got[7] = INFINITY;
    ck_assert(!amk__check_compare(AMK__DT_F32, got, want, N, 1, 1.0, 1e30, &c));

    /* a reference that is not finite cannot certify anything */
    got[7] = want[7];
    want[3] = NAN;
    ck_assert(!amk__check_compare(AMK__DT_F32, got, want, N, 1, 1.0, NAN, &c));
    ck_assert_int_eq(c.kind, AMK__CMP_REF_NONFINITE);
}
END_TEST

/* Float elements the reference leaves unwritten are not part of the output (Kernel Tuner's
 * reduction writes sum[0 .. num_blocks) of a larger array); elements it writes are checked
 * as before, and a reference that writes nothing certifies nothing. */
START_TEST(test_check_compare_skips_what_the_reference_left_unwritten)
{
    enum { N = 3000 };
    static const int types[] = {AMK__DT_F32, AMK__DT_F16, AMK__DT_BF16};
    static float want[N], got[N];
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        int dt = types[t];
        size_t sz = amk__dtype_size(dt);
        for (int i = 0; i < N; i++)
            amk__dtype_put(dt, want, i, 1.0 + i % 7);
        memset((char *)want + 5 * sz, 0xff, (N - 5) * sz); /* written: want[0..5) only */
        memcpy(got, want, N * sz);
        amk__compare c;
        for (int threads = 1; threads <= 7; threads += 6) {
            ck_assert(amk__check_compare_threads(dt, got, want, N, 1, 1.0, NAN, threads, &c));
            ck_assert_int_eq(c.skipped, N - 5);
            /* what the candidate holds where the reference wrote nothing does not count */
            amk__dtype_put(dt, got, 100, 42.0);
            ck_assert(amk__check_compare_threads(dt, got, want, N, 1, 1.0, NAN, threads, &c));
            memset((char *)got + 100 * sz, 0xff, sz);
            /* a written element is still checked: a wrong value, then an unwritten one */
            amk__dtype_put(dt, got, 3, 9.0);
            ck_assert(!amk__check_compare_threads(dt, got, want, N, 1, 1.0, NAN, threads, &c));
            ck_assert_int_eq(c.kind, AMK__CMP_MISMATCH);
            ck_assert_int_eq(c.worst, 3);
            memset((char *)got + 3 * sz, 0xff, sz);
            ck_assert(!amk__check_compare_threads(dt, got, want, N, 1, 1.0, NAN, threads, &c));
            ck_assert_int_eq(c.kind, AMK__CMP_UNWRITTEN);
            ck_assert_int_eq(c.worst, 3);
            memcpy(got, want, N * sz);
        }
        /* a reference that wrote nothing */
        memset(want, 0xff, N * sz);
        amk__compare c2;
        ck_assert(!amk__check_compare_threads(dt, got, want, N, 1, 1.0, NAN, 7, &c2));
        ck_assert_int_eq(c2.kind, AMK__CMP_REF_UNWRITTEN);
        char text[400];
        amk__compare_describe(&c2, "sum", text, sizeof text);
        ck_assert_msg(strstr(text, "left all 3000 elements unwritten"), "%s", text);
    }
    /* int8 has no spare pattern: 0xFF is -1, compared as a value (both unwritten pass) */
    int8_t w8[3] = {-1, -1, 4}, g8[3] = {7, -1, 4};
    amk__compare c;
    ck_assert(!amk__check_compare_threads(AMK__DT_INT8, g8, w8, 3, 1, 1.0, NAN, 1, &c));
    ck_assert_int_eq(c.skipped, 0);
}
END_TEST

START_TEST(test_check_compare_bf16_and_explicit_atol)
{
    enum { N = 64 };
    uint16_t want[N], got[N];
    for (int i = 0; i < N; i++)
        want[i] = got[i] = amk__f32_to_bf16(1.0f + i / 64.0f);
    /* one bf16 ulp at 1.x (2^-7) passes: two roundings are allowed */
    got[5] = (uint16_t)(want[5] + 1);
    amk__compare c;
    ck_assert(amk__check_compare(AMK__DT_BF16, got, want, N, 1, 1.0, NAN, &c));
    /* eight ulps do not */
    got[5] = (uint16_t)(want[5] + 8);
    ck_assert(!amk__check_compare(AMK__DT_BF16, got, want, N, 1, 1.0, NAN, &c));

    /* explicit atol: 1.25 x atol fails, 0.75 x atol passes (the faultmatrix offtol case) */
    float fw[N], fg[N];
    for (int i = 0; i < N; i++)
        fw[i] = fg[i] = 2.0f * (i / 64.0f) - 1.0f + 1.0f;
    fg[9] = fw[9] + 0.75e-3f;
    ck_assert(amk__check_compare(AMK__DT_F32, fg, fw, N, 1, 1.0, 1e-3, &c));
    fg[9] = fw[9] + 1.25e-3f;
    ck_assert(!amk__check_compare(AMK__DT_F32, fg, fw, N, 1, 1.0, 1e-3, &c));
    ck_assert_int_eq(c.worst, 9);
}
END_TEST

START_TEST(test_tolerance_for_scales_with_reduction)
{
    amk__tolerance a, b, c;
    amk__tolerance_for(AMK__DT_F32, 1, 1.0, NAN, 10.0, &a);
    amk__tolerance_for(AMK__DT_F32, 4096, 1.0, NAN, 10.0, &b);
    amk__tolerance_for(AMK__DT_F32, 4096, 2.0, NAN, 10.0, &c);
    ck_assert(b.rtol > a.rtol * 20 && b.rtol < a.rtol * 100);
    ck_assert(fabs(c.rtol - 2 * b.rtol) < 1e-15);
    ck_assert(fabs(b.atol - 10.0 * (0x1p-23 + 4 * 0x1p-23 * 64)) < 1e-12);
    amk__tolerance_for(AMK__DT_BF16, 4096, 1.0, NAN, 1.0, &a);
    ck_assert(a.rtol > 2 * 0x1p-7 && a.rtol < 3 * 0x1p-7);
    amk__tolerance_for(AMK__DT_INT8, 4096, 1.0, NAN, 1.0, &a);
    ck_assert(a.rtol == 0 && a.atol == 0);
}
END_TEST

/* ---------- statistics and rotation ----------------------------------------------- */

START_TEST(test_bench_summarize_median_iqr)
{
    double s[] = {9, 1, 5, 3, 7, 100, 2, 4, 6, 8, 10}; /* one outlier */
    amk__bench_stats st;
    amk__bench_summarize(s, 11, &st);
    ck_assert_int_eq(st.reps, 11);
    ck_assert(st.median_us == 6);
    ck_assert(st.q1_us == 3.5 && st.q3_us == 8.5);
    ck_assert(fabs(st.spread - 5.0 / 6.0) < 1e-12);
    ck_assert(st.min_us == 1 && st.max_us == 100);
    amk__bench_summarize(s, 0, &st);
    ck_assert(isnan(st.median_us) && isnan(st.spread));
}
END_TEST

START_TEST(test_bench_sets_rotation_exceeds_l2)
{
    int flush;
    int64_t l2 = 50 << 20;
    /* 192 MiB per set (gemm 4096^3 f32): two sets, no flush */
    ck_assert_int_eq(amk__bench_sets((int64_t)192 << 20, l2, (int64_t)4 << 30, &flush), 2);
    ck_assert_int_eq(flush, 0);
    /* 64 MiB (rmsnorm 4096^2 bf16): 1 + ceil(100/64) = 3 */
    ck_assert_int_eq(amk__bench_sets((int64_t)64 << 20, l2, (int64_t)4 << 30, &flush), 3);
    ck_assert_int_eq(flush, 0);
    /* 8 MiB: 14 sets rotate 104 MiB >= 2 x L2 */
    int n = amk__bench_sets((int64_t)8 << 20, l2, (int64_t)4 << 30, &flush);
    ck_assert_int_eq(n, 14);
    ck_assert((n - 1) * ((int64_t)8 << 20) >= 2 * l2 && !flush);
    /* 8 KiB: the 64-set cap cannot cover the L2: flush */
    ck_assert_int_eq(amk__bench_sets(8192, l2, (int64_t)4 << 30, &flush), 64);
    ck_assert_int_eq(flush, 1);
    /* not enough memory for the rotation: flush */
    ck_assert_int_eq(amk__bench_sets((int64_t)64 << 20, l2, (int64_t)100 << 20, &flush), 1);
    ck_assert_int_eq(flush, 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("numeric");
    TCase *fill = tcase_create("amk__check_fill");
    tcase_set_timeout(fill, 300);
    tcase_add_test(fill, test_check_fill_same_bytes_for_any_thread_count);
    tcase_add_test(fill, test_check_fill_prefix_is_shorter_fill);
    tcase_add_test(fill, test_check_fill_never_zero_in_any_type);
    tcase_add_test(fill, test_check_threads_from_environment);
    tcase_add_test(fill, test_check_fill_value_every_element);
    tcase_add_test(fill, test_data_probe_and_read);
    tcase_add_test(fill, test_check_threads_for_shares_the_cores);
    suite_add_tcase(s, fill);
    TCase *cmp = tcase_create("amk__check_compare");
    tcase_set_timeout(cmp, 300);
    tcase_add_test(cmp, test_check_compare_same_worst_for_any_thread_count);
    tcase_add_test(cmp, test_check_compare_poison_caught_for_any_thread_count);
    suite_add_tcase(s, cmp);
    TCase *ci = tcase_create("amk__bench_median_ci");
    tcase_add_test(ci, test_bench_median_ci_ranks);
    tcase_add_test(ci, test_bench_median_ci_covers_the_median);
    suite_add_tcase(s, ci);
    TCase *plan = tcase_create("amk__bench_next_chunk");
    tcase_add_test(plan, test_bench_reps_cap_window_and_caps);
    tcase_add_test(plan, test_bench_next_chunk_minimums_then_steps);
    tcase_add_test(plan, test_bench_merge_keeps_samples_sorted);
    suite_add_tcase(s, plan);
    TCase *stop = tcase_create("amk__bench_should_stop");
    tcase_add_test(stop, test_bench_should_stop_tight_at_minimums);
    tcase_add_test(stop, test_bench_should_stop_noisy_runs_to_the_window);
    tcase_add_test(stop, test_bench_should_stop_beaten_config);
    tcase_add_test(stop, test_bench_should_stop_ci_zero_keeps_the_window);
    tcase_add_test(stop, test_bench_pair_decided_only_clear_of_the_boundaries);
    tcase_add_test(stop, test_bench_opts_default_environment);
    tcase_add_test(stop, test_bench_stop_note_words);
    suite_add_tcase(s, stop);
    TCase *host = tcase_create("types, tolerance, rotation");
    tcase_set_timeout(host, 60); /* input generation over large buffers: slow under sanitizers */
    tcase_add_test(host, test_dtype_conversions_round_to_nearest_even);
    tcase_add_test(host, test_check_fill_deterministic_never_zero);
    tcase_add_test(host, test_check_compare_detects_each_failure);
    tcase_add_test(host, test_check_compare_bf16_and_explicit_atol);
    tcase_add_test(host, test_check_compare_skips_what_the_reference_left_unwritten);
    tcase_add_test(host, test_tolerance_for_scales_with_reduction);
    tcase_add_test(host, test_bench_summarize_median_iqr);
    tcase_add_test(host, test_bench_sets_rotation_exceeds_l2);
    suite_add_tcase(s, host);
    TCase *obs = tcase_create("amk__obs");
    tcase_add_test(obs, test_obs_add_span_folds_readings);
    tcase_add_test(obs, test_obs_settled_needs_load_time_and_steady_chunks);
    tcase_add_test(obs, test_ewin_counts_launches_between_whole_ticks);
    tcase_add_test(obs, test_ewin_fails_without_a_usable_counter);
    tcase_add_test(obs, test_objective_score_and_noise);
    tcase_add_test(obs, test_obs_dpm_mhz_reads_the_starred_level);
    suite_add_tcase(s, obs);
    return s;
}

int main(void)
{
    return amk_test_run(suite());
}

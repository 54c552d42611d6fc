/* Check suite for the benchmark's stopping rule (evaluator/numeric/bench_stats.c, the host
 * side of evaluator/gpu/bench.c): the median's confidence interval, the reps cap, chunk
 * sizes, the merge that keeps samples sorted, and whole timings replayed on synthetic
 * samples the way amk__bench_run drives them: tight samples stop at the minimums, noisy ones
 * run to the window, a clearly slower config stops as beaten, ci_rel = 0 keeps the fixed
 * window. No GPU needed, nor a GPU layer: the numeric leaf is in every build. */
#include "amk_test.h"
#include "numeric/numeric_int.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static Suite *suite(void)
{
    Suite *s = suite_create("gpu_bench");
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
    tcase_add_test(stop, test_bench_opts_default_environment);
    tcase_add_test(stop, test_bench_stop_note_words);
    suite_add_tcase(s, stop);
    return s;
}

int main(void)
{
    return amk_test_run(suite());
}

/* Check suite for cost_model: targets, feasibility, floor and prediction, ceilings,
 * calibration. Uses the fixture kernel tests/fixtures/specs/costfix. */
#include "amk_cost_model.h"
#include "amk_evaluator.h" /* measured ceilings files */
#include "amk_test.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static amk_spec *spec;

static void load_spec(void)
{
    amk_diag d = {0};
    int rc = amk_spec_load(AMK_TEST_FIXTURES "/specs/costfix", &spec, &d);
    ck_assert_msg(rc == AMK_OK, "costfix fixture: %s", d.msg);
}

static void free_spec(void) { amk_spec_free(spec); }

/* A config of costfix with params given by value (each must be a declared choice). */
static amk_config make(const char *shape, int bm, int bn, int threads, int smem_kb, int regs)
{
    amk_config c;
    amk_shape sh;
    amk_diag d = {0};
    ck_assert_msg(amk_shape_parse(spec, shape, &sh, &d) == AMK_OK, "%s", d.msg);
    amk_config_default(spec, &sh, &c);
    const int want[5] = {bm, bn, threads, smem_kb, regs};
    const char *names[5] = {"BM", "BN", "THREADS", "SMEM_KB", "REGS"};
    for (int k = 0; k < 5; k++) {
        int p = amk_spec_param_index(spec, names[k]), found = 0;
        ck_assert_int_ge(p, 0);
        for (int j = 0; j < amk_spec_param_n_choices(spec, p); j++)
            if (amk_spec_param_value(spec, p, j) == want[k]) {
                c.choice[p] = (uint8_t)j;
                found = 1;
            }
        ck_assert_msg(found, "%s=%d is not a choice", names[k], want[k]);
    }
    return c;
}

START_TEST(test_amk_target_find_by_key_arch_and_device_name)
{
    ck_assert_str_eq(amk_target_find("h100")->key, "h100");
    ck_assert_str_eq(amk_target_find("NVIDIA H100 80GB HBM3")->key, "h100");
    ck_assert_str_eq(amk_target_find("NVIDIA H200")->key, "h200");
    ck_assert_str_eq(amk_target_find("sm_80")->key, "a100");
    ck_assert_str_eq(amk_target_find("gfx942")->key, "mi300x");
    ck_assert_str_eq(amk_target_find("AMD Instinct MI250X")->key, "mi250x");
    ck_assert_ptr_null(amk_target_find("Voodoo 2"));
    ck_assert_ptr_null(amk_target_find(""));
    ck_assert_int_ge(amk_target_count(), 5);
}
END_TEST

START_TEST(test_amk_target_at_has_design_numbers)
{
    const amk_target *h = amk_target_find("h100");
    ck_assert_int_eq(h->limits.sm_count, 132);
    ck_assert_int_eq(h->limits.max_smem_optin, 232448);
    ck_assert(fabs(h->bw_measured - 3.03e12) < 1e9);
    ck_assert(fabs(h->measured[AMK_UNIT_SIMT_F32] - 51.7e12) < 1e9);
    const amk_target *m = amk_target_find("mi300x");
    ck_assert_int_eq(m->limits.warp, 64);
    ck_assert_int_eq(m->limits.sm_count, 304);
    ck_assert_int_eq(amk_target_find("a100")->peak[AMK_UNIT_FP8] == 0, 1);
    for (int i = 0; i < amk_target_count(); i++) {
        const amk_target *t = amk_target_at(i);
        ck_assert(t->bw_peak > 0);
        ck_assert(t->peak[AMK_UNIT_SIMT_F32] > 0);
    }
    ck_assert_ptr_null(amk_target_at(amk_target_count()));
}
END_TEST

START_TEST(test_amk_target_default_honours_env)
{
    setenv("AMK_TARGET", "mi250x", 1);
    ck_assert_str_eq(amk_target_default()->key, "mi250x");
    setenv("AMK_TARGET", "no-such-gpu", 1);
    ck_assert_str_eq(amk_target_default()->key, "h100");
    unsetenv("AMK_TARGET");
    ck_assert_str_eq(amk_target_default()->key, "h100");
}
END_TEST

START_TEST(test_amk_target_resolve_name_env_default)
{
    const amk_target *t = NULL;
    amk_diag d = {0};
    setenv("AMK_TARGET", "mi250x", 1);
    ck_assert_int_eq(amk_target_resolve("mi300x", &t, &d), AMK_OK); /* --target wins */
    ck_assert_str_eq(t->key, "mi300x");
    ck_assert_int_eq(amk_target_resolve(NULL, &t, &d), AMK_OK);
    ck_assert_str_eq(t->key, "mi250x");
    setenv("AMK_TARGET", "no-such-gpu", 1);
    ck_assert_int_eq(amk_target_resolve(NULL, &t, &d), AMK_ENOENT); /* not a silent h100 */
    ck_assert_ptr_null(t);
    ck_assert_ptr_eq(strstr(d.msg, "unknown target 'no-such-gpu' from $AMK_TARGET (known: h100, "),
                     d.msg);
    ck_assert_int_eq(amk_target_resolve("nope", &t, &d), AMK_ENOENT);
    ck_assert_ptr_eq(strstr(d.msg, "unknown target 'nope' (known: "), d.msg);
    ck_assert_ptr_nonnull(strstr(d.msg, "mi250x"));
    unsetenv("AMK_TARGET");
    ck_assert_int_eq(amk_target_resolve(NULL, &t, &d), AMK_OK);
    ck_assert_str_eq(t->key, "h100");
}
END_TEST

START_TEST(test_amk_cost_feasible_names_each_resource)
{
    const amk_target *h = amk_target_find("h100"), *mi = amk_target_find("mi300x");
    amk_diag d = {0};
    amk_config ok = make("default", 64, 64, 256, 16, 64);
    ck_assert_int_eq(amk_cost_feasible(&ok, h, &d), AMK_OK);

    amk_config many = make("default", 64, 64, 2048, 16, 32);
    ck_assert_int_eq(amk_cost_feasible(&many, h, &d), AMK_ERESTRICT);
    ck_assert_ptr_nonnull(strstr(d.msg, "threads per block"));

    amk_config smem = make("default", 64, 64, 256, 300, 32);
    ck_assert_int_eq(amk_cost_feasible(&smem, h, &d), AMK_ERESTRICT);
    ck_assert_ptr_nonnull(strstr(d.msg, "shared memory"));
    /* 100 KiB fits an H100 block but not an MI300X workgroup (64 KiB LDS). */
    amk_config lds = make("default", 64, 64, 256, 100, 32);
    ck_assert_int_eq(amk_cost_feasible(&lds, h, &d), AMK_OK);
    ck_assert_int_eq(amk_cost_feasible(&lds, mi, &d), AMK_ERESTRICT);

    amk_config regs = make("default", 64, 64, 1024, 0, 255);
    ck_assert_int_eq(amk_cost_feasible(&regs, h, &d), AMK_ERESTRICT);
    ck_assert_ptr_nonnull(strstr(d.msg, "registers"));
}
END_TEST

START_TEST(test_amk_cost_estimate_floor_is_roofline)
{
    const amk_target *h = amk_target_find("h100");
    amk_estimate e;
    amk_diag d = {0};
    /* Ragged shape: blocks are not uniform, so the floor is the plain roofline. */
    amk_config c = make("ragged", 64, 64, 256, 16, 64);
    ck_assert_int_eq(amk_cost_estimate(&c, h, &e, &d), AMK_OK);
    double flops = 2.0 * 4000 * 4100 * 512, bytes = (4000.0 * 512 + 512.0 * 4100 + 4000.0 * 4100) * 4;
    double want = fmax(flops / 67e12, bytes / 3.35e12) * 1e6;
    ck_assert_double_eq_tol(e.bound_us, want, want * 1e-9);
    ck_assert(e.predicted_us >= e.bound_us);
    ck_assert_int_eq(e.blocks, (4100 + 63) / 64 * ((4000 + 63) / 64));
}
END_TEST

START_TEST(test_amk_cost_estimate_wave_quantization_only_when_uniform)
{
    const amk_target *h = amk_target_find("h100");
    amk_estimate e;
    amk_diag d = {0};
    /* 4096/256 = 16 x 16 = 256 equal blocks on 132 SMs: the busiest SM runs 2 blocks. */
    amk_config c = make("default", 256, 256, 256, 16, 64);
    ck_assert_int_eq(amk_cost_estimate(&c, h, &e, &d), AMK_OK);
    double flops = 2.0 * 4096 * 4096 * 4096;
    double quantized = 2.0 * (flops / 256) / (67e12 / 132) * 1e6;
    ck_assert_double_eq_tol(e.bound_us, quantized, quantized * 1e-9);
    ck_assert(e.bound_us > flops / 67e12 * 1e6);
}
END_TEST

START_TEST(test_amk_cost_estimate_floor_uses_fastest_seen_rate)
{
    amk_target t = *amk_target_find("h100");
    amk_estimate e1, e2;
    amk_config c = make("ragged", 64, 64, 256, 16, 64);
    ck_assert_int_eq(amk_cost_estimate(&c, &t, &e1, NULL), AMK_OK);
    /* A measured ceiling above the datasheet must lower the floor, a lower one must not raise it. */
    t.measured[AMK_UNIT_SIMT_F32] = 80e12;
    t.bw_measured = 4e12;
    ck_assert_int_eq(amk_cost_estimate(&c, &t, &e2, NULL), AMK_OK);
    ck_assert(e2.bound_us < e1.bound_us);
    t.measured[AMK_UNIT_SIMT_F32] = 1e12;
    t.bw_measured = 1e11;
    ck_assert_int_eq(amk_cost_estimate(&c, &t, &e2, NULL), AMK_OK);
    ck_assert_double_eq_tol(e2.bound_us, e1.bound_us, 1e-12);
    /* ... but the prediction follows the measured ceiling. */
    ck_assert(e2.predicted_us > e1.predicted_us);
}
END_TEST

START_TEST(test_amk_cost_estimate_ranks_traffic_and_occupancy)
{
    const amk_target *h = amk_target_find("h100");
    amk_estimate small, big, starved;
    amk_config a = make("default", 16, 16, 256, 16, 64);
    amk_config b = make("default", 128, 128, 256, 16, 64);
    amk_config s = make("default", 128, 128, 32, 227, 64);
    ck_assert_int_eq(amk_cost_estimate(&a, h, &small, NULL), AMK_OK);
    ck_assert_int_eq(amk_cost_estimate(&b, h, &big, NULL), AMK_OK);
    ck_assert_int_eq(amk_cost_estimate(&s, h, &starved, NULL), AMK_OK);
    ck_assert(big.predicted_us < small.predicted_us); /* less tile re-reading */
    ck_assert_int_eq(starved.blocks_per_sm, 1);
    ck_assert(starved.occupancy < big.occupancy);
    ck_assert(starved.predicted_us > big.predicted_us);
}
END_TEST

/* A config of the built-in softmax at its default shape (f16 32768x4096). */
static amk_config softmax_config(const amk_spec *sm, const char *params)
{
    amk_shape sh;
    amk_config c;
    amk_diag d = {0};
    amk_spec_shape(sm, 0, &sh);
    ck_assert_msg(amk_config_from_params_json(sm, &sh, params, &c, &d) == AMK_OK, "%s", d.msg);
    return c;
}

START_TEST(test_amk_cost_estimate_memory_terms_order_launch_shapes)
{
    amk_registry *reg = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_registry_create(&reg, &d) == AMK_OK, "%s", d.msg);
    const amk_spec *sm = amk_registry_find(reg, "softmax");
    ck_assert_ptr_nonnull(sm);
    amk_target t = *amk_target_find("h100");
    /* 128 threads per row, row held in registers: one read of 512 MiB at full bandwidth. */
    amk_config best = softmax_config(sm, "{\"THREADS\":128,\"ROWS\":1,\"VEC\":8}");
    /* 4 threads per row stream it twice; 64 Ki rows in flight overflow L2 (re-read misses). */
    amk_config narrow = softmax_config(sm, "{\"THREADS\":64,\"ROWS\":16,\"VEC\":8}");
    /* 1024 threads per row: one block per SM, a 32-warp reduction per row, half idle lanes. */
    amk_config wide = softmax_config(sm, "{\"THREADS\":1024,\"ROWS\":1,\"VEC\":8}");
    amk_estimate eb, en, ew;
    ck_assert_int_eq(amk_cost_estimate(&best, &t, &eb, &d), AMK_OK);
    ck_assert_int_eq(amk_cost_estimate(&narrow, &t, &en, &d), AMK_OK);
    ck_assert_int_eq(amk_cost_estimate(&wide, &t, &ew, &d), AMK_OK);
    double bytes = 2.0 * 32768 * 4096 * 2;
    ck_assert(eb.memory_us >= bytes / t.bw_measured * 1e6 * 0.999);
    ck_assert_msg(en.memory_us > 1.4 * eb.memory_us, "narrow %.1f vs best %.1f us",
                  en.memory_us, eb.memory_us);
    ck_assert_msg(ew.latency_us > 2 * eb.latency_us && ew.predicted_us > eb.predicted_us,
                  "wide latency %.1f vs best %.1f us", ew.latency_us, eb.latency_us);
    /* The floor never depends on them. */
    ck_assert_double_eq(eb.bound_us, en.bound_us);
    ck_assert_double_eq(eb.bound_us, ew.bound_us);

    /* A target without memory-system figures ignores the terms: the old bytes/bandwidth
     * prediction, alike for all three. */
    t.mem_latency_us = 0;
    ck_assert_int_eq(amk_cost_estimate(&best, &t, &eb, &d), AMK_OK);
    ck_assert_int_eq(amk_cost_estimate(&narrow, &t, &en, &d), AMK_OK);
    ck_assert_double_eq(eb.latency_us, 0);
    ck_assert_double_eq_tol(en.predicted_us, eb.predicted_us, 1e-9 * eb.predicted_us);
    amk_registry_free(reg);
}
END_TEST

START_TEST(test_amk_cost_pct_of_roofline_guards)
{
    ck_assert_double_eq_tol(amk_cost_pct_of_roofline(50, 100), 50, 1e-12);
    ck_assert(isnan(amk_cost_pct_of_roofline(50, 0)));
    ck_assert(isnan(amk_cost_pct_of_roofline(50, NAN)));
}
END_TEST

START_TEST(test_amk_ceilings_save_load_round_trip)
{
    char dir[256], path[300];
    amk_test_tmpdir_make(dir, sizeof dir, "ceilings");
    snprintf(path, sizeof path, "%s/sub/h100.json", dir);
    amk_target t = *amk_target_find("h100"), u = *amk_target_find("h100");
    t.bw_measured = 2.9e12;
    t.measured[AMK_UNIT_BF16] = 700e12;
    amk_diag d = {0};
    ck_assert_int_eq(amk_ceilings_save(&t, path, &d), AMK_OK);
    ck_assert_int_eq(amk_ceilings_load(&u, path, &d), AMK_OK);
    ck_assert_double_eq_tol(u.bw_measured, 2.9e12, 1);
    ck_assert_double_eq_tol(u.measured[AMK_UNIT_BF16], 700e12, 1);

    /* A bad file names the field and leaves the target untouched. */
    amk_test_write_file(path,
                        "{\"target\":\"h100\",\"bw_measured\":3e12,\"measured\":{\"bf16\":-5}}");
    amk_target before = u;
    ck_assert_int_eq(amk_ceilings_load(&u, path, &d), AMK_EPARSE);
    ck_assert_ptr_nonnull(strstr(d.msg, "measured.bf16"));
    ck_assert_int_eq(memcmp(&before, &u, sizeof u), 0);
    amk_test_write_file(path, "{\"target\":\"a100\"}");
    ck_assert_int_eq(amk_ceilings_load(&u, path, &d), AMK_EPARSE);
    ck_assert_ptr_nonnull(strstr(d.msg, "target"));
    char p2[300];
    amk_ceilings_path(&u, p2, sizeof p2);
    ck_assert_ptr_nonnull(strstr(p2, "ceilings/h100.json"));
    amk_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_amk_target_with_ceilings_reads_cache)
{
    char dir[256], path[300];
    amk_test_tmpdir_make(dir, sizeof dir, "ceilings-cache");
    setenv("AMK_CACHE_DIR", dir, 1);
    const amk_target *h = amk_target_find("h200");
    amk_target t;
    amk_target_with_ceilings(h, &t);
    ck_assert_int_eq(memcmp(&t, h, sizeof t), 0); /* no file: datasheet numbers */
    amk_target m = *h;
    m.bw_measured = 4.3e12;
    amk_ceilings_path(h, path, sizeof path);
    ck_assert_int_eq(amk_ceilings_save(&m, path, NULL), AMK_OK);
    amk_target_with_ceilings(h, &t);
    ck_assert_double_eq_tol(t.bw_measured, 4.3e12, 1);
    amk_test_write_file(path, "{not json");
    amk_target_with_ceilings(h, &t); /* malformed: warned and ignored */
    ck_assert_int_eq(memcmp(&t, h, sizeof t), 0);
    unsetenv("AMK_CACHE_DIR");
    amk_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_amk_cost_calibrate_recovers_linear_model)
{
    enum { N = 40 };
    double cu[N], mu[N], pred[N], meas[N];
    for (int i = 0; i < N; i++) {
        cu[i] = 10 + 7 * (i % 9);
        mu[i] = 5 + 3 * ((i * 7) % 11);
        pred[i] = cu[i] + mu[i];
        meas[i] = 2.0 + 1.5 * cu[i] + 0.8 * mu[i];
    }
    amk_calibration cal;
    amk_diag d = {0};
    ck_assert_int_eq(amk_cost_calibrate(cu, mu, pred, meas, N, &cal, &d), AMK_OK);
    ck_assert_double_eq_tol(cal.c[0], 2.0, 1e-6);
    ck_assert_double_eq_tol(cal.c[1], 1.5, 1e-9);
    ck_assert_double_eq_tol(cal.c[2], 0.8, 1e-9);
    ck_assert(cal.r2 > 0.999999);
    ck_assert_double_eq_tol(cal.spearman_after, 1.0, 1e-12);
    ck_assert(cal.spearman_before < 1.0); /* the unfitted sum ranks them imperfectly */
    ck_assert_int_eq(cal.n, N);
}
END_TEST

START_TEST(test_amk_cost_calibrate_rejects_bad_input)
{
    double a[3] = {1, 2, 3};
    amk_calibration cal;
    amk_diag d = {0};
    ck_assert_int_eq(amk_cost_calibrate(a, a, a, a, 3, &cal, &d), AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "at least 4"));
    double m[5] = {1, 2, NAN, 4, 5}, z[5] = {0, 0, 0, 0, 0}, p[5] = {1, 2, 3, 4, 5};
    ck_assert_int_eq(amk_cost_calibrate(p, z, p, m, 5, &cal, &d), AMK_EINVAL);
    /* Memory-bound data: the compute column is all zero, still fits. */
    double mem[6] = {1, 2, 3, 4, 5, 6}, lat[6] = {3, 5, 7, 9, 11, 13};
    double zero[6] = {0};
    ck_assert_int_eq(amk_cost_calibrate(zero, mem, mem, lat, 6, &cal, &d), AMK_OK);
    ck_assert(cal.r2 > 0.999999);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cost_model");
    struct { const char *name; const TTest *t; int fixture; } cases[] = {
        {"amk_target_find", test_amk_target_find_by_key_arch_and_device_name, 0},
        {"amk_target_at", test_amk_target_at_has_design_numbers, 0},
        {"amk_target_default", test_amk_target_default_honours_env, 0},
        {"amk_target_resolve", test_amk_target_resolve_name_env_default, 0},
        {"amk_cost_feasible", test_amk_cost_feasible_names_each_resource, 1},
        {"amk_cost_estimate_floor", test_amk_cost_estimate_floor_is_roofline, 1},
        {"amk_cost_estimate_waves", test_amk_cost_estimate_wave_quantization_only_when_uniform, 1},
        {"amk_cost_estimate_rates", test_amk_cost_estimate_floor_uses_fastest_seen_rate, 1},
        {"amk_cost_estimate_rank", test_amk_cost_estimate_ranks_traffic_and_occupancy, 1},
        {"amk_cost_estimate_memory", test_amk_cost_estimate_memory_terms_order_launch_shapes, 0},
        {"amk_cost_pct_of_roofline", test_amk_cost_pct_of_roofline_guards, 0},
        {"amk_ceilings", test_amk_ceilings_save_load_round_trip, 0},
        {"amk_target_with_ceilings", test_amk_target_with_ceilings_reads_cache, 0},
        {"amk_cost_calibrate", test_amk_cost_calibrate_recovers_linear_model, 0},
        {"amk_cost_calibrate_bad", test_amk_cost_calibrate_rejects_bad_input, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        if (cases[i].fixture)
            tcase_add_checked_fixture(tc, load_spec, free_spec);
        tcase_add_test(tc, cases[i].t);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    return amk_test_run(suite());
}

/* Check suite for the gpu backend on a device (evaluator/gpu/: runtime.c, bench.c,
 * run_eval.c; evaluator/gpu_backend.c). Every case needs a GPU: without one the suite prints
 * "SKIP: no GPU: <the runtime's reason>" and exits 77 (CTest SKIP_RETURN_CODE). The host-only
 * cases live where they run without a device: the numerics (element types, inputs,
 * tolerance, statistics) in check_numeric.c, every build; the run-job wire format and the
 * device-list refusals in check_gpu_host.c, every build with a GPU layer. Device cases: gemm
 * and rmsnorm measure and pass; every fault of
 * tests/fixtures/faults/faultmatrix gets its status and the next good config still measures;
 * the parent never loads the driver; interleaved re-measure; two GPUs of one model evaluating
 * one batch; on sm_90 devices, the Hopper fixtures of tests/fixtures/hopper (cluster launch,
 * TMA tensor map, mbarrier deadlock). Those two groups run as their own tests,
 * check_gpu_gpu_two_devices and check_gpu_gpu_sm_90, skipped (77) with the reason where the
 * devices are not there (tests/amk_test.h). */
#ifndef AMK_HAVE_GPU
/* A build without CUDA or HIP has no GPU layer to test: say so and let CTest count a skip. */
#include <stdio.h>
int main(void)
{
    printf("SKIP: no GPU: this build has no GPU backend (configure with AMK_CUDA=ON or AMK_HIP=ON)\n");
    return 77;
}
#else
#include "amk_evaluator.h"
#include "amk_test.h"
#include "backends/gpu_backend_int.h" /* amk__gpu_remeasure, amk__gpu_parallelism_for */
#include "gpu_int.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAULTS AMK_TEST_FIXTURES "/faults"
#define HOPPER AMK_TEST_FIXTURES "/hopper"
#define REMEASURE AMK_TEST_FIXTURES "/remeasure"

static int have_gpu;
static char no_gpu_reason[1100];
static char gpu_vendor[64], gpu_arch[64]; /* of the device that answered */

/* ---------- device helpers -------------------------------------------------------------- */

static amk_registry *reg;

static amk_evaluator *make_gpu(double run_timeout_s, double compile_timeout_s)
{
    amk_backend_opts o = {0};
    amk_diag d = {0};
    amk_evaluator *ev = NULL;
    o.jobs = 2;
    o.run_timeout_s = run_timeout_s;
    o.compile_timeout_s = compile_timeout_s;
    o.seed = 0;
    int rc = amk_evaluator_create("gpu", &o, NULL, NULL, &ev, &d);
    ck_assert_msg(rc == AMK_OK, "gpu backend: %s", d.msg);
    return ev;
}

static void setup_registry(void)
{
    amk_diag d = {0};
    ck_assert_msg(amk_registry_create(&reg, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_registry_add_dir(reg, FAULTS, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_registry_add_dir(reg, HOPPER, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_registry_add_dir(reg, REMEASURE, &d) == AMK_OK, "%s", d.msg);
}

static void teardown_registry(void)
{
    amk_registry_free(reg);
    reg = NULL;
}

/* Evaluates one config (JSON text) through the whole pipeline. */
static void eval_json(amk_evaluator *ev, const char *json, amk_verdict *v)
{
    amk_config c;
    amk_space *sp = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_config_parse(reg, json, &c, &d) == AMK_OK, "%s: %s", json, d.msg);
    ck_assert_msg(amk_space_create(c.spec, &c.shape, &amk_evaluator_target(ev)->limits, &sp,
                                   &d) == AMK_OK, "%s", d.msg);
    const amk_config *cp = &c;
    ck_assert_int_eq(amk_evaluator_run(ev, sp, &cp, 1, NAN, v), AMK_OK);
    amk_space_free(sp);
    fprintf(stderr, "  %-70.70s -> %s%s%s (%.4g us, spread %.3g, %s, trial cost %.3f s) %s\n",
            json, amk_status_name(v->status), v->reason[0] ? ": " : "", v->reason,
            v->latency_us, v->spread, v->regime, v->cost_s, v->notes);
    fprintf(stderr, "  %-70s    (set-up left out of the trial cost: %.3f s)\n", "", v->setup_s);
}

static void assert_measured(const amk_verdict *v)
{
    ck_assert_msg(v->status == AMK_STATUS_OK, "status %s: %s", amk_status_name(v->status),
                  v->reason);
    ck_assert_int_eq(v->correct, 1);
    ck_assert_int_eq(v->latency_kind, AMK_LAT_MEASURED);
    ck_assert(isfinite(v->latency_us) && v->latency_us > 0);
    ck_assert(isfinite(v->spread) && v->spread >= 0);
    ck_assert(isfinite(v->compile_ms));
    ck_assert_msg(isfinite(v->cost_s) && v->cost_s > 0, "cost_s %g", v->cost_s);
    ck_assert_msg(isfinite(v->setup_s) && v->setup_s >= 0, "setup_s %g", v->setup_s);
    ck_assert(v->seed != 0);
    ck_assert_str_eq(v->regime, "cold_l2");
    ck_assert(v->latency_us >= v->bound_us);
}

#define FM(cs, good)                                                                          \
    "{\"kernel\":\"faultmatrix\",\"shape\":{\"N\":1048576},\"params\":{\"CASE\":\"" cs        \
    "\",\"GOOD\":" #good "}}"

/* ---------- device cases ---------------------------------------------------------------- */

START_TEST(test_gpu_init_device_and_target)
{
    amk_evaluator *ev = make_gpu(0, 0);
    const amk_target *t = amk_evaluator_target(ev);
    ck_assert_str_eq(amk_evaluator_backend(ev), "gpu");
    ck_assert(strlen(amk_evaluator_device(ev)) > 0);
    ck_assert(t->limits.sm_count > 0 && t->limits.l2_bytes > 0);
    ck_assert(t->limits.max_smem_optin >= t->limits.max_smem);
    fprintf(stderr, "  device %s -> target %s (%s), %lld SMs, L2 %lld B, smem opt-in %lld\n",
            amk_evaluator_device(ev), t->name, t->arch, (long long)t->limits.sm_count,
            (long long)t->limits.l2_bytes, (long long)t->limits.max_smem_optin);
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_gpu_gemm_rmsnorm_measure_and_pass)
{
    amk_evaluator *ev = make_gpu(0, 0);
    amk_verdict v1, v2, v3;
    const char *gemm = "{\"kernel\":\"gemm\",\"shape\":{\"M\":1024,\"N\":1024,\"K\":1024},"
                       "\"params\":{\"BM\":128,\"BN\":128,\"BK\":8,\"TM\":8,\"TN\":8,\"VEC\":4,"
                       "\"STAGES\":2}}";
    eval_json(ev, gemm, &v1);
    assert_measured(&v1);
    ck_assert_msg(strstr(v1.notes, "checked 2/2"), "small shape not checked: %s", v1.notes);
    ck_assert_msg(!strstr(v1.notes, "reference cached"), "%s", v1.notes);
    eval_json(ev, gemm, &v2); /* again: code from the compile cache, reference from the run
                                 worker's cache (one seed per evaluator: the same inputs) */
    assert_measured(&v2);
    ck_assert_int_eq(v2.cache_hit, 1);
    ck_assert_uint_eq(v2.seed, v1.seed);
    ck_assert_msg(strstr(v2.notes, "reference cached"), "%s", v2.notes);
    /* The first job made the reference, opened the peer's library and warmed the device
     * from cold: set-up, not v1's cost; the second reuses what the first set up. */
    ck_assert_msg(v1.setup_s > 0 && v2.setup_s < v1.setup_s, "set-up %g s then %g s",
                  v1.setup_s, v2.setup_s);
    /* A settled warm-up ends with the device loaded for the sustain time (counted over the
     * jobs before it and the keeper between them); the keeper held the load since, so a third
     * job only warms its caches. */
    if (strstr(v2.notes, "sustained: settled in")) {
        amk_verdict v4;
        eval_json(ev, gemm, &v4);
        assert_measured(&v4);
        ck_assert_msg(strstr(v4.notes, "sustained: device loaded"), "%s", v4.notes);
    }
    eval_json(ev, "{\"kernel\":\"rmsnorm\",\"shape\":{\"M\":2048,\"N\":4096,\"dtype\":\"bf16\"},"
                  "\"params\":{\"THREADS\":256,\"VEC\":8,\"ROWS\":1}}", &v3);
    assert_measured(&v3);
    ck_assert_msg(!strstr(v3.notes, "reference cached"), "%s", v3.notes);
    amk_evaluator_free(ev);
}
END_TEST

/* A fault gives its status; the same kernel without it then measures normally. */
static void fault_then_good(amk_evaluator *ev, const char *bad, const char *good,
                            amk_status want, const char *reason_has)
{
    amk_verdict v;
    eval_json(ev, bad, &v);
    ck_assert_msg(v.status == want, "%s: got %s (%s), want %s", bad, amk_status_name(v.status),
                  v.reason, amk_status_name(want));
    ck_assert(isnan(v.latency_us));
    /* The benchmarked shape is compared beside the benchmark: nothing of a timing the
     * comparison voided is left in the notes. */
    ck_assert_msg(!strstr(v.notes, "stopped:") && !strstr(v.notes, "reps"), "%s: %s", bad,
                  v.notes);
    if (reason_has)
        ck_assert_msg(strstr(v.reason, reason_has), "%s: reason '%s' lacks '%s'", bad,
                      v.reason, reason_has);
    eval_json(ev, good, &v);
    assert_measured(&v);
}

/* The reference cache never lets a wrong candidate through: after a correct config filled
 * it, faulty ones checked against the cached reference are still wrong, and a fresh
 * evaluator (another seed) computes its own reference. */
START_TEST(test_gpu_reference_cache_still_catches_faults)
{
    amk_evaluator *ev = make_gpu(0, 0);
    amk_verdict v1, v2, v3, v4;
    eval_json(ev, FM("offtol", 1), &v1);
    assert_measured(&v1);
    ck_assert_msg(!strstr(v1.notes, "reference cached"), "%s", v1.notes);
    const char *bad[] = {FM("offtol", 0), FM("nan", 0), FM("unwritten", 0),
                         FM("early_return", 0)};
    for (int i = 0; i < 4; i++) {
        eval_json(ev, bad[i], &v2);
        ck_assert_msg(v2.status == AMK_STATUS_WRONG, "%s: %s", bad[i],
                      amk_status_name(v2.status));
        ck_assert_msg(strstr(v2.notes, "reference cached"), "%s", v2.notes);
        ck_assert_uint_eq(v2.seed, v1.seed);
    }
    eval_json(ev, FM("nan", 1), &v3);
    assert_measured(&v3);
    ck_assert_msg(strstr(v3.notes, "reference cached"), "%s", v3.notes);
    amk_evaluator_free(ev);
    ev = make_gpu(0, 0);
    eval_json(ev, FM("nan", 1), &v4);
    assert_measured(&v4);
    ck_assert(v4.seed != v1.seed);
    ck_assert_msg(!strstr(v4.notes, "reference cached"), "%s", v4.notes);
    amk_evaluator_free(ev);
}
END_TEST

/* Inputs past 64 MiB (x: 128 MiB here) are copied to each check and benchmark from a device
 * copy kept with the reference cache, not over the bus: verdicts stay right, and a wrong
 * config drops the copy (the next job makes it again from host). */
#define FM_BIG(cs, good)                                                                      \
    "{\"kernel\":\"faultmatrix\",\"shape\":{\"N\":33554432},\"params\":{\"CASE\":\"" cs     \
    "\",\"GOOD\":" #good "}}"
START_TEST(test_gpu_eval_large_inputs_from_device_copy)
{
    amk_evaluator *ev = make_gpu(0, 0);
    amk_verdict v;
    eval_json(ev, FM_BIG("offtol", 1), &v);
    assert_measured(&v);
    ck_assert_msg(strstr(v.notes, "inputs from their device copy"), "%s", v.notes);
    ck_assert_msg(!strstr(v.notes, "reference cached"), "%s", v.notes);
    eval_json(ev, FM_BIG("nan", 1), &v);
    assert_measured(&v);
    ck_assert_msg(strstr(v.notes, "reference cached") &&
                  strstr(v.notes, "inputs from their device copy"), "%s", v.notes);
    const char *bad[] = {FM_BIG("offtol", 0), FM_BIG("unwritten", 0), FM_BIG("early_return", 0)};
    for (int i = 0; i < 3; i++) {
        eval_json(ev, bad[i], &v);
        ck_assert_msg(v.status == AMK_STATUS_WRONG, "%s: %s (%s)", bad[i],
                      amk_status_name(v.status), v.reason);
        eval_json(ev, FM_BIG("early_return", 1), &v);
        assert_measured(&v);
        ck_assert_msg(strstr(v.notes, "inputs from their device copy"), "%s", v.notes);
    }
    /* a small input stays host to device */
    eval_json(ev, FM("offtol", 1), &v);
    assert_measured(&v);
    ck_assert_msg(!strstr(v.notes, "device copy"), "%s", v.notes);
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_gpu_fault_wrong_results)
{
    amk_evaluator *ev = make_gpu(0, 0);
    fault_then_good(ev, FM("nan", 0), FM("nan", 1), AMK_STATUS_WRONG, "non-finite");
    fault_then_good(ev, FM("unwritten", 0), FM("unwritten", 1), AMK_STATUS_WRONG, "unwritten");
    fault_then_good(ev, FM("offtol", 0), FM("offtol", 1), AMK_STATUS_WRONG, "tol");
    fault_then_good(ev, FM("early_return", 0), FM("early_return", 1), AMK_STATUS_WRONG, NULL);
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_gpu_fault_illegal_address_respawns)
{
    amk_evaluator *ev = make_gpu(0, 0);
    fault_then_good(ev, FM("oob_write", 0), FM("oob_write", 1), AMK_STATUS_RUN_ERROR,
                    "candidate kernel failed");
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_gpu_fault_hang_times_out)
{
    amk_evaluator *ev = make_gpu(5, 0);
    fault_then_good(ev, FM("hang", 0), FM("hang", 1), AMK_STATUS_RUN_TIMEOUT, "candidate");
    amk_evaluator_free(ev);
}
END_TEST

/* ---------- Hopper features (tests/fixtures/hopper; sm_90 devices only) ------------------- */

static int is_sm_90(const char *vendor, const char *arch)
{
    return strcmp(vendor, "nvidia") == 0 && strncmp(arch, "sm_90", 5) == 0;
}

/* NULL when the device runs sm_90a code, else why the Hopper cases cannot run. */
static const char *why_not_sm_90(void)
{
    static char why[1200];
    if (!have_gpu)
        snprintf(why, sizeof why, "no GPU: %s", no_gpu_reason);
    else if (!is_sm_90(gpu_vendor, gpu_arch))
        snprintf(why, sizeof why, "needs an sm_90 GPU, this one is %s %s", gpu_vendor, gpu_arch);
    else
        return NULL;
    return why;
}

/* The Hopper cases run only where why_not_sm_90 passed: a device of another kind fails. */
static int is_hopper(amk_evaluator *ev, const char *test)
{
    const amk_target *t = amk_evaluator_target(ev);
    ck_assert_msg(is_sm_90(t->vendor, t->arch), "%s: needs an sm_90 GPU, this one is %s %s",
                  test, t->vendor, t->arch);
    return 1;
}

#define HC(cx)                                                                                \
    "{\"kernel\":\"hopper_cluster\",\"shape\":{\"N\":8192},\"params\":{\"CX\":" #cx "}}"

/* Blocks see their cluster rank and cluster index as the launch's cluster shape makes them;
 * a cluster larger than the chip allows is a run_error with the driver's reason, the run
 * worker keeps its context, and the next config measures. */
START_TEST(test_gpu_hopper_cluster_launch)
{
    amk_evaluator *ev = make_gpu(0, 0);
    if (!is_hopper(ev, "cluster launch")) {
        amk_evaluator_free(ev);
        return;
    }
    amk_verdict v;
    eval_json(ev, HC(2), &v);
    assert_measured(&v);
    ck_assert_msg(strstr(v.notes, "checked 2/2"), "small shape not checked: %s", v.notes);
    eval_json(ev, HC(16), &v); /* the non-portable maximum: reported, not asserted */
    eval_json(ev, HC(32), &v);
    ck_assert_msg(v.status == AMK_STATUS_RUN_ERROR, "cluster of 32: %s (%s)",
                  amk_status_name(v.status), v.reason);
    ck_assert_msg(strstr(v.reason, "candidate kernel failed"), "%s", v.reason);
    ck_assert_msg(!strstr(v.notes, "sticky"), "a refused cluster respawned the worker: %s",
                  v.notes);
    eval_json(ev, HC(8), &v);
    assert_measured(&v);
    amk_evaluator_free(ev);
}
END_TEST

/* A TMA box load through a spec tensor map, encoded for every buffer set, matches a plain
 * copy on ragged shapes (boxes over the edge) for every box size. */
START_TEST(test_gpu_hopper_tensor_map_copy)
{
    amk_evaluator *ev = make_gpu(0, 0);
    if (!is_hopper(ev, "tensor map copy")) {
        amk_evaluator_free(ev);
        return;
    }
    static const int bc[] = {16, 32, 64}, br[] = {8, 32};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++) {
            char json[256];
            amk_verdict v;
            snprintf(json, sizeof json, "{\"kernel\":\"hopper_tma_copy\",\"shape\":{\"R\":1000,"
                     "\"C\":1000},\"params\":{\"BC\":%d,\"BR\":%d}}", bc[i], br[k]);
            eval_json(ev, json, &v);
            assert_measured(&v);
            ck_assert_msg(strstr(v.notes, "checked 2/2"), "small shape not checked: %s",
                          v.notes);
        }
    amk_evaluator_free(ev);
}
END_TEST

/* An mbarrier nobody arrives on (a pipeline deadlock) is a run_timeout; the next config of
 * the same evaluator measures. */
START_TEST(test_gpu_hopper_mbarrier_deadlock_times_out)
{
    amk_evaluator *ev = make_gpu(5, 0);
    if (!is_hopper(ev, "mbarrier deadlock")) {
        amk_evaluator_free(ev);
        return;
    }
    fault_then_good(ev,
                    "{\"kernel\":\"hopper_deadlock\",\"shape\":{\"N\":1048576},"
                    "\"params\":{\"HANG\":1}}",
                    "{\"kernel\":\"hopper_deadlock\",\"shape\":{\"N\":1048576},"
                    "\"params\":{\"HANG\":0}}",
                    AMK_STATUS_RUN_TIMEOUT, "candidate");
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_gpu_fault_compile_faults)
{
    amk_config c;
    amk_diag d = {0};
    char id[17], env[64];
    ck_assert(amk_config_parse(reg, FM("compile_crash", 0), &c, &d) == AMK_OK);
    amk_config_id(&c, id);
    snprintf(env, sizeof env, "abort:%s", id);
    setenv("AMK_TEST_COMPILE_FAULT", env, 1);
    amk_evaluator *ev = make_gpu(0, 8);
    fault_then_good(ev, FM("compile_crash", 0), FM("compile_crash", 1),
                    AMK_STATUS_COMPILE_CRASH, NULL);
    fault_then_good(ev, FM("compile_hang", 0), FM("compile_hang", 1),
                    AMK_STATUS_COMPILE_TIMEOUT, NULL);
    fault_then_good(ev, FM("compile_error", 0), FM("compile_error", 1),
                    AMK_STATUS_COMPILE_ERROR, NULL);
    unsetenv("AMK_TEST_COMPILE_FAULT");
    amk_evaluator_free(ev);
}
END_TEST

/* The process that runs the loop never loads the driver: the run worker does. */
START_TEST(test_gpu_parent_never_loads_driver)
{
    amk_evaluator *ev = make_gpu(0, 0);
    amk_verdict v;
    eval_json(ev, FM("nan", 1), &v);
    assert_measured(&v);
    char *maps = NULL;
    size_t len = 0;
    amk_diag d = {0};
    ck_assert(amk_fs_read_all("/proc/self/maps", &maps, &len, &d) == AMK_OK);
#if defined(AMK_GPU_CUDA)
    ck_assert_msg(!strstr(maps, "libcuda.so"), "the parent mapped the CUDA driver");
#else
    ck_assert_msg(!strstr(maps, "/dev/kfd"), "the parent opened the AMD GPU");
#endif
    free(maps);
    amk_evaluator_free(ev);
}
END_TEST

/* The benchmark's adaptive stop (bench.c): a plain evaluate says how its timing ended; with an
 * incumbent twice as fast the config stops as beaten, still measured; AMK_BENCH_CI=0 runs the
 * fixed window. */
START_TEST(test_gpu_bench_stops_early_and_screens)
{
    const char *gemm = "{\"kernel\":\"gemm\",\"shape\":{\"M\":1024,\"N\":1024,\"K\":1024},"
                       "\"params\":{\"BM\":128,\"BN\":128,\"BK\":8,\"TM\":8,\"TN\":8,\"VEC\":4,"
                       "\"STAGES\":2}}";
    amk_evaluator *ev = make_gpu(0, 0);
    amk_verdict v1, v2;
    eval_json(ev, gemm, &v1);
    assert_measured(&v1);
    ck_assert_msg(strstr(v1.notes, "stopped: "), "%s", v1.notes);
    amk_config c;
    amk_space *sp = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_config_parse(reg, gemm, &c, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_space_create(c.spec, &c.shape, &amk_evaluator_target(ev)->limits, &sp,
                                   &d) == AMK_OK, "%s", d.msg);
    const amk_config *cp = &c;
    /* An incumbent the config loses to by ~40%, but above its roofline floor, so that the
     * pipeline does not screen it before compiling (that would not reach the benchmark). */
    double inc = fmax(v1.latency_us / 1.4, v1.bound_us * 1.05);
    ck_assert_msg(inc * 1.10 < v1.latency_us * 0.95, "floor %.4g us too close to the measured "
                  "%.4g us for this test", v1.bound_us, v1.latency_us);
    ck_assert_int_eq(amk_evaluator_run(ev, sp, &cp, 1, inc, &v2), AMK_OK);
    fprintf(stderr, "  beaten: %.4g us: %s\n", v2.latency_us, v2.notes);
    assert_measured(&v2);
    ck_assert_msg(strstr(v2.notes, "x the incumbent after"), "%s", v2.notes);
    ck_assert(v2.latency_us > inc * 1.10);
    amk_space_free(sp);
    amk_evaluator_free(ev);
    setenv("AMK_BENCH_CI", "0", 1);
    ev = make_gpu(0, 0);
    unsetenv("AMK_BENCH_CI");
    eval_json(ev, gemm, &v1);
    assert_measured(&v1);
    ck_assert_msg(strstr(v1.notes, "ms window after") || strstr(v1.notes, "stopped: cap"), "%s",
                  v1.notes);
    amk_evaluator_free(ev);
}
END_TEST

/* Objective energy: the energy per launch is measured over a window of whole energy-counter
 * ticks (at least AMK_ENERGY_WINDOW_MS), and is physically plausible; objective time keeps
 * the estimate (no window). A device whose management library reads no energy counter
 * refuses the energy objective when the evaluator is created, saying why. */
START_TEST(test_gpu_energy_window_measures_energy_per_launch)
{
    const char *gemm = "{\"kernel\":\"gemm\",\"shape\":{\"M\":1024,\"N\":1024,\"K\":1024},"
                       "\"params\":{\"BM\":128,\"BN\":128,\"BK\":8,\"TM\":8,\"TN\":8,\"VEC\":4,"
                       "\"STAGES\":2}}";
    amk_backend_opts o = {0};
    amk_diag d = {0};
    amk_evaluator *ev = NULL;
    o.jobs = 2;
    o.objective = AMK_OBJ_ENERGY;
    setenv("AMK_ENERGY_WINDOW_MS", "500", 1);
    int rc = amk_evaluator_create("gpu", &o, NULL, NULL, &ev, &d);
    unsetenv("AMK_ENERGY_WINDOW_MS");
    if (rc == AMK_ENOENERGY) {
        fprintf(stderr, "  no energy counter here: %s\n", d.msg);
        ck_assert_msg(strstr(d.msg, "needs the energy counter"), "%s", d.msg);
        return;
    }
    ck_assert_msg(rc == AMK_OK, "gpu backend: %s", d.msg);
    amk_verdict v;
    eval_json(ev, gemm, &v);
    assert_measured(&v);
    ck_assert_msg(v.energy_ticks >= 1 && v.energy_window_ms >= 500, "%d ticks, %g ms: %s",
                  v.energy_ticks, v.energy_window_ms, v.notes);
    double watts = v.energy_uj / v.latency_us; /* uJ per us */
    ck_assert_msg(watts > 5 && watts < 2000, "%g uJ over %g us: %g W", v.energy_uj,
                  v.latency_us, watts);
    ck_assert_msg(strstr(v.notes, "energy: ") && strstr(v.notes, "counter ticks"), "%s",
                  v.notes);
    amk_evaluator_free(ev);
    ev = make_gpu(0, 0); /* objective time: the estimate, no window */
    eval_json(ev, gemm, &v);
    assert_measured(&v);
    ck_assert_int_eq(v.energy_ticks, 0);
    ck_assert(isnan(v.energy_window_ms));
    amk_evaluator_free(ev);
}
END_TEST

/* The cases of one job share a function but size their dynamic shared memory by their own
 * shape: quant_per_tensor with SMEM=1 and no register keep asks 192 KiB at 16384x4096 and
 * 64 KiB on its small check shape. The opt-in must cover the larger (it once followed the
 * last case resolved, and the launch failed with "invalid argument"). */
START_TEST(test_gpu_shared_opt_in_covers_every_case)
{
    amk_evaluator *ev = make_gpu(0, 0);
    amk_verdict v;
    eval_json(ev, "{\"kernel\":\"quant_per_tensor\",\"shape\":{\"M\":16384,\"N\":4096,"
                  "\"dtype\":\"fp8e4m3\"},\"params\":{\"BPS\":1,\"KEEP\":0,\"SMEM\":1,"
                  "\"THREADS\":1024,\"VEC\":32,\"LOADS\":1}}",
              &v);
    assert_measured(&v);
    ck_assert_msg(strstr(v.notes, "checked 2/2 shapes"), "%s", v.notes);
    amk_evaluator_free(ev);
}
END_TEST

/* amk__gpu_remeasure takes the backend's state: one made directly from the type (*t). */
static void *remeasure_state(const amk_backend_type **t)
{
    *t = amk_backend_find("gpu");
    void *st = calloc(1, (*t)->state_size);
    amk_backend_opts o = {0};
    amk_diag d = {0};
    o.jobs = 2;
    ck_assert_msg((*t)->init(st, &o, &d) == AMK_OK, "%s", d.msg);
    return st;
}

START_TEST(test_gpu_remeasure_interleaved)
{
    const amk_backend_type *t;
    void *st = remeasure_state(&t);
    amk_diag d = {0};
    amk_config a, b;
    ck_assert(amk_config_parse(reg, FM("nan", 1), &a, &d) == AMK_OK);
    ck_assert(amk_config_parse(reg, FM("unwritten", 1), &b, &d) == AMK_OK);
    /* pinned medians (decide_gain 0), then ending once the 1% question is answered */
    for (int k = 0; k < 2; k++) {
        double lat[2], spread[2], mhz;
        int rc = amk__gpu_remeasure(st, &a, &b, k ? 0.01 : 0, lat, spread, &mhz, &d);
        ck_assert_msg(rc == AMK_OK, "%s", d.msg);
        fprintf(stderr, "  remeasure (decide_gain %g): %.4g us (spread %.3g) vs %.4g us "
                "(spread %.3g)\n", k ? 0.01 : 0, lat[0], spread[0], lat[1], spread[1]);
        ck_assert(isfinite(lat[0]) && isfinite(lat[1]) && lat[0] > 0 && lat[1] > 0);
        /* the same work: within 30% of each other */
        ck_assert(fabs(lat[0] - lat[1]) < 0.3 * fmax(lat[0], lat[1]));
    }
    t->clear(st);
    free(st);
}
END_TEST

#define SCRATCH(n)                                                                            \
    "{\"kernel\":\"scratchsize\",\"shape\":{\"N\":1048576},\"params\":{\"SCRATCH\":" #n "}}"

START_TEST(test_gpu_remeasure_buffers_fit_both_configs)
{
    /* A buffer sized by a param: the one set of buffers a re-measure shares must fit the
     * larger config, whichever of the two it is (gemm_hopper PERSISTENT 4 beside 1 wrote
     * past the incumbent's workspace: an illegal address on every such close call). */
    const amk_backend_type *t;
    void *st = remeasure_state(&t);
    amk_diag d = {0};
    amk_config small, large;
    ck_assert(amk_config_parse(reg, SCRATCH(1), &small, &d) == AMK_OK);
    ck_assert(amk_config_parse(reg, SCRATCH(33554432), &large, &d) == AMK_OK);
    const amk_config *pairs[2][2] = {{&small, &large}, {&large, &small}};
    for (int k = 0; k < 2; k++) {
        double lat[2], spread[2], mhz;
        int rc = amk__gpu_remeasure(st, pairs[k][0], pairs[k][1], 0, lat, spread, &mhz, &d);
        ck_assert_msg(rc == AMK_OK, "%s first: %s", k ? "large" : "small", d.msg);
        ck_assert(isfinite(lat[0]) && isfinite(lat[1]) && lat[0] > 0 && lat[1] > 0);
        /* filling 128 MiB takes longer than the 4-byte scratch's launch */
        ck_assert_msg(lat[1 - k] > lat[k], "%.4g us (small) vs %.4g us (large)", lat[k],
                      lat[1 - k]);
    }
    t->clear(st);
    free(st);
}
END_TEST

/* Two devices of one model in list[0..n): 1 with their places in *a, *b, else 0. */
static int same_model_pair(const amk_gpu_device *list, int n, int *a, int *b)
{
    for (int i = 0; i < n && i < 64; i++)
        for (int j = i + 1; j < n && j < 64; j++)
            if (!strcmp(list[i].name, list[j].name) && !strcmp(list[i].arch, list[j].arch)) {
                *a = i;
                *b = j;
                return 1;
            }
    return 0;
}

/* NULL when two devices of one model answer, else why the two-device case cannot run. */
static const char *why_not_two_devices(void)
{
    static char why[1200];
    amk_gpu_device list[64];
    int n = 0, a, b;
    amk_diag d = {0};
    if (!have_gpu)
        snprintf(why, sizeof why, "no GPU: %s", no_gpu_reason);
    else if (amk_gpu_devices(list, 64, &n, &d) != AMK_OK)
        snprintf(why, sizeof why, "cannot list the devices: %s", d.msg);
    else if (!same_model_pair(list, n, &a, &b))
        snprintf(why, sizeof why, "%d device(s) answer, no two of one model", n);
    else
        return NULL;
    return why;
}

/* Two GPUs of one model evaluate one batch together: every config measures, the notes name
 * the GPU that ran it and both GPUs take part; one seed per evaluator, so a one-GPU
 * evaluator with the same seed checks each config on the same inputs. */
START_TEST(test_gpu_two_devices_evaluate)
{
    amk_gpu_device list[64];
    int n = 0, a = -1, b = -1;
    amk_diag d = {0};
    ck_assert_msg(amk_gpu_devices(list, 64, &n, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(same_model_pair(list, n, &a, &b), "%d device(s) answer, no two of one model",
                  n);
    static const char *const cases[] = {"nan", "unwritten", "offtol", "early_return",
                                        "oob_write", "hang"};
    enum { NC = 6 };
    amk_config cfgs[NC];
    const amk_config *ptr[NC];
    for (int i = 0; i < NC; i++) {
        char js[256];
        snprintf(js, sizeof js, "{\"kernel\":\"faultmatrix\",\"shape\":{\"N\":1048576},"
                 "\"params\":{\"CASE\":\"%s\",\"GOOD\":1}}", cases[i]);
        ck_assert_msg(amk_config_parse(reg, js, &cfgs[i], &d) == AMK_OK, "%s", d.msg);
        ptr[i] = &cfgs[i];
    }
    amk_verdict two[NC], one[NC];
    for (int run = 0; run < 2; run++) {
        int devs[2] = {list[a].index, list[b].index};
        amk_backend_opts o = {0};
        o.jobs = 2;
        o.seed = 7;
        o.devices = devs;
        o.ndevices = run == 0 ? 2 : 1;
        amk_evaluator *ev = NULL;
        ck_assert_msg(amk_evaluator_create("gpu", &o, NULL, NULL, &ev, &d) == AMK_OK, "%s",
                      d.msg);
        ck_assert_int_eq(amk_evaluator_parallelism(ev),
                         amk__gpu_parallelism_for(o.ndevices, o.jobs));
        amk_space *sp = NULL;
        ck_assert(amk_space_create(cfgs[0].spec, &cfgs[0].shape,
                                   &amk_evaluator_target(ev)->limits, &sp, &d) == AMK_OK);
        double t0 = amk_now_s();
        ck_assert_int_eq(amk_evaluator_run(ev, sp, ptr, NC, NAN, run == 0 ? two : one),
                         AMK_OK);
        fprintf(stderr, "  %d device(s): %d configs in %.2f s\n", o.ndevices, NC,
                amk_now_s() - t0);
        amk_space_free(sp);
        amk_evaluator_free(ev);
    }
    int used[2] = {0, 0};
    for (int i = 0; i < NC; i++) {
        assert_measured(&two[i]);
        assert_measured(&one[i]);
        ck_assert_uint_eq(two[i].seed, one[i].seed);
        ck_assert_str_eq(two[i].device, one[i].device);
        int g = -1;
        ck_assert_msg(sscanf(two[i].notes, "gpu %d", &g) == 1, "notes: %s", two[i].notes);
        ck_assert(g == list[a].index || g == list[b].index);
        used[g == list[b].index] = 1;
        fprintf(stderr, "  %-12s gpu %d: %.4g us (one gpu: %.4g us)\n", cases[i], g,
                two[i].latency_us, one[i].latency_us);
    }
    ck_assert_msg(used[0] && used[1], "one device ran the whole batch");
}
END_TEST

/* A case group that needs a device (tag: a further need, run as its own test; NULL: none). */
static TCase *device_tcase(Suite *s, const char *name, const char *tag)
{
    TCase *tc = tcase_create(name);
    if (tag)
        tcase_set_tags(tc, tag);
    tcase_add_checked_fixture(tc, setup_registry, teardown_registry);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return tc;
}

static Suite *suite(void)
{
    Suite *s = suite_create("gpu");
    TCase *tc;
    if (have_gpu) {
        tc = device_tcase(s, "device", NULL);
        tcase_add_test(tc, test_gpu_init_device_and_target);
        tcase_add_test(tc, test_gpu_gemm_rmsnorm_measure_and_pass);
        tcase_add_test(tc, test_gpu_reference_cache_still_catches_faults);
        tcase_add_test(tc, test_gpu_eval_large_inputs_from_device_copy);
        tcase_add_test(tc, test_gpu_fault_wrong_results);
        tcase_add_test(tc, test_gpu_fault_illegal_address_respawns);
        tcase_add_test(tc, test_gpu_fault_hang_times_out);
        tcase_add_test(tc, test_gpu_fault_compile_faults);
        tcase_add_test(tc, test_gpu_parent_never_loads_driver);
        tcase_add_test(tc, test_gpu_bench_stops_early_and_screens);
        tcase_add_test(tc, test_gpu_shared_opt_in_covers_every_case);
        tcase_add_test(tc, test_gpu_remeasure_interleaved);
        tcase_add_test(tc, test_gpu_remeasure_buffers_fit_both_configs);
        tcase_add_test(tc, test_gpu_energy_window_measures_energy_per_launch);
        tc = device_tcase(s, "sm_90", "sm_90");
        tcase_add_test(tc, test_gpu_hopper_cluster_launch);
        tcase_add_test(tc, test_gpu_hopper_tensor_map_copy);
        tcase_add_test(tc, test_gpu_hopper_mbarrier_deadlock_times_out);
        tc = device_tcase(s, "two_devices", "two_devices");
        tcase_add_test(tc, test_gpu_two_devices_evaluate);
    }
    return s;
}

static const amk_test_need needs[] = {
    AMK_TEST_NEED(sm_90, why_not_sm_90),
    AMK_TEST_NEED(two_devices, why_not_two_devices),
};

int main(int argc, char **argv)
{
    /* Does a device answer? Asked of a run worker, like everything else. */
    amk_evaluator *ev = NULL;
    amk_diag d = {0};
    amk_backend_opts o = {0};
    o.jobs = 1;
    if (amk_evaluator_create("gpu", &o, NULL, NULL, &ev, &d) == AMK_OK) {
        have_gpu = 1;
        snprintf(gpu_vendor, sizeof gpu_vendor, "%s", amk_evaluator_target(ev)->vendor);
        snprintf(gpu_arch, sizeof gpu_arch, "%s", amk_evaluator_target(ev)->arch);
        amk_evaluator_free(ev);
    } else {
        snprintf(no_gpu_reason, sizeof no_gpu_reason, "%s", d.msg);
    }
    int rc = amk_test_main(argc, argv, suite(), needs, sizeof needs / sizeof *needs);
    if (rc != 0 || argc > 1)
        return rc;
    if (!have_gpu) {
        printf("SKIP: no GPU: %s (device cases not run)\n", no_gpu_reason);
        return 77;
    }
    return EXIT_SUCCESS;
}
#endif /* AMK_HAVE_GPU */

/* Check suite of the evaluator: the verdict and its JSON, backend lookup and creation, the
 * pipeline (rejected / screened / one batch to the backend / floor guard), the model and sim
 * backends, and `auto` selection. A fake backend type (through evaluator_int.h) stands in
 * for a GPU so the pipeline's guards are tested without one. */
#include "amk_evaluator.h"
#include "amk_results.h"
#include "amk_search.h"
#include "amk_test.h"
#include "evaluator_int.h"
#include "record_int.h" /* a v3 file's rows: amk__row_format_cols */

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_rng.h>

/* amk_space_sample draws from our GSL stream through amk's small rng interface. */
static unsigned long gsl_below(void *rng, unsigned long n)
{
    return gsl_rng_uniform_int(rng, n);
}

#define EVALFIX AMK_TEST_FIXTURES "/specs/evalfix"
#define SIM_FIXTURES AMK_TEST_FIXTURES "/sim"

/* ---------- helpers -------------------------------------------------------------------- */

static amk_spec *g_spec;
static const amk_target *g_target;
static amk_space *g_space;
static amk_shape g_shape;

static void setup(void)
{
    amk_diag d = {0};
    int rc = amk_spec_load(EVALFIX, &g_spec, &d);
    ck_assert_msg(rc == AMK_OK, "loading %s: %s", EVALFIX, d.msg);
    g_target = amk_target_find("h100");
    ck_assert_ptr_nonnull(g_target);
    amk_spec_shape(g_spec, 0, &g_shape);
    rc = amk_space_create(g_spec, &g_shape, &g_target->limits, &g_space, &d);
    ck_assert_msg(rc == AMK_OK, "space: %s", d.msg);
}

static void teardown(void)
{
    amk_space_free(g_space);
    amk_spec_free(g_spec);
    g_space = NULL;
    g_spec = NULL;
}

/* The evalfix config with the given param values at shape sh (default shape when NULL). */
static amk_config cfg_at(const amk_shape *sh, int block, int vec, int unroll, int smem_kb)
{
    amk_config c;
    const char *names[] = {"BLOCK", "VEC", "UNROLL", "SMEM_KB"};
    int vals[] = {block, vec, unroll, smem_kb};
    amk_config_default(g_spec, sh ? sh : &g_shape, &c);
    for (int k = 0; k < 4; k++) {
        int i = amk_spec_param_index(g_spec, names[k]);
        ck_assert_int_ge(i, 0);
        int found = 0;
        for (int j = 0; j < amk_spec_param_n_choices(g_spec, i); j++)
            if (amk_spec_param_value(g_spec, i, j) == vals[k]) {
                c.choice[i] = (uint8_t)j;
                found = 1;
            }
        ck_assert_msg(found, "%s=%d is not a choice of the fixture", names[k], vals[k]);
    }
    return c;
}

static amk_config cfg(int block, int vec, int unroll, int smem_kb)
{
    return cfg_at(NULL, block, vec, unroll, smem_kb);
}

static double bound_of_on(const amk_config *c, const amk_target *t)
{
    amk_estimate est;
    amk_diag d = {0};
    ck_assert_msg(amk_cost_estimate(c, t, &est, &d) == AMK_OK, "%s", d.msg);
    ck_assert(isfinite(est.bound_us) && est.bound_us > 0);
    return est.bound_us;
}

static double bound_of(const amk_config *c)
{
    return bound_of_on(c, g_target);
}

static amk_evaluator *make(const char *backend, const amk_backend_opts *opts)
{
    amk_evaluator *ev = NULL;
    amk_diag d = {0};
    int rc = amk_evaluator_create(backend, opts, g_spec, &g_shape, &ev, &d);
    ck_assert_msg(rc == AMK_OK, "create %s: %s", backend, d.msg);
    return ev;
}

static int run1(amk_evaluator *ev, const amk_config *c, double incumbent, amk_verdict *v)
{
    const amk_config *cs[1] = {c};
    return amk_evaluator_run(ev, g_space, cs, 1, incumbent, v);
}

/* ---------- a fake backend (what a GPU backend would return, under our control) ---------- */

static int g_calls;            /* evaluate calls */
static size_t g_last_n;        /* configs in the last call */
static double g_factor = 2.0;  /* latency = factor * bound */
static amk_latency_kind g_kind = AMK_LAT_MEASURED;
static int g_rc = AMK_OK;      /* what evaluate returns */

static int fake_init(void *state, const amk_backend_opts *opts, amk_diag *d)
{
    (void)state;
    (void)opts;
    (void)d;
    return AMK_OK;
}

static int fake_evaluate(void *state, const amk_config *const *cfgs, size_t n, amk_verdict *out)
{
    (void)state;
    (void)cfgs;
    g_calls++;
    g_last_n = n;
    if (g_rc != AMK_OK)
        return g_rc;
    for (size_t i = 0; i < n; i++) {
        ck_assert(out[i].valid == 1);
        ck_assert(isfinite(out[i].bound_us));
        ck_assert_int_eq((int)strlen(out[i].config_id), 16);
        out[i].status = AMK_STATUS_OK;
        out[i].correct = 1;
        out[i].latency_us = out[i].bound_us * g_factor;
        out[i].latency_kind = g_kind;
        out[i].spread = 0.01;
        out[i].compile_ms = 12.5;
        out[i].cache_hit = 0;
        out[i].seed = 42;
        snprintf(out[i].notes, sizeof out[i].notes, "fake run");
    }
    return AMK_OK;
}

static const amk_target *fake_target(void *state)
{
    (void)state;
    return amk_target_find("h100");
}

static const char *fake_device(void *state)
{
    (void)state;
    return "Fake H100";
}

static void fake_clear(void *state)
{
    (void)state;
}

static const amk_backend_type fake_backend = {
    .api_version = 1, .name = "fake", .state_size = 8, .init = fake_init,
    .evaluate = fake_evaluate, .target = fake_target, .device = fake_device,
    .clear = fake_clear,
};

/* The fake with set_incumbent: records what it was told and when. */
static double g_incumbent;      /* last value set */
static int g_incumbent_sets;    /* set_incumbent calls */
static int g_calls_at_set;      /* evaluate calls before the last set */

static void fake_set_incumbent(void *state, double incumbent_us)
{
    (void)state;
    g_incumbent = incumbent_us;
    g_incumbent_sets++;
    g_calls_at_set = g_calls;
}

static const amk_backend_type fake_backend_incumbent = {
    .api_version = 1, .name = "fake", .state_size = 8, .init = fake_init,
    .evaluate = fake_evaluate, .target = fake_target, .device = fake_device,
    .clear = fake_clear, .set_incumbent = fake_set_incumbent,
};

static int nodev_init(void *state, const amk_backend_opts *opts, amk_diag *d)
{
    (void)state;
    (void)opts;
    return amk_diag_set(d, AMK_ENODEV, "fake gpu: no device answers");
}

/* A "gpu" that is absent, and one that answers. */
static const amk_backend_type fake_gpu_absent = {
    .api_version = 1, .name = "gpu", .state_size = 8, .init = nodev_init,
    .evaluate = fake_evaluate, .target = fake_target, .device = fake_device,
    .clear = fake_clear,
};
static const amk_backend_type fake_gpu_present = {
    .api_version = 1, .name = "gpu", .state_size = 8, .init = fake_init,
    .evaluate = fake_evaluate, .target = fake_target, .device = fake_device,
    .clear = fake_clear,
};

static amk_evaluator *make_fake(void)
{
    amk_evaluator *ev = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk__evaluator_create_type(&fake_backend, NULL, &ev, &d) == AMK_OK, "%s",
                  d.msg);
    return ev;
}

/* ---------- recorded sweeps written by the tests ------------------------------------- */

static char g_tmpdir[256];

static void tmp_setup(void)
{
    setup();
    amk_test_tmpdir_make(g_tmpdir, sizeof g_tmpdir, "evaluator");
}

static void tmp_teardown(void)
{
    amk_test_tmpdir_remove(g_tmpdir);
    teardown();
}

/* ---------- outputs checked outside amk (amk_backend_opts.verify) ----------------------- */

static char g_outputs[256];        /* what the fake got as outputs_dir */
static const char *g_written;      /* what it writes as output y ("" = writes nothing) */
static int g_ext_correct = 1;      /* the correct it reports */
static int g_verify_calls;

static int ext_init(void *state, const amk_backend_opts *opts, amk_diag *d)
{
    (void)state;
    (void)d;
    snprintf(g_outputs, sizeof g_outputs, "%s", opts->outputs_dir ? opts->outputs_dir : "");
    return AMK_OK;
}

/* What the gpu backend's run worker does: output y of each config into the outputs folder. */
static int ext_evaluate(void *state, const amk_config *const *cfgs, size_t n, amk_verdict *out)
{
    int rc = fake_evaluate(state, cfgs, n, out);
    for (size_t i = 0; i < n; i++) {
        char path[512];
        out[i].correct = g_ext_correct;
        snprintf(path, sizeof path, "%s/%s.y", g_outputs, out[i].config_id);
        if (g_outputs[0] && g_written[0])
            amk_test_write_file(path, g_written);
    }
    return rc;
}

static const amk_backend_type fake_backend_ext = {
    .api_version = 1, .name = "fake", .state_size = 8, .init = ext_init,
    .evaluate = ext_evaluate, .target = fake_target, .device = fake_device,
    .clear = fake_clear,
};

/* The judge: the output file says "good" or something else; "raise" cannot be judged. */
static int judge_file(const amk_config *c, const char *prefix, char *why, size_t cap, void *ud)
{
    char path[512], text[32] = "";
    g_verify_calls++;
    ck_assert_ptr_eq(ud, &g_verify_calls);
    ck_assert_ptr_nonnull(c->spec);
    snprintf(path, sizeof path, "%sy", prefix);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, cap, "no file %s", path);
        return -1;
    }
    ck_assert_ptr_nonnull(fgets(text, sizeof text, f));
    fclose(f);
    if (!strcmp(text, "raise")) {
        snprintf(why, cap, "verify() raised");
        return -1;
    }
    snprintf(why, cap, "verify() returned False on %s", text);
    return strcmp(text, "good") == 0;
}

/* evalfix with its output y checked externally, in g_tmpdir/ext. */
static amk_spec *ext_spec(void)
{
    char dir[400], path[512], *text = NULL;
    size_t len = 0;
    amk_diag d = {0};
    snprintf(dir, sizeof dir, "%s/ext", g_tmpdir);
    ck_assert_int_eq(amk_fs_mkdir_p(dir, &d), AMK_OK);
    static const char *const files[] = {"evalfix.hip", "reference.hip", "spec.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", EVALFIX, files[i]);
        ck_assert_int_eq(amk_fs_read_all(path, &text, &len, &d), AMK_OK);
        if (i == 2) {
            cJSON *j = cJSON_Parse(text);
            cJSON *y = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "buffers"), 1);
            ck_assert_str_eq(cJSON_GetObjectItem(y, "name")->valuestring, "y");
            cJSON_AddStringToObject(y, "check", "external");
            free(text);
            text = cJSON_Print(j);
            cJSON_Delete(j);
        }
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        amk_test_write_file(path, text);
        free(text);
    }
    amk_spec *sp = NULL;
    ck_assert_msg(amk_spec_load(dir, &sp, &d) == AMK_OK, "%s", d.msg);
    return sp;
}

START_TEST(test_amk_evaluator_run_external_check_judges_before_the_verdict)
{
    amk_spec *sp = ext_spec();
    amk_shape sh;
    amk_spec_shape(sp, 0, &sh);
    amk_space *space = NULL;
    amk_diag d = {0};
    ck_assert_int_eq(amk_space_create(sp, &sh, &g_target->limits, &space, &d), AMK_OK);
    char outputs[300];
    snprintf(outputs, sizeof outputs, "%s/outputs", g_tmpdir);
    ck_assert_int_eq(amk_fs_mkdir_p(outputs, &d), AMK_OK);
    amk_backend_opts o = {0};
    o.outputs_dir = outputs;
    o.verify = judge_file;
    o.verify_ud = &g_verify_calls;
    amk_evaluator *ev = NULL;
    ck_assert_int_eq(amk__evaluator_create_type(&fake_backend_ext, &o, &ev, &d), AMK_OK);
    amk_config c;
    amk_config_default(sp, &sh, &c);
    const amk_config *cs[1] = {&c};
    amk_verdict v;
    char id[17], file[512];
    amk_config_id(&c, id);
    snprintf(file, sizeof file, "%s/%s.y", outputs, id);

    /* passes: the measured latency stays, the file is gone */
    g_written = "good";
    g_ext_correct = 1;
    g_verify_calls = 0;
    ck_assert_int_eq(amk_evaluator_run(ev, space, cs, 1, NAN, &v), AMK_OK);
    ck_assert_int_eq(g_verify_calls, 1);
    ck_assert_int_eq(v.status, AMK_STATUS_OK);
    ck_assert(isfinite(v.latency_us));
    ck_assert_msg(strstr(v.notes, "y: passed the external check; fake run") == v.notes, "%s",
                  v.notes);
    ck_assert(!amk_fs_exists(file));

    /* refused: wrong, no latency, the judge's words in the reason */
    g_written = "bad";
    ck_assert_int_eq(amk_evaluator_run(ev, space, cs, 1, NAN, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_WRONG);
    ck_assert_int_eq(v.correct, 0);
    ck_assert(isnan(v.latency_us));
    ck_assert_int_eq(v.latency_kind, AMK_LAT_NONE);
    ck_assert_msg(strstr(v.reason, "the external check of y: verify() returned False on bad"),
                  "%s", v.reason);
    ck_assert(!amk_fs_exists(file));

    /* could not judge: run_error, no latency */
    g_written = "raise";
    ck_assert_int_eq(amk_evaluator_run(ev, space, cs, 1, NAN, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_RUN_ERROR);
    ck_assert(isnan(v.latency_us));
    ck_assert_msg(strstr(v.reason, "cannot check y: verify() raised"), "%s", v.reason);

    /* a run that failed amk's own checks (or checked nothing) is not judged */
    g_written = "good";
    g_ext_correct = -1;
    g_verify_calls = 0;
    ck_assert_int_eq(amk_evaluator_run(ev, space, cs, 1, NAN, &v), AMK_OK);
    ck_assert_int_eq(g_verify_calls, 0);
    ck_assert_int_eq(v.status, AMK_STATUS_OK);
    ck_assert(!amk_fs_exists(file));
    amk_evaluator_free(ev);

    /* no judge: nothing checked y, so no latency either */
    g_ext_correct = 1;
    o.verify = NULL;
    ck_assert_int_eq(amk__evaluator_create_type(&fake_backend_ext, &o, &ev, &d), AMK_OK);
    ck_assert_int_eq(amk_evaluator_run(ev, space, cs, 1, NAN, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_RUN_ERROR);
    ck_assert(isnan(v.latency_us));
    ck_assert_msg(strstr(v.reason, "cannot check y: nothing judges them"), "%s", v.reason);
    amk_evaluator_free(ev);

    /* a judge needs the folder its files are written to */
    o.verify = judge_file;
    o.outputs_dir = NULL;
    ck_assert_int_eq(amk__evaluator_create_type(&fake_backend_ext, &o, &ev, &d), AMK_EINVAL);
    ck_assert_msg(strstr(d.msg, "needs an outputs_dir"), "%s", d.msg);
    amk_space_free(space);
    amk_spec_free(sp);
}
END_TEST

static amk_row row_of(const amk_config *c, int64_t trial, amk_status st, double lat,
                      amk_latency_kind kind, const char *device, const char *note)
{
    amk_row r;
    char *params = amk_config_params_json(c);
    ck_assert_ptr_nonnull(params);
    amk_row_init(&r);
    r.trial = trial;
    amk_time_iso(r.time);
    snprintf(r.kernel, sizeof r.kernel, "%s", amk_spec_name(c->spec));
    amk_shape_format(c->spec, &c->shape, r.shape, sizeof r.shape);
    amk_config_id(c, r.config_id);
    snprintf(r.params, sizeof r.params, "%s", params);
    free(params);
    snprintf(r.source, sizeof r.source, "test");
    r.status = st;
    r.latency_us = lat;
    r.latency_kind = kind;
    r.spread = st == AMK_STATUS_OK ? 0.02 : NAN;
    r.kept = 0;
    snprintf(r.device, sizeof r.device, "%s", device);
    snprintf(r.note, sizeof r.note, "%s", note ? note : "");
    return r;
}

#define H100_NAME "NVIDIA H100 80GB HBM3"

/* ---------- amk_verdict_init / amk_verdict_to_json ------------------------------------- */

START_TEST(test_amk_verdict_init_nothing_known)
{
    amk_verdict v;
    memset(&v, 0x5a, sizeof v);
    amk_verdict_init(&v);
    ck_assert_int_ne(v.status, AMK_STATUS_OK);
    ck_assert_int_eq(v.valid, 0);
    ck_assert_int_eq(v.correct, -1);
    ck_assert(isnan(v.latency_us) && isnan(v.spread) && isnan(v.predicted_us));
    ck_assert(isnan(v.bound_us) && isnan(v.pct_of_roofline) && isnan(v.compile_ms));
    ck_assert_int_eq(v.latency_kind, AMK_LAT_NONE);
    ck_assert_int_eq(v.cache_hit, -1);
    ck_assert_str_eq(v.config_id, "");
    ck_assert_str_eq(v.reason, "");
    ck_assert_str_eq(v.notes, "");
    ck_assert_str_eq(v.device, "");
}
END_TEST

static const char *const verdict_keys[] = {
    "status", "valid", "rejected_reason", "reason", "correct", "latency_us", "latency_kind",
    "spread", "predicted_us", "bound_us", "pct_of_roofline", "compile_ms", "cache_hit", "cost_s",
    "setup_s", "seed", "config_id", "device", "regime", "notes", "clock_regime", "sm_mhz", "sm_mhz_min",
    "sm_mhz_max", "mem_mhz", "power_w", "temp_c", "throttle", "energy_uj", "peer", "peer_us",
    "vs_peer", "energy_window_ms", "energy_ticks", NULL};

START_TEST(test_amk_verdict_to_json_exact_keys)
{
    amk_verdict v;
    amk_verdict_init(&v);
    cJSON *j = amk_verdict_json(&v);
    ck_assert_ptr_nonnull(j);
    int n = 0;
    for (const cJSON *it = j->child; it; it = it->next, n++) {
        int known = 0;
        for (int k = 0; verdict_keys[k]; k++)
            known |= strcmp(it->string, verdict_keys[k]) == 0;
        ck_assert_msg(known, "unexpected key %s", it->string);
    }
    int expected = 0;
    while (verdict_keys[expected])
        expected++;
    ck_assert_int_eq(n, expected);
    /* Nothing known reads as null, not as 0 or NaN. */
    const char *nulls[] = {"rejected_reason", "reason", "correct", "latency_us", "latency_kind",
                           "spread", "predicted_us", "bound_us", "pct_of_roofline",
                           "compile_ms", "cache_hit", "cost_s", "setup_s"};
    for (size_t k = 0; k < sizeof nulls / sizeof *nulls; k++)
        ck_assert_msg(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, nulls[k])),
                      "%s is not null", nulls[k]);
    char *text = cJSON_PrintUnformatted(j);
    ck_assert_ptr_null(strstr(text, "nan"));
    free(text);
    cJSON_Delete(j);
}
END_TEST

START_TEST(test_amk_verdict_to_json_values)
{
    amk_verdict v;
    amk_verdict_init(&v);
    v.status = AMK_STATUS_OK;
    v.valid = 1;
    v.correct = 1;
    v.latency_us = 12.5;
    v.latency_kind = AMK_LAT_MEASURED;
    v.spread = 0.03;
    v.predicted_us = 11.0;
    v.bound_us = 10.0;
    v.pct_of_roofline = 80.0;
    v.compile_ms = 250.0;
    v.cache_hit = 1;
    v.cost_s = 0.75;
    v.setup_s = 0.5;
    v.seed = 1234;
    snprintf(v.config_id, sizeof v.config_id, "0123456789abcdef");
    snprintf(v.device, sizeof v.device, "NVIDIA H100");
    snprintf(v.regime, sizeof v.regime, "cold_l2");
    snprintf(v.notes, sizeof v.notes, "n");
    cJSON *j = amk_verdict_json(&v);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "status")->valuestring, "ok");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "valid")));
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "correct")));
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "cache_hit")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "rejected_reason")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "reason")));
    ck_assert_double_eq(cJSON_GetObjectItem(j, "latency_us")->valuedouble, 12.5);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "latency_kind")->valuestring, "measured");
    ck_assert_double_eq(cJSON_GetObjectItem(j, "pct_of_roofline")->valuedouble, 80.0);
    ck_assert_double_eq(cJSON_GetObjectItem(j, "cost_s")->valuedouble, 0.75);
    ck_assert_double_eq(cJSON_GetObjectItem(j, "setup_s")->valuedouble, 0.5);
    ck_assert_double_eq(cJSON_GetObjectItem(j, "seed")->valuedouble, 1234);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "config_id")->valuestring, "0123456789abcdef");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "regime")->valuestring, "cold_l2");
    cJSON_Delete(j);

    amk_verdict_init(&v);
    v.status = AMK_STATUS_REJECTED;
    v.correct = 0;
    snprintf(v.reason, sizeof v.reason, "restriction 'A' is false");
    j = amk_verdict_json(&v);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "rejected_reason")->valuestring,
                     "restriction 'A' is false");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "reason")->valuestring, "restriction 'A' is false");
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "correct")));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "valid")));
    cJSON_Delete(j);

    /* A 64-bit seed survives exactly, as an integer literal. */
    amk_verdict_init(&v);
    v.seed = UINT64_C(18446744073709551557);
    j = amk_verdict_json(&v);
    char *text = cJSON_PrintUnformatted(j);
    ck_assert_ptr_nonnull(strstr(text, "\"seed\":18446744073709551557,"));
    free(text);
    cJSON_Delete(j);
}
END_TEST

/* The JSON agrees with the published schema (space_defs/schema/verdict.schema.json). */
START_TEST(test_amk_verdict_to_json_matches_schema)
{
    const char *path = AMK_TEST_FIXTURES "/../../space_defs/schema/verdict.schema.json";
    char *text = NULL;
    size_t len = 0;
    amk_diag d = {0};
    ck_assert_msg(amk_fs_read_all(path, &text, &len, &d) == AMK_OK, "%s", d.msg);
    cJSON *schema = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(schema);
    const cJSON *props = cJSON_GetObjectItem(schema, "properties");
    ck_assert_ptr_nonnull(props);
    amk_verdict v;
    amk_verdict_init(&v);
    cJSON *j = amk_verdict_json(&v);
    for (const cJSON *it = j->child; it; it = it->next)
        ck_assert_msg(cJSON_GetObjectItem(props, it->string), "key %s not in the schema",
                      it->string);
    const cJSON *req = cJSON_GetObjectItem(schema, "required");
    for (const cJSON *it = req ? req->child : NULL; it; it = it->next)
        ck_assert_msg(cJSON_GetObjectItem(j, it->valuestring), "required %s missing",
                      it->valuestring);
    for (const cJSON *it = props->child; it; it = it->next)
        ck_assert_msg(cJSON_GetObjectItem(j, it->string), "schema key %s not emitted",
                      it->string);
    cJSON_Delete(j);
    cJSON_Delete(schema);
}
END_TEST

/* ---------- amk_backend_find / amk_evaluator_create ------------------------------------ */

START_TEST(test_amk_backend_find_builtins)
{
    ck_assert_ptr_eq(amk_backend_find("model"), &amk_backend_model);
    ck_assert_ptr_eq(amk_backend_find("sim"), &amk_backend_sim);
    ck_assert_ptr_null(amk_backend_find("nope"));
    ck_assert_ptr_null(amk_backend_find(NULL));
#ifdef AMK_HAVE_GPU
    ck_assert_ptr_nonnull(amk_backend_find("gpu"));
#else
    ck_assert_ptr_null(amk_backend_find("gpu"));
#endif
    for (int i = 0; amk_backends[i]; i++)
        ck_assert_int_ge(amk_backends[i]->api_version, 1);
}
END_TEST

START_TEST(test_amk_evaluator_create_errors_name_the_culprit)
{
    amk_evaluator *ev = (amk_evaluator *)&ev;
    amk_diag d = {0};
    ck_assert_int_eq(amk_evaluator_create("warp-drive", NULL, NULL, NULL, &ev, &d), AMK_EINVAL);
    ck_assert_ptr_null(ev);
    ck_assert_ptr_nonnull(strstr(d.msg, "warp-drive"));

    ck_assert_int_eq(amk_evaluator_create("sim", NULL, NULL, NULL, &ev, &d), AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "sim:FILE"));

    ck_assert_int_eq(amk_evaluator_create("sim:/nonexistent/amk/results.tsv", NULL, NULL, NULL,
                                          &ev, &d), AMK_ENOENT);
    ck_assert_ptr_null(ev);

    ck_assert_int_eq(amk_evaluator_create("model:x", NULL, NULL, NULL, &ev, &d), AMK_EINVAL);

    amk_backend_opts o = {.target = "pdp11"};
    ck_assert_int_eq(amk_evaluator_create("model", &o, NULL, NULL, &ev, &d), AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "pdp11"));

    amk_backend_type broken = fake_backend;
    broken.evaluate = NULL;
    ck_assert_int_eq(amk__evaluator_create_type(&broken, NULL, &ev, &d), AMK_EINVAL);
}
END_TEST

START_TEST(test_amk_evaluator_create_model_target)
{
    amk_backend_opts o = {.target = "a100"};
    amk_evaluator *ev = make("model", &o);
    ck_assert_str_eq(amk_evaluator_backend(ev), "model");
    ck_assert_str_eq(amk_evaluator_target(ev)->key, "a100");
    ck_assert_ptr_nonnull(strstr(amk_evaluator_device(ev), amk_evaluator_target(ev)->name));
    amk_evaluator_free(ev);
    amk_evaluator_free(NULL);
}
END_TEST

/* ---------- amk_evaluator_run: validate, feasibility, screen --------------------------- */

START_TEST(test_amk_evaluator_run_rejected_reason_names_restriction)
{
    amk_evaluator *ev = make_fake();
    amk_config c1 = cfg(2048, 1, 1, 0);   /* BLOCK <= max_threads */
    amk_config c2 = cfg(256, 8, 4, 0);    /* VEC * UNROLL <= 16 */
    const amk_config *cs[] = {&c1, &c2};
    amk_verdict v[2];
    g_calls = 0;
    ck_assert_int_eq(amk_evaluator_run(ev, g_space, cs, 2, NAN, v), AMK_OK);
    ck_assert_int_eq(g_calls, 0); /* nothing reached the backend */
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(v[i].status, AMK_STATUS_REJECTED);
        ck_assert_int_eq(v[i].valid, 0);
        ck_assert(isnan(v[i].latency_us) && isnan(v[i].bound_us));
        ck_assert_int_eq((int)strlen(v[i].config_id), 16);
        ck_assert_str_eq(v[i].device, "Fake H100");
    }
    ck_assert_msg(strstr(v[0].reason, "BLOCK <= max_threads"), "reason: %s", v[0].reason);
    ck_assert_msg(strstr(v[1].reason, "VEC * UNROLL <= 16"), "reason: %s", v[1].reason);
    char id[17];
    amk_config_id(&c1, id);
    ck_assert_str_eq(v[0].config_id, id);
    cJSON *j = amk_verdict_json(&v[0]);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "rejected_reason")->valuestring, v[0].reason);
    cJSON_Delete(j);
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_amk_evaluator_run_infeasible_is_rejected)
{
    amk_evaluator *ev = make_fake();
    amk_config c = cfg(256, 1, 1, 300); /* 300 KiB of shared memory: no restriction says so */
    amk_diag d = {0};
    /* the launch limits are part of the space: the config is not even valid */
    ck_assert_int_eq(amk_space_valid(g_space, &c, &d), AMK_ERESTRICT);
    ck_assert_msg(strstr(d.msg, "shared_bytes") && strstr(d.msg, "max_smem_optin"), "%s", d.msg);
    amk_verdict v;
    g_calls = 0;
    ck_assert_int_eq(run1(ev, &c, NAN, &v), AMK_OK);
    ck_assert_int_eq(g_calls, 0);
    ck_assert_int_eq(v.status, AMK_STATUS_REJECTED);
    ck_assert_int_eq(v.valid, 0);
    ck_assert_msg(v.reason[0] != '\0', "an infeasible config needs a reason");
    amk_diag fd = {0};
    ck_assert_int_ne(amk_cost_feasible(&c, g_target, &fd), AMK_OK); /* agrees */
    ck_assert_str_eq(v.reason, d.msg);
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_amk_evaluator_run_rejects_config_of_other_shape)
{
    amk_evaluator *ev = make_fake();
    amk_shape small;
    amk_spec_shape(g_spec, 1, &small);
    amk_config c = cfg_at(&small, 256, 1, 1, 0);
    amk_config bad = cfg(256, 1, 1, 0);
    bad.choice[amk_spec_param_index(g_spec, "VEC")] = 200;
    const amk_config *cs[] = {&c, &bad, NULL};
    amk_verdict v[3];
    ck_assert_int_eq(amk_evaluator_run(ev, g_space, cs, 3, NAN, v), AMK_OK);
    ck_assert_int_eq(v[0].status, AMK_STATUS_REJECTED);
    ck_assert_msg(strstr(v[0].reason, "shape"), "reason: %s", v[0].reason);
    ck_assert_int_eq(v[1].status, AMK_STATUS_REJECTED);
    ck_assert_msg(strstr(v[1].reason, "VEC"), "reason: %s", v[1].reason);
    ck_assert_int_eq(v[2].status, AMK_STATUS_REJECTED);
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_amk_evaluator_run_screens_only_when_floor_exceeds_incumbent)
{
    amk_evaluator *ev = make_fake();
    amk_config c = cfg(256, 4, 2, 0);
    double b = bound_of(&c);
    amk_verdict v;
    /* 1. No incumbent: never screened. */
    g_calls = 0;
    ck_assert_int_eq(run1(ev, &c, NAN, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_OK);
    ck_assert_int_eq(g_calls, 1);
    /* 2. Incumbent equal to the floor, and within the 2% default margin: not screened. */
    ck_assert_int_eq(run1(ev, &c, b, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_OK);
    ck_assert_int_eq(run1(ev, &c, b / 1.019, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_OK);
    ck_assert_int_eq(g_calls, 3);
    /* 3. Floor above the incumbent by more than the margin: screened, backend not called. */
    ck_assert_int_eq(run1(ev, &c, b / 1.021, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_SCREENED);
    ck_assert_int_eq(v.valid, 1);
    ck_assert(isnan(v.latency_us));
    ck_assert_double_eq(v.bound_us, b);
    ck_assert(isfinite(v.predicted_us));
    ck_assert_int_eq(g_calls, 3);
    /* 4. Margin 0: a floor 0.1% above the incumbent is screened. */
    amk_evaluator_set_screen_margin(ev, 0.0);
    ck_assert_int_eq(run1(ev, &c, b / 1.001, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_SCREENED);
    ck_assert_int_eq(run1(ev, &c, b, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_OK);
    amk_evaluator_set_screen_margin(ev, -1.0); /* ignored */
    ck_assert_int_eq(run1(ev, &c, b / 1.001, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_SCREENED);
    amk_evaluator_free(ev);
}
END_TEST

static int collect(const amk_config *c, void *ud)
{
    amk_config **p = ud;
    **p = *c;
    (*p)++;
    return 0;
}

/* The backend hears the incumbent before each evaluate (the gpu backend screens with it);
 * "none" arrives as NAN. */
START_TEST(test_amk_evaluator_run_tells_backend_the_incumbent)
{
    amk_evaluator *ev = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk__evaluator_create_type(&fake_backend_incumbent, NULL, &ev, &d) == AMK_OK,
                  "%s", d.msg);
    amk_config c = cfg(256, 4, 1, 0);
    amk_verdict v;
    g_calls = 0;
    g_incumbent_sets = 0;
    ck_assert_int_eq(run1(ev, &c, 1e9, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_OK);
    ck_assert_int_eq(g_incumbent_sets, 1);
    ck_assert_int_eq(g_calls_at_set, 0); /* before evaluate */
    ck_assert(g_incumbent == 1e9);
    ck_assert_int_eq(run1(ev, &c, NAN, &v), AMK_OK);
    ck_assert_int_eq(g_incumbent_sets, 2);
    ck_assert_int_eq(g_calls_at_set, 1);
    ck_assert(isnan(g_incumbent));
    ck_assert_int_eq(run1(ev, &c, -5, &v), AMK_OK); /* not a latency: none */
    ck_assert(isnan(g_incumbent));
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_amk_evaluator_run_one_backend_batch)
{
    amk_evaluator *ev = make_fake();
    int64_t n = amk_space_count(g_space);
    ck_assert_int_gt(n, 10);
    amk_config *all = calloc((size_t)n, sizeof *all), *p = all;
    ck_assert_int_eq(amk_space_enumerate(g_space, collect, &p), AMK_OK);
    ck_assert_int_eq(p - all, n);
    /* Add two rejected ones in the middle. */
    size_t total = (size_t)n + 2;
    const amk_config **cs = calloc(total, sizeof *cs);
    amk_config r1 = cfg(2048, 1, 1, 0), r2 = cfg(256, 8, 8, 0);
    size_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == n / 2) {
            cs[k++] = &r1;
            cs[k++] = &r2;
        }
        cs[k++] = &all[i];
    }
    amk_verdict *v = calloc(total, sizeof *v);
    g_calls = 0;
    g_last_n = 0;
    ck_assert_int_eq(amk_evaluator_run(ev, g_space, cs, total, NAN, v), AMK_OK);
    ck_assert_int_eq(g_calls, 1);
    size_t n_ok = 0, n_rej = 0;
    for (size_t i = 0; i < total; i++) {
        n_ok += v[i].status == AMK_STATUS_OK;
        n_rej += v[i].status == AMK_STATUS_REJECTED;
        if (v[i].status == AMK_STATUS_OK) {
            /* Verdicts land in their own slots: the id matches the config asked for. */
            char id[17];
            amk_config_id(cs[i], id);
            ck_assert_str_eq(v[i].config_id, id);
            ck_assert_double_eq_tol(v[i].latency_us, 2.0 * v[i].bound_us, 1e-9);
            ck_assert_double_eq_tol(v[i].pct_of_roofline, 50.0, 1e-9);
            ck_assert_str_eq(v[i].device, "Fake H100");
        }
    }
    ck_assert_uint_eq(n_rej, 2 + (size_t)n - g_last_n); /* the infeasible ones too */
    ck_assert_uint_eq(n_ok, g_last_n);
    ck_assert_uint_gt(n_ok, 0);
    free(v);
    free(cs);
    free(all);
    amk_evaluator_free(ev);
}
END_TEST

/* ---------- the floor guard ------------------------------------------------------------ */

START_TEST(test_amk_evaluator_run_floor_guard_withholds_too_fast)
{
    amk_evaluator *ev = make_fake();
    amk_config c = cfg(128, 2, 2, 16);
    amk_verdict v;
    g_factor = 0.5;
    g_kind = AMK_LAT_MEASURED;
    ck_assert_int_eq(run1(ev, &c, NAN, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_WITHHELD);
    ck_assert(isnan(v.latency_us));
    ck_assert(isnan(v.pct_of_roofline));
    ck_assert_int_eq(v.latency_kind, AMK_LAT_NONE);
    char want[64];
    snprintf(want, sizeof want, "%.6g", 0.5 * v.bound_us);
    ck_assert_msg(strstr(v.notes, want), "notes '%s' lack the latency %s", v.notes, want);
    ck_assert_ptr_nonnull(strstr(v.notes, "fake run")); /* the backend's notes are kept */
    ck_assert_ptr_nonnull(strstr(v.reason, "floor"));
    cJSON *j = amk_verdict_json(&v);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "latency_us")));
    cJSON_Delete(j);

    /* Exactly at the floor is possible (a perfect kernel): kept. */
    g_factor = 1.0;
    ck_assert_int_eq(run1(ev, &c, NAN, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_OK);
    ck_assert_double_eq_tol(v.pct_of_roofline, 100.0, 1e-9);
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_amk_evaluator_run_ok_without_latency_is_not_ok)
{
    amk_evaluator *ev = make_fake();
    amk_config c = cfg(256, 1, 1, 0);
    amk_verdict v;
    g_factor = NAN;
    ck_assert_int_eq(run1(ev, &c, NAN, &v), AMK_OK);
    ck_assert_int_ne(v.status, AMK_STATUS_OK);
    ck_assert(isnan(v.latency_us));
    g_factor = 2.0;
    g_kind = AMK_LAT_NONE;
    ck_assert_int_eq(run1(ev, &c, NAN, &v), AMK_OK);
    ck_assert_int_ne(v.status, AMK_STATUS_OK);
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_amk_evaluator_run_backend_failure_is_an_error)
{
    amk_evaluator *ev = make_fake();
    amk_config c = cfg(256, 1, 1, 0), r = cfg(2048, 1, 1, 0);
    const amk_config *cs[] = {&c, &r};
    amk_verdict v[2];
    g_rc = AMK_EBACKEND;
    ck_assert_int_eq(amk_evaluator_run(ev, g_space, cs, 2, NAN, v), AMK_EBACKEND);
    ck_assert_int_ne(v[0].status, AMK_STATUS_OK);
    ck_assert(isnan(v[0].latency_us));
    ck_assert_ptr_nonnull(strstr(v[0].reason, "fake backend failed"));
    ck_assert_int_eq(v[1].status, AMK_STATUS_REJECTED); /* decided before the backend */
    g_rc = AMK_OK;
    amk_evaluator_free(ev);
}
END_TEST

/* ---------- model ---------------------------------------------------------------------- */

START_TEST(test_backend_model_never_measured)
{
    amk_evaluator *ev = make("model", NULL);
    ck_assert_str_eq(amk_evaluator_backend(ev), "model");
    int64_t n = amk_space_count(g_space);
    amk_config *all = calloc((size_t)n, sizeof *all), *p = all;
    ck_assert_int_eq(amk_space_enumerate(g_space, collect, &p), AMK_OK);
    const amk_config **cs = calloc((size_t)n, sizeof *cs);
    for (int64_t i = 0; i < n; i++)
        cs[i] = &all[i];
    amk_verdict *v = calloc((size_t)n, sizeof *v);
    ck_assert_int_eq(amk_evaluator_run(ev, g_space, cs, (size_t)n, NAN, v), AMK_OK);
    int n_ok = 0;
    for (int64_t i = 0; i < n; i++) {
        ck_assert_int_ne(v[i].latency_kind, AMK_LAT_MEASURED);
        ck_assert_int_ne(v[i].latency_kind, AMK_LAT_REPLAYED);
        if (v[i].status != AMK_STATUS_OK)
            continue;
        n_ok++;
        ck_assert_int_eq(v[i].latency_kind, AMK_LAT_PREDICTED);
        ck_assert_double_eq(v[i].latency_us, v[i].predicted_us);
        ck_assert_int_eq(v[i].correct, -1);
        ck_assert(isnan(v[i].compile_ms));
        ck_assert_ptr_nonnull(strstr(v[i].device, "(model)"));
        cJSON *j = amk_verdict_json(&v[i]);
        ck_assert_str_eq(cJSON_GetObjectItem(j, "latency_kind")->valuestring, "predicted");
        ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "correct")));
        cJSON_Delete(j);
    }
    ck_assert_int_gt(n_ok, 0);
    free(v);
    free(cs);
    free(all);
    amk_evaluator_free(ev);
}
END_TEST

/* Every built-in kernel's default config at its default shape is valid, feasible and gets a
 * prediction on the default target; a random sample never comes back measured. */
START_TEST(test_backend_model_builtin_kernels)
{
    amk_registry *reg = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_registry_create(&reg, &d) == AMK_OK, "%s", d.msg);
    int nk = amk_registry_count(reg);
    ck_assert_int_ge(nk, 2); /* gemm and rmsnorm ship with amk */
    ck_assert_ptr_nonnull(amk_registry_find(reg, "gemm"));
    ck_assert_ptr_nonnull(amk_registry_find(reg, "rmsnorm"));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    for (int k = 0; k < nk; k++) {
        const amk_spec *s = amk_registry_at(reg, k);
        amk_shape sh;
        amk_spec_shape(s, 0, &sh);
        amk_evaluator *ev = NULL;
        ck_assert_msg(amk_evaluator_create("model", NULL, s, &sh, &ev, &d) == AMK_OK, "%s", d.msg);
        amk_space *sp = NULL;
        ck_assert_msg(amk_space_create(s, &sh, &amk_evaluator_target(ev)->limits, &sp, &d) ==
                      AMK_OK, "%s: %s", amk_spec_name(s), d.msg);
        amk_config cs[17];
        const amk_config *ptr[17];
        amk_config_default(s, &sh, &cs[0]);
        ptr[0] = &cs[0];
        size_t n = 1;
        for (; n < 17; n++) {
            if (amk_space_sample(sp, &(amk_rng){gsl_below, rng}, &cs[n], 100000) != AMK_OK)
                break;
            ptr[n] = &cs[n];
        }
        amk_verdict v[17];
        ck_assert_int_eq(amk_evaluator_run(ev, sp, ptr, n, NAN, v), AMK_OK);
        ck_assert_msg(v[0].status == AMK_STATUS_OK, "%s default config: %s (%s)",
                      amk_spec_name(s), amk_status_name(v[0].status), v[0].reason);
        for (size_t i = 0; i < n; i++) {
            ck_assert_int_ne(v[i].latency_kind, AMK_LAT_MEASURED);
            if (v[i].status == AMK_STATUS_OK) {
                ck_assert_int_eq(v[i].latency_kind, AMK_LAT_PREDICTED);
                ck_assert(isfinite(v[i].latency_us) && v[i].latency_us > 0);
                ck_assert(isfinite(v[i].bound_us) && v[i].bound_us > 0);
            }
        }
        amk_space_free(sp);
        amk_evaluator_free(ev);
    }
    gsl_rng_free(rng);
    amk_registry_free(reg);
}
END_TEST

/* ---------- sim ------------------------------------------------------------------------ */

START_TEST(test_backend_sim_replays_exactly)
{
    char path[512];
    snprintf(path, sizeof path, "%s/results.tsv", g_tmpdir);
    amk_config a = cfg(256, 1, 1, 0), b = cfg(128, 4, 2, 0), e = cfg(512, 2, 1, 0);
    amk_config p = cfg(64, 1, 1, 0), absent = cfg(1024, 1, 1, 0), slow = cfg(32, 1, 1, 0);
    /* The H100 floor of this shape is about 40 us (128 MiB at 3.35 TB/s). */
    double fa = bound_of(&a);
    ck_assert(fa < 61.25 && fa > 10.0);
    amk_row rows[] = {
        row_of(&a, 1, AMK_STATUS_OK, 61.25, AMK_LAT_MEASURED, H100_NAME, NULL),
        row_of(&b, 2, AMK_STATUS_OK, 90.5, AMK_LAT_MEASURED, H100_NAME, NULL),
        row_of(&b, 5, AMK_STATUS_OK, 70.0, AMK_LAT_MEASURED, H100_NAME, NULL),
        row_of(&b, 9, AMK_STATUS_OK, 110.0, AMK_LAT_MEASURED, H100_NAME, NULL),
        row_of(&e, 3, AMK_STATUS_COMPILE_ERROR, NAN, AMK_LAT_NONE, H100_NAME,
               "error: identifier \"amk_bf16\" is undefined"),
        row_of(&p, 4, AMK_STATUS_OK, 65.0, AMK_LAT_PREDICTED, H100_NAME, NULL),
        row_of(&slow, 6, AMK_STATUS_OK, 10.0, AMK_LAT_MEASURED, H100_NAME, NULL),
    };
    amk_test_append_rows(path, rows, sizeof rows / sizeof *rows);

    char backend[600];
    snprintf(backend, sizeof backend, "sim:%s", path);
    amk_evaluator *ev = make(backend, NULL);
    ck_assert_str_eq(amk_evaluator_backend(ev), "sim");
    ck_assert_str_eq(amk_evaluator_device(ev), H100_NAME " (replayed)");
    ck_assert_str_eq(amk_evaluator_target(ev)->key, "h100");

    const amk_config *cs[] = {&a, &b, &e, &p, &absent, &slow};
    amk_verdict v[6];
    ck_assert_int_eq(amk_evaluator_run(ev, g_space, cs, 6, NAN, v), AMK_OK);
    /* single measured trial: exactly that number */
    ck_assert_int_eq(v[0].status, AMK_STATUS_OK);
    ck_assert_int_eq(v[0].latency_kind, AMK_LAT_REPLAYED);
    ck_assert_double_eq(v[0].latency_us, 61.25);
    ck_assert_ptr_nonnull(strstr(v[0].notes, "(trial 1)"));
    ck_assert_ptr_nonnull(strstr(v[0].notes, path));
    ck_assert_int_eq(v[0].correct, -1);
    ck_assert_str_eq(v[0].device, H100_NAME " (replayed)");
    /* three trials: the median */
    ck_assert_int_eq(v[1].status, AMK_STATUS_OK);
    ck_assert_double_eq(v[1].latency_us, 90.5);
    ck_assert_ptr_nonnull(strstr(v[1].notes, "median of 3"));
    /* a recorded failure replays as that failure, with its reason */
    ck_assert_int_eq(v[2].status, AMK_STATUS_COMPILE_ERROR);
    ck_assert(isnan(v[2].latency_us));
    ck_assert_ptr_nonnull(strstr(v[2].reason, "amk_bf16"));
    /* a predicted row is not a measurement: not replayed */
    ck_assert_int_eq(v[3].status, AMK_STATUS_NOT_RECORDED);
    /* absent: not_recorded, the id and the file named, no number */
    char id[17];
    amk_config_id(&absent, id);
    ck_assert_int_eq(v[4].status, AMK_STATUS_NOT_RECORDED);
    ck_assert(isnan(v[4].latency_us));
    ck_assert_int_eq(v[4].latency_kind, AMK_LAT_NONE);
    char want[600];
    snprintf(want, sizeof want, "config %s is not in %s", id, path);
    ck_assert_str_eq(v[4].reason, want);
    /* a recorded number under the floor is not trusted on replay either */
    ck_assert_int_eq(v[5].status, AMK_STATUS_WITHHELD);
    ck_assert(isnan(v[5].latency_us));
    amk_evaluator_free(ev);
}
END_TEST

/* A replayed amk results file gives each verdict the cost its rows recorded (v4, cost_s): a
 * config's one row's cost, the mean over its ok rows, a failure's latest row's; NAN where the
 * rows carry none, and then the loop's clock is the wall clock. When every config has one, the
 * replay runs the loop's time limit on those costs (a simulated clock). A v3 file (no cost
 * column) replays without costs. */
START_TEST(test_backend_sim_replays_recorded_cost_s)
{
    char path[512], backend[600];
    snprintf(path, sizeof path, "%s/costs.tsv", g_tmpdir);
    amk_config a = cfg(256, 1, 1, 0), b = cfg(128, 4, 2, 0), e = cfg(512, 2, 1, 0);
    amk_config u = cfg(128, 1, 1, 0);
    amk_row rows[] = {
        row_of(&a, 1, AMK_STATUS_OK, 61.25, AMK_LAT_MEASURED, H100_NAME, NULL),
        row_of(&b, 2, AMK_STATUS_OK, 90.5, AMK_LAT_MEASURED, H100_NAME, NULL),
        row_of(&b, 3, AMK_STATUS_OK, 70.0, AMK_LAT_MEASURED, H100_NAME, NULL),
        row_of(&e, 4, AMK_STATUS_COMPILE_ERROR, NAN, AMK_LAT_NONE, H100_NAME, "error: x"),
        row_of(&e, 5, AMK_STATUS_COMPILE_ERROR, NAN, AMK_LAT_NONE, H100_NAME, "error: y"),
        row_of(&u, 6, AMK_STATUS_OK, 80.0, AMK_LAT_MEASURED, H100_NAME, NULL),
    };
    rows[0].cost_s = 1.5;
    rows[1].cost_s = 2.0;
    rows[2].cost_s = 4.5;
    rows[3].cost_s = 0.125;
    rows[4].cost_s = 0.375;
    /* rows[5]: no cost (NAN) */
    amk_test_append_rows(path, rows, 6);
    snprintf(backend, sizeof backend, "sim:%s", path);
    amk_evaluator *ev = make(backend, NULL);
    const amk_config *cs[] = {&a, &b, &e, &u};
    amk_verdict v[4];
    ck_assert_int_eq(amk_evaluator_run(ev, g_space, cs, 4, NAN, v), AMK_OK);
    ck_assert_int_eq(v[0].status, AMK_STATUS_OK);
    ck_assert_double_eq(v[0].cost_s, 1.5);
    ck_assert_msg(strstr(v[0].notes, "recorded cost 1.500 s"), "%s", v[0].notes);
    ck_assert_double_eq(v[1].cost_s, 3.25);
    ck_assert_int_eq(v[2].status, AMK_STATUS_COMPILE_ERROR);
    ck_assert_double_eq(v[2].cost_s, 0.375);
    ck_assert_int_eq(v[3].status, AMK_STATUS_OK);
    ck_assert(isnan(v[3].cost_s));
    ck_assert_int_eq(amk_evaluator_simulated_clock(ev), 0);
    amk_evaluator_free(ev);

    /* Every config costed: the loop may run its time limit on the recorded costs. */
    snprintf(path, sizeof path, "%s/costed.tsv", g_tmpdir);
    amk_test_append_rows(path, rows, 5);
    snprintf(backend, sizeof backend, "sim:%s", path);
    ev = make(backend, NULL);
    ck_assert_int_eq(amk_evaluator_simulated_clock(ev), 1);
    amk_verdict one;
    ck_assert_int_eq(run1(ev, &b, NAN, &one), AMK_OK);
    ck_assert_double_eq(one.cost_s, 3.25);
    amk_evaluator_free(ev);

    /* The same rows in a v3 file: no cost column, no costs. */
    snprintf(path, sizeof path, "%s/v3.tsv", g_tmpdir);
    amk_sb sb = {0};
    amk_sb_printf(&sb, "%s\n", AMK_TSV_HEADER_V3);
    for (int i = 0; i < AMK__TSV_NCOLS_V3; i++)
        amk_sb_printf(&sb, "%s%s", i ? "\t" : "", amk__tsv_column_name(i));
    amk_sb_printf(&sb, "\n");
    for (int i = 0; i < 5; i++)
        amk__row_format_cols(&rows[i], AMK__TSV_NCOLS_V3, &sb);
    amk_test_write_file(path, sb.p);
    amk_sb_free(&sb);
    snprintf(backend, sizeof backend, "sim:%s", path);
    ev = make(backend, NULL);
    ck_assert_int_eq(amk_evaluator_simulated_clock(ev), 0);
    ck_assert_int_eq(amk_evaluator_run(ev, g_space, cs, 3, NAN, v), AMK_OK);
    ck_assert_int_eq(v[0].status, AMK_STATUS_OK);
    ck_assert_double_eq(v[0].latency_us, 61.25);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(isnan(v[i].cost_s), "config %d: cost %g from a v3 file", i, v[i].cost_s);
    amk_evaluator_free(ev);
}
END_TEST

/* A row recorded before a param joined the spec (its params JSON lacks it; its config_id
 * is the old spec's) replays as the config with that param at its default, and a resumed
 * search reads it so; a row naming a value the spec no longer offers is nobody's config. */
START_TEST(test_backend_sim_row_recorded_before_a_param)
{
    char path[512];
    snprintf(path, sizeof path, "%s/older.tsv", g_tmpdir);
    amk_config a = cfg(128, 4, 2, 0), other = cfg(128, 4, 2, 16);
    amk_row r = row_of(&a, 1, AMK_STATUS_OK, 61.25, AMK_LAT_MEASURED, H100_NAME, NULL);
    snprintf(r.params, sizeof r.params, "{\"BLOCK\":128,\"UNROLL\":2,\"VEC\":4}");
    snprintf(r.config_id, sizeof r.config_id, "0123456789abcdef"); /* the older spec's id */
    amk_row gone = row_of(&a, 2, AMK_STATUS_OK, 80.0, AMK_LAT_MEASURED, H100_NAME, NULL);
    snprintf(gone.params, sizeof gone.params, "{\"BLOCK\":96,\"UNROLL\":2,\"VEC\":4}");
    snprintf(gone.config_id, sizeof gone.config_id, "fedcba9876543210");
    amk_config def;
    amk_config_default(g_spec, &g_shape, &def);
    amk_row olddef = row_of(&def, 3, AMK_STATUS_OK, 70.0, AMK_LAT_MEASURED, H100_NAME, NULL);
    snprintf(olddef.params, sizeof olddef.params, "{\"BLOCK\":256,\"UNROLL\":1,\"VEC\":1}");
    snprintf(olddef.config_id, sizeof olddef.config_id, "00000000000000aa");
    amk_row rows[] = {r, gone, olddef};
    amk_test_append_rows(path, rows, 3);

    amk_config got;
    ck_assert_int_eq(amk_config_from_recorded(g_spec, &g_shape, r.params, &got, NULL), 1);
    ck_assert(amk_config_equal(&got, &a));
    char *full = amk_config_params_json(&a);
    ck_assert_int_eq(amk_config_from_recorded(g_spec, &g_shape, full, &got, NULL), 0);
    ck_assert(amk_config_equal(&got, &a));
    free(full);
    amk_diag d = {0};
    ck_assert_int_eq(amk_config_from_recorded(g_spec, &g_shape, gone.params, &got, &d),
                     AMK_ECONFIG);
    ck_assert_ptr_nonnull(strstr(d.msg, "BLOCK"));

    char backend[600];
    snprintf(backend, sizeof backend, "sim:%s", path);
    amk_evaluator *ev = make(backend, NULL);
    const amk_config *cs[] = {&a, &other};
    amk_verdict v[2];
    ck_assert_int_eq(amk_evaluator_run(ev, g_space, cs, 2, NAN, v), AMK_OK);
    ck_assert_int_eq(v[0].status, AMK_STATUS_OK);
    ck_assert_double_eq(v[0].latency_us, 61.25);
    ck_assert_int_eq(v[1].status, AMK_STATUS_NOT_RECORDED);
    amk_evaluator_free(ev);

    /* A resumed search (the history: --resume, amk propose) reads the row the same way: seen
     * under today's id, its incumbent restored; the unreadable row is skipped. */
    amk_history *h = NULL;
    amk_history_opts o = {.spec = g_spec, .at = &g_shape, .device = H100_NAME};
    ck_assert_msg(amk_history_load(path, &o, &h, &d) == AMK_OK, "%s", d.msg);
    char id[17];
    amk_config_id(&a, id);
    ck_assert(amk_idset_has(amk_history_seen(h), id));
    const amk_incumbent *inc = amk_history_incumbent(h);
    ck_assert(inc->has && amk_config_equal(&inc->config, &a));
    ck_assert_int_eq(amk_history_skipped(h), 1);
    /* The loop's vs_default finds the default among the rows (the model backend: no
     * recorded sweep to ask instead). */
    amk_evaluator *model = make("model", NULL);
    amk_vs_default vd;
    amk_loop_vs_default(path, model, g_space, H100_NAME, inc, &vd);
    ck_assert_msg(vd.default_us == 70.0, "%s", vd.reason);
    ck_assert_double_eq_tol(vd.speedup, 1.1429, 1e-4);
    amk_evaluator_free(model);
    amk_history_free(h);

    /* `amk report` and `amk export` (and their Python twins) read it so too, through the
     * registry's upgrader: the best under today's id with every param, the default found for
     * vs_default (70 / 61.25); without the upgrader, as recorded (no default among them). */
    amk_registry *reg = NULL;
    ck_assert_msg(amk_registry_create(&reg, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_registry_add_dir(reg, EVALFIX, &d) == AMK_OK, "%s", d.msg);
    amk_row_upgrader up = amk_registry_upgrader(reg);
    const char *paths[] = {path};
    for (int k = 0; k < 2; k++) {
        amk_report *rep = NULL;
        ck_assert_msg(amk_report_build(paths, 1, &amk_history_rule, k ? &up : NULL, &rep, &d) ==
                          AMK_OK, "%s", d.msg);
        amk_report_defaults(rep, reg, NULL);
        char *json = amk_report_json(rep);
        ck_assert_ptr_nonnull(json);
        ck_assert_msg(!strstr(json, k ? "0123456789abcdef" : id), "%s", json);
        ck_assert_msg(strstr(json, k ? id : "0123456789abcdef"), "%s", json);
        ck_assert_msg(strstr(json, k ? "\"speedup\":1.1428" : "\"speedup\":null"), "%s", json);
        free(json);
        amk_report_free(rep);

        amk_export_db *db = NULL;
        ck_assert_msg(amk_export_tuned(paths, 1, NULL, 0, k ? reg : NULL, &db, &d) == AMK_OK,
                      "%s", d.msg);
        json = amk_export_db_json(db);
        ck_assert_ptr_nonnull(json);
        ck_assert_msg(!strstr(json, "SMEM_KB") == !k, "%s", json);
        ck_assert_msg(!strstr(json, k ? "0123456789abcdef" : id), "%s", json);
        free(json);
        amk_export_db_free(db);
    }
    amk_registry_free(reg);
}
END_TEST

START_TEST(test_backend_sim_picks_target_device)
{
    char path[512];
    snprintf(path, sizeof path, "%s/results.tsv", g_tmpdir);
    amk_config a = cfg(256, 1, 1, 0);
    ck_assert(bound_of(&a) < 80.0);
    amk_row rows[] = {
        row_of(&a, 1, AMK_STATUS_OK, 200.0, AMK_LAT_MEASURED, "NVIDIA A100-SXM4-80GB", NULL),
        row_of(&a, 2, AMK_STATUS_OK, 80.0, AMK_LAT_MEASURED, H100_NAME, NULL),
        row_of(&a, 3, AMK_STATUS_OK, 90.5, AMK_LAT_MEASURED, H100_NAME, NULL),
    };
    amk_test_append_rows(path, rows, 3);
    char backend[600];
    snprintf(backend, sizeof backend, "sim:%s", path);
    amk_verdict v;

    /* No target named: the device with most trials (H100, median of 2). */
    amk_evaluator *ev = make(backend, NULL);
    ck_assert_str_eq(amk_evaluator_target(ev)->key, "h100");
    ck_assert_int_eq(run1(ev, &a, NAN, &v), AMK_OK);
    ck_assert_double_eq(v.latency_us, 85.25);
    amk_evaluator_free(ev);

    /* Target a100: only the A100 trial. The space must use the a100's limits. */
    amk_backend_opts o = {.target = "a100"};
    ev = make(backend, &o);
    ck_assert_str_eq(amk_evaluator_target(ev)->key, "a100");
    ck_assert_str_eq(amk_evaluator_device(ev), "NVIDIA A100-SXM4-80GB (replayed)");
    amk_space *sp = NULL;
    amk_diag d = {0};
    ck_assert_int_eq(amk_space_create(g_spec, &g_shape, &amk_evaluator_target(ev)->limits, &sp,
                                      &d), AMK_OK);
    const amk_config *cs[] = {&a};
    ck_assert_int_eq(amk_evaluator_run(ev, sp, cs, 1, NAN, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_OK);
    ck_assert_double_eq(v.latency_us, 200.0);
    ck_assert_double_eq(v.bound_us, bound_of_on(&a, amk_evaluator_target(ev)));
    amk_space_free(sp);
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_backend_sim_refuses_file_without_measurements)
{
    char path[512];
    snprintf(path, sizeof path, "%s/results.tsv", g_tmpdir);
    amk_config a = cfg(256, 1, 1, 0);
    amk_row rows[] = {
        row_of(&a, 1, AMK_STATUS_OK, 50.0, AMK_LAT_PREDICTED, "H100 SXM 80GB (model)", NULL),
        row_of(&a, 2, AMK_STATUS_SCREENED, NAN, AMK_LAT_NONE, H100_NAME, NULL),
    };
    amk_test_append_rows(path, rows, 2);
    char backend[600];
    snprintf(backend, sizeof backend, "sim:%s", path);
    amk_evaluator *ev = NULL;
    amk_diag d = {0};
    ck_assert_int_eq(amk_evaluator_create(backend, NULL, NULL, NULL, &ev, &d), AMK_ENOENT);
    ck_assert_ptr_null(ev);
    ck_assert_ptr_nonnull(strstr(d.msg, path));
}
END_TEST

/* The committed fixture sweep replays: every row's config id is the id of its params. */
static int check_fixture_row(const amk_row *r, void *ud)
{
    int *n = ud;
    amk_config c;
    amk_shape sh;
    amk_diag d = {0};
    ck_assert_str_eq(r->kernel, "evalfix");
    ck_assert_msg(amk_shape_parse(g_spec, r->shape, &sh, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_config_from_params_json(g_spec, &sh, r->params, &c, &d) == AMK_OK, "%s",
                  d.msg);
    char id[17];
    amk_config_id(&c, id);
    ck_assert_msg(strcmp(id, r->config_id) == 0, "fixture row %lld: id %s, params give %s",
                  (long long)r->trial, r->config_id, id);
    (*n)++;
    return 0;
}

START_TEST(test_backend_sim_fixture_is_consistent)
{
    int n = 0;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(SIM_FIXTURES "/evalfix.tsv", check_fixture_row, &n, NULL, &d) ==
                  AMK_OK, "%s", d.msg);
    ck_assert_int_gt(n, 10);
    amk_evaluator *ev = make("sim:" SIM_FIXTURES "/evalfix.tsv", NULL);
    amk_config c = cfg(256, 4, 1, 0);
    amk_verdict v;
    ck_assert_int_eq(run1(ev, &c, NAN, &v), AMK_OK);
    ck_assert_int_eq(v.status, AMK_STATUS_OK);
    ck_assert_int_eq(v.latency_kind, AMK_LAT_REPLAYED);
    amk_evaluator_free(ev);
}
END_TEST

/* ---------- auto ----------------------------------------------------------------------- */

static amk_evaluator *make_auto(const amk_backend_type *const *table, const amk_shape *sh)
{
    amk_evaluator *ev = NULL;
    amk_diag d = {0};
    int rc = amk__evaluator_create_from(table, "auto", NULL, g_spec, sh, &ev, &d);
    ck_assert_msg(rc == AMK_OK, "auto: %s", d.msg);
    return ev;
}

START_TEST(test_amk_evaluator_create_auto_picks_sim_with_recorded_sweep)
{
    const amk_backend_type *table[] = {&fake_gpu_absent, &amk_backend_model, &amk_backend_sim,
                                       NULL};
    setenv("AMK_DATA_DIR", SIM_FIXTURES, 1);
    amk_evaluator *ev = make_auto(table, &g_shape);
    ck_assert_str_eq(amk_evaluator_backend(ev), "sim");
    ck_assert_ptr_nonnull(strstr(amk_evaluator_device(ev), "(replayed)"));
    amk_evaluator_free(ev);

    /* The public entry point agrees: sim where no GPU answers, gpu where one does. */
    amk_diag d = {0};
    int have_gpu = amk_evaluator_create("gpu", NULL, NULL, NULL, &ev, &d) == AMK_OK;
    amk_evaluator_free(ev);
    ck_assert_int_eq(amk_evaluator_create("auto", NULL, g_spec, &g_shape, &ev, &d), AMK_OK);
    ck_assert_str_eq(amk_evaluator_backend(ev), have_gpu ? "gpu" : "sim");
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_amk_evaluator_create_auto_falls_back_to_model)
{
    const amk_backend_type *table[] = {&fake_gpu_absent, &amk_backend_model, &amk_backend_sim,
                                       NULL};
    /* No data file at all. */
    setenv("AMK_DATA_DIR", g_tmpdir, 1);
    amk_evaluator *ev = make_auto(table, &g_shape);
    ck_assert_str_eq(amk_evaluator_backend(ev), "model");
    amk_evaluator_free(ev);
    /* A data file, but no measured trial at this shape. */
    setenv("AMK_DATA_DIR", SIM_FIXTURES, 1);
    amk_shape small;
    amk_spec_shape(g_spec, 1, &small);
    ev = make_auto(table, &small);
    ck_assert_str_eq(amk_evaluator_backend(ev), "model");
    amk_evaluator_free(ev);
    /* No kernel given: nothing to look up. */
    ck_assert_int_eq(amk__evaluator_create_from(table, "auto", NULL, NULL, NULL, &ev, NULL),
                     AMK_OK);
    ck_assert_str_eq(amk_evaluator_backend(ev), "model");
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_amk_evaluator_create_auto_prefers_gpu)
{
    const amk_backend_type *table[] = {&fake_gpu_present, &amk_backend_model, &amk_backend_sim,
                                       NULL};
    setenv("AMK_DATA_DIR", SIM_FIXTURES, 1);
    amk_evaluator *ev = make_auto(table, &g_shape);
    ck_assert_str_eq(amk_evaluator_backend(ev), "gpu");
    amk_evaluator_free(ev);
    /* A build without a gpu backend skips straight to the recorded sweep. */
    const amk_backend_type *nogpu[] = {&amk_backend_model, &amk_backend_sim, NULL};
    ev = make_auto(nogpu, &g_shape);
    ck_assert_str_eq(amk_evaluator_backend(ev), "sim");
    amk_evaluator_free(ev);
}
END_TEST

START_TEST(test_amk__data_dir_env_overrides)
{
    char dir[512];
    setenv("AMK_DATA_DIR", "/some/where", 1);
    amk__data_dir(dir, sizeof dir);
    ck_assert_str_eq(dir, "/some/where");
    unsetenv("AMK_DATA_DIR");
    amk__data_dir(dir, sizeof dir);
    ck_assert_str_ne(dir, "/some/where");
    ck_assert_int_gt((int)strlen(dir), 0);
}
END_TEST

START_TEST(test_amk_devices_parse_all_list_and_errors)
{
    int idx[AMK_MAX_DEVICES], n = -1;
    amk_diag d = {0};
    ck_assert_int_eq(amk_devices_parse("all", idx, &n, &d), AMK_OK);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(amk_devices_parse("3,0,1", idx, &n, &d), AMK_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(idx[0], 3);
    ck_assert_int_eq(idx[2], 1);
    ck_assert_int_eq(amk_devices_parse("0,,1", idx, &n, &d), AMK_EINVAL);
    ck_assert_str_eq(d.msg, "'0,,1' is not a list of device indices (e.g. 0,1,3) or all");
    ck_assert_int_eq(amk_devices_parse("0,x", idx, &n, &d), AMK_EINVAL);
    ck_assert_str_eq(d.msg, "'x' in '0,x' is not a device index (0..1023)");
    ck_assert_int_eq(amk_devices_parse("1024", idx, &n, &d), AMK_EINVAL);
    ck_assert_int_eq(amk_devices_parse("2,1,2", idx, &n, &d), AMK_EINVAL);
    ck_assert_str_eq(d.msg, "device 2 is listed twice in '2,1,2'");
    char many[512] = "0";
    for (int i = 1; i <= AMK_MAX_DEVICES; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), ",%d", i);
    ck_assert_int_eq(amk_devices_parse(many, idx, &n, &d), AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "more than 64 devices"));
}
END_TEST

/* ---------- suite ---------------------------------------------------------------------- */

static Suite *evaluator_suite(void)
{
    Suite *s = suite_create("evaluator");
    TCase *tc;

    tc = tcase_create("amk_verdict_init");
    tcase_add_test(tc, test_amk_verdict_init_nothing_known);
    suite_add_tcase(s, tc);

    tc = tcase_create("amk_verdict_to_json");
    tcase_add_test(tc, test_amk_verdict_to_json_exact_keys);
    tcase_add_test(tc, test_amk_verdict_to_json_values);
    tcase_add_test(tc, test_amk_verdict_to_json_matches_schema);
    suite_add_tcase(s, tc);

    tc = tcase_create("amk_devices_parse");
    tcase_add_test(tc, test_amk_devices_parse_all_list_and_errors);
    suite_add_tcase(s, tc);

    tc = tcase_create("amk_backend_find");
    tcase_add_test(tc, test_amk_backend_find_builtins);
    suite_add_tcase(s, tc);

    tc = tcase_create("amk_evaluator_create");
    tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
    tcase_add_test(tc, test_amk_evaluator_create_errors_name_the_culprit);
    tcase_add_test(tc, test_amk_evaluator_create_model_target);
    tcase_add_test(tc, test_amk_evaluator_create_auto_picks_sim_with_recorded_sweep);
    tcase_add_test(tc, test_amk_evaluator_create_auto_falls_back_to_model);
    tcase_add_test(tc, test_amk_evaluator_create_auto_prefers_gpu);
    tcase_add_test(tc, test_amk__data_dir_env_overrides);
    suite_add_tcase(s, tc);

    tc = tcase_create("amk_evaluator_run");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_amk_evaluator_run_rejected_reason_names_restriction);
    tcase_add_test(tc, test_amk_evaluator_run_infeasible_is_rejected);
    tcase_add_test(tc, test_amk_evaluator_run_rejects_config_of_other_shape);
    tcase_add_test(tc, test_amk_evaluator_run_screens_only_when_floor_exceeds_incumbent);
    tcase_add_test(tc, test_amk_evaluator_run_one_backend_batch);
    tcase_add_test(tc, test_amk_evaluator_run_tells_backend_the_incumbent);
    tcase_add_test(tc, test_amk_evaluator_run_floor_guard_withholds_too_fast);
    tcase_add_test(tc, test_amk_evaluator_run_ok_without_latency_is_not_ok);
    tcase_add_test(tc, test_amk_evaluator_run_backend_failure_is_an_error);
    suite_add_tcase(s, tc);
    tc = tcase_create("amk_evaluator_run_external");
    tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
    tcase_add_test(tc, test_amk_evaluator_run_external_check_judges_before_the_verdict);
    suite_add_tcase(s, tc);

    tc = tcase_create("backend_model");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_backend_model_never_measured);
    tcase_add_test(tc, test_backend_model_builtin_kernels);
    suite_add_tcase(s, tc);

    tc = tcase_create("backend_sim");
    tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
    tcase_add_test(tc, test_backend_sim_replays_exactly);
    tcase_add_test(tc, test_backend_sim_replays_recorded_cost_s);
    tcase_add_test(tc, test_backend_sim_row_recorded_before_a_param);
    tcase_add_test(tc, test_backend_sim_picks_target_device);
    tcase_add_test(tc, test_backend_sim_refuses_file_without_measurements);
    tcase_add_test(tc, test_backend_sim_fixture_is_consistent);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* Keep the logs of the fallbacks the tests provoke out of the way. */
    setenv("AMK_LOG", "error", 0);
    return amk_test_run(evaluator_suite());
}

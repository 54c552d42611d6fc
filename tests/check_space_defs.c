/* Check suite for space_defs: spec loading and validation (one test per kind of broken
 * spec), shapes, configs (strict parsing, canonical form, pinned config_id, defines),
 * evaluation, the space (enumeration vs brute force, sampling uniformity, neighbours,
 * from_unit) and the registry. Fixtures: tests/fixtures/specs/{good,bad}. */
#include "amk_space_defs.h"
#include "amk_test.h"
#include "space_defs_int.h"

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

#define GOOD AMK_TEST_FIXTURES "/specs/good"
#define BAD AMK_TEST_FIXTURES "/specs/bad"

static amk_spec *load(const char *dir)
{
    amk_spec *s = NULL;
    amk_diag d = {0};
    int rc = amk_spec_load(dir, &s, &d);
    ck_assert_msg(rc == AMK_OK, "loading %s: %s", dir, d.msg);
    return s;
}

static amk_registry *good_registry(void)
{
    setenv("AMK_KERNELS_DIR", GOOD, 1);
    amk_registry *r = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_registry_create(&r, &d) == AMK_OK, "%s", d.msg);
    return r;
}

static void assert_has(const char *msg, const char *needle)
{
    ck_assert_msg(strstr(msg, needle), "message '%s' lacks '%s'", msg, needle);
}

/* ---- broken specs made by mutating the tgemm fixture in a temporary folder ---- */

static char tmpdir[256];

static void copy_file(const char *from, const char *to)
{
    char *data = NULL;
    size_t len = 0;
    ck_assert_int_eq(amk_fs_read_all(from, &data, &len, NULL), AMK_OK);
    FILE *f = fopen(to, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(data, 1, len, f);
    fclose(f);
    free(data);
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* Makes a fresh kernel folder holding the tgemm sources and `spec` as spec.json. */
static const char *make_dir(const cJSON *spec)
{
    amk_test_tmpdir_make(tmpdir, sizeof tmpdir, "space-defs");
    char to[512];
    snprintf(to, sizeof to, "%s/tgemm.hip", tmpdir);
    copy_file(GOOD "/tgemm/tgemm.hip", to);
    snprintf(to, sizeof to, "%s/reference.hip", tmpdir);
    copy_file(GOOD "/tgemm/reference.hip", to);
    char *text = cJSON_Print(spec);
    write_text(tmpdir, "spec.json", text);
    free(text);
    return tmpdir;
}

static cJSON *base_spec(void)
{
    char *text = NULL;
    ck_assert_int_eq(amk_fs_read_all(GOOD "/tgemm/spec.json", &text, NULL, NULL), AMK_OK);
    cJSON *j = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(j);
    return j;
}

static cJSON *at(cJSON *j, const char *path) /* "params.BM" */
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *tok = strtok(buf, "."); tok; tok = strtok(NULL, "."))
        j = cJSON_GetObjectItemCaseSensitive(j, tok);
    ck_assert_msg(j != NULL, "fixture path %s", path);
    return j;
}

static void set(cJSON *j, const char *path, const char *key, const char *json_value)
{
    cJSON *obj = path ? at(j, path) : j;
    cJSON *v = cJSON_Parse(json_value);
    ck_assert_ptr_nonnull(v);
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v);
    else
        cJSON_AddItemToObject(obj, key, v);
}

/* Loads the mutated spec; asserts the code and that the message holds every needle. */
static void expect_spec_error(cJSON *spec, int code, const char *needle1, const char *needle2)
{
    const char *dir = make_dir(spec);
    cJSON_Delete(spec);
    amk_spec *s = (amk_spec *)0x1;
    amk_diag d = {0};
    int rc = amk_spec_load(dir, &s, &d);
    char path[512];
    snprintf(path, sizeof path, "%s/spec.json: ", dir);
    amk_test_tmpdir_remove(tmpdir);
    ck_assert_msg(rc == code, "expected %s, got %s: %s", amk_err_name(code), amk_err_name(rc),
                  d.msg);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(d.code, code);
    assert_has(d.msg, path);
    assert_has(d.msg, needle1);
    if (needle2)
        assert_has(d.msg, needle2);
}

/* ---- amk_spec_load ---- */

START_TEST(test_amk_spec_load_valid_fixture)
{
    amk_spec *s = load(GOOD "/tgemm");
    ck_assert_str_eq(amk_spec_name(s), "tgemm");
    ck_assert_str_eq(amk_spec_dir(s), GOOD "/tgemm");
    assert_has(amk_spec_description(s), "GEMM-like");
    ck_assert_ptr_nonnull(strstr(amk_spec_text(s), "\"launch\":"));
    amk_spec_free(s);
    amk_spec_free(NULL);
    /* a trailing slash names the same folder */
    s = load(GOOD "/tiny/");
    ck_assert_str_eq(amk_spec_dir(s), GOOD "/tiny");
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_spec_load_malformed_json)
{
    amk_spec *s = NULL;
    amk_diag d = {0};
    ck_assert_int_eq(amk_spec_load(BAD "/malformed_json", &s, &d), AMK_EPARSE);
    assert_has(d.msg, BAD "/malformed_json/spec.json:3:16: malformed JSON near");
}
END_TEST

START_TEST(test_amk_spec_load_missing_file)
{
    amk_spec *s = NULL;
    amk_diag d = {0};
    ck_assert_int_eq(amk_spec_load(AMK_TEST_FIXTURES "/nope", &s, &d), AMK_ENOENT);
    assert_has(d.msg, "nope/spec.json");
}
END_TEST

START_TEST(test_amk_spec_load_fixture_errors)
{
    static const struct {
        const char *dir;
        int code;
        const char *needle;
    } cases[] = {
        {"unknown_field", AMK_ESPEC, "spec.json: unknown field 'paramz'"},
        {"bad_value", AMK_ESPEC, "spec.json: params.BM.values[2]: not an integer"},
        {"cycle", AMK_ECYCLE, "a -> b -> c -> a"},
        {"divzero_default", AMK_ESPEC,
         "derived.waste: division by zero at column 3 in 'M / (BM - 128)'"},
        {"unknown_name", AMK_ESPEC, "restrictions[4]: unknown name 'max_threadz' at column 12"},
        {"missing_source", AMK_ESPEC, "source: file 'nope.hip' not found"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/%s", BAD, cases[i].dir);
        amk_spec *s = NULL;
        amk_diag d = {0};
        int rc = amk_spec_load(dir, &s, &d);
        ck_assert_msg(rc == cases[i].code, "%s: got %s: %s", cases[i].dir, amk_err_name(rc),
                      d.msg);
        assert_has(d.msg, dir);
        assert_has(d.msg, cases[i].needle);
    }
}
END_TEST

START_TEST(test_amk_spec_load_bad_param_values)
{
    cJSON *j = base_spec();
    set(j, "params.BM", "values", "[16, \"32\", 64]");
    expect_spec_error(j, AMK_ESPEC, "params.BM.values[1]: not an integer", NULL);
    j = base_spec();
    set(j, "params.BM", "values", "[16, 3000000000]");
    expect_spec_error(j, AMK_ESPEC, "params.BM.values[1]", "int32");
    j = base_spec();
    set(j, "params.BM", "values", "[16, 32, 16]");
    expect_spec_error(j, AMK_ESPEC, "params.BM.values[2]: duplicate value 16", NULL);
    j = base_spec();
    set(j, "params.BM", "values", "[]");
    expect_spec_error(j, AMK_ESPEC, "params.BM.values: expected 1 to 64 values", NULL);
    j = base_spec();
    set(j, "params.BM", "default", "48");
    expect_spec_error(j, AMK_ESPEC, "params.BM.default: default is not one of the values", NULL);
    j = base_spec();
    set(j, "params.BM", "step", "2");
    expect_spec_error(j, AMK_ESPEC, "params.BM: unknown field 'step'", NULL);
    j = base_spec();
    set(j, "params", "LAYOUT", "{\"values\": [\"row\", 1], \"default\": \"row\"}");
    expect_spec_error(j, AMK_ESPEC, "params.LAYOUT.values[1]: not a string", NULL);
    j = base_spec();
    set(j, "params", "LAYOUT", "{\"values\": [\"row\", \"row\"], \"default\": \"row\"}");
    expect_spec_error(j, AMK_ESPEC, "params.LAYOUT.values[1]: duplicate value 'row'", NULL);
    j = base_spec();
    set(j, "params", "LAYOUT", "{\"values\": [\"a b\"], \"default\": \"a b\"}");
    expect_spec_error(j, AMK_ESPEC, "params.LAYOUT.values[0]: enum label 'a b'", NULL);
    j = base_spec();
    set(j, "params.BM", "values", "[16, 32.5]");
    expect_spec_error(j, AMK_ESPEC, "params.BM.values[1]: not an integer", NULL);
}
END_TEST

START_TEST(test_amk_spec_load_bad_names)
{
    cJSON *j = base_spec();
    set(j, "params", "bad-name", "{\"values\": [1], \"default\": 1}");
    expect_spec_error(j, AMK_ESPEC, "params.bad-name: 'bad-name' is not an identifier", NULL);
    j = base_spec();
    set(j, NULL, "dims", "[\"M\", \"N\", \"elt\"]");
    expect_spec_error(j, AMK_ESPEC, "dims[2]: 'elt' is a reserved name", NULL);
    j = base_spec();
    set(j, NULL, "dims", "[\"M\", \"N\", \"M\"]");
    expect_spec_error(j, AMK_ESPEC, "dims[2]: 'M' is already declared as a dim", NULL);
    j = base_spec();
    set(j, "derived", "BM", "\"1\"");
    expect_spec_error(j, AMK_ESPEC, "derived.BM: 'BM' is already declared as a param", NULL);
    j = base_spec();
    set(j, "params", "max_threads", "{\"values\": [1], \"default\": 1}");
    expect_spec_error(j, AMK_ESPEC, "'max_threads' is the name of a device limit", NULL);
    j = base_spec();
    set(j, "params", "AMK_ELT", "{\"values\": [1], \"default\": 1}");
    expect_spec_error(j, AMK_ESPEC, "names starting with AMK_ are reserved", NULL);
    j = base_spec();
    set(j, NULL, "name", "\"Gemm\"");
    expect_spec_error(j, AMK_ESPEC, "name: 'Gemm' is not a kernel name", NULL);
    j = base_spec();
    set(j, NULL, "entry", "\"my kernel\"");
    expect_spec_error(j, AMK_ESPEC, "entry: 'my kernel' is not an identifier", NULL);
}
END_TEST

START_TEST(test_amk_spec_load_bad_top_level)
{
    cJSON *j = base_spec();
    cJSON_DeleteItemFromObjectCaseSensitive(j, "entry");
    expect_spec_error(j, AMK_ESPEC, "missing required field 'entry'", NULL);
    j = base_spec();
    set(j, NULL, "amk_spec", "2");
    expect_spec_error(j, AMK_ESPEC, "amk_spec: unsupported format version", NULL);
    j = base_spec();
    set(j, NULL, "dtypes", "[\"f32\", \"f33\"]");
    expect_spec_error(j, AMK_ESPEC, "dtypes[1]: unknown dtype 'f33'", NULL);
    j = base_spec();
    set(j, NULL, "dims", "\"M\"");
    expect_spec_error(j, AMK_ESPEC, "dims: expected an array of names, got a string", NULL);
    j = base_spec();
    set(j, NULL, "restrictions", "[\"BM >\"]");
    expect_spec_error(j, AMK_ESPEC, "restrictions[0]: expected a value at column 5 in 'BM >'",
                      NULL);
    j = base_spec();
    set(j, NULL, "restrictions", "[true]");
    expect_spec_error(j, AMK_ESPEC, "restrictions[0]: expected an expression", NULL);
}
END_TEST

START_TEST(test_amk_spec_load_bad_shapes)
{
    cJSON *j = base_spec();
    cJSON_DeleteItemFromObjectCaseSensitive(at(j, "shapes"), "default");
    expect_spec_error(j, AMK_ESPEC, "shapes: missing required shape 'default'", NULL);
    j = base_spec();
    cJSON_DeleteItemFromObjectCaseSensitive(at(j, "shapes.default"), "K");
    expect_spec_error(j, AMK_ESPEC, "shapes.default: the default shape must give dim 'K'", NULL);
    j = base_spec();
    cJSON_DeleteItemFromObjectCaseSensitive(at(j, "shapes.default"), "dtype");
    expect_spec_error(j, AMK_ESPEC, "must give 'dtype'", NULL);
    j = base_spec();
    set(j, "shapes.small", "Q", "5");
    expect_spec_error(j, AMK_ESPEC, "shapes.small: unknown dim 'Q'", NULL);
    j = base_spec();
    set(j, "shapes.small", "M", "0");
    expect_spec_error(j, AMK_ESPEC, "shapes.small.M: expected an integer in 1..2^53", NULL);
    j = base_spec();
    set(j, "shapes.small", "dtype", "\"bf16\"");
    expect_spec_error(j, AMK_ESPEC, "shapes.small.dtype: not one of the spec's dtypes", NULL);
}
END_TEST

START_TEST(test_amk_spec_load_cycle_names_path)
{
    cJSON *j = base_spec();
    set(j, "derived", "loop", "\"loop + 1\"");
    expect_spec_error(j, AMK_ECYCLE, "derived: cycle among derived values: loop -> loop", NULL);
    j = base_spec();
    set(j, "derived", "x", "\"y * 2\"");
    set(j, "derived", "y", "\"threads + x\"");
    expect_spec_error(j, AMK_ECYCLE, "x -> y -> x", NULL);
}
END_TEST

START_TEST(test_amk_spec_load_default_arithmetic_errors)
{
    cJSON *j = base_spec();
    set(j, "derived", "waste", "\"M / (BM - 128)\"");
    expect_spec_error(j, AMK_ESPEC, "derived.waste: division by zero", "default config");
    j = base_spec();
    set(j, NULL, "restrictions", "[\"M * M * M * M * M * M > 0\"]");
    expect_spec_error(j, AMK_ESPEC, "restrictions[0]: 64-bit overflow", NULL);
    j = base_spec();
    set(j, "launch", "grid", "[\"cdiv(N, BN - 128)\", \"1\", \"1\"]");
    expect_spec_error(j, AMK_ESPEC, "launch.grid[0]: cdiv by zero", NULL);
    j = base_spec();
    set(j, "cost", "regs", "\"log2(TM - 8)\"");
    expect_spec_error(j, AMK_ESPEC, "cost.regs: log2", NULL);
    /* a guarded division is fine */
    j = base_spec();
    set(j, "derived", "waste", "\"BM != 128 ? M / (BM - 128) : 0\"");
    const char *dir = make_dir(j);
    cJSON_Delete(j);
    amk_spec *s = NULL;
    amk_diag d = {0};
    int rc = amk_spec_load(dir, &s, &d);
    amk_test_tmpdir_remove(tmpdir);
    ck_assert_msg(rc == AMK_OK, "%s", d.msg);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_spec_load_bad_buffers_and_args)
{
    cJSON *j = base_spec();
    set(j, NULL, "source", "\"nope.hip\"");
    expect_spec_error(j, AMK_ESPEC, "source: file 'nope.hip' not found", NULL);
    j = base_spec();
    set(j, NULL, "source", "\"../tgemm/tgemm.hip\"");
    expect_spec_error(j, AMK_ESPEC, "must be a relative path inside the kernel folder", NULL);
    j = base_spec();
    set(j, "reference", "source", "\"missing.hip\"");
    expect_spec_error(j, AMK_ESPEC, "reference.source: file 'missing.hip' not found", NULL);
    j = base_spec();
    set(j, NULL, "args", "[\"A\", \"B\", \"C\", \"Z\"]");
    expect_spec_error(j, AMK_ESPEC, "args[3]: unknown argument 'Z'", NULL);
    j = base_spec();
    set(j, "reference", "args", "[\"A\", \"BM\"]");
    expect_spec_error(j, AMK_ESPEC, "reference.args[1]: unknown argument 'BM'", NULL);
    j = base_spec();
    set(j, NULL, "buffers", "[{\"name\": \"C\", \"dtype\": \"f64\", \"count\": \"M\", "
                            "\"role\": \"out\"}]");
    expect_spec_error(j, AMK_ESPEC, "buffers[0].dtype: unknown dtype 'f64'", NULL);
    j = base_spec();
    set(j, NULL, "buffers", "[{\"name\": \"C\", \"dtype\": \"f32\", \"count\": \"M\", "
                            "\"role\": \"sideways\"}]");
    expect_spec_error(j, AMK_ESPEC, "buffers[0].role: unknown role 'sideways'", NULL);
    j = base_spec();
    set(j, NULL, "buffers", "[{\"name\": \"C\", \"dtype\": \"f32\", \"count\": \"M\", "
                            "\"role\": \"in\"}]");
    expect_spec_error(j, AMK_ESPEC, "buffers: no output buffer", NULL);
    j = base_spec();
    set(j, NULL, "buffers", "[{\"name\": \"C\", \"dtype\": \"f32\", \"count\": \"M * Q\", "
                            "\"role\": \"out\"}]");
    expect_spec_error(j, AMK_ESPEC, "buffers[0].count: unknown name 'Q'", NULL);
    j = base_spec();
    set(j, NULL, "buffers", "[{\"name\": \"M\", \"dtype\": \"f32\", \"count\": \"M\", "
                            "\"role\": \"out\"}]");
    expect_spec_error(j, AMK_ESPEC, "buffers[0].name: 'M' is already", NULL);
    /* Zero-filled buffers are workspace only: a real input is never all zeros. */
    j = base_spec();
    set(j, NULL, "buffers", "[{\"name\": \"X\", \"dtype\": \"f32\", \"count\": \"M\", "
                            "\"role\": \"in\", \"init\": \"zero\"}, {\"name\": \"C\", "
                            "\"dtype\": \"f32\", \"count\": \"M\", \"role\": \"out\"}]");
    expect_spec_error(j, AMK_ESPEC, "buffers[0]", "init 'zero' is for inout workspace buffers only");
    /* Scratch is the kernel's own memory: no contents to give, nothing to compare, so it
     * is not an output either. */
    j = base_spec();
    set(j, NULL, "buffers", "[{\"name\": \"S\", \"dtype\": \"f32\", \"count\": \"M\", "
                            "\"role\": \"scratch\", \"init\": \"zero\"}, {\"name\": \"C\", "
                            "\"dtype\": \"f32\", \"count\": \"M\", \"role\": \"out\"}]");
    expect_spec_error(j, AMK_ESPEC, "buffers[0].init", "a scratch buffer has no initial contents");
    j = base_spec();
    set(j, NULL, "buffers", "[{\"name\": \"S\", \"dtype\": \"f32\", \"count\": \"M\", "
                            "\"role\": \"scratch\", \"tolerance_reduction\": \"1\"}, "
                            "{\"name\": \"C\", \"dtype\": \"f32\", \"count\": \"M\", "
                            "\"role\": \"out\"}]");
    expect_spec_error(j, AMK_ESPEC, "buffers[0].tolerance_reduction", "only outputs have");
    j = base_spec();
    set(j, NULL, "buffers", "[{\"name\": \"C\", \"dtype\": \"f32\", \"count\": \"M\", "
                            "\"role\": \"scratch\"}]");
    expect_spec_error(j, AMK_ESPEC, "buffers: no output buffer", NULL);
    j = base_spec();
    set(j, "launch", "block", "[\"threads\", \"1\"]");
    expect_spec_error(j, AMK_ESPEC, "launch.block: expected an array of 3 expressions", NULL);
    j = base_spec();
    set(j, "cost", "unit", "\"fp64\"");
    expect_spec_error(j, AMK_ESPEC, "cost.unit: unknown unit 'fp64'", NULL);
    j = base_spec();
    set(j, "cost", "uniform_blocks", "1");
    expect_spec_error(j, AMK_ESPEC, "cost.uniform_blocks: expected an expression (string)", NULL);
    j = base_spec();
    set(j, "tolerance", "rtol_scale", "-1");
    expect_spec_error(j, AMK_ESPEC, "tolerance.rtol_scale: expected a number > 0", NULL);
}
END_TEST

/* ---- the compiled spec: everything other modules read, resolved once ---- */

START_TEST(test_amk_spec_compiled_kernel_reference_buffers)
{
    amk_spec *s = load(GOOD "/tgemm");
    ck_assert_str_eq(amk_spec_source(s), "tgemm.hip");
    ck_assert_str_eq(amk_spec_entry(s), "tgemm_kernel");
    ck_assert_int_eq(amk_spec_n_args(s), 6);
    ck_assert_str_eq(amk_spec_arg(s, 0), "A");
    ck_assert_str_eq(amk_spec_arg(s, 5), "K");
    ck_assert_ptr_null(amk_spec_arg(s, 6));
    amk_spec_reference ref;
    amk_spec_get_reference(s, &ref);
    ck_assert_str_eq(ref.source, "reference.hip");
    ck_assert_str_eq(ref.entry, "tgemm_reference");
    ck_assert_str_eq(ref.host, "gemm_f32");
    ck_assert_int_eq(ref.default_config, 0);
    ck_assert_int_eq(amk_spec_n_reference_args(s), 6);
    ck_assert_str_eq(amk_spec_reference_arg(s, 3), "M");
    ck_assert_int_eq(amk_spec_n_buffers(s), 3);
    amk_spec_buffer b;
    ck_assert_int_eq(amk_spec_buffer_at(s, 1, &b), AMK_OK);
    ck_assert_str_eq(b.name, "B");
    ck_assert_str_eq(b.dtype, "input");
    ck_assert_int_eq(b.role, AMK_BUFFER_IN);
    ck_assert_str_eq(b.init, "normal");
    ck_assert_str_eq(amk_expr_source(b.count), "K * N");
    ck_assert_ptr_null(b.tolerance_reduction);
    ck_assert_int_eq(amk_spec_buffer_at(s, 2, &b), AMK_OK);
    ck_assert_str_eq(b.dtype, "f32");
    ck_assert_int_eq(b.role, AMK_BUFFER_OUT);
    ck_assert_str_eq(b.init, "uniform"); /* the default, resolved by the loader */
    ck_assert_int_eq(amk_spec_buffer_at(s, 3, &b), AMK_EINVAL);
    /* Expressions evaluate against a config without being parsed again. */
    amk_config c;
    amk_config_default(s, NULL, &c);
    int64_t v = 0;
    ck_assert_int_eq(amk_config_eval_expr(&c, NULL, b.count, &v, NULL), AMK_OK);
    ck_assert_int_eq(v, 4096LL * 4096);
    ck_assert_int_eq(amk_config_eval_expr(&c, NULL, amk_spec_cost_expr(s, "flops"), &v, NULL),
                     AMK_OK);
    ck_assert_int_eq(v, 2LL * 4096 * 4096 * 4096);
    ck_assert_ptr_null(amk_spec_cost_expr(s, "uniform_blocks"));
    ck_assert_ptr_null(amk_spec_cost_expr(s, "inflight_bytes"));
    ck_assert_ptr_null(amk_spec_cost_expr(s, "nope"));
    ck_assert_int_eq(amk_config_eval_expr(&c, NULL, NULL, &v, NULL), AMK_EINVAL);
    amk_launch l;
    ck_assert_int_eq(amk_config_reference_launch(&c, NULL, &l, NULL), AMK_OK);
    ck_assert_int_eq(l.grid[0], 256);
    ck_assert_int_eq(l.block[1], 16);
    ck_assert_int_eq(l.cluster[2], 1);
    ck_assert_int_eq(l.shared_bytes, 0);
    /* Docs, derived values and restrictions as declared. */
    ck_assert_str_eq(amk_spec_param_doc(s, 0), "block tile rows");
    ck_assert_ptr_null(amk_spec_param_doc(s, 1));
    amk_spec_named_expr e;
    ck_assert_int_eq(amk_spec_n_derived(s), 2);
    ck_assert_int_eq(amk_spec_derived(s, 1, &e), AMK_OK);
    ck_assert_str_eq(e.name, "threads");
    ck_assert_str_eq(amk_expr_source(e.expr), "(BM / TM) * (BN / TN)");
    ck_assert_int_eq(e.written_as_number, 0);
    ck_assert_int_eq(amk_spec_n_restrictions(s), 4);
    ck_assert_int_eq(amk_spec_restriction(s, 0, &e), AMK_OK);
    ck_assert_str_eq(amk_expr_source(e.expr), "BM % TM == 0");
    ck_assert_int_eq(amk_spec_restriction(s, 4, &e), AMK_EINVAL);
    ck_assert_str_eq(amk_memory_term_name(AMK_MEM_SEGMENT_BYTES), "segment_bytes");
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_spec_tolerance_defaults_resolved_once)
{
    /* Not given: rtol_scale 1, atol NAN (the check derives it from max|ref|; SPEC.md). */
    cJSON *j = base_spec();
    cJSON_DeleteItemFromObjectCaseSensitive(at(j, "tolerance"), "rtol_scale");
    const char *dir = make_dir(j);
    cJSON_Delete(j);
    amk_spec *s = load(dir);
    amk_test_tmpdir_remove(tmpdir);
    amk_spec_tolerance tol;
    amk_spec_get_tolerance(s, &tol);
    ck_assert(isnan(tol.atol));
    ck_assert(tol.rtol_scale == 1.0);
    ck_assert_str_eq(amk_expr_source(tol.reduction), "K");
    amk_spec_free(s);
    /* Given: kept as written; memory terms, default_config and integer literals too. */
    j = base_spec();
    set(j, "tolerance", "atol", "0");
    set(j, "tolerance", "rtol_scale", "2.5");
    set(j, "cost", "inflight_bytes", "\"BK * elt\"");
    set(j, "cost", "sync_steps", "3");
    set(j, "reference", "default_config", "true");
    set(j, "derived", "seven", "7");
    dir = make_dir(j);
    cJSON_Delete(j);
    s = load(dir);
    amk_test_tmpdir_remove(tmpdir);
    amk_spec_get_tolerance(s, &tol);
    ck_assert(tol.atol == 0.0);
    ck_assert(tol.rtol_scale == 2.5);
    amk_config c;
    amk_config_default(s, NULL, &c);
    int64_t v = 0;
    ck_assert_int_eq(amk_config_eval_expr(&c, NULL, amk_spec_cost_expr(s, "inflight_bytes"), &v,
                                          NULL), AMK_OK);
    ck_assert_int_eq(v, 8 * 4);
    ck_assert_int_eq(amk_config_eval_expr(&c, NULL, amk_spec_cost_expr(s, "sync_steps"), &v,
                                          NULL), AMK_OK);
    ck_assert_int_eq(v, 3);
    amk_spec_reference ref;
    amk_spec_get_reference(s, &ref);
    ck_assert_int_eq(ref.default_config, 1);
    amk_spec_named_expr e;
    ck_assert_int_eq(amk_spec_derived(s, 2, &e), AMK_OK);
    ck_assert_str_eq(e.name, "seven");
    ck_assert_int_eq(e.written_as_number, 1);
    ck_assert_ptr_nonnull(strstr(amk_spec_text(s), "\"atol\":0"));
    amk_spec_free(s);
}
END_TEST

/* ---- reference.vary: params the reference takes from the checked config ---- */

/* tgemm with a default_config reference that varies `vary` (JSON text). */
static amk_spec *load_with_vary(const char *vary)
{
    cJSON *j = base_spec();
    set(j, "reference", "default_config", "true");
    set(j, "reference", "vary", vary);
    const char *dir = make_dir(j);
    cJSON_Delete(j);
    amk_spec *s = load(dir);
    amk_test_tmpdir_remove(tmpdir);
    return s;
}

START_TEST(test_amk_spec_load_reference_vary)
{
    amk_spec *s = load_with_vary("[\"TM\", \"BM\"]");
    ck_assert_int_eq(amk_spec_n_reference_vary(s), 2);
    ck_assert_int_eq(amk_spec_reference_vary(s, 0), amk_spec_param_index(s, "TM"));
    ck_assert_int_eq(amk_spec_reference_vary(s, 1), amk_spec_param_index(s, "BM"));
    ck_assert_int_eq(amk_spec_reference_vary(s, 2), -1);
    ck_assert_int_eq(amk_spec_reference_vary(s, -1), -1);
    amk_spec_free(s);
    s = load(GOOD "/tgemm"); /* absent: none */
    ck_assert_int_eq(amk_spec_n_reference_vary(s), 0);
    amk_spec_free(s);

    cJSON *j = base_spec();
    set(j, "reference", "vary", "[\"BM\"]"); /* an independent reference */
    expect_spec_error(j, AMK_ESPEC, "reference.vary: needs \"default_config\": true", NULL);
    j = base_spec();
    set(j, "reference", "default_config", "true");
    set(j, "reference", "vary", "[\"BM\", \"XX\"]");
    expect_spec_error(j, AMK_ESPEC, "reference.vary: [1]: 'XX' is not a param", NULL);
    j = base_spec();
    set(j, "reference", "default_config", "true");
    set(j, "reference", "vary", "[\"BM\", 3]");
    expect_spec_error(j, AMK_ESPEC, "reference.vary: [1]: a number is not a param", NULL);
    j = base_spec();
    set(j, "reference", "default_config", "true");
    set(j, "reference", "vary", "[\"BM\", \"BM\"]");
    expect_spec_error(j, AMK_ESPEC, "reference.vary: [1]: 'BM' is named twice", NULL);
    j = base_spec();
    set(j, "reference", "default_config", "true");
    set(j, "reference", "vary", "\"BM\"");
    expect_spec_error(j, AMK_ESPEC, "reference.vary: expected a list of param names", NULL);
}
END_TEST

/* The reference config: the default with the checked config's "vary" params, which must be
 * valid; an independent reference runs at the config itself, a default_config one without
 * "vary" at the default. */
START_TEST(test_amk_config_reference_config_default_with_vary_params)
{
    amk_spec *s = load_with_vary("[\"BM\", \"TM\"]");
    int bm = amk_spec_param_index(s, "BM"), bn = amk_spec_param_index(s, "BN");
    int tm = amk_spec_param_index(s, "TM");
    amk_config c, r;
    amk_config_default(s, NULL, &c);
    c.choice[bm] = 0; /* BM 16 */
    c.choice[bn] = 2; /* BN 64: not varied */
    c.choice[tm] = 2; /* TM 4 */
    amk_diag d = {0};
    ck_assert_msg(amk_config_reference_config(&c, NULL, &r, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_config_param(&r, bm), 16);
    ck_assert_int_eq(amk_config_param(&r, tm), 4);
    ck_assert_int_eq(amk_config_param(&r, bn), 128); /* the default's */
    ck_assert_int_eq(amk_config_param(&r, amk_spec_param_index(s, "TN")), 8);
    ck_assert(!amk_config_equal(&r, &c));
    /* BM 128, TM 1 at the default BN 128, TN 8: 2048 threads, not a valid config. */
    c.choice[bm] = 3;
    c.choice[tm] = 0;
    amk_config_default(s, NULL, &r);
    amk_config before = r;
    ck_assert_int_eq(amk_config_reference_config(&c, NULL, &r, &d), AMK_ERESTRICT);
    ck_assert_msg(strstr(d.msg, "the reference config (the default with BM=128, TM=1) is not "
                         "valid: restriction 'threads >= warp") != NULL, "%s", d.msg);
    ck_assert(amk_config_equal(&r, &before)); /* untouched */
    amk_spec_free(s);

    s = load_with_vary("[]"); /* default_config, nothing varied: the default */
    amk_config_default(s, NULL, &c);
    c.choice[0] = 0;
    ck_assert_int_eq(amk_config_reference_config(&c, NULL, &r, &d), AMK_OK);
    amk_config_default(s, NULL, &before);
    ck_assert(amk_config_equal(&r, &before));
    amk_spec_free(s);

    s = load(GOOD "/tgemm"); /* independent: the config itself */
    amk_config_default(s, NULL, &c);
    c.choice[0] = 1;
    ck_assert_int_eq(amk_config_reference_config(&c, NULL, &r, &d), AMK_OK);
    ck_assert(amk_config_equal(&r, &c));
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_config_same_reference_vary_and_dtype)
{
    amk_spec *s = load_with_vary("[\"BM\"]");
    int bm = amk_spec_param_index(s, "BM"), bn = amk_spec_param_index(s, "BN");
    amk_config a, b;
    amk_config_default(s, NULL, &a);
    b = a;
    b.choice[bn] = 0;
    b.shape.dims[0] = 512; /* another shape of the same dtype */
    ck_assert_int_eq(amk_config_same_reference(&a, &b), 1);
    b.choice[bm] = 0;
    ck_assert_int_eq(amk_config_same_reference(&a, &b), 0);
    b = a;
    b.shape.dtype = 1;
    ck_assert_int_eq(amk_config_same_reference(&a, &b), 0);
    amk_spec_free(s);
    s = load(GOOD "/tgemm"); /* nothing varied: every config of a dtype shares it */
    amk_config_default(s, NULL, &a);
    b = a;
    b.choice[0] = 0;
    ck_assert_int_eq(amk_config_same_reference(&a, &b), 1);
    amk_spec_free(s);
}
END_TEST

/* ---- spec accessors ---- */

START_TEST(test_amk_spec_param_accessors)
{
    amk_spec *s = load(GOOD "/tgemm");
    ck_assert_int_eq(amk_spec_n_params(s), 6);
    ck_assert_str_eq(amk_spec_param_name(s, 0), "BM");
    ck_assert_str_eq(amk_spec_param_name(s, 5), "STAGES");
    ck_assert_ptr_null(amk_spec_param_name(s, 6));
    ck_assert_int_eq(amk_spec_param_index(s, "TM"), 3);
    ck_assert_int_eq(amk_spec_param_index(s, "XX"), -1);
    ck_assert_int_eq(amk_spec_param_n_choices(s, 0), 5);
    ck_assert_double_eq(amk_spec_raw_size(s), 5 * 5 * 3 * 4 * 4 * 3);
    ck_assert_int_eq(amk_spec_param_value(s, 0, 3), 128);
    ck_assert_int_eq(amk_spec_param_default(s, 0), 3);
    ck_assert_ptr_null(amk_spec_param_label(s, 0, 0));
    amk_spec_free(s);
    s = load(GOOD "/tiny");
    int m = amk_spec_param_index(s, "MODE");
    ck_assert_int_eq(m, 2);
    ck_assert_str_eq(amk_spec_param_label(s, m, 2), "z");
    ck_assert_int_eq(amk_spec_param_value(s, m, 2), 2); /* enum: the choice index */
    ck_assert_int_eq(amk_spec_param_default(s, m), 1);
    amk_spec_free(s);
}
END_TEST

/* "requires": an object of vendor -> arch, each value a well-formed arch of that vendor. */
START_TEST(test_amk_spec_load_bad_requires)
{
    cJSON *j = base_spec();
    set(j, NULL, "requires", "\"sm_90a\"");
    expect_spec_error(j, AMK_ESPEC, "requires: expected an object", "got a string");
    j = base_spec();
    set(j, NULL, "requires", "{}");
    expect_spec_error(j, AMK_ESPEC, "requires: expected an object", "an empty object");
    j = base_spec();
    set(j, NULL, "requires", "{\"intel\": \"xe\"}");
    expect_spec_error(j, AMK_ESPEC, "requires: unknown field 'intel'", "nvidia, amd");
    j = base_spec();
    set(j, NULL, "requires", "{\"nvidia\": \"gfx942\"}");
    expect_spec_error(j, AMK_ESPEC, "requires.nvidia: 'gfx942' is not an NVIDIA arch", NULL);
    j = base_spec();
    set(j, NULL, "requires", "{\"nvidia\": \"sm_90a -DEVIL\"}");
    expect_spec_error(j, AMK_ESPEC, "requires.nvidia: 'sm_90a -DEVIL'", NULL);
    j = base_spec();
    set(j, NULL, "requires", "{\"nvidia\": \"sm_9\"}");
    expect_spec_error(j, AMK_ESPEC, "requires.nvidia: 'sm_9'", NULL);
    j = base_spec();
    set(j, NULL, "requires", "{\"amd\": \"sm_90a\"}");
    expect_spec_error(j, AMK_ESPEC, "requires.amd: 'sm_90a' is not an AMD arch", NULL);
    j = base_spec();
    set(j, NULL, "requires", "{\"nvidia\": 90}");
    expect_spec_error(j, AMK_ESPEC, "requires: nvidia: expected a string, got a number", NULL);
}
END_TEST

/* Loads tgemm with "requires" set to `req` (JSON text). */
static amk_spec *load_with_requires(const char *req)
{
    cJSON *j = base_spec();
    set(j, NULL, "requires", req);
    const char *dir = make_dir(j);
    cJSON_Delete(j);
    amk_spec *s = load(dir);
    amk_test_tmpdir_remove(tmpdir);
    return s;
}

START_TEST(test_amk_spec_compile_arch_requirement)
{
    char arch[16];
    amk_diag d = {0};
    /* No requirement: any vendor and arch, unchanged. */
    amk_spec *s = load(GOOD "/tgemm");
    ck_assert_int_eq(amk_spec_compile_arch(s, "nvidia", "sm_80", arch, sizeof arch, &d), AMK_OK);
    ck_assert_str_eq(arch, "sm_80");
    ck_assert_int_eq(amk_spec_compile_arch(s, "amd", "gfx942", arch, sizeof arch, &d), AMK_OK);
    ck_assert_str_eq(arch, "gfx942");
    amk_spec_free(s);

    /* sm_90a: an sm_90 device compiles sm_90a; sm_90a itself too; nothing else. */
    s = load_with_requires("{\"nvidia\": \"sm_90a\"}");
    ck_assert_int_eq(amk_spec_compile_arch(s, "nvidia", "sm_90", arch, sizeof arch, &d), AMK_OK);
    ck_assert_str_eq(arch, "sm_90a");
    ck_assert_int_eq(amk_spec_compile_arch(s, "nvidia", "sm_90a", arch, sizeof arch, &d),
                     AMK_OK);
    ck_assert_str_eq(arch, "sm_90a");
    strcpy(arch, "untouched");
    ck_assert_int_eq(amk_spec_compile_arch(s, "nvidia", "sm_80", arch, sizeof arch, &d),
                     AMK_EUNSUPPORTED);
    assert_has(d.msg, "tgemm requires nvidia sm_90a");
    assert_has(d.msg, "'requires'");
    assert_has(d.msg, "sm_80");
    ck_assert_int_eq(amk_spec_compile_arch(s, "nvidia", "sm_100", arch, sizeof arch, &d),
                     AMK_EUNSUPPORTED);
    ck_assert_int_eq(amk_spec_compile_arch(s, "nvidia", "sm_9", arch, sizeof arch, &d),
                     AMK_EUNSUPPORTED);
    ck_assert_int_eq(amk_spec_compile_arch(s, "amd", "gfx942", arch, sizeof arch, &d),
                     AMK_EUNSUPPORTED);
    assert_has(d.msg, "requires nvidia sm_90a");
    assert_has(d.msg, "amd gfx942");
    ck_assert_int_eq(amk_spec_compile_arch(s, "nvidia", "sm_90", arch, 4, &d), AMK_EINVAL);
    amk_spec_free(s);

    /* Both vendors listed; AMD matches exactly (gfx90a is not the base of anything). */
    s = load_with_requires("{\"nvidia\": \"sm_80\", \"amd\": \"gfx90a\"}");
    ck_assert_int_eq(amk_spec_compile_arch(s, "amd", "gfx90a", arch, sizeof arch, &d), AMK_OK);
    ck_assert_str_eq(arch, "gfx90a");
    ck_assert_int_eq(amk_spec_compile_arch(s, "amd", "gfx90", arch, sizeof arch, &d),
                     AMK_EUNSUPPORTED);
    assert_has(d.msg, "nvidia sm_80 or amd gfx90a");
    ck_assert_int_eq(amk_spec_compile_arch(s, "nvidia", "sm_80", arch, sizeof arch, &d), AMK_OK);
    ck_assert_str_eq(arch, "sm_80");
    ck_assert_int_eq(amk_spec_compile_arch(s, "nvidia", "sm_90", arch, sizeof arch, &d),
                     AMK_EUNSUPPORTED);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_spec_dims_and_dtypes)
{
    amk_spec *s = load(GOOD "/tgemm");
    ck_assert_int_eq(amk_spec_n_dims(s), 3);
    ck_assert_str_eq(amk_spec_dim_name(s, 2), "K");
    ck_assert_ptr_null(amk_spec_dim_name(s, 3));
    ck_assert_int_eq(amk_spec_n_dtypes(s), 2);
    ck_assert_str_eq(amk_spec_dtype_name(s, 1), "f16");
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_dtype_size_known_and_unknown)
{
    ck_assert_int_eq(amk_dtype_size("f32"), 4);
    ck_assert_int_eq(amk_dtype_size("bf16"), 2);
    ck_assert_int_eq(amk_dtype_size("fp8e4m3"), 1);
    ck_assert_int_eq(amk_dtype_size("f64"), 0);
    ck_assert_int_eq(amk_dtype_size(NULL), 0);
}
END_TEST

/* ---- shapes ---- */

START_TEST(test_amk_spec_shape_named_inherit_default)
{
    amk_spec *s = load(GOOD "/tgemm");
    ck_assert_int_eq(amk_spec_n_shapes(s), 3);
    ck_assert_str_eq(amk_spec_shape_name(s, 0), "default");
    amk_shape sh;
    int small = -1, half = -1;
    for (int i = 0; i < 3; i++) {
        if (!strcmp(amk_spec_shape_name(s, i), "small")) small = i;
        if (!strcmp(amk_spec_shape_name(s, i), "half")) half = i;
    }
    ck_assert_int_ge(small, 1);
    amk_spec_shape(s, small, &sh);
    ck_assert_int_eq(sh.dims[0], 257);
    ck_assert_int_eq(sh.dims[2], 129);
    ck_assert_int_eq(sh.dtype, 0);
    amk_spec_shape(s, half, &sh);
    ck_assert_int_eq(sh.dims[0], 4096);
    ck_assert_int_eq(sh.dtype, 1);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_shape_parse_text_and_names)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_shape sh;
    amk_diag d = {0};
    ck_assert_int_eq(amk_shape_parse(s, "M=128, K=64,dtype=f16", &sh, &d), AMK_OK);
    ck_assert_int_eq(sh.dims[0], 128);
    ck_assert_int_eq(sh.dims[1], 4096);
    ck_assert_int_eq(sh.dims[2], 64);
    ck_assert_int_eq(sh.dtype, 1);
    ck_assert_int_eq(amk_shape_parse(s, "small", &sh, &d), AMK_OK);
    ck_assert_int_eq(sh.dims[1], 511);
    ck_assert_int_eq(amk_shape_parse(s, "Q=5", &sh, &d), AMK_EPARSE);
    assert_has(d.msg, "unknown dim 'Q'");
    ck_assert_int_eq(amk_shape_parse(s, "M=0", &sh, &d), AMK_EPARSE);
    assert_has(d.msg, "M=0 is not an integer in 1..2^53");
    ck_assert_int_eq(amk_shape_parse(s, "M=12x", &sh, &d), AMK_EPARSE);
    ck_assert_int_eq(amk_shape_parse(s, "dtype=int8", &sh, &d), AMK_EPARSE);
    assert_has(d.msg, "dtype 'int8' is not supported");
    ck_assert_int_eq(amk_shape_parse(s, "prefill", &sh, &d), AMK_ENOENT);
    assert_has(d.msg, "no shape named 'prefill'");
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_shape_format_canonical_text)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_shape sh;
    ck_assert_int_eq(amk_shape_parse(s, "K=7,dtype=f16", &sh, NULL), AMK_OK);
    char buf[128];
    amk_shape_format(s, &sh, buf, sizeof buf);
    ck_assert_str_eq(buf, "M=4096,N=4096,K=7,dtype=f16");
    amk_shape back;
    ck_assert_int_eq(amk_shape_parse(s, buf, &back, NULL), AMK_OK);
    ck_assert_mem_eq(&back, &sh, sizeof sh);
    amk_shape_format(s, &sh, buf, 8); /* truncates, stays terminated */
    ck_assert_int_eq(strlen(buf), 7);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_shape_from_json_defaults_and_errors)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_shape sh;
    amk_diag d = {0};
    cJSON *j = cJSON_Parse("{\"N\": 100}");
    ck_assert_int_eq(amk_shape_from_json(s, j, &sh, &d), AMK_OK);
    ck_assert_int_eq(sh.dims[0], 4096);
    ck_assert_int_eq(sh.dims[1], 100);
    cJSON_Delete(j);
    const char *bad[] = {"{\"Q\": 1}", "{\"M\": 1.5}", "{\"M\": \"64\"}", "{\"M\": -1}",
                         "{\"dtype\": \"bf16\"}", "[1]"};
    const char *needle[] = {"unknown dim 'Q'", "shape.M: expected an integer in 1..2^53",
                            "shape.M", "shape.M", "shape.dtype", "expected an object"};
    for (int i = 0; i < 6; i++) {
        j = cJSON_Parse(bad[i]);
        ck_assert_int_eq(amk_shape_from_json(s, j, &sh, &d), AMK_ECONFIG);
        assert_has(d.msg, needle[i]);
        cJSON_Delete(j);
    }
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_shape_to_json_round_trip)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_shape sh, back;
    amk_spec_shape(s, 1, &sh);
    cJSON *j = amk_shape_to_json(s, &sh);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "dtype")->valuestring, "f32");
    ck_assert_int_eq(amk_shape_from_json(s, j, &back, NULL), AMK_OK);
    ck_assert_mem_eq(&back, &sh, sizeof sh);
    cJSON_Delete(j);
    amk_spec_free(s);
}
END_TEST

/* ---- configs ---- */

static const char *TGEMM_DEFAULT_CANON =
    "{\"kernel\":\"tgemm\",\"params\":{\"BK\":8,\"BM\":128,\"BN\":128,\"STAGES\":2,\"TM\":8,"
    "\"TN\":8},\"shape\":{\"K\":4096,\"M\":4096,\"N\":4096,\"dtype\":\"f32\"}}";

START_TEST(test_amk_config_default_uses_defaults)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_config c;
    amk_config_default(s, NULL, &c);
    ck_assert_ptr_eq(c.spec, s);
    ck_assert_int_eq(c.shape.dims[0], 4096);
    for (int i = 0; i < amk_spec_n_params(s); i++)
        ck_assert_int_eq(c.choice[i], amk_spec_param_default(s, i));
    amk_shape sh;
    amk_shape_parse(s, "M=5", &sh, NULL);
    amk_config_default(s, &sh, &c);
    ck_assert_int_eq(c.shape.dims[0], 5);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_config_param_values)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_config c;
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_config_param(&c, 0), 128);
    ck_assert_int_eq(amk_config_param(&c, 5), 2);
    c.choice[0] = 0;
    ck_assert_int_eq(amk_config_param(&c, 0), 16);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_config_equal_compares_all)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_config a, b;
    amk_config_default(s, NULL, &a);
    b = a;
    ck_assert(amk_config_equal(&a, &b));
    b.choice[2] = 1;
    ck_assert(!amk_config_equal(&a, &b));
    b = a;
    b.shape.dims[1] = 7;
    ck_assert(!amk_config_equal(&a, &b));
    b = a;
    b.shape.dtype = 1;
    ck_assert(!amk_config_equal(&a, &b));
    b = a;
    b.choice[AMK_MAX_PARAMS - 1] = 9; /* beyond the spec's params: ignored */
    ck_assert(amk_config_equal(&a, &b));
    amk_spec_free(s);
}
END_TEST

static int parse_cfg(const amk_registry *r, const char *text, amk_config *c, amk_diag *d)
{
    return amk_config_parse(r, text, c, d);
}

START_TEST(test_amk_config_from_json_rejects_bad_values)
{
    amk_registry *r = good_registry();
    amk_config c;
    amk_diag d = {0};
    static const struct {
        const char *bm;
        const char *needle;
    } cases[] = {
        {"\"64 -DEVIL\"", "params.BM: \"64 -DEVIL\" is not one of the allowed choices "
                          "(16, 32, 64, 128, 256)"},
        {"64.5", "params.BM: 64.5 is not one of the allowed choices"},
        {"1e99", "params.BM: 1e99 is not one of the allowed choices"},
        /* integers in value, not as written: refused like 64.5 (issue 15) */
        {"64.0", "params.BM: 64.0 is not one of the allowed choices"},
        {"1.28e2", "params.BM: 1.28e2 is not one of the allowed choices"},
        {"64e0", "params.BM: 64e0 is not one of the allowed choices"},
        {"6.4E1", "params.BM: 6.4E1 is not one of the allowed choices"},
        {"-1", "params.BM: -1 is not one of the allowed choices"},
        {"48", "params.BM: 48 is not one of"},
        {"\"64\"", "params.BM: \"64\" is not one of"},
        {"true", "params.BM: true is not one of"},
        {"null", "params.BM: null"},
        {"[64]", "params.BM: an array"},
        {"{\"v\": 64}", "params.BM: an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "{\"kernel\":\"tgemm\",\"shape\":{},\"params\":{\"BM\":%s,"
                 "\"BN\":64,\"BK\":8,\"TM\":4,\"TN\":4,\"STAGES\":2}}", cases[i].bm);
        ck_assert_int_eq(parse_cfg(r, text, &c, &d), AMK_ECONFIG);
        assert_has(d.msg, cases[i].needle);
    }
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_config_from_json_rejects_bad_structure)
{
    amk_registry *r = good_registry();
    amk_config c;
    amk_diag d = {0};
    static const struct {
        const char *text;
        int code;
        const char *needle;
    } cases[] = {
        {"{\"shape\":{},\"params\":{}}", AMK_ECONFIG, "missing 'kernel'"},
        {"{\"kernel\":\"nope\",\"shape\":{},\"params\":{}}", AMK_ENOENT,
         "unknown kernel 'nope' (known: big, tgemm, tiny; add your own with --spec-dir DIR)"},
        {"{\"kernel\":\"tiny\",\"params\":{\"A\":1,\"B\":1,\"MODE\":\"x\"}}", AMK_ECONFIG,
         "missing 'shape'"},
        {"{\"kernel\":\"tiny\",\"shape\":{}}", AMK_ECONFIG, "missing 'params'"},
        {"{\"kernel\":\"tiny\",\"shape\":{\"Q\":4},\"params\":{\"A\":1,\"B\":1,\"MODE\":\"x\"}}",
         AMK_ECONFIG, "shape: unknown dim 'Q'"},
        {"{\"kernel\":\"tiny\",\"shape\":{},\"params\":{\"A\":1,\"B\":1}}", AMK_ECONFIG,
         "missing param MODE (choices: \"x\", \"y\", \"z\")"},
        {"{\"kernel\":\"tiny\",\"shape\":{},\"params\":{\"A\":1,\"B\":1,\"MODE\":\"x\",\"C\":1}}",
         AMK_ECONFIG, "unknown param 'C' (kernel tiny has A, B, MODE)"},
        {"{\"kernel\":\"tiny\",\"shape\":{},\"params\":{\"A\":1,\"B\":1,\"MODE\":2}}",
         AMK_ECONFIG, "params.MODE: 2 is not one of the allowed choices (\"x\", \"y\", \"z\")"},
        {"{\"kernel\":\"tiny\",\"shape\":{},\"params\":{\"A\":1,\"A\":2,\"B\":1,\"MODE\":\"x\"}}",
         AMK_ECONFIG, "A given twice"},
        {"{\"kernel\":\"tiny\",\"shape\":{},\"params\":{\"A\":1,\"B\":1,\"MODE\":\"x\"},"
         "\"extra\":1}", AMK_ECONFIG, "unknown key 'extra'"},
        {"{\"kernel\":\"tiny\",\"shape\":{},\"params\":[1]}", AMK_ECONFIG, "params: expected"},
        {"[]", AMK_ECONFIG, "expected a JSON object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *j = cJSON_Parse(cases[i].text);
        ck_assert_ptr_nonnull(j);
        int rc = amk_config_from_json(r, j, &c, &d);
        cJSON_Delete(j);
        ck_assert_msg(rc == cases[i].code, "%s: %s", cases[i].text, d.msg);
        assert_has(d.msg, cases[i].needle);
    }
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_config_from_json_accepts_valid)
{
    amk_registry *r = good_registry();
    amk_config c;
    amk_diag d = {0};
    cJSON *j = cJSON_Parse("{\"config_id\":\"whatever\",\"params\":{\"MODE\":\"z\",\"B\":5,"
                           "\"A\":4},\"shape\":{\"N\":77},\"kernel\":\"tiny\"}");
    ck_assert_int_eq(amk_config_from_json(r, j, &c, &d), AMK_OK);
    cJSON_Delete(j);
    ck_assert_str_eq(amk_spec_name(c.spec), "tiny");
    ck_assert_int_eq(c.shape.dims[0], 77);
    ck_assert_int_eq(c.choice[0], 3);
    ck_assert_int_eq(c.choice[1], 4);
    ck_assert_int_eq(c.choice[2], 2);
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_config_parse_malformed)
{
    amk_registry *r = good_registry();
    amk_config c;
    amk_diag d = {0};
    ck_assert_int_eq(amk_config_parse(r, "{\"kernel\":", &c, &d), AMK_EPARSE);
    assert_has(d.msg, "malformed JSON");
    ck_assert_int_eq(amk_config_parse(r, "{} trailing", &c, &d), AMK_EPARSE);
    ck_assert_int_eq(amk_config_parse(r, NULL, &c, &d), AMK_EINVAL);
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_config_parse_refuses_non_integer_dims_keeps_integers)
{
    amk_registry *r = good_registry();
    amk_config c;
    amk_diag d = {0};
#define CFG(m) "{\"kernel\":\"tgemm\",\"shape\":{\"M\":" m "},\"params\":{\"BM\":64," \
               "\"BN\":64,\"BK\":8,\"TM\":4,\"TN\":4,\"STAGES\":2}}"
    const char *text = CFG("512.0");
    ck_assert_int_eq(amk_config_parse(r, text, &c, &d), AMK_ECONFIG);
    assert_has(d.msg, "shape.M: expected an integer");
    /* Legitimate integers still parse, negative zero and big ones included where valid. */
    text = CFG("512");
#undef CFG
    ck_assert_msg(amk_config_parse(r, text, &c, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_config_param(&c, 0), 64);
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_json_parse_names_depth_nul_and_position)
{
    cJSON *j = NULL;
    amk_diag d = {0};
    char deep[400];
    memset(deep, '[', 200);
    memset(deep + 200, ']', 200);
    ck_assert_int_eq(amk_json_parse("deep.json", deep, sizeof deep, &j, &d), AMK_EPARSE);
    assert_has(d.msg, "deep.json:1:65: malformed JSON: nested deeper than 64 levels");
    ck_assert_ptr_null(j);
    const char nul[] = "{\"kernel\": \"gemm\0x\"}";
    ck_assert_int_eq(amk_json_parse("nul.json", nul, sizeof nul - 1, &j, &d), AMK_EPARSE);
    assert_has(d.msg, "nul.json:1:17: malformed JSON: contains a NUL byte");
    const char *esc = "{\n \"kernel\": \"gemm\\u0000evil\"}";
    ck_assert_int_eq(amk_json_parse("esc.json", esc, strlen(esc), &j, &d), AMK_EPARSE);
    assert_has(d.msg, "esc.json:2:17: malformed JSON: a string contains a NUL character");
    const char *bad = "{\"a\": 1,\n \"b\": }";
    ck_assert_int_eq(amk_json_parse("bad.json", bad, strlen(bad), &j, &d), AMK_EPARSE);
    assert_has(d.msg, "bad.json:2:7: malformed JSON near '}'");
    ck_assert_int_eq(amk_json_parse("cut.json", "{\"a\": ", 6, &j, &d), AMK_EPARSE);
    assert_has(d.msg, "unexpected end of input");
    /* A document 64 levels deep is fine; numbers say how they were written. */
    char ok[200];
    size_t n = 0;
    for (int i = 0; i < 63; i++)
        ok[n++] = '[';
    n += (size_t)snprintf(ok + n, sizeof ok - n, "[64, 64.0, -3, 1.28e2, \"1.5\"]");
    for (int i = 0; i < 63; i++)
        ok[n++] = ']';
    ck_assert_msg(amk_json_parse("ok.json", ok, n, &j, &d) == AMK_OK, "%s", d.msg);
    const cJSON *a = j;
    for (int i = 0; i < 63; i++)
        a = a->child;
    ck_assert_int_eq(amk_json_integer_text(cJSON_GetArrayItem(a, 0)), 1);
    ck_assert_int_eq(amk_json_integer_text(cJSON_GetArrayItem(a, 1)), 0);
    ck_assert_str_eq(cJSON_GetArrayItem(a, 1)->valuestring, "64.0");
    ck_assert_int_eq(amk_json_integer_text(cJSON_GetArrayItem(a, 2)), 1);
    ck_assert_int_eq(amk_json_integer_text(cJSON_GetArrayItem(a, 3)), 0);
    ck_assert_int_eq(amk_json_integer_text(cJSON_GetArrayItem(a, 4)), 0); /* a string */
    cJSON *dup = cJSON_Duplicate(j, 1);
    cJSON_Delete(dup);
    cJSON_Delete(j);
    cJSON *built = cJSON_CreateNumber(64);
    ck_assert_int_eq(amk_json_integer_text(built), 1);
    cJSON_Delete(built);
}
END_TEST

START_TEST(test_amk_config_to_json_round_trip)
{
    amk_registry *r = good_registry();
    amk_config c, back;
    amk_config_default(amk_registry_find(r, "tiny"), NULL, &c);
    c.choice[2] = 2;
    cJSON *j = amk_config_to_json(&c);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "params"), "MODE")->valuestring,
                     "z");
    ck_assert_int_eq(amk_config_from_json(r, j, &back, NULL), AMK_OK);
    ck_assert(amk_config_equal(&c, &back));
    cJSON_Delete(j);
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_config_canonical_sorted_compact)
{
    amk_registry *r = good_registry();
    amk_config c;
    amk_config_default(amk_registry_find(r, "tgemm"), NULL, &c);
    char *canon = amk_config_canonical(&c);
    ck_assert_str_eq(canon, TGEMM_DEFAULT_CANON);
    /* key order and whitespace in the input do not matter */
    amk_config c2;
    ck_assert_int_eq(amk_config_parse(r, "{ \"shape\" : { \"dtype\":\"f32\", \"N\":4096 },\n"
                                         "  \"params\": {\"TN\":8,\"TM\":8,\"STAGES\":2,\"BN\":128,"
                                         "\"BM\":128,\"BK\":8}, \"kernel\":\"tgemm\" }",
                                      &c2, NULL), AMK_OK);
    char *canon2 = amk_config_canonical(&c2);
    ck_assert_str_eq(canon2, canon);
    free(canon);
    free(canon2);
    amk_config_default(amk_registry_find(r, "tiny"), NULL, &c);
    canon = amk_config_canonical(&c);
    ck_assert_str_eq(canon, "{\"kernel\":\"tiny\",\"params\":{\"A\":1,\"B\":1,\"MODE\":\"y\"},"
                            "\"shape\":{\"N\":1000,\"dtype\":\"f32\"}}");
    free(canon);
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_config_id_pinned_fnv1a)
{
    amk_registry *r = good_registry();
    amk_config c;
    amk_config_default(amk_registry_find(r, "tgemm"), NULL, &c);
    char id[17];
    amk_config_id(&c, id);
    /* independent FNV-1a-64 of the canonical text */
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (const char *p = TGEMM_DEFAULT_CANON; *p; p++) {
        h ^= (unsigned char)*p;
        h *= UINT64_C(0x100000001b3);
    }
    char want[17];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)h);
    ck_assert_str_eq(id, want);
    ck_assert_str_eq(id, "740e749097874f75"); /* pinned: changing it breaks every log */
    c.choice[0] = 0;
    char id2[17];
    amk_config_id(&c, id2);
    ck_assert_str_ne(id, id2);
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_config_params_json_sorted)
{
    amk_registry *r = good_registry();
    const amk_spec *s = amk_registry_find(r, "tgemm");
    amk_config c;
    amk_config_default(s, NULL, &c);
    char *p = amk_config_params_json(&c);
    ck_assert_str_eq(p, "{\"BK\":8,\"BM\":128,\"BN\":128,\"STAGES\":2,\"TM\":8,\"TN\":8}");
    free(p);
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_config_from_params_json_round_trip)
{
    amk_registry *r = good_registry();
    const amk_spec *s = amk_registry_find(r, "tiny");
    amk_shape sh;
    amk_shape_parse(s, "N=3", &sh, NULL);
    amk_config c, back;
    amk_config_default(s, &sh, &c);
    c.choice[0] = 2;
    c.choice[2] = 0;
    char *p = amk_config_params_json(&c);
    ck_assert_str_eq(p, "{\"A\":3,\"B\":1,\"MODE\":\"x\"}");
    amk_diag d = {0};
    ck_assert_int_eq(amk_config_from_params_json(s, &sh, p, &back, &d), AMK_OK);
    ck_assert(amk_config_equal(&c, &back));
    free(p);
    ck_assert_int_eq(amk_config_from_params_json(s, &sh, "{\"A\":3}", &back, &d), AMK_ECONFIG);
    assert_has(d.msg, "missing param B");
    ck_assert_int_eq(amk_config_from_params_json(s, &sh, "{bad", &back, &d), AMK_EPARSE);
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_config_defines_only_declared_ints)
{
    amk_registry *r = good_registry();
    amk_config c;
    amk_config_default(amk_registry_find(r, "tiny"), NULL, &c);
    c.choice[2] = 2;
    char defs[AMK_MAX_PARAMS][96];
    ck_assert_int_eq(amk_config_defines(&c, defs, AMK_MAX_PARAMS), 3);
    ck_assert_str_eq(defs[0], "-DA=1");
    ck_assert_str_eq(defs[1], "-DB=1");
    ck_assert_str_eq(defs[2], "-DMODE=2");
    ck_assert_int_lt(amk_config_defines(&c, defs, 2), 0);
    /* a choice index outside the declared list never becomes a define */
    strcpy(defs[0], "untouched");
    c.choice[1] = 200;
    ck_assert_int_eq(amk_config_defines(&c, defs, AMK_MAX_PARAMS), AMK_ECONFIG);
    ck_assert_str_eq(defs[0], "untouched");
    amk_registry_free(r);
}
END_TEST

static amk_limits h100(void)
{
    amk_limits l = {.max_threads = 1024, .max_smem = 49152, .max_smem_optin = 232448,
                    .smem_per_sm = 233472, .warp = 32, .sm_count = 132, .regs_per_sm = 65536,
                    .max_regs_per_thread = 255, .max_blocks_per_sm = 32,
                    .max_threads_per_sm = 2048, .max_grid_x = 2147483647,
                    .max_grid_yz = 65535, .l2_bytes = 52428800};
    return l;
}

START_TEST(test_amk_config_check_restrictions)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_limits lim = h100();
    amk_config c;
    amk_diag d = {0};
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_config_check(&c, &lim, &d), AMK_OK);
    c.choice[0] = 0; /* BM 16 */
    c.choice[1] = 0; /* BN 16, TM = TN = 8: 4 threads */
    ck_assert_int_eq(amk_config_check(&c, &lim, &d), AMK_ERESTRICT);
    ck_assert_str_eq(d.msg, "restriction 'threads >= warp && threads <= max_threads' is false");
    amk_config_default(s, NULL, &c);
    lim.max_smem_optin = 1000;
    ck_assert_int_eq(amk_config_check(&c, &lim, &d), AMK_ERESTRICT);
    ck_assert_str_eq(d.msg, "restriction 'smem <= max_smem_optin' is false");
    c.choice[3] = 99;
    ck_assert_int_eq(amk_config_check(&c, &lim, &d), AMK_ECONFIG);
    assert_has(d.msg, "param TM: choice index 99 out of range");
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_config_eval_named_values)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_limits lim = h100();
    amk_config c;
    amk_diag d = {0};
    int64_t v;
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_config_eval(&c, &lim, "threads", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 256);
    ck_assert_int_eq(amk_config_eval(&c, &lim, "smem", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 2 * 256 * 8 * 4);
    ck_assert_int_eq(amk_config_eval(&c, &lim, "max_smem_optin - smem", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 232448 - 16384);
    ck_assert_int_eq(amk_config_eval(&c, &lim, "elt * 10 + dtype", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 40);
    amk_shape_parse(s, "half", &c.shape, NULL);
    ck_assert_int_eq(amk_config_eval(&c, &lim, "elt * 10 + dtype", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 21);
    ck_assert_int_eq(amk_config_eval(&c, &lim, "M / (BM - 128)", &v, &d), AMK_EDIVZERO);
    ck_assert_int_eq(amk_config_eval(&c, &lim, "nope + 1", &v, &d), AMK_EEXPR);
    assert_has(d.msg, "unknown name 'nope'");
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_config_launch_geometry)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_limits lim = h100();
    amk_config c;
    amk_launch l;
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_config_launch(&c, &lim, &l, NULL), AMK_OK);
    ck_assert_int_eq(l.grid[0], 32);
    ck_assert_int_eq(l.grid[1], 32);
    ck_assert_int_eq(l.grid[2], 1);
    ck_assert_int_eq(l.block[0], 256);
    ck_assert_int_eq(l.block[1], 1);
    ck_assert_int_eq(l.shared_bytes, 16384);
    amk_shape_parse(s, "small", &c.shape, NULL);
    ck_assert_int_eq(amk_config_launch(&c, &lim, &l, NULL), AMK_OK);
    ck_assert_int_eq(l.grid[0], 4); /* cdiv(511, 128) */
    ck_assert_int_eq(l.grid[1], 3); /* cdiv(257, 128) */
    amk_spec_free(s);
}
END_TEST

/* ---- tensor maps and clusters ---- */

/* tgemm with a tensor map over A (K contiguous), one over C, the maps as args, and a 2x1x1
 * cluster: the spec a Hopper kernel would write. */
static cJSON *tmap_spec(void)
{
    cJSON *j = base_spec();
    set(j, NULL, "tensor_maps",
        "{\"tmA\": {\"buffer\": \"A\", \"dims\": [\"K\", \"M\"], \"strides\": [\"K * elt\"], "
        "\"box\": [\"BK\", \"BM\"], \"swizzle\": 32, \"l2_promotion\": 128}, "
        "\"tmC\": {\"buffer\": \"C\", \"dims\": [\"N\", \"M\"], \"strides\": [\"N * 4\"], "
        "\"box\": [\"4\", \"16\"], \"swizzle\": 0, \"oob\": \"zero\"}}");
    set(j, NULL, "args", "[\"tmA\", \"B\", \"tmC\", \"M\", \"N\", \"K\"]");
    set(j, "launch", "cluster", "[\"2\", \"1\", \"1\"]");
    return j;
}

static amk_spec *load_json(cJSON *j)
{
    const char *dir = make_dir(j);
    cJSON_Delete(j);
    amk_spec *s = load(dir);
    amk_test_tmpdir_remove(tmpdir);
    return s;
}

/* ---- kernels as written: scalars, defines, headers, constant fills, constant memory,
 * data and answer files (SPEC.md) ---- */

static cJSON *asis_spec(void)
{
    cJSON *j = base_spec();
    set(j, NULL, "buffers",
        "[{\"name\": \"A\", \"dtype\": \"f32\", \"count\": \"M * K\", \"role\": \"in\", "
        "\"init\": \"constant\", \"value\": 0.5}, "
        "{\"name\": \"B\", \"dtype\": \"f32\", \"count\": \"K * N\", \"role\": \"in\", "
        "\"memory\": \"constant\", \"symbol\": \"cB\"}, "
        "{\"name\": \"C\", \"dtype\": \"f32\", \"count\": \"M * N\", \"role\": \"out\"}]");
    set(j, NULL, "scalars",
        "{\"alpha\": {\"dtype\": \"f32\", \"value\": 1.5}, "
        "\"big\": {\"dtype\": \"u64\", \"value\": 18446744073709549568}}");
    set(j, NULL, "defines", "{\"kernel_tuner\": 1, \"tiles\": \"BM / TM\"}");
    set(j, NULL, "args", "[\"A\", \"B\", \"C\", \"M\", \"alpha\", \"big\"]");
    return j;
}

START_TEST(test_amk_spec_load_asis_fields)
{
    amk_spec *s = load_json(asis_spec());
    amk_spec_buffer b;
    ck_assert_int_eq(amk_spec_buffer_at(s, 0, &b), AMK_OK);
    ck_assert_str_eq(b.init, "constant");
    ck_assert(b.value == 0.5 && !b.constant_memory && b.symbol == NULL && b.data == NULL);
    ck_assert_int_eq(amk_spec_buffer_at(s, 1, &b), AMK_OK);
    ck_assert(b.constant_memory == 1);
    ck_assert_str_eq(b.symbol, "cB");
    ck_assert_int_eq(amk_spec_n_scalars(s), 2);
    amk_spec_scalar sc;
    ck_assert_int_eq(amk_spec_scalar_at(s, 0, &sc), AMK_OK);
    ck_assert_str_eq(sc.name, "alpha");
    ck_assert_str_eq(sc.dtype, "f32");
    ck_assert(sc.value == 1.5);
    ck_assert_int_eq(amk_spec_scalar_at(s, 1, &sc), AMK_OK);
    ck_assert((uint64_t)sc.ivalue == UINT64_C(18446744073709549568));
    ck_assert_int_eq(amk_spec_scalar_at(s, 2, &sc), AMK_EINVAL);
    ck_assert_int_eq(amk_spec_n_defines(s), 2);
    const char *name;
    const amk_expr *e;
    ck_assert_int_eq(amk_spec_define_at(s, 1, &name, &e), AMK_OK);
    ck_assert_str_eq(name, "tiles");
    amk_config c;
    amk_config_default(s, NULL, &c);
    int64_t v = 0;
    ck_assert_int_eq(amk_config_eval_expr(&c, NULL, e, &v, NULL), AMK_OK);
    ck_assert_int_eq(v, amk_spec_param_value(s, 0, c.choice[0]) /
                            amk_spec_param_value(s, 3, c.choice[3]));
    ck_assert_int_eq(amk_spec_n_headers(s), 0);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_spec_load_asis_errors)
{
    static const struct {
        const char *path, *key, *value, *want;
    } bad[] = {
        {NULL, "scalars", "{\"x\": {\"dtype\": \"f16\", \"value\": 1}}", "unknown scalar dtype 'f16'"},
        {NULL, "scalars", "{\"x\": {\"dtype\": \"i32\", \"value\": 3000000000}}", "is not a i32"},
        {NULL, "scalars", "{\"x\": {\"dtype\": \"u32\", \"value\": 1.5}}", "is not a u32"},
        {NULL, "scalars", "{\"BM\": {\"dtype\": \"f32\", \"value\": 1}}", "'BM' is already"},
        {NULL, "scalars", "{\"x\": {\"dtype\": \"f32\"}}", "scalars.x"},
        {NULL, "defines", "{\"BM\": 1}", "defines.BM: 'BM' is already"},
        {NULL, "defines", "{\"AMK_X\": 1}", "outside amk's AMK_ names"},
        {NULL, "defines", "{\"d\": \"Q + 1\"}", "unknown name 'Q'"},
        {NULL, "headers", "[\"missing.h\"]", "headers[0]: file 'missing.h' not found"},
        {"buffers.0", "init", "\"constant\"", "init 'constant' needs a finite number 'value'"},
        {"buffers.0", "value", "2", "'value' is only for init 'constant'"},
        {"buffers.0", "memory", "\"texture\"", "texture memory is not supported"},
        {"buffers.2", "memory", "\"constant\"", "only an input (role in)"},
        {"buffers.0", "symbol", "\"s\"", "'symbol' is only for memory 'constant'"},
        {"buffers.2", "data", "\"tgemm.hip\"", "an output buffer has no input data"},
        {"buffers.0", "answer", "\"tgemm.hip\"", "only outputs have an answer"},
        {"buffers.0", "data", "\"tgemm.hip\"", "give either 'data' or 'init'"},
        {"buffers.2", "answer", "\"nope.npy\"", "file 'nope.npy' not found"},
        {"buffers.0", "check", "\"external\"", "buffers[0].check: only outputs are checked"},
        {"buffers.2", "check", "\"maybe\"", "unknown check 'maybe' (compare, external)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *j = base_spec();
        if (bad[i].path && !strcmp(bad[i].path, "buffers.0"))
            set(cJSON_GetArrayItem(at(j, "buffers"), 0), NULL, bad[i].key, bad[i].value);
        else if (bad[i].path)
            set(cJSON_GetArrayItem(at(j, "buffers"), 2), NULL, bad[i].key, bad[i].value);
        else
            set(j, NULL, bad[i].key, bad[i].value);
        expect_spec_error(j, AMK_ESPEC, bad[i].want, NULL);
    }
}
END_TEST

/* "check": "external" marks an output judged outside amk; such an output has no answer
 * file (the external judge has the answer). */
START_TEST(test_amk_spec_load_check_external)
{
    cJSON *j = base_spec();
    set(cJSON_GetArrayItem(at(j, "buffers"), 2), NULL, "check", "\"external\"");
    const char *dir = make_dir(j);
    cJSON_Delete(j);
    amk_spec *s = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_spec_load(dir, &s, &d) == AMK_OK, "%s", d.msg);
    amk_spec_buffer b;
    amk_spec_buffer_at(s, 2, &b);
    ck_assert_int_eq(b.external, 1);
    amk_spec_buffer_at(s, 0, &b);
    ck_assert_int_eq(b.external, 0);
    amk_spec_free(s);
    amk_test_tmpdir_remove(tmpdir);
    cJSON *k = base_spec();
    set(cJSON_GetArrayItem(at(k, "buffers"), 2), NULL, "check", "\"external\"");
    set(cJSON_GetArrayItem(at(k, "buffers"), 2), NULL, "answer", "\"c.bin\"");
    expect_spec_error(k, AMK_ESPEC, "has no answer file", NULL);
}
END_TEST

/* An .npy data file and an answer load with their item types checked against the buffer;
 * a header of the folder is listed. */
START_TEST(test_amk_spec_load_data_files)
{
    static const unsigned char npy_f4[] =
        "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
    cJSON *j = base_spec();
    cJSON *bufs = at(j, "buffers");
    cJSON_DeleteItemFromObject(cJSON_GetArrayItem(bufs, 0), "init");
    set(cJSON_GetArrayItem(bufs, 0), NULL, "data", "\"a.npy\"");
    set(cJSON_GetArrayItem(bufs, 2), NULL, "answer", "\"c.bin\"");
    set(j, NULL, "headers", "[\"util.h\"]");
    const char *dir = make_dir(j);
    cJSON_Delete(j);
    char path[512];
    snprintf(path, sizeof path, "%s/a.npy", dir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(npy_f4, 1, 10, f); /* magic, version, header length 0x76 = 118 */
    char hdr[119];
    snprintf(hdr, sizeof hdr, "%-117s\n", (const char *)npy_f4 + 10);
    fwrite(hdr, 1, 118, f);
    float four[4] = {1, 2, 3, 4};
    fwrite(four, sizeof four, 1, f);
    fclose(f);
    write_text(dir, "c.bin", "0123456789abcdef");
    write_text(dir, "util.h", "#define UTIL 1\n");
    amk_spec *s = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_spec_load(dir, &s, &d) == AMK_OK, "%s", d.msg);
    amk_spec_buffer b;
    amk_spec_buffer_at(s, 0, &b);
    ck_assert_str_eq(b.data, "a.npy");
    amk_spec_buffer_at(s, 2, &b);
    ck_assert_str_eq(b.answer, "c.bin");
    ck_assert_int_eq(amk_spec_n_headers(s), 1);
    ck_assert_str_eq(amk_spec_header(s, 0), "util.h");
    amk_spec_free(s);
    /* the same file as an int8 buffer's data: f32 items do not fit */
    cJSON *k = base_spec();
    cJSON *b0 = cJSON_GetArrayItem(at(k, "buffers"), 0);
    cJSON_DeleteItemFromObject(b0, "init");
    set(b0, NULL, "dtype", "\"int8\"");
    set(b0, NULL, "data", "\"a.npy\"");
    char *text = cJSON_Print(k);
    cJSON_Delete(k);
    write_text(dir, "spec.json", text);
    free(text);
    s = NULL;
    ck_assert_int_eq(amk_spec_load(dir, &s, &d), AMK_ESPEC);
    assert_has(d.msg, "'a.npy' holds f32 items, the buffer is int8");
    amk_test_tmpdir_remove(tmpdir);
}
END_TEST

START_TEST(test_amk_spec_load_bad_tensor_maps)
{
    cJSON *j = tmap_spec();
    set(j, NULL, "tensor_maps", "[1]");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps: expected an object", NULL);
    j = tmap_spec();
    set(j, "tensor_maps.tmA", "buffer", "\"Z\"");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.tmA.buffer: unknown buffer 'Z'", NULL);
    j = tmap_spec();
    set(j, "tensor_maps.tmA", "dims", "[\"1\", \"1\", \"1\", \"1\", \"1\", \"1\"]");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.tmA.dims: expected an array of 1 to 5", NULL);
    j = tmap_spec();
    set(j, "tensor_maps.tmA", "strides", "[\"K * elt\", \"4\"]");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.tmA.strides: expected an array of 1 expression",
                      NULL);
    j = tmap_spec();
    set(j, "tensor_maps.tmA", "box", "[\"BK\"]");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.tmA.box: expected an array of 2 expressions",
                      NULL);
    j = tmap_spec();
    set(j, "tensor_maps.tmA", "box", "[\"BK\", \"BQ\"]");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.tmA.box[1]: unknown name 'BQ'", NULL);
    j = tmap_spec();
    set(j, "tensor_maps.tmA", "swizzle", "16");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.tmA.swizzle: expected 0 (none), 32, 64 or 128",
                      NULL);
    j = tmap_spec();
    set(j, "tensor_maps.tmA", "swizzle", "\"128\"");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.tmA.swizzle", NULL);
    j = tmap_spec();
    set(j, "tensor_maps.tmA", "l2_promotion", "100");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.tmA.l2_promotion: expected 0 (none), 64", NULL);
    j = tmap_spec();
    set(j, "tensor_maps.tmA", "oob", "\"nan\"");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.tmA.oob: unknown value 'nan'", NULL);
    j = tmap_spec();
    set(j, "tensor_maps.tmA", "interleave", "0");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.tmA: unknown field 'interleave'", NULL);
    j = tmap_spec();
    cJSON_DeleteItemFromObjectCaseSensitive(at(j, "tensor_maps.tmA"), "box");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.tmA: missing required field 'box'", NULL);
    j = tmap_spec();
    set(j, NULL, "tensor_maps", "{\"M\": {}}");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.M: 'M' is already declared as a dim", NULL);
    j = tmap_spec();
    set(j, NULL, "tensor_maps", "{\"A\": {}}");
    expect_spec_error(j, AMK_ESPEC, "tensor_maps.A: 'A' is already declared as a buffer", NULL);
    j = tmap_spec();
    set(j, NULL, "args", "[\"tmQ\", \"B\", \"C\", \"M\", \"N\", \"K\"]");
    expect_spec_error(j, AMK_ESPEC, "args[0]: unknown argument 'tmQ'", "a tensor map");
    j = tmap_spec();
    set(j, "launch", "cluster", "[\"2\", \"1\"]");
    expect_spec_error(j, AMK_ESPEC, "launch.cluster: expected an array of 3 expressions", NULL);
    j = tmap_spec();
    set(j, "reference.launch", "cluster", "[\"2\", \"CL\", \"1\"]");
    expect_spec_error(j, AMK_ESPEC, "reference.launch.cluster[1]: unknown name 'CL'", NULL);
    j = tmap_spec();
    set(j, "launch", "cluster", "[\"2 / (BM - 128)\", \"1\", \"1\"]");
    expect_spec_error(j, AMK_ESPEC, "launch.cluster[0]", "default config");
}
END_TEST

START_TEST(test_amk_config_tensor_map_values)
{
    amk_spec *s = load_json(tmap_spec());
    amk_limits lim = h100();
    amk_config c;
    amk_tensor_map m;
    amk_diag d = {0};
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_spec_n_tensor_maps(s), 2);
    ck_assert_str_eq(amk_spec_tensor_map_name(s, 1), "tmC");
    ck_assert_ptr_null(amk_spec_tensor_map_name(s, 2));
    ck_assert_int_eq(amk_config_tensor_map(&c, &lim, 0, &m, &d), AMK_OK);
    ck_assert_str_eq(m.name, "tmA");
    ck_assert_str_eq(m.buffer, "A");
    ck_assert_str_eq(m.dtype, "f32");
    ck_assert_int_eq(m.rank, 2);
    ck_assert_int_eq(m.dims[0], 4096);
    ck_assert_int_eq(m.dims[1], 4096);
    ck_assert_int_eq(m.strides[0], 4096 * 4);
    ck_assert_int_eq(m.box[0], 8);
    ck_assert_int_eq(m.box[1], 128);
    ck_assert_int_eq(m.swizzle, 32);
    ck_assert_int_eq(m.l2_promotion, 128);
    ck_assert_int_eq(amk_config_tensor_map(&c, &lim, 1, &m, &d), AMK_OK);
    ck_assert_str_eq(m.dtype, "f32");
    ck_assert_int_eq(m.l2_promotion, 256); /* the default */
    ck_assert_int_eq(amk_config_tensor_map(&c, &lim, 2, &m, &d), AMK_EINVAL);
    /* An "input" buffer takes the shape's dtype. */
    ck_assert_int_eq(amk_shape_parse(s, "half", &c.shape, &d), AMK_OK);
    c.choice[2] = 1; /* BK 16: 32 bytes of f16 */
    ck_assert_int_eq(amk_config_tensor_map(&c, &lim, 0, &m, &d), AMK_OK);
    ck_assert_str_eq(m.dtype, "f16");
    ck_assert_int_eq(m.strides[0], 4096 * 2);
    amk_launch l;
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_config_launch(&c, &lim, &l, &d), AMK_OK);
    ck_assert_int_eq(l.cluster[0], 2);
    ck_assert_int_eq(l.cluster[1], 1);
    ck_assert_int_eq(l.cluster[2], 1);
    amk_spec_free(s);
    /* Without "cluster": 1 x 1 x 1. */
    s = load(GOOD "/tgemm");
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_config_launch(&c, &lim, &l, &d), AMK_OK);
    ck_assert(l.cluster[0] == 1 && l.cluster[1] == 1 && l.cluster[2] == 1);
    ck_assert_int_eq(amk_spec_n_tensor_maps(s), 0);
    amk_spec_free(s);
}
END_TEST

/* Checks config c (default params with `param` = choice, on shape) is rejected with a
 * message holding both needles. */
static void expect_rejected(const amk_spec *s, const char *shape, int param, int choice,
                            const char *needle1, const char *needle2)
{
    amk_limits lim = h100();
    amk_config c;
    amk_diag d = {0};
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_shape_parse(s, shape, &c.shape, &d), AMK_OK);
    if (param >= 0)
        c.choice[param] = (uint8_t)choice;
    ck_assert_msg(amk_config_check(&c, &lim, &d) == AMK_ERESTRICT, "%s: not rejected (%s)",
                  shape, d.msg);
    assert_has(d.msg, needle1);
    if (needle2)
        assert_has(d.msg, needle2);
}

START_TEST(test_amk_config_check_tensor_map_rules)
{
    amk_limits lim = h100();
    amk_config c;
    amk_diag d = {0};
    amk_spec *s = load_json(tmap_spec());
    amk_config_default(s, NULL, &c);
    ck_assert_msg(amk_config_check(&c, &lim, &d) == AMK_OK, "%s", d.msg);
    /* BK 16 f32 = 64 bytes per box row: wider than the 32-byte swizzle. */
    expect_rejected(s, "default", 2, 1, "tensor map 'tmA': box[0] * elt = 64 bytes exceeds the "
                    "32-byte swizzle", NULL);
    /* BK 8 f16 = 16 bytes: fine; the small shape's K * elt = 516 is not a multiple of 16. */
    expect_rejected(s, "small", -1, 0, "tensor map 'tmA': strides[0] = 516 bytes",
                    "multiple of 16");
    amk_spec_free(s);

    cJSON *j = tmap_spec();
    set(j, "tensor_maps.tmC", "box", "[\"2\", \"16\"]");
    s = load_json(j);
    expect_rejected(s, "default", -1, 0, "tensor map 'tmC': box[0] * elt = 8 bytes is not a "
                    "multiple of 16", NULL);
    amk_spec_free(s);

    j = tmap_spec();
    set(j, "tensor_maps.tmA", "box", "[\"BK\", \"2 * BM\"]");
    s = load_json(j);
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_config_check(&c, &lim, &d), AMK_OK); /* BM 128: a box of 256 */
    expect_rejected(s, "default", 0, 4, "tensor map 'tmA': box[1] = 512 is outside 1..256",
                    NULL);
    amk_spec_free(s);

    j = tmap_spec();
    set(j, "tensor_maps.tmA", "dims", "[\"K\", \"M + 1\"]");
    s = load_json(j);
    expect_rejected(s, "default", -1, 0, "tensor map 'tmA': covers", "more than buffer A holds");
    amk_spec_free(s);

    j = tmap_spec();
    set(j, "tensor_maps.tmA", "dims", "[\"K - BM * 32\", \"M\"]");
    s = load_json(j);
    expect_rejected(s, "default", -1, 0, "tensor map 'tmA': dims[0] = 0 is outside 1..2^32",
                    NULL);
    amk_spec_free(s);

    j = tmap_spec();
    set(j, "tensor_maps.tmA", "dims", "[\"K * 1048576 * 4096\", \"1\"]");
    set(j, "tensor_maps.tmA", "strides", "[\"16\"]");
    s = load_json(j);
    expect_rejected(s, "default", -1, 0, "tensor map 'tmA': dims[0] = ", "outside 1..2^32");
    amk_spec_free(s);

    j = tmap_spec();
    set(j, "tensor_maps.tmA", "strides", "[\"K * elt * 1048576 * 1048576\"]");
    s = load_json(j);
    expect_rejected(s, "default", -1, 0, "tensor map 'tmA': strides[0] = ", "2^40");
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_config_check_cluster_divides_grid)
{
    amk_limits lim = h100();
    amk_config c;
    amk_diag d = {0};
    cJSON *j = tmap_spec();
    set(j, "launch", "cluster", "[\"1\", \"BM / 64\", \"1\"]");
    amk_spec *s = load_json(j);
    amk_config_default(s, NULL, &c);
    ck_assert_msg(amk_config_check(&c, &lim, &d) == AMK_OK, "%s", d.msg); /* 32 rows of 2 */
    /* small: M = 257, BM 128: 3 block rows, not a multiple of 2. */
    expect_rejected(s, "M=257,N=4096,K=4096", -1, 0, "launch.cluster 1 x 2 x 1",
                    "the grid is not a multiple of the cluster (grid 32 x 3 x 1)");
    /* BM 16: a cluster of 0 rows. */
    expect_rejected(s, "default", 0, 0, "launch.cluster 1 x 0 x 1", "each dim must be 1..1024");
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_spec_compile_arch_nvidia_only_features)
{
    char arch[16];
    amk_diag d = {0};
    amk_spec *s = load_json(tmap_spec());
    ck_assert_int_eq(amk_spec_compile_arch(s, "nvidia", "sm_90", arch, sizeof arch, &d), AMK_OK);
    ck_assert_int_eq(amk_spec_compile_arch(s, "amd", "gfx942", arch, sizeof arch, &d),
                     AMK_EUNSUPPORTED);
    assert_has(d.msg, "tgemm uses tensor_maps, an NVIDIA (sm_90+) feature");
    assert_has(d.msg, "amd gfx942");
    amk_spec_free(s);
    cJSON *j = base_spec();
    set(j, "reference.launch", "cluster", "[\"1\", \"1\", \"1\"]");
    s = load_json(j);
    ck_assert_int_eq(amk_spec_compile_arch(s, "amd", "gfx942", arch, sizeof arch, &d),
                     AMK_EUNSUPPORTED);
    assert_has(d.msg, "reference.launch.cluster");
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_config_cost_terms)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_limits lim = h100();
    amk_config c;
    amk_cost_terms t;
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_config_cost(&c, &lim, &t, NULL), AMK_OK);
    ck_assert_int_eq(t.flops, INT64_C(137438953472));
    ck_assert_int_eq(t.min_bytes, INT64_C(201326592));
    ck_assert_int_eq(t.traffic_bytes, INT64_C(4362076160));
    ck_assert_int_eq(t.regs_estimate, 104);
    ck_assert_str_eq(t.unit, "simt_f32");
    amk_spec_free(s);
    s = load(GOOD "/tiny");
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_config_cost(&c, &lim, &t, NULL), AMK_OK);
    ck_assert_int_eq(t.traffic_bytes, t.min_bytes); /* defaults to min_bytes */
    ck_assert_int_eq(t.regs_estimate, 0);
    ck_assert_str_eq(t.unit, "none");
    amk_spec_free(s);
}
END_TEST

/* ---- the space ---- */

static amk_space *space_of(const amk_spec *s, const char *shape, const amk_limits *lim)
{
    amk_shape sh;
    amk_spec_shape(s, 0, &sh);
    if (shape)
        ck_assert_int_eq(amk_shape_parse(s, shape, &sh, NULL), AMK_OK);
    amk_space *sp = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_space_create(s, &sh, lim, &sp, &d) == AMK_OK, "%s", d.msg);
    return sp;
}

/* Next raw point in odometer order (last param fastest); 0 after the last. */
static int odometer_next(const amk_spec *s, amk_config *c)
{
    for (int i = amk_spec_n_params(s) - 1; i >= 0; i--) {
        if (++c->choice[i] < amk_spec_param_n_choices(s, i))
            return 1;
        c->choice[i] = 0;
    }
    return 0;
}

typedef struct collect {
    amk_config *v;
    int64_t n, cap;
} collect;

static int collect_cb(const amk_config *c, void *ud)
{
    collect *k = ud;
    ck_assert_int_lt(k->n, k->cap);
    k->v[k->n++] = *c;
    return 0;
}

/* Enumeration must visit exactly the brute-force valid set, in odometer order. */
static void check_enumeration(const amk_spec *s, const char *shape, const amk_limits *lim)
{
    amk_space *sp = space_of(s, shape, lim);
    int64_t raw = (int64_t)amk_space_raw_size(sp);
    collect k = {.v = malloc((size_t)raw * sizeof(amk_config)), .cap = raw};
    ck_assert_int_eq(amk_space_enumerate(sp, collect_cb, &k), AMK_OK);
    amk_config c;
    amk_config_default(s, amk_space_shape(sp), &c);
    memset(c.choice, 0, sizeof c.choice);
    int64_t valid = 0, seen = 0;
    do {
        seen++;
        if (amk_space_valid(sp, &c, NULL) == AMK_OK) {
            ck_assert_int_lt(valid, k.n);
            if (!amk_config_equal(&k.v[valid], &c)) {
                char *a = amk_config_params_json(&k.v[valid]), *b = amk_config_params_json(&c);
                ck_assert_msg(0, "enumeration differs at #%lld: enumerated %s, expected %s",
                              (long long)valid, a, b);
            }
            valid++;
        }
    } while (odometer_next(s, &c));
    ck_assert_int_eq(seen, raw);
    ck_assert_int_eq(valid, k.n);
    ck_assert_int_eq(amk_space_count(sp), valid);
    free(k.v);
    amk_space_free(sp);
}

START_TEST(test_amk_space_create_accessors)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_limits lim = h100();
    amk_space *sp = space_of(s, "small", &lim);
    ck_assert_ptr_eq(amk_space_spec(sp), s);
    ck_assert_int_eq(amk_space_shape(sp)->dims[0], 257);
    ck_assert_int_eq(amk_space_limits(sp)->max_threads, 1024);
    amk_space_free(sp);
    amk_space_free(NULL);
    amk_shape bad;
    amk_spec_shape(s, 0, &bad);
    bad.dtype = 5;
    amk_diag d = {0};
    ck_assert_int_eq(amk_space_create(s, &bad, &lim, &sp, &d), AMK_ECONFIG);
    assert_has(d.msg, "dtype index 5 out of range");
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_space_raw_size_product)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_space *sp = space_of(s, NULL, NULL);
    ck_assert(amk_space_raw_size(sp) == 5.0 * 5 * 3 * 4 * 4 * 3);
    amk_space_free(sp);
    amk_spec_free(s);
    s = load(GOOD "/big");
    sp = space_of(s, NULL, NULL);
    ck_assert(amk_space_raw_size(sp) == 1e7);
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_space_valid_checks_shape_and_restrictions)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_limits lim = h100();
    amk_space *sp = space_of(s, NULL, &lim);
    amk_config c;
    amk_diag d = {0};
    amk_config_default(s, NULL, &c);
    ck_assert_int_eq(amk_space_valid(sp, &c, &d), AMK_OK);
    c.shape.dims[0] = 5;
    ck_assert_int_eq(amk_space_valid(sp, &c, &d), AMK_ECONFIG);
    assert_has(d.msg, "differs from the space's shape");
    amk_config_default(s, NULL, &c);
    c.choice[0] = 0;
    c.choice[1] = 0;
    ck_assert_int_eq(amk_space_valid(sp, &c, &d), AMK_ERESTRICT);
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_space_enumerate_matches_brute_force)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_limits lim = h100();
    check_enumeration(s, NULL, &lim);
    check_enumeration(s, "half", &lim);
    lim.max_threads = 256;
    lim.max_smem_optin = 24576;
    check_enumeration(s, "small", &lim);
    amk_spec_free(s);
    s = load(GOOD "/tiny");
    check_enumeration(s, NULL, NULL);
    amk_spec_free(s);
}
END_TEST

/* Loads a mutated tgemm from a temporary folder (removed again before returning). */
static amk_spec *load_mutated(cJSON *j)
{
    const char *dir = make_dir(j);
    cJSON_Delete(j);
    amk_spec *s = NULL;
    amk_diag d = {0};
    int rc = amk_spec_load(dir, &s, &d);
    amk_test_tmpdir_remove(tmpdir);
    ck_assert_msg(rc == AMK_OK, "%s", d.msg);
    return s;
}

START_TEST(test_amk_space_enumerate_arithmetic_errors_invalidate)
{
    /* a derived value that divides by zero for BM = 64 and one that overflows for the
     * biggest tiles: those configs are invalid, exactly as amk_space_valid says */
    cJSON *j = base_spec();
    set(j, "derived", "q", "\"BM != 128 ? M / (BM - 64) : 0\"");
    set(j, "derived", "big", "\"BN == 256 && TN == 8 ? (BN << 55) : 1\"");
    set(j, NULL, "restrictions", "[\"q >= 0\", \"big > 0\", \"BM % TM == 0\"]");
    amk_spec *s = load_mutated(j);
    amk_limits lim = h100();
    check_enumeration(s, NULL, &lim);
    amk_space *sp = space_of(s, NULL, &lim);
    amk_config c;
    amk_config_default(s, NULL, &c);
    c.choice[0] = 2; /* BM 64 */
    amk_diag d = {0};
    ck_assert_int_eq(amk_space_valid(sp, &c, &d), AMK_EDIVZERO);
    assert_has(d.msg, "derived value 'q': division by zero");
    /* the code does not depend on whether a diagnostic is asked for */
    ck_assert_int_eq(amk_space_valid(sp, &c, NULL), AMK_EDIVZERO);
    ck_assert_int_eq(amk_config_check(&c, NULL, NULL), AMK_EDIVZERO);
    int64_t v;
    ck_assert_int_eq(amk_config_eval(&c, NULL, "q + 1", &v, NULL), AMK_EDIVZERO);
    ck_assert_int_eq(amk_config_eval(&c, NULL, "threads", &v, NULL), AMK_OK); /* q not needed */
    ck_assert_int_eq(v, 128); /* (64 / 8) * (128 / 8) */
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_space_enumerate_param_free_restriction)
{
    /* a restriction on dims only: decided once per space */
    cJSON *j = base_spec();
    set(j, NULL, "restrictions", "[\"M <= 1024\", \"BM % TM == 0\"]");
    amk_spec *s = load_mutated(j);
    amk_space *sp = space_of(s, NULL, NULL);
    ck_assert_int_eq(amk_space_count(sp), 0);
    amk_space_free(sp);
    check_enumeration(s, "small", NULL);
    sp = space_of(s, "small", NULL);
    /* every BM is a multiple of every TM: 3600 configs pass the restrictions, of which 2574
     * also fit the launch limits (threads per block, shared memory) */
    ck_assert_int_eq(amk_space_count(sp), 2574);
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

static int stop_after_5(const amk_config *c, void *ud)
{
    (void)c;
    return ++*(int *)ud >= 5;
}

START_TEST(test_amk_space_enumerate_stops_early)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_space *sp = space_of(s, NULL, NULL);
    int n = 0;
    ck_assert_int_eq(amk_space_enumerate(sp, stop_after_5, &n), AMK_OK);
    ck_assert_int_eq(n, 5);
    ck_assert_int_eq(amk_space_enumerate(sp, NULL, NULL), AMK_EINVAL);
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_space_count_known_values)
{
    amk_spec *s = load(GOOD "/tiny");
    amk_space *sp = space_of(s, NULL, NULL);
    /* (A+B) % 3 != 0: 14 of 20 (A,B) pairs; MODE y needs A < 3 (8 of those 14) */
    ck_assert_int_eq(amk_space_count(sp), 14 + 8 + 14 - 4);
    amk_space_free(sp);
    amk_spec_free(s);
    s = load(GOOD "/tgemm");
    amk_limits lim = h100();
    lim.max_threads = 16; /* below warp: nothing is valid */
    sp = space_of(s, NULL, &lim);
    ck_assert_int_eq(amk_space_count(sp), 0);
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_space_sample_uniform)
{
    amk_spec *s = load(GOOD "/tiny");
    amk_space *sp = space_of(s, NULL, NULL);
    const int nvalid = (int)amk_space_count(sp);
    ck_assert_int_eq(nvalid, 32);
    collect k = {.v = malloc(64 * sizeof(amk_config)), .cap = 64};
    amk_space_enumerate(sp, collect_cb, &k);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 42);
    const int draws = 32000;
    int counts[64] = {0};
    for (int t = 0; t < draws; t++) {
        amk_config c;
        ck_assert_int_eq(amk_space_sample(sp, &(amk_rng){gsl_below, rng}, &c, 1000), AMK_OK);
        ck_assert_int_eq(amk_space_valid(sp, &c, NULL), AMK_OK);
        int idx = -1;
        for (int i = 0; i < nvalid; i++)
            if (amk_config_equal(&k.v[i], &c))
                idx = i;
        ck_assert_int_ge(idx, 0);
        counts[idx]++;
    }
    double expect = (double)draws / nvalid, chi2 = 0;
    for (int i = 0; i < nvalid; i++) {
        ck_assert_int_gt(counts[i], 0);
        chi2 += (counts[i] - expect) * (counts[i] - expect) / expect;
    }
    /* 31 degrees of freedom: P(chi2 > 70) < 1e-4 for a uniform sampler */
    ck_assert_msg(chi2 < 70, "chi-square %.1f: sampling is not uniform", chi2);
    free(k.v);
    gsl_rng_free(rng);
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_space_sample_empty_and_args)
{
    amk_spec *s = load(GOOD "/tgemm");
    amk_limits lim = h100();
    lim.max_threads = 16;
    amk_space *sp = space_of(s, NULL, &lim);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    amk_config c;
    ck_assert_int_eq(amk_space_sample(sp, &(amk_rng){gsl_below, rng}, &c, 500), AMK_EEMPTY);
    ck_assert_int_eq(amk_space_sample(sp, &(amk_rng){gsl_below, rng}, &c, 0), AMK_EINVAL);
    ck_assert_int_eq(amk_space_sample(sp, NULL, &c, 10), AMK_EINVAL);
    gsl_rng_free(rng);
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_space_sample_huge_raw_space)
{
    /* 10^7 raw points: sampling must not enumerate */
    amk_spec *s = load(GOOD "/big");
    amk_space *sp = space_of(s, NULL, NULL);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    double t0 = amk_now_s();
    for (int i = 0; i < 10000; i++) {
        amk_config c;
        ck_assert_int_eq(amk_space_sample(sp, &(amk_rng){gsl_below, rng}, &c, 1000), AMK_OK);
        ck_assert_int_eq(amk_space_valid(sp, &c, NULL), AMK_OK);
    }
    ck_assert_msg(amk_now_s() - t0 < 5.0, "sampling too slow");
    gsl_rng_free(rng);
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_space_neighbours_one_step_valid)
{
    amk_spec *s = load(GOOD "/tiny");
    amk_space *sp = space_of(s, NULL, NULL);
    amk_config c, nb[64];
    amk_config_default(s, NULL, &c); /* A=1 B=1 MODE=y */
    int n = amk_space_neighbours(sp, &c, nb, 64);
    ck_assert_int_eq(n, 2); /* A=2 and B=2 make A+B=3; MODE x and z are fine */
    ck_assert_int_eq(nb[0].choice[2], 0);
    ck_assert_int_eq(nb[1].choice[2], 2);
    ck_assert_int_eq(amk_space_neighbours(sp, &c, nb, 1), 1);
    amk_space_free(sp);
    amk_spec_free(s);
    /* on a bigger space: every neighbour is one valid ±1 step, and none is missed */
    s = load(GOOD "/tgemm");
    amk_limits lim = h100();
    sp = space_of(s, NULL, &lim);
    amk_config_default(s, NULL, &c);
    n = amk_space_neighbours(sp, &c, nb, 64);
    int expect = 0;
    for (int i = 0; i < amk_spec_n_params(s); i++)
        for (int dlt = -1; dlt <= 1; dlt += 2) {
            amk_config t = c;
            int ch = c.choice[i] + dlt;
            if (ch < 0 || ch >= amk_spec_param_n_choices(s, i))
                continue;
            t.choice[i] = (uint8_t)ch;
            if (amk_space_valid(sp, &t, NULL) == AMK_OK)
                expect++;
        }
    ck_assert_int_eq(n, expect);
    for (int k = 0; k < n; k++) {
        int diff = 0;
        for (int i = 0; i < amk_spec_n_params(s); i++)
            diff += abs(nb[k].choice[i] - c.choice[i]);
        ck_assert_int_eq(diff, 1);
        ck_assert_int_eq(amk_space_valid(sp, &nb[k], NULL), AMK_OK);
    }
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

START_TEST(test_amk_space_from_unit_maps_and_repairs)
{
    amk_spec *s = load(GOOD "/tiny");
    amk_space *sp = space_of(s, NULL, NULL);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    amk_config c;
    double u0[3] = {0, 0, 0};
    ck_assert_int_eq(amk_space_from_unit(sp, u0, &(amk_rng){gsl_below, rng}, &c), AMK_OK);
    ck_assert_int_eq(c.choice[0], 0);
    ck_assert_int_eq(c.choice[1], 0);
    ck_assert_int_eq(c.choice[2], 0);
    double u1[3] = {0.3, 0.5, 0.4}; /* A=2 B=3 MODE=y: valid */
    ck_assert_int_eq(amk_space_from_unit(sp, u1, &(amk_rng){gsl_below, rng}, &c), AMK_OK);
    ck_assert_int_eq(c.choice[0], 1);
    ck_assert_int_eq(c.choice[1], 2);
    ck_assert_int_eq(c.choice[2], 1);
    double u2[3] = {0.99, 0.99, 0.99}; /* A=4 B=5: 9 % 3 == 0, invalid: one step away */
    ck_assert_int_eq(amk_space_from_unit(sp, u2, &(amk_rng){gsl_below, rng}, &c), AMK_OK);
    ck_assert_int_eq(amk_space_valid(sp, &c, NULL), AMK_OK);
    int dist = abs(c.choice[0] - 3) + abs(c.choice[1] - 4) + abs(c.choice[2] - 2);
    ck_assert_int_eq(dist, 1);
    double u3[3] = {NAN, 1.5, -2}; /* clamped */
    ck_assert_int_eq(amk_space_from_unit(sp, u3, &(amk_rng){gsl_below, rng}, &c), AMK_OK);
    ck_assert_int_eq(amk_space_valid(sp, &c, NULL), AMK_OK);
    gsl_rng_free(rng);
    amk_space_free(sp);
    amk_spec_free(s);
    /* empty space */
    s = load(GOOD "/tgemm");
    amk_limits lim = h100();
    lim.max_threads = 16;
    sp = space_of(s, NULL, &lim);
    double u[6] = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
    ck_assert_int_eq(amk_space_from_unit(sp, u, NULL, &c), AMK_EEMPTY);
    amk_space_free(sp);
    amk_spec_free(s);
}
END_TEST

/* ---- registry ---- */

START_TEST(test_amk_registry_create_from_env)
{
    amk_registry *r = good_registry();
    ck_assert_int_eq(amk_registry_count(r), 3);
    ck_assert_str_eq(amk_spec_name(amk_registry_at(r, 0)), "big");
    ck_assert_str_eq(amk_spec_name(amk_registry_at(r, 1)), "tgemm");
    ck_assert_str_eq(amk_spec_name(amk_registry_at(r, 2)), "tiny");
    ck_assert_ptr_null(amk_registry_at(r, 3));
    amk_registry_free(r);
    amk_registry_free(NULL);
    setenv("AMK_KERNELS_DIR", AMK_TEST_FIXTURES "/does-not-exist", 1);
    amk_diag d = {0};
    ck_assert_int_eq(amk_registry_create(&r, &d), AMK_ENOENT);
    assert_has(d.msg, "AMK_KERNELS_DIR=");
    /* a built-in folder with a broken spec is an error naming that spec */
    setenv("AMK_KERNELS_DIR", BAD, 1);
    ck_assert_int_ne(amk_registry_create(&r, &d), AMK_OK);
    assert_has(d.msg, BAD "/");
    assert_has(d.msg, "/spec.json");
}
END_TEST

START_TEST(test_amk_registry_create_builtins)
{
    unsetenv("AMK_KERNELS_DIR");
    /* The built-in kernels are part of the source tree: missing, the checkout is broken. */
    ck_assert_msg(amk_fs_exists(AMK_SOURCE_KERNELS_DIR "/gemm/spec.json"),
                  "built-in kernels not present in " AMK_SOURCE_KERNELS_DIR);
    amk_registry *r = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_registry_create(&r, &d) == AMK_OK, "built-ins: %s", d.msg);
    ck_assert_ptr_nonnull(amk_registry_find(r, "gemm"));
    for (int i = 0; i < amk_registry_count(r); i++) {
        const amk_spec *s = amk_registry_at(r, i);
        amk_space *sp = NULL;
        ck_assert_int_eq(amk_space_create(s, NULL, NULL, &sp, NULL), AMK_OK);
        ck_assert_int_gt(amk_space_count(sp), 0);
        amk_space_free(sp);
    }
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_registry_open_names_each_spec_dir)
{
    amk_registry *r = NULL;
    amk_diag d = {0};
    const char *dirs[] = {GOOD "/tiny", BAD "/cycle", AMK_TEST_FIXTURES "/nope"};
    setenv("AMK_KERNELS_DIR", GOOD, 1);
    ck_assert_int_eq(amk_registry_open(dirs, 1, &r, &d), AMK_OK);
    ck_assert_int_eq(amk_registry_count(r), 3); /* the user's tiny replaces the built-in */
    amk_registry_free(r);
    ck_assert_int_eq(amk_registry_open(dirs, 2, &r, &d), AMK_ECYCLE);
    ck_assert_ptr_null(r);
    assert_has(d.msg, BAD "/cycle/spec.json");
    ck_assert_int_eq(amk_registry_open(dirs + 2, 1, &r, &d), AMK_ENOENT);
    ck_assert_ptr_null(r);
    ck_assert_str_eq(d.msg, "--spec-dir " AMK_TEST_FIXTURES "/nope: no such directory");
    setenv("AMK_KERNELS_DIR", AMK_TEST_FIXTURES "/does-not-exist", 1);
    ck_assert_int_eq(amk_registry_open(NULL, 0, &r, &d), AMK_ENOENT);
    ck_assert_ptr_null(r);
    ck_assert_ptr_eq(strstr(d.msg, "loading the built-in kernels: AMK_KERNELS_DIR="), d.msg);
}
END_TEST

START_TEST(test_amk_registry_lookup_lists_known_kernels)
{
    amk_registry *r = good_registry();
    const amk_spec *s = NULL;
    amk_diag d = {0};
    ck_assert_int_eq(amk_registry_lookup(r, "tiny", &s, &d), AMK_OK);
    ck_assert_str_eq(amk_spec_name(s), "tiny");
    ck_assert_int_eq(amk_registry_lookup(r, "nosuch", &s, &d), AMK_ENOENT);
    ck_assert_ptr_null(s);
    ck_assert_str_eq(d.msg, "unknown kernel 'nosuch' (known: big, tgemm, tiny; add your own "
                            "with --spec-dir DIR)");
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_registry_add_dir_errors_and_replacement)
{
    amk_registry *r = good_registry();
    amk_diag d = {0};
    ck_assert_int_eq(amk_registry_add_dir(r, BAD "/cycle", &d), AMK_ECYCLE);
    assert_has(d.msg, BAD "/cycle/spec.json");
    ck_assert_int_ne(amk_registry_add_dir(r, BAD, &d), AMK_OK);
    assert_has(d.msg, BAD "/");
    ck_assert_int_eq(amk_registry_add_dir(r, AMK_TEST_FIXTURES "/nope", &d), AMK_ENOENT);
    /* an empty folder */
    char empty[256];
    amk_test_tmpdir_make(empty, sizeof empty, "space-defs-empty");
    ck_assert_int_eq(amk_registry_add_dir(r, empty, &d), AMK_ENOENT);
    assert_has(d.msg, "no spec.json");
    amk_test_tmpdir_remove(empty);
    /* a user kernel with a built-in's name replaces it */
    const amk_spec *before = amk_registry_find(r, "tgemm");
    cJSON *j = base_spec();
    const char *dir = make_dir(j);
    cJSON_Delete(j);
    ck_assert_int_eq(amk_registry_add_dir(r, dir, &d), AMK_OK);
    const amk_spec *after = amk_registry_find(r, "tgemm");
    ck_assert_ptr_ne(before, after);
    ck_assert_str_eq(amk_spec_dir(after), dir);
    ck_assert_str_eq(amk_spec_name(before), "tgemm"); /* the old one stays readable */
    ck_assert_int_eq(amk_registry_count(r), 3);
    /* two user kernels of one name are an error */
    ck_assert_int_eq(amk_registry_add_dir(r, dir, &d), AMK_EEXIST);
    assert_has(d.msg, "already used by");
    amk_test_tmpdir_remove(tmpdir);
    amk_registry_free(r);
}
END_TEST

START_TEST(test_amk_registry_find_by_name)
{
    amk_registry *r = good_registry();
    ck_assert_str_eq(amk_spec_name(amk_registry_find(r, "tiny")), "tiny");
    ck_assert_ptr_null(amk_registry_find(r, "tin"));
    ck_assert_ptr_null(amk_registry_find(r, NULL));
    ck_assert_ptr_null(amk_registry_find(NULL, "tiny"));
    amk_registry_free(r);
}
END_TEST

/* ---- the Python subset of T1 files (pyexpr.c) ---- */

static const char *const py_vars[] = {"x", "y", "z"};

static int py_var(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, py_vars[i]))
            return i;
    return -1;
}

static int py_lookup(void *ud, const char *name, py_val *out)
{
    const int64_t *v = ud;
    int i = py_var(name);
    if (i < 0)
        return AMK_ENOENT;
    memset(out, 0, sizeof *out);
    out->kind = PY_V_INT;
    out->i = v[i];
    return AMK_OK;
}

static int py_leaf(void *ud, const py_node *n, const char *src, amk_sb *sb, amk_diag *d)
{
    (void)ud;
    (void)src;
    (void)d;
    if (n->kind != PY_NAME || py_var(n->str) < 0)
        return AMK_ENOENT;
    amk_sb_printf(sb, "%s", n->str);
    return AMK_OK;
}

static int py_resolve(void *ud, const char *name, size_t len)
{
    (void)ud;
    for (int i = 0; i < 3; i++)
        if (strlen(py_vars[i]) == len && !memcmp(py_vars[i], name, len))
            return i;
    return -1;
}

/* Python's value of src with x, y, z bound (AMK_OK) or its error code. */
static int py_value(const char *src, const int64_t *xyz, int64_t *out)
{
    py_node *n = NULL;
    amk_diag d = {0};
    int rc = amk_py_parse(src, &n, &d);
    ck_assert_msg(rc == AMK_OK, "parse '%s': %s", src, d.msg);
    py_val v = {0};
    rc = amk_py_eval(n, src, py_lookup, (void *)xyz, &v, &d);
    amk_py_free(n);
    if (rc == AMK_OK) {
        ck_assert_int_eq(v.kind, PY_V_INT);
        *out = v.i;
    }
    amk_py_val_clear(&v);
    return rc;
}

/* amk's value of src translated (boolean or value context) with x, y, z bound. */
static int amk_value(const char *src, int boolean, const int64_t *xyz, int64_t *out, char **text)
{
    py_node *n = NULL;
    amk_diag d = {0};
    ck_assert_int_eq(amk_py_parse(src, &n, &d), AMK_OK);
    int rc = amk_py_to_amk(n, src, boolean, py_leaf, NULL, text, &d);
    amk_py_free(n);
    ck_assert_msg(rc == AMK_OK, "translate '%s': %s", src, d.msg);
    amk_expr *e = NULL;
    rc = amk_expr_parse(*text, py_resolve, NULL, &e, &d);
    ck_assert_msg(rc == AMK_OK, "'%s' -> '%s' does not parse: %s", src, *text, d.msg);
    rc = amk_expr_eval(e, xyz, out, &d);
    amk_expr_free(e);
    return rc;
}

/* `or` as a number is a ? a : b, which repeats the fold so far: a long chain doubles per
 * operand. Past the cap it is a clear error (CI's fuzzer found a chain whose translation took
 * over 10 s to parse); as a condition the same chain stays linear. */
START_TEST(test_amk_py_to_amk_caps_value_and_or_chains)
{
    amk_sb src = {0};
    for (int i = 0; i < 24; i++)
        amk_sb_printf(&src, "%sx - %d", i ? " or " : "", i);
    py_node *n = NULL;
    amk_diag d = {0};
    ck_assert_int_eq(amk_py_parse(src.p, &n, &d), AMK_OK);
    char *text = NULL;
    ck_assert_int_eq(amk_py_to_amk(n, src.p, 0, py_leaf, NULL, &text, &d), AMK_EEXPR);
    ck_assert_ptr_null(text);
    ck_assert_msg(strstr(d.msg, "'or' used as a number at column") &&
                      strstr(d.msg, "exceeds 65536 bytes"), "%s", d.msg);
    ck_assert_int_eq(amk_py_to_amk(n, src.p, 1, py_leaf, NULL, &text, &d), AMK_OK);
    ck_assert_uint_lt(strlen(text), 1024);
    free(text);
    amk_py_free(n);
    amk_sb_free(&src);
}
END_TEST

/* Known Python results (checked with CPython), then the translation against the evaluator
 * on every x, y, z in -4..4: the same value as a number, the same truth as a condition, and
 * an error (an invalid config) exactly where Python raises or leaves 64 bits. */
START_TEST(test_amk_py_to_amk_matches_python_semantics)
{
    static const struct {
        const char *src;
        int64_t want;
    } known[] = {
        {"-7 // 2", -4},         {"-7 % 3", 2},          {"7 % -3", -2},
        {"7 // -2", -4},         {"2 ** 3 ** 2", 512},    {"-2 ** 2", -4},
        {"1 < 2 < 3", 1},        {"3 > 2 > 1 == 1", 1},   {"1 < 3 < 2", 0},
        {"not 1 == 2", 1},       {"1 or 0 and 0", 1},     {"0 and 1 or 2", 2},
        {"(0 or 3) * 2", 6},     {"5 & 3 == 1", 1},       {"1 + 2 << 1", 6},
        {"not 0 + 1", 0},        {"2 * -3 ** 2", -18},    {"max(1, -2, 3) - min(4, 5)", -1},
        {"12 / 4 * 2", 6},       {"-(-7 // 2) % 3", 1},   {"True + True", 2},
        {"(3 and 0) + 5", 5},    {"-6 >> 1", -3},         {"10 - 2 - 3", 5},
        {"-5 >> 70", -1},        {"5 >> 64", 0},          {"1 << 62 >> 61", 2},
    };
    int64_t none[3] = {0, 0, 0};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        int64_t p = 0, a = 0;
        char *text = NULL;
        ck_assert_int_eq(py_value(known[i].src, none, &p), AMK_OK);
        ck_assert_msg(p == known[i].want, "python '%s' = %lld, want %lld", known[i].src,
                      (long long)p, (long long)known[i].want);
        ck_assert_int_eq(amk_value(known[i].src, 0, none, &a, &text), AMK_OK);
        ck_assert_msg(a == known[i].want, "'%s' -> '%s' = %lld, want %lld", known[i].src, text,
                      (long long)a, (long long)known[i].want);
        free(text);
    }
    static const char *const exprs[] = {
        "x % y != 1 or x // y < 0",
        "-2 <= x // y <= 2 or not z",
        "x ** 2 <= y * 2 + 8 or z < 0",
        "(x or z) * y >= -4",
        "(x and y and z) - (x or y or z)",
        "not (x > 0 and z == 1) or y % 2 == 0",
        "x * y & 3 != 1",
        "-x ** 2 < -4 or z % -3 == -2",
        "x < y <= z != x",
        "x | y < z & 7",
        "(x < y) == (y < z)",
        "x - (y - z) + -(-x)",
        "x // y // z % (x + 5)",
        "2 ** (x + 4) // (y ** 2 + 1)",
        "max(x, y) * min(y, z, 1)",
        "(x << 2) + (y >> 1)",
        "x * y / 1 - z",
        "x >> (y + 64) | z >> 1",
        "x << y",
    };
    for (size_t k = 0; k < sizeof exprs / sizeof exprs[0]; k++)
        for (int64_t x = -4; x <= 4; x++)
            for (int64_t y = -4; y <= 4; y++)
                for (int64_t z = -4; z <= 4; z++) {
                    int64_t xyz[3] = {x, y, z}, p = 0, a = 0, b = 0;
                    int prc = py_value(exprs[k], xyz, &p);
                    if (prc == AMK_EEXPR)
                        continue; /* a float in Python: the importer refuses those */
                    char *t1 = NULL, *t2 = NULL;
                    int arc = amk_value(exprs[k], 0, xyz, &a, &t1);
                    int brc = amk_value(exprs[k], 1, xyz, &b, &t2);
                    ck_assert_msg((prc == AMK_OK) == (arc == AMK_OK) && (prc == AMK_OK) ==
                                  (brc == AMK_OK),
                                  "'%s' at x=%lld y=%lld z=%lld: python %s, amk %s ('%s')",
                                  exprs[k], (long long)x, (long long)y, (long long)z,
                                  amk_err_name(prc), amk_err_name(arc), t1);
                    if (prc == AMK_OK) {
                        ck_assert_msg(a == p, "'%s' -> '%s' at x=%lld y=%lld z=%lld: %lld, "
                                      "python %lld", exprs[k], t1, (long long)x, (long long)y,
                                      (long long)z, (long long)a, (long long)p);
                        ck_assert_msg((b != 0) == (p != 0), "'%s' -> '%s' (condition): truth "
                                      "differs at x=%lld y=%lld z=%lld", exprs[k], t2,
                                      (long long)x, (long long)y, (long long)z);
                    }
                    free(t1);
                    free(t2);
                }
}
END_TEST

START_TEST(test_amk_py_parse_names_construct_and_column)
{
    static const struct {
        const char *src, *needle;
    } bad[] = {
        {"lambda: x", "'lambda' here at column 1"},
        {"x if y else z", "conditional expression 'x if c else y' at column 3"},
        {"x in [1]", "operator 'in' / 'is' / 'not in' (only < <= > >= == != compare) at column 3"},
        {"x is None", "operator 'in' / 'is'"},
        {"x ^ y", "operator '^' at column 3"},
        {"~x", "operator '~' at column 1"},
        {"x @ y", "operator '@' at column 3"},
        {"1.5 < x", "float literal (amk params and expressions are integers) at column 1"},
        {"x < 1e3", "float literal"},
        {"0x10", "number literal other than decimal"},
        {"(x, y)", "tuple at column 3"},
        {"x[1:2]", "expected ']' (slices are not supported) at column 4"},
        {"x.y", "attribute access at column 2"},
        {"{1: 2}", "dict or set display at column 1"},
        {"[i for i in range(3) for j in range(3)]", "nested 'for' in a list comprehension"},
        {"[(i, j) for i, j in z]", "tuple at column 4"},
        {"x = 1", "'=' (slices, assignments, walrus) at column 3"},
        {"x +", "expected a value at column 4"},
        {"(x", "expected ')' at column 3"},
        {"'a\\n'", "escape sequence in a string literal at column 3"},
        {"", "empty expression"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        py_node *n = NULL;
        amk_diag d = {0};
        int rc = amk_py_parse(bad[i].src, &n, &d);
        ck_assert_msg(rc == AMK_EEXPR, "'%s' parsed (rc %d)", bad[i].src, rc);
        ck_assert_ptr_null(n);
        ck_assert_msg(strstr(d.msg, bad[i].needle), "'%s': '%s' lacks '%s'", bad[i].src, d.msg,
                      bad[i].needle);
    }
}
END_TEST

/* Issue 24: a flat chain nests as deep as it is long; the parser bounds the tree's height
 * (every later walk recurses once a level), whatever the operator and its associativity. */
START_TEST(test_amk_py_parse_long_chains_refused)
{
    static const char *const ops[] = {"+", "-", "*", "//", "%", "<<", ">>", "&", "|", "**",
                                      NULL};
    enum { TERMS = 100000 };
    char *buf = malloc((size_t)TERMS * 4 + 16);
    ck_assert_ptr_nonnull(buf);
    for (int o = 0; ops[o]; o++)
        for (int terms = 200; terms <= TERMS; terms = terms == 200 ? TERMS : TERMS + 1) {
            size_t k = strlen(ops[o]), at = 0;
            for (int i = 0; i < terms; i++) {
                if (i) {
                    memcpy(buf + at, ops[o], k);
                    at += k;
                }
                buf[at++] = 'x';
            }
            buf[at] = '\0';
            py_node *n = NULL;
            amk_diag d = {0};
            int rc = amk_py_parse(buf, &n, &d);
            if (terms == TERMS) {
                ck_assert_msg(rc == AMK_EEXPR && strstr(d.msg, "too deeply nested"),
                              "x%sx... (%d terms): %s", ops[o], terms, d.msg);
                ck_assert_ptr_null(n);
            } else if (strcmp(ops[o], "**")) { /* ** nests by the parser's recursion: 64 */
                ck_assert_msg(rc == AMK_OK, "x%sx... (%d terms): %s", ops[o], terms, d.msg);
            }
            amk_py_free(n);
        }
    /* calls and subscripts nest too: f(f(f(... and x[x[x[... (found by fuzz/chain.h) */
    static const char *const opens[] = {"f(", "x[", "f('',", NULL};
    for (int o = 0; opens[o]; o++) {
        size_t k = strlen(opens[o]);
        for (int i = 0; i < TERMS / 4; i++)
            memcpy(buf + (size_t)i * k, opens[o], k);
        strcpy(buf + (size_t)(TERMS / 4) * k, "1");
        py_node *n = NULL;
        amk_diag d = {0};
        int rc = amk_py_parse(buf, &n, &d);
        ck_assert_msg(rc == AMK_EEXPR && strstr(d.msg, "too deeply nested"), "%s...: %.80s",
                      opens[o], d.msg);
        ck_assert_ptr_null(n);
    }
    free(buf);
}
END_TEST

START_TEST(test_amk_py_eval_value_lists)
{
    static const struct {
        const char *src;
        size_t n;
        int64_t first, last;
    } ok[] = {
        {"[2**i for i in range(0, 6)]", 6, 1, 32},
        {"[1, 2] + list(range(32, 1024+1, 32))", 34, 1, 1024},
        {"[i for i in range(1, 11)]", 10, 1, 10},
        {"list(range(10, 0, -3))", 4, 10, 1},
        {"[x * 2 for x in range(-3, 3) if x % 2 == 0]", 3, -4, 4},
        {"range(3)", 3, 0, 2},
        {"[-1, -(2), +3]", 3, -1, 3},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        py_node *n = NULL;
        amk_diag d = {0};
        py_val v = {0};
        ck_assert_int_eq(amk_py_parse(ok[i].src, &n, &d), AMK_OK);
        int rc = amk_py_eval(n, ok[i].src, NULL, NULL, &v, &d);
        amk_py_free(n);
        ck_assert_msg(rc == AMK_OK, "'%s': %s", ok[i].src, d.msg);
        ck_assert_int_eq(v.kind, PY_V_LIST);
        ck_assert_uint_eq(v.n, ok[i].n);
        ck_assert_int_eq(v.ints[0], ok[i].first);
        ck_assert_int_eq(v.ints[v.n - 1], ok[i].last);
        amk_py_val_clear(&v);
    }
    static const struct {
        const char *src, *needle;
    } bad[] = {
        {"[1] + range(3)", "a range in arithmetic (wrap it in list()) at column 5"},
        {"[[1], [2]]", "nested list at column 2"},
        {"[1, 'a']", "list mixing strings and integers at column 5"},
        {"sorted([2, 1])", "function 'sorted'"},
        {"range(1, 5, 0)", "range() step must not be zero"},
        {"[2 ** 64]", "result outside 64-bit integers at column 4"},
        {"[1 / 3]", "'/' gives the float 1/3"},
        {"[1 // 0]", "division by zero at column 4"},
        {"[y]", "unknown name 'y' at column 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        py_node *n = NULL;
        amk_diag d = {0};
        py_val v = {0};
        ck_assert_int_eq(amk_py_parse(bad[i].src, &n, &d), AMK_OK);
        int rc = amk_py_eval(n, bad[i].src, NULL, NULL, &v, &d);
        amk_py_free(n);
        ck_assert_msg(rc != AMK_OK, "'%s' evaluated", bad[i].src);
        ck_assert_msg(strstr(d.msg, bad[i].needle), "'%s': '%s' lacks '%s'", bad[i].src, d.msg,
                      bad[i].needle);
        amk_py_val_clear(&v);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("space_defs");
    struct {
        const char *name;
        const TTest *tests[16];
    } groups[] = {
        {"amk_spec_load", {test_amk_spec_load_valid_fixture, test_amk_spec_load_malformed_json,
                           test_amk_spec_load_missing_file, test_amk_spec_load_fixture_errors,
                           test_amk_spec_load_bad_param_values, test_amk_spec_load_bad_names,
                           test_amk_spec_load_bad_top_level, test_amk_spec_load_bad_shapes,
                           test_amk_spec_load_cycle_names_path,
                           test_amk_spec_load_default_arithmetic_errors,
                           test_amk_spec_load_bad_buffers_and_args,
                           test_amk_spec_load_bad_requires}},
        {"amk_spec_compile_arch", {test_amk_spec_compile_arch_requirement}},
        {"amk_spec_param", {test_amk_spec_param_accessors}},
        {"amk_spec_dims", {test_amk_spec_dims_and_dtypes}},
        {"amk_dtype_size", {test_amk_dtype_size_known_and_unknown}},
        {"amk_spec_shape", {test_amk_spec_shape_named_inherit_default}},
        {"amk_shape_parse", {test_amk_shape_parse_text_and_names}},
        {"amk_shape_format", {test_amk_shape_format_canonical_text}},
        {"amk_shape_from_json", {test_amk_shape_from_json_defaults_and_errors}},
        {"amk_shape_to_json", {test_amk_shape_to_json_round_trip}},
        {"amk_config_default", {test_amk_config_default_uses_defaults}},
        {"amk_config_param", {test_amk_config_param_values}},
        {"amk_config_equal", {test_amk_config_equal_compares_all}},
        {"amk_config_from_json", {test_amk_config_from_json_rejects_bad_values,
                                  test_amk_config_from_json_rejects_bad_structure,
                                  test_amk_config_from_json_accepts_valid}},
        {"amk_config_parse", {test_amk_config_parse_malformed,
                              test_amk_config_parse_refuses_non_integer_dims_keeps_integers}},
        {"amk_json_parse", {test_amk_json_parse_names_depth_nul_and_position}},
        {"amk_config_to_json", {test_amk_config_to_json_round_trip}},
        {"amk_config_canonical", {test_amk_config_canonical_sorted_compact}},
        {"amk_config_id", {test_amk_config_id_pinned_fnv1a}},
        {"amk_config_params_json", {test_amk_config_params_json_sorted}},
        {"amk_config_from_params_json", {test_amk_config_from_params_json_round_trip}},
        {"amk_config_defines", {test_amk_config_defines_only_declared_ints}},
        {"amk_config_check", {test_amk_config_check_restrictions}},
        {"amk_config_eval", {test_amk_config_eval_named_values}},
        {"amk_spec_compiled", {test_amk_spec_compiled_kernel_reference_buffers,
                               test_amk_spec_tolerance_defaults_resolved_once}},
        {"amk_spec_reference_vary", {test_amk_spec_load_reference_vary}},
        {"amk_config_reference_config",
         {test_amk_config_reference_config_default_with_vary_params}},
        {"amk_config_same_reference", {test_amk_config_same_reference_vary_and_dtype}},
        {"amk_config_launch", {test_amk_config_launch_geometry}},
        {"amk_spec_asis", {test_amk_spec_load_asis_fields, test_amk_spec_load_asis_errors,
                           test_amk_spec_load_data_files, test_amk_spec_load_check_external}},
        {"amk_config_tensor_map", {test_amk_spec_load_bad_tensor_maps,
                                   test_amk_config_tensor_map_values,
                                   test_amk_config_check_tensor_map_rules,
                                   test_amk_config_check_cluster_divides_grid,
                                   test_amk_spec_compile_arch_nvidia_only_features}},
        {"amk_config_cost", {test_amk_config_cost_terms}},
        {"amk_space_create", {test_amk_space_create_accessors}},
        {"amk_space_raw_size", {test_amk_space_raw_size_product}},
        {"amk_space_valid", {test_amk_space_valid_checks_shape_and_restrictions}},
        {"amk_space_enumerate", {test_amk_space_enumerate_matches_brute_force,
                                 test_amk_space_enumerate_arithmetic_errors_invalidate,
                                 test_amk_space_enumerate_param_free_restriction,
                                 test_amk_space_enumerate_stops_early}},
        {"amk_space_count", {test_amk_space_count_known_values}},
        {"amk_space_sample", {test_amk_space_sample_uniform, test_amk_space_sample_empty_and_args,
                              test_amk_space_sample_huge_raw_space}},
        {"amk_space_neighbours", {test_amk_space_neighbours_one_step_valid}},
        {"amk_space_from_unit", {test_amk_space_from_unit_maps_and_repairs}},
        {"amk_registry_create", {test_amk_registry_create_from_env,
                                 test_amk_registry_create_builtins}},
        {"amk_registry_add_dir", {test_amk_registry_add_dir_errors_and_replacement}},
        {"amk_registry_find", {test_amk_registry_find_by_name}},
        {"amk_registry_open", {test_amk_registry_open_names_each_spec_dir}},
        {"amk_registry_lookup", {test_amk_registry_lookup_lists_known_kernels}},
        {"amk_py_parse", {test_amk_py_parse_names_construct_and_column,
                          test_amk_py_parse_long_chains_refused}},
        {"amk_py_eval", {test_amk_py_eval_value_lists}},
        {"amk_py_to_amk", {test_amk_py_to_amk_matches_python_semantics,
                           test_amk_py_to_amk_caps_value_and_or_chains}},
    };
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        TCase *tc = tcase_create(groups[g].name);
        tcase_set_timeout(tc, 60);
        for (int t = 0; groups[g].tests[t]; t++)
            tcase_add_test(tc, groups[g].tests[t]);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    return amk_test_run(suite());
}

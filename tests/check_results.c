/* Check suite of the results module: the TSV codec, appender and reader (header, torn rows,
 * concurrent appends, pandas), the history of a search over a file (amk_history_load), the id set, best.json and the report. */
#include "amk_results.h"
#include "amk_search.h" /* amk_history_rule */
#include "amk_test.h"
#include "results_int.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ----------------------------------------------------------------------- */

static char tmpdir[256];

static void setup_tmp(void)
{
    amk_test_tmpdir_make(tmpdir, sizeof tmpdir, "results");
}

static void teardown_tmp(void)
{
    amk_test_tmpdir_remove(tmpdir);
}

static const char *tpath(const char *name)
{
    static char buf[8][512];
    static int k;
    char *p = buf[k++ & 7];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static char *slurp(const char *path)
{
    char *data = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_fs_read_all(path, &data, NULL, &d) == AMK_OK, "%s", d.msg);
    return data;
}

/* A row with every field set to a value that survives %.9g / %.6g exactly. */
static amk_row full_row(int64_t trial)
{
    amk_row r;
    amk_row_init(&r);
    r.trial = trial;
    snprintf(r.time, sizeof r.time, "2026-11-22T10:12:%02dZ", (int)(trial % 60));
    snprintf(r.kernel, sizeof r.kernel, "gemm");
    snprintf(r.shape, sizeof r.shape, "M=4096,N=4096,K=4096,dtype=fp16");
    amk_hash_hex(amk_hash64(&trial, sizeof trial), r.config_id);
    snprintf(r.params, sizeof r.params, "{\"BK\":32,\"BM\":128,\"BN\":%d}", (int)trial);
    snprintf(r.source, sizeof r.source, "mutate");
    r.status = AMK_STATUS_OK;
    r.latency_us = 123.456789;
    r.latency_kind = AMK_LAT_MEASURED;
    r.spread = 0.0123;
    r.predicted_us = 98.7654321;
    r.bound_us = 50.5;
    r.pct_of_roofline = 40.9;
    r.compile_ms = 1234.5;
    r.cache_hit = 1;
    r.kept = 1;
    snprintf(r.device, sizeof r.device, "NVIDIA H100 80GB HBM3");
    snprintf(r.note, sizeof r.note, "cold_l2");
    snprintf(r.clock_regime, sizeof r.clock_regime, "sustained");
    r.sm_mhz = 1755.5;
    r.sm_mhz_min = 1740;
    r.sm_mhz_max = 1770;
    r.mem_mhz = 2619;
    r.power_w = 688.25;
    r.temp_c = 61;
    snprintf(r.throttle, sizeof r.throttle, "sw_power_cap");
    r.energy_uj = 84.968;
    snprintf(r.peer, sizeof r.peer, "cublas");
    r.peer_us = 130.5;
    r.vs_peer = 1.0571;
    r.objective = AMK_OBJ_TIME; /* the history tests' rows; the v2 test round-trips edp */
    r.energy_window_ms = 1103.25;
    r.energy_ticks = 11;
    r.cost_s = 3.18406;
    return r;
}

static amk_row key_row(int64_t trial, const char *kernel, const char *shape,
                       const char *device, amk_status st, amk_latency_kind kind, double lat,
                       int kept)
{
    amk_row r = full_row(trial);
    snprintf(r.kernel, sizeof r.kernel, "%s", kernel);
    snprintf(r.shape, sizeof r.shape, "%s", shape);
    snprintf(r.device, sizeof r.device, "%s", device);
    r.status = st;
    r.latency_kind = kind;
    r.latency_us = lat;
    r.kept = kept;
    return r;
}

static char *format_line(const amk_row *r)
{
    amk_sb sb = {0};
    amk_row_format(r, &sb);
    return amk_sb_take(&sb);
}


typedef struct collected {
    amk_row rows[64];
    size_t n;
} collected;

static int collect(const amk_row *r, void *ud)
{
    collected *c = ud;
    if (c->n < 64)
        c->rows[c->n] = *r;
    c->n++;
    return 0;
}

static void assert_rows_equal(const amk_row *a, const amk_row *b)
{
    ck_assert_int_eq(a->trial, b->trial);
    ck_assert_str_eq(a->time, b->time);
    ck_assert_str_eq(a->kernel, b->kernel);
    ck_assert_str_eq(a->shape, b->shape);
    ck_assert_str_eq(a->config_id, b->config_id);
    ck_assert_str_eq(a->params, b->params);
    ck_assert_str_eq(a->source, b->source);
    ck_assert_int_eq(a->status, b->status);
    ck_assert_int_eq(a->latency_kind, b->latency_kind);
    const double *da[] = {&a->latency_us, &a->spread, &a->predicted_us, &a->bound_us,
                          &a->pct_of_roofline, &a->compile_ms, &a->sm_mhz, &a->sm_mhz_min,
                          &a->sm_mhz_max, &a->mem_mhz, &a->power_w, &a->temp_c,
                          &a->energy_uj, &a->peer_us, &a->vs_peer, &a->energy_window_ms,
                          &a->cost_s};
    const double *db[] = {&b->latency_us, &b->spread, &b->predicted_us, &b->bound_us,
                          &b->pct_of_roofline, &b->compile_ms, &b->sm_mhz, &b->sm_mhz_min,
                          &b->sm_mhz_max, &b->mem_mhz, &b->power_w, &b->temp_c,
                          &b->energy_uj, &b->peer_us, &b->vs_peer, &b->energy_window_ms,
                          &b->cost_s};
    for (int i = 0; i < (int)(sizeof da / sizeof da[0]); i++) {
        if (isnan(*da[i]))
            ck_assert_msg(isnan(*db[i]), "double %d: NAN became %.17g", i, *db[i]);
        else
            ck_assert_msg(*da[i] == *db[i], "double %d: %.17g != %.17g", i, *da[i], *db[i]);
    }
    ck_assert_int_eq(a->cache_hit, b->cache_hit);
    ck_assert_int_eq(a->kept, b->kept);
    ck_assert_str_eq(a->device, b->device);
    ck_assert_str_eq(a->note, b->note);
    ck_assert_str_eq(a->clock_regime, b->clock_regime);
    ck_assert_str_eq(a->throttle, b->throttle);
    ck_assert_str_eq(a->peer, b->peer);
    ck_assert_int_eq(a->objective, b->objective);
    ck_assert_int_eq(a->energy_ticks, b->energy_ticks);
}

/* ---- amk_row_format / amk_row_parse ------------------------------------------------ */

/* The report's JSON text as a tree, for the assertions. */
static cJSON *report_tree(const amk_report *rep)
{
    return amk_test_json_tree(amk_report_json(rep));
}

START_TEST(test_amk_row_parse_round_trips_every_field)
{
    amk_row r = full_row(57), back;
    amk_diag d = {0};
    char *line = format_line(&r);
    size_t len = strlen(line);
    ck_assert_int_eq(line[len - 1], '\n');
    ck_assert_msg(amk_row_parse(line, len - 1, &back, &d) == AMK_OK, "%s", d.msg);
    assert_rows_equal(&r, &back);
    free(line);
}
END_TEST

START_TEST(test_amk_row_parse_round_trips_empty_fields)
{
    amk_row r, back;
    amk_diag d = {0};
    amk_row_init(&r);
    r.trial = 3;
    r.status = AMK_STATUS_COMPILE_ERROR;
    char *line = format_line(&r);
    /* status, kept and objective are the only non-empty fields after the trial. */
    ck_assert_str_eq(line, "3\t\t\t\t\t\t\tcompile_error\t\t\t\t\t\t\t\t\t0\t\t"
                           "\t\t\t\t\t\t\t\t\t\t\t\t\ttime\t\t\t\n");
    ck_assert_msg(amk_row_parse(line, strlen(line) - 1, &back, &d) == AMK_OK, "%s", d.msg);
    assert_rows_equal(&r, &back);
    ck_assert(isnan(back.latency_us));
    ck_assert_int_eq(back.latency_kind, AMK_LAT_NONE);
    ck_assert_int_eq(back.cache_hit, -1);
    free(line);
}
END_TEST

/* v4's last column: a trial's cost is written as a decimal (%.6g) and read back; an unknown
 * cost is the empty field and reads back NAN. */
START_TEST(test_amk_row_parse_round_trips_cost_s)
{
    amk_row r = full_row(5), back;
    amk_diag d = {0};
    r.cost_s = 0.0421875;
    char *line = format_line(&r);
    size_t len = strlen(line);
    ck_assert_msg(len > 14 && strcmp(line + len - 14, "\t11\t0.0421875\n") == 0, "%s", line);
    ck_assert_msg(amk_row_parse(line, len - 1, &back, &d) == AMK_OK, "%s", d.msg);
    ck_assert_double_eq(back.cost_s, 0.0421875);
    free(line);
    r.cost_s = 0;
    line = format_line(&r);
    len = strlen(line);
    ck_assert_msg(strcmp(line + len - 6, "\t11\t0\n") == 0, "%s", line);
    ck_assert_msg(amk_row_parse(line, len - 1, &back, &d) == AMK_OK, "%s", d.msg);
    ck_assert(back.cost_s == 0 && !signbit(back.cost_s));
    free(line);
    r.cost_s = NAN;
    line = format_line(&r);
    len = strlen(line);
    ck_assert_msg(strcmp(line + len - 5, "\t11\t\n") == 0, "%s", line);
    back.cost_s = 1;
    ck_assert_msg(amk_row_parse(line, len - 1, &back, &d) == AMK_OK, "%s", d.msg);
    ck_assert(isnan(back.cost_s));
    ck_assert_int_eq(back.energy_ticks, 11);
    free(line);
}
END_TEST

START_TEST(test_amk_row_format_replaces_tabs_newlines_and_hash)
{
    amk_row r = full_row(1), back;
    amk_diag d = {0};
    snprintf(r.note, sizeof r.note, "\"bad\"\ttab\nnewline\rcr #5 done");
    snprintf(r.source, sizeof r.source, "a#b");
    char *line = format_line(&r);
    ck_assert_ptr_null(strchr(line, '#'));
    ck_assert_ptr_eq(strchr(line, '\n'), line + strlen(line) - 1);
    ck_assert_msg(amk_row_parse(line, strlen(line) - 1, &back, &d) == AMK_OK, "%s", d.msg);
    ck_assert_str_eq(back.note, "'bad\" tab newline cr  5 done");
    ck_assert_str_eq(back.source, "a b");
    free(line);
}
END_TEST

START_TEST(test_amk_row_format_columns_follow_header_macro)
{
    static const char *const want[] = {
#define XX(c) #c,
        AMK_TSV_COLUMNS(XX)
#undef XX
    };
    ck_assert_int_eq(AMK__TSV_NCOLS, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < AMK__TSV_NCOLS; i++)
        ck_assert_str_eq(amk__tsv_column_name(i), want[i]);
    ck_assert_ptr_null(amk__tsv_column_name(AMK__TSV_NCOLS));
    ck_assert_str_eq(amk__tsv_header_block(),
                     "# amk results v4\ntrial\ttime\tkernel\tshape\tconfig_id\tparams\tsource\t"
                     "status\tlatency_us\tlatency_kind\tspread\tpredicted_us\tbound_us\t"
                     "pct_of_roofline\tcompile_ms\tcache_hit\tkept\tdevice\tnote\t"
                     "clock_regime\tsm_mhz\tsm_mhz_min\tsm_mhz_max\tmem_mhz\tpower_w\t"
                     "temp_c\tthrottle\tenergy_uj\tpeer\tpeer_us\tvs_peer\tobjective\t"
                     "energy_window_ms\tenergy_ticks\tcost_s\n");
    ck_assert_str_eq(amk__tsv_column_name(AMK__TSV_NCOLS_V1 - 1), "note");
    ck_assert_str_eq(amk__tsv_column_name(AMK__TSV_NCOLS_V2 - 1), "vs_peer");
    ck_assert_str_eq(amk__tsv_column_name(AMK__TSV_NCOLS_V3 - 1), "energy_ticks");
    ck_assert_int_eq(amk__tsv_version(AMK__TSV_NCOLS_V1), 1);
    ck_assert_int_eq(amk__tsv_version(AMK__TSV_NCOLS_V2), 2);
    ck_assert_int_eq(amk__tsv_version(AMK__TSV_NCOLS_V3), 3);
    ck_assert_int_eq(amk__tsv_version(AMK__TSV_NCOLS), 4);
}
END_TEST

/* Replaces field `col` of a formatted full row with `value`; returns the line, no newline. */
static char *line_with(int col, const char *value)
{
    amk_row r = full_row(9);
    char *line = format_line(&r);
    amk_sb sb = {0};
    char *p = line;
    for (int i = 0; i < AMK__TSV_NCOLS; i++) {
        char *end = strpbrk(p, "\t\n");
        ck_assert_ptr_nonnull(end);
        if (i)
            amk_sb_putn(&sb, "\t", 1);
        if (i == col)
            amk_sb_printf(&sb, "%s", value);
        else
            amk_sb_putn(&sb, p, (size_t)(end - p));
        p = end + 1;
    }
    free(line);
    return amk_sb_take(&sb);
}

static const struct bad_field {
    int col;
    const char *value, *expect;
} bad_fields[] = {
    {AMK__COL_trial, "", "column trial: empty"},
    {AMK__COL_trial, "1.5", "column trial: '1.5' is not an integer"},
    {AMK__COL_trial, "-4", "column trial: '-4' is negative"},
    {AMK__COL_trial, "99999999999999999999", "column trial: '99999999999999999999' is out of range"},
    {AMK__COL_config_id, "xyz", "column config_id: 'xyz' is not 16 lowercase hex digits"},
    {AMK__COL_config_id, "0123456789ABCDEF", "column config_id: '0123456789ABCDEF'"},
    {AMK__COL_status, "okay", "column status: 'okay' is not a status (one of ok, rejected"},
    {AMK__COL_latency_us, "abc", "column latency_us: 'abc' is not a number"},
    {AMK__COL_latency_us, " 1", "column latency_us: ' 1' is not a number"},
    {AMK__COL_latency_us, "1.5us", "column latency_us: '1.5us' is not a number"},
    {AMK__COL_latency_us, "0x10", "column latency_us: '0x10' is not a number"},
    {AMK__COL_spread, "nan", "column spread: 'nan' is not a number"},
    {AMK__COL_bound_us, "1e999", "column bound_us: '1e999' is not a finite number"},
    {AMK__COL_latency_kind, "guess", "column latency_kind: 'guess' is not measured"},
    {AMK__COL_cache_hit, "2", "column cache_hit: '2' is not 0, 1 or empty"},
    {AMK__COL_kept, "", "column kept: '' is not 0 or 1"},
    {AMK__COL_kept, "yes", "column kept: 'yes' is not 0 or 1"},
    {AMK__COL_cost_s, "1.5s", "column cost_s: '1.5s' is not a number"},
    {AMK__COL_cost_s, "inf", "column cost_s: 'inf' is not a number"},
};

START_TEST(test_amk_row_parse_rejects_bad_value_naming_column)
{
    const struct bad_field *b = &bad_fields[_i];
    char *line = line_with(b->col, b->value);
    amk_row r;
    amk_diag d = {0};
    int rc = amk_row_parse(line, strlen(line), &r, &d);
    ck_assert_msg(rc == AMK_ETSV, "%s='%s' accepted (rc %d)", amk__tsv_column_name(b->col),
                  b->value, rc);
    ck_assert_msg(strstr(d.msg, b->expect), "message '%s' lacks '%s'", d.msg, b->expect);
    free(line);
}
END_TEST

START_TEST(test_amk_row_parse_rejects_wrong_field_count)
{
    amk_row r;
    amk_diag d = {0};
    char *line = line_with(AMK__COL_note, "a\tb");
    ck_assert_int_eq(amk_row_parse(line, strlen(line), &r, &d), AMK_ETSV);
    ck_assert_msg(strstr(d.msg, "36 fields, expected 35"), "%s", d.msg);
    free(line);
    const char *torn = "12\t2026-11-22T10:12:04Z\tgem";
    ck_assert_int_eq(amk_row_parse(torn, strlen(torn), &r, &d), AMK_ETSV);
    ck_assert_msg(strstr(d.msg, "3 fields, expected 35"), "%s", d.msg);
    /* The tolerant parser calls the same line torn: its complete fields are valid. */
    ck_assert_int_eq(amk__row_parse(torn, strlen(torn), &r, 1, AMK__TSV_NCOLS, &d),
                     AMK__ROW_TORN);
    ck_assert_int_eq(r.trial, 12);
}
END_TEST

START_TEST(test_amk_row_parse_rejects_overlong_and_nul_strings)
{
    amk_row r;
    amk_diag d = {0};
    char longk[100];
    memset(longk, 'k', sizeof longk - 1);
    longk[sizeof longk - 1] = '\0';
    char *line = line_with(AMK__COL_kernel, longk);
    ck_assert_int_eq(amk_row_parse(line, strlen(line), &r, &d), AMK_ETSV);
    ck_assert_msg(strstr(d.msg, "column kernel: 99 bytes, longer than the 63 allowed"), "%s",
                  d.msg);
    free(line);
    line = line_with(AMK__COL_device, "dev@ice");
    *strchr(line, '@') = '\0';
    ck_assert_int_eq(amk_row_parse(line, strlen(line) + 1 + strlen(line + strlen(line) + 1),
                                   &r, &d),
                     AMK_ETSV);
    ck_assert_msg(strstr(d.msg, "column device:"), "%s", d.msg);
    free(line);
}
END_TEST

/* ---- amk_tsv_open ------------------------------------------------------------------ */

START_TEST(test_amk_tsv_open_creates_file_with_header)
{
    amk_tsv *t = NULL;
    amk_diag d = {0};
    const char *p = tpath("new.tsv");
    ck_assert_msg(amk_tsv_open(p, &t, &d) == AMK_OK, "%s", d.msg);
    amk_tsv_close(t);
    char *text = slurp(p);
    ck_assert_str_eq(text, amk__tsv_header_block());
    free(text);
    /* Opening again adds nothing. */
    ck_assert_msg(amk_tsv_open(p, &t, &d) == AMK_OK, "%s", d.msg);
    amk_tsv_close(t);
    text = slurp(p);
    ck_assert_str_eq(text, amk__tsv_header_block());
    free(text);
}
END_TEST

START_TEST(test_amk_tsv_open_appends_rows_after_existing_ones)
{
    const char *p = tpath("r.tsv");
    amk_row a = full_row(1), b = full_row(2);
    amk_test_append_rows(p, &a, 1);
    amk_test_append_rows(p, &b, 1);
    collected c = {0};
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 2);
    ck_assert_int_eq(st.lines, 4);
    ck_assert_int_eq(st.torn, 0);
    assert_rows_equal(&c.rows[0], &a);
    assert_rows_equal(&c.rows[1], &b);
}
END_TEST

START_TEST(test_amk_tsv_open_rejects_foreign_file)
{
    amk_tsv *t = (amk_tsv *)&t;
    amk_diag d = {0};
    const char *p = tpath("foreign.tsv");
    amk_test_write_file(p, "trial\ttime\n1\t2\n");
    ck_assert_int_eq(amk_tsv_open(p, &t, &d), AMK_ETSV);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(d.msg, p) && strstr(d.msg, ":1: not an amk results file"), "%s",
                  d.msg);
    char *text = slurp(p);
    ck_assert_str_eq(text, "trial\ttime\n1\t2\n"); /* untouched */
    free(text);
}
END_TEST

START_TEST(test_amk_tsv_open_rejects_other_version)
{
    amk_tsv *t = NULL;
    amk_diag d = {0};
    const char *p = tpath("v5.tsv");
    amk_test_write_file(p, "# amk results v5\ntrial\n");
    ck_assert_int_eq(amk_tsv_open(p, &t, &d), AMK_ETSV);
    ck_assert_msg(strstr(d.msg, ":1: unsupported format '# amk results v5' (this amk reads "
                            "'# amk results v4')"), "%s", d.msg);
}
END_TEST

START_TEST(test_amk_tsv_open_rejects_wrong_columns)
{
    amk_tsv *t = NULL;
    amk_diag d = {0};
    const char *p = tpath("cols.tsv");
    amk_sb sb = {0};
    amk_sb_printf(&sb, "%s\n", AMK_TSV_HEADER);
    for (int i = 0; i < AMK__TSV_NCOLS; i++)
        amk_sb_printf(&sb, "%s%s", i ? "\t" : "",
                      i == AMK__COL_latency_us ? "latency" : amk__tsv_column_name(i));
    amk_sb_printf(&sb, "\n");
    amk_test_write_file(p, sb.p);
    amk_sb_free(&sb);
    ck_assert_int_eq(amk_tsv_open(p, &t, &d), AMK_ETSV);
    ck_assert_msg(strstr(d.msg, ":2: column 9 is 'latency', expected 'latency_us'"), "%s",
                  d.msg);
    amk_test_write_file(p, "# amk results v1\ntrial\ttime\n");
    ck_assert_int_eq(amk_tsv_open(p, &t, &d), AMK_ETSV);
    ck_assert_msg(strstr(d.msg, ":2: column 3 'kernel' is missing"), "%s", d.msg);
}
END_TEST

START_TEST(test_amk_tsv_open_isolates_torn_row)
{
    const char *p = tpath("torn.tsv");
    amk_row a = full_row(1);
    amk_test_append_rows(p, &a, 1);
    int fd = open(p, O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "2\t2026-11-22T10:1", 17), 17); /* a writer killed here */
    close(fd);
    amk_row more[2] = {full_row(3), full_row(4)};
    amk_test_append_rows(p, more, 2);
    collected c = {0};
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 3);
    ck_assert_int_eq(st.torn, 1);
    ck_assert_int_eq(c.rows[0].trial, 1);
    ck_assert_int_eq(c.rows[1].trial, 3);
    ck_assert_int_eq(c.rows[2].trial, 4);
    char *text = slurp(p);
    ck_assert_ptr_nonnull(strstr(text, "\n2\t2026-11-22T10:1\n3\t"));
    free(text);
}
END_TEST

/* A results file of an older version: its header line, its ncols column names, one row. */
static void write_old_version(const char *p, const char *header, int ncols, const amk_row *r)
{
    amk_sb sb = {0};
    amk_sb_printf(&sb, "%s\n", header);
    for (int i = 0; i < ncols; i++)
        amk_sb_printf(&sb, "%s%s", i ? "\t" : "", amk__tsv_column_name(i));
    amk_sb_printf(&sb, "\n");
    amk__row_format_cols(r, ncols, &sb);
    amk_test_write_file(p, sb.p);
    amk_sb_free(&sb);
}

/* A v1 file (19 columns, before the observation and peer columns) is read, and rows
 * appended to it keep its 19 columns, so the file stays one format. */
START_TEST(test_amk_tsv_open_v1_file_read_and_appended_as_v1)
{
    const char *p = tpath("v1.tsv");
    amk_row a = full_row(1);
    write_old_version(p, "# amk results v1", AMK__TSV_NCOLS_V1, &a);
    collected c = {0};
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 1);
    ck_assert(c.rows[0].latency_us == a.latency_us);
    ck_assert(isnan(c.rows[0].sm_mhz) && c.rows[0].clock_regime[0] == '\0');
    amk_row b = full_row(2);
    amk_test_append_rows(p, &b, 1);
    char *text = slurp(p);
    ck_assert_msg(strncmp(text, "# amk results v1\n", 17) == 0, "%s", text);
    /* the last line's tabs (indices: gcc -O2's dangling-pointer check misreads pointers) */
    size_t end = strlen(text), start;
    if (end && text[end - 1] == '\n')
        end--;
    for (start = end; start > 0 && text[start - 1] != '\n'; start--)
        ;
    int tabs = 0;
    for (size_t i = start; i < end; i++)
        tabs += text[i] == '\t';
    ck_assert_int_eq(tabs, AMK__TSV_NCOLS_V1 - 1);
    free(text);
    c.n = 0;
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 2);
    ck_assert_int_eq(c.rows[1].trial, 2);
}
END_TEST

/* A v2 file (31 columns, before the objective and the energy window) is read, its rows as
 * objective time; a time row appended keeps its 31 columns, and a row of another objective
 * is refused (it would read back as time), leaving the file as it was. */
START_TEST(test_amk_tsv_open_v2_file_refuses_energy_rows)
{
    const char *p = tpath("v2.tsv");
    amk_row a = full_row(1);
    a.objective = AMK_OBJ_TIME;
    write_old_version(p, "# amk results v2", AMK__TSV_NCOLS_V2, &a);
    collected c = {0};
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 1);
    ck_assert_int_eq(c.rows[0].objective, AMK_OBJ_TIME);
    ck_assert_int_eq(c.rows[0].energy_ticks, 0);
    ck_assert(isnan(c.rows[0].energy_window_ms) && c.rows[0].energy_uj == a.energy_uj);
    ck_assert(isnan(c.rows[0].cost_s));
    char *before = slurp(p);
    amk_tsv *t = NULL;
    ck_assert_msg(amk_tsv_open(p, &t, &d) == AMK_OK, "%s", d.msg);
    amk_row e = full_row(2);
    e.objective = AMK_OBJ_ENERGY;
    ck_assert_int_eq(amk_tsv_append(t, &e, 1, &d), AMK_ETSV);
    ck_assert_msg(strstr(d.msg, "objective energy need a new file"), "%s", d.msg);
    char *after = slurp(p);
    ck_assert_str_eq(before, after);
    e.objective = AMK_OBJ_TIME;
    ck_assert_msg(amk_tsv_append(t, &e, 1, &d) == AMK_OK, "%s", d.msg);
    amk_tsv_close(t);
    c.n = 0;
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 2);
    free(before);
    free(after);
    /* In a current (v4) row the objective and the energy window round-trip. */
    e.objective = AMK_OBJ_EDP;
    char *line = format_line(&e);
    amk_row back;
    ck_assert_msg(amk_row_parse(line, strlen(line) - 1, &back, &d) == AMK_OK, "%s", d.msg);
    assert_rows_equal(&e, &back);
    ck_assert_int_eq(back.objective, AMK_OBJ_EDP);
    free(line);
}
END_TEST

/* A v3 file (34 columns, before the trial's cost) is read, its rows with cost_s NAN and
 * everything else as written; rows appended keep its 34 columns (their cost is not recorded),
 * and energy rows are taken: a v3 file has the objective column. */
START_TEST(test_amk_tsv_open_v3_file_read_and_appended_as_v3)
{
    const char *p = tpath("v3.tsv");
    amk_row a = full_row(1);
    a.objective = AMK_OBJ_EDP;
    write_old_version(p, AMK_TSV_HEADER_V3, AMK__TSV_NCOLS_V3, &a);
    collected c = {0};
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 1);
    ck_assert(isnan(c.rows[0].cost_s));
    amk_row want = a;
    want.cost_s = NAN;
    assert_rows_equal(&want, &c.rows[0]);
    amk_tsv *t = NULL;
    ck_assert_msg(amk_tsv_open(p, &t, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_tsv_check_objective(t, AMK_OBJ_ENERGY, &d) == AMK_OK, "%s", d.msg);
    amk_row b = full_row(2);
    b.objective = AMK_OBJ_ENERGY;
    b.cost_s = 7.5;
    ck_assert_msg(amk_tsv_append(t, &b, 1, &d) == AMK_OK, "%s", d.msg);
    amk_tsv_close(t);
    char *text = slurp(p);
    ck_assert_msg(strncmp(text, AMK_TSV_HEADER_V3 "\n", sizeof AMK_TSV_HEADER_V3) == 0, "%s",
                  text);
    /* every line, header lines included, has the v3 file's 34 columns */
    int tabs = 0, lines = 0;
    for (const char *q = text; *q; q++) {
        if (*q == '\t')
            tabs++;
        else if (*q == '\n') {
            if (lines++ > 0)
                ck_assert_int_eq(tabs, AMK__TSV_NCOLS_V3 - 1);
            tabs = 0;
        }
    }
    ck_assert_int_eq(lines, 4);
    free(text);
    c.n = 0;
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 2);
    ck_assert_int_eq(c.rows[1].trial, 2);
    ck_assert_int_eq(c.rows[1].objective, AMK_OBJ_ENERGY);
    ck_assert_int_eq(c.rows[1].energy_ticks, 11);
    ck_assert(isnan(c.rows[1].cost_s));
}
END_TEST

START_TEST(test_amk_tsv_open_completes_header_cut_short)
{
    const char *p = tpath("cut.tsv");
    amk_test_write_file(p, AMK_TSV_HEADER "\ntrial\ttime\tker");
    collected c = {0};
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 0);
    amk_row a = full_row(1);
    amk_test_append_rows(p, &a, 1);
    char *text = slurp(p);
    ck_assert_int_eq(strncmp(text, amk__tsv_header_block(), strlen(amk__tsv_header_block())),
                     0);
    free(text);
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 1);
}
END_TEST

/* ---- amk_tsv_append ---------------------------------------------------------------- */

START_TEST(test_amk_tsv_append_keeps_rows_after_other_writers_torn_row)
{
    const char *p = tpath("live.tsv");
    amk_tsv *t = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_open(p, &t, &d) == AMK_OK, "%s", d.msg);
    amk_row a = full_row(1), b = full_row(2);
    ck_assert_msg(amk_tsv_append(t, &a, 1, &d) == AMK_OK, "%s", d.msg);
    int fd = open(p, O_WRONLY | O_APPEND); /* another process, killed mid-row */
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "7\t2026", 6), 6);
    close(fd);
    ck_assert_msg(amk_tsv_append(t, &b, 1, &d) == AMK_OK, "%s", d.msg);
    amk_tsv_close(t);
    collected c = {0};
    amk_tsv_stats st;
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 2);
    ck_assert_int_eq(st.torn, 1);
    assert_rows_equal(&c.rows[1], &b);
}
END_TEST

/* Issue 24: a full disk mid-row (here the file-size limit, which cuts a write short just as
 * ENOSPC does) fails the append and leaves the file as it was: no torn row, no trial number
 * used, and the next append after space is freed continues the numbers. */
START_TEST(test_amk_tsv_append_full_disk_leaves_file_whole)
{
    const char *p = tpath("full.tsv");
    amk_tsv *t = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_open(p, &t, &d) == AMK_OK, "%s", d.msg);
    amk_row a[2] = {full_row(0), full_row(0)};
    ck_assert_msg(amk_tsv_append_next(t, a, 2, &d) == AMK_OK, "%s", d.msg);
    char *before = slurp(p);
    size_t size = strlen(before);
    signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
    struct rlimit lim = {.rlim_cur = size + 40, .rlim_max = RLIM_INFINITY};
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    amk_row b[3] = {full_row(0), full_row(0), full_row(0)};
    ck_assert_int_eq(amk_tsv_append_next(t, b, 3, &d), AMK_EIO);
    ck_assert_msg(strstr(d.msg, "full.tsv") && strstr(d.msg, "partial write was removed"), "%s",
                  d.msg);
    char *after = slurp(p);
    ck_assert_str_eq(after, before); /* cut back to the last whole row */
    free(after);
    lim.rlim_cur = RLIM_INFINITY;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    ck_assert_msg(amk_tsv_append_next(t, b, 1, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(b[0].trial, 3);
    amk_tsv_close(t);
    collected c = {0};
    amk_tsv_stats st;
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 3);
    ck_assert_int_eq(st.torn, 0);
    free(before);
}
END_TEST

START_TEST(test_amk_tsv_append_rejects_unwritable_row)
{
    const char *p = tpath("bad.tsv");
    amk_tsv *t = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_open(p, &t, &d) == AMK_OK, "%s", d.msg);
    amk_row rows[2] = {full_row(1), full_row(2)};
    snprintf(rows[1].config_id, sizeof rows[1].config_id, "not-an-id");
    ck_assert_int_eq(amk_tsv_append(t, rows, 2, &d), AMK_EINVAL);
    ck_assert_msg(strstr(d.msg, "row 1 (trial 2): column config_id"), "%s", d.msg);
    rows[1] = full_row(2);
    rows[1].status = AMK_STATUS_COUNT;
    ck_assert_int_eq(amk_tsv_append(t, rows, 2, &d), AMK_EINVAL);
    ck_assert_msg(strstr(d.msg, "column status"), "%s", d.msg);
    amk_tsv_close(t);
    /* Nothing of a rejected batch was written. */
    char *text = slurp(p);
    ck_assert_str_eq(text, amk__tsv_header_block());
    free(text);
}
END_TEST

/* A cost is seconds: a negative or infinite one is refused naming the column, and nothing of
 * the batch is written; NAN (unknown) is written as the empty field. */
START_TEST(test_amk_tsv_append_refuses_negative_cost_s)
{
    const char *p = tpath("cost.tsv");
    amk_tsv *t = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_open(p, &t, &d) == AMK_OK, "%s", d.msg);
    amk_row rows[2] = {full_row(1), full_row(2)};
    rows[1].cost_s = -0.5;
    ck_assert_int_eq(amk_tsv_append(t, rows, 2, &d), AMK_EINVAL);
    ck_assert_msg(strstr(d.msg, "row 1 (trial 2): column cost_s: -0.5"), "%s", d.msg);
    rows[1].cost_s = INFINITY;
    ck_assert_int_eq(amk_tsv_append(t, rows, 2, &d), AMK_EINVAL);
    ck_assert_msg(strstr(d.msg, "column cost_s: inf"), "%s", d.msg);
    char *text = slurp(p);
    ck_assert_str_eq(text, amk__tsv_header_block());
    free(text);
    rows[1].cost_s = NAN;
    ck_assert_msg(amk_tsv_append(t, rows, 2, &d) == AMK_OK, "%s", d.msg);
    amk_tsv_close(t);
    collected c = {0};
    amk_tsv_stats st;
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 2);
    ck_assert_double_eq(c.rows[0].cost_s, 3.18406);
    ck_assert(isnan(c.rows[1].cost_s));
}
END_TEST

#define CHILDREN 4
#define PER_CHILD 200

typedef struct conc_check {
    int seen[CHILDREN][PER_CHILD];
    int bad;
    char why[256];
} conc_check;

static int conc_row(const amk_row *r, void *ud)
{
    conc_check *c = ud;
    int child = (int)(r->trial / 1000), i = (int)(r->trial % 1000);
    char want[400];
    if (child < 0 || child >= CHILDREN || i >= PER_CHILD) {
        c->bad++;
        snprintf(c->why, sizeof c->why, "unexpected trial %lld", (long long)r->trial);
        return 0;
    }
    memset(want, 'a' + child, 300);
    want[300] = '\0';
    if (strcmp(r->note, want) != 0 || r->kept != (i & 1)) {
        c->bad++;
        snprintf(c->why, sizeof c->why, "trial %lld: content mixed up", (long long)r->trial);
    }
    c->seen[child][i]++;
    return 0;
}

START_TEST(test_amk_tsv_append_concurrent_processes_never_interleave)
{
    const char *p = tpath("conc.tsv");
    pid_t pids[CHILDREN];
    for (int k = 0; k < CHILDREN; k++) {
        pids[k] = fork();
        ck_assert_int_ge(pids[k], 0);
        if (pids[k] == 0) {
            amk_tsv *t = NULL;
            amk_diag d = {0};
            if (amk_tsv_open(p, &t, &d) != AMK_OK)
                _exit(2);
            for (int i = 0; i < PER_CHILD; i++) {
                amk_row r = full_row(k * 1000 + i);
                memset(r.note, 'a' + k, 300);
                r.note[300] = '\0';
                r.kept = i & 1;
                if (amk_tsv_append(t, &r, 1, &d) != AMK_OK)
                    _exit(3);
            }
            amk_tsv_close(t);
            _exit(0);
        }
    }
    for (int k = 0; k < CHILDREN; k++) {
        int status;
        ck_assert_int_eq(waitpid(pids[k], &status, 0), pids[k]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d failed: %d", k,
                      status);
    }
    conc_check *c = calloc(1, sizeof *c);
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, conc_row, c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(st.rows, CHILDREN * PER_CHILD);
    ck_assert_int_eq(st.torn, 0);
    ck_assert_int_eq(st.lines, CHILDREN * PER_CHILD + 2); /* header written once */
    ck_assert_msg(c->bad == 0, "%d bad rows: %s", c->bad, c->why);
    for (int k = 0; k < CHILDREN; k++)
        for (int i = 0; i < PER_CHILD; i++)
            ck_assert_msg(c->seen[k][i] == 1, "trial %d seen %d times", k * 1000 + i,
                          c->seen[k][i]);
    free(c);
}
END_TEST

/* ---- amk_tsv_append_next ----------------------------------------------------------- */

typedef struct trials_seen {
    int64_t t[CHILDREN * PER_CHILD + 8];
    size_t n;
} trials_seen;

static int note_trial(const amk_row *r, void *ud)
{
    trials_seen *c = ud;
    if (c->n < sizeof c->t / sizeof c->t[0])
        c->t[c->n] = r->trial;
    c->n++;
    return 0;
}

START_TEST(test_amk_tsv_append_next_continues_numbers_through_the_file)
{
    const char *p = tpath("next.tsv");
    amk_row first[2] = {full_row(3), full_row(41)}; /* an earlier run, numbers not in order */
    amk_test_append_rows(p, first, 2);
    /* A second run, as a fresh writer: numbers continue after the highest one. */
    amk_tsv *t = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_open(p, &t, &d) == AMK_OK, "%s", d.msg);
    amk_row rows[2] = {full_row(1), full_row(1)};
    ck_assert_msg(amk_tsv_append_next(t, rows, 2, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(rows[0].trial, 42);
    ck_assert_int_eq(rows[1].trial, 43);
    /* Rows another writer appends in between are taken into account, torn ones are not. */
    amk_row other = full_row(100);
    amk_test_append_rows(p, &other, 1);
    int fd = open(p, O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "900\t2026", 8), 8); /* killed mid-row */
    close(fd);
    amk_row r = full_row(1);
    ck_assert_msg(amk_tsv_append_next(t, &r, 1, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(r.trial, 101);
    amk_tsv_close(t);
    trials_seen c = {0};
    ck_assert_msg(amk_tsv_read(p, note_trial, &c, NULL, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 6);
    ck_assert_int_eq(c.t[2], 42);
    ck_assert_int_eq(c.t[5], 101);
}
END_TEST

START_TEST(test_amk_tsv_append_next_concurrent_writers_never_share_a_number)
{
    const char *p = tpath("nextconc.tsv");
    pid_t pids[CHILDREN];
    for (int k = 0; k < CHILDREN; k++) {
        pids[k] = fork();
        ck_assert_int_ge(pids[k], 0);
        if (pids[k] == 0) {
            amk_tsv *t = NULL;
            amk_diag d = {0};
            if (amk_tsv_open(p, &t, &d) != AMK_OK)
                _exit(2);
            for (int i = 0; i < PER_CHILD; i += 2) { /* batches of two rows */
                amk_row r[2] = {full_row(0), full_row(0)};
                if (amk_tsv_append_next(t, r, 2, &d) != AMK_OK || r[1].trial != r[0].trial + 1)
                    _exit(3);
            }
            amk_tsv_close(t);
            _exit(0);
        }
    }
    for (int k = 0; k < CHILDREN; k++) {
        int status;
        ck_assert_int_eq(waitpid(pids[k], &status, 0), pids[k]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d failed: %d", k,
                      status);
    }
    trials_seen *c = calloc(1, sizeof *c);
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, note_trial, c, NULL, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c->n, CHILDREN * PER_CHILD);
    /* In file order the numbers are exactly 1, 2, 3, ...: none shared, none skipped. */
    for (size_t i = 0; i < c->n; i++)
        ck_assert_msg(c->t[i] == (int64_t)i + 1, "row %zu has trial %lld", i,
                      (long long)c->t[i]);
    free(c);
}
END_TEST

/* Issue 24: with grouped fsyncs, an append still returns only once its rows are in the
 * file. A writer reports each trial number after its append and is SIGKILLed mid-stream:
 * every reported trial is in the file, whole, and the file reads cleanly. */
enum { KILL_MAX_TRIALS = 32768 };

static int count_trials(const amk_row *r, void *ud)
{
    int64_t *seen = ud;
    if (r->trial > 0 && r->trial < KILL_MAX_TRIALS)
        seen[r->trial]++;
    return 0;
}

START_TEST(test_amk_tsv_sync_every_reported_rows_survive_sigkill)
{
    const char *p = tpath("kill.tsv");
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        amk_tsv *t = NULL;
        amk_diag d = {0};
        if (amk_tsv_open(p, &t, &d) != AMK_OK)
            _exit(2);
        amk_tsv_sync_every(t, 3600); /* no fsync at all before the kill */
        for (int i = 1; i < KILL_MAX_TRIALS; i++) {
            amk_row r = full_row(0);
            if (amk_tsv_append_next(t, &r, 1, &d) != AMK_OK)
                _exit(3);
            int64_t done = r.trial;
            if (write(fds[1], &done, sizeof done) != (ssize_t)sizeof done)
                _exit(4);
        }
        pause();
        _exit(5);
    }
    close(fds[1]);
    int64_t last = 0, got;
    while (last < 300 && read(fds[0], &got, sizeof got) == (ssize_t)sizeof got)
        last = got;
    kill(pid, SIGKILL);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status));
    while (read(fds[0], &got, sizeof got) == (ssize_t)sizeof got) /* reported before the kill */
        last = got;
    close(fds[0]);
    int64_t *seen = calloc(KILL_MAX_TRIALS, sizeof *seen);
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, count_trials, seen, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_ge(last, 300);
    for (int64_t i = 1; i <= last; i++)
        ck_assert_msg(seen[i] == 1, "reported trial %lld is in the file %lld times", (long long)i,
                      (long long)seen[i]);
    /* amk_tsv_sync makes them durable; a second call has nothing to do */
    amk_tsv *t = NULL;
    ck_assert_msg(amk_tsv_open(p, &t, &d) == AMK_OK, "%s", d.msg);
    amk_tsv_sync_every(t, 3600);
    amk_row r = full_row(0);
    ck_assert_msg(amk_tsv_append_next(t, &r, 1, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_gt(r.trial, last);
    ck_assert_msg(amk_tsv_sync(t, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_tsv_sync(t, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_tsv_sync(NULL, &d), AMK_EINVAL);
    amk_tsv_close(t);
    free(seen);
}
END_TEST

START_TEST(test_amk_tsv_append_next_refuses_numbers_past_int64_max)
{
    const char *p = tpath("top.tsv");
    amk_row top = full_row(INT64_MAX - 1);
    amk_test_append_rows(p, &top, 1);
    char *before = slurp(p);
    amk_tsv *t = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_open(p, &t, &d) == AMK_OK, "%s", d.msg);
    amk_row rows[2] = {full_row(1), full_row(1)};
    ck_assert_int_eq(amk_tsv_append_next(t, rows, 2, &d), AMK_ETSV);
    ck_assert_msg(strstr(d.msg, "trial numbers exhausted") && strstr(d.msg, p), "%s", d.msg);
    char *after = slurp(p);
    ck_assert_str_eq(after, before); /* nothing written */
    free(after);
    ck_assert_msg(amk_tsv_append_next(t, rows, 1, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(rows[0].trial, INT64_MAX);
    ck_assert_int_eq(amk_tsv_append_next(t, rows, 1, &d), AMK_ETSV);
    amk_tsv_close(t);
    free(before);
}
END_TEST

/* ---- amk_tsv_read ------------------------------------------------------------------ */

static const char *file_with(const char *name, const char *tail, int nrows)
{
    const char *p = tpath(name);
    amk_sb sb = {0};
    amk_sb_printf(&sb, "%s", amk__tsv_header_block());
    for (int i = 1; i <= nrows; i++) {
        amk_row r = full_row(i);
        amk_row_format(&r, &sb);
    }
    amk_sb_printf(&sb, "%s", tail);
    amk_test_write_file(p, sb.p);
    amk_sb_free(&sb);
    return p;
}

START_TEST(test_amk_tsv_read_skips_torn_last_line)
{
    const char *p = file_with("t1.tsv", "3\t2026-11-22T10:12:03Z\tgemm\tM=4", 2);
    collected c = {0};
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, collect, &c, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(c.n, 2);
    ck_assert_int_eq(st.rows, 2);
    ck_assert_int_eq(st.torn, 1);
    ck_assert_int_eq(st.lines, 5);
}
END_TEST

START_TEST(test_amk_tsv_read_skips_torn_full_width_line_without_newline)
{
    amk_row r = full_row(3);
    char *line = format_line(&r);
    line[strlen(line) - 1] = '\0'; /* cut in the last field: all fields, no newline */
    const char *p = file_with("t2.tsv", line, 2);
    free(line);
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, NULL, NULL, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(st.rows, 2);
    ck_assert_int_eq(st.torn, 1);
}
END_TEST

START_TEST(test_amk_tsv_read_rejects_malformed_middle_line)
{
    char *bad = line_with(AMK__COL_latency_us, "abc");
    amk_sb tail = {0};
    amk_sb_printf(&tail, "%s\n", bad);
    amk_row r = full_row(5);
    amk_row_format(&r, &tail);
    const char *p = file_with("mid.tsv", tail.p, 1);
    amk_sb_free(&tail);
    free(bad);
    collected c = {0};
    amk_diag d = {0};
    ck_assert_int_eq(amk_tsv_read(p, collect, &c, NULL, &d), AMK_ETSV);
    ck_assert_int_eq(d.code, AMK_ETSV);
    char want[600];
    snprintf(want, sizeof want, "%s:4: column latency_us: 'abc' is not a number", p);
    ck_assert_str_eq(d.msg, want);
    ck_assert_int_eq(c.n, 1); /* rows before the bad line were delivered */
}
END_TEST

START_TEST(test_amk_tsv_read_rejects_short_middle_line_with_bad_field)
{
    amk_row r = full_row(5);
    char *good = format_line(&r);
    amk_sb tail = {0};
    amk_sb_printf(&tail, "x\t2026\tgemm\n%s", good);
    const char *p = file_with("short.tsv", tail.p, 2);
    amk_sb_free(&tail);
    free(good);
    amk_diag d = {0};
    ck_assert_int_eq(amk_tsv_read(p, NULL, NULL, NULL, &d), AMK_ETSV);
    ck_assert_msg(strstr(d.msg, ":5: column trial: 'x' is not an integer"), "%s", d.msg);
}
END_TEST

START_TEST(test_amk_tsv_read_rejects_bad_header)
{
    const char *p = tpath("h.tsv");
    amk_diag d = {0};
    amk_test_write_file(p, "trial\ttime\n");
    ck_assert_int_eq(amk_tsv_read(p, NULL, NULL, NULL, &d), AMK_ETSV);
    ck_assert_msg(strstr(d.msg, ":1: not an amk results file: first line is 'trial?time'"),
                  "%s", d.msg);
    amk_test_write_file(p, "# amk results v1\ntrial\ttime\tkernel\tshape\tconfig_id\tparams\tsource\t"
                  "status\tlatency_us\tlatency_kind\tspread\tpredicted_us\tbound_us\t"
                  "pct_of_roofline\tcompile_ms\tcache_hit\tkept\tdevice\tnote\textra\n");
    ck_assert_int_eq(amk_tsv_read(p, NULL, NULL, NULL, &d), AMK_ETSV);
    ck_assert_msg(strstr(d.msg, ":2: unexpected column 20 'extra'"), "%s", d.msg);
}
END_TEST

START_TEST(test_amk_tsv_read_missing_file_is_enoent)
{
    amk_diag d = {0};
    const char *p = tpath("nope.tsv");
    ck_assert_int_eq(amk_tsv_read(p, NULL, NULL, NULL, &d), AMK_ENOENT);
    ck_assert_ptr_nonnull(strstr(d.msg, p));
}
END_TEST

START_TEST(test_amk_tsv_read_empty_file_has_no_rows)
{
    const char *p = tpath("empty.tsv");
    amk_test_write_file(p, "");
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_int_eq(amk_tsv_read(p, NULL, NULL, &st, &d), AMK_OK);
    ck_assert_int_eq(st.rows, 0);
    ck_assert_int_eq(st.lines, 0);
}
END_TEST

START_TEST(test_amk_tsv_read_skips_blank_and_comment_lines)
{
    const char *p = file_with("cm.tsv", "\n# a comment\n", 2);
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_read(p, NULL, NULL, &st, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(st.rows, 2);
    ck_assert_int_eq(st.torn, 0);
}
END_TEST

static int stop_at_two(const amk_row *r, void *ud)
{
    (void)ud;
    return r->trial == 2 ? 1 : 0;
}

static int fail_at_two(const amk_row *r, void *ud)
{
    return r->trial == 2 ? amk_diag_set(ud, AMK_ENOMEM, "callback gave up") : 0;
}

START_TEST(test_amk_tsv_read_callback_stops_the_read)
{
    const char *p = file_with("stop.tsv", "", 5);
    amk_tsv_stats st;
    amk_diag d = {0};
    ck_assert_int_eq(amk_tsv_read(p, stop_at_two, NULL, &st, &d), AMK_OK);
    ck_assert_int_eq(st.rows, 2);
    ck_assert_int_eq(amk_tsv_read(p, fail_at_two, &d, &st, NULL), AMK_ENOMEM);
    ck_assert_str_eq(d.msg, "callback gave up");
}
END_TEST

/* The pandas case runs as its own test, check_results_pandas (tests/amk_test.h). Its
 * interpreter: the python3 on PATH, or the system's when only that one has pandas (a
 * pyenv or venv python3 first on PATH, Debian's python3-pandas in /usr/bin). */
static const char *pandas_python(void)
{
    static const char *const pythons[] = {"python3", "/usr/bin/python3"};
    for (size_t i = 0; i < sizeof pythons / sizeof pythons[0]; i++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "%s -c 'import pandas' >/dev/null 2>&1", pythons[i]);
        if (system(cmd) == 0)
            return pythons[i];
    }
    return NULL;
}

static const char *why_no_pandas(void)
{
    if (!pandas_python())
        return "neither python3 nor /usr/bin/python3 can import pandas (Debian: "
               "python3-pandas)";
    return NULL;
}

START_TEST(test_amk_tsv_read_pandas_reads_writer_output)
{
    const char *p = tpath("pd.tsv");
    amk_row rows[3] = {full_row(1), full_row(2), full_row(3)};
    rows[1].latency_us = 12.5;
    snprintf(rows[1].note, sizeof rows[1].note, "see issue #5\tthen\"retry\"");
    amk_row_init(&rows[2]);
    rows[2].trial = 3;
    rows[2].status = AMK_STATUS_REJECTED;
    snprintf(rows[2].note, sizeof rows[2].note, "\"quoted\" at start");
    amk_test_append_rows(p, rows, 3);
    const char *python = pandas_python();
    ck_assert_msg(python != NULL, "%s", why_no_pandas());
    char cmd[2048];
    /* every row and exactly the documented columns (as amk loop writes them: cli_loop.sh
     * checks its file's header against the documented list) */
    snprintf(cmd, sizeof cmd,
             "%s -c 'import pandas, math, sys\n"
             "df = pandas.read_csv(sys.argv[1], sep=\"\\t\", comment=\"#\")\n"
             "assert len(df) == 3, len(df)\n"
             "assert len(df.columns) == 35, list(df.columns)\n"
             "assert list(df.columns) == sys.argv[2].split(\"\\t\"), list(df.columns)\n"
             "assert list(df.trial) == [1, 2, 3], list(df.trial)\n"
             "assert df.latency_us[1] == 12.5, df.latency_us[1]\n"
             "assert math.isnan(df.latency_us[2])\n"
             "assert df.cost_s[0] == 3.18406 and math.isnan(df.cost_s[2]), list(df.cost_s)\n"
             "assert df.status[2] == \"rejected\", df.status[2]\n"
             "assert df.note[1] == \"see issue  5 then\\\"retry\\\"\", df.note[1]\n"
             "assert df.params[0] == %s, df.params[0]\n' '%s' '%s'",
             python, "\"{\\\"BK\\\":32,\\\"BM\\\":128,\\\"BN\\\":1}\"", p,
             amk__tsv_column_line());
    ck_assert_msg(system(cmd) == 0, "pandas could not read %s as expected", p);
}
END_TEST

/* ---- amk_history_load --------------------------------------------------------------- */

static const char *resume_file(void)
{
    const char *p = tpath("resume.tsv");
    amk_row rows[] = {
        key_row(1, "gemm", "s1", "devA", AMK_STATUS_OK, AMK_LAT_MEASURED, 10, 1),
        key_row(2, "gemm", "s1", "devA", AMK_STATUS_OK, AMK_LAT_MEASURED, 12, 0),
        key_row(3, "gemm", "s1", "devB", AMK_STATUS_OK, AMK_LAT_MEASURED, 8, 1),
        key_row(4, "gemm", "s2", "devA", AMK_STATUS_OK, AMK_LAT_MEASURED, 5, 1),
        key_row(42, "conv", "s1", "devA", AMK_STATUS_OK, AMK_LAT_MEASURED, 1, 1),
        key_row(5, "gemm", "s1", "devA", AMK_STATUS_OK, AMK_LAT_MEASURED, 9, 1),
        key_row(6, "gemm", "s1", "devA", AMK_STATUS_WRONG, AMK_LAT_NONE, NAN, 1),
        key_row(7, "gemm", "s1", "devA", AMK_STATUS_COMPILE_ERROR, AMK_LAT_NONE, NAN, 0),
        key_row(8, "gemm", "s1", "devB", AMK_STATUS_OK, AMK_LAT_MEASURED, 7, 1),
    };
    rows[7].config_id[0] = '\0'; /* a row without an id is counted, not "seen" */
    amk_test_append_rows(p, rows, sizeof rows / sizeof rows[0]);
    return p;
}

static const char *id_of(int64_t trial)
{
    static char id[4][17];
    static int k;
    char *out = id[k++ & 3];
    amk_hash_hex(amk_hash64(&trial, sizeof trial), out);
    return out;
}

/* The history of one search (search/history.c) over a results file: one read. */
static amk_history *history_of(const char *p, const char *shape, const char *device)
{
    amk_history *h = NULL;
    amk_diag d = {0};
    amk_history_opts o = {.kernel = "gemm", .shape = shape, .device = device};
    ck_assert_msg(amk_history_load(p, &o, &h, &d) == AMK_OK, "%s", d.msg);
    return h;
}

START_TEST(test_amk_history_load_restores_best_seen_and_last_trial)
{
    amk_history *h = history_of(resume_file(), "s1", "devA");
    ck_assert_int_eq(amk_history_last_trial(h), 42); /* over every key */
    ck_assert_int_eq(amk_history_rows(h), 5);        /* trials 1, 2, 5, 6, 7 */
    const amk_row *inc = amk_history_best(h, NULL);
    ck_assert_ptr_nonnull(inc);
    ck_assert_int_eq(inc->trial, 5); /* trial 6 is kept=1 but not ok */
    ck_assert(inc->latency_us == 9);
    ck_assert_str_eq(inc->config_id, id_of(5));
    const amk_idset *seen = amk_history_seen(h);
    ck_assert(amk_idset_has(seen, id_of(1)));
    ck_assert(amk_idset_has(seen, id_of(2)));
    ck_assert(amk_idset_has(seen, id_of(6)));
    ck_assert(!amk_idset_has(seen, id_of(3)));  /* other device */
    ck_assert(!amk_idset_has(seen, id_of(4)));  /* other shape */
    ck_assert(!amk_idset_has(seen, id_of(42))); /* other kernel */
    ck_assert(!amk_idset_has(seen, id_of(7)));  /* no id recorded */
    ck_assert_int_eq(amk_idset_size(seen), 4);
    /* Updated per trial: a new id is seen once, the numbering follows what is recorded. */
    ck_assert_int_eq(amk_history_see(h, id_of(77)), 1);
    ck_assert_int_eq(amk_history_see(h, id_of(77)), 0);
    amk_row r = key_row(50, "gemm", "s1", "devA", AMK_STATUS_OK, AMK_LAT_MEASURED, 4, 1);
    ck_assert_int_eq(amk_history_record(h, &r, NULL, 1), 1); /* the best changed */
    ck_assert_int_eq(amk_history_last_trial(h), 50);
    ck_assert_int_eq(amk_history_best(h, NULL)->trial, 50);
    amk_history_free(h);
}
END_TEST

START_TEST(test_amk_history_load_filters_by_device)
{
    const char *p = resume_file();
    amk_history *h = history_of(p, "s1", "devB");
    ck_assert_int_eq(amk_history_rows(h), 2);
    ck_assert_int_eq(amk_history_best(h, NULL)->trial, 8);
    ck_assert(!amk_idset_has(amk_history_seen(h), id_of(1)));
    amk_history_free(h);
    h = history_of(p, "s1", NULL);
    ck_assert_int_eq(amk_history_rows(h), 7);
    ck_assert_int_eq(amk_history_best(h, NULL)->trial, 8); /* on the latest row's device */
    ck_assert(amk_idset_has(amk_history_seen(h), id_of(1)) &&
              amk_idset_has(amk_history_seen(h), id_of(3)));
    amk_history_free(h);
    h = history_of(p, "s9", NULL);
    ck_assert_int_eq(amk_history_rows(h), 0);
    ck_assert_ptr_null(amk_history_best(h, NULL));
    ck_assert_int_eq(amk_history_last_trial(h), 42);
    amk_history_free(h);
}
END_TEST

START_TEST(test_amk_history_load_missing_file_is_empty)
{
    amk_history *h = history_of(tpath("none.tsv"), "s1", NULL);
    ck_assert_int_eq(amk_history_last_trial(h), 0);
    ck_assert_int_eq(amk_history_rows(h), 0);
    ck_assert_ptr_null(amk_history_best(h, NULL));
    ck_assert(!amk_history_incumbent(h)->has);
    amk_history_free(h);
}
END_TEST

START_TEST(test_amk_history_load_reports_malformed_file)
{
    const char *p = file_with("rbad.tsv", "1\tx\n2\t\t\t\t\t\t\tok\t\t\t\t\t\t\t\t\t0\t\t\n", 0);
    amk_history *h = (amk_history *)&h;
    amk_diag d = {0};
    amk_history_opts o = {.kernel = "gemm", .shape = "s1"};
    ck_assert_int_eq(amk_history_load(p, &o, &h, &d), AMK_OK); /* 1 torn row */
    amk_history_free(h);
    p = file_with("rbad2.tsv", "1\tx\tgemm\ts1\tBAD\t{}\n3\t\t\t\t\t\t\tok\t\t\t\t\t\t\t\t\t0\t\t\n", 0);
    ck_assert_int_eq(amk_history_load(p, &o, &h, &d), AMK_ETSV);
    ck_assert_ptr_null(h);
    ck_assert_msg(strstr(d.msg, ":3: column config_id: 'BAD'"), "%s", d.msg);
}
END_TEST

/* ---- amk_idset --------------------------------------------------------------------- */

START_TEST(test_amk_idset_add_grows_and_keeps_every_member)
{
    /* Counted, asserted once: in fork mode every passing ck_assert talks to the parent. */
    amk_idset *s = amk_idset_create();
    char id[17];
    const uint64_t n = 1000000;
    size_t added = 0, lost = 0, readded = 0, false_members = 0, seq = 0;
    char (*ids)[17] = malloc(n * sizeof *ids);
    ck_assert_ptr_nonnull(ids);
    for (uint64_t i = 0; i < n; i++)
        amk_hash_hex(amk_hash64(&i, sizeof i), ids[i]);
    double t0 = amk_now_s();
    for (uint64_t i = 0; i < n; i++)
        added += amk_idset_add(s, ids[i]) == 1;
    double t_add = amk_now_s() - t0;
    free(ids);
    ck_assert_uint_eq(added, n);
    ck_assert_uint_eq(amk_idset_size(s), n);
    for (uint64_t i = 0; i < n; i++) {
        amk_hash_hex(amk_hash64(&i, sizeof i), id);
        lost += !amk_idset_has(s, id);
        readded += amk_idset_add(s, id) != 0;
    }
    for (uint64_t i = n; i < n + 100000; i++) {
        amk_hash_hex(amk_hash64(&i, sizeof i), id);
        false_members += amk_idset_has(s, id) != 0;
    }
    ck_assert_uint_eq(lost, 0);
    ck_assert_uint_eq(readded, 0);
    ck_assert_uint_eq(false_members, 0);
    /* Sequential ids (poorly spread bits) work too. */
    for (uint64_t i = 1; i <= 5000; i++) {
        amk_hash_hex(i, id);
        seq += amk_idset_add(s, id) == 1;
    }
    ck_assert_uint_eq(seq, 5000);
    ck_assert_uint_eq(amk_idset_size(s), n + 5000);
    /* A fraction of a second even unoptimised; the loose bound catches probing gone
     * quadratic (clustered slots, a table that stopped growing), not a slow machine. */
    ck_assert_msg(t_add < 20.0, "10^6 adds took %.2f s", t_add);
    amk_idset_free(s);
}
END_TEST

START_TEST(test_amk_idset_add_handles_zero_and_case)
{
    amk_idset *s = amk_idset_create();
    ck_assert(!amk_idset_has(s, "0000000000000000"));
    ck_assert_int_eq(amk_idset_add(s, "0000000000000000"), 1);
    ck_assert_int_eq(amk_idset_add(s, "0000000000000000"), 0);
    ck_assert(amk_idset_has(s, "0000000000000000"));
    ck_assert_int_eq(amk_idset_add(s, "00000000deadbeef"), 1);
    ck_assert(amk_idset_has(s, "00000000DEADBEEF"));
    ck_assert_uint_eq(amk_idset_size(s), 2);
    amk_idset_free(s);
}
END_TEST

START_TEST(test_amk_idset_add_rejects_malformed_id)
{
    amk_idset *s = amk_idset_create();
    const char *bad[] = {"", "123", "00000000deadbeef0", "00000000deadbeeg", NULL};
    for (int i = 0; bad[i]; i++) {
        ck_assert_int_eq(amk_idset_add(s, bad[i]), AMK_EINVAL);
        ck_assert(!amk_idset_has(s, bad[i]));
    }
    ck_assert_int_eq(amk_idset_add(s, NULL), AMK_EINVAL);
    ck_assert_uint_eq(amk_idset_size(s), 0);
    amk_idset_free(s);
}
END_TEST

/* ---- amk_best_write ---------------------------------------------------------------- */

static cJSON *read_json(const char *path)
{
    char *text = slurp(path);
    cJSON *j = cJSON_Parse(text);
    ck_assert_msg(j != NULL, "%s is not JSON: %s", path, text);
    free(text);
    return j;
}

START_TEST(test_amk_best_write_writes_every_field)
{
    const char *p = tpath("best.json");
    amk_row r = full_row(57);
    cJSON *cfg = cJSON_Parse("{\"kernel\":\"gemm\",\"shape\":\"s\",\"params\":{\"BM\":128}}");
    amk_diag d = {0};
    char *cfg_text = cJSON_PrintUnformatted(cfg);
    ck_assert_msg(amk_best_write(p, &r, cfg_text, &d) == AMK_OK, "%s", d.msg);
    free(cfg_text);
    ck_assert_int_eq(amk_best_write(p, &r, "{not json", &d), AMK_EINVAL); /* nothing written */
    cJSON *j = read_json(p);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "kernel")->valuestring, "gemm");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "shape")->valuestring, r.shape);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "device")->valuestring, r.device);
    ck_assert(cJSON_Compare(cJSON_GetObjectItem(j, "config"), cfg, 1));
    ck_assert_str_eq(cJSON_GetObjectItem(j, "config_id")->valuestring, r.config_id);
    ck_assert(cJSON_GetObjectItem(j, "latency_us")->valuedouble == r.latency_us);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "latency_kind")->valuestring, "measured");
    ck_assert(cJSON_GetObjectItem(j, "spread")->valuedouble == r.spread);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "trial")->valueint, 57);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "time")->valuestring, r.time);
    ck_assert_int_eq(cJSON_GetArraySize(j), 14);
    cJSON_Delete(j);
    cJSON_Delete(cfg);
    char *text = slurp(p);
    ck_assert_ptr_nonnull(strstr(text, "\n\t\"kernel\":")); /* pretty-printed */
    ck_assert_int_eq(text[strlen(text) - 1], '\n');
    free(text);
}
END_TEST

START_TEST(test_amk_best_write_replaces_atomically)
{
    const char *p = tpath("best.json");
    amk_row a = full_row(1), b = full_row(2);
    amk_diag d = {0};
    ck_assert_msg(amk_best_write(p, &a, NULL, &d) == AMK_OK, "%s", d.msg);
    b.latency_us = NAN;
    b.spread = NAN;
    b.latency_kind = AMK_LAT_NONE;
    ck_assert_msg(amk_best_write(p, &b, NULL, &d) == AMK_OK, "%s", d.msg);
    cJSON *j = read_json(p);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "trial")->valueint, 2);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "latency_us")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "latency_kind")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "spread")));
    /* Without a config JSON the config is rebuilt from the row. */
    cJSON *cfg = cJSON_GetObjectItem(j, "config");
    ck_assert_str_eq(cJSON_GetObjectItem(cfg, "kernel")->valuestring, "gemm");
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(cfg, "params"), "BN")->valueint, 2);
    cJSON_Delete(j);
    /* Only best.json is left in the directory: no temp file. */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = best.json", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_amk_best_write_reports_unwritable_path)
{
    amk_row a = full_row(1);
    amk_diag d = {0};
    ck_assert_int_eq(amk_best_write(tpath("no/such/dir/best.json"), &a, NULL, &d), AMK_EIO);
    ck_assert_ptr_nonnull(strstr(d.msg, "no/such/dir/best.json"));
}
END_TEST

/* ---- amk_report_build / amk_report_json / amk_report_print -------------------------- */

static const char *report_file(const char *name, const amk_row *rows, size_t n)
{
    const char *p = tpath(name);
    amk_test_append_rows(p, rows, n);
    return p;
}

static cJSON *group_json(cJSON *rep, int g)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(rep, "groups"), g);
}

START_TEST(test_amk_report_build_counts_every_status)
{
    amk_row rows[] = {
        key_row(1, "gemm", "s", "d", AMK_STATUS_OK, AMK_LAT_MEASURED, 10, 1),
        key_row(2, "gemm", "s", "d", AMK_STATUS_REJECTED, AMK_LAT_NONE, NAN, 0),
        key_row(3, "gemm", "s", "d", AMK_STATUS_REJECTED, AMK_LAT_NONE, NAN, 0),
        key_row(4, "gemm", "s", "d", AMK_STATUS_COMPILE_ERROR, AMK_LAT_NONE, NAN, 0),
        key_row(5, "gemm", "s", "d", AMK_STATUS_OK, AMK_LAT_MEASURED, 11, 0),
        key_row(6, "gemm", "s", "d", AMK_STATUS_WITHHELD, AMK_LAT_NONE, NAN, 0),
    };
    const char *p = report_file("c.tsv", rows, 6);
    amk_report *rep = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_report_build(&p, 1, &amk_history_rule, NULL, &rep, &d) == AMK_OK, "%s", d.msg);
    ck_assert_uint_eq(amk__report_groups(rep), 1);
    const amk__stat_counts *c = amk__report_state(rep, 0, &amk__stat_counts_type);
    ck_assert_uint_eq(c->status[AMK_STATUS_OK], 2);
    ck_assert_uint_eq(c->status[AMK_STATUS_REJECTED], 2);
    ck_assert_uint_eq(c->trials, 6);
    ck_assert_uint_eq(c->kept, 1);
    cJSON *j = report_tree(rep);
    cJSON *counts = cJSON_GetObjectItem(group_json(j, 0), "counts");
    for (int s = 0; s < AMK_STATUS_COUNT; s++)
        ck_assert_msg(cJSON_IsNumber(cJSON_GetObjectItem(counts, amk_status_name(s))),
                      "no count for %s", amk_status_name(s));
    ck_assert_int_eq(cJSON_GetObjectItem(counts, "rejected")->valueint, 2);
    ck_assert_int_eq(cJSON_GetObjectItem(counts, "compile_error")->valueint, 1);
    ck_assert_int_eq(cJSON_GetObjectItem(counts, "withheld")->valueint, 1);
    ck_assert_int_eq(cJSON_GetObjectItem(counts, "wrong")->valueint, 0);
    ck_assert_int_eq(cJSON_GetObjectItem(counts, "kept")->valueint, 1);
    ck_assert_int_eq(cJSON_GetObjectItem(counts, "trials")->valueint, 6);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "rows")->valueint, 6);
    cJSON_Delete(j);
    amk_report_free(rep);
}
END_TEST

START_TEST(test_amk_report_build_predicted_never_beats_measured)
{
    amk_row rows[] = {
        key_row(1, "gemm", "s", "d", AMK_STATUS_OK, AMK_LAT_MEASURED, 10, 1),
        key_row(2, "gemm", "s", "d", AMK_STATUS_OK, AMK_LAT_PREDICTED, 1, 0),
        key_row(3, "gemm", "s", "d", AMK_STATUS_OK, AMK_LAT_REPLAYED, 8, 1),
        key_row(4, "gemm", "s", "d", AMK_STATUS_WRONG, AMK_LAT_MEASURED, 0.5, 0),
        key_row(5, "gemm", "s", "d", AMK_STATUS_WITHHELD, AMK_LAT_MEASURED, 0.1, 0),
        key_row(6, "gemm", "s", "d", AMK_STATUS_OK, AMK_LAT_PREDICTED, 3, 0),
        key_row(7, "gemm", "s", "d", AMK_STATUS_OK, AMK_LAT_MEASURED, 8, 0), /* tie: first wins */
        key_row(8, "gemm", "s", "d", AMK_STATUS_SCREENED, AMK_LAT_PREDICTED, 0.2, 0),
    };
    const char *p = report_file("b.tsv", rows, 8);
    amk_report *rep = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_report_build(&p, 1, &amk_history_rule, NULL, &rep, &d) == AMK_OK, "%s", d.msg);
    cJSON *j = report_tree(rep);
    cJSON *best = cJSON_GetObjectItem(group_json(j, 0), "best");
    ck_assert_int_eq(cJSON_GetObjectItem(best, "trial")->valueint, 3);
    ck_assert(cJSON_GetObjectItem(best, "latency_us")->valuedouble == 8);
    ck_assert_str_eq(cJSON_GetObjectItem(best, "latency_kind")->valuestring, "replayed");
    ck_assert_str_eq(cJSON_GetObjectItem(best, "file")->valuestring, p);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(best, "params"), "BN")->valueint, 3);
    cJSON *pred = cJSON_GetObjectItem(group_json(j, 0), "best_predicted");
    ck_assert_int_eq(cJSON_GetObjectItem(pred, "trial")->valueint, 2);
    ck_assert_str_eq(cJSON_GetObjectItem(pred, "latency_kind")->valuestring, "predicted");
    cJSON_Delete(j);
    amk_report_free(rep);

    /* Only predictions: no best at all, the prediction stays apart. */
    p = report_file("p.tsv", &rows[1], 1);
    ck_assert_msg(amk_report_build(&p, 1, &amk_history_rule, NULL, &rep, &d) == AMK_OK, "%s", d.msg);
    j = report_tree(rep);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(group_json(j, 0), "best")));
    ck_assert(cJSON_IsObject(cJSON_GetObjectItem(group_json(j, 0), "best_predicted")));
    cJSON_Delete(j);
    amk_report_free(rep);
}
END_TEST

START_TEST(test_amk_report_build_groups_and_merges_files)
{
    amk_row a[] = {
        key_row(1, "gemm", "s", "devA", AMK_STATUS_OK, AMK_LAT_MEASURED, 10, 1),
        key_row(2, "gemm", "s", "devB", AMK_STATUS_OK, AMK_LAT_MEASURED, 20, 1),
        key_row(3, "gemm", "t", "devA", AMK_STATUS_OK, AMK_LAT_MEASURED, 30, 1),
    };
    amk_row b[] = {
        key_row(1, "gemm", "s", "devA", AMK_STATUS_OK, AMK_LAT_MEASURED, 9, 1),
        key_row(2, "conv", "s", "devA", AMK_STATUS_RUN_ERROR, AMK_LAT_NONE, NAN, 0),
    };
    const char *paths[2] = {report_file("a.tsv", a, 3), report_file("b.tsv", b, 2)};
    amk_report *rep = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_report_build(paths, 2, &amk_history_rule, NULL, &rep, &d) == AMK_OK, "%s", d.msg);
    ck_assert_uint_eq(amk__report_groups(rep), 4);
    cJSON *j = report_tree(rep);
    const char *want[4][3] = {
        {"gemm", "s", "devA"}, {"gemm", "s", "devB"}, {"gemm", "t", "devA"}, {"conv", "s", "devA"}};
    for (int g = 0; g < 4; g++) {
        cJSON *gj = group_json(j, g);
        ck_assert_str_eq(cJSON_GetObjectItem(gj, "kernel")->valuestring, want[g][0]);
        ck_assert_str_eq(cJSON_GetObjectItem(gj, "shape")->valuestring, want[g][1]);
        ck_assert_str_eq(cJSON_GetObjectItem(gj, "device")->valuestring, want[g][2]);
    }
    cJSON *g0 = group_json(j, 0);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(g0, "counts"), "trials")->valueint,
                     2);
    cJSON *best = cJSON_GetObjectItem(g0, "best");
    ck_assert(cJSON_GetObjectItem(best, "latency_us")->valuedouble == 9);
    ck_assert_str_eq(cJSON_GetObjectItem(best, "file")->valuestring, paths[1]);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(group_json(j, 3), "best")));
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "files")), 2);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "rows")->valueint, 5);
    cJSON_Delete(j);
    amk_report_free(rep);
}
END_TEST

START_TEST(test_amk_report_build_names_missing_or_bad_file)
{
    amk_row a = full_row(1);
    const char *paths[2] = {report_file("ok.tsv", &a, 1), tpath("missing.tsv")};
    amk_report *rep = (amk_report *)&rep;
    amk_diag d = {0};
    ck_assert_int_eq(amk_report_build(paths, 2, &amk_history_rule, NULL, &rep, &d), AMK_ENOENT);
    ck_assert_ptr_null(rep);
    ck_assert_ptr_nonnull(strstr(d.msg, "missing.tsv"));
    ck_assert_int_eq(amk_report_build(paths, 0, &amk_history_rule, NULL, &rep, &d), AMK_EINVAL);
}
END_TEST

START_TEST(test_amk_report_print_shows_groups_and_bests)
{
    amk_row rows[] = {
        key_row(1, "gemm", "M=1024", "H100", AMK_STATUS_OK, AMK_LAT_MEASURED, 12.5, 1),
        key_row(2, "gemm", "M=1024", "H100", AMK_STATUS_OK, AMK_LAT_PREDICTED, 3.25, 0),
        key_row(3, "gemm", "M=1024", "H100", AMK_STATUS_COMPILE_TIMEOUT, AMK_LAT_NONE, NAN, 0),
        key_row(4, "softmax", "N=8", "H100", AMK_STATUS_REJECTED, AMK_LAT_NONE, NAN, 0),
    };
    const char *p = report_file("pr.tsv", rows, 4);
    amk_report *rep = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_report_build(&p, 1, &amk_history_rule, NULL, &rep, &d) == AMK_OK, "%s", d.msg);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    amk_report_print(rep, f);
    fclose(f);
    ck_assert_msg(strstr(buf, "4 rows from 1 file\n"), "%s", buf);
    ck_assert_msg(strstr(buf, "kernel   shape   device   trials"), "%s", buf);
    ck_assert_msg(strstr(buf, "gemm     M=1024  H100          3       2      1          12.5  "
                              "measured         1  "),
                  "%s", buf);
    ck_assert_msg(strstr(buf, "statuses: ok 2, compile_timeout 1, kept 1"), "%s", buf);
    ck_assert_msg(strstr(buf, "best predicted (cost model only, never measured): 3.25 us "
                              "predicted, trial 2"),
                  "%s", buf);
    ck_assert_msg(strstr(buf, "softmax  N=8     H100          1       0      0             -"),
                  "%s", buf);
    free(buf);
    amk_report_free(rep);
}
END_TEST

/* ---- suite ------------------------------------------------------------------------- */

static TCase *tc(Suite *s, const char *name)
{
    TCase *t = tcase_create(name);
    tcase_add_checked_fixture(t, setup_tmp, teardown_tmp);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return t;
}

static Suite *results_suite(void)
{
    Suite *s = suite_create("results");
    TCase *t = tc(s, "amk_row_format");
    tcase_add_test(t, test_amk_row_format_replaces_tabs_newlines_and_hash);
    tcase_add_test(t, test_amk_row_format_columns_follow_header_macro);
    t = tc(s, "amk_row_parse");
    tcase_add_test(t, test_amk_row_parse_round_trips_every_field);
    tcase_add_test(t, test_amk_row_parse_round_trips_empty_fields);
    tcase_add_test(t, test_amk_row_parse_round_trips_cost_s);
    tcase_add_loop_test(t, test_amk_row_parse_rejects_bad_value_naming_column, 0,
                        (int)(sizeof bad_fields / sizeof bad_fields[0]));
    tcase_add_test(t, test_amk_row_parse_rejects_wrong_field_count);
    tcase_add_test(t, test_amk_row_parse_rejects_overlong_and_nul_strings);
    t = tc(s, "amk_tsv_open");
    tcase_add_test(t, test_amk_tsv_open_creates_file_with_header);
    tcase_add_test(t, test_amk_tsv_open_appends_rows_after_existing_ones);
    tcase_add_test(t, test_amk_tsv_open_rejects_foreign_file);
    tcase_add_test(t, test_amk_tsv_open_rejects_other_version);
    tcase_add_test(t, test_amk_tsv_open_rejects_wrong_columns);
    tcase_add_test(t, test_amk_tsv_open_isolates_torn_row);
    tcase_add_test(t, test_amk_tsv_open_completes_header_cut_short);
    tcase_add_test(t, test_amk_tsv_open_v2_file_refuses_energy_rows);
    tcase_add_test(t, test_amk_tsv_open_v1_file_read_and_appended_as_v1);
    tcase_add_test(t, test_amk_tsv_open_v3_file_read_and_appended_as_v3);
    t = tc(s, "amk_tsv_append");
    tcase_add_test(t, test_amk_tsv_append_keeps_rows_after_other_writers_torn_row);
    tcase_add_test(t, test_amk_tsv_append_rejects_unwritable_row);
    tcase_add_test(t, test_amk_tsv_append_refuses_negative_cost_s);
    tcase_add_test(t, test_amk_tsv_append_full_disk_leaves_file_whole);
    tcase_add_test(t, test_amk_tsv_append_concurrent_processes_never_interleave);
    t = tc(s, "amk_tsv_append_next");
    tcase_add_test(t, test_amk_tsv_append_next_continues_numbers_through_the_file);
    tcase_add_test(t, test_amk_tsv_append_next_concurrent_writers_never_share_a_number);
    tcase_add_test(t, test_amk_tsv_append_next_refuses_numbers_past_int64_max);
    t = tc(s, "amk_tsv_sync");
    tcase_add_test(t, test_amk_tsv_sync_every_reported_rows_survive_sigkill);
    t = tc(s, "amk_tsv_read");
    tcase_add_test(t, test_amk_tsv_read_skips_torn_last_line);
    tcase_add_test(t, test_amk_tsv_read_skips_torn_full_width_line_without_newline);
    tcase_add_test(t, test_amk_tsv_read_rejects_malformed_middle_line);
    tcase_add_test(t, test_amk_tsv_read_rejects_short_middle_line_with_bad_field);
    tcase_add_test(t, test_amk_tsv_read_rejects_bad_header);
    tcase_add_test(t, test_amk_tsv_read_missing_file_is_enoent);
    tcase_add_test(t, test_amk_tsv_read_empty_file_has_no_rows);
    tcase_add_test(t, test_amk_tsv_read_skips_blank_and_comment_lines);
    tcase_add_test(t, test_amk_tsv_read_callback_stops_the_read);
    t = tc(s, "amk_tsv_read_pandas");
    tcase_set_tags(t, "pandas");
    tcase_add_test(t, test_amk_tsv_read_pandas_reads_writer_output);
    t = tc(s, "amk_history_load");
    tcase_add_test(t, test_amk_history_load_restores_best_seen_and_last_trial);
    tcase_add_test(t, test_amk_history_load_filters_by_device);
    tcase_add_test(t, test_amk_history_load_missing_file_is_empty);
    tcase_add_test(t, test_amk_history_load_reports_malformed_file);
    t = tc(s, "amk_idset");
    tcase_add_test(t, test_amk_idset_add_grows_and_keeps_every_member);
    tcase_add_test(t, test_amk_idset_add_handles_zero_and_case);
    tcase_add_test(t, test_amk_idset_add_rejects_malformed_id);
    t = tc(s, "amk_best_write");
    tcase_add_test(t, test_amk_best_write_writes_every_field);
    tcase_add_test(t, test_amk_best_write_replaces_atomically);
    tcase_add_test(t, test_amk_best_write_reports_unwritable_path);
    t = tc(s, "amk_report_build");
    tcase_add_test(t, test_amk_report_build_counts_every_status);
    tcase_add_test(t, test_amk_report_build_predicted_never_beats_measured);
    tcase_add_test(t, test_amk_report_build_groups_and_merges_files);
    tcase_add_test(t, test_amk_report_build_names_missing_or_bad_file);
    t = tc(s, "amk_report_print");
    tcase_add_test(t, test_amk_report_print_shows_groups_and_bests);
    return s;
}

static const amk_test_need needs[] = {
    AMK_TEST_NEED(pandas, why_no_pandas),
};

int main(int argc, char **argv)
{
    return amk_test_main(argc, argv, results_suite(), needs, sizeof needs / sizeof *needs);
}

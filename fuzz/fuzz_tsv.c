/* libFuzzer target for the results reader: the bytes go to amk_row_parse as one line, then
 * through amk_tsv_read, amk_history_load and amk_report_build as a whole file (once raw, once
 * behind a valid v1 header so the row parser is reached). Any row that parses must format
 * and parse back to the same line. Build: cmake -DAMK_FUZZ=ON -DCMAKE_C_COMPILER=clang. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "amk_results.h"
#include "amk_search.h" /* amk_history_rule: the one definition of best */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static int on_row(const amk_row *r, void *ud)
{
    size_t *n = ud;
    (*n)++;
    return r->trial == 0 && r->kept ? 1 : 0; /* also exercise an early stop */
}

static void write_file(const char *prefix, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (prefix)
        fputs(prefix, f);
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
}

static void read_all_ways(void)
{
    amk_diag d;
    amk_tsv_stats st;
    size_t n = 0;
    int rc = amk_tsv_read(path, on_row, &n, &st, &d);
    if (rc == AMK_OK && n != st.rows)
        abort();
    amk_history *r = NULL;
    int64_t last = -1;
    amk_history_opts ho = {.kernel = "gemm"};
    if (amk_history_load(path, &ho, &r, &d) == AMK_OK) {
        const amk_row *inc = amk_history_best(r, NULL);
        /* The history rule's incumbent: ok with a latency, kept=1 when the file records one. */
        if (inc && (inc->status != AMK_STATUS_OK || !isfinite(inc->latency_us) ||
                    inc->latency_us <= 0))
            abort();
        last = amk_history_last_trial(r);
        amk_history_free(r);
    }
    /* The next trial number, taken under the append lock: after every trial the reader saw
     * (never wrapped past INT64_MAX: refused instead), or nothing written. */
    amk_tsv *t = NULL;
    if (last >= 0 && amk_tsv_open(path, &t, &d) == AMK_OK) {
        amk_row row;
        amk_row_init(&row);
        snprintf(row.kernel, sizeof row.kernel, "gemm");
        int rc2 = amk_tsv_append_next(t, &row, 1, &d);
        if (rc2 == AMK_OK && (row.trial <= last || row.trial < 1))
            abort();
        if (rc2 != AMK_OK && rc2 != AMK_ETSV && rc2 != AMK_EIO)
            abort();
        amk_tsv_close(t);
    }
    const char *paths[1] = {path};
    amk_report *rep = NULL;
    if (amk_report_build(paths, 1, &amk_history_rule, NULL, &rep, &d) == AMK_OK) {
        free(amk_report_json(rep));
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull) {
            amk_report_print(rep, devnull);
            fclose(devnull);
        }
        amk_report_free(rep);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/amk-fuzz-tsv-%ld.tsv", (long)getpid());

    /* One line: a row that parses must survive format -> parse unchanged. */
    amk_row r, back;
    amk_diag d;
    if (amk_row_parse((const char *)data, size, &r, &d) == AMK_OK) {
        amk_sb sb = {0};
        amk_row_format(&r, &sb);
        if (sb.oom || sb.len == 0 || sb.p[sb.len - 1] != '\n')
            abort();
        if (amk_row_parse(sb.p, sb.len - 1, &back, &d) != AMK_OK)
            abort();
        amk_sb sb2 = {0};
        amk_row_format(&back, &sb2);
        if (sb2.len != sb.len || memcmp(sb.p, sb2.p, sb.len) != 0)
            abort();
        amk_sb_free(&sb);
        amk_sb_free(&sb2);
    }

    write_file(NULL, data, size);
    read_all_ways();
    write_file("# amk results v1\ntrial\ttime\tkernel\tshape\tconfig_id\tparams\tsource\t"
               "status\tlatency_us\tlatency_kind\tspread\tpredicted_us\tbound_us\t"
               "pct_of_roofline\tcompile_ms\tcache_hit\tkept\tdevice\tnote\n",
               data, size);
    read_all_ways();
    unlink(path);
    return 0;
}

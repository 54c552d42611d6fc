/* bench_resume: how long `--resume` takes on a big record. Writes a results.tsv of N rows
 * (default 10^6) with the real appender into a temp dir, then times amk_history_load on it
 * (target: <= 3 s for 10^6 rows), a bare amk_tsv_read pass and amk_report_build.
 * Usage: bench_resume [ROWS] [--keep] | bench_resume --file RESULTS.TSV (time an existing file) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "amk_results.h"
#include "amk_search.h" /* amk_history_rule: the one definition of best */

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BATCH 10000

static const char *const kernels[] = {"gemm", "softmax", "layernorm", "conv2d"};
static const char *const shapes[] = {"M=4096,N=4096,K=4096,dtype=fp16", "M=8192,N=1024"};
static const char *const devices[] = {"NVIDIA H100 80GB HBM3", "AMD Instinct MI300X"};

static void make_row(amk_row *r, int64_t i)
{
    static const amk_status st[] = {AMK_STATUS_OK,           AMK_STATUS_OK,
                                    AMK_STATUS_REJECTED,     AMK_STATUS_SCREENED,
                                    AMK_STATUS_COMPILE_ERROR, AMK_STATUS_WRONG};
    amk_row_init(r);
    r->trial = i + 1;
    snprintf(r->time, sizeof r->time, "2026-11-22T%02d:%02d:%02dZ", (int)(i / 3600 % 24),
             (int)(i / 60 % 60), (int)(i % 60));
    snprintf(r->kernel, sizeof r->kernel, "%s", kernels[i % 4]);
    snprintf(r->shape, sizeof r->shape, "%s", shapes[(i / 4) % 2]);
    snprintf(r->device, sizeof r->device, "%s", devices[(i / 8) % 2]);
    amk_hash_hex(amk_hash64(&i, sizeof i), r->config_id);
    snprintf(r->params, sizeof r->params,
             "{\"BK\":%d,\"BM\":%d,\"BN\":%d,\"STAGES\":%d,\"WM\":%d,\"WN\":%d}",
             16 << (i % 3), 32 << (i % 4), 32 << ((i / 3) % 4), 2 + (int)(i % 4),
             32 << (i % 2), 32 << ((i / 2) % 2));
    snprintf(r->source, sizeof r->source, "%s", i % 3 ? "mutate" : "sobol");
    r->status = st[i % 6];
    r->predicted_us = 100.0 + (double)(i % 1000) * 0.37;
    r->bound_us = 80.123456;
    if (r->status == AMK_STATUS_OK) {
        r->latency_us = 110.0 + (double)((i * 7919) % 10007) * 0.01;
        r->latency_kind = AMK_LAT_MEASURED;
        r->spread = 0.0125;
        r->pct_of_roofline = 100.0 * r->bound_us / r->latency_us;
        r->compile_ms = 850.5 + (double)(i % 100);
        r->cache_hit = (int)(i % 2);
        r->kept = i % 97 == 0;
        snprintf(r->note, sizeof r->note, "cold_l2");
    } else if (r->status == AMK_STATUS_COMPILE_ERROR) {
        snprintf(r->note, sizeof r->note, "error: too many resources requested for launch");
    }
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

/* Writes n rows with the real appender, in batches of BATCH rows (one locked write each). */
static int write_results(const char *path, long long n)
{
    amk_diag d = {0};
    amk_tsv *t = NULL;
    amk_row *rows = malloc(BATCH * sizeof *rows);
    int rc = rows ? amk_tsv_open(path, &t, &d) : AMK_ENOMEM;
    double t0 = amk_now_s();
    for (long long i = 0; rc == AMK_OK && i < n; i += BATCH) {
        size_t k = (size_t)(n - i < BATCH ? n - i : BATCH);
        for (size_t j = 0; j < k; j++)
            make_row(&rows[j], i + (long long)j);
        rc = amk_tsv_append(t, rows, k, &d);
    }
    double t_write = amk_now_s() - t0;
    amk_tsv_close(t);
    free(rows);
    if (rc != AMK_OK) {
        fprintf(stderr, "bench_resume: write: %s\n", rows ? d.msg : "out of memory");
        return 1;
    }
    struct stat st;
    stat(path, &st);
    printf("wrote %lld rows (%.1f MB) with amk_tsv_append in %.2f s\n", n,
           (double)st.st_size / 1e6, t_write);
    return 0;
}

static int time_reads(const char *path)
{
    amk_diag d = {0};
    amk_tsv_stats ts;
    double t0 = amk_now_s();
    if (amk_tsv_read(path, NULL, NULL, &ts, &d) != AMK_OK) {
        fprintf(stderr, "bench_resume: %s\n", d.msg);
        return 1;
    }
    double t_read = amk_now_s() - t0;
    size_t n = ts.rows;

    /* The measured operation: what `amk loop --resume` does first. */
    amk_history *r = NULL;
    amk_history_opts ho = {.kernel = "gemm", .shape = shapes[0], .device = devices[0]};
    t0 = amk_now_s();
    if (amk_history_load(path, &ho, &r, &d) != AMK_OK) {
        fprintf(stderr, "bench_resume: resume: %s\n", d.msg);
        return 1;
    }
    double t_resume = amk_now_s() - t0;
    const amk_row *inc = amk_history_best(r, NULL);
    printf("amk_history_load: rows %zu  seconds %.3f  rows/s %.0f  (key rows %zu, last trial "
           "%lld, incumbent trial %lld)\n",
           n, t_resume, (double)n / t_resume, amk_history_rows(r),
           (long long)amk_history_last_trial(r), inc ? (long long)inc->trial : -1LL);
    amk_history_free(r);
    printf("amk_tsv_read (parse only, cold first pass): %zu rows in %.3f s (%.0f rows/s)\n", n,
           t_read, (double)n / t_read);

    amk_report *rep = NULL;
    const char *paths[1] = {path};
    t0 = amk_now_s();
    if (amk_report_build(paths, 1, &amk_history_rule, NULL, &rep, &d) == AMK_OK)
        printf("amk_report_build: %.3f s\n", amk_now_s() - t0);
    amk_report_free(rep);
    printf("target: amk_history_load <= 3 s per 10^6 rows: %s\n",
           t_resume * 1e6 / (double)(n ? n : 1) <= 3.0 ? "met" : "MISSED");
    return 0;
}

int main(int argc, char **argv)
{
    long long n = 1000000;
    int keep = 0;
    const char *existing = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--keep"))
            keep = 1;
        else if (!strcmp(argv[i], "--file") && i + 1 < argc)
            existing = argv[++i];
        else if ((n = atoll(argv[i])) <= 0) {
            fprintf(stderr, "usage: %s [ROWS] [--keep] | %s --file RESULTS.TSV\n", argv[0],
                    argv[0]);
            return 2;
        }
    }
    if (existing)
        return time_reads(existing);
    char dir[] = "/tmp/amk-bench-resume-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/results.tsv", dir);
    int rc = write_results(path, n);
    if (rc == 0)
        rc = time_reads(path);
    if (keep)
        printf("kept %s\n", path);
    else
        nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    return rc;
}

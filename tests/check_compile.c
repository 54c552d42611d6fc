/* Check suite for the compile service: the worker pool (crash, hang, CPU and memory limits,
 * recycling, fd hygiene, big messages), the compile cache (keys, verification, corruption,
 * concurrent writers), compile units, and real compiles through NVRTC (CUDA build) or
 * hipRTC (HIP build) with injected and real compiler crashes, hangs and syntax errors.
 * Needs no GPU: runtime compilers work without one. Fixtures: tests/fixtures/compile. */
#include "amk_test.h"
#include "compile/compile_int.h"
#include "service/worker_int.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* amk_space_sample draws from our GSL stream through amk's small rng interface (used only
 * by the cases of builds with a runtime compiler). */
__attribute__((unused)) static unsigned long gsl_below(void *rng, unsigned long n)
{
    return gsl_rng_uniform_int(rng, n);
}

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
#ifndef ASAN
#define ASAN 0
#endif

#if defined(AMK_GPU_HIP)
#define ARCH "gfx90a"
#define OTHER_ARCH "sm_90"
#define TARGET "mi250x"
#define N_RANDOM 2
#else
#define ARCH "sm_90"
#define OTHER_ARCH "gfx90a"
#define TARGET "h100"
#define N_RANDOM 3
#endif

/* ---------- helpers ------------------------------------------------------------------------ */

static char tmpdir[256];

static void make_tmpdir(void)
{
    amk_test_tmpdir_make(tmpdir, sizeof tmpdir, "compile");
}

static void remove_tmpdir(void)
{
    amk_test_tmpdir_remove(tmpdir);
}

static int file_contains(const char *path, const char *needle)
{
    char *data = NULL;
    size_t len = 0;
    amk_diag d;
    if (amk_fs_read_all(path, &data, &len, &d) != AMK_OK)
        return 0;
    int found = strstr(data, needle) != NULL;
    free(data);
    return found;
}

/* ---------- worker pool -------------------------------------------------------------------- */

/* The idle hook's calls in the child ("idles" reports them); it asks to be called again
 * until idle_limit calls (set before the fork). */
static int idle_calls, idle_limit;

static int test_idle(void *ud)
{
    (void)ud;
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
    return ++idle_calls < idle_limit;
}

/* Test handler: the request text says what to do. */
static int test_handler(void *ud, const void *req, size_t len, void **resp, size_t *resp_len)
{
    (void)ud;
    char cmd[64];
    size_t n = len < sizeof cmd - 1 ? len : sizeof cmd - 1;
    memcpy(cmd, req, n);
    cmd[n] = '\0';
    char *out = NULL;
    size_t out_len = 0;
    if (!strcmp(cmd, "abort")) {
        fprintf(stderr, "munmap_chunk(): invalid pointer\n");
        abort();
    } else if (!strcmp(cmd, "segv")) {
        fprintf(stderr, "about to fault\n");
        raise(SIGSEGV);
    } else if (!strcmp(cmd, "exit3")) {
        _exit(3);
    } else if (!strcmp(cmd, "hang")) {
        for (;;)
            pause();
    } else if (!strcmp(cmd, "spin")) {
        volatile unsigned long x = 0;
        for (;;)
            x++;
    } else if (!strcmp(cmd, "noisy")) {
        fprintf(stderr, "a warning the compiler printed\n");
    } else if (!strcmp(cmd, "recycle")) {
        return AMK_WORKER_RECYCLE;
    } else if (!strncmp(cmd, "sleep:", 6)) {
        struct timespec ts = {0, 0};
        long ms = atol(cmd + 6);
        ts.tv_sec = ms / 1000;
        ts.tv_nsec = (ms % 1000) * 1000000L;
        nanosleep(&ts, NULL);
        out = malloc(len + 1);
        memcpy(out, req, len);
        out_len = len;
    } else if (!strcmp(cmd, "fds")) {
        int count = 0;
        for (int fd = 0; fd < 1024; fd++)
            count += fcntl(fd, F_GETFD) >= 0;
        out = malloc(32);
        out_len = (size_t)snprintf(out, 32, "%d", count);
    } else if (!strncmp(cmd, "alloc:", 6)) {
        size_t mib = (size_t)atol(cmd + 6);
        char *p = malloc(mib << 20);
        if (p)
            memset(p, 1, mib << 20);
        out = malloc(8);
        out_len = (size_t)snprintf(out, 8, "%s", p ? "ok" : "null");
        free(p);
    } else if (!strcmp(cmd, "idles")) {
        out = malloc(32);
        out_len = (size_t)snprintf(out, 32, "%d", idle_calls);
    } else if (!strncmp(cmd, "big:", 4)) {
        out_len = (size_t)atol(cmd + 4);
        out = malloc(out_len);
        for (size_t i = 0; i < out_len; i++)
            out[i] = (char)(i * 7 + 3);
    } else {
        out = malloc(len + 1);
        memcpy(out, req, len);
        out_len = len; /* echo */
    }
    *resp = out;
    *resp_len = out_len;
    return AMK_WORKER_CONTINUE;
}

static amk_worker_pool *make_pool(int n, double cpu_limit, uint64_t as_limit)
{
    amk_worker_opts o = {0};
    o.name = "test";
    o.n_workers = n;
    o.cpu_limit_s = cpu_limit;
    o.as_limit_bytes = as_limit;
    amk_worker_pool *p = NULL;
    amk_diag d;
    ck_assert_msg(amk__worker_pool_create(&o, test_handler, &p, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk__worker_pool_size(p), n);
    return p;
}

static void run1(amk_worker_pool *p, amk_worker_job *j, const char *req, double timeout)
{
    memset(j, 0, sizeof *j);
    j->req = req;
    j->req_len = strlen(req);
    j->timeout_s = timeout;
    amk_diag d;
    ck_assert_msg(amk__worker_pool_run(p, j, 1, &d) == AMK_OK, "%s", d.msg);
}

START_TEST(test_worker_pool_run_parallel_echo)
{
    amk_worker_pool *p = make_pool(3, 0, 0);
    int pids[3];
    for (int i = 0; i < 3; i++) {
        pids[i] = amk__worker_pool_pid(p, i);
        ck_assert_int_gt(pids[i], 0);
    }
    enum { N = 20 };
    amk_worker_job jobs[N];
    char reqs[N][32];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < N; i++) {
        snprintf(reqs[i], sizeof reqs[i], "message %d", i);
        jobs[i].req = reqs[i];
        jobs[i].req_len = strlen(reqs[i]);
        jobs[i].timeout_s = 10;
    }
    amk_diag d;
    ck_assert_int_eq(amk__worker_pool_run(p, jobs, N, &d), AMK_OK);
    int used[3] = {0};
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(jobs[i].rc, AMK_OK);
        ck_assert_uint_eq(jobs[i].resp_len, strlen(reqs[i]));
        ck_assert(memcmp(jobs[i].resp, reqs[i], jobs[i].resp_len) == 0);
        ck_assert(jobs[i].worker >= 0 && jobs[i].worker < 3);
        used[jobs[i].worker] = 1;
        amk__worker_job_clear(&jobs[i]);
    }
    ck_assert_msg(used[0] && used[1] && used[2], "the batch was not spread over the pool");
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(amk__worker_pool_pid(p, i), pids[i]); /* long-lived: no respawn */
    ck_assert_int_eq(amk__worker_pool_respawns(p), 0);
    amk__worker_pool_free(p);
}
END_TEST

START_TEST(test_worker_pool_run_abort_replaced_with_stderr)
{
    amk_worker_pool *p = make_pool(1, 0, 0);
    int pid0 = amk__worker_pool_pid(p, 0);
    amk_worker_job j;
    run1(p, &j, "abort", 10);
    ck_assert_int_eq(j.rc, AMK_EWORKER);
    ck_assert_int_eq(j.term_signal, SIGABRT);
    ck_assert_int_eq(j.pid, pid0);
    ck_assert_msg(strstr(j.stderr_tail, "munmap_chunk(): invalid pointer"), "tail: '%s'",
                  j.stderr_tail);
    ck_assert_msg(strstr(j.reason, "signal 6"), "reason: %s", j.reason);
    amk__worker_job_clear(&j);
    ck_assert_int_eq(amk__worker_pool_respawns(p), 1);
    int pid1 = amk__worker_pool_pid(p, 0);
    ck_assert_int_gt(pid1, 0);
    ck_assert_int_ne(pid1, pid0);
    /* The old worker is reaped, not a zombie. */
    ck_assert_int_eq(waitpid(pid0, NULL, WNOHANG), -1);
    run1(p, &j, "after", 10);
    ck_assert_int_eq(j.rc, AMK_OK);
    ck_assert_uint_eq(j.resp_len, 5);
    ck_assert_str_eq(j.stderr_tail, ""); /* the tail belongs to this request only */
    amk__worker_job_clear(&j);
    amk__worker_pool_free(p);
}
END_TEST

START_TEST(test_worker_pool_run_segv_and_exit)
{
    amk_worker_pool *p = make_pool(1, 0, 0);
    amk_worker_job j;
    run1(p, &j, "segv", 10);
    ck_assert_int_eq(j.rc, AMK_EWORKER);
    ck_assert_int_eq(j.term_signal, SIGSEGV);
    ck_assert(strstr(j.stderr_tail, "about to fault") != NULL);
    amk__worker_job_clear(&j);
    run1(p, &j, "exit3", 10);
    ck_assert_int_eq(j.rc, AMK_EWORKER);
    ck_assert_int_eq(j.term_signal, 0);
    ck_assert_int_eq(j.exit_status, 3);
    ck_assert_msg(strstr(j.reason, "status 3"), "reason: %s", j.reason);
    amk__worker_job_clear(&j);
    ck_assert_int_eq(amk__worker_pool_respawns(p), 2);
    run1(p, &j, "fine", 10);
    ck_assert_int_eq(j.rc, AMK_OK);
    amk__worker_job_clear(&j);
    amk__worker_pool_free(p);
}
END_TEST

START_TEST(test_worker_pool_run_hang_times_out)
{
    amk_worker_pool *p = make_pool(1, 0, 0);
    amk_worker_job j;
    double t0 = amk_now_s();
    run1(p, &j, "hang", 0.5);
    double dt = amk_now_s() - t0;
    ck_assert_int_eq(j.rc, AMK_ETIMEDOUT);
    ck_assert_int_eq(j.term_signal, SIGKILL);
    ck_assert_msg(dt >= 0.45 && dt < 5.0, "timed out after %.3f s", dt);
    ck_assert(j.elapsed_s >= 0.45);
    amk__worker_job_clear(&j);
    run1(p, &j, "next", 10);
    ck_assert_int_eq(j.rc, AMK_OK);
    amk__worker_job_clear(&j);
    amk__worker_pool_free(p);
}
END_TEST

/* One batch: a crash and a hang among good requests; the good ones all come back. */
START_TEST(test_worker_pool_run_mixed_batch)
{
    amk_worker_pool *p = make_pool(2, 0, 0);
    const char *reqs[] = {"a", "abort", "b", "hang", "c", "segv", "d", "e"};
    enum { N = 8 };
    amk_worker_job jobs[N];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < N; i++) {
        jobs[i].req = reqs[i];
        jobs[i].req_len = strlen(reqs[i]);
        jobs[i].timeout_s = 1.0;
    }
    amk_diag d;
    ck_assert_int_eq(amk__worker_pool_run(p, jobs, N, &d), AMK_OK);
    for (int i = 0; i < N; i++) {
        if (!strcmp(reqs[i], "abort") || !strcmp(reqs[i], "segv"))
            ck_assert_int_eq(jobs[i].rc, AMK_EWORKER);
        else if (!strcmp(reqs[i], "hang"))
            ck_assert_int_eq(jobs[i].rc, AMK_ETIMEDOUT);
        else {
            ck_assert_int_eq(jobs[i].rc, AMK_OK);
            ck_assert(jobs[i].resp_len == 1 && ((char *)jobs[i].resp)[0] == reqs[i][0]);
        }
        amk__worker_job_clear(&jobs[i]);
    }
    ck_assert_int_eq(amk__worker_pool_respawns(p), 3);
    amk__worker_pool_free(p);
}
END_TEST

START_TEST(test_worker_pool_run_cpu_limit)
{
    amk_worker_pool *p = make_pool(1, 1.0, 0);
    amk_worker_job j;
    run1(p, &j, "spin", 60);
    ck_assert_int_eq(j.rc, AMK_EWORKER);
    ck_assert_int_eq(j.term_signal, SIGXCPU);
    amk__worker_job_clear(&j);
    /* The limit is per request: a fresh worker serves the next one. */
    run1(p, &j, "ok", 10);
    ck_assert_int_eq(j.rc, AMK_OK);
    amk__worker_job_clear(&j);
    amk__worker_pool_free(p);
}
END_TEST

START_TEST(test_worker_pool_create_as_limit)
{
    if (ASAN)
        return; /* RLIMIT_AS is not applied under AddressSanitizer (documented) */
    amk_worker_pool *p = make_pool(1, 0, 512ull << 20);
    amk_worker_job j;
    run1(p, &j, "alloc:1024", 30);
    ck_assert_int_eq(j.rc, AMK_OK);
    ck_assert_uint_eq(j.resp_len, 4);
    ck_assert(memcmp(j.resp, "null", 4) == 0);
    amk__worker_job_clear(&j);
    run1(p, &j, "alloc:64", 30);
    ck_assert_int_eq(j.rc, AMK_OK);
    ck_assert(memcmp(j.resp, "ok", 2) == 0);
    amk__worker_job_clear(&j);
    amk__worker_pool_free(p);
}
END_TEST

START_TEST(test_worker_pool_run_recycle)
{
    amk_worker_pool *p = make_pool(1, 0, 0);
    int pid0 = amk__worker_pool_pid(p, 0);
    amk_worker_job j;
    run1(p, &j, "recycle", 10);
    ck_assert_int_eq(j.rc, AMK_OK);
    amk__worker_job_clear(&j);
    ck_assert_int_ne(amk__worker_pool_pid(p, 0), pid0);
    ck_assert_int_eq(waitpid(pid0, NULL, WNOHANG), -1);
    run1(p, &j, "x", 10);
    ck_assert_int_eq(j.rc, AMK_OK);
    amk__worker_job_clear(&j);
    amk__worker_pool_free(p);
}
END_TEST

/* The idle hook (the run worker keeps the device loaded with it) runs while no request
 * waits, stops when it says so, and never holds a request up by more than one call. */
START_TEST(test_worker_pool_idle_hook)
{
    for (int limit = 4; limit <= 1000000; limit += 999996) {
        amk_worker_opts o = {0};
        o.name = "test";
        o.n_workers = 1;
        o.child_idle = test_idle;
        idle_limit = limit;
        amk_worker_pool *p = NULL;
        amk_diag d;
        ck_assert_msg(amk__worker_pool_create(&o, test_handler, &p, &d) == AMK_OK, "%s", d.msg);
        struct timespec ts = {0, 150000000};
        nanosleep(&ts, NULL);
        amk_worker_job j;
        double t0 = amk_now_s();
        run1(p, &j, "idles", 10);
        double waited = amk_now_s() - t0;
        ck_assert_int_eq(j.rc, AMK_OK);
        char got[32] = {0};
        memcpy(got, j.resp, j.resp_len < 31 ? j.resp_len : 31);
        int calls = atoi(got);
        if (limit == 4)
            ck_assert_int_eq(calls, 4); /* it said stop: the worker blocked instead */
        else
            ck_assert_msg(calls >= 10 && calls < 100, "%d idle calls in 150 ms", calls);
        ck_assert_msg(waited < 1.0, "a request waited %.3f s behind the idle hook", waited);
        amk__worker_job_clear(&j);
        amk__worker_pool_free(p);
    }
}
END_TEST

/* A later-forked worker must not hold earlier workers' pipes: same fd count everywhere. */
START_TEST(test_worker_pool_create_closes_other_fds)
{
    amk_worker_pool *p = make_pool(4, 0, 0);
    amk_worker_job jobs[4];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < 4; i++) {
        jobs[i].req = "fds";
        jobs[i].req_len = 3;
        jobs[i].timeout_s = 10;
    }
    amk_diag d;
    ck_assert_int_eq(amk__worker_pool_run(p, jobs, 4, &d), AMK_OK);
    int counts[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(jobs[i].rc, AMK_OK);
        char buf[16];
        snprintf(buf, sizeof buf, "%.*s", (int)jobs[i].resp_len, (char *)jobs[i].resp);
        counts[jobs[i].worker] = atoi(buf);
        amk__worker_job_clear(&jobs[i]);
    }
    for (int i = 1; i < 4; i++)
        ck_assert_msg(counts[i] == counts[0], "worker %d has %d fds, worker 0 has %d", i,
                      counts[i], counts[0]);
    amk__worker_pool_free(p);
}
END_TEST

/* Completion callback: each job reported once, as soon as its outputs are final, in the
 * order jobs finish (a fast job is not held back by a slow one started before it). */
typedef struct done_log {
    amk_worker_job *jobs;
    size_t order[16];
    int n;
    int final_ok;
} done_log;

static void on_job_done(size_t j, void *ud)
{
    done_log *l = ud;
    const amk_worker_job *job = &l->jobs[j];
    ck_assert_int_lt(l->n, 16);
    l->order[l->n++] = j;
    /* Outputs are final: an answer, or a failure with its reason. */
    if (job->rc == AMK_OK)
        l->final_ok &= job->resp != NULL && job->elapsed_s >= 0 && job->elapsed_s < 60;
    else
        l->final_ok &= job->reason[0] != '\0';
}

START_TEST(test_worker_pool_run_cb_reports_in_completion_order)
{
    amk_worker_pool *p = make_pool(2, 0, 0);
    const char *reqs[] = {"sleep:3000", "sleep:300", "abort", "quick", "hang", "last"};
    enum { N = 6 };
    amk_worker_job jobs[N];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < N; i++) {
        jobs[i].req = reqs[i];
        jobs[i].req_len = strlen(reqs[i]);
        jobs[i].timeout_s = i == 4 ? 0.5 : 10;
    }
    done_log l = {jobs, {0}, 0, 1};
    amk_diag d;
    ck_assert_int_eq(amk__worker_pool_run_cb(p, jobs, N, on_job_done, &l, &d), AMK_OK);
    ck_assert_int_eq(l.n, N);
    ck_assert_msg(l.final_ok, "a job was reported before its outputs were final");
    int seen[N] = {0}, pos[N];
    for (int k = 0; k < N; k++) {
        ck_assert_uint_lt(l.order[k], N);
        ck_assert_int_eq(seen[l.order[k]]++, 0);
        pos[l.order[k]] = k;
    }
    /* Worker 0 sleeps 3 s while worker 1 runs 300 ms, the abort, "quick", the 0.5 s hang and
     * "last": all of them finish first. */
    ck_assert_int_eq(pos[0], N - 1);
    ck_assert_int_lt(pos[1], pos[2]);
    ck_assert_int_lt(pos[2], pos[3]);
    ck_assert_int_eq(jobs[2].rc, AMK_EWORKER);
    ck_assert_int_eq(jobs[4].rc, AMK_ETIMEDOUT);
    ck_assert_int_eq(jobs[5].rc, AMK_OK);
    for (int i = 0; i < N; i++)
        amk__worker_job_clear(&jobs[i]);

    /* The callback-less form is the same run. */
    memset(jobs, 0, sizeof jobs);
    jobs[0].req = "x";
    jobs[0].req_len = 1;
    ck_assert_int_eq(amk__worker_pool_run(p, jobs, 1, &d), AMK_OK);
    ck_assert_int_eq(jobs[0].rc, AMK_OK);
    amk__worker_job_clear(&jobs[0]);
    amk__worker_pool_free(p);
}
END_TEST

/* Pools driven from several threads at once, each replacing its crashed workers: every
 * answer arrives, and a worker forked by any thread holds no other worker's descriptors
 * (same count as a lone pool's worker). */
typedef struct thread_pool_arg {
    amk_worker_pool *p;
    int ok;
    char fds[16];
} thread_pool_arg;

static void *drive_pool(void *arg)
{
    thread_pool_arg *t = arg;
    t->ok = 1;
    for (int round = 0; round < 6; round++) {
        amk_worker_job j[2];
        memset(j, 0, sizeof j);
        j[0].req = round % 2 ? "abort" : "segv";
        j[0].req_len = strlen(j[0].req);
        j[1].req = "echo";
        j[1].req_len = 4;
        j[0].timeout_s = j[1].timeout_s = 10;
        amk_diag d;
        t->ok &= amk__worker_pool_run(t->p, j, 2, &d) == AMK_OK;
        t->ok &= j[0].rc == AMK_EWORKER && j[1].rc == AMK_OK && j[1].resp_len == 4;
        amk__worker_job_clear(&j[0]);
        amk__worker_job_clear(&j[1]);
    }
    /* The worker now running was forked by this thread while the others forked theirs. */
    amk_worker_job j;
    memset(&j, 0, sizeof j);
    j.req = "fds";
    j.req_len = 3;
    j.timeout_s = 10;
    amk_diag d;
    t->ok &= amk__worker_pool_run(t->p, &j, 1, &d) == AMK_OK && j.rc == AMK_OK;
    snprintf(t->fds, sizeof t->fds, "%.*s", (int)j.resp_len, j.resp ? (char *)j.resp : "");
    amk__worker_job_clear(&j);
    return NULL;
}

START_TEST(test_worker_pool_run_from_several_threads)
{
    enum { T = 3 };
    pthread_t th[T];
    thread_pool_arg arg[T];
    memset(arg, 0, sizeof arg);
    for (int i = 0; i < T; i++)
        arg[i].p = make_pool(1, 0, 0);
    for (int i = 0; i < T; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, drive_pool, &arg[i]), 0);
    for (int i = 0; i < T; i++)
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < T; i++)
        amk__worker_pool_free(arg[i].p);
    amk_worker_pool *lone = make_pool(1, 0, 0);
    amk_worker_job j;
    run1(lone, &j, "fds", 10);
    char want[16];
    snprintf(want, sizeof want, "%.*s", (int)j.resp_len, (char *)j.resp);
    amk__worker_job_clear(&j);
    amk__worker_pool_free(lone);
    for (int i = 0; i < T; i++) {
        ck_assert_msg(arg[i].ok, "pool %d lost an answer", i);
        ck_assert_msg(strcmp(arg[i].fds, want) == 0, "worker of pool %d holds %s descriptors, "
                      "a lone worker %s", i, arg[i].fds, want);
    }
}
END_TEST

START_TEST(test_worker_pool_run_big_messages)
{
    amk_worker_pool *p = make_pool(2, 0, 0);
    size_t big = 8u << 20; /* far above a pipe's buffer, both ways */
    char *req = malloc(big);
    for (size_t i = 0; i < big; i++)
        req[i] = (char)('a' + i % 26);
    amk_worker_job jobs[2];
    memset(jobs, 0, sizeof jobs);
    jobs[0].req = req;
    jobs[0].req_len = big;
    jobs[0].timeout_s = 30;
    jobs[1].req = "big:9000000";
    jobs[1].req_len = strlen("big:9000000");
    jobs[1].timeout_s = 30;
    amk_diag d;
    ck_assert_int_eq(amk__worker_pool_run(p, jobs, 2, &d), AMK_OK);
    ck_assert_int_eq(jobs[0].rc, AMK_OK);
    ck_assert_uint_eq(jobs[0].resp_len, big);
    ck_assert(memcmp(jobs[0].resp, req, big) == 0);
    ck_assert_int_eq(jobs[1].rc, AMK_OK);
    ck_assert_uint_eq(jobs[1].resp_len, 9000000);
    const char *r = jobs[1].resp;
    for (size_t i = 0; i < 9000000; i += 4099)
        ck_assert_int_eq(r[i], (char)(i * 7 + 3));
    amk__worker_job_clear(&jobs[0]);
    amk__worker_job_clear(&jobs[1]);
    free(req);
    amk__worker_pool_free(p);
}
END_TEST

START_TEST(test_worker_pool_run_keeps_stderr_on_success)
{
    amk_worker_pool *p = make_pool(1, 0, 0);
    amk_worker_job j;
    run1(p, &j, "noisy", 10);
    ck_assert_int_eq(j.rc, AMK_OK);
    ck_assert(strstr(j.stderr_tail, "a warning the compiler printed") != NULL);
    amk__worker_job_clear(&j);
    amk__worker_pool_free(p);
}
END_TEST

START_TEST(test_worker_pool_free_reaps_all)
{
    amk_worker_pool *p = make_pool(3, 0, 0);
    int pids[3];
    for (int i = 0; i < 3; i++)
        pids[i] = amk__worker_pool_pid(p, i);
    /* One worker is busy hanging when the pool is freed. */
    amk_worker_job j;
    run1(p, &j, "hang", 0.2);
    amk__worker_job_clear(&j);
    for (int i = 0; i < 3; i++)
        pids[i] = amk__worker_pool_pid(p, i);
    amk__worker_pool_free(p);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(waitpid(pids[i], NULL, WNOHANG), -1);
        ck_assert_int_eq(kill(pids[i], 0), -1);
    }
}
END_TEST

/* A pool's workers must not hold another pool's pipes: freeing the first pool while a second
 * exists lets its idle workers see EOF and exit at once (no kill after the grace period). */
START_TEST(test_worker_pool_free_with_other_pool_alive)
{
    amk_worker_pool *a = make_pool(2, 0, 0);
    amk_worker_pool *b = make_pool(2, 0, 0);
    amk_worker_job j;
    run1(b, &j, "ping", 10);
    ck_assert_int_eq(j.rc, AMK_OK);
    amk__worker_job_clear(&j);
    double t0 = amk_now_s();
    amk__worker_pool_free(a);
    double dt = amk_now_s() - t0;
    ck_assert_msg(dt < 0.8, "freeing took %.3f s: workers did not see EOF", dt);
    run1(b, &j, "still", 10);
    ck_assert_int_eq(j.rc, AMK_OK);
    amk__worker_job_clear(&j);
    amk__worker_pool_free(b);
}
END_TEST

START_TEST(test_worker_pool_create_invalid)
{
    amk_worker_opts o = {0};
    amk_worker_pool *p = NULL;
    amk_diag d;
    o.n_workers = -1;
    ck_assert_int_eq(amk__worker_pool_create(&o, test_handler, &p, &d), AMK_EINVAL);
    o.n_workers = 1;
    ck_assert_int_eq(amk__worker_pool_create(&o, NULL, &p, &d), AMK_EINVAL);
    ck_assert_ptr_null(p);
    amk__worker_pool_free(NULL);
    ck_assert_str_eq(amk__signal_name(SIGABRT), "Aborted");
}
END_TEST

/* ---------- cache ------------------------------------------------------------------------- */

START_TEST(test_cache_key_sensitivity)
{
    const char *o1[] = {"-DA=1", "-DB=2"};
    const char *o2[] = {"-DB=2", "-DA=1"};
    const char *o3[] = {"-DA=1", "-DB=3"};
    const char *o4[] = {"-DA=1-DB=2"};
    uint64_t k = amk__cache_key("src", 3, o1, 2, "sm_90", "nvrtc 13.0");
    ck_assert(k == amk__cache_key("src", 3, o1, 2, "sm_90", "nvrtc 13.0"));
    ck_assert(k != amk__cache_key("srd", 3, o1, 2, "sm_90", "nvrtc 13.0"));
    ck_assert(k != amk__cache_key("src", 3, o2, 2, "sm_90", "nvrtc 13.0"));
    ck_assert(k != amk__cache_key("src", 3, o3, 2, "sm_90", "nvrtc 13.0"));
    ck_assert(k != amk__cache_key("src", 3, o4, 1, "sm_90", "nvrtc 13.0"));
    ck_assert(k != amk__cache_key("src", 3, o1, 2, "sm_80", "nvrtc 13.0"));
    ck_assert(k != amk__cache_key("src", 3, o1, 2, "sm_90", "nvrtc 12.8"));
    ck_assert(k != amk__cache_key("src", 3, o1, 1, "sm_90", "nvrtc 13.0"));
}
END_TEST

static amk_cache *open_cache(void)
{
    amk_cache *c = NULL;
    amk_diag d;
    make_tmpdir();
    ck_assert_msg(amk__cache_open(tmpdir, &c, &d) == AMK_OK, "%s", d.msg);
    ck_assert_str_eq(amk__cache_dir(c), tmpdir);
    return c;
}

START_TEST(test_cache_get_roundtrip_and_miss)
{
    amk_cache *c = open_cache();
    amk_diag d;
    void *data = NULL;
    size_t len = 0;
    double ms = 0;
    ck_assert_int_eq(amk__cache_get(c, 42, &data, &len, &ms, &d), AMK_ENOENT);
    const char payload[] = "\x7f" "ELF code object bytes\0with a NUL";
    ck_assert_int_eq(amk__cache_put(c, 42, payload, sizeof payload, 1234.5, &d), AMK_OK);
    ck_assert_int_eq(amk__cache_get(c, 42, &data, &len, &ms, &d), AMK_OK);
    ck_assert_uint_eq(len, sizeof payload);
    ck_assert(memcmp(data, payload, len) == 0);
    ck_assert(fabs(ms - 1234.5) < 1e-9);
    free(data);
    ck_assert_int_eq(amk__cache_get(c, 43, &data, &len, NULL, &d), AMK_ENOENT);
    /* Empty payloads are legal. */
    ck_assert_int_eq(amk__cache_put(c, 44, "", 0, 0, &d), AMK_OK);
    ck_assert_int_eq(amk__cache_get(c, 44, &data, &len, NULL, &d), AMK_OK);
    ck_assert_uint_eq(len, 0);
    free(data);
    amk__cache_close(c);
    remove_tmpdir();
}
END_TEST

/* Flips one byte of an entry file at offset off (negative: from the end). */
static void flip_byte(const char *path, long off)
{
    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    off_t at = off >= 0 ? off : st.st_size + off;
    unsigned char b;
    ck_assert_int_eq(pread(fd, &b, 1, at), 1);
    b ^= 0x5a;
    ck_assert_int_eq(pwrite(fd, &b, 1, at), 1);
    close(fd);
}

START_TEST(test_cache_get_detects_corruption)
{
    amk_cache *c = open_cache();
    amk_diag d;
    char path[4096];
    void *data = NULL;
    size_t len = 0;
    unsigned char payload[5000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (unsigned char)(i * 13);
    long offsets[] = {-1, -2500, 20, 3, 40};
    for (size_t t = 0; t < sizeof offsets / sizeof offsets[0]; t++) {
        ck_assert_int_eq(amk__cache_put(c, 7, payload, sizeof payload, 1, &d), AMK_OK);
        amk__cache_entry_path(c, 7, path, sizeof path);
        flip_byte(path, offsets[t]);
        ck_assert_msg(amk__cache_get(c, 7, &data, &len, NULL, &d) == AMK_ENOENT,
                      "corruption at %ld not detected", offsets[t]);
        ck_assert_msg(!amk_fs_exists(path), "corrupted entry not removed");
    }
    /* Truncated entry. */
    ck_assert_int_eq(amk__cache_put(c, 7, payload, sizeof payload, 1, &d), AMK_OK);
    ck_assert_int_eq(truncate(path, 1000), 0);
    ck_assert_int_eq(amk__cache_get(c, 7, &data, &len, NULL, &d), AMK_ENOENT);
    /* An entry copied under another key's name is not that key's object. */
    ck_assert_int_eq(amk__cache_put(c, 7, payload, sizeof payload, 1, &d), AMK_OK);
    char other[4096];
    amk__cache_entry_path(c, 8, other, sizeof other);
    char *bytes;
    size_t n;
    ck_assert_int_eq(amk_fs_read_all(path, &bytes, &n, &d), AMK_OK);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", other);
    *strrchr(dir, '/') = '\0';
    ck_assert_int_eq(amk_fs_mkdir_p(dir, &d), AMK_OK);
    ck_assert_int_eq(amk_fs_write_atomic(other, bytes, n, &d), AMK_OK);
    free(bytes);
    ck_assert_int_eq(amk__cache_get(c, 8, &data, &len, NULL, &d), AMK_ENOENT);
    /* The intact one still reads. */
    ck_assert_int_eq(amk__cache_get(c, 7, &data, &len, NULL, &d), AMK_OK);
    ck_assert(len == sizeof payload && memcmp(data, payload, len) == 0);
    free(data);
    amk__cache_close(c);
    remove_tmpdir();
}
END_TEST

/* Four processes write one key over and over with different payloads while reading it:
 * every successful read is one complete payload. */
START_TEST(test_cache_put_concurrent_writers)
{
    amk_cache *c = open_cache();
    pid_t kids[4];
    for (int k = 0; k < 4; k++) {
        kids[k] = fork();
        ck_assert_int_ge(kids[k], 0);
        if (kids[k] == 0) {
            amk_diag d;
            int bad = 0;
            for (int it = 0; it < 40; it++) {
                unsigned char v = (unsigned char)(k * 50 + it % 50 + 1);
                size_t len = 1000u * v;
                unsigned char *buf = malloc(len);
                memset(buf, v, len);
                if (amk__cache_put(c, 99, buf, len, v, &d) != AMK_OK)
                    bad = 1;
                free(buf);
                void *data = NULL;
                size_t got = 0;
                if (amk__cache_get(c, 99, &data, &got, NULL, &d) == AMK_OK) {
                    unsigned char *p = data;
                    if (got == 0 || got != 1000u * p[0])
                        bad = 1;
                    for (size_t i = 0; i < got && !bad; i++)
                        bad = p[i] != p[0];
                }
                free(data);
            }
            _exit(bad);
        }
    }
    for (int k = 0; k < 4; k++) {
        int st;
        ck_assert_int_eq(waitpid(kids[k], &st, 0), kids[k]);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d saw a torn entry", k);
    }
    amk__cache_close(c);
    remove_tmpdir();
}
END_TEST

START_TEST(test_cache_write_log)
{
    amk_cache *c = open_cache();
    amk_diag d;
    char path[4096];
    ck_assert_int_eq(amk__cache_write_log(c, "0123abcd", "line 1\nline 2\n", 14, path,
                                          sizeof path, &d), AMK_OK);
    ck_assert(strstr(path, "/logs/0123abcd.log") != NULL);
    ck_assert(file_contains(path, "line 2"));
    /* A name cannot leave the logs folder. */
    ck_assert_int_eq(amk__cache_write_log(c, "../../evil", "x", 1, path, sizeof path, &d),
                     AMK_OK);
    ck_assert(strstr(path, "/logs/") != NULL && strstr(path, "/../") == NULL);
    amk__cache_close(c);
    remove_tmpdir();
}
END_TEST

/* ---------- compile units ----------------------------------------------------------------- */

static amk_registry *reg;

static void load_registry(void)
{
    amk_diag d;
    ck_assert_msg(amk_registry_create(&reg, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_registry_add_dir(reg, AMK_TEST_FIXTURES "/compile", &d) == AMK_OK, "%s",
                  d.msg);
}

static void free_registry(void)
{
    amk_registry_free(reg);
    reg = NULL;
}

/* Config of kernel `name` at shape text (NULL = default) with param overrides "P=V". */
static amk_config cfg_of(const char *name, const char *shape, const char *p1, int v1)
{
    const amk_spec *s = amk_registry_find(reg, name);
    ck_assert_msg(s != NULL, "kernel %s not found", name);
    amk_shape sh;
    amk_diag d;
    if (shape)
        ck_assert_msg(amk_shape_parse(s, shape, &sh, &d) == AMK_OK, "%s", d.msg);
    else
        amk_spec_shape(s, 0, &sh);
    amk_config c;
    amk_config_default(s, &sh, &c);
    if (p1) {
        int p = amk_spec_param_index(s, p1), found = 0;
        ck_assert_int_ge(p, 0);
        for (int k = 0; k < amk_spec_param_n_choices(s, p); k++)
            if (amk_spec_param_value(s, p, k) == v1) {
                c.choice[p] = (uint8_t)k;
                found = 1;
            }
        ck_assert(found);
    }
    return c;
}

static int has_option(const amk_compile_unit *u, const char *opt)
{
    for (int i = 0; i < u->n_options; i++)
        if (!strcmp(u->options[i], opt))
            return 1;
    return 0;
}

START_TEST(test_compile_unit_config_options)
{
    amk_config c = cfg_of("scale", NULL, "BLOCK", 128);
    amk_compile_unit u;
    amk_diag d;
    ck_assert_msg(amk__compile_unit_config(&c, "sm_90", &u, &d) == AMK_OK, "%s", d.msg);
    char id[17];
    amk_config_id(&c, id);
    ck_assert_str_eq(u.name, id);
    ck_assert_str_eq(u.entry, "scale_kernel");
    ck_assert_str_eq(u.arch, "sm_90");
    ck_assert(has_option(&u, "-DBLOCK=128"));
    ck_assert(has_option(&u, "-DUNROLL=4"));
    ck_assert(has_option(&u, "-DAMK_DTYPE=0"));
    ck_assert(has_option(&u, "-DAMK_ELT=4"));
    ck_assert(has_option(&u, "-DAMK_T_F32=1"));
    ck_assert(has_option(&u, "--gpu-architecture=sm_90"));
    ck_assert(has_option(&u, "-std=c++17"));
    ck_assert(strncmp(u.source, amk_prelude("nvidia"), strlen(amk_prelude("nvidia"))) == 0);
    ck_assert(strstr(u.source, "#line 1 \"scale.hip\"\n") != NULL);
    ck_assert(strstr(u.source, "AMK_KERNEL void scale_kernel") != NULL);
    ck_assert_uint_eq(u.source_len, strlen(u.source));
    amk__compile_unit_clear(&u);

    amk_config h = cfg_of("scale", "half", NULL, 0);
    ck_assert_int_eq(amk__compile_unit_config(&h, "gfx90a", &u, &d), AMK_OK);
    ck_assert(has_option(&u, "-DAMK_DTYPE=1"));
    ck_assert(has_option(&u, "-DAMK_ELT=2"));
    ck_assert(has_option(&u, "-DAMK_T_F16=1"));
    ck_assert(has_option(&u, "--offload-arch=gfx90a"));
    ck_assert(has_option(&u, "-O3"));
    ck_assert(strncmp(u.source, amk_prelude("amd"), strlen(amk_prelude("amd"))) == 0);
    amk__compile_unit_clear(&u);

    ck_assert_int_eq(amk__compile_unit_config(&c, "pentium4", &u, &d), AMK_EUNSUPPORTED);
    ck_assert(strstr(d.msg, "pentium4") != NULL);
    ck_assert_ptr_null(u.source);
}
END_TEST

START_TEST(test_amk_compile_source_get_is_the_unit_amk_compiles)
{
    amk_config c = cfg_of("scale", NULL, "BLOCK", 128);
    amk_compile_unit u;
    amk_compile_source src;
    amk_diag d;
    ck_assert_msg(amk__compile_unit_config(&c, "sm_90", &u, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_compile_source_get(&c, "sm_90", &src, &d) == AMK_OK, "%s", d.msg);
    ck_assert_str_eq(src.text, u.source);
    ck_assert_str_eq(src.entry, "scale_kernel");
    ck_assert_str_eq(src.arch, "sm_90");
    ck_assert_int_eq(src.n_options, u.n_options);
    for (int i = 0; i < u.n_options; i++)
        ck_assert_str_eq(src.options[i], u.options[i]);
    amk__compile_unit_clear(&u);
    amk_compile_source_clear(&src);
    ck_assert_ptr_null(src.text);
    amk_compile_source_clear(&src); /* cleared twice: nothing left to free */
    ck_assert_int_eq(amk_compile_source_get(&c, "pentium4", &src, &d), AMK_EUNSUPPORTED);
    ck_assert_ptr_null(src.text);
    ck_assert_int_eq(src.n_options, 0);
}
END_TEST

START_TEST(test_compile_unit_reference)
{
    amk_config c = cfg_of("scale", "half", NULL, 0);
    amk_compile_unit u;
    amk_diag d;
    ck_assert_int_eq(amk__compile_unit_reference(&c, "sm_90", &u, &d), AMK_OK);
    ck_assert_str_eq(u.name, "scale.reference.f16");
    ck_assert_str_eq(u.entry, "scale_reference");
    ck_assert(!has_option(&u, "-DBLOCK=256"));
    ck_assert(has_option(&u, "-DAMK_T_F16=1"));
    ck_assert(strstr(u.source, "#line 1 \"reference.hip\"") != NULL);
    amk__compile_unit_clear(&u);

    const char *extra[] = {"-DFOO=3"};
    ck_assert_int_eq(amk__compile_unit_text("copy_bw", "copy", "AMK_KERNEL void copy() {}",
                                            extra, 1, "sm_80", &u, &d), AMK_OK);
    ck_assert(has_option(&u, "-DFOO=3"));
    ck_assert(has_option(&u, "--gpu-architecture=sm_80"));
    amk__compile_unit_clear(&u);
}
END_TEST

/* A spec's "defines" reach the compiler (the template's at the config, the reference's at
 * the default params) and its "headers" are expanded in place of their #include lines, in
 * the template and in the reference (the imported asis fixture: asis.cu includes
 * asis_coef.h). */
START_TEST(test_compile_unit_defines_and_headers)
{
    char dir[256], out[512], path[600];
    amk_test_tmpdir_make(dir, sizeof dir, "compile-asis");
    snprintf(out, sizeof out, "%s/asis", dir);
    amk_import_opts io = {.kernel_file = AMK_TEST_FIXTURES "/t1/asis/asis.cu"};
    amk_diag d = {0};
    ck_assert_msg(amk_import_t1(AMK_TEST_FIXTURES "/t1/asis/asis.json", out, &io, &d) == AMK_OK,
                  "%s", d.msg);
    snprintf(path, sizeof path, "%s/spec.json", out);
    char *text = NULL;
    ck_assert_int_eq(amk_fs_read_all(path, &text, NULL, &d), AMK_OK);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cJSON *defs = cJSON_GetObjectItemCaseSensitive(j, "defines");
    ck_assert_ptr_nonnull(defs);
    cJSON_AddStringToObject(defs, "tiles", "block_size_x * tile_size_x");
    text = cJSON_Print(j);
    cJSON_Delete(j);
    amk_test_write_file(path, text);
    free(text);
    amk_spec *s = NULL;
    ck_assert_msg(amk_spec_load(out, &s, &d) == AMK_OK, "%s", d.msg);
    amk_config c;
    amk_config_default(s, NULL, &c); /* block_size_x 128, tile_size_x 2 (moved from 4) */
    c.choice[0] = 0;                 /* block_size_x 32 */
    amk_compile_unit u;
    ck_assert_msg(amk__compile_unit_config(&c, "sm_90", &u, &d) == AMK_OK, "%s", d.msg);
    ck_assert(has_option(&u, "-Dkernel_tuner=1"));
    ck_assert(has_option(&u, "-Dtiles=64"));
    ck_assert(strstr(u.source, "#line 1 \"asis_coef.h\"\n") != NULL);
    ck_assert(strstr(u.source, "#define COEF_N 64") != NULL);
    ck_assert(strstr(u.source, "#include \"asis_coef.h\"") == NULL);
    ck_assert(strstr(u.source, "\n#line 5 \"asis.cu\"\n") != NULL); /* back after line 4 */
    ck_assert_uint_eq(u.source_len, strlen(u.source));
    amk__compile_unit_clear(&u);
    ck_assert_msg(amk__compile_unit_reference(&c, "sm_90", &u, &d) == AMK_OK, "%s", d.msg);
    ck_assert(has_option(&u, "-Dkernel_tuner=1"));
    ck_assert(has_option(&u, "-Dtiles=256")); /* the default params: 128 * 2 */
    ck_assert(strstr(u.source, "#define COEF_N 64") != NULL);
    amk__compile_unit_clear(&u);
    amk_spec_free(s);
    amk_test_tmpdir_remove(dir);
}
END_TEST

/* With `amk import --vary tile_size_x` the reference takes tile_size_x from the config it
 * checks: its unit gets -Dtile_size_x (the other params are #defines of reference.cu), the
 * spec's defines at that reference config; configs differing only in other params share
 * one reference unit (one compile-cache key) and those differing in tile_size_x do not; a
 * reference config that breaks a condition cannot be built, and says so. */
START_TEST(test_compile_unit_reference_vary_params)
{
    char dir[256], out[512], path[600];
    amk_test_tmpdir_make(dir, sizeof dir, "compile-vary");
    snprintf(out, sizeof out, "%s/asis", dir);
    const char *vary[] = {"tile_size_x"};
    amk_import_opts io = {.kernel_file = AMK_TEST_FIXTURES "/t1/asis/asis.cu", .vary = vary,
                          .nvary = 1};
    amk_diag d = {0};
    ck_assert_msg(amk_import_t1(AMK_TEST_FIXTURES "/t1/asis/asis.json", out, &io, &d) == AMK_OK,
                  "%s", d.msg);
    snprintf(path, sizeof path, "%s/spec.json", out);
    char *text = NULL;
    ck_assert_int_eq(amk_fs_read_all(path, &text, NULL, &d), AMK_OK);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(j, "defines"), "tiles",
                            "block_size_x * tile_size_x");
    text = cJSON_Print(j);
    cJSON_Delete(j);
    amk_test_write_file(path, text);
    free(text);
    amk_spec *s = NULL;
    ck_assert_msg(amk_spec_load(out, &s, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_spec_n_reference_vary(s), 1);
    amk_config a, b, c;
    amk_config_default(s, NULL, &a); /* block_size_x 128, tile_size_x 2 */
    a.choice[0] = 0;                 /* block_size_x 32 */
    a.choice[1] = 0;                 /* tile_size_x 1 */
    b = a;
    b.choice[0] = 1; /* block_size_x 64: not varied */
    c = a;
    c.choice[1] = 2; /* tile_size_x 4: with the default block_size_x 128, 512 > 256 */
    amk_compile_unit ua, ub, uc;
    ck_assert_msg(amk__compile_unit_reference(&a, "sm_90", &ua, &d) == AMK_OK, "%s", d.msg);
    ck_assert(has_option(&ua, "-Dtile_size_x=1"));
    ck_assert(!has_option(&ua, "-Dblock_size_x=32") && !has_option(&ua, "-Dblock_size_x=128"));
    ck_assert(has_option(&ua, "-Dtiles=128")); /* at the reference config: 128 * 1 */
    ck_assert(strstr(ua.source, "#define block_size_x 128\n") != NULL);
    ck_assert(strstr(ua.source, "#define tile_size_x") == NULL);
    ck_assert_msg(amk__compile_unit_reference(&b, "sm_90", &ub, &d) == AMK_OK, "%s", d.msg);
    uint64_t ka = amk__cache_key(ua.source, ua.source_len, (const char *const *)ua.options,
                                 ua.n_options, ua.arch, "nvrtc 13.0");
    ck_assert(ka == amk__cache_key(ub.source, ub.source_len, (const char *const *)ub.options,
                                   ub.n_options, ub.arch, "nvrtc 13.0"));
    ck_assert(amk_config_same_reference(&a, &b));
    amk__compile_unit_clear(&ub);
    b.choice[1] = 1; /* tile_size_x 2 */
    ck_assert_msg(amk__compile_unit_reference(&b, "sm_90", &ub, &d) == AMK_OK, "%s", d.msg);
    ck_assert(has_option(&ub, "-Dtile_size_x=2"));
    ck_assert(ka != amk__cache_key(ub.source, ub.source_len, (const char *const *)ub.options,
                                   ub.n_options, ub.arch, "nvrtc 13.0"));
    ck_assert(!amk_config_same_reference(&a, &b));
    ck_assert_int_eq(amk__compile_unit_reference(&c, "sm_90", &uc, &d), AMK_ERESTRICT);
    ck_assert_msg(strstr(d.msg, "the reference config (the default with tile_size_x=4) is not "
                         "valid: restriction") != NULL, "%s", d.msg);
    ck_assert_ptr_null(uc.source);
    /* The reference's launch at its config: the default block, the checked tile size. */
    amk_config r;
    amk_launch l;
    ck_assert_int_eq(amk_config_reference_config(&b, NULL, &r, &d), AMK_OK);
    ck_assert_int_eq(amk_config_reference_launch(&r, NULL, &l, &d), AMK_OK);
    ck_assert_int_eq(l.block[0], 128);
    ck_assert_int_eq(l.grid[0], (100000 + 255) / 256);
    amk__compile_unit_clear(&ua);
    amk__compile_unit_clear(&ub);
    amk_spec_free(s);
    amk_test_tmpdir_remove(dir);
}
END_TEST

/* A spec that "requires" sm_90a: an sm_90 target compiles it for sm_90a (options and the
 * cache key see the effective arch, so sm_90 and sm_90a share one entry); other archs and
 * the other vendor cannot build it, with a message naming the requirement. */
START_TEST(test_compile_unit_config_required_arch)
{
    amk_config c = cfg_of("gemm_wgmma", NULL, NULL, 0);
    amk_compile_unit u, v;
    amk_diag d;
    ck_assert_msg(amk__compile_unit_config(&c, "sm_90", &u, &d) == AMK_OK, "%s", d.msg);
    ck_assert_str_eq(u.arch, "sm_90a");
    ck_assert(has_option(&u, "--gpu-architecture=sm_90a"));
    ck_assert(!has_option(&u, "--gpu-architecture=sm_90"));
    ck_assert_msg(amk__compile_unit_config(&c, "sm_90a", &v, &d) == AMK_OK, "%s", d.msg);
    ck_assert_str_eq(v.arch, "sm_90a");
    ck_assert(amk__cache_key(u.source, u.source_len, (const char *const *)u.options,
                             u.n_options, u.arch, "nvrtc 13.0") ==
              amk__cache_key(v.source, v.source_len, (const char *const *)v.options,
                             v.n_options, v.arch, "nvrtc 13.0"));
    amk__compile_unit_clear(&v);
    ck_assert_int_eq(amk__compile_unit_reference(&c, "sm_90", &v, &d), AMK_OK);
    ck_assert_str_eq(v.arch, "sm_90a");
    amk__compile_unit_clear(&v);
    amk__compile_unit_clear(&u);

    const char *bad[] = {"sm_80", "sm_100", "gfx942", "gfx90a"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(amk__compile_unit_config(&c, bad[i], &u, &d), AMK_EUNSUPPORTED);
        ck_assert_msg(strstr(d.msg, "gemm_wgmma requires nvidia sm_90a") != NULL, "%s", d.msg);
        ck_assert_msg(strstr(d.msg, bad[i]) != NULL, "%s", d.msg);
        ck_assert_ptr_null(u.source);
        ck_assert_int_eq(amk__compile_unit_reference(&c, bad[i], &u, &d), AMK_EUNSUPPORTED);
    }

    /* A spec without the field keeps the arch it is given. */
    amk_config p = cfg_of("scale", NULL, NULL, 0);
    ck_assert_int_eq(amk__compile_unit_config(&p, "sm_90", &u, &d), AMK_OK);
    ck_assert_str_eq(u.arch, "sm_90");
    amk__compile_unit_clear(&u);
}
END_TEST

START_TEST(test_arch_vendor)
{
    ck_assert_str_eq(amk__arch_vendor("sm_90"), "nvidia");
    ck_assert_str_eq(amk__arch_vendor("sm_90a"), "nvidia");
    ck_assert_str_eq(amk__arch_vendor("sm_100"), "nvidia");
    ck_assert_str_eq(amk__arch_vendor("gfx90a"), "amd");
    ck_assert_str_eq(amk__arch_vendor("gfx942"), "amd");
    ck_assert_ptr_null(amk__arch_vendor("sm_9"));
    ck_assert_ptr_null(amk__arch_vendor("sm_90 -DEVIL"));
    ck_assert_ptr_null(amk__arch_vendor("gfx"));
    ck_assert_ptr_null(amk__arch_vendor("gfx90a;rm"));
    ck_assert_ptr_null(amk__arch_vendor(NULL));
}
END_TEST

/* ---------- compiling --------------------------------------------------------------------- */

#if defined(AMK_HAVE_GPU)

/* Path after "log: " in notes. */
static const char *log_path(const char *notes)
{
    const char *p = strstr(notes, "log: ");
    return p ? p + 5 : "";
}

static amk_compiler *make_compiler_in(const char *dir, int jobs, double cap_s)
{
    amk_backend_opts o = {0};
    o.jobs = jobs;
    o.compile_timeout_s = cap_s;
    o.cache_dir = dir;
    amk_compiler *c = NULL;
    amk_diag d;
    ck_assert_msg(amk__compiler_create(&o, &c, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(strstr(amk__compiler_version(c), amk__rtc_name()) != NULL, "version '%s'",
                  amk__compiler_version(c));
    return c;
}

static amk_compiler *make_compiler(int jobs, double cap_s)
{
    return make_compiler_in(tmpdir, jobs, cap_s);
}

static void compile_cfgs(amk_compiler *c, const amk_config *cfgs, size_t n, const char *arch,
                         amk_code *out)
{
    const amk_config *ptr[64];
    ck_assert(n <= 64);
    for (size_t i = 0; i < n; i++)
        ptr[i] = &cfgs[i];
    amk_diag d;
    ck_assert_msg(amk__compiler_configs(c, ptr, n, arch, out, &d) == AMK_OK, "%s", d.msg);
}

/* Every built-in kernel at its default and N_RANDOM random valid configs (fixed seed, the
 * target's limits), plus its reference, compiles for ARCH. */
START_TEST(test_compile_builtin_kernels)
{
    make_tmpdir();
    amk_registry *builtin;
    amk_diag d;
    ck_assert_msg(amk_registry_create(&builtin, &d) == AMK_OK, "%s", d.msg);
    int nk = amk_registry_count(builtin);
    ck_assert_int_ge(nk, 1);
    const amk_target *t = amk_target_find(TARGET);
    ck_assert_ptr_nonnull(t);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 20240611);
    amk_config cfgs[64];
    size_t n = 0;
    for (int k = 0; k < nk; k++) {
        const amk_spec *s = amk_registry_at(builtin, k);
        char eff[16];
        if (amk_spec_compile_arch(s, t->vendor, ARCH, eff, sizeof eff, &d) != AMK_OK) {
            /* e.g. gemm_wgmma (sm_90a only) in a hipRTC build: no path to compile here. */
            fprintf(stderr, "check_compile: SKIP %s for %s: %s\n", amk_spec_name(s), ARCH,
                    d.msg);
            continue;
        }
        amk_shape sh;
        amk_spec_shape(s, 0, &sh);
        amk_space *sp;
        ck_assert_msg(amk_space_create(s, &sh, &t->limits, &sp, &d) == AMK_OK, "%s", d.msg);
        amk_config_default(s, &sh, &cfgs[n]);
        ck_assert_msg(amk_space_valid(sp, &cfgs[n], &d) == AMK_OK, "%s default: %s",
                      amk_spec_name(s), d.msg);
        n++;
        for (int r = 0; r < N_RANDOM; r++) {
            ck_assert_int_eq(amk_space_sample(sp, &(amk_rng){gsl_below, rng}, &cfgs[n], 100000), AMK_OK);
            n++;
        }
        amk_space_free(sp);
    }
    amk_compiler *c = make_compiler(2, 0);
    amk_code out[64];
    compile_cfgs(c, cfgs, n, ARCH, out);
    for (size_t i = 0; i < n; i++) {
        char *js = amk_config_params_json(&cfgs[i]);
        ck_assert_msg(out[i].status == AMK_STATUS_OK, "%s %s: %s: %s %s",
                      amk_spec_name(cfgs[i].spec), js, amk_status_name(out[i].status),
                      out[i].reason, out[i].notes);
        free(js);
        ck_assert(out[i].image != NULL && out[i].size > 256);
        ck_assert_int_eq(out[i].cache_hit, 0);
        ck_assert(out[i].compile_ms > 0);
        amk__code_clear(&out[i]);
    }
    /* References, one per kernel. */
    amk_compile_unit units[16];
    size_t nu = 0;
    for (size_t i = 0; i < n; i += 1 + N_RANDOM) {
        ck_assert_msg(amk__compile_unit_reference(&cfgs[i], ARCH, &units[nu], &d) == AMK_OK,
                      "%s", d.msg);
        nu++;
    }
    ck_assert_int_eq(amk__compiler_run(c, units, nu, out, &d), AMK_OK);
    for (size_t i = 0; i < nu; i++) {
        ck_assert_msg(out[i].status == AMK_STATUS_OK, "%s: %s", units[i].name, out[i].reason);
        amk__code_clear(&out[i]);
        amk__compile_unit_clear(&units[i]);
    }
    ck_assert_int_eq(amk__worker_pool_respawns(amk__compiler_pool(c)), 0);
    amk__compiler_free(c);
    gsl_rng_free(rng);
    amk_registry_free(builtin);
    remove_tmpdir();
}
END_TEST

/* The Hopper feature fixtures (tests/fixtures/hopper: cluster launch, TMA tensor map,
 * mbarrier deadlock) are only run on an sm_90 GPU; here every valid config of each, and its
 * reference, must compile for sm_90a, so a typo in their inline PTX is caught without one.
 * The HIP build refuses them before compile, naming the NVIDIA requirement. */
static int collect_cfg(const amk_config *c, void *ud)
{
    amk_config **next = ud;
    *(*next)++ = *c;
    return 0;
}

START_TEST(test_compile_hopper_fixtures)
{
    static const char *const names[] = {"hopper_cluster", "hopper_tma_copy",
                                        "hopper_deadlock"};
    make_tmpdir();
    const amk_target *t = amk_target_find(TARGET);
    ck_assert_ptr_nonnull(t);
    amk_compiler *c = NULL;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char dir[512], eff[16];
        amk_spec *s = NULL;
        amk_diag d;
        snprintf(dir, sizeof dir, "%s/hopper/%s", AMK_TEST_FIXTURES, names[k]);
        ck_assert_msg(amk_spec_load(dir, &s, &d) == AMK_OK, "%s", d.msg);
        if (amk_spec_compile_arch(s, t->vendor, ARCH, eff, sizeof eff, &d) != AMK_OK) {
            ck_assert_msg(strcmp(t->vendor, "nvidia") != 0, "%s: %s", names[k], d.msg);
            ck_assert_msg(strstr(d.msg, "nvidia") || strstr(d.msg, "NVIDIA"), "%s", d.msg);
            fprintf(stderr, "check_compile: SKIP %s for %s: %s\n", names[k], ARCH, d.msg);
            amk_spec_free(s);
            continue;
        }
        ck_assert_str_eq(eff, "sm_90a");
        amk_shape sh;
        amk_spec_shape(s, 0, &sh);
        amk_space *sp;
        ck_assert_msg(amk_space_create(s, &sh, &t->limits, &sp, &d) == AMK_OK, "%s", d.msg);
        amk_config cfgs[16], *next = cfgs;
        ck_assert(amk_space_count(sp) >= 2 && amk_space_count(sp) <= 16);
        ck_assert_int_eq(amk_space_enumerate(sp, collect_cfg, &next), AMK_OK);
        size_t n = (size_t)(next - cfgs);
        amk_code out[16];
        if (!c)
            c = make_compiler(2, 0);
        compile_cfgs(c, cfgs, n, ARCH, out);
        for (size_t i = 0; i < n; i++) {
            char *js = amk_config_params_json(&cfgs[i]);
            ck_assert_msg(out[i].status == AMK_STATUS_OK, "%s %s: %s: %s %s", names[k], js,
                          amk_status_name(out[i].status), out[i].reason, out[i].notes);
            free(js);
            amk__code_clear(&out[i]);
        }
        amk_compile_unit u;
        ck_assert_msg(amk__compile_unit_reference(&cfgs[0], ARCH, &u, &d) == AMK_OK, "%s",
                      d.msg);
        ck_assert_int_eq(amk__compiler_run(c, &u, 1, out, &d), AMK_OK);
        ck_assert_msg(out[0].status == AMK_STATUS_OK, "%s reference: %s", names[k],
                      out[0].reason);
        amk__code_clear(&out[0]);
        amk__compile_unit_clear(&u);
        amk_space_free(sp);
        amk_spec_free(s);
    }
    if (c)
        amk__compiler_free(c);
    remove_tmpdir();
}
END_TEST

/* gemm_hopper's ping-pong schedule (PERSISTENT 2: each of 2 consumers owns whole tiles) is
 * valid only where it is built, its derived sizes are those the kernel allocates, and its
 * configs (1x1 and 2-CTA clusters, both epilogues, the tile shapes whose accumulators fit)
 * compile for sm_90a; a random sample of the space need not reach them. */
static amk_config hopper_cfg(const amk_spec *s, const char *params)
{
    static const char *const base =
        "{\"BK\":64,\"BM\":64,\"BN\":256,\"CLUSTER_M\":1,\"CLUSTER_N\":1,\"CONSUMERS\":2,"
        "\"EPILOGUE\":1,\"GROUP_M\":16,\"PERSISTENT\":2,\"REGS\":1,\"STAGES\":4}";
    cJSON *j = cJSON_Parse(base), *o = cJSON_Parse(params);
    ck_assert(j && o);
    for (cJSON *it = o->child; it; it = it->next)
        cJSON_ReplaceItemInObject(j, it->string, cJSON_CreateNumber(it->valuedouble));
    char *txt = cJSON_PrintUnformatted(j);
    amk_shape sh;
    amk_spec_shape(s, 0, &sh);
    amk_config c;
    amk_diag d;
    ck_assert_msg(amk_config_from_params_json(s, &sh, txt, &c, &d) == AMK_OK, "%s: %s", txt,
                  d.msg);
    free(txt);
    cJSON_Delete(j);
    cJSON_Delete(o);
    return c;
}

/* Each of the gemm_hopper configs `built` (hopper_cfg's params, at shape `at`; NULL: the
 * spec's first) is valid on t and compiles. */
static void compile_hopper_ok(const amk_spec *s, const amk_target *t, const char *const *built,
                              size_t nb, const amk_shape *at)
{
    enum { MAX = 8 };
    ck_assert_uint_le(nb, MAX);
    amk_config cfgs[MAX];
    amk_diag d;
    for (size_t i = 0; i < nb; i++) {
        cfgs[i] = hopper_cfg(s, built[i]);
        if (at)
            cfgs[i].shape = *at;
        ck_assert_msg(amk_config_check(&cfgs[i], &t->limits, &d) == AMK_OK, "%s: %s", built[i],
                      d.msg);
    }
    make_tmpdir();
    amk_compiler *c = make_compiler(2, 0);
    amk_code out[MAX];
    compile_cfgs(c, cfgs, nb, ARCH, out);
    for (size_t i = 0; i < nb; i++) {
        ck_assert_msg(out[i].status == AMK_STATUS_OK, "%s: %s: %s %s", built[i],
                      amk_status_name(out[i].status), out[i].reason, out[i].notes);
        amk__code_clear(&out[i]);
    }
    amk__compiler_free(c);
    remove_tmpdir();
}

/* Each of the gemm_hopper configs `cfgs` (hopper_cfg's params) breaks a restriction on t. */
static void hopper_rejected(const amk_spec *s, const amk_target *t, const char *const *cfgs,
                            size_t n)
{
    amk_diag d;
    for (size_t i = 0; i < n; i++) {
        amk_config c = hopper_cfg(s, cfgs[i]);
        ck_assert_msg(amk_config_check(&c, &t->limits, &d) == AMK_ERESTRICT, "%s", cfgs[i]);
    }
}

/* Whether this build can compile gemm_hopper (sm_90a); prints the SKIP line of `what` if not. */
static bool hopper_compiles(const amk_spec *s, const char *what)
{
    char eff[16];
    amk_diag d;
    const amk_target *bt = amk_target_find(TARGET); /* what this build compiles for */
    ck_assert_ptr_nonnull(bt);
    if (amk_spec_compile_arch(s, bt->vendor, ARCH, eff, sizeof eff, &d) == AMK_OK)
        return true;
    fprintf(stderr, "check_compile: SKIP gemm_hopper %s for %s: %s\n", what, ARCH, d.msg);
    return false;
}

START_TEST(test_compile_gemm_hopper_pingpong)
{
    const amk_spec *s = amk_registry_find(reg, "gemm_hopper");
    ck_assert_ptr_nonnull(s);
    /* The spec's arithmetic on the H100 whatever this build compiles for (a HIP build's
     * gfx90a has 64 KiB of shared memory: no gemm_hopper config fits); the compiles below
     * skip where the build cannot compile for sm_90a. */
    const amk_target *t = amk_target_find("h100");
    ck_assert_ptr_nonnull(t);
    amk_diag d;
    int64_t v;

    /* 64 x 256 per consumer: two 32 KiB staging tiles, two more mbarriers (order[2]), 128
     * accumulators a thread. */
    amk_config pp = hopper_cfg(s, "{}");
    ck_assert_msg(amk_config_check(&pp, &t->limits, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_config_eval(&pp, &t->limits, "wg_m", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 64);
    ck_assert_int_eq(amk_config_eval(&pp, &t->limits, "acc_regs", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 128);
    ck_assert_int_eq(amk_config_eval(&pp, &t->limits, "smem", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 4 * (64 + 256) * 64 * 2 + 2 * 64 * 256 * 2 + 1024 + 16 * 4 + 16);
    ck_assert_int_eq(amk_config_eval(&pp, &t->limits, "grid", &v, &d), AMK_OK);
    ck_assert_int_eq(v, t->limits.sm_count); /* 64 x 16 tiles at 4096^2 */
    /* The cooperative split of the same tile: one 32 KiB staging tile in all. */
    amk_config co = hopper_cfg(s, "{\"PERSISTENT\":1}");
    ck_assert_int_eq(amk_config_eval(&co, &t->limits, "wg_m", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 32);
    ck_assert_int_eq(amk_config_eval(&co, &t->limits, "smem", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 4 * (64 + 256) * 64 * 2 + 64 * 256 * 2 + 1024 + 16 * 4);

    /* Not built: one consumer; a whole 128 x 256 tile is 256 accumulators a thread. */
    static const char *const invalid[] = {"{\"CONSUMERS\":1,\"REGS\":0}",
                                          "{\"BM\":128}", "{\"BM\":256,\"BN\":64}"};
    hopper_rejected(s, t, invalid, sizeof invalid / sizeof invalid[0]);

    if (!hopper_compiles(s, "ping-pong"))
        return;
    static const char *const built[] = {
        "{}",
        "{\"STAGES\":3}",
        "{\"BM\":128,\"BN\":128,\"STAGES\":5}",
        "{\"BM\":64,\"BN\":128,\"BK\":128,\"STAGES\":3,\"EPILOGUE\":0}",
        "{\"BM\":128,\"BN\":64,\"REGS\":0}",
        "{\"CLUSTER_M\":2}",
        "{\"CLUSTER_N\":2,\"STAGES\":3,\"EPILOGUE\":0,\"REGS\":2}",
    };
    compile_hopper_ok(s, t, built, sizeof built / sizeof built[0], NULL);
}
END_TEST

/* gemm_hopper's stream-K tail (PERSISTENT 3, and 4 in whole pieces a tile): one CTA per SM
 * whatever the tile count, 2 counters per CTA (ws) and 2 BM x BN f32 pieces per CTA (scratch
 * sk), two flags of shared memory more than PERSISTENT 1, and its configs (cluster shapes,
 * epilogues, one consumer, 128-row consumers) compile for sm_90a. */
START_TEST(test_compile_gemm_hopper_stream_k)
{
    const amk_spec *s = amk_registry_find(reg, "gemm_hopper");
    ck_assert_ptr_nonnull(s);
    const amk_target *t = amk_target_find("h100");
    ck_assert_ptr_nonnull(t);
    amk_diag d;
    int64_t v, grid;
    amk_config sk = hopper_cfg(s, "{\"PERSISTENT\":3,\"BM\":128,\"STAGES\":3}");
    ck_assert_msg(amk_config_check(&sk, &t->limits, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_config_eval(&sk, &t->limits, "grid", &grid, &d), AMK_OK);
    ck_assert_int_eq(grid, t->limits.sm_count); /* 32 x 16 tiles at 4096^2 */
    ck_assert_int_eq(amk_config_eval(&sk, &t->limits, "ws_count", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 2 * grid);
    ck_assert_int_eq(amk_config_eval(&sk, &t->limits, "sk_count", &v, &d), AMK_OK);
    ck_assert_int_eq(v, grid * 2 * 128 * 256);
    ck_assert_int_eq(amk_config_eval(&sk, &t->limits, "smem", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 3 * (128 + 256) * 64 * 2 + 128 * 256 * 2 + 1024 + 16 * 3 + 16);
    amk_config whole = hopper_cfg(s, "{\"PERSISTENT\":1,\"BM\":128,\"STAGES\":3}");
    ck_assert_int_eq(amk_config_eval(&whole, &t->limits, "ws_count", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 1); /* no workspace to speak of without the split */
    /* 16 tiles of 128 x 256 at M 16, N 4096: PERSISTENT 1 launches 16 CTAs, 3 all the SMs
     * (the K of each tile split over them). */
    amk_shape dec = {0};
    ck_assert_int_eq(amk_shape_parse(s, "M=16,N=4096,K=14336,dtype=bf16", &dec, &d), AMK_OK);
    sk.shape = whole.shape = dec;
    ck_assert_int_eq(amk_config_eval(&whole, &t->limits, "grid", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 16);
    ck_assert_int_eq(amk_config_eval(&sk, &t->limits, "grid", &v, &d), AMK_OK);
    ck_assert_int_eq(v, t->limits.sm_count);
    /* PERSISTENT 4 (stream-K in whole pieces a tile) has 3's grid and buffers */
    amk_config whole_pieces = hopper_cfg(s, "{\"PERSISTENT\":4,\"BM\":128,\"STAGES\":3}");
    whole_pieces.shape = dec;
    ck_assert_msg(amk_config_check(&whole_pieces, &t->limits, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_config_eval(&whole_pieces, &t->limits, "grid", &v, &d), AMK_OK);
    ck_assert_int_eq(v, t->limits.sm_count);
    ck_assert_int_eq(amk_config_eval(&whole_pieces, &t->limits, "sk_count", &v, &d), AMK_OK);
    ck_assert_int_eq(v, t->limits.sm_count * 2 * 128 * 256);
    /* built at the decode shape (16 tiles: 8 pieces each); at 4096^2 128 x 256 tiles leave
     * 116 in the last wave, no room for 2 pieces each: it would be PERSISTENT 1 again and is
     * not offered (128 x 320 tiles leave 20 there, so it is) */
    static const char *const pieces[] = {
        "{\"PERSISTENT\":4,\"BM\":128,\"STAGES\":3}",
        "{\"PERSISTENT\":4,\"BM\":128,\"STAGES\":3,\"CLUSTER_M\":2}",
        "{\"PERSISTENT\":4,\"BM\":128,\"BN\":320,\"STAGES\":3,\"EPILOGUE\":3}",
    };
    hopper_rejected(s, t, pieces, 2);

    if (!hopper_compiles(s, "stream-K"))
        return;
    static const char *const built[] = {
        "{\"PERSISTENT\":3,\"BM\":128,\"STAGES\":3}",
        "{\"PERSISTENT\":3,\"BM\":128,\"STAGES\":3,\"CLUSTER_M\":2}",
        "{\"PERSISTENT\":3,\"BM\":128,\"BN\":128,\"CLUSTER_N\":2,\"EPILOGUE\":0}",
        "{\"PERSISTENT\":3,\"BM\":128,\"BN\":128,\"CONSUMERS\":1,\"REGS\":0}",
        "{\"PERSISTENT\":3,\"BM\":256,\"BN\":128,\"STAGES\":3,\"REGS\":2}",
    };
    compile_hopper_ok(s, t, built, sizeof built / sizeof built[0], NULL);
    compile_hopper_ok(s, t, pieces, sizeof pieces / sizeof pieces[0], &dec);
}
END_TEST

/* gemm_hopper's blockwise epilogue (EPILOGUE 2, 3: that many 64-column staging blocks each)
 * takes a quarter of the whole-tile staging at BN 256, which is what lets 128 x 256 x 64 have
 * a fourth stage under the H100's 227 KB, and 128 x 320 x 64 a third; 320-wide tiles (an n256
 * and an n64 wgmma a K step) have 160 accumulators a thread, built only with the setmaxnreg
 * split. The blocks past the slots wait packed in registers until the first stores have read
 * theirs (1-3 such blocks, in one or two rounds). Its configs (tile shapes with 1, 2, 4 and 5
 * blocks, 128-row consumers, ping-pong, stream-K, clusters) compile for sm_90a. */
START_TEST(test_compile_gemm_hopper_epilogue_blocks)
{
    const amk_spec *s = amk_registry_find(reg, "gemm_hopper");
    ck_assert_ptr_nonnull(s);
    const amk_target *t = amk_target_find("h100");
    ck_assert_ptr_nonnull(t);
    amk_diag d;
    int64_t v;
    amk_config e2 = hopper_cfg(s, "{\"PERSISTENT\":1,\"BM\":128,\"EPILOGUE\":2}");
    ck_assert_msg(amk_config_check(&e2, &t->limits, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_config_eval(&e2, &t->limits, "smem", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 4 * (128 + 256) * 64 * 2 + 2 * 2 * 64 * 128 + 1024 + 16 * 4);
    amk_config e1 = hopper_cfg(s, "{\"PERSISTENT\":1,\"BM\":128,\"EPILOGUE\":1}");
    ck_assert_int_eq(amk_config_check(&e1, &t->limits, &d), AMK_ERESTRICT);
    amk_config w = hopper_cfg(s, "{\"PERSISTENT\":1,\"BM\":128,\"BN\":320,\"EPILOGUE\":3,"
                                 "\"STAGES\":3}");
    ck_assert_msg(amk_config_check(&w, &t->limits, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_config_eval(&w, &t->limits, "acc_regs", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 160);
    ck_assert_int_eq(amk_config_eval(&w, &t->limits, "smem", &v, &d), AMK_OK);
    ck_assert_int_eq(v, 3 * (128 + 320) * 64 * 2 + 2 * 3 * 64 * 128 + 1024 + 16 * 3);
    /* Not built: 320 wide with the whole tile staged (80 KB) and 3 stages; 160 accumulators
     * without the register split; ping-pong's 128-row consumers (320 accumulators); 128 x 256
     * with 4 stages and 3 staging blocks (240 KB). */
    static const char *const invalid[] = {
        "{\"PERSISTENT\":1,\"BM\":128,\"EPILOGUE\":3}",
        "{\"PERSISTENT\":1,\"BM\":128,\"BN\":320,\"EPILOGUE\":1,\"STAGES\":3}",
        "{\"PERSISTENT\":1,\"BM\":128,\"BN\":320,\"EPILOGUE\":2,\"STAGES\":3,\"REGS\":0}",
        "{\"PERSISTENT\":2,\"BM\":128,\"BN\":320,\"EPILOGUE\":0,\"STAGES\":3}"};
    hopper_rejected(s, t, invalid, sizeof invalid / sizeof invalid[0]);

    if (!hopper_compiles(s, "blockwise epilogue"))
        return;
    static const char *const built[] = {
        "{\"PERSISTENT\":1,\"BM\":128,\"EPILOGUE\":2}",
        "{\"PERSISTENT\":3,\"BM\":128,\"EPILOGUE\":2}",
        "{\"PERSISTENT\":1,\"BM\":128,\"EPILOGUE\":2,\"CLUSTER_M\":2,\"STAGES\":3}",
        "{\"PERSISTENT\":0,\"BM\":256,\"BN\":128,\"EPILOGUE\":2,\"STAGES\":3,\"REGS\":2}",
        "{\"PERSISTENT\":1,\"BM\":128,\"BN\":64,\"EPILOGUE\":2,\"CONSUMERS\":1,\"REGS\":0}",
        "{\"EPILOGUE\":3}",
        "{\"PERSISTENT\":1,\"BM\":128,\"BN\":320,\"EPILOGUE\":3,\"STAGES\":3,\"CLUSTER_M\":2}",
        "{\"PERSISTENT\":3,\"BM\":128,\"BN\":320,\"EPILOGUE\":0,\"STAGES\":4,\"REGS\":2}",
    };
    compile_hopper_ok(s, t, built, sizeof built / sizeof built[0], NULL);
    /* 3 blocks carried: 128 x 320 with 2 slots (two rounds), and ping-pong's 64 x 320 tiles. */
    static const char *const carried[] = {
        "{\"PERSISTENT\":1,\"BM\":128,\"BN\":320,\"EPILOGUE\":2,\"STAGES\":3}",
        "{\"PERSISTENT\":2,\"BM\":64,\"BN\":320,\"EPILOGUE\":2,\"STAGES\":3}",
    };
    compile_hopper_ok(s, t, carried, sizeof carried / sizeof carried[0], NULL);
}
END_TEST

/* A second identical compile is a cache hit that never reaches a worker (the fault hook
 * would crash any worker asked); a corrupted entry is detected and recompiled. */
START_TEST(test_compile_cache_hit_and_corruption)
{
    make_tmpdir();
    amk_compiler *c = make_compiler(1, 0);
    amk_config cfg = cfg_of("scale", NULL, NULL, 0);
    amk_code a, b;
    compile_cfgs(c, &cfg, 1, ARCH, &a);
    ck_assert_msg(a.status == AMK_STATUS_OK, "%s", a.reason);
    ck_assert_int_eq(a.cache_hit, 0);

    setenv("AMK_TEST_COMPILE_FAULT", "abort", 1);
    compile_cfgs(c, &cfg, 1, ARCH, &b);
    unsetenv("AMK_TEST_COMPILE_FAULT");
    ck_assert_msg(b.status == AMK_STATUS_OK, "%s", b.reason);
    ck_assert_int_eq(b.cache_hit, 1);
    ck_assert_str_eq(b.key, a.key);
    ck_assert(b.size == a.size && memcmp(a.image, b.image, a.size) == 0);
    ck_assert(strstr(b.notes, "cached") != NULL);
    ck_assert_int_eq(amk__worker_pool_respawns(amk__compiler_pool(c)), 0);
    amk__code_clear(&b);

    /* Corrupt the payload: a miss, recompiled, and the entry rewritten. */
    char path[4096];
    uint64_t key = strtoull(a.key, NULL, 16);
    amk__cache_entry_path(amk__compiler_cache(c), key, path, sizeof path);
    flip_byte(path, -10);
    compile_cfgs(c, &cfg, 1, ARCH, &b);
    ck_assert_msg(b.status == AMK_STATUS_OK, "%s", b.reason);
    ck_assert_int_eq(b.cache_hit, 0);
    ck_assert(b.size == a.size);
    amk__code_clear(&b);
    compile_cfgs(c, &cfg, 1, ARCH, &b);
    ck_assert_int_eq(b.cache_hit, 1);
    ck_assert(memcmp(a.image, b.image, a.size) == 0);
    amk__code_clear(&b);
    amk__code_clear(&a);

    /* Another compiler process-wide (e.g. the next `amk` run) hits the same entry. */
    amk__compiler_free(c);
    c = make_compiler(1, 0);
    compile_cfgs(c, &cfg, 1, ARCH, &b);
    ck_assert_int_eq(b.cache_hit, 1);
    amk__code_clear(&b);
    amk__compiler_free(c);
    remove_tmpdir();
}
END_TEST

/* The compile service's completion callback: a cache hit and a unit this build cannot target
 * are final at once, before the miss submitted with them; each unit is reported once, with
 * its code final. */
typedef struct unit_log {
    const amk_code *out;
    size_t order[8];
    int n, final_ok;
} unit_log;

static void on_unit_done(size_t u, void *ud)
{
    unit_log *l = ud;
    const amk_code *o = &l->out[u];
    ck_assert_int_lt(l->n, 8);
    l->order[l->n++] = u;
    if (o->status == AMK_STATUS_OK)
        l->final_ok &= o->image != NULL && o->size > 0 && o->key[0] != '\0';
    else
        l->final_ok &= o->reason[0] != '\0';
}

START_TEST(test_compiler_run_cb_reports_hits_first)
{
    make_tmpdir();
    amk_compiler *c = make_compiler(1, 0);
    amk_config hit = cfg_of("scale", NULL, "BLOCK", 128), miss = cfg_of("scale", NULL, "BLOCK", 64);
    amk_code warm;
    compile_cfgs(c, &hit, 1, ARCH, &warm);
    ck_assert_msg(warm.status == AMK_STATUS_OK, "%s", warm.reason);
    amk__code_clear(&warm);

    amk_compile_unit units[3];
    amk_code out[3];
    amk_diag d;
    memset(units, 0, sizeof units);
    ck_assert(amk__compile_unit_config(&miss, ARCH, &units[0], &d) == AMK_OK);
    ck_assert(amk__compile_unit_config(&hit, ARCH, &units[1], &d) == AMK_OK);
    ck_assert(amk__compile_unit_config(&hit, OTHER_ARCH, &units[2], &d) == AMK_OK);
    unit_log l = {out, {0}, 0, 1};
    ck_assert_msg(amk__compiler_run_cb(c, units, 3, out, on_unit_done, &l, &d) == AMK_OK, "%s",
                  d.msg);
    ck_assert_int_eq(l.n, 3);
    ck_assert_msg(l.final_ok, "a unit was reported before its code was final");
    ck_assert_uint_eq(l.order[0], 1); /* the hit */
    ck_assert_uint_eq(l.order[1], 2); /* the other vendor's arch */
    ck_assert_uint_eq(l.order[2], 0); /* the miss, compiled by the worker */
    ck_assert_int_eq(out[1].cache_hit, 1);
    ck_assert_int_eq(out[2].status, AMK_STATUS_COMPILE_ERROR);
    ck_assert_msg(out[0].status == AMK_STATUS_OK, "%s", out[0].reason);
    ck_assert_int_eq(out[0].cache_hit, 0);
    for (int i = 0; i < 3; i++) {
        amk__code_clear(&out[i]);
        amk__compile_unit_clear(&units[i]);
    }
    amk__compiler_free(c);
    remove_tmpdir();
}
END_TEST

/* Injected abort/segv/hang inside the real compiler's worker: only the targeted config
 * fails, with the right status, the worker is replaced, and the next compile is fine. */
START_TEST(test_compile_injected_faults)
{
    make_tmpdir();
    amk_config cfgs[4] = {cfg_of("scale", NULL, "BLOCK", 64), cfg_of("scale", NULL, "BLOCK", 128),
                          cfg_of("scale", NULL, "BLOCK", 512), cfg_of("scale", NULL, "BLOCK", 1024)};
    char ids[4][17];
    for (int i = 0; i < 4; i++)
        amk_config_id(&cfgs[i], ids[i]);
    static const struct {
        const char *fault;
        amk_status want;
        const char *in_reason;
    } cases[] = {
        {"abort", AMK_STATUS_COMPILE_CRASH, "signal 6"},
        {"segv", AMK_STATUS_COMPILE_CRASH, "signal 11"},
        {"exit", AMK_STATUS_COMPILE_CRASH, "status 7"},
        {"hang", AMK_STATUS_COMPILE_TIMEOUT, "limit"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        /* A fresh cache per case, so that nothing is a hit. */
        char dir[512];
        snprintf(dir, sizeof dir, "%s/case%zu", tmpdir, k);
        amk_compiler *c = make_compiler_in(dir, 2, 6.0);
        int victim = (int)k % 4;
        char env[64];
        snprintf(env, sizeof env, "%s:%.8s", cases[k].fault, ids[victim]);
        setenv("AMK_TEST_COMPILE_FAULT", env, 1);
        amk_code out[4];
        double t0 = amk_now_s();
        compile_cfgs(c, cfgs, 4, ARCH, out);
        double dt = amk_now_s() - t0;
        unsetenv("AMK_TEST_COMPILE_FAULT");
        for (int i = 0; i < 4; i++) {
            if (i == victim) {
                ck_assert_msg(out[i].status == cases[k].want, "%s: got %s (%s)", cases[k].fault,
                              amk_status_name(out[i].status), out[i].reason);
                ck_assert_msg(strstr(out[i].reason, cases[k].in_reason), "%s: reason '%s'",
                              cases[k].fault, out[i].reason);
                ck_assert_ptr_null(out[i].image);
                ck_assert_int_eq(out[i].cache_hit, 0);
                const char *lp = log_path(out[i].notes);
                ck_assert_msg(file_contains(lp, "amk test fault"), "%s: log '%s'",
                              cases[k].fault, lp);
            } else {
                ck_assert_msg(out[i].status == AMK_STATUS_OK, "bystander %d: %s", i,
                              out[i].reason);
                ck_assert_int_eq(out[i].cache_hit, 0);
            }
            amk__code_clear(&out[i]);
        }
        if (cases[k].want == AMK_STATUS_COMPILE_TIMEOUT)
            ck_assert_msg(dt >= 5.9 && dt < 40, "hang batch took %.2f s", dt);
        ck_assert_int_eq(amk__worker_pool_respawns(amk__compiler_pool(c)), 1);
        /* The failed config was not cached and compiles now, in the replaced worker. */
        compile_cfgs(c, &cfgs[victim], 1, ARCH, out);
        ck_assert_msg(out[0].status == AMK_STATUS_OK, "after %s: %s", cases[k].fault,
                      out[0].reason);
        ck_assert_int_eq(out[0].cache_hit, 0);
        amk__code_clear(&out[0]);
        amk__compiler_free(c);
    }
    remove_tmpdir();
}
END_TEST

/* The hook can name a kernel: every config of the compile_crash fixture crashes its worker,
 * the scale configs of the same batch compile. */
START_TEST(test_compile_fault_by_kernel_name)
{
    make_tmpdir();
    amk_compiler *c = make_compiler(2, 0);
    amk_config cfgs[3] = {cfg_of("compile_crash", NULL, NULL, 0), cfg_of("scale", NULL, NULL, 0),
                          cfg_of("compile_crash", NULL, "BLOCK", 64)};
    setenv("AMK_TEST_COMPILE_FAULT", "segv:compile_crash", 1);
    amk_code out[3];
    compile_cfgs(c, cfgs, 3, ARCH, out);
    unsetenv("AMK_TEST_COMPILE_FAULT");
    ck_assert_msg(out[0].status == AMK_STATUS_COMPILE_CRASH, "%s", out[0].reason);
    ck_assert_msg(out[1].status == AMK_STATUS_OK, "%s", out[1].reason);
    ck_assert_msg(out[2].status == AMK_STATUS_COMPILE_CRASH, "%s", out[2].reason);
    ck_assert_int_eq(amk__worker_pool_respawns(amk__compiler_pool(c)), 2);
    for (int i = 0; i < 3; i++)
        amk__code_clear(&out[i]);
    compile_cfgs(c, cfgs, 1, ARCH, out); /* without the hook it is a fine template */
    ck_assert_msg(out[0].status == AMK_STATUS_OK, "%s", out[0].reason);
    amk__code_clear(&out[0]);
    amk__compiler_free(c);
    remove_tmpdir();
}
END_TEST

/* The compile-bomb fixture: the real compiler runs until the timeout kills it. */
START_TEST(test_compile_real_hang_times_out)
{
    make_tmpdir();
    amk_compiler *c = make_compiler(1, 5.0);
    ck_assert(fabs(amk__compiler_timeout(c) - 5.0) < 1e-9);
    amk_config cfg = cfg_of("compile_hang", NULL, NULL, 0);
    amk_code out;
    double t0 = amk_now_s();
    compile_cfgs(c, &cfg, 1, ARCH, &out);
    double dt = amk_now_s() - t0;
    ck_assert_msg(out.status == AMK_STATUS_COMPILE_TIMEOUT, "%s: %s",
                  amk_status_name(out.status), out.reason);
    ck_assert_msg(dt >= 4.9 && dt < 30, "took %.2f s", dt);
    ck_assert_msg(strstr(out.reason, "5 s limit") != NULL, "reason: %s", out.reason);
    amk__code_clear(&out);
    amk_config ok = cfg_of("scale", NULL, NULL, 0);
    compile_cfgs(c, &ok, 1, ARCH, &out);
    ck_assert_msg(out.status == AMK_STATUS_OK, "%s", out.reason);
    amk__code_clear(&out);
    amk__compiler_free(c);
    remove_tmpdir();
}
END_TEST

/* A plain C++ __global__ function (no extern "C") compiles, and the code object's name for
 * it is the compiler's lowered (mangled) name, kept with the cached object; an extern "C"
 * kernel keeps its own name. */
START_TEST(test_compile_lowers_cxx_kernel_names)
{
    make_tmpdir();
    amk_compiler *c = make_compiler(1, 0);
    amk_config cfg = cfg_of("cxx_name", NULL, NULL, 0);
    amk_code a, b;
    compile_cfgs(c, &cfg, 1, ARCH, &a);
    ck_assert_msg(a.status == AMK_STATUS_OK, "%s", a.reason);
    ck_assert_msg(strncmp(a.entry, "_Z", 2) == 0 && strstr(a.entry, "9cxx_scale"),
                  "lowered name '%s'", a.entry);
    amk__compiler_free(c);
    c = make_compiler(1, 0); /* a later run: the name comes from the cache */
    compile_cfgs(c, &cfg, 1, ARCH, &b);
    ck_assert_int_eq(b.cache_hit, 1);
    ck_assert_str_eq(b.entry, a.entry);
    amk__code_clear(&b);
    amk__code_clear(&a);
    amk_compile_unit u;
    amk_diag d;
    ck_assert_int_eq(amk__compile_unit_reference(&cfg, ARCH, &u, &d), AMK_OK);
    ck_assert_int_eq(amk__compiler_run(c, &u, 1, &a, &d), AMK_OK);
    ck_assert_msg(a.status == AMK_STATUS_OK, "%s", a.reason);
    ck_assert_str_eq(a.entry, "scale_reference");
    amk__code_clear(&a);
    amk__compile_unit_clear(&u);
    /* An entry the source does not define: the compiler says so. */
    ck_assert_int_eq(amk__compile_unit_config(&cfg, ARCH, &u, &d), AMK_OK);
    snprintf(u.entry, sizeof u.entry, "no_such_kernel");
    ck_assert_int_eq(amk__compiler_run(c, &u, 1, &a, &d), AMK_OK);
    ck_assert_msg(a.status == AMK_STATUS_COMPILE_ERROR && strstr(a.reason, "no_such_kernel"),
                  "%s: %s", amk_status_name(a.status), a.reason);
    amk__code_clear(&a);
    amk__compile_unit_clear(&u);
    amk__compiler_free(c);
    remove_tmpdir();
}
END_TEST

START_TEST(test_compile_syntax_error_keeps_log)
{
    make_tmpdir();
    amk_compiler *c = make_compiler(1, 0);
    amk_config cfg = cfg_of("syntax_error", NULL, NULL, 0);
    amk_code out;
    compile_cfgs(c, &cfg, 1, ARCH, &out);
    ck_assert_msg(out.status == AMK_STATUS_COMPILE_ERROR, "%s", amk_status_name(out.status));
    ck_assert_msg(strstr(out.reason, "syntax_error.hip") && strstr(out.reason, "error"),
                  "reason: %s", out.reason);
    const char *lp = log_path(out.notes);
    char id[17];
    amk_config_id(&cfg, id);
    ck_assert_msg(strstr(lp, id) && strstr(lp, "/logs/"), "notes: %s", out.notes);
    /* The whole log is on disk: the error and where it is. */
    ck_assert(file_contains(lp, "syntax_error.hip") && file_contains(lp, "error"));
    ck_assert_ptr_null(out.image);
    amk__code_clear(&out);
    /* The rejection is cached too: the same bytes are rejected the same way. */
    compile_cfgs(c, &cfg, 1, ARCH, &out);
    ck_assert_int_eq(out.status, AMK_STATUS_COMPILE_ERROR);
    ck_assert_int_eq(out.cache_hit, 1);
    ck_assert(strstr(out.reason, "(cached)") != NULL);
    ck_assert(file_contains(log_path(out.notes), "syntax_error.hip"));
    amk__code_clear(&out);
    /* Its reference is fine. */
    amk_compile_unit u;
    amk_diag d;
    ck_assert_int_eq(amk__compile_unit_reference(&cfg, ARCH, &u, &d), AMK_OK);
    ck_assert_int_eq(amk__compiler_run(c, &u, 1, &out, &d), AMK_OK);
    ck_assert_msg(out.status == AMK_STATUS_OK, "%s", out.reason);
    amk__code_clear(&out);
    amk__compile_unit_clear(&u);
    amk__compiler_free(c);
    remove_tmpdir();
}
END_TEST

START_TEST(test_compiler_timeout_adaptive)
{
    make_tmpdir();
    amk_compiler *c = make_compiler(1, 0);
    ck_assert(fabs(amk__compiler_timeout(c) - 120.0) < 1e-9); /* the cap, before any compile */
    amk_config cfg = cfg_of("scale", NULL, NULL, 0);
    amk_code out;
    compile_cfgs(c, &cfg, 1, ARCH, &out);
    ck_assert(out.status == AMK_STATUS_OK);
    double ms = out.compile_ms;
    amk__code_clear(&out);
    double want = fmin(120.0, fmax(10.0, 10.0 * ms / 1e3));
    ck_assert_msg(fabs(amk__compiler_timeout(c) - want) < 1e-6, "timeout %.3f, want %.3f",
                  amk__compiler_timeout(c), want);
    amk__compiler_free(c);
    c = make_compiler(1, 5.0);
    ck_assert(fabs(amk__compiler_timeout(c) - 5.0) < 1e-9);
    compile_cfgs(c, &cfg, 1, ARCH, &out); /* a cache hit: no observation */
    ck_assert_int_eq(out.cache_hit, 1);
    amk__code_clear(&out);
    ck_assert(fabs(amk__compiler_timeout(c) - 5.0) < 1e-9);
    amk__compiler_free(c);
    remove_tmpdir();
}
END_TEST

START_TEST(test_compile_batch_public)
{
    make_tmpdir();
    amk_backend_opts o = {0};
    o.cache_dir = tmpdir;
    o.jobs = 2;
    amk_config cfgs[2] = {cfg_of("scale", NULL, NULL, 0), cfg_of("syntax_error", NULL, NULL, 0)};
    const amk_config *ptr[2] = {&cfgs[0], &cfgs[1]};
    amk_compile_result r[2];
    amk_diag d;
    ck_assert_msg(amk_compile_batch(ptr, 2, ARCH, &o, r, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(r[0].status, AMK_STATUS_OK);
    ck_assert_int_eq(r[0].cache_hit, 0);
    ck_assert(r[0].code_bytes > 0 && r[0].compile_ms > 0);
    char id[17];
    amk_config_id(&cfgs[0], id);
    ck_assert_str_eq(r[0].config_id, id);
    ck_assert_int_eq(r[1].status, AMK_STATUS_COMPILE_ERROR);
    ck_assert(strstr(r[1].notes, "log: ") != NULL);
    ck_assert_int_eq(amk_compile_batch(ptr, 1, ARCH, &o, r, &d), AMK_OK);
    ck_assert_int_eq(r[0].cache_hit, 1);
    ck_assert_int_eq(amk_compile_references(ptr, 2, ARCH, &o, r, &d), AMK_OK);
    ck_assert_int_eq(r[0].status, AMK_STATUS_OK);
    ck_assert_int_eq(r[1].status, AMK_STATUS_OK);
    ck_assert_str_eq(r[0].config_id, id);
    ck_assert_int_eq(amk_compile_batch(ptr, 1, OTHER_ARCH, &o, r, &d), AMK_EUNSUPPORTED);
    ck_assert(strstr(d.msg, OTHER_ARCH) != NULL);
    ck_assert_int_eq(amk_compile_batch(ptr, 1, "sm_90 -DEVIL", &o, r, &d), AMK_EUNSUPPORTED);
    remove_tmpdir();
}
END_TEST

#if defined(AMK_GPU_HIP)
/* Debian's hipRTC 5.2.3 aborts with "munmap_chunk(): invalid pointer" for gfx942: a real
 * compiler crash, contained; the next gfx90a compile succeeds. */
START_TEST(test_compile_hiprtc_gfx942_real_crash)
{
    make_tmpdir();
    amk_compiler *c = make_compiler(1, 0);
    amk_config cfg = cfg_of("scale", NULL, NULL, 0);
    int pid0 = amk__worker_pool_pid(amk__compiler_pool(c), 0);
    amk_code out;
    compile_cfgs(c, &cfg, 1, "gfx942", &out);
    ck_assert_msg(out.status == AMK_STATUS_COMPILE_CRASH, "gfx942: %s (%s)",
                  amk_status_name(out.status), out.reason);
    ck_assert_msg(strstr(out.reason, "signal 6"), "reason: %s", out.reason);
    const char *lp = log_path(out.notes);
    ck_assert_msg(file_contains(lp, "munmap_chunk(): invalid pointer"), "log %s", lp);
    amk__code_clear(&out);
    ck_assert_int_eq(amk__worker_pool_respawns(amk__compiler_pool(c)), 1);
    ck_assert_int_ne(amk__worker_pool_pid(amk__compiler_pool(c), 0), pid0);
    compile_cfgs(c, &cfg, 1, "gfx90a", &out);
    ck_assert_msg(out.status == AMK_STATUS_OK, "gfx90a after the crash: %s", out.reason);
    ck_assert(out.size > 0);
    amk__code_clear(&out);
    amk__compiler_free(c);
    remove_tmpdir();
}
END_TEST
#endif

#else /* no GPU vendor layer */

START_TEST(test_compile_batch_unsupported)
{
    amk_config cfg = cfg_of("scale", NULL, NULL, 0);
    const amk_config *ptr[1] = {&cfg};
    amk_compile_result r;
    amk_diag d;
    ck_assert_int_eq(amk_compile_batch(ptr, 1, "sm_90", NULL, &r, &d), AMK_EUNSUPPORTED);
    ck_assert(strstr(d.msg, "without a GPU vendor") != NULL);
    amk_compiler *c = NULL;
    ck_assert_int_eq(amk__compiler_create(NULL, &c, &d), AMK_EUNSUPPORTED);
    ck_assert_ptr_null(c);
}
END_TEST

#endif

static Suite *suite(void)
{
    Suite *s = suite_create("compile");
    TCase *tc = tcase_create("worker_pool");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_worker_pool_run_parallel_echo);
    tcase_add_test(tc, test_worker_pool_run_abort_replaced_with_stderr);
    tcase_add_test(tc, test_worker_pool_run_segv_and_exit);
    tcase_add_test(tc, test_worker_pool_run_hang_times_out);
    tcase_add_test(tc, test_worker_pool_run_mixed_batch);
    tcase_add_test(tc, test_worker_pool_run_cpu_limit);
    tcase_add_test(tc, test_worker_pool_create_as_limit);
    tcase_add_test(tc, test_worker_pool_run_recycle);
    tcase_add_test(tc, test_worker_pool_idle_hook);
    tcase_add_test(tc, test_worker_pool_create_closes_other_fds);
    tcase_add_test(tc, test_worker_pool_run_big_messages);
    tcase_add_test(tc, test_worker_pool_run_cb_reports_in_completion_order);
    tcase_add_test(tc, test_worker_pool_run_from_several_threads);
    tcase_add_test(tc, test_worker_pool_run_keeps_stderr_on_success);
    tcase_add_test(tc, test_worker_pool_free_reaps_all);
    tcase_add_test(tc, test_worker_pool_free_with_other_pool_alive);
    tcase_add_test(tc, test_worker_pool_create_invalid);
    suite_add_tcase(s, tc);

    tc = tcase_create("cache");
    tcase_add_test(tc, test_cache_key_sensitivity);
    tcase_add_test(tc, test_cache_get_roundtrip_and_miss);
    tcase_add_test(tc, test_cache_get_detects_corruption);
    tcase_add_test(tc, test_cache_put_concurrent_writers);
    tcase_add_test(tc, test_cache_write_log);
    suite_add_tcase(s, tc);

    tc = tcase_create("compile_unit");
    tcase_add_checked_fixture(tc, load_registry, free_registry);
    tcase_add_test(tc, test_compile_unit_config_options);
    tcase_add_test(tc, test_amk_compile_source_get_is_the_unit_amk_compiles);
    tcase_add_test(tc, test_compile_unit_reference);
    tcase_add_test(tc, test_compile_unit_defines_and_headers);
    tcase_add_test(tc, test_compile_unit_reference_vary_params);
    tcase_add_test(tc, test_compile_unit_config_required_arch);
    tcase_add_test(tc, test_arch_vendor);
    suite_add_tcase(s, tc);

    tc = tcase_create("compile");
    tcase_set_timeout(tc, 150);
    tcase_add_checked_fixture(tc, load_registry, free_registry);
#if defined(AMK_HAVE_GPU)
    tcase_add_test(tc, test_compile_builtin_kernels);
    tcase_add_test(tc, test_compile_hopper_fixtures);
    tcase_add_test(tc, test_compile_gemm_hopper_pingpong);
    tcase_add_test(tc, test_compile_gemm_hopper_stream_k);
    tcase_add_test(tc, test_compile_gemm_hopper_epilogue_blocks);
    tcase_add_test(tc, test_compile_cache_hit_and_corruption);
    tcase_add_test(tc, test_compiler_run_cb_reports_hits_first);
    tcase_add_test(tc, test_compile_injected_faults);
    tcase_add_test(tc, test_compile_fault_by_kernel_name);
    tcase_add_test(tc, test_compile_real_hang_times_out);
    tcase_add_test(tc, test_compile_syntax_error_keeps_log);
    tcase_add_test(tc, test_compile_lowers_cxx_kernel_names);
    tcase_add_test(tc, test_compiler_timeout_adaptive);
    tcase_add_test(tc, test_compile_batch_public);
#if defined(AMK_GPU_HIP)
    tcase_add_test(tc, test_compile_hiprtc_gfx942_real_crash);
#endif
#else
    tcase_add_test(tc, test_compile_batch_unsupported);
#endif
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return amk_test_run(suite());
}

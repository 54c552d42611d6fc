/* Worker pool: fork()ed long-lived children running one handler on length-prefixed messages
 * over pipes, with per-request deadlines, resource limits, captured stderr, and kill + reap +
 * replace of a worker that dies or hangs. The parent never runs the handler itself. */
#include "worker_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define AMK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AMK_ASAN 1
#endif
#endif
#ifndef AMK_ASAN
#define AMK_ASAN 0
#endif

/* Response frame: u32 payload length, u32 flags, payload. Request frame: u32 length, payload. */
#define FLAG_RECYCLE 1u

typedef struct worker {
    pid_t pid;      /* -1 when not running */
    int req_fd;     /* parent writes requests */
    int resp_fd;    /* parent reads responses (non-blocking) */
    int err_fd;     /* the child's stdout/stderr: an unlinked temp file, O_APPEND */
    long job;       /* index of the job it runs, -1 when idle */
    double deadline;
    /* response being read */
    unsigned char hdr[8];
    size_t hdr_got;
    uint32_t len, flags;
    unsigned char *buf;
    size_t got;
} worker;

struct amk_worker_pool {
    amk_worker_pool *next; /* every live pool of the process (children close their fds) */
    char name[32];
    int n;
    worker *w;
    amk_worker_fn fn;
    amk_worker_opts opts;
    long respawns;
    pid_t parent;
};

const char *amk__signal_name(int sig)
{
    switch (sig) {
    case SIGABRT: return "Aborted";
    case SIGSEGV: return "Segmentation fault";
    case SIGBUS: return "Bus error";
    case SIGFPE: return "Floating point exception";
    case SIGILL: return "Illegal instruction";
    case SIGKILL: return "Killed";
    case SIGTERM: return "Terminated";
    case SIGXCPU: return "CPU time limit exceeded";
    case SIGXFSZ: return "File size limit exceeded";
    case SIGPIPE: return "Broken pipe";
    case SIGINT: return "Interrupt";
    case SIGHUP: return "Hangup";
    case SIGTRAP: return "Trace/breakpoint trap";
    case SIGSYS: return "Bad system call";
    default: return "signal";
    }
}

/* Live pools of this process: a child forked for one pool must not keep another pool's pipe
 * ends (a compile worker holding the run worker's request pipe would keep it from seeing
 * EOF). Pools are created and freed from one thread. */
static amk_worker_pool *live_pools;

/* Several threads may run pools at once (the gpu backend drives one run worker per device
 * from its own thread) and any of them may fork a replacement. A child closes every pipe
 * end that live_pools records, so the list and every worker's descriptors must be complete
 * and current at the instant of any fork: pipe creation + fork + recording, closing a
 * worker's descriptors and (un)linking a pool all happen under this lock. A child inherits
 * it locked (the forking thread held it): a child must never create or free a pool. */
static pthread_mutex_t fd_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------- child side -------------------------------------------------------------------- */

/* Reads exactly len bytes; 0 on success, -1 on EOF or error. */
static int read_full(int fd, void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    while (len > 0) {
        ssize_t r = write(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

/* Re-arms the per-request CPU limit: soft RLIMIT_CPU = CPU used so far + limit. */
static void arm_cpu_limit(double limit_s)
{
    struct rusage ru;
    struct rlimit rl;
    if (limit_s <= 0 || getrusage(RUSAGE_SELF, &ru) != 0 || getrlimit(RLIMIT_CPU, &rl) != 0)
        return;
    double used = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                  (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    rlim_t soft = (rlim_t)ceil(used + limit_s);
    if (rl.rlim_max != RLIM_INFINITY && soft > rl.rlim_max)
        soft = rl.rlim_max;
    rl.rlim_cur = soft;
    (void)setrlimit(RLIMIT_CPU, &rl);
}

static void child_setup(amk_worker_pool *p, int self)
{
    /* Die with the parent; if it is already gone, go now. */
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != p->parent)
        _exit(0);
    /* Own process group: a terminal ^C goes to the loop, which decides; workers die with it. */
    (void)setpgid(0, 0);

    sigset_t none;
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGXCPU, SIG_DFL);
    signal(SIGSEGV, SIG_DFL);
    signal(SIGABRT, SIG_DFL);
    signal(SIGPIPE, SIG_IGN); /* a vanished parent is an EPIPE, then we exit */

    /* Close every other worker's pipes and files (of this pool and of any other live pool),
     * and the parent's ends of ours. */
    for (amk_worker_pool *q = live_pools; q; q = q->next) {
        if (q == p)
            continue;
        for (int i = 0; i < q->n; i++) {
            worker *o = &q->w[i];
            if (o->req_fd >= 0)
                close(o->req_fd);
            if (o->resp_fd >= 0)
                close(o->resp_fd);
            if (o->err_fd >= 0)
                close(o->err_fd);
        }
    }
    for (int i = 0; i < p->n; i++) {
        worker *o = &p->w[i];
        if (o->req_fd >= 0)
            close(o->req_fd);
        if (o->resp_fd >= 0)
            close(o->resp_fd);
        if (i != self && o->err_fd >= 0)
            close(o->err_fd);
    }
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul >= 0) {
        dup2(nul, 0);
        close(nul);
    }
    dup2(p->w[self].err_fd, 1);
    dup2(p->w[self].err_fd, 2);
    close(p->w[self].err_fd);

    struct rlimit rl = {0, 0};
    (void)setrlimit(RLIMIT_CORE, &rl); /* a crashing compiler must not write gigabytes */
    if (p->opts.as_limit_bytes > 0 && !AMK_ASAN) {
        if (getrlimit(RLIMIT_AS, &rl) == 0) {
            rlim_t want = (rlim_t)p->opts.as_limit_bytes;
            if (rl.rlim_max == RLIM_INFINITY || want < rl.rlim_max) {
                rl.rlim_cur = want;
                (void)setrlimit(RLIMIT_AS, &rl);
            }
        }
    }
}

/* Returns when a request (or EOF, or an error for read_full to meet) is waiting on fd,
 * calling idle meanwhile for as long as it asks to be called again. */
static void wait_request(int fd, int (*idle)(void *), void *ud)
{
    struct pollfd pf = {fd, POLLIN, 0};
    int more = 1;
    while (more && poll(&pf, 1, 0) == 0)
        more = idle(ud);
}

static void child_main(amk_worker_pool *p, int self, int req_rd, int resp_wr)
{
    child_setup(p, self);
    if (p->opts.child_init)
        p->opts.child_init(p->opts.ud);
    for (;;) {
        uint32_t len;
        if (p->opts.child_idle)
            wait_request(req_rd, p->opts.child_idle, p->opts.ud);
        if (read_full(req_rd, &len, sizeof len) != 0)
            _exit(0); /* parent closed the pipe: pool freed */
        if (len > AMK_WORKER_MSG_MAX)
            _exit(3);
        unsigned char *req = malloc(len ? len : 1);
        if (!req || read_full(req_rd, req, len) != 0)
            _exit(req ? 0 : 4);
        arm_cpu_limit(p->opts.cpu_limit_s);
        void *resp = NULL;
        size_t resp_len = 0;
        int act = p->fn(p->opts.ud, req, len, &resp, &resp_len);
        free(req);
        if (resp_len > AMK_WORKER_MSG_MAX) {
            fprintf(stderr, "amk %s worker: response of %zu bytes is over the limit\n",
                    p->name, resp_len);
            _exit(5);
        }
        uint32_t hdr[2] = {(uint32_t)resp_len,
                           act == AMK_WORKER_RECYCLE ? FLAG_RECYCLE : 0u};
        if (write_full(resp_wr, hdr, sizeof hdr) != 0 ||
            (resp_len && write_full(resp_wr, resp, resp_len) != 0))
            _exit(0);
        free(resp);
        if (act == AMK_WORKER_RECYCLE)
            _exit(0);
    }
}

/* ---------- parent side ------------------------------------------------------------------- */

static void close_fd(int *fd)
{
    if (*fd < 0)
        return;
    pthread_mutex_lock(&fd_lock);
    close(*fd);
    *fd = -1;
    pthread_mutex_unlock(&fd_lock);
}

static void reset_read(worker *w)
{
    free(w->buf);
    w->buf = NULL;
    w->hdr_got = 0;
    w->got = 0;
    w->len = 0;
    w->flags = 0;
}

/* Waits for pid up to wait_s, then SIGKILLs it and waits for good. Returns the wait status. */
static int reap(pid_t pid, double wait_s)
{
    int st = 0;
    double until = amk_now_s() + wait_s;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (r < 0 && errno != EINTR)
            return 0; /* not our child any more (someone else reaped it) */
        if (r == 0 && amk_now_s() >= until)
            break;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR)
            return 0;
    }
    return st;
}

/* Stops worker i for good (SIGKILL unless kill_first is 0 and it exits by itself within
 * wait_s) and records how it ended. */
static void stop_worker(amk_worker_pool *p, int i, int kill_first, double wait_s, int *sig,
                        int *status)
{
    worker *w = &p->w[i];
    int st = 0;
    close_fd(&w->req_fd);
    close_fd(&w->resp_fd);
    if (w->pid > 0) {
        if (kill_first)
            kill(w->pid, SIGKILL);
        st = reap(w->pid, kill_first ? 5.0 : wait_s);
    }
    if (sig)
        *sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    if (status)
        *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    w->pid = -1;
    w->job = -1;
    reset_read(w);
}

static int open_err_file(amk_diag *d)
{
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/amk-worker-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0) {
        amk_diag_set(d, AMK_EWORKER, "cannot create worker stderr file %s: %s", path,
                     strerror(errno));
        return -1;
    }
    unlink(path);
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_APPEND) < 0) {
        amk_diag_set(d, AMK_EWORKER, "fcntl on worker stderr file: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int spawn_locked(amk_worker_pool *p, int i, amk_diag *d);

/* Starts worker i (which must not be running). AMK_OK or AMK_EWORKER. */
static int spawn(amk_worker_pool *p, int i, amk_diag *d)
{
    pthread_mutex_lock(&fd_lock);
    int rc = spawn_locked(p, i, d);
    pthread_mutex_unlock(&fd_lock);
    return rc;
}

static int spawn_locked(amk_worker_pool *p, int i, amk_diag *d)
{
    worker *w = &p->w[i];
    int rq[2], rs[2];
    if (w->err_fd < 0 && (w->err_fd = open_err_file(d)) < 0)
        return AMK_EWORKER;
    if (pipe2(rq, O_CLOEXEC) != 0)
        return amk_diag_set(d, AMK_EWORKER, "%s worker %d: pipe: %s", p->name, i,
                            strerror(errno));
    if (pipe2(rs, O_CLOEXEC) != 0) {
        int e = errno;
        close(rq[0]);
        close(rq[1]);
        return amk_diag_set(d, AMK_EWORKER, "%s worker %d: pipe: %s", p->name, i, strerror(e));
    }
    fflush(NULL); /* no buffered output may be duplicated into the child */
    /* Note: PR_SET_PDEATHSIG in the child fires when the forking THREAD exits: pools are
     * created and used from the process's main (or a long-lived) thread. The standard
     * streams are held across the fork so that no other thread owns their locks in the
     * child (its first message would hang). */
    flockfile(stdout);
    flockfile(stderr);
    pid_t pid = fork();
    funlockfile(stderr);
    funlockfile(stdout);
    if (pid < 0) {
        int e = errno;
        close(rq[0]);
        close(rq[1]);
        close(rs[0]);
        close(rs[1]);
        return amk_diag_set(d, AMK_EWORKER, "%s worker %d: fork: %s", p->name, i,
                            strerror(e));
    }
    if (pid == 0) {
        close(rq[1]);
        close(rs[0]);
        child_main(p, i, rq[0], rs[1]);
        _exit(0);
    }
    close(rq[0]);
    close(rs[1]);
    w->pid = pid;
    w->req_fd = rq[1];
    w->resp_fd = rs[0];
    w->job = -1;
    reset_read(w);
    int fl = fcntl(w->resp_fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(w->resp_fd, F_SETFL, fl | O_NONBLOCK);
    fl = fcntl(w->req_fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(w->req_fd, F_SETFL, fl | O_NONBLOCK);
    return AMK_OK;
}

int amk__worker_pool_create(const amk_worker_opts *opts, amk_worker_fn fn,
                            amk_worker_pool **out, amk_diag *d)
{
    if (!opts || !fn || !out || opts->n_workers < 0 || opts->cpu_limit_s < 0)
        return amk_diag_set(d, AMK_EINVAL, "worker pool: invalid arguments");
    int n = opts->n_workers;
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (int)c : 1;
    }
    if (n > 1024)
        return amk_diag_set(d, AMK_EINVAL, "worker pool: %d workers is too many", n);

    amk_worker_pool *p = calloc(1, sizeof *p);
    if (!p)
        return amk_diag_set(d, AMK_ENOMEM, "worker pool: out of memory");
    p->w = calloc((size_t)n, sizeof *p->w);
    if (!p->w) {
        free(p);
        return amk_diag_set(d, AMK_ENOMEM, "worker pool: out of memory");
    }
    snprintf(p->name, sizeof p->name, "%s", opts->name ? opts->name : "worker");
    p->n = n;
    p->fn = fn;
    p->opts = *opts;
    p->opts.name = NULL;
    p->parent = getpid();
    for (int i = 0; i < n; i++) {
        p->w[i].pid = -1;
        p->w[i].req_fd = p->w[i].resp_fd = p->w[i].err_fd = -1;
        p->w[i].job = -1;
    }

    struct sigaction sa;
    if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
        signal(SIGPIPE, SIG_IGN);
    pthread_mutex_lock(&fd_lock);
    p->next = live_pools;
    live_pools = p;
    pthread_mutex_unlock(&fd_lock);

    for (int i = 0; i < n; i++) {
        int rc = spawn(p, i, d);
        if (rc != AMK_OK) {
            amk__worker_pool_free(p);
            return rc;
        }
    }
    *out = p;
    return AMK_OK;
}

void amk__worker_pool_free(amk_worker_pool *p)
{
    if (!p)
        return;
    /* Closing the request pipes makes idle children exit; give them a moment together. The
     * pool leaves the list in the same locked step, so no child forked meanwhile keeps a
     * request pipe open. */
    pthread_mutex_lock(&fd_lock);
    for (amk_worker_pool **q = &live_pools; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            break;
        }
    for (int i = 0; i < p->n; i++)
        if (p->w[i].req_fd >= 0) {
            close(p->w[i].req_fd);
            p->w[i].req_fd = -1;
        }
    pthread_mutex_unlock(&fd_lock);
    double until = amk_now_s() + 1.0;
    for (int i = 0; i < p->n; i++) {
        worker *w = &p->w[i];
        if (w->pid > 0) {
            double left = until - amk_now_s();
            stop_worker(p, i, 0, left > 0 ? left : 0, NULL, NULL);
        }
        close_fd(&w->resp_fd);
        close_fd(&w->err_fd);
        reset_read(w);
    }
    free(p->w);
    free(p);
}

int amk__worker_pool_size(const amk_worker_pool *p)
{
    return p ? p->n : 0;
}

int amk__worker_pool_pid(const amk_worker_pool *p, int i)
{
    if (!p || i < 0 || i >= p->n)
        return -1;
    return p->w[i].pid > 0 ? (int)p->w[i].pid : -1;
}

long amk__worker_pool_respawns(const amk_worker_pool *p)
{
    return p ? p->respawns : 0;
}

void amk__worker_job_clear(amk_worker_job *job)
{
    if (!job)
        return;
    free(job->resp);
    job->resp = NULL;
    job->resp_len = 0;
    job->rc = AMK_OK;
    job->term_signal = 0;
    job->exit_status = -1;
    job->worker = -1;
    job->pid = -1;
    job->elapsed_s = 0;
    job->reason[0] = '\0';
    job->stderr_tail[0] = '\0';
}

/* Copies the last bytes the child wrote to its stderr file into job->stderr_tail. */
static void grab_tail(worker *w, amk_worker_job *job)
{
    struct stat st;
    job->stderr_tail[0] = '\0';
    if (w->err_fd < 0 || fstat(w->err_fd, &st) != 0 || st.st_size <= 0)
        return;
    size_t want = sizeof job->stderr_tail - 1;
    off_t from = st.st_size > (off_t)want ? st.st_size - (off_t)want : 0;
    ssize_t r;
    do {
        r = pread(w->err_fd, job->stderr_tail, (size_t)(st.st_size - from), from);
    } while (r < 0 && errno == EINTR);
    if (r < 0)
        r = 0;
    job->stderr_tail[r] = '\0';
    /* Embedded NULs would hide the rest: show them as spaces. */
    for (ssize_t k = 0; k < r; k++)
        if (job->stderr_tail[k] == '\0')
            job->stderr_tail[k] = ' ';
}

/* Writes all of buf to the non-blocking fd before the deadline (0 = none).
 * Returns 0, -1 on a broken pipe / error, -2 at the deadline. */
static int write_deadline(int fd, const void *buf, size_t len, double deadline)
{
    const unsigned char *q = buf;
    while (len > 0) {
        ssize_t r = write(fd, q, len);
        if (r > 0) {
            q += r;
            len -= (size_t)r;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int ms = -1;
            if (deadline > 0) {
                double left = deadline - amk_now_s();
                if (left <= 0)
                    return -2;
                ms = (int)ceil(left * 1000.0);
            }
            struct pollfd pf = {fd, POLLOUT, 0};
            int pr = poll(&pf, 1, ms);
            if (pr < 0 && errno != EINTR)
                return -1;
            if (pr > 0 && (pf.revents & (POLLERR | POLLHUP | POLLNVAL)) &&
                !(pf.revents & POLLOUT))
                return -1;
            continue;
        }
        return -1;
    }
    return 0;
}

/* Marks job j failed after its worker i ended; fills the reason. */
static void fail_job(amk_worker_pool *p, int i, amk_worker_job *job, int rc, int sig,
                     int status, double started, const char *what)
{
    job->rc = rc;
    job->term_signal = sig;
    job->exit_status = status;
    job->elapsed_s = amk_now_s() - started;
    if (rc == AMK_ETIMEDOUT)
        snprintf(job->reason, sizeof job->reason,
                 "%s worker %d (pid %d) passed its %.3g s deadline and was killed", p->name, i,
                 job->pid, job->timeout_s);
    else if (sig)
        snprintf(job->reason, sizeof job->reason, "%s worker %d (pid %d) killed by signal %d (%s)%s%s",
                 p->name, i, job->pid, sig, amk__signal_name(sig), what ? ": " : "",
                 what ? what : "");
    else if (status >= 0)
        snprintf(job->reason, sizeof job->reason, "%s worker %d (pid %d) exited with status %d%s%s",
                 p->name, i, job->pid, status, what ? ": " : "", what ? what : "");
    else
        snprintf(job->reason, sizeof job->reason, "%s worker %d (pid %d) failed%s%s", p->name,
                 i, job->pid, what ? ": " : "", what ? what : "");
}

/* Replaces worker i after a failure. On failure to restart, it stays down (pid -1). */
static int respawn(amk_worker_pool *p, int i, amk_diag *d)
{
    p->respawns++;
    return spawn(p, i, d);
}

/* Sends job j to worker i (starting the worker first if it is down). Returns 0 when the job
 * is running, -1 when it is already finished as failed (the worker could not take it; *broken
 * is set when no replacement could be started). */
static int dispatch(amk_worker_pool *p, int i, long j, amk_worker_job *jobs, int *broken,
                    amk_diag *d)
{
    amk_worker_job *job = &jobs[j];
    worker *w = &p->w[i];
    for (int attempt = 0; attempt < 2; attempt++) {
        if (w->pid <= 0 && respawn(p, i, d) != AMK_OK) {
            *broken = 1;
            job->rc = AMK_EWORKER;
            snprintf(job->reason, sizeof job->reason, "cannot start %s worker %d: %s", p->name,
                     i, d ? d->msg : "fork failed");
            return -1;
        }
        double now = amk_now_s();
        job->worker = i;
        job->pid = (int)w->pid;
        if (ftruncate(w->err_fd, 0) != 0) {
            /* keep going: the tail may then include an older request's output */
        }
        w->deadline = job->timeout_s > 0 ? now + job->timeout_s : 0;
        w->job = j;
        reset_read(w);
        uint32_t len = (uint32_t)job->req_len;
        int r = write_deadline(w->req_fd, &len, sizeof len, w->deadline);
        if (r == 0 && job->req_len)
            r = write_deadline(w->req_fd, job->req, job->req_len, w->deadline);
        if (r == 0) {
            job->elapsed_s = now; /* start time until the response arrives */
            return 0;
        }
        if (r == -2) { /* the child stopped reading: it hangs */
            int sig, st;
            stop_worker(p, i, 1, 0, &sig, &st);
            grab_tail(w, job);
            fail_job(p, i, job, AMK_ETIMEDOUT, sig, st, now, NULL);
            if (respawn(p, i, d) != AMK_OK)
                *broken = 1;
            return -1;
        }
        /* Broken pipe: the worker died while idle (not this request's fault): replace it and
         * try once more. */
        int sig, st;
        stop_worker(p, i, 1, 0, &sig, &st);
        amk_log(AMK_LOG_WARN, "%s worker %d (pid %d) was found dead (%s %d); replacing it",
                p->name, i, job->pid, sig ? "signal" : "status", sig ? sig : st);
    }
    job->rc = AMK_EWORKER;
    snprintf(job->reason, sizeof job->reason, "%s worker %d died twice before reading a request",
             p->name, i);
    return -1;
}

/* Reads what is available from worker i. Returns 1 when the response is complete, 0 when more
 * is to come, -1 on EOF/error (the child died), -2 on a protocol violation. */
static int pump(worker *w)
{
    for (;;) {
        ssize_t r;
        if (w->hdr_got < sizeof w->hdr) {
            r = read(w->resp_fd, w->hdr + w->hdr_got, sizeof w->hdr - w->hdr_got);
        } else {
            if (w->got == w->len)
                return 1;
            r = read(w->resp_fd, w->buf + w->got, w->len - w->got);
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (r <= 0)
            return -1;
        if (w->hdr_got < sizeof w->hdr) {
            w->hdr_got += (size_t)r;
            if (w->hdr_got == sizeof w->hdr) {
                memcpy(&w->len, w->hdr, 4);
                memcpy(&w->flags, w->hdr + 4, 4);
                if (w->len > AMK_WORKER_MSG_MAX)
                    return -2;
                w->buf = malloc(w->len ? w->len : 1);
                if (!w->buf)
                    return -2;
                w->got = 0;
                if (w->len == 0)
                    return 1;
            }
        } else {
            w->got += (size_t)r;
            if (w->got == w->len)
                return 1;
        }
    }
}

int amk__worker_pool_run(amk_worker_pool *p, amk_worker_job *jobs, size_t n, amk_diag *d)
{
    return amk__worker_pool_run_cb(p, jobs, n, NULL, NULL, d);
}

/* Job j is final: count it and tell the caller. */
static void job_done(size_t *done, long j, amk_worker_done_fn on_done, void *ud)
{
    (*done)++;
    if (on_done)
        on_done((size_t)j, ud);
}

int amk__worker_pool_run_cb(amk_worker_pool *p, amk_worker_job *jobs, size_t n,
                            amk_worker_done_fn on_done, void *ud, amk_diag *d)
{
    if (!p || (n && !jobs))
        return amk_diag_set(d, AMK_EINVAL, "worker pool run: invalid arguments");
    for (size_t j = 0; j < n; j++) {
        jobs[j].resp = NULL;
        amk__worker_job_clear(&jobs[j]);
        if (jobs[j].req_len > AMK_WORKER_MSG_MAX || (jobs[j].req_len && !jobs[j].req))
            return amk_diag_set(d, AMK_EINVAL, "worker pool run: job %zu: bad request", j);
    }
    struct pollfd *pf = calloc((size_t)p->n, sizeof *pf);
    int *pw = calloc((size_t)p->n, sizeof *pw);
    if (!pf || !pw) {
        free(pf);
        free(pw);
        return amk_diag_set(d, AMK_ENOMEM, "worker pool run: out of memory");
    }
    amk_diag spawn_d;
    amk_diag_clear(&spawn_d);
    size_t next = 0, done = 0;
    int broken = 0;
    while (done < n) {
        /* Hand out work to idle workers. */
        for (int i = 0; i < p->n && next < n; i++) {
            if (p->w[i].job >= 0)
                continue;
            if (p->w[i].pid <= 0 && broken)
                continue;
            long j = (long)next++;
            if (dispatch(p, i, j, jobs, &broken, &spawn_d) != 0)
                job_done(&done, j, on_done, ud);
        }
        if (done >= n)
            break;
        int nb = 0;
        double now = amk_now_s(), soonest = 0;
        for (int i = 0; i < p->n; i++) {
            worker *w = &p->w[i];
            if (w->job < 0)
                continue;
            pf[nb].fd = w->resp_fd;
            pf[nb].events = POLLIN;
            pf[nb].revents = 0;
            pw[nb++] = i;
            if (w->deadline > 0 && (soonest == 0 || w->deadline < soonest))
                soonest = w->deadline;
        }
        if (nb == 0) {
            /* Nothing running and nothing dispatchable: every worker is down. */
            for (; next < n; next++) {
                jobs[next].rc = AMK_EWORKER;
                snprintf(jobs[next].reason, sizeof jobs[next].reason,
                         "no %s worker could be started: %s", p->name, spawn_d.msg);
                job_done(&done, (long)next, on_done, ud);
            }
            break;
        }
        int ms = -1;
        if (soonest > 0) {
            double left = soonest - now;
            ms = left <= 0 ? 0 : (int)ceil(left * 1000.0);
            if (ms > 1000 * 3600)
                ms = 1000 * 3600;
        }
        int pr = poll(pf, (nfds_t)nb, ms);
        if (pr < 0 && errno != EINTR) {
            free(pf);
            free(pw);
            return amk_diag_set(d, AMK_EWORKER, "worker pool run: poll: %s", strerror(errno));
        }
        now = amk_now_s();
        for (int k = 0; k < nb; k++) {
            int i = pw[k];
            worker *w = &p->w[i];
            long j = w->job;
            amk_worker_job *job = &jobs[j];
            double started = job->elapsed_s;
            int res = 0;
            if (pr > 0 && pf[k].revents)
                res = pump(w);
            if (res == 1) {
                job->rc = AMK_OK;
                job->resp = w->buf;
                job->resp_len = w->len;
                w->buf = NULL;
                job->elapsed_s = amk_now_s() - started;
                grab_tail(w, job);
                int recycle = (w->flags & FLAG_RECYCLE) != 0;
                w->job = -1;
                reset_read(w);
                if (recycle) {
                    stop_worker(p, i, 0, 5.0, NULL, NULL);
                    if (respawn(p, i, &spawn_d) != AMK_OK)
                        broken = 1;
                }
                job_done(&done, j, on_done, ud);
                continue;
            }
            if (res < 0) {
                int sig, st;
                /* EOF: the child is dying; give it a moment to finish so its status is
                 * the real one (abort, segfault), then reap. */
                stop_worker(p, i, res == -2, 2.0, &sig, &st);
                grab_tail(w, job);
                fail_job(p, i, job, AMK_EWORKER, sig, st, started,
                         res == -2 ? "malformed response" : NULL);
                if (respawn(p, i, &spawn_d) != AMK_OK)
                    broken = 1;
                job_done(&done, j, on_done, ud);
                continue;
            }
            if (w->deadline > 0 && now >= w->deadline) {
                int sig, st;
                stop_worker(p, i, 1, 0, &sig, &st);
                grab_tail(w, job);
                fail_job(p, i, job, AMK_ETIMEDOUT, sig, st, started, NULL);
                if (respawn(p, i, &spawn_d) != AMK_OK)
                    broken = 1;
                job_done(&done, j, on_done, ud);
            }
        }
    }
    free(pf);
    free(pw);
    if (broken)
        return amk_diag_set(d, AMK_EWORKER, "%s worker pool: %s", p->name, spawn_d.msg);
    return AMK_OK;
}

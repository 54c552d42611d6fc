/* results.tsv, the appender: versioned header, torn-row isolation, locked durable
 * appends (each one fsynced, or grouped by amk_tsv_sync_every) and the next trial number. */
#include "results_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct amk_tsv {
    int fd;
    char *path;
    off_t scanned;     /* bytes of the file already searched for trial numbers */
    int64_t max_trial; /* highest trial number in those bytes (0: none) */
    int ncols;         /* the file's columns: an older file gets rows of its version */
    double sync_every; /* > 0: appends fsync only when the last fsync is this old */
    double synced_at;  /* amk_now_s() of the last fsync */
    int unsynced;      /* rows written since then are not yet on the disk */
};

/* The lock is normally free or held for one append (milliseconds); a writer that waits
 * longer says so once, after LOCK_QUIET_S, instead of hanging silently. */
#define LOCK_QUIET_S 1.0

static int lock_ex(amk_tsv *t, amk_diag *d)
{
    double t0 = amk_now_s();
    while (flock(t->fd, LOCK_EX | LOCK_NB) < 0) {
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK)
            return amk_diag_set(d, AMK_EIO, "%s: lock: %s", t->path, strerror(errno));
        if (amk_now_s() - t0 >= LOCK_QUIET_S) {
            amk_log(AMK_LOG_WARN, "%s: waiting for the lock: another process has held it for "
                    "%.0f s (an amk appending to it, or a program holding it open locked)",
                    t->path, LOCK_QUIET_S);
            while (flock(t->fd, LOCK_EX) < 0)
                if (errno != EINTR)
                    return amk_diag_set(d, AMK_EIO, "%s: lock: %s", t->path, strerror(errno));
            return AMK_OK;
        }
        struct timespec ts = {0, 2000000}; /* 2 ms */
        nanosleep(&ts, NULL);
    }
    return AMK_OK;
}

static ssize_t pread_all(int fd, char *buf, size_t n, off_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* What rows appended to an older file (ncols columns) do not record, for the warning. */
static const char *missing_columns(int ncols)
{
    if (ncols == AMK__TSV_NCOLS_V1)
        return "the device observations, peer timings, energy windows and trial costs";
    if (ncols == AMK__TSV_NCOLS_V2)
        return "the objective, the energy windows and the trial costs";
    return "the trial costs";
}

/* Under the lock: what must precede new rows so they land in a well-formed file. The full
 * header for an empty file, the rest of it for a file whose creation was cut short, a
 * newline after a torn row. With check_head the existing header is validated. */
static int prefix_needed(amk_tsv *t, int check_head, const char **pre, size_t *pre_len,
                         amk_diag *d)
{
    const char *hb = amk__tsv_header_block();
    size_t hb_len = strlen(hb);
    struct stat st;
    *pre = "";
    *pre_len = 0;
    if (fstat(t->fd, &st) < 0)
        return amk_diag_set(d, AMK_EIO, "%s: %s", t->path, strerror(errno));
    if (st.st_size == 0) {
        *pre = hb;
        *pre_len = hb_len;
        t->ncols = AMK__TSV_NCOLS;
        return AMK_OK;
    }
    if (check_head) {
        char head[4096];
        ssize_t n = pread_all(t->fd, head, sizeof head, 0);
        if (n < 0)
            return amk_diag_set(d, AMK_EIO, "%s: %s", t->path, strerror(errno));
        if ((size_t)n < hb_len && n == st.st_size && memcmp(head, hb, (size_t)n) == 0) {
            *pre = hb + n; /* a header cut short while the file was created */
            *pre_len = hb_len - (size_t)n;
            t->ncols = AMK__TSV_NCOLS;
            return AMK_OK;
        }
        const char *nl1 = memchr(head, '\n', (size_t)n);
        int rc = amk__tsv_check_header_line(t->path, 1, head,
                                            nl1 ? (size_t)(nl1 - head) : (size_t)n,
                                            &t->ncols, d);
        if (rc)
            return rc;
        if (!nl1)
            return amk_diag_set(d, AMK_ETSV, "%s:1: header line truncated", t->path);
        const char *l2 = nl1 + 1, *nl2 = memchr(l2, '\n', (size_t)(head + n - l2));
        if (!nl2)
            return amk_diag_set(d, AMK_ETSV, "%s:2: column-name line missing or truncated",
                                t->path);
        rc = amk__tsv_check_header_line(t->path, 2, l2, (size_t)(nl2 - l2), &t->ncols, d);
        if (rc)
            return rc;
        if (t->ncols < AMK__TSV_NCOLS)
            amk_log(AMK_LOG_WARN, "%s: a v%d results file: new rows keep its columns, without "
                    "%s (start a new file for them)", t->path, amk__tsv_version(t->ncols),
                    missing_columns(t->ncols));
    }
    char last;
    if (pread_all(t->fd, &last, 1, st.st_size - 1) != 1)
        return amk_diag_set(d, AMK_EIO, "%s: %s", t->path, strerror(errno));
    if (last != '\n') {
        amk_log(AMK_LOG_WARN, "%s: last row is torn (no newline); isolating it", t->path);
        *pre = "\n";
        *pre_len = 1;
    }
    return AMK_OK;
}

/* Writes pre + body with one locked append (amk_fs_append_locked re-takes the lock this
 * open file description already holds, which flock treats as a no-op, and releases it). */
static int write_locked(amk_tsv *t, const char *pre, size_t pre_len, const char *body,
                        size_t body_len, amk_diag *d)
{
    const char *buf = body;
    size_t len = body_len;
    char *joined = NULL;
    if (pre_len) {
        joined = malloc(pre_len + body_len);
        if (!joined) {
            flock(t->fd, LOCK_UN);
            return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", t->path);
        }
        memcpy(joined, pre, pre_len);
        if (body_len)
            memcpy(joined + pre_len, body, body_len);
        buf = joined;
        len = pre_len + body_len;
    }
    int rc = AMK_OK;
    if (len) {
        double now = t->sync_every > 0 ? amk_now_s() : 0;
        int durable = t->sync_every <= 0 || now - t->synced_at >= t->sync_every;
        rc = durable ? amk_fs_append_locked(t->fd, buf, len, d)
                     : amk_fs_append_locked_nosync(t->fd, buf, len, d);
        if (rc == AMK_OK && durable) {
            t->synced_at = now;
            t->unsynced = 0;
        } else if (rc == AMK_OK) {
            t->unsynced = 1;
        }
    }
    flock(t->fd, LOCK_UN);
    free(joined);
    if (rc)
        amk_diag_prefix(d, "%s", t->path);
    return rc;
}

/* Under the lock: brings t->max_trial up to date with the lines appended (by anyone) since
 * the last look. A line counts when it is a whole row as the reader sees it (digits, then
 * all the columns), so torn rows and header or comment lines count for nothing; a number
 * past INT64_MAX counts as INT64_MAX (the next number is then refused, never wrapped). */
static int scan_trials(amk_tsv *t, amk_diag *d)
{
    struct stat st;
    if (fstat(t->fd, &st) < 0)
        return amk_diag_set(d, AMK_EIO, "%s: %s", t->path, strerror(errno));
    char buf[1 << 16];
    off_t off = t->scanned, line_end = t->scanned;
    int ndig = 0, tabs = 0, bad = 0, plus = 0;
    uint64_t v = 0;
    while (off < st.st_size) {
        size_t want = (size_t)(st.st_size - off) < sizeof buf ? (size_t)(st.st_size - off)
                                                              : sizeof buf;
        ssize_t r = pread_all(t->fd, buf, want, off);
        if (r < 0)
            return amk_diag_set(d, AMK_EIO, "%s: %s", t->path, strerror(errno));
        if (r == 0)
            break;
        for (ssize_t i = 0; i < r; i++) {
            char c = buf[i];
            if (c == '\n') {
                if (!bad && ndig > 0 && tabs == t->ncols - 1 && (int64_t)v > t->max_trial)
                    t->max_trial = (int64_t)v;
                ndig = tabs = bad = plus = 0;
                v = 0;
                line_end = off + i + 1;
            } else if (c == '\t') {
                tabs++;
            } else if (tabs == 0 && !bad) {
                if (c == '+' && ndig == 0 && v == 0 && !plus) {
                    plus = 1; /* the reader takes "+7" as 7: so does the count */
                } else if (c >= '0' && c <= '9') {
                    unsigned dg = (unsigned)(c - '0');
                    v = v > ((uint64_t)INT64_MAX - dg) / 10 ? (uint64_t)INT64_MAX : v * 10 + dg;
                    ndig++;
                } else {
                    bad = 1;
                }
            }
        }
        off += r;
    }
    t->scanned = line_end; /* a line still being written is read again next time */
    return AMK_OK;
}

/* A results file must be a regular file: a FIFO or a device would block or never end, a
 * directory cannot hold rows. Clears O_NONBLOCK (used only so opening a FIFO cannot wait). */
int amk_tsv_open(const char *path, amk_tsv **out, amk_diag *d)
{
    const char *pre;
    size_t pre_len;
    int rc;
    if (!out || !path)
        return amk_diag_set(d, AMK_EINVAL, "amk_tsv_open: NULL argument");
    *out = NULL;
    amk_tsv *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        free(t);
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
    }
    /* O_NONBLOCK: a FIFO must be refused, not waited on (see amk__tsv_regular_fd). */
    t->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    if (t->fd < 0) {
        /* Whatever the cause (a missing directory included), the results file cannot be
         * written: a results file problem, not bad input. */
        int e = errno;
        char dir[4096];
        const char *slash = strrchr(path, '/');
        if (e == ENOENT && slash)
            snprintf(dir, sizeof dir, " (directory %.*s does not exist)", (int)(slash - path),
                     path);
        else
            dir[0] = '\0';
        if (e == EISDIR)
            rc = amk_diag_set(d, AMK_EIO, "%s: not a regular file (a directory); a results file "
                              "must be one", path);
        else
            rc = amk_diag_set(d, AMK_EIO, "%s: cannot create or open the results file: %s%s",
                              path, strerror(e), dir);
        goto fail;
    }
    if ((rc = amk__tsv_regular_fd(t->fd, path, d)))
        goto fail;
    if ((rc = lock_ex(t, d)))
        goto fail;
    if ((rc = prefix_needed(t, 1, &pre, &pre_len, d))) {
        flock(t->fd, LOCK_UN);
        goto fail;
    }
    if ((rc = write_locked(t, pre, pre_len, NULL, 0, d)))
        goto fail;
    *out = t;
    return AMK_OK;
fail:
    amk_tsv_close(t);
    return rc;
}

int amk_tsv_append(amk_tsv *t, const amk_row *rows, size_t n, amk_diag *d)
{
    if (!t || (!rows && n))
        return amk_diag_set(d, AMK_EINVAL, "amk_tsv_append: NULL argument");
    if (n == 0)
        return AMK_OK;
    amk_sb body = {0};
    for (size_t i = 0; i < n; i++) {
        int rc = amk__row_check(&rows[i], d);
        if (rc) {
            amk_sb_free(&body);
            amk_diag_prefix(d, "%s: row %zu (trial %" PRId64 ")", t->path, i, rows[i].trial);
            return rc;
        }
        if ((rc = amk_tsv_check_objective(t, rows[i].objective, d)) != AMK_OK) {
            amk_sb_free(&body); /* it would read back as objective time: never mislabelled */
            return rc;
        }
        amk__row_format_cols(&rows[i], t->ncols, &body);
    }
    if (body.oom) {
        amk_sb_free(&body);
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", t->path);
    }
    const char *pre;
    size_t pre_len;
    int rc = lock_ex(t, d);
    if (rc == AMK_OK && (rc = prefix_needed(t, 0, &pre, &pre_len, d)))
        flock(t->fd, LOCK_UN);
    if (rc == AMK_OK)
        rc = write_locked(t, pre, pre_len, body.p, body.len, d);
    amk_sb_free(&body);
    return rc;
}

int amk_tsv_append_next(amk_tsv *t, amk_row *rows, size_t n, amk_diag *d)
{
    if (!t || (!rows && n))
        return amk_diag_set(d, AMK_EINVAL, "amk_tsv_append_next: NULL argument");
    if (n == 0)
        return AMK_OK;
    int rc = lock_ex(t, d);
    if (rc)
        return rc;
    if ((rc = scan_trials(t, d))) {
        flock(t->fd, LOCK_UN);
        return rc;
    }
    if ((uint64_t)n > (uint64_t)(INT64_MAX - t->max_trial)) {
        flock(t->fd, LOCK_UN);
        return amk_diag_set(d, AMK_ETSV, "%s: trial numbers exhausted: the file already holds "
                            "trial %" PRId64 " and %zu more would pass %" PRId64
                            " (start a new results file)", t->path, t->max_trial, n, INT64_MAX);
    }
    for (size_t i = 0; i < n; i++)
        rows[i].trial = t->max_trial + 1 + (int64_t)i;
    /* The lock is held across the append: flock on the same open file description is a
     * no-op, and the append releases it once the rows are on disk. */
    rc = amk_tsv_append(t, rows, n, d);
    flock(t->fd, LOCK_UN);
    return rc;
}

int amk_tsv_check_objective(const amk_tsv *t, amk_objective o, amk_diag *d)
{
    if (o == AMK_OBJ_TIME || t->ncols > AMK__TSV_NCOLS_V2)
        return AMK_OK; /* v3 and later have the objective column */
    return amk_diag_set(d, AMK_ETSV, "%s: a v%d results file has no objective column: rows of "
                        "objective %s need a new file", t->path, amk__tsv_version(t->ncols),
                        amk_objective_name(o));
}

void amk_tsv_sync_every(amk_tsv *t, double seconds)
{
    if (!t)
        return;
    t->sync_every = seconds > 0 ? seconds : 0;
    t->synced_at = amk_now_s();
}

int amk_tsv_sync(amk_tsv *t, amk_diag *d)
{
    if (!t)
        return amk_diag_set(d, AMK_EINVAL, "amk_tsv_sync: NULL argument");
    if (!t->unsynced)
        return AMK_OK;
    if (fsync(t->fd) < 0)
        return amk_diag_set(d, AMK_EIO, "%s: fsync: %s", t->path, strerror(errno));
    t->unsynced = 0;
    t->synced_at = amk_now_s();
    return AMK_OK;
}

void amk_tsv_close(amk_tsv *t)
{
    if (!t)
        return;
    if (t->fd >= 0) {
        if (t->unsynced) /* best effort: a caller that must know calls amk_tsv_sync */
            fsync(t->fd);
        close(t->fd);
    }
    free(t->path);
    free(t);
}

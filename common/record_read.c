/* The record format, the streaming reader: header checks, rows handed to a callback, the
 * torn-row rule. */
#include "record_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int amk__tsv_regular_fd(int fd, const char *path, amk_diag *d)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return amk_diag_set(d, AMK_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return amk_diag_set(d, AMK_EIO, "%s: not a regular file (%s); a results file must be "
                            "one", path, S_ISDIR(st.st_mode) ? "a directory"
                                         : S_ISFIFO(st.st_mode) ? "a FIFO"
                                         : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                                    : "a socket");
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return AMK_OK;
}

/* A buffered line reader over a file descriptor: lines are handed out in place (no copy),
 * the buffer doubles only for a line longer than it. */
typedef struct line_reader {
    int fd;
    char *buf;
    size_t cap, start, end, scanned; /* scanned: bytes after start known to hold no '\n' */
    int eof;
} line_reader;

#define LR_MAX_LINE ((size_t)1 << 30)

/* The trial numbers read so far, with their lines: amk never writes a number twice (they
 * are taken under the append lock), so a repeat is a hand-edited file. Open addressing,
 * grown at half full. */
typedef struct trial_set {
    struct trial_slot {
        int64_t trial;
        size_t line; /* 0: empty */
    } *slot;
    size_t cap, n;
} trial_set;

/* The line already holding trial, after recording it at line when new; 0 when new.
 * (size_t)-1 on out of memory. */
static size_t trial_seen(trial_set *s, int64_t trial, size_t line)
{
    if (2 * (s->n + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        struct trial_slot *ns = calloc(cap, sizeof *ns);
        if (!ns)
            return (size_t)-1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i].line) {
                size_t h = (uint64_t)s->slot[i].trial * 0x9E3779B97F4A7C15u & (cap - 1);
                while (ns[h].line)
                    h = (h + 1) & (cap - 1);
                ns[h] = s->slot[i];
            }
        free(s->slot);
        s->slot = ns;
        s->cap = cap;
    }
    size_t h = (uint64_t)trial * 0x9E3779B97F4A7C15u & (s->cap - 1);
    for (; s->slot[h].line; h = (h + 1) & (s->cap - 1))
        if (s->slot[h].trial == trial)
            return s->slot[h].line;
    s->slot[h].trial = trial;
    s->slot[h].line = line;
    s->n++;
    return 0;
}

/* 1 and a line (without its newline; *has_nl says whether it had one), 0 at end of file,
 * AMK_EIO / AMK_ENOMEM / AMK_ETSV (a line over 1 GiB) on failure. */
static int lr_next(line_reader *lr, const char **line, size_t *len, int *has_nl)
{
    for (;;) {
        char *from = lr->buf + lr->start + lr->scanned;
        char *nl = memchr(from, '\n', lr->end - lr->start - lr->scanned);
        if (nl) {
            *line = lr->buf + lr->start;
            *len = (size_t)(nl - *line);
            *has_nl = 1;
            lr->start += *len + 1;
            lr->scanned = 0;
            return 1;
        }
        lr->scanned = lr->end - lr->start;
        if (lr->eof) {
            if (lr->start == lr->end)
                return 0;
            *line = lr->buf + lr->start;
            *len = lr->end - lr->start;
            *has_nl = 0;
            lr->start = lr->end;
            lr->scanned = 0;
            return 1;
        }
        if (lr->start > 0) {
            memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
            lr->end -= lr->start;
            lr->start = 0;
        }
        if (lr->end == lr->cap) {
            if (lr->cap >= LR_MAX_LINE)
                return AMK_ETSV;
            char *nb = realloc(lr->buf, lr->cap * 2);
            if (!nb)
                return AMK_ENOMEM;
            lr->buf = nb;
            lr->cap *= 2;
        }
        ssize_t r = read(lr->fd, lr->buf + lr->end, lr->cap - lr->end);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return AMK_EIO;
        }
        if (r == 0)
            lr->eof = 1;
        lr->end += (size_t)r;
    }
}

int amk_tsv_read(const char *path, int (*cb)(const amk_row *r, void *ud), void *ud,
                 amk_tsv_stats *st, amk_diag *d)
{
    amk_tsv_stats local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    if (!path)
        return amk_diag_set(d, AMK_EINVAL, "amk_tsv_read: NULL path");
    line_reader lr = {.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), .cap = 1 << 18};
    if (lr.fd < 0)
        return amk_diag_set(d, errno == ENOENT ? AMK_ENOENT : AMK_EIO, "%s: %s", path,
                            strerror(errno));
    int reg = amk__tsv_regular_fd(lr.fd, path, d);
    if (reg) {
        close(lr.fd);
        return reg;
    }
    amk_row *row = malloc(sizeof *row);
    lr.buf = malloc(lr.cap);
    if (!row || !lr.buf) {
        free(row);
        free(lr.buf);
        close(lr.fd);
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
    }
    trial_set seen = {0};
    const char *hb = amk__tsv_header_block();
    size_t hb_len = strlen(hb), hb_seen = 0, lineno = 0, len;
    const char *line;
    int has_nl, got, rc = AMK_OK, ncols = AMK__TSV_NCOLS;
    while ((got = lr_next(&lr, &line, &len, &has_nl)) == 1) {
        lineno++;
        st->lines++;
        if (lineno <= 2) {
            /* A header cut short at creation (a prefix of the block, nothing after it):
             * the file has no rows yet. */
            if (!has_nl && hb_seen + len < hb_len && memcmp(line, hb + hb_seen, len) == 0) {
                st->torn++;
                break;
            }
            if ((rc = amk__tsv_check_header_line(path, (int)lineno, line, len, &ncols, d)))
                break;
            hb_seen += len + 1;
            continue;
        }
        if (!has_nl) { /* only the last line can lack it: a row cut while being written */
            st->torn++;
            amk_log(AMK_LOG_INFO, "%s:%zu: skipping torn last row (no newline)", path, lineno);
            break;
        }
        if (len == 0 || line[0] == '#')
            continue; /* blank and comment lines, as pandas skips them */
        int pr = amk__row_parse(line, len, row, 1, ncols, d);
        if (pr < 0) {
            rc = pr;
            amk_diag_prefix(d, "%s:%zu", path, lineno);
            break;
        }
        if (pr == AMK__ROW_TORN) {
            st->torn++;
            amk_log(AMK_LOG_INFO, "%s:%zu: skipping torn row (isolated by a later writer)",
                    path, lineno);
            continue;
        }
        size_t first = trial_seen(&seen, row->trial, lineno);
        if (first == (size_t)-1) {
            rc = amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
            break;
        }
        if (first) {
            rc = amk_diag_set(d, AMK_ETSV, "%s:%zu: trial %lld is already on line %zu; amk "
                              "never writes a trial number twice (a hand-edited or "
                              "concatenated file?)", path, lineno, (long long)row->trial, first);
            break;
        }
        st->rows++;
        int c = cb ? cb(row, ud) : 0;
        if (c) {
            rc = c < 0 ? c : AMK_OK;
            break;
        }
    }
    if (got < 0)
        rc = amk_diag_set(d, got, "%s:%zu: %s", path, lineno + 1,
                          got == AMK_EIO ? strerror(errno)
                          : got == AMK_ETSV ? "line longer than 1 GiB"
                                            : "out of memory");
    free(seen.slot);
    free(lr.buf);
    free(row);
    close(lr.fd);
    return rc;
}

/* Small file-system helpers: whole-file read, atomic replace, locked durable append. */
#include "amk_common.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
           : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a plain file";
}

int amk_fs_read_fd(int fd, const char *name, char **data, size_t *len, amk_diag *d)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", name);
    for (;;) {
        if (n + 1 >= cap) {
            /* Grow to at most the cap + 2: one byte past the cap says "too big". */
            size_t nc = cap * 2 > AMK_FS_READ_MAX + 2 ? AMK_FS_READ_MAX + 2 : cap * 2;
            char *nb = realloc(buf, nc);
            if (!nb) {
                free(buf);
                return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", name);
            }
            buf = nb;
            cap = nc;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            return amk_diag_set(d, AMK_EIO, "%s: %s", name, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > AMK_FS_READ_MAX) {
            free(buf);
            return amk_diag_set(d, AMK_EINVAL, "%s: larger than %zu MiB, the most amk reads "
                                "from one input", name, AMK_FS_READ_MAX >> 20);
        }
    }
    buf[n] = '\0';
    *data = buf;
    if (len)
        *len = n;
    return AMK_OK;
}

int amk_fs_read_all(const char *path, char **data, size_t *len, amk_diag *d)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return amk_diag_set(d, errno == ENOENT ? AMK_ENOENT : AMK_EIO, "%s: %s", path,
                            strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return amk_diag_set(d, AMK_EIO, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        int rc = amk_diag_set(d, AMK_EINVAL, "%s: not a regular file (%s)", path,
                              file_kind(st.st_mode));
        close(fd);
        return rc;
    }
    int rc = amk_fs_read_fd(fd, path, data, len, d);
    close(fd);
    return rc;
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int amk_fs_write_atomic(const char *path, const void *data, size_t len, amk_diag *d)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return amk_diag_set(d, AMK_EINVAL, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return amk_diag_set(d, AMK_EIO, "%s: %s", tmp, strerror(errno));
    if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return amk_diag_set(d, AMK_EIO, "%s: %s", tmp, strerror(e));
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return amk_diag_set(d, AMK_EIO, "%s: %s", path, strerror(e));
    }
    /* Make the rename itself durable. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return AMK_OK;
}

/* The append of both entry points. The lock is held from the size check to the unlock, so
 * the bytes past `before` are this call's: a failed write (a full disk, a quota) or fsync cuts
 * the file back to `before`, and no torn row is left for readers or the next writer. */
static int append_locked(int fd, const void *data, size_t len, int durable, amk_diag *d)
{
    while (flock(fd, LOCK_EX) < 0)
        if (errno != EINTR)
            return amk_diag_set(d, AMK_EIO, "lock: %s", strerror(errno));
    int rc = AMK_OK;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        rc = amk_diag_set(d, AMK_EIO, "append: %s", strerror(errno));
    } else if (write_all(fd, data, len) < 0 || (durable && fsync(fd) < 0)) {
        int e = errno;
        const char *undo = ftruncate(fd, st.st_size) == 0 ? "the partial write was removed"
                                                          : "the partial write could not be "
                                                            "removed";
        rc = amk_diag_set(d, AMK_EIO, "append: %s (%s)", strerror(e), undo);
    }
    flock(fd, LOCK_UN);
    return rc;
}

int amk_fs_append_locked(int fd, const void *data, size_t len, amk_diag *d)
{
    return append_locked(fd, data, len, 1, d);
}

int amk_fs_append_locked_nosync(int fd, const void *data, size_t len, amk_diag *d)
{
    return append_locked(fd, data, len, 0, d);
}

int amk_fs_mkdir_p(const char *path, amk_diag *d)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return amk_diag_set(d, AMK_EINVAL, "%s: path too long", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return amk_diag_set(d, AMK_EIO, "%s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        return amk_diag_set(d, AMK_EIO, "%s: %s", buf, strerror(errno));
    return AMK_OK;
}

int amk_fs_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

#ifndef AMK_EXE_TO_DATADIR
#define AMK_EXE_TO_DATADIR "../share"
#endif
#ifndef AMK_EXE_TO_SOURCE
#define AMK_EXE_TO_SOURCE ".."
#endif
#ifndef AMK_INSTALL_KERNELS_DIR
#define AMK_INSTALL_KERNELS_DIR ""
#endif
#ifndef AMK_INSTALL_DATA_DIR
#define AMK_INSTALL_DATA_DIR ""
#endif
#ifndef AMK_SOURCE_KERNELS_DIR
#define AMK_SOURCE_KERNELS_DIR ""
#endif
#ifndef AMK_SOURCE_DATA_DIR
#define AMK_SOURCE_DATA_DIR ""
#endif

static int is_dir(const char *p)
{
    struct stat st;
    return p && *p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int amk_fs_share_dir(const char *name, char *out, size_t cap)
{
    int kernels = !strcmp(name, "kernels");
    char cand[4][4096];
    int n = 0;
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(cand[n++], sizeof cand[0], "%s/%s/amk/%s", exe, AMK_EXE_TO_DATADIR, name);
            snprintf(cand[n++], sizeof cand[0], "%s/%s/space_defs/%s", exe, AMK_EXE_TO_SOURCE,
                     name);
        }
    }
    snprintf(cand[n++], sizeof cand[0], "%s", kernels ? AMK_INSTALL_KERNELS_DIR
                                                      : AMK_INSTALL_DATA_DIR);
    snprintf(cand[n++], sizeof cand[0], "%s", kernels ? AMK_SOURCE_KERNELS_DIR
                                                      : AMK_SOURCE_DATA_DIR);
    for (int i = 0; i < n; i++)
        if (is_dir(cand[i])) {
            char real[PATH_MAX]; /* bin/../share/... reads better as share/... */
            snprintf(out, cap, "%s", realpath(cand[i], real) ? real : cand[i]);
            return AMK_OK;
        }
    snprintf(out, cap, "%s", cand[n - 1]);
    return AMK_ENOENT;
}

int amk_fs_cache_dir(char *out, size_t cap)
{
    const char *e = getenv("AMK_CACHE_DIR");
    int n;
    if (e && *e)
        n = snprintf(out, cap, "%s", e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e)
        n = snprintf(out, cap, "%s/amk", e);
    else if ((e = getenv("HOME")) && *e)
        n = snprintf(out, cap, "%s/.cache/amk", e);
    else
        n = snprintf(out, cap, "/tmp/amk-cache-%ld", (long)getuid());
    return (n < 0 || (size_t)n >= cap) ? AMK_EINVAL : AMK_OK;
}

/* Small file-system helpers: whole-file read, atomic replace, locked durable append. */
#include "amk_common.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int amk_fs_read_all(const char *path, char **data, size_t *len, amk_diag *d)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return amk_diag_set(d, errno == ENOENT ? AMK_ENOENT : AMK_EIO, "%s: %s", path,
                            strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                close(fd);
                return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            close(fd);
            return amk_diag_set(d, AMK_EIO, "%s: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *data = buf;
    if (len)
        *len = n;
    return AMK_OK;
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

int amk_fs_append_locked(int fd, const void *data, size_t len, amk_diag *d)
{
    while (flock(fd, LOCK_EX) < 0)
        if (errno != EINTR)
            return amk_diag_set(d, AMK_EIO, "lock: %s", strerror(errno));
    int rc = AMK_OK;
    if (write_all(fd, data, len) < 0 || fsync(fd) < 0)
        rc = amk_diag_set(d, AMK_EIO, "append: %s", strerror(errno));
    flock(fd, LOCK_UN);
    return rc;
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

/* Content-addressed compile cache on disk: code objects keyed by a hash of everything that
 * determines them, each entry verified against the hash of its payload before use, written
 * with temp + rename so concurrent writers are safe. Compiler logs live beside it. */
#include "compile_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENTRY_MAGIC "AMKCODE1"
#define HDR_SIZE 64

struct amk_cache {
    char dir[PATH_MAX];
};

/* Header, little-endian fields at fixed offsets:
 *  0  magic "AMKCODE1"      8  key (u64)           16 payload length (u64)
 *  24 payload hash (u64)    32 compile ms (f64)    40 header hash (u64, over bytes 0..39)
 *  48 reserved (zeros) */
static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

int amk__cache_open(const char *dir, amk_cache **out, amk_diag *d)
{
    amk_cache *c = calloc(1, sizeof *c);
    if (!c)
        return amk_diag_set(d, AMK_ENOMEM, "compile cache: out of memory");
    if (dir && *dir)
        snprintf(c->dir, sizeof c->dir, "%s", dir);
    else if (amk_fs_cache_dir(c->dir, sizeof c->dir) != AMK_OK) {
        free(c);
        return amk_diag_set(d, AMK_EIO, "compile cache: no cache directory (set AMK_CACHE_DIR)");
    }
    char sub[PATH_MAX + 16];
    snprintf(sub, sizeof sub, "%s/objects", c->dir);
    int rc = amk_fs_mkdir_p(sub, d);
    if (rc == AMK_OK) {
        snprintf(sub, sizeof sub, "%s/logs", c->dir);
        rc = amk_fs_mkdir_p(sub, d);
    }
    if (rc != AMK_OK) {
        free(c);
        return amk_diag_prefix(d, "compile cache");
    }
    *out = c;
    return AMK_OK;
}

void amk__cache_close(amk_cache *c)
{
    free(c);
}

const char *amk__cache_dir(const amk_cache *c)
{
    return c ? c->dir : "";
}

/* Each part is hashed with its length first, so ("ab","c") and ("a","bc") differ. */
static uint64_t hash_part(uint64_t h, const void *p, size_t n)
{
    unsigned char len[8];
    put_u64(len, (uint64_t)n);
    h = amk_hash64_update(h, len, sizeof len);
    return n ? amk_hash64_update(h, p, n) : h;
}

uint64_t amk__cache_key(const char *source, size_t source_len, const char *const *options,
                        int n_options, const char *arch, const char *compiler)
{
    uint64_t h = AMK_HASH64_INIT;
    h = hash_part(h, "amk-compile-cache-1", 19);
    h = hash_part(h, AMK_VERSION, strlen(AMK_VERSION));
    h = hash_part(h, compiler ? compiler : "", compiler ? strlen(compiler) : 0);
    h = hash_part(h, arch ? arch : "", arch ? strlen(arch) : 0);
    h = hash_part(h, source ? source : "", source ? source_len : 0);
    unsigned char nopt[8];
    put_u64(nopt, (uint64_t)(n_options > 0 ? n_options : 0));
    h = amk_hash64_update(h, nopt, sizeof nopt);
    for (int i = 0; i < n_options; i++)
        h = hash_part(h, options[i], strlen(options[i]));
    return h;
}

void amk__cache_entry_path(const amk_cache *c, uint64_t key, char *out, size_t cap)
{
    char hex[17];
    amk_hash_hex(key, hex);
    snprintf(out, cap, "%s/objects/%.2s/%s.bin", c->dir, hex, hex);
}

static void drop_entry(const char *path, const char *why)
{
    amk_log(AMK_LOG_WARN, "compile cache: %s: %s; removing it and recompiling", path, why);
    if (unlink(path) != 0 && errno != ENOENT)
        amk_log(AMK_LOG_WARN, "compile cache: cannot remove %s: %s", path, strerror(errno));
}

int amk__cache_get(amk_cache *c, uint64_t key, void **data, size_t *len, double *compile_ms,
                   amk_diag *d)
{
    char path[PATH_MAX + 64];
    amk__cache_entry_path(c, key, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return AMK_ENOENT;
        amk_log(AMK_LOG_WARN, "compile cache: cannot open %s: %s", path, strerror(errno));
        return AMK_ENOENT;
    }
    struct stat st;
    unsigned char hdr[HDR_SIZE];
    if (fstat(fd, &st) != 0 || st.st_size < HDR_SIZE ||
        pread(fd, hdr, HDR_SIZE, 0) != HDR_SIZE) {
        close(fd);
        drop_entry(path, "truncated header");
        return AMK_ENOENT;
    }
    uint64_t plen = get_u64(hdr + 16), phash = get_u64(hdr + 24);
    if (memcmp(hdr, ENTRY_MAGIC, 8) != 0 || get_u64(hdr + 40) != amk_hash64(hdr, 40)) {
        close(fd);
        drop_entry(path, "bad header");
        return AMK_ENOENT;
    }
    if (get_u64(hdr + 8) != key) {
        close(fd);
        drop_entry(path, "header names another key");
        return AMK_ENOENT;
    }
    if (plen != (uint64_t)st.st_size - HDR_SIZE || plen > AMK_WORKER_MSG_MAX) {
        close(fd);
        drop_entry(path, "payload length does not match the header");
        return AMK_ENOENT;
    }
    unsigned char *buf = malloc(plen ? plen : 1);
    if (!buf) {
        close(fd);
        return amk_diag_set(d, AMK_ENOMEM, "compile cache: out of memory");
    }
    size_t got = 0;
    while (got < plen) {
        ssize_t r = pread(fd, buf + got, plen - got, (off_t)(HDR_SIZE + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != plen || amk_hash64(buf, plen) != phash) {
        free(buf);
        drop_entry(path, got != plen ? "short read" : "payload hash mismatch (corrupted)");
        return AMK_ENOENT;
    }
    if (compile_ms) {
        uint64_t bits = get_u64(hdr + 32);
        double ms;
        memcpy(&ms, &bits, sizeof ms);
        *compile_ms = ms;
    }
    *data = buf;
    *len = plen;
    return AMK_OK;
}

int amk__cache_put(amk_cache *c, uint64_t key, const void *data, size_t len,
                   double compile_ms, amk_diag *d)
{
    char path[PATH_MAX + 64], dir[PATH_MAX + 64];
    amk__cache_entry_path(c, key, path, sizeof path);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    int rc = amk_fs_mkdir_p(dir, d);
    if (rc != AMK_OK)
        return rc;
    unsigned char *buf = malloc(HDR_SIZE + len);
    if (!buf)
        return amk_diag_set(d, AMK_ENOMEM, "compile cache: out of memory");
    memset(buf, 0, HDR_SIZE);
    memcpy(buf, ENTRY_MAGIC, 8);
    put_u64(buf + 8, key);
    put_u64(buf + 16, (uint64_t)len);
    put_u64(buf + 24, amk_hash64(data, len));
    uint64_t bits;
    memcpy(&bits, &compile_ms, sizeof bits);
    put_u64(buf + 32, bits);
    put_u64(buf + 40, amk_hash64(buf, 40));
    if (len)
        memcpy(buf + HDR_SIZE, data, len);
    /* amk_fs_write_atomic writes PATH.tmp.PID and renames: writers in other processes use
     * other temp names, and the last rename wins with a complete file. */
    rc = amk_fs_write_atomic(path, buf, HDR_SIZE + len, d);
    free(buf);
    return rc;
}

int amk__cache_write_log(amk_cache *c, const char *name, const char *log, size_t len,
                         char *path_out, size_t cap, amk_diag *d)
{
    char path[PATH_MAX + 96];
    char safe[80];
    size_t k = 0;
    for (const char *s = name; *s && k + 1 < sizeof safe; s++, k++)
        safe[k] = (char)((*s == '/' || (*s == '.' && k == 0)) ? '_' : *s);
    safe[k] = '\0';
    snprintf(path, sizeof path, "%s/logs/%s.log", c->dir, safe);
    int rc = amk_fs_write_atomic(path, log ? log : "", log ? len : 0, d);
    if (path_out && cap)
        snprintf(path_out, cap, "%s", rc == AMK_OK ? path : "");
    return rc;
}

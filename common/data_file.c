/* Data files of a spec ("data" inputs and "answer" outputs, SPEC.md): a NumPy .npy file
 * (format versions 1 to 3, C order, little-endian or byte-sized items) or raw bytes. The
 * header is parsed here; the evaluator reads the payload into its host buffers. */
#include "amk_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The value of key (e.g. 'descr') in the header dict text: a pointer just past "'key':". */
static const char *dict_value(const char *h, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
}

/* Parses the dict of an .npy header: descr, fortran_order, shape. */
static int parse_dict(const char *path, const char *h, amk_data_info *out, amk_diag *d)
{
    const char *v = dict_value(h, "descr");
    if (!v || (*v != '\'' && *v != '"'))
        return amk_diag_set(d, AMK_EPARSE, "%s: .npy header without a 'descr' string", path);
    char q = *v++;
    const char *e = strchr(v, q);
    if (!e || e - v < 3 || e - v > 4)
        return amk_diag_set(d, AMK_EPARSE, "%s: .npy dtype '%.*s' is not a plain numeric type",
                            path, e ? (int)(e - v) : 8, v);
    char order = v[0], kind = v[1];
    int size = atoi(v + 2);
    if ((order != '<' && order != '|' && order != '=') || (kind != 'f' && kind != 'i' && kind != 'u') ||
        (size != 1 && size != 2 && size != 4 && size != 8) || (size > 1 && order == '|'))
        return amk_diag_set(d, AMK_EPARSE, "%s: .npy dtype '%.*s' is not supported (little-endian "
                            "float, int or uint items)", path, (int)(e - v), v);
    const char *f = dict_value(h, "fortran_order");
    const char *s = dict_value(h, "shape");
    if (!f || !s || *s != '(')
        return amk_diag_set(d, AMK_EPARSE, "%s: .npy header lacks fortran_order or shape", path);
    int64_t count = 1;
    int dims = 0;
    for (const char *p = s + 1; *p && *p != ')';) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        char *end;
        errno = 0;
        long long n = strtoll(p, &end, 10);
        if (end == p || errno || n < 0 || (n > 0 && count > INT64_MAX / n))
            return amk_diag_set(d, AMK_EPARSE, "%s: .npy shape is malformed", path);
        count *= n;
        dims++;
        p = end;
    }
    if (dims > 1 && strncmp(f, "False", 5) != 0)
        return amk_diag_set(d, AMK_EPARSE, "%s: a Fortran-order .npy array is not supported "
                            "(save it in C order)", path);
    out->kind = kind;
    out->elt_size = size;
    out->count = count;
    return AMK_OK;
}

int amk_data_probe(const char *path, amk_data_info *out, amk_diag *d)
{
    memset(out, 0, sizeof *out);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return amk_diag_set(d, AMK_EIO, "%s: %s", path, strerror(errno));
    struct stat st;
    int rc = AMK_OK;
    unsigned char head[12];
    char *dict = NULL;
    if (fstat(fileno(fp), &st) != 0) {
        rc = amk_diag_set(d, AMK_EIO, "%s: %s", path, strerror(errno));
        goto done;
    }
    size_t got = fread(head, 1, sizeof head, fp);
    out->bytes = (int64_t)st.st_size;
    if (got < 10 || memcmp(head, "\x93NUMPY", 6) != 0) { /* raw bytes */
        out->count = out->bytes;
        goto done;
    }
    out->is_npy = 1;
    uint32_t hlen;
    size_t pre;
    if (head[6] == 1) {
        hlen = (uint32_t)head[8] | (uint32_t)head[9] << 8;
        pre = 10;
    } else if ((head[6] == 2 || head[6] == 3) && got >= 12) {
        hlen = (uint32_t)head[8] | (uint32_t)head[9] << 8 | (uint32_t)head[10] << 16 |
               (uint32_t)head[11] << 24;
        pre = 12;
    } else {
        rc = amk_diag_set(d, AMK_EPARSE, "%s: unknown .npy format version %d", path, head[6]);
        goto done;
    }
    if (hlen > (1u << 20) || (int64_t)(pre + hlen) > out->bytes) {
        rc = amk_diag_set(d, AMK_EPARSE, "%s: truncated .npy header", path);
        goto done;
    }
    if (!(dict = calloc(1, (size_t)hlen + 1))) {
        rc = amk_diag_set(d, AMK_ENOMEM, "out of memory");
        goto done;
    }
    if (fseek(fp, (long)pre, SEEK_SET) != 0 || fread(dict, 1, hlen, fp) != hlen) {
        rc = amk_diag_set(d, AMK_EIO, "%s: cannot read the .npy header", path);
        goto done;
    }
    out->offset = (int64_t)(pre + hlen);
    if ((rc = parse_dict(path, dict, out, d)) != AMK_OK)
        goto done;
    if (out->bytes - out->offset != out->count * out->elt_size)
        rc = amk_diag_set(d, AMK_EPARSE, "%s: .npy data hold %lld bytes, the header says %lld "
                          "items of %d bytes", path, (long long)(out->bytes - out->offset),
                          (long long)out->count, out->elt_size);
    out->bytes -= out->offset;
done:
    free(dict);
    fclose(fp);
    return rc;
}

int amk_data_read(const char *path, void *dst, int64_t bytes, int64_t elt_size, amk_diag *d)
{
    amk_data_info in;
    int rc = amk_data_probe(path, &in, d);
    if (rc != AMK_OK)
        return rc;
    if (in.bytes != bytes || (in.is_npy && in.elt_size != elt_size))
        return amk_diag_set(d, AMK_EPARSE, "%s holds %lld bytes%s%s, the buffer %lld bytes of "
                            "%lld-byte elements", path, (long long)in.bytes,
                            in.is_npy ? " of items of " : "",
                            in.is_npy ? (in.elt_size == 1 ? "1 byte" : in.elt_size == 2 ? "2 bytes"
                                         : in.elt_size == 4 ? "4 bytes" : "8 bytes") : "",
                            (long long)bytes, (long long)elt_size);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return amk_diag_set(d, AMK_EIO, "%s: %s", path, strerror(errno));
    if (fseek(fp, (long)in.offset, SEEK_SET) != 0 ||
        fread(dst, 1, (size_t)bytes, fp) != (size_t)bytes)
        rc = amk_diag_set(d, AMK_EIO, "%s: short read", path);
    fclose(fp);
    return rc;
}

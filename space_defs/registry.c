/* The registry of known kernels: built-ins from $AMK_KERNELS_DIR, the install tree or the
 * source tree, plus user folders. A broken spec is an error of the call that loads it,
 * never silently skipped. */
#include "space_defs_int.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct amk_registry {
    amk_spec **specs; /* sorted by name */
    int *builtin;
    int n, cap;
    amk_spec **retired; /* replaced specs: kept alive, configs may still point at them */
    int nretired, capretired;
};

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int has_spec(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/spec.json", dir);
    struct stat st;
    /* Anything but a directory counts, so that a spec.json that is a FIFO or a device is
     * loaded and refused with its reason (never read) rather than silently skipped. */
    return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}

static int grow(void **arr, int *cap, int need, size_t elt)
{
    if (need <= *cap)
        return 0;
    int nc = *cap ? *cap * 2 : 8;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*arr, (size_t)nc * elt);
    if (!p)
        return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

/* Inserts s (takes ownership); same name: a user spec replaces a built-in with a warning,
 * two specs of one name otherwise are an error. */
static int insert(amk_registry *r, amk_spec *s, int builtin, amk_diag *d)
{
    int pos = 0;
    while (pos < r->n && strcmp(r->specs[pos]->name, s->name) < 0)
        pos++;
    if (pos < r->n && !strcmp(r->specs[pos]->name, s->name)) {
        amk_spec *old = r->specs[pos];
        if (!r->builtin[pos] || builtin) {
            int rc = amk_diag_set(d, AMK_EEXIST, "%s: kernel name '%s' is already used by %s",
                                  s->path, s->name, old->path);
            amk_spec_free(s);
            return rc;
        }
        if (grow((void **)&r->retired, &r->capretired, r->nretired + 1, sizeof *r->retired)) {
            amk_spec_free(s);
            return amk_diag_set(d, AMK_ENOMEM, "out of memory");
        }
        amk_log(AMK_LOG_WARN, "%s replaces the built-in kernel '%s' (%s)", s->path, s->name,
                old->path);
        r->retired[r->nretired++] = old;
        r->specs[pos] = s;
        r->builtin[pos] = 0;
        return AMK_OK;
    }
    int cap = r->cap;
    if (grow((void **)&r->specs, &cap, r->n + 1, sizeof *r->specs) ||
        grow((void **)&r->builtin, &r->cap, r->n + 1, sizeof *r->builtin)) {
        amk_spec_free(s);
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    }
    memmove(r->specs + pos + 1, r->specs + pos, (size_t)(r->n - pos) * sizeof *r->specs);
    memmove(r->builtin + pos + 1, r->builtin + pos, (size_t)(r->n - pos) * sizeof *r->builtin);
    r->specs[pos] = s;
    r->builtin[pos] = builtin;
    r->n++;
    return AMK_OK;
}

static int load_one(amk_registry *r, const char *dir, int builtin, amk_diag *d)
{
    amk_spec *s = NULL;
    int rc = amk_spec_load(dir, &s, d);
    if (rc)
        return rc;
    return insert(r, s, builtin, d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads DIR (a kernel folder, or a folder of kernel folders). `allow_empty` for the
 * built-in folder, which may legitimately hold nothing yet. */
static int add_dir(amk_registry *r, const char *dir, int builtin, int allow_empty, amk_diag *d)
{
    if (!is_dir(dir))
        return amk_diag_set(d, AMK_ENOENT, "%s: not a directory", dir);
    if (has_spec(dir))
        return load_one(r, dir, builtin, d);
    DIR *dh = opendir(dir);
    if (!dh)
        return amk_diag_set(d, AMK_EIO, "%s: cannot open directory", dir);
    char **names = NULL;
    int n = 0, cap = 0, rc = AMK_OK;
    struct dirent *e;
    while ((e = readdir(dh))) {
        if (e->d_name[0] == '.')
            continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        if (!is_dir(sub) || !has_spec(sub))
            continue;
        if (grow((void **)&names, &cap, n + 1, sizeof *names) || !(names[n] = strdup(sub))) {
            rc = amk_diag_set(d, AMK_ENOMEM, "out of memory");
            break;
        }
        n++;
    }
    closedir(dh);
    if (!rc) {
        if (n > 1) /* deterministic load order */
            qsort(names, (size_t)n, sizeof *names, cmp_str);
        for (int i = 0; i < n && !rc; i++)
            rc = load_one(r, names[i], builtin, d);
        if (!rc && n == 0 && !allow_empty)
            rc = amk_diag_set(d, AMK_ENOENT, "%s: no spec.json in it or in its sub-folders",
                              dir);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int amk_registry_create(amk_registry **out, amk_diag *d)
{
    *out = NULL;
    amk_registry *r = calloc(1, sizeof *r);
    if (!r)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    const char *env = getenv("AMK_KERNELS_DIR");
    const char *dir;
    char found[4096];
    int rc = AMK_OK;
    if (env && *env) {
        dir = env;
        if (!is_dir(dir)) {
            rc = amk_diag_set(d, AMK_ENOENT, "AMK_KERNELS_DIR=%s: not a directory", env);
            goto fail;
        }
    } else {
        amk_fs_share_dir("kernels", found, sizeof found); /* next to the executable first */
        dir = found;
    }
    if (is_dir(dir))
        rc = add_dir(r, dir, 1, 1, d);
    else
        amk_log(AMK_LOG_WARN, "no built-in kernels: %s does not exist", dir);
    if (rc)
        goto fail;
    *out = r;
    return AMK_OK;
fail:
    amk_registry_free(r);
    return rc;
}

int amk_registry_add_dir(amk_registry *r, const char *dir, amk_diag *d)
{
    if (!r || !dir)
        return amk_diag_set(d, AMK_EINVAL, "amk_registry_add_dir: NULL argument");
    return add_dir(r, dir, 0, 0, d);
}

int amk_registry_open(const char *const *dirs, int n, amk_registry **out, amk_diag *d)
{
    amk_registry *r = NULL;
    int rc = amk_registry_create(&r, d);
    *out = NULL;
    if (rc != AMK_OK) {
        amk_diag_prefix(d, "loading the built-in kernels");
        return rc;
    }
    for (int i = 0; i < n && rc == AMK_OK; i++) {
        if (!amk_fs_exists(dirs[i]))
            rc = amk_diag_set(d, AMK_ENOENT, "--spec-dir %s: no such directory", dirs[i]);
        else if ((rc = add_dir(r, dirs[i], 0, 0, d)) != AMK_OK && !strstr(d->msg, dirs[i]))
            amk_diag_prefix(d, "--spec-dir %s", dirs[i]);
    }
    if (rc != AMK_OK)
        amk_registry_free(r);
    else
        *out = r;
    return rc;
}

int amk_registry_lookup(const amk_registry *r, const char *name, const amk_spec **out,
                        amk_diag *d)
{
    *out = amk_registry_find(r, name);
    if (*out)
        return AMK_OK;
    amk_sb sb = {0};
    for (int i = 0; i < amk_registry_count(r); i++)
        amk_sb_printf(&sb, "%s%s", i ? ", " : "", r->specs[i]->name);
    int rc = amk_diag_set(d, AMK_ENOENT, "unknown kernel '%s' (known: %s; add your own with "
                          "--spec-dir DIR)", name, sb.p ? sb.p : "none");
    amk_sb_free(&sb);
    return rc;
}

const amk_spec *amk_registry_find(const amk_registry *r, const char *name)
{
    if (!r || !name)
        return NULL;
    int lo = 0, hi = r->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(r->specs[mid]->name, name);
        if (!c)
            return r->specs[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

int amk_registry_count(const amk_registry *r) { return r ? r->n : 0; }

const amk_spec *amk_registry_at(const amk_registry *r, int i)
{
    return r && i >= 0 && i < r->n ? r->specs[i] : NULL;
}

void amk_registry_free(amk_registry *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n; i++)
        amk_spec_free(r->specs[i]);
    for (int i = 0; i < r->nretired; i++)
        amk_spec_free(r->retired[i]);
    free(r->specs);
    free(r->builtin);
    free(r->retired);
    free(r);
}

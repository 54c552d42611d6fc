/* `amk compile`: compiles kernel templates without running them (CI checks that templates
 * build; users warm the compile cache). Prints one line per compiled unit with its status,
 * compile time and cache hit, and exits non-zero when any failed. The compiler runs in
 * isolated worker processes, so a crashing or hanging compiler is a status, not our death.
 * Self-contained on the public library API: amk_cmd_compile(argc, argv). */
#include "cli_int.h"
#include "amk_common.h"
#include "amk_cost_model.h"
#include "amk_evaluator.h"
#include "amk_space_defs.h"

#include <cjson/cJSON.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* amk_space_sample draws from our GSL stream through amk's small rng interface. */
static unsigned long gsl_below(void *rng, unsigned long n)
{
    return gsl_rng_uniform_int(rng, n);
}

/* Entry point and help text, wired into the subcommand table by cli/main.c. */
int amk_cmd_compile(int argc, char **argv);
extern const char amk_cmd_compile_help[];


const char amk_cmd_compile_help[] =
    "usage: amk compile KERNEL|--all [--arch ARCH] [--target T] [--shape SHAPE]\n"
    "                   [--config FILE] [--random N] [--seed N] [--jobs N] [--timeout S]\n"
    "                   [--cache-dir DIR] [--no-reference] [--json] [--quiet]\n"
    "                   [--spec-dir DIR]...\n"
    "\n"
    "Compiles kernel templates without running them: the default config of KERNEL (or of\n"
    "every known kernel with --all), N random valid configs with --random N, and each\n"
    "kernel's reference kernel. Compiles run in parallel in isolated worker processes\n"
    "through the compile cache; a compiler that crashes or hangs is killed and reported.\n"
    "One line per unit on stdout:\n"
    "  KERNEL KIND CONFIG_ID STATUS COMPILE_MS CACHE\n"
    "KIND is config or reference; STATUS ok, compile_error, compile_crash, compile_timeout\n"
    "(or rejected: a --config that is not valid on the target); CACHE hit or miss.\n"
    "A failed unit is followed by indented `reason:` and `log:` lines. --json prints a JSON\n"
    "array of {kernel, kind, config_id, status, compile_ms, cache_hit, code_bytes, reason,\n"
    "notes} instead. A summary (throughput in units/s) goes to stderr.\n"
    "\n"
    "  --arch ARCH     sm_90, sm_80, gfx90a, gfx942, ... (default: the target's arch)\n"
    "  --target T      target whose limits decide which configs are valid (default: the\n"
    "                  target of --arch, else h100 or $AMK_TARGET)\n"
    "  --shape SHAPE   M=...,N=...[,dtype=...] or a shape name (default: the default shape)\n"
    "  --config FILE   compile the config(s) in FILE (one JSON config or an array; - is\n"
    "                  stdin) instead of the default config\n"
    "  --random N      also compile N random valid configs per kernel (seeded)\n"
    "  --seed N        seed of --random (default 1)\n"
    "  --jobs N        compile workers (default: one per core)\n"
    "  --timeout S     cap of the adaptive compile timeout (default 120s)\n"
    "  --cache-dir DIR compile cache (default $AMK_CACHE_DIR, $XDG_CACHE_HOME/amk)\n"
    "  --no-reference  do not compile the reference kernels\n"
    "  --quiet         no summary on stderr (errors still); --tables: the summary (default)\n"
    "\n"
    "Exit status: 0 every unit compiled; 6 at least one did not; 1 usage error; 2 bad\n"
    "input (unknown kernel, bad config or shape); 4 this build has no runtime compiler for\n"
    "ARCH; 5 internal error (no compile worker could start).\n";

typedef struct unit_row {
    const amk_spec *spec;
    int reference;
    amk_config cfg;
    amk_compile_result res;
} unit_row;

typedef struct opts {
    const char *kernel, *arch, *target, *shape, *config, *cache_dir;
    const char *spec_dirs[32];
    int n_spec_dirs;
    int all, json, no_reference, quiet;
    long random, jobs;
    unsigned long seed;
    double timeout_s;
} opts;

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "amk compile: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see `amk compile --help`)\n");
    va_end(ap);
    return CLI_EXIT_USAGE;
}

static int parse_long(const char *name, const char *text, long lo, long hi, long *out)
{
    int64_t v;
    if (!text || amk_parse_i64(text, &v) != AMK_OK || v < lo || v > hi) {
        fprintf(stderr, "amk compile: error: %s wants an integer in [%ld, %ld], not '%s' (see `amk "
                "compile --help`)\n", name, lo, hi, text ? text : "");
        return -1;
    }
    *out = (long)v;
    return 0;
}

/* Parses argv[1..]; returns -1 to go on, or an exit code (help printed: 0). */
static int parse_args(int argc, char **argv, opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        char name[64];
        if (a[0] != '-' || a[1] == '\0') {
            if (o->kernel)
                return usage("more than one KERNEL given ('%s')", a);
            o->kernel = a;
            continue;
        }
        snprintf(name, sizeof name, "%s", a);
        char *eq = strchr(name, '=');
        if (eq) {
            *eq = '\0';
            val = a + (eq - name) + 1;
        }
        if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
            fputs(amk_cmd_compile_help, stdout);
            return CLI_EXIT_OK;
        }
        if (!strcmp(name, "--all") || !strcmp(name, "--json") ||
            !strcmp(name, "--no-reference") || !strcmp(name, "--quiet") ||
            !strcmp(name, "--tables")) {
            if (val)
                return usage("%s takes no value", name);
            if (!strcmp(name, "--all"))
                o->all = 1;
            else if (!strcmp(name, "--json"))
                o->json = 1;
            else if (!strcmp(name, "--quiet"))
                o->quiet = 1;
            else if (!strcmp(name, "--tables"))
                o->quiet = 0; /* the summary goes to stderr anyway */
            else
                o->no_reference = 1;
            continue;
        }
        static const char *const with_value[] = {"--arch", "--target", "--shape", "--config",
                                                 "--random", "--seed", "--jobs", "--timeout",
                                                 "--cache-dir", "--spec-dir", NULL};
        int known = 0;
        for (int k = 0; with_value[k]; k++)
            known |= !strcmp(name, with_value[k]);
        if (!known)
            return usage("unknown option '%s'", a);
        if (!val) {
            if (i + 1 >= argc)
                return usage("%s needs a value", name);
            val = argv[++i];
        }
        long v;
        if (!strcmp(name, "--arch"))
            o->arch = val;
        else if (!strcmp(name, "--target"))
            o->target = val;
        else if (!strcmp(name, "--shape"))
            o->shape = val;
        else if (!strcmp(name, "--config"))
            o->config = val;
        else if (!strcmp(name, "--cache-dir"))
            o->cache_dir = val;
        else if (!strcmp(name, "--spec-dir")) {
            if (o->n_spec_dirs >= 32)
                return usage("too many --spec-dir (at most 32)");
            o->spec_dirs[o->n_spec_dirs++] = val;
        } else if (!strcmp(name, "--random")) {
            if (parse_long(name, val, 0, 100000, &v))
                return CLI_EXIT_USAGE;
            o->random = v;
        } else if (!strcmp(name, "--seed")) {
            if (parse_long(name, val, 0, 0x7fffffffL, &v))
                return CLI_EXIT_USAGE;
            o->seed = (unsigned long)v;
        } else if (!strcmp(name, "--jobs")) {
            if (parse_long(name, val, 1, 1024, &v))
                return CLI_EXIT_USAGE;
            o->jobs = v;
        } else if (!strcmp(name, "--timeout")) {
            double s;
            if (amk_parse_duration(val, &s) != AMK_OK || !(s > 0))
                return usage("--timeout wants a duration like 30s or 2m, not '%s'", val);
            o->timeout_s = s;
        }
    }
    if (!o->kernel && !o->all && !o->config)
        return usage("name a KERNEL, --all or --config FILE");
    if (o->all && o->kernel)
        return usage("give KERNEL or --all, not both ('%s')", o->kernel);
    return -1;
}

typedef struct rows {
    unit_row *v;
    size_t n, cap;
} rows;

static unit_row *push(rows *r)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        unit_row *nv = realloc(r->v, cap * sizeof *nv);
        if (!nv)
            return NULL;
        r->v = nv;
        r->cap = cap;
    }
    unit_row *u = &r->v[r->n++];
    memset(u, 0, sizeof *u);
    return u;
}

static int seen(const rows *r, const amk_config *c)
{
    for (size_t i = 0; i < r->n; i++)
        if (!r->v[i].reference && r->v[i].cfg.spec == c->spec && amk_config_equal(&r->v[i].cfg, c))
            return 1;
    return 0;
}

/* Default + random configs of one kernel. Returns an exit code or -1 to go on. */
static int add_kernel(const opts *o, const amk_spec *s, const amk_target *t, gsl_rng *rng,
                      rows *out)
{
    amk_diag d;
    amk_shape sh;
    if (o->shape) {
        if (amk_shape_parse(s, o->shape, &sh, &d) != AMK_OK) {
            fprintf(stderr, "amk compile: error: %s: --shape: %s\n", amk_spec_name(s), d.msg);
            return CLI_EXIT_INPUT;
        }
    } else
        amk_spec_shape(s, 0, &sh);
    amk_space *sp;
    if (amk_space_create(s, &sh, &t->limits, &sp, &d) != AMK_OK) {
        fprintf(stderr, "amk compile: error: %s: %s\n", amk_spec_name(s), d.msg);
        return CLI_EXIT_INPUT;
    }
    amk_config c;
    amk_config_default(s, &sh, &c);
    if (amk_space_valid(sp, &c, &d) == AMK_OK) {
        unit_row *u = push(out);
        if (!u)
            goto oom;
        u->spec = s;
        u->cfg = c;
    } else {
        fprintf(stderr, "amk compile: error: %s: the default config is not valid on %s (%s); "
                "skipping it\n", amk_spec_name(s), t->key, d.msg);
    }
    long want = o->random, got = 0;
    for (long tries = 0; got < want && tries < 20 * want + 100; tries++) {
        int rc = amk_space_sample(sp, &(amk_rng){gsl_below, rng}, &c, 100000);
        if (rc == AMK_EEMPTY)
            break;
        if (rc != AMK_OK || seen(out, &c))
            continue;
        unit_row *u = push(out);
        if (!u)
            goto oom;
        u->spec = s;
        u->cfg = c;
        got++;
    }
    if (got < want)
        fprintf(stderr, "amk compile: error: %s: only %ld distinct valid configs found for --random "
                "%ld\n", amk_spec_name(s), got, want);
    amk_space_free(sp);
    return -1;
oom:
    amk_space_free(sp);
    fprintf(stderr, "amk compile: error: out of memory\n");
    return CLI_EXIT_INTERNAL;
}

/* Configs from --config FILE (an object or an array of them). */
static int add_config_file(const opts *o, const amk_registry *reg, const amk_target *t,
                           rows *out)
{
    amk_diag d;
    char *text = NULL;
    size_t len = 0;
    int e = !strcmp(o->config, "-") ? amk_fs_read_fd(0, "<stdin>", &text, &len, &d)
                                    : amk_fs_read_all(o->config, &text, &len, &d);
    if (e != AMK_OK) {
        fprintf(stderr, "amk compile: error: --config: %s\n", d.msg);
        return e == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_INPUT;
    }
    cJSON *js = NULL;
    e = amk_json_parse(!strcmp(o->config, "-") ? "<stdin>" : o->config, text, len, &js, &d);
    free(text);
    if (e != AMK_OK) {
        fprintf(stderr, "amk compile: error: %s\n", d.msg);
        return e == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_INPUT;
    }
    int n = cJSON_IsArray(js) ? cJSON_GetArraySize(js) : 1;
    int rc = -1;
    for (int i = 0; i < n && rc < 0; i++) {
        const cJSON *obj = cJSON_IsArray(js) ? cJSON_GetArrayItem(js, i) : js;
        amk_config c;
        if (amk_config_from_json(reg, obj, &c, &d) != AMK_OK) {
            fprintf(stderr, "amk compile: error: %s: config %d: %s\n", o->config, i, d.msg);
            rc = CLI_EXIT_INPUT;
            break;
        }
        if (o->kernel && strcmp(o->kernel, amk_spec_name(c.spec)) != 0) {
            fprintf(stderr, "amk compile: error: %s: config %d is for kernel '%s', not '%s'\n",
                    o->config, i, amk_spec_name(c.spec), o->kernel);
            rc = CLI_EXIT_INPUT;
            break;
        }
        if (seen(out, &c))
            continue;
        unit_row *u = push(out);
        if (!u) {
            fprintf(stderr, "amk compile: error: out of memory\n");
            rc = CLI_EXIT_INTERNAL;
            break;
        }
        u->spec = c.spec;
        u->cfg = c;
        /* Invalid on the target: reported, never compiled. */
        amk_space *sp;
        if (amk_space_create(c.spec, &c.shape, &t->limits, &sp, &d) == AMK_OK) {
            if (amk_space_valid(sp, &c, &d) != AMK_OK) {
                u->res.status = AMK_STATUS_REJECTED;
                amk_config_id(&c, u->res.config_id);
                u->res.compile_ms = NAN;
                snprintf(u->res.reason, sizeof u->res.reason, "not valid on %s: %s", t->key,
                         d.msg);
            }
            amk_space_free(sp);
        }
    }
    cJSON_Delete(js);
    return rc;
}

static void print_rows(const rows *r, int json)
{
    if (json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; arr && i < r->n; i++) {
            const unit_row *u = &r->v[i];
            cJSON *o = cJSON_CreateObject();
            if (!o)
                break;
            cJSON_AddStringToObject(o, "kernel", amk_spec_name(u->spec));
            cJSON_AddStringToObject(o, "kind", u->reference ? "reference" : "config");
            cJSON_AddStringToObject(o, "config_id", u->res.config_id);
            cJSON_AddStringToObject(o, "status", amk_status_name(u->res.status));
            if (isnan(u->res.compile_ms))
                cJSON_AddNullToObject(o, "compile_ms");
            else
                cJSON_AddNumberToObject(o, "compile_ms", round(u->res.compile_ms * 10) / 10);
            cJSON_AddBoolToObject(o, "cache_hit", u->res.cache_hit);
            cJSON_AddNumberToObject(o, "code_bytes", (double)u->res.code_bytes);
            cJSON_AddStringToObject(o, "reason", u->res.reason);
            cJSON_AddStringToObject(o, "notes", u->res.notes);
            cJSON_AddItemToArray(arr, o);
        }
        char *txt = arr ? cJSON_Print(arr) : NULL;
        if (txt)
            printf("%s\n", txt);
        free(txt);
        cJSON_Delete(arr);
        return;
    }
    printf("%-16s %-9s %-16s %-15s %10s %s\n", "kernel", "kind", "config_id", "status",
           "compile_ms", "cache");
    for (size_t i = 0; i < r->n; i++) {
        const unit_row *u = &r->v[i];
        char ms[32];
        if (isnan(u->res.compile_ms))
            snprintf(ms, sizeof ms, "-");
        else
            snprintf(ms, sizeof ms, "%.1f", u->res.compile_ms);
        printf("%-16s %-9s %-16s %-15s %10s %s\n", amk_spec_name(u->spec),
               u->reference ? "reference" : "config", u->res.config_id,
               amk_status_name(u->res.status), ms,
               u->res.status == AMK_STATUS_REJECTED ? "-"
                                                    : (u->res.cache_hit ? "hit" : "miss"));
        if (u->res.status != AMK_STATUS_OK) {
            if (u->res.reason[0])
                printf("    reason: %s\n", u->res.reason);
            if (u->res.notes[0])
                printf("    %s\n", u->res.notes);
        }
    }
}

int amk_cmd_compile(int argc, char **argv)
{
    opts o = {0};
    o.seed = 1;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;

    amk_diag d;
    amk_registry *reg = NULL;
    rows r = {0};
    gsl_rng *rng = NULL;
    amk_compile_result *res = NULL;
    const amk_config **ptrs = NULL;
    if (amk_registry_create(&reg, &d) != AMK_OK) {
        fprintf(stderr, "amk compile: error: %s\n", d.msg);
        return CLI_EXIT_INPUT;
    }
    for (int i = 0; i < o.n_spec_dirs; i++) {
        if (amk_registry_add_dir(reg, o.spec_dirs[i], &d) != AMK_OK) {
            fprintf(stderr, "amk compile: error: --spec-dir %s: %s\n", o.spec_dirs[i], d.msg);
            rc = CLI_EXIT_INPUT;
            goto out;
        }
    }

    const amk_target *t = NULL;
    if (o.target) {
        if (!(t = amk_target_find(o.target))) {
            fprintf(stderr, "amk compile: error: unknown target '%s'\n", o.target);
            rc = CLI_EXIT_INPUT;
            goto out;
        }
    } else if (o.arch && !(t = amk_target_find(o.arch))) {
        t = amk_target_default();
        fprintf(stderr, "amk compile: no known target has arch %s; using %s's limits to pick "
                "valid configs\n", o.arch, t->key);
    }
    if (!t)
        t = amk_target_default();
    const char *arch = o.arch ? o.arch : t->arch;

    if (o.config) {
        if ((rc = add_config_file(&o, reg, t, &r)) >= 0)
            goto out;
    } else {
        rng = gsl_rng_alloc(gsl_rng_mt19937);
        if (!rng) {
            fprintf(stderr, "amk compile: error: out of memory\n");
            rc = CLI_EXIT_INTERNAL;
            goto out;
        }
        gsl_rng_set(rng, o.seed);
        if (o.all) {
            for (int i = 0; i < amk_registry_count(reg); i++)
                if ((rc = add_kernel(&o, amk_registry_at(reg, i), t, rng, &r)) >= 0)
                    goto out;
        } else {
            const amk_spec *s = amk_registry_find(reg, o.kernel);
            if (!s) {
                fprintf(stderr, "amk compile: error: unknown kernel '%s'; known:", o.kernel);
                for (int i = 0; i < amk_registry_count(reg); i++)
                    fprintf(stderr, " %s", amk_spec_name(amk_registry_at(reg, i)));
                fprintf(stderr, "\n");
                rc = CLI_EXIT_INPUT;
                goto out;
            }
            if ((rc = add_kernel(&o, s, t, rng, &r)) >= 0)
                goto out;
        }
    }

    /* The configs to compile (valid ones), then one reference per kernel and dtype. */
    size_t n_cfg = r.n;
    for (size_t i = 0; !o.no_reference && i < n_cfg; i++) {
        if (r.v[i].res.status == AMK_STATUS_REJECTED)
            continue;
        int dup = 0;
        for (size_t k = n_cfg; k < r.n; k++)
            dup |= r.v[k].spec == r.v[i].spec && r.v[k].cfg.shape.dtype == r.v[i].cfg.shape.dtype;
        if (dup)
            continue;
        amk_config c = r.v[i].cfg;
        unit_row *u = push(&r);
        if (!u) {
            rc = CLI_EXIT_INTERNAL;
            goto out;
        }
        u->spec = c.spec;
        u->cfg = c;
        u->reference = 1;
    }
    res = calloc(r.n ? r.n : 1, sizeof *res);
    ptrs = calloc(r.n ? r.n : 1, sizeof *ptrs);
    size_t *idx = calloc(r.n ? r.n : 1, sizeof *idx);
    if (!res || !ptrs || !idx) {
        free(idx);
        fprintf(stderr, "amk compile: error: out of memory\n");
        rc = CLI_EXIT_INTERNAL;
        goto out;
    }
    amk_backend_opts bo = {0};
    bo.jobs = (int)o.jobs;
    bo.compile_timeout_s = o.timeout_s;
    bo.cache_dir = o.cache_dir;
    double t0 = amk_now_s();
    for (int pass = 0; pass < 2; pass++) {
        size_t m = 0;
        for (size_t i = 0; i < r.n; i++)
            if (r.v[i].reference == pass && r.v[i].res.status != AMK_STATUS_REJECTED) {
                ptrs[m] = &r.v[i].cfg;
                idx[m++] = i;
            }
        if (m == 0)
            continue;
        int c = pass ? amk_compile_references(ptrs, m, arch, &bo, res, &d)
                     : amk_compile_batch(ptrs, m, arch, &bo, res, &d);
        if (c != AMK_OK) {
            fprintf(stderr, "amk compile: error: %s\n", d.msg);
            rc = c == AMK_EUNSUPPORTED ? CLI_EXIT_NODEV
                 : (c == AMK_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_INTERNAL);
            free(idx);
            goto out;
        }
        for (size_t k = 0; k < m; k++)
            r.v[idx[k]].res = res[k];
    }
    double wall = amk_now_s() - t0;
    free(idx);

    print_rows(&r, o.json);
    size_t ok = 0, hits = 0, compiled = 0;
    size_t by[AMK_STATUS_COUNT] = {0};
    for (size_t i = 0; i < r.n; i++) {
        by[r.v[i].res.status]++;
        ok += r.v[i].res.status == AMK_STATUS_OK;
        hits += r.v[i].res.cache_hit != 0;
        compiled += !r.v[i].res.cache_hit && r.v[i].res.status != AMK_STATUS_REJECTED;
    }
    if (!o.quiet) {
        fprintf(stderr, "amk compile: %zu units for %s: %zu ok", r.n, arch, ok);
        for (int s = 0; s < AMK_STATUS_COUNT; s++)
            if (s != AMK_STATUS_OK && by[s])
                fprintf(stderr, ", %zu %s", by[s], amk_status_name((amk_status)s));
        fprintf(stderr, "; %zu compiled, %zu cache hits; %.2f s wall, %.2f units/s\n",
                compiled, hits, wall,
                wall > 0 ? (double)(r.n - by[AMK_STATUS_REJECTED]) / wall : 0.0);
    }
    rc = ok == r.n ? CLI_EXIT_OK : CLI_EXIT_COMPILE;
out:
    free(res);
    free(ptrs);
    free(r.v);
    if (rng)
        gsl_rng_free(rng);
    amk_registry_free(reg);
    return rc;
}

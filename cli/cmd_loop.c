/* `amk loop`: runs the search loop of one kernel at one shape on one backend, logging
 * every trial to results.tsv and the best config to best.json, with a progress bar on a
 * terminal and a JSON summary on stdout. */
#include "cli_int.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOOP_DEFAULT_BUDGET 100

typedef struct progress_ui {
    int bar;            /* draw the bar (stderr is a terminal) */
    int drawn;          /* a bar line is on screen */
    int64_t calls;      /* trials seen by this run */
    double last_draw;
} progress_ui;

static volatile sig_atomic_t bar_on_screen;

/* Ctrl-C while the bar is drawn: end the line, then die of the signal as usual. Every
 * finished trial is already on disk, and best.json was written atomically. */
static void on_signal(int sig)
{
    if (bar_on_screen) {
        static const char nl[] = "\ninterrupted: results.tsv and best file hold every "
                                 "finished trial; rerun with --resume to continue\n";
        ssize_t w = write(STDERR_FILENO, nl, sizeof nl - 1);
        (void)w;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void draw_bar(progress_ui *ui, const amk_loop_progress *p)
{
    double frac = -1;
    if (p->budget > 0)
        frac = (double)ui->calls / (double)p->budget;
    else if (p->time_limit_s > 0)
        frac = p->elapsed_s / p->time_limit_s;
    if (frac > 1)
        frac = 1;
    char bar[32];
    const int width = 24;
    if (frac >= 0) {
        int fill = (int)(frac * width + 0.5);
        for (int i = 0; i < width; i++)
            bar[i] = i < fill ? '#' : '-';
    } else {
        for (int i = 0; i < width; i++)
            bar[i] = (i == (int)(ui->calls % width)) ? '#' : '-';
    }
    bar[width] = '\0';
    char total[32] = "";
    if (p->budget > 0)
        snprintf(total, sizeof total, "/%lld", (long long)p->budget);
    char best[96] = "best -";
    if (p->best && p->best->has)
        snprintf(best, sizeof best, "best %.3f us %s (trial %lld)", p->best->latency_us,
                 amk_latency_kind_name(p->best->kind), (long long)p->best->trial);
    char last[64] = "";
    if (p->last) {
        if (!isnan(p->last->latency_us))
            snprintf(last, sizeof last, "last %s %.3f us", amk_status_name(p->last->status),
                     p->last->latency_us);
        else
            snprintf(last, sizeof last, "last %s", amk_status_name(p->last->status));
    }
    fprintf(stderr, "\r\033[K[%s] %lld%s  %s  %s  %.1fs", bar, (long long)ui->calls, total, best,
            last, p->elapsed_s);
    fflush(stderr);
    ui->drawn = 1;
    bar_on_screen = 1;
}

static void progress_cb(const amk_loop_progress *p, void *ud)
{
    progress_ui *ui = ud;
    ui->calls++;
    if (!ui->bar)
        return;
    double now = amk_now_s();
    int last = p->budget > 0 && ui->calls >= p->budget;
    if (last || now - ui->last_draw >= 0.1 || ui->calls == 1) {
        draw_bar(ui, p);
        ui->last_draw = now;
    }
}

static cJSON *best_json(const amk_incumbent *b)
{
    if (!b->has)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    char id[17];
    amk_config_id(&b->config, id);
    cJSON_AddItemToObject(o, "config", amk_config_to_json(&b->config));
    cJSON_AddStringToObject(o, "config_id", id);
    cli_json_add_num(o, "latency_us", b->latency_us);
    cJSON_AddStringToObject(o, "latency_kind", amk_latency_kind_name(b->kind));
    cli_json_add_num(o, "spread", b->spread);
    cJSON_AddNumberToObject(o, "trial", (double)b->trial);
    return o;
}

/* vs_default of the summary (amk_loop_vs_default says how it is found). */
static cJSON *vs_default_json(const char *results, amk_evaluator *ev, const amk_space *sp,
                              const char *device, const amk_incumbent *best)
{
    amk_vs_default v;
    amk_loop_vs_default(results, ev, sp, device, best, &v);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "config_id", v.config_id);
    cli_json_add_num(o, "default_latency_us", v.default_us);
    if (isfinite(v.default_us))
        cJSON_AddStringToObject(o, "latency_kind", amk_latency_kind_name(v.kind));
    else
        cJSON_AddNullToObject(o, "latency_kind");
    if (v.trial > 0)
        cJSON_AddNumberToObject(o, "default_trial", (double)v.trial);
    else
        cJSON_AddNullToObject(o, "default_trial");
    cli_json_add_num(o, "speedup", v.speedup);
    if (isfinite(v.speedup))
        cJSON_AddNullToObject(o, "reason");
    else
        cJSON_AddStringToObject(o, "reason", v.reason);
    return o;
}

/* What one search needs, parsed once from the command line. */
typedef struct loop_args {
    const amk_spec *s;
    const amk_target *t;
    amk_shape sh;
    const char *strategy, *backend, *results;
    int64_t budget, seed, batch, jobs;
    double time_limit, min_gain, rank_timeout;
    int resume;
} loop_args;

/* One search on one model's devices (devs/ndevs: as amk_backend_opts.devices; NULL/0 = the
 * backend's choice), best config to best_path. Returns an exit code; on success *summary is
 * the JSON summary, or NULL when this process only served an MPI rank 0. */
static int loop_one(cli_ctx *ctx, const loop_args *la, const int *devs, int ndevs,
                    const char *best_path, cJSON **summary)
{
    const amk_spec *s = la->s;
    const amk_target *t = la->t;
    amk_shape sh = la->sh;
    const char *strategy = la->strategy, *backend = la->backend, *results = la->results;
    int64_t budget = la->budget, seed = la->seed, batch = la->batch, jobs = la->jobs;
    double time_limit = la->time_limit, min_gain = la->min_gain, rank_timeout = la->rank_timeout;
    int resume = la->resume, rc;
    char shape[256];
    amk_shape_format(s, &sh, shape, sizeof shape);
    *summary = NULL;

    amk_backend_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.target = t->key;
    opts.jobs = (int)jobs;
    opts.seed = (uint64_t)seed;
    opts.devices = devs;
    opts.ndevices = ndevs;
    opts.sim_path = amk_backend_sim_file(backend); /* NULL unless sim:FILE */
    amk_evaluator *ev = NULL;
    int served = 0; /* an MPI worker rank: it served rank 0 and is done */
    if ((rc = cli_loop_evaluator(ctx, backend, &opts, s, &sh, rank_timeout, &ev, &served)) != 0 ||
        served)
        return rc;
    amk_diag sd;
    amk_diag_clear(&sd);
    if (amk_sim_check_shape(backend, amk_spec_name(s), shape, &sd) != AMK_OK) {
        amk_evaluator_free(ev);
        return cli_fail_diag(ctx, CLI_EXIT_INPUT, &sd);
    }
    int par = amk_evaluator_parallelism(ev);
    const char *used = amk_evaluator_backend(ev);
    const amk_target *et = amk_evaluator_target(ev);
    if (!et)
        et = t;
    const char *dev = amk_evaluator_device(ev);
    amk_diag d;
    amk_diag_clear(&d);
    amk_space *sp = NULL;
    int e = amk_space_create(s, &sh, &et->limits, &sp, &d);
    if (e != AMK_OK) {
        amk_evaluator_free(ev);
        return cli_fail_diag(ctx, cli_exit_for(e), &d);
    }

    /* Without --resume the file is still checked (a hand-edited or foreign file is refused
     * before anything is appended), and an earlier run of the same search is pointed out. */
    if (!resume && amk_fs_exists(results)) {
        amk_resume *prev = NULL;
        e = amk_resume_load(results, amk_spec_name(s), shape, dev, NULL, &prev, &d);
        if (e != AMK_OK) {
            if (!d.msg[0])
                amk_diag_set(&d, e, "%s: %s", results, amk_strerror(e));
            else if (!strstr(d.msg, results))
                amk_diag_prefix(&d, "%s", results);
            amk_space_free(sp);
            amk_evaluator_free(ev);
            return cli_fail_diag(ctx, cli_exit_for_results(e), &d);
        }
        if (amk_resume_rows(prev) > 0 && ctx->tables != 0)
            cli_warn(ctx, "note: %s already holds %zu trial(s) of %s at %s on %s; they are "
                     "kept, but this run starts a fresh search (use --resume to continue "
                     "it)", results, amk_resume_rows(prev), amk_spec_name(s), shape, dev);
        amk_resume_free(prev);
    }

    progress_ui ui;
    memset(&ui, 0, sizeof ui);
    ui.bar = ctx->tables != 0 && isatty(STDERR_FILENO);
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    if (ui.bar) {
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        const char *where = dev && *dev ? dev : et->key;
        /* The model and sim backends already name themselves in their device string. */
        fprintf(stderr, "amk loop: %s at %s on %s%s%s%s, strategy %s, results %s\n",
                amk_spec_name(s), shape, where, strstr(where, used) ? "" : " (",
                strstr(where, used) ? "" : used, strstr(where, used) ? "" : ")", strategy,
                results);
    }

    amk_loop_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.space = sp;
    lo.ev = ev;
    lo.strategy = strategy;
    lo.strategy_opts.seed = (uint64_t)seed;
    lo.budget = budget;
    lo.time_limit_s = time_limit;
    lo.batch = (int)batch;
    lo.min_gain = min_gain > 0 ? min_gain : -1; /* --min-gain 0: none (the library's 0 is
                                                    its default, 0.01) */
    lo.results_path = results;
    lo.best_path = best_path;
    lo.resume = resume;
    lo.progress = progress_cb;
    lo.progress_ud = &ui;
    /* A sampled sweep (sim): search only the configs it recorded. */
    char (*unrecorded)[17] = NULL;
    size_t n_unrecorded = 0;
    e = amk_loop_unrecorded(sp, ev, &unrecorded, &n_unrecorded, &d);
    if (e == AMK_OK && n_unrecorded)
        cli_warn(ctx, "note: %s cannot answer %zu valid config(s) of %s at %s; the search "
                 "covers the configs it recorded", used, n_unrecorded, amk_spec_name(s), shape);
    lo.exclude = (const char (*)[17])unrecorded;
    lo.n_exclude = n_unrecorded;
    amk_loop_result res;
    memset(&res, 0, sizeof res);
    if (e == AMK_OK)
        e = amk_loop_run(&lo, &res, &d);
    free(unrecorded);

    if (ui.bar) {
        if (ui.drawn)
            fputc('\n', stderr);
        bar_on_screen = 0;
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    if (e != AMK_OK) {
        int code = cli_exit_for(e);
        if (e == AMK_EBACKEND || e == AMK_EWORKER)
            code = CLI_EXIT_INTERNAL;
        if (!d.msg[0])
            amk_diag_set(&d, e, "%s", amk_strerror(e));
        if (!strstr(d.msg, amk_spec_name(s)) && code == CLI_EXIT_INPUT)
            amk_diag_prefix(&d, "kernel %s at %s", amk_spec_name(s), shape);
        amk_space_free(sp);
        amk_evaluator_free(ev);
        return cli_fail_diag(ctx, code, &d);
    }

    if (res.trials == 0 && res.exhausted && !resume) {
        /* The strategy had nothing at all to propose: no config satisfies the spec here. */
        cli_fail(ctx, CLI_EXIT_INPUT, "kernel %s at %s on %s: %s (`amk space %s` lists the "
                 "restrictions)", amk_spec_name(s), shape, et->key, amk_strerror(AMK_EEMPTY),
                 amk_spec_name(s));
        amk_space_free(sp);
        amk_evaluator_free(ev);
        return CLI_EXIT_INPUT;
    }

    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kernel", amk_spec_name(s));
    cJSON_AddStringToObject(out, "shape", shape);
    cJSON_AddStringToObject(out, "backend", used ? used : backend);
    cJSON_AddStringToObject(out, "device", dev && *dev ? dev : et->key);
    cJSON_AddStringToObject(out, "target", et->key);
    if (ndevs > 0 && used && !strcmp(used, "gpu")) {
        cJSON *dl = cJSON_AddArrayToObject(out, "devices");
        for (int k = 0; k < ndevs; k++)
            cJSON_AddItemToArray(dl, cJSON_CreateNumber(devs[k]));
    }
    cJSON_AddNumberToObject(out, "parallelism", par);
    cJSON_AddStringToObject(out, "strategy", strategy);
    cJSON_AddNumberToObject(out, "seed", (double)seed);
    cJSON_AddNumberToObject(out, "budget", (double)budget);
    cJSON_AddNumberToObject(out, "min_gain", min_gain);
    cJSON_AddNumberToObject(out, "trials", (double)res.trials);
    cJSON_AddNumberToObject(out, "first_trial", (double)res.first_trial);
    cJSON_AddNumberToObject(out, "last_trial", (double)res.last_trial);
    cJSON_AddBoolToObject(out, "resumed", resume);
    cJSON_AddBoolToObject(out, "exhausted", res.exhausted);
    cJSON_AddNumberToObject(out, "elapsed_s", round(res.elapsed_s * 1000) / 1000);
    cJSON_AddItemToObject(out, "best", best_json(&res.best));
    cJSON_AddItemToObject(out, "vs_default", vs_default_json(results, ev, sp,
                                                             dev && *dev ? dev : et->key,
                                                             &res.best));
    cJSON_AddStringToObject(out, "results", results);
    if (res.best.has && amk_fs_exists(best_path))
        cJSON_AddStringToObject(out, "best_file", best_path);
    else
        cJSON_AddNullToObject(out, "best_file");

    if (cli_tables(ctx)) {
        fprintf(stderr, "%lld trial(s) in %.1fs%s, logged to %s\n", (long long)res.trials,
                res.elapsed_s, res.exhausted ? " (space exhausted)" : "", results);
        if (res.best.has) {
            char *params = amk_config_params_json(&res.best.config);
            fprintf(stderr, "best: %.3f us (%s) at trial %lld: %s -> %s\n", res.best.latency_us,
                    amk_latency_kind_name(res.best.kind), (long long)res.best.trial,
                    params ? params : "?", best_path);
            free(params);
            const cJSON *vd = cJSON_GetObjectItemCaseSensitive(out, "vs_default");
            const cJSON *sp_ = cJSON_GetObjectItemCaseSensitive(vd, "speedup");
            const cJSON *du = cJSON_GetObjectItemCaseSensitive(vd, "default_latency_us");
            if (cJSON_IsNumber(sp_))
                fprintf(stderr, "vs default: speedup %.3fx over the spec's default config "
                        "(%.3f us)\n", sp_->valuedouble, du->valuedouble);
            else
                fprintf(stderr, "vs default: - (%s)\n",
                        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(vd, "reason")));
        } else {
            fprintf(stderr, "no correct config found yet\n");
        }
    }
    amk_space_free(sp);
    amk_evaluator_free(ev);
    *summary = out;
    return CLI_EXIT_OK;
}

int cli_cmd_loop(cli_ctx *ctx, int argc, char **argv)
{
    cli_args a;
    int k, rc, resume = 0;
    const char *kernel = NULL, *shape_txt = NULL, *strategy = "hillclimb", *backend = "auto";
    const char *results = "results.tsv", *best_path = "best.json", *v = NULL;
    int64_t budget = -1, seed = 1, batch = 0, jobs = 0;
    int devs[CLI_MAX_DEVICES], ndevs = 0;
    double time_limit = 0, min_gain = 0.01, rank_timeout = 0;
    cli_args_init(&a, "loop", argc, argv);
    while ((k = cli_args_next(&a)) != CLI_ARG_END) {
        if (k == CLI_ARG_POS) {
            if (kernel)
                cli_args_fail(&a, "unexpected argument '%s' (one KERNEL)", a.arg);
            kernel = a.arg;
            continue;
        }
        if (cli_common_option(ctx, &a) || cli_args_value(&a, "--shape", &shape_txt) ||
            cli_args_value(&a, "--strategy", &strategy) ||
            cli_args_value(&a, "--backend", &backend) ||
            cli_args_value(&a, "--results", &results) || cli_args_value(&a, "--best", &best_path))
            continue;
        if (cli_args_flag(&a, "--resume")) {
            resume = 1;
            continue;
        }
        if (cli_args_value(&a, "--budget", &v)) {
            cli_args_int(&a, "--budget", v, 0, INT64_C(1000000000000), &budget);
            continue;
        }
        if (cli_args_value(&a, "--seed", &v)) {
            cli_args_int(&a, "--seed", v, 0, INT64_MAX, &seed);
            continue;
        }
        if (cli_args_value(&a, "--batch", &v)) {
            cli_args_int(&a, "--batch", v, 1, 4096, &batch);
            continue;
        }
        if (cli_args_value(&a, "--jobs", &v)) {
            cli_args_int(&a, "--jobs", v, 0, 1024, &jobs);
            continue;
        }
        if (cli_args_value(&a, "--devices", &v)) {
            cli_args_devices(&a, "--devices", v, devs, &ndevs);
            continue;
        }
        if (cli_args_value(&a, "--time", &v)) {
            if (v && (amk_parse_duration(v, &time_limit) != AMK_OK || time_limit <= 0))
                cli_args_fail(&a, "option --time: '%s' is not a duration (e.g. 90s, 10m, 1h)", v);
            continue;
        }
        if (cli_args_value(&a, "--min-gain", &v)) {
            char *end = NULL;
            errno = 0;
            if (v)
                min_gain = strtod(v, &end);
            if (v && (errno || end == v || *end || !(min_gain >= 0 && min_gain < 1)))
                cli_args_fail(&a, "option --min-gain: '%s' is not a fraction in [0, 1)", v);
            continue;
        }
        if (cli_args_value(&a, "--rank-timeout", &v)) { /* MPI runs: see cmd_loop_mpi.c */
            if (v && (amk_parse_duration(v, &rank_timeout) != AMK_OK || rank_timeout <= 0))
                cli_args_fail(&a, "option --rank-timeout: '%s' is not a duration (e.g. 30, "
                              "90s, 10m)", v);
            continue;
        }
        cli_args_unknown(&a);
    }
    if ((rc = cli_args_done(ctx, &a)) >= 0)
        return rc;
    if (!kernel) {
        cli_args_fail(&a, "missing KERNEL (see `amk list`)");
        return a.err;
    }
    if (!amk_strategy_find(strategy)) {
        amk_sb sb = {0};
        for (int i = 0; amk_strategies[i]; i++)
            amk_sb_printf(&sb, "%s%s", i ? ", " : "", amk_strategies[i]->name);
        cli_args_fail(&a, "unknown strategy '%s' (known: %s)", strategy, sb.p ? sb.p : "none");
        amk_sb_free(&sb);
        return a.err;
    }
    if ((rc = cli_check_backend(ctx, backend)) != 0)
        return rc;
    if (budget < 0)
        budget = time_limit > 0 ? 0 : LOOP_DEFAULT_BUDGET;
    if (!strcmp(results, best_path))
        return cli_fail(ctx, CLI_EXIT_USAGE, "--results and --best name the same file '%s'",
                        results);

    const amk_spec *s;
    const amk_target *t;
    amk_shape sh;
    if ((rc = cli_kernel(ctx, kernel, &s)) || (rc = cli_resolve_target(ctx, &t)) ||
        (rc = cli_shape(ctx, s, shape_txt, &sh)))
        return rc;

    loop_args la = {s, t, sh, strategy, backend, results, budget, seed, batch, jobs,
                    time_limit, min_gain, rank_timeout, resume};
    amk_device_group *groups = calloc(AMK_MAX_DEVICES, sizeof *groups);
    int ng = 0;
    if (!groups)
        return cli_fail(ctx, CLI_EXIT_INTERNAL, "out of memory");
    amk_diag dd;
    amk_diag_clear(&dd);
    if (amk_device_groups(backend, devs, ndevs, groups, &ng, &dd) != AMK_OK) {
        free(groups);
        return cli_fail_diag(ctx, CLI_EXIT_INPUT, &dd);
    }
    cJSON *out = NULL;
    if (ng <= 1) {
        /* One model: one search (ng == 0: the backend picks, as without --devices). */
        rc = ng ? loop_one(ctx, &la, groups[0].idx, groups[0].n, best_path, &out)
                : loop_one(ctx, &la, ndevs > 0 ? devs : NULL, ndevs, best_path, &out);
        free(groups);
        return rc || !out ? rc : cli_print_json(ctx, out);
    }
    /* Several models: one search per model, one after another, each its own results key
     * (the device column) and its own best file. Not under MPI: every rank would have to
     * go through the same groups in step, and each rank sees only its own host's GPUs. */
    amk_sb sb = {0};
    for (int gi = 0; gi < ng; gi++) {
        amk_sb_printf(&sb, "%sdevice%s ", gi ? "; " : "", groups[gi].n > 1 ? "s" : "");
        for (int j = 0; j < groups[gi].n; j++)
            amk_sb_printf(&sb, "%s%d", j ? "," : "", groups[gi].idx[j]);
        amk_sb_printf(&sb, ": %s", groups[gi].name);
    }
    if (cli_loop_world_size() > 1) {
        rc = cli_fail(ctx, CLI_EXIT_INPUT, "under MPI every rank tunes one GPU model, but "
                      "these devices are of %d (%s): pass --devices of one model", ng,
                      sb.p ? sb.p : "");
        amk_sb_free(&sb);
        free(groups);
        return rc;
    }
    if (ctx->tables != 0)
        cli_warn(ctx, "note: the devices are of %d models (%s): one search per model, one "
                 "after another", ng, sb.p ? sb.p : "");
    amk_sb_free(&sb);
    cJSON *all = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(all, "groups");
    rc = CLI_EXIT_OK;
    for (int gi = 0; gi < ng && rc == CLI_EXIT_OK; gi++) {
        char best[4096];
        amk_best_path_for_model(best_path, groups[gi].name, best, sizeof best);
        rc = loop_one(ctx, &la, groups[gi].idx, groups[gi].n, best, &out);
        if (out)
            cJSON_AddItemToArray(list, out);
    }
    free(groups);
    if (cJSON_GetArraySize(list) == 0) {
        cJSON_Delete(all);
        return rc;
    }
    int prc = cli_print_json(ctx, all);
    return rc ? rc : prc;
}

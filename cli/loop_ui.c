/* `amk loop`'s people output on stderr: the banner and progress bar on a terminal (with a
 * Ctrl-C handler that ends the bar's line), the notes of the search, and the summary. */
#include "cli_int.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What is on screen during one amk_tune. */
typedef struct loop_ui {
    cli_ctx *ctx;
    const amk_tune_opts *o;
    int bar;            /* draw the bar (stderr is a terminal) */
    int started;        /* the banner is out and the signal handlers are set */
    int drawn;          /* a bar line is on screen */
    int64_t calls;      /* trials seen by this search */
    double last_draw;
    struct sigaction old_int, old_term;
    void (*done)(const amk_tune_result *r, const amk_device_group *g, void *ud); /* caller's */
    void *ud;
} loop_ui;

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

static void draw_bar(loop_ui *ui, const amk_loop_progress *p)
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
    char best[128] = "best -";
    if (p->best && p->best->has && p->best->objective != AMK_OBJ_TIME)
        snprintf(best, sizeof best, "best %.4g J %.3f us %s (trial %lld)",
                 p->best->energy_uj * 1e-6, p->best->latency_us,
                 amk_latency_kind_name(p->best->kind), (long long)p->best->trial);
    else if (p->best && p->best->has)
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
    loop_ui *ui = ud;
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

static void on_note(const char *msg, int warning, void *ud)
{
    loop_ui *ui = ud;
    if (warning || ui->ctx->tables != 0)
        cli_warn(ui->ctx, "%s", msg);
}

/* On a terminal: the banner, and the signal handlers that end the bar's line. */
static void on_start(const amk_tune_result *r, void *ud)
{
    loop_ui *ui = ud;
    ui->calls = 0;
    ui->drawn = 0;
    ui->last_draw = 0;
    if (!ui->bar)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &ui->old_int);
    sigaction(SIGTERM, &sa, &ui->old_term);
    /* The model and sim backends already name themselves in their device string. */
    int named = strstr(r->device, r->backend) != NULL;
    fprintf(stderr, "amk loop: %s at %s on %s%s%s%s, strategy %s, results %s\n",
            amk_spec_name(ui->o->spec), r->shape, r->device, named ? "" : " (",
            named ? "" : r->backend, named ? "" : ")", ui->o->strategy, ui->o->results_path);
    ui->started = 1;
}

/* The people summary on stderr. */
static void print_summary(const amk_tune_result *r, const char *results, const char *best_path)
{
    const amk_loop_result *res = &r->loop;
    fprintf(stderr, "%lld trial(s) in %.1fs%s, logged to %s\n", (long long)res->trials,
            res->elapsed_s, res->exhausted ? " (space exhausted)" : "", results);
    if (!res->best.has) {
        fprintf(stderr, "no correct config found yet\n");
        return;
    }
    char *params = amk_config_params_json(&res->best.config);
    fprintf(stderr, "best: %.3f us (%s) at trial %lld: %s -> %s\n", res->best.latency_us,
            amk_latency_kind_name(res->best.kind), (long long)res->best.trial,
            params ? params : "?", best_path);
    if (isfinite(res->best.energy_uj)) /* J/launch next to the time, and where it came from */
        fprintf(stderr, "energy: %.6g J/launch (%s), objective %s\n", res->best.energy_uj * 1e-6,
                res->best.energy_ticks > 0 ? "counter window" : "estimate: power x latency",
                amk_objective_name(res->best.objective));
    free(params);
    if (isfinite(r->vs_default.speedup))
        fprintf(stderr, "vs default: speedup %.3fx over the spec's default config (%.3f us%s%s%s)\n",
                r->vs_default.speedup, r->vs_default.default_us,
                r->vs_default.beside[0] ? "; each relative to " : "", r->vs_default.beside,
                r->vs_default.beside[0] ? " timed beside it" : "");
    else
        fprintf(stderr, "vs default: - (%s)\n", r->vs_default.reason);
}

/* The bar off and the signal handlers back, once a search is over. */
static void finish(loop_ui *ui)
{
    if (!ui->started)
        return;
    if (ui->drawn)
        fputc('\n', stderr);
    bar_on_screen = 0;
    sigaction(SIGINT, &ui->old_int, NULL);
    sigaction(SIGTERM, &ui->old_term, NULL);
    ui->started = 0;
}

static void on_done(const amk_tune_result *r, const amk_device_group *g, void *ud)
{
    loop_ui *ui = ud;
    finish(ui);
    if (cli_tables(ui->ctx))
        print_summary(r, ui->o->results_path, r->best_file);
    if (ui->done)
        ui->done(r, g, ui->ud);
}

int cli_loop_tune(cli_ctx *ctx, const amk_tune_opts *o, amk_tune_result *r, amk_diag *d)
{
    loop_ui ui;
    memset(&ui, 0, sizeof ui);
    ui.ctx = ctx;
    ui.o = o;
    ui.bar = ctx->tables != 0 && isatty(STDERR_FILENO);
    ui.done = o->done;
    ui.ud = o->ud;
    amk_tune_opts with = *o;
    with.progress = progress_cb;
    with.note = on_note;
    with.start = on_start;
    with.done = on_done;
    with.ud = &ui;
    int e = amk_tune_groups(&with, r, d);
    finish(&ui); /* a search that failed */
    return e;
}

/* amk: entry point. Parses the global options, finds the subcommand in the table and runs
 * it; `amk help [CMD]` and every `CMD --help` print the texts kept here. */
#include "cli_int.h"

#include <gsl/gsl_errno.h>
#include <stdlib.h>
#include <string.h>

const char cli_help_list[] =
    "usage: amk list [--json] [--spec-dir DIR]...\n"
    "\n"
    "Lists the known kernels (built-in plus every --spec-dir). On a terminal: a table on\n"
    "stdout, nothing else. Otherwise (piped, redirected, or with --json): a JSON array on\n"
    "stdout, and the table on stderr only with --tables:\n"
    "  [{name, description, dims, dtypes, default_shape, shapes, n_params, raw_size, dir}]\n"
    "raw_size is the product of the choice counts (before restrictions).\n"
    "\n"
    "  --json          JSON on stdout even on a terminal\n";

const char cli_help_space[] =
    "usage: amk space KERNEL [--shape SHAPE] [--target T] [--exact] [--spec-dir DIR]...\n"
    "\n"
    "Describes the search space of KERNEL at SHAPE for target T as JSON on stdout:\n"
    "  {kernel, shape, target, params: {NAME: {choices, default, doc}}, derived,\n"
    "   restrictions, raw_size, valid_count, feasible_count, counted}\n"
    "valid_count satisfies every restriction and the launch limits (threads per block,\n"
    "grid, shared memory of the launch expressions) with T's limits; feasible_count also\n"
    "passes the cost model's resource check (registers, blocks per SM). Spaces\n"
    "with more than 2e6 raw points are estimated from 200000 uniform samples (counted:\n"
    "\"estimated\", samples) unless --exact is given (counted: \"exact\").\n"
    "\n"
    "  --shape SHAPE   M=4096,N=4096,K=4096[,dtype=f32] or a shape name; missing dims come\n"
    "                  from the default shape\n"
    "  --target T      h100 (default, or $AMK_TARGET), h200, a100, mi300x, mi250x\n"
    "  --exact         always enumerate, however large the space\n";

const char cli_help_propose[] =
    "usage: amk propose KERNEL [--shape SHAPE] [--results FILE] [--strategy S] [--seed N]\n"
    "                   [--target T] [--spec-dir DIR]...\n"
    "\n"
    "Prints the next config to try, for an agent to edit and pass to `amk evaluate`:\n"
    "  {kernel, shape, config: {kernel, shape, params}, source, search_space, incumbent,\n"
    "   exhausted}\n"
    "With no recorded trial of KERNEL at SHAPE, config is the spec's default config (or the\n"
    "strategy's first proposal when the default is not valid on the target). Otherwise the\n"
    "strategy replays every recorded trial of FILE for KERNEL/SHAPE and proposes a config\n"
    "not tried yet. incumbent is the best of FILE for KERNEL/SHAPE on the device of its\n"
    "latest row (HARNESS.md \"Best\": the one rule every command uses), or null. When\n"
    "every valid config has been tried, exhausted is true and config is the incumbent's.\n"
    "\n"
    "  --results FILE  results.tsv to learn from (read only; missing file = no history)\n"
    "  --strategy S    hillclimb (default), random, exhaustive, anneal\n"
    "  --seed N        strategy seed (default 1): same file + seed, same proposal\n";

const char cli_help_evaluate[] =
    "usage: amk evaluate CONFIG.json|- [--backend B] [--results FILE] [--target T]\n"
    "                    [--devices LIST] [--spec-dir DIR]...\n"
    "\n"
    "Evaluates one config and prints its verdict JSON on stdout:\n"
    "  {status, valid, rejected_reason, correct, latency_us, latency_kind, predicted_us,\n"
    "   bound_us, pct_of_roofline, config_id, notes, ...}\n"
    "CONFIG.json is either a config {kernel, shape, params} or the whole output of\n"
    "`amk propose` (its \"config\" member is used); - reads stdin.\n"
    "\n"
    "Exit status: 0 whenever a verdict is printed, whatever its status (a config that\n"
    "violates a restriction or a resource limit is the verdict `rejected`: a verdict is\n"
    "data). 2 when the input cannot be turned into a config: malformed JSON, unknown\n"
    "kernel, param or dimension, a missing param, a value that is not one of the declared\n"
    "choices (non-integers, huge or negative numbers, strings like \"64 -DEVIL\"); nothing\n"
    "is printed on stdout and nothing is logged then. 3 results file problem, 4 backend\n"
    "unavailable (--backend gpu without a device).\n"
    "\n"
    "  --backend B     model (default: cost model, latency_kind predicted), sim:FILE (replay\n"
    "                  a results.tsv, latency_kind replayed), gpu (measured), auto (gpu when\n"
    "                  a device answers, else a recorded sweep, else model)\n"
    "  --results FILE  append the trial to FILE (source \"user\"; trial numbers continue;\n"
    "                  kept=1 when it beats the file's incumbent)\n"
    "  --target T      target for model/sim (default h100 or $AMK_TARGET)\n"
    "  --devices LIST  gpu: the GPU(s) to run on, \"1\" or \"0,1\" (the first free one runs\n"
    "                  the config) or all (every GPU of device 0's model); default 0\n";

const char cli_help_loop[] =
    "usage: amk loop KERNEL [--shape SHAPE] [--budget N] [--time T] [--strategy S]\n"
    "                [--seed N] [--backend B] [--results FILE] [--resume] [--best FILE]\n"
    "                [--batch N] [--jobs N] [--devices LIST] [--min-gain F] [--target T]\n"
    "                [--rank-timeout T] [--spec-dir DIR]...\n"
    "\n"
    "Runs the search loop: propose -> evaluate -> keep/revert, one results row per trial,\n"
    "best config rewritten atomically whenever it improves. A progress bar goes to stderr\n"
    "when it is a terminal. The summary is printed as JSON on stdout:\n"
    "  {kernel, shape, backend, device, strategy, seed, budget, min_gain, trials,\n"
    "   first_trial, last_trial, exhausted, elapsed_s,\n"
    "   best: {config, config_id, latency_us, latency_kind, trial} | null,\n"
    "   vs_default: {config_id, default_latency_us, latency_kind, default_trial, speedup,\n"
    "   reason}, results, best_file, devices, parallelism}\n"
    "Trial numbers continue the results file, with or without --resume. vs_default: the\n"
    "spec's default config's measured (or replayed) latency in FILE (sim: in the sweep) and\n"
    "the best's speedup over it; null with a reason when the default was not measured.\n"
    "\n"
    "  --budget N      trials to run now (default 100 unless --time is given; 0 = no\n"
    "                  limit); with --resume: N more trials on top of those in FILE\n"
    "  --time T        wall-clock limit: 90s, 10m, 1h (replaying a Kernel Tuner file:\n"
    "                  the recorded cost of the trials, a simulated clock)\n"
    "  --strategy S    hillclimb (default), random, exhaustive, anneal\n"
    "  --seed N        seed (default 1): same seed, same trials\n"
    "  --backend B     model | sim:FILE | gpu | auto (default auto)\n"
    "  --results FILE  results log (default results.tsv), appended to\n"
    "  --resume        continue FILE: incumbent restored, tried configs skipped, trial\n"
    "                  numbers continue\n"
    "  --best FILE     best config file (default best.json)\n"
    "  --batch N       proposals evaluated together (default twice the configs the backend\n"
    "                  holds in flight: 8 per GPU in use, at most --jobs; 1 without a GPU)\n"
    "  --jobs N        gpu: compile workers (default one per core)\n"
    "  --devices LIST  gpu/auto: the GPUs to use, \"0,1,3\" or all (default all): one run\n"
    "                  worker per GPU, all fed by one compile pool. GPUs of one model share\n"
    "                  one search and one incumbent (the device column is the model, so\n"
    "                  results match a one-GPU run with the same --seed and --batch apart\n"
    "                  from timing; the note says which GPU ran a trial). GPUs of several\n"
    "                  models: one search per model, one after another, each its own\n"
    "                  results key and best file (best.<model>.json); stdout is then\n"
    "                  {groups: [summary, ...]}\n"
    "  --min-gain F    keep a candidate only when faster by this fraction (default 0.01;\n"
    "                  0 = no margin: any gain beyond the measured noise)\n"
    "  --rank-timeout T  under MPI: how long a rank may take for its share of a batch\n"
    "                  before it is marked dead (default: compile cap + run timeouts for\n"
    "                  gpu, seconds for model/sim)\n"
    "\n"
    "Many hosts (an amk built with -DAMK_MPI=ON): mpirun --enable-recovery -np N amk loop\n"
    "... runs the search on rank 0, which alone writes results.tsv and best.json; ranks\n"
    "1..N-1 build the same --backend and evaluate their share of every batch (the default\n"
    "batch is twice the total parallelism). Rows equal a single-process run with the same\n"
    "--seed and --batch; the note says which rank evaluated a trial. A rank that dies or\n"
    "misses its deadline loses only its share of one batch, which goes to the other ranks\n"
    "(rank 0 evaluates itself when none is left). Without --enable-recovery Open MPI ends\n"
    "the whole job when a rank dies; the rows written so far stay (--resume continues).\n";

const char cli_help_report[] =
    "usage: amk report FILE... [--json] [--svg DIR]\n"
    "\n"
    "Summarises results files per kernel/shape/device: the best row, speedup over the\n"
    "spec's default config, trials per status, compile times, trials to within 1% of the\n"
    "best, the cost model's rank correlation. A table on stdout, or JSON with --json.\n"
    "  --svg DIR   also write plots per kernel/shape (best so far, measured vs predicted,\n"
    "              latency by status) as standalone SVG files into DIR\n";

const char cli_help_devices[] =
    "usage: amk devices [--require]\n"
    "\n"
    "Prints JSON on stdout: {gpu: {built, vendor, available, reason}, devices: [...],\n"
    "targets: [...]}. devices lists every GPU that answers, {index, name, target, arch}\n"
    "(index is what --devices takes), when amk was built with the gpu\n"
    "backend (CUDA/NVRTC or HIP/hipRTC); otherwise reason says why none answers (not\n"
    "built with CUDA/HIP, or no driver/device, with the runtime's message). targets lists\n"
    "the known targets with their limits and ceilings (datasheet and measured).\n"
    "\n"
    "  --require       exit 4 when no GPU answers\n";

const char cli_help_help[] =
    "usage: amk help [COMMAND]\n"
    "\n"
    "Prints the overview, or the help of COMMAND (same as `amk COMMAND --help`).\n";

const char cli_help_export[] =
    "usage: amk export RESULTS.tsv... [--format json|c] [-o FILE] [--kernel K]\n"
    "                  [--include-replayed]\n"
    "\n"
    "Builds the tuned-config database from results files: the best ok row (HARNESS.md\n"
    "\"Best\") per vendor -> arch -> device -> kernel -> shape (latency_kind measured only; replayed\n"
    "rows with --include-replayed; predicted rows never), with a default config at every\n"
    "level (the config best on the most shapes; ties: best on the largest shape). Devices\n"
    "map to vendor/arch through the known targets; others go under vendor \"unknown\".\n"
    "--format json (default) writes the database for `amk lookup`; --format c writes a\n"
    "self-contained C header with amk_tuned_<kernel>(device_name, dims..., dtype) per\n"
    "kernel. Rules and formats: docs/EXPORT.md.\n"
    "\n"
    "  --format F          json (default) or c\n"
    "  -o, --output FILE   write FILE atomically instead of stdout\n"
    "  --kernel K          only kernel K (exit 2 when no row has it)\n"
    "  --include-replayed  also rows replayed by the sim backend\n"
    "Exit 2 when nothing can be exported (no ok measured row) or a file cannot be\n"
    "written, 3 when a results file is missing or malformed.\n";

const char cli_help_import[] =
    "usage: amk import SPACE.json -o DIR [--kernel FILE.cu] [--name NAME]\n"
    "\n"
    "Turns a search space in the tuning community's T1 format (Kernel Tuner's\n"
    "benchmark_hub: ConfigurationSpace.TuningParameters and Conditions) into the kernel\n"
    "folder DIR for --spec-dir: spec.json with the params in the T1 order (their values\n"
    "sorted ascending), the conditions as restrictions and KernelSpecification.ProblemSize\n"
    "as the default shape (dims problem_size_x, _y, _z). Values are Python list literals or\n"
    "expressions (range, list(range(..)), comprehensions, list + list, **); conditions use\n"
    "and or not, + - * / // % **, << >> & |, min, max and chained comparisons, translated\n"
    "exactly (// and % round as Python's; a '/' must be exact on every combination of the\n"
    "params it reads). Anything else is an error naming the construct and its column.\n"
    "Without --kernel the folder describes the space only: search and replay (--backend\n"
    "sim:FILE) work, a GPU run records compile errors saying so. With --kernel FILE.cu\n"
    "(CUDA, as its author wrote it: a plain __global__ function is found through the\n"
    "runtime compiler's name lowering) the KernelSpecification becomes the kernel: the\n"
    "block from LocalSize, the grid cdiv(ProblemSize, product of GridDiv), buffers and\n"
    "int scalars from Arguments; the reference is the kernel at the default config (no\n"
    "independent reference exists: weaker, and the verdict notes say so). Prints\n"
    "  {kernel, dir, kernel_source, params, raw_size, restrictions}\n"
    "\n"
    "  -o, --output DIR  the folder to write (must not exist, or be empty); nothing is\n"
    "                    written when the import fails\n"
    "  --kernel FILE.cu  the kernel source: the folder can then run on a GPU\n"
    "  --name NAME       kernel name (default: the file name, \"gemm_milo\")\n"
    "Exit 2: the file is malformed or uses Python outside the subset.\n";

const char cli_help_lookup[] =
    "usage: amk lookup KERNEL --db FILE --device NAME --shape M=..,N=..[,dtype=D]\n"
    "                  [--dtype D]\n"
    "\n"
    "Answers from a database written by `amk export --format json`, with the rules of the\n"
    "C header: the device itself, else its arch, else its vendor, else the default; then\n"
    "the tuned shape of the same dtype nearest to SHAPE (sum over dims of |log2 ratio|),\n"
    "else that level's default config. Prints JSON on stdout:\n"
    "  {kernel, device, query, matched: {vendor, arch, device, shape, level, nearest,\n"
    "   distance, tuned: {latency_us, latency_kind, config_id, device, trial, source}},\n"
    "   config}\n"
    "config holds the tuned params. SHAPE must give every dimension of KERNEL.\n"
    "Exit 2: malformed or foreign database, kernel not in it, bad SHAPE.\n";

const char cli_help_compile[] =
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

const cli_command cli_commands[] = {
    {"list", "list the known kernels", cli_cmd_list, cli_help_list},
    {"space", "describe a kernel's search space and count its valid configs", cli_cmd_space,
     cli_help_space},
    {"propose", "print the next config to try (agent loop, step 1)", cli_cmd_propose,
     cli_help_propose},
    {"evaluate", "evaluate one config JSON and print its verdict (agent loop, step 2)",
     cli_cmd_evaluate, cli_help_evaluate},
    {"loop", "run the search loop, logging every trial to results.tsv", cli_cmd_loop,
     cli_help_loop},
    {"report", "summarise results files: best per kernel/shape, counts by status",
     cli_cmd_report, cli_help_report},
    {"devices", "show GPUs (or why none answers) and the known targets", cli_cmd_devices,
     cli_help_devices},
    {"calibrate", "measure a GPU's ceilings, or fit the cost model to measured results",
     cli_cmd_calibrate, cli_help_calibrate},
    {"compile", "compile kernel templates without running them (check, warm the cache)",
     cli_cmd_compile, cli_help_compile},
    {"export", "export best configs as a JSON database or a C header (dispatch table)",
     cli_cmd_export, cli_help_export},
    {"import", "turn a Kernel Tuner / T1 search space into an amk kernel folder",
     cli_cmd_import, cli_help_import},
    {"lookup", "look up the tuned config of a kernel/device/shape in an export database",
     cli_cmd_lookup, cli_help_lookup},
    {"help", "show help for amk or one command", cli_cmd_help, cli_help_help},
    {NULL, NULL, NULL, NULL},
};

const cli_command *cli_command_find(const char *name)
{
    for (const cli_command *c = cli_commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

static void print_global_help(FILE *f)
{
    fprintf(f, "amk %s - autotuning search engine for GPU kernels\n\n", AMK_VERSION);
    fprintf(f, "usage: amk [GLOBAL OPTIONS] COMMAND [ARGS]\n\ncommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(f, "  %-9s %s\n", c->name, c->summary);
    fprintf(f,
            "\nglobal options (accepted before or after COMMAND):\n"
            "  --spec-dir DIR  add user kernels: a kernel folder (with spec.json) or a folder\n"
            "                  of kernel folders; repeatable\n"
            "  --target T      target for the model/sim backends and `space`:");
    for (int i = 0; i < amk_target_count(); i++)
        fprintf(f, " %s", amk_target_at(i)->key);
    fprintf(f,
            "\n                  (default $AMK_TARGET, else h100)\n"
            "  --tables        people output (tables) on stderr even when not a terminal\n"
            "  --quiet         no people output on stderr (errors still)\n"
            "  --help          help; `amk COMMAND --help` for one command\n"
            "  --version       print the version\n"
            "\nMachine output is JSON on stdout; tables, progress and errors go to stderr.\n"
            "\nexit codes:\n");
#define XX(name, val, doc) fprintf(f, "  %d  %s\n", val, doc);
    CLI_EXIT_MAP(XX)
#undef XX
    fprintf(f, "\nenvironment: AMK_TARGET (default target), AMK_LOG (error|warn|info|debug),\n"
               "AMK_KERNELS_DIR (built-in kernels), AMK_DATA_DIR (recorded sweeps; both are\n"
               "otherwise looked for next to the executable first: <bin>/../share/amk, or a\n"
               "build tree's source space_defs/), AMK_CACHE_DIR (compile cache, ceilings)\n");
    fprintf(f, "\nSee README.md, HARNESS.md (agent contract) and space_defs/SPEC.md.\n");
}

void cli_print_help(FILE *f, const cli_command *cmd)
{
    if (!cmd) {
        print_global_help(f);
        return;
    }
    fputs(cmd->help, f);
    fprintf(f,
            "\nglobal options: --spec-dir DIR (repeatable), --target T, --tables, --quiet,\n"
            "--help. Exit codes: 0 ok, 1 usage, 2 bad input, 3 results file, 4 no device,\n"
            "5 internal (`amk help` explains each).\n");
}

int cli_cmd_help(cli_ctx *ctx, int argc, char **argv)
{
    const char *topic = NULL;
    cli_opt opts[] = {CLI_END};
    cli_pos pos = {&topic, 1, NULL, "one COMMAND at most ('%s' is extra)", NULL};
    int rc = cli_parse(ctx, argc, argv, opts, &pos);
    if (rc >= 0)
        return rc;
    if (!topic) {
        print_global_help(stdout);
        return CLI_EXIT_OK;
    }
    const cli_command *c = cli_command_find(topic);
    if (!c) {
        amk_sb sb = {0};
        for (const cli_command *x = cli_commands; x->name; x++)
            amk_sb_printf(&sb, "%s%s", x == cli_commands ? "" : ", ", x->name);
        cli_fail(ctx, CLI_EXIT_USAGE, "unknown command '%s' (commands: %s)", topic,
                 sb.p ? sb.p : "");
        amk_sb_free(&sb);
        return CLI_EXIT_USAGE;
    }
    cli_print_help(stdout, c);
    return CLI_EXIT_OK;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();

    cli_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.tables = -1;
    ctx.cmd = NULL;

    /* Global options before the command. */
    int cmd_index, help;
    int rc = cli_parse_global(&ctx, argc, argv, &cmd_index, &help);
    if (rc == CLI_EXIT_OK) /* --version */
        return rc;
    if (help && !cmd_index) {
        print_global_help(stdout);
        return CLI_EXIT_OK;
    }
    if (rc > 0) {
        fprintf(stderr, "amk: run `amk help` for usage\n");
        return rc;
    }
    if (!cmd_index) {
        print_global_help(stderr);
        fprintf(stderr, "\namk: error: no command given\n");
        return CLI_EXIT_USAGE;
    }
    char **sub_argv = argv + cmd_index;
    int sub_argc = argc - cmd_index;
    const cli_command *c = cli_command_find(sub_argv[0]);
    if (!c) {
        fprintf(stderr, "amk: error: unknown command '%s' (commands:", sub_argv[0]);
        for (const cli_command *x = cli_commands; x->name; x++)
            fprintf(stderr, " %s", x->name);
        fprintf(stderr, "; see `amk help`)\n");
        return CLI_EXIT_USAGE;
    }
    ctx.cmd = c->name;
    if (help) { /* `amk --help loop` */
        cli_print_help(stdout, c);
        return CLI_EXIT_OK;
    }
    rc = c->run(&ctx, sub_argc, sub_argv);
    amk_registry_free(ctx.reg);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "amk %s: error: cannot write standard output\n", c->name);
        if (rc == CLI_EXIT_OK)
            rc = CLI_EXIT_INTERNAL;
    }
    return rc;
}

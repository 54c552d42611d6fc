"""Scores amk's search strategies against Kernel Tuner's on the community's recorded spaces
(space_defs/data/benchmark_hub), the way "A Methodology for Comparing Auto-Tuning
Optimization Algorithms" (FGCS 2024) does, with its package (autotuning-methodology):

- one simulated time budget per space: the package's cutoff point (the time a calculated
  random search needs to reach the 95th percentile of the space's performance, from the 1st,
  counted in median recorded time per evaluation, +10 % margin as the package adds);
- each run (amk through `amk loop --backend sim:FILE`, Kernel Tuner 1.5 in its
  simulation_mode on the same cachefile) is a sequence of configs; every config costs what
  it cost when recorded (compilation + validation + framework + search_algorithm + the sum
  of its runtimes: the T4 time keys the package's statistics sum), for both tools alike, so
  neither tool's own proposal time counts and both get the same budget;
- its best-so-far curve at 1000 points of the budget, averaged over seeds, is standardised
  with the package's RandomSearchCalculatedBaseline (0 = calculated random search, 1 = the
  optimum); the score of a strategy on a space is the mean of that curve over the budget,
  the aggregate the mean over spaces (as the package's aggregate plot reports).

The package fits an isotonic curve through the pooled runs of a strategy; here the plain
mean of the per-seed step curves is used (the same quantity without smoothing), which also
gives a per-seed score and so a spread over seeds. `--check-package SPACE/GPU` scores the same
runs both ways on one space (docs/PERFORMANCE.md, "Search quality", says where they differ).

Run by bench/search_vs_kerneltuner.sh (it builds the venv); `python3 THIS --help`."""
import argparse
import gzip
import json
import multiprocessing as mp
import os
import random
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

KT_STRATEGIES = ["random_sample", "genetic_algorithm", "dual_annealing", "simulated_annealing",
                 "diff_evo", "pso", "firefly_algorithm", "basinhopping", "greedy_ils", "mls",
                 "bayes_opt"]
AMK_STRATEGIES = ["hillclimb", "anneal", "random"]
AMK_DEFAULT = "hillclimb"
CUTOFF = 0.95
CUTOFF_START = 0.01
RESOLUTION = 1000


# ---------- the spaces ----------------------------------------------------------------------

def load_cache(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def to_t4(cache):
    """The community's T4 form of a Kernel Tuner cachefile, for the package's statistics."""
    inv = {"RuntimeFailedConfig": "runtime", "CompilationFailedConfig": "compile",
           "InvalidConfig": "constraints"}
    keys = cache["tune_params_keys"]
    results = []
    for e in cache["cache"].values():
        t = e["time"]
        ok = not isinstance(t, str)
        times = {"compilation": e.get("compile_time", 0), "framework": e.get("framework_time", 0),
                 "search_algorithm": e.get("strategy_time", 0),
                 "validation": e.get("verification_time", 0)}
        if ok:
            times["runtimes"] = e["times"]
        results.append({"timestamp": e.get("timestamp", ""),
                        "configuration": {k: e[k] for k in keys},
                        "times": times,
                        "invalidity": "correct" if ok else inv[t],
                        "correctness": 1 if ok else 0,
                        "measurements": [{"name": "time", "value": t, "unit": "ms"}],
                        "objectives": ["time"]})
    return {"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"},
            "results": results}


def record_cost_s(e):
    """What one recorded config cost, in the package's T4 time keys (the file's ms, as s)."""
    c = e.get("compile_time", 0) + e.get("framework_time", 0) + e.get("strategy_time", 0) + \
        e.get("verification_time", 0)
    if not isinstance(e["time"], str):
        c += sum(e["times"])
    return c / 1000.0


class Space:
    def __init__(self, kernel, gpu, hub, work):
        from autotuning_methodology.baseline import RandomSearchCalculatedBaseline
        from autotuning_methodology.searchspace_statistics import SearchspaceStatistics
        self.kernel, self.gpu = kernel, gpu
        self.name = f"{kernel}/{gpu}"
        self.cachefile_gz = hub / "cachefiles" / kernel / f"{gpu}.json.gz"
        self.t1 = hub / "spaces" / f"{kernel}.json"
        d = work / kernel / gpu
        d.mkdir(parents=True, exist_ok=True)
        cache = load_cache(self.cachefile_gz)
        self.keys = cache["tune_params_keys"]
        self.kt_kernel, self.kt_size = cache["kernel_name"], cache["problem_size"]
        self.cost = {k: record_cost_s(e) for k, e in cache["cache"].items()}
        self.value = {k: (np.nan if isinstance(e["time"], str) else e["time"])
                      for k, e in cache["cache"].items()}
        self.cachefile = d / "cache.json"  # Kernel Tuner reads it uncompressed
        if not self.cachefile.exists():
            self.cachefile.write_text(json.dumps(cache))
        t4 = d / "t4.json"
        if not t4.exists():
            t4.write_text(json.dumps(to_t4(cache)))
        keys = ["compilation", "framework", "search_algorithm", "validation", "runtimes"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.stats = SearchspaceStatistics(kernel, gpu, True, keys, ["time"], t4,
                                               full_validate=False)
            _, _, t_start, t_end = self.stats.cutoff_point_fevals_time_start_end(
                CUTOFF_START, CUTOFF)
        self.baseline = RandomSearchCalculatedBaseline(self.stats)
        # the package's calculate_budget adds a 10 % margin to the cutoff time
        self.t_start, self.t_end = t_start, t_end * 1.1
        self.time_range = np.linspace(self.t_start, self.t_end, RESOLUTION)
        # the range the package scores over (report_experiments.get_aggregation_data): the
        # cutoff time itself, without the margin its budget adds
        self.package_range = np.linspace(t_start, t_end, RESOLUTION)
        self.worst = np.nanmax(list(self.value.values()))
        self.optimum = np.nanmin(list(self.value.values()))

    def steps(self, keys):
        """Cumulative recorded cost and best-so-far recorded time (NaN until the first valid
        config) after each config tried, in this order (repeats cost nothing, change
        nothing)."""
        t, best, seen = 0.0, np.nan, set()
        times, bests = [], []
        for k in keys:
            if k in seen:
                continue
            seen.add(k)
            t += self.cost[k]
            v = self.value[k]
            if v == v and not best <= v:
                best = v
            times.append(t)
            bests.append(best)
        return np.array(times), np.array(bests)

    def curve(self, keys, time_range=None):
        """Best-so-far recorded time at each point of the time range (the worst recorded
        time before the first valid config)."""
        time_range = self.time_range if time_range is None else time_range
        times, bests = self.steps(keys)
        bests = np.where(np.isnan(bests), self.worst, bests)
        idx = np.searchsorted(times, time_range, side="right") - 1
        out = np.where(idx >= 0, bests[np.maximum(idx, 0)] if len(bests) else self.worst,
                       self.worst)
        return out, (times[-1] if len(times) else 0.0), len(times)

    def standardise(self, curve, time_range=None):
        time_range = self.time_range if time_range is None else time_range
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.baseline.get_standardised_curve(time_range, curve, "time")

    def package_score(self, name, runs):
        """The package's own score of a strategy from its runs (lists of config keys): the
        arrays its runner.py builds from T4 results (cumulative time, best-so-far per
        evaluation, one column per run, NaN-padded) put in a StochasticOptimizationAlgorithm
        curve, scored by report_experiments.get_strategies_aggregated_performance (isotonic
        fit through the pooled runs, RandomSearchCalculatedBaseline) and averaged over the
        package's time range as get_strategy_scores does."""
        from autotuning_methodology.curves import StochasticOptimizationAlgorithm
        from autotuning_methodology.report_experiments import \
            get_strategies_aggregated_performance
        steps = [self.steps(k) for k in runs]
        n = max(len(t) for t, _ in steps)
        x_time = np.full((n, len(runs)), np.nan)
        y = np.full((n, len(runs)), np.nan)
        for r, (t, b) in enumerate(steps):
            x_time[:len(t), r], y[:len(b), r] = t, b
        # the package's Curve.__init__ reads these from its own results cache; the scoring
        # path (get_curve_over_time) uses only the fields set here
        c = StochasticOptimizationAlgorithm.__new__(StochasticOptimizationAlgorithm)
        c.name = c.display_name = name
        c.device_name, c.application_name = self.gpu, self.kernel
        c.stochastic, c.minimization = True, True
        c._x_fevals = np.tile(np.arange(1, n + 1, dtype=float)[:, None], (1, len(runs)))
        c._x_time, c._y = x_time, y
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            perf, _, _, _ = get_strategies_aggregated_performance(
                [(self.baseline, [c], self.stats, self.package_range, None)], 0.95)
        return float(np.mean(perf[0]))


# ---------- the runs -------------------------------------------------------------------------

def run_amk(space, spec_dir, amk, strategy, seed, work):
    # tmpfs when there is one: amk makes every trial's row durable (an fsync each)
    runs = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else work
    out = runs / f"amk-bench-{os.getpid()}" / space.kernel / space.gpu / f"{strategy}-{seed}"
    out.mkdir(parents=True, exist_ok=True)
    tsv = out / "results.tsv"
    tsv.unlink(missing_ok=True)
    budget_s = space.t_end * 1.2  # a little past the budget: cut on the common clock
    t0 = time.perf_counter()
    subprocess.run([amk, "--quiet", "loop", space.kernel, "--spec-dir", str(spec_dir),
                    "--backend", f"sim:{space.cachefile_gz}", "--strategy", strategy,
                    "--seed", str(seed), "--time", f"{budget_s:.3f}s", "--budget", "0",
                    "--results", str(tsv), "--best", str(out / "best.json")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    keys = []
    with open(tsv) as f:
        cols = None
        for line in f:
            if line.startswith("#"):
                continue
            row = line.rstrip("\n").split("\t")
            if cols is None:
                cols = row
                continue
            r = dict(zip(cols, row))
            p = json.loads(r["params"])
            keys.append(",".join(str(p[k]) for k in space.keys))
    shutil.rmtree(out)
    return keys, wall


def run_kt(space, strategy, seed):
    from kernel_tuner import tune_kernel
    t1 = json.loads(space.t1.read_text())["ConfigurationSpace"]
    tune_params = {}
    for p in t1["TuningParameters"]:
        tune_params[p["Name"]] = eval(p["Values"], {"__builtins__": {"range": range, "list": list}})
    restrictions = [c["Expression"] for c in t1["Conditions"]]
    np.random.seed(seed)
    random.seed(seed)
    # Kernel Tuner's own clock counts its live overhead plus recorded compile, verification
    # and benchmark time; give it more than the budget and cut on the common clock.
    opts = {"time_limit": space.t_end * 2.0}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res, _ = tune_kernel(space.kt_kernel, "", space.kt_size, [], tune_params, restrictions=restrictions,
                             cache=str(space.cachefile), simulation_mode=True,
                             strategy=strategy, strategy_options=opts, verbose=False,
                             quiet=True)
    wall = time.perf_counter() - t0
    keys = [",".join(str(r[k]) for k in space.keys) for r in res]
    return keys, wall


_SPACES = {}


def _init(args):
    global _SPACES
    _SPACES = {s.name: s for s in make_spaces(args)}


def _task(t):
    tool, sname, strategy, seed, args = t
    sp = _SPACES[sname]
    if tool == "amk":
        keys, wall = run_amk(sp, Path(args.work) / "specs" / sp.kernel, args.amk, strategy, seed,
                             Path(args.work))
    else:
        keys, wall = run_kt(sp, strategy, seed)
    curve, spent, n = sp.curve(keys)
    return tool, sname, strategy, seed, sp.standardise(curve).tolist(), spent, n, wall


def _keys_task(t):
    tool, sname, strategy, seed, args = t
    sp = _SPACES[sname]
    if tool == "amk":
        keys, _ = run_amk(sp, Path(args.work) / "specs" / sp.kernel, args.amk, strategy, seed,
                          Path(args.work))
    else:
        keys, _ = run_kt(sp, strategy, seed)
    return tool, strategy, seed, keys


def check_package(sp, tasks, args):
    """Scores the same runs of each strategy on one space both ways: this script's (mean of
    the per-seed step curves) and the package's own curve machinery (Space.package_score)."""
    runs = {}
    with mp.Pool(args.jobs, initializer=_init, initargs=(args,)) as pool:
        for tool, strat, seed, keys in pool.imap_unordered(_keys_task, tasks, chunksize=1):
            runs.setdefault((tool, strat), {})[seed] = keys
    print(f"{sp.name}, {args.seeds} seeds; the package's time range: {sp.t_start:.1f} .. "
          f"{sp.package_range[-1]:.1f} s; this script's: .. {sp.t_end:.1f} s (+10 % margin)")
    print("| strategy | script (its range) | script (package's range) | "
          "script in ranks (package's range) | package (5 bootstrap draws) | "
          "package - script (same range) |"
          "\n|---|---|---|---|---|---|")
    for (tool, strat), by_seed in sorted(runs.items()):
        seeds = [by_seed[k] for k in sorted(by_seed)]
        mine = np.mean([np.mean(sp.standardise(sp.curve(k)[0])) for k in seeds])
        same = np.mean([np.mean(sp.standardise(sp.curve(k, sp.package_range)[0],
                                               sp.package_range)) for k in seeds])
        # the package's curve is a bagged isotonic fit (scikit-learn's BaggingRegressor,
        # unseeded there): seed it, and show its spread over 5 bootstrap draws
        pkgs = []
        for draw in range(5):
            np.random.seed(draw)
            pkgs.append(sp.package_score(f"{tool} {strat}", seeds))
        pkg = float(np.mean(pkgs))
        # the package averages ranks in the space's sorted times, not times: the mean of
        # the per-seed step curves taken in ranks shows how much of the difference that is
        dist = sp.stats.objective_performances_total_sorted
        ranks = np.mean([np.searchsorted(dist, sp.curve(k, sp.package_range)[0])
                         for k in seeds], axis=0)
        by_rank = np.mean(sp.standardise(dist[np.clip(np.round(ranks).astype(int), 0,
                                                      len(dist) - 1)], sp.package_range))
        print(f"| {tool} {strat} | {mine:.3f} | {same:.3f} | {by_rank:.3f} | "
              f"{pkg:.3f} ± {np.std(pkgs):.3f} | "
              f"{pkg - same:+.3f} |")


def make_spaces(args):
    hub = Path(args.hub)
    pairs = []
    for d in sorted((hub / "cachefiles").iterdir()):
        for f in sorted(d.glob("*.json.gz")):
            gpu = f.name[:-len(".json.gz")]
            if gpu.endswith("_T4"):
                continue  # the same measurements as the cachefile beside it
            pairs.append((d.name, gpu))
    if args.quick:
        pairs = pairs[:1]
    if args.check_package:
        pairs = [p for p in pairs if "/".join(p) == args.check_package]
        if not pairs:
            sys.exit(f"--check-package: no cachefile for {args.check_package} in {hub}")
    return [Space(k, g, hub, Path(args.work)) for k, g in pairs]


# ---------- report ---------------------------------------------------------------------------

def report(spaces, results, args, timing):
    from collections import defaultdict
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    strategies = [("amk", s) for s in args.amk_strategies] + \
        [("kt", s) for s in args.kt_strategies]
    score = defaultdict(dict)  # (tool, strategy) -> space -> seed -> score
    curves = defaultdict(dict)
    for tool, sname, strat, seed, std, spent, n, wall in results:
        score[(tool, strat)].setdefault(sname, {})[seed] = float(np.mean(std))
        curves[(tool, strat)].setdefault(sname, []).append(std)
    names = [s.name for s in spaces]
    label = lambda ts: (f"amk {ts[1]}" + (" (default)" if ts[1] == AMK_DEFAULT else "")
                        if ts[0] == "amk" else f"KT {ts[1]}")
    rows = []
    for ts in strategies:
        per = []
        for n_ in names:
            v = np.array(list(score[ts][n_].values()))
            per.append((v.mean(), v.std()))
        agg_seeds = np.mean([[score[ts][n_][s] for s in sorted(score[ts][n_])] for n_ in names],
                            axis=0)
        rows.append((ts, per, agg_seeds.mean(), agg_seeds.std()))
    rows.sort(key=lambda r: -r[2])
    lines = ["| strategy | " + " | ".join(names) + " | aggregate |",
             "|---" * (len(names) + 2) + "|"]
    for ts, per, m, s in rows:
        cells = [f"{a:.3f} ± {b:.3f}" for a, b in per]
        lines.append(f"| {label(ts)} | " + " | ".join(cells) + f" | **{m:.3f}** ± {s:.3f} |")
    budget = ["| space | configs | optimum (ms) | budget (s of recorded time) | "
              "calculated random search evaluations in budget |", "|---|---|---|---|---|"]
    for sp in spaces:
        fe = sp.baseline.time_to_fevals(np.array([sp.t_end]))[0]
        budget.append(f"| {sp.name} | {len(sp.value)} | {sp.optimum:.4g} | "
                      f"{sp.t_end:.0f} | {fe} |")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = "\n".join(lines)
    (out / "table.md").write_text(
        table + "\n\nScore: mean over the budget of the best-so-far curve standardised between "
        "the calculated random search (0) and the optimum (1); mean ± standard deviation over "
        f"{args.seeds} seeds; aggregate = mean over the spaces.\n\n" + "\n".join(budget) +
        "\n\n" + timing + "\n")
    (out / "scores.json").write_text(json.dumps(
        {label(ts): {n_: score[ts][n_] for n_ in names} for ts in strategies}, indent=1))

    fig, axes = plt.subplots(1, len(names) + 1, figsize=(4.2 * (len(names) + 1), 4.2),
                             sharey=True, squeeze=False)
    axes = axes[0]
    x = np.linspace(0, 1, RESOLUTION)
    top = [r[0] for r in rows[:6]] + [r[0] for r in rows if r[0] == ("amk", AMK_DEFAULT)] + \
        [r[0] for r in rows if r[0][1] in ("random_sample", "random")]
    seen = []
    for ts in [t for t in top if not (t in seen or seen.append(t))]:
        style = "-" if ts[0] == "amk" else "--"
        per_space = [np.mean(curves[ts][n_], axis=0) for n_ in names]
        for ax, c in zip(axes, per_space):
            ax.plot(x, c, style, label=label(ts), lw=1.4)
        axes[-1].plot(x, np.mean(per_space, axis=0), style, label=label(ts), lw=1.4)
    for ax, n_ in zip(axes, names + ["aggregate"]):
        ax.set_title(n_, fontsize=9)
        ax.set_xlabel("fraction of the time budget")
        ax.axhline(0, color="grey", lw=0.6)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("standardised best-so-far (0 random, 1 optimum)")
    axes[-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "curves.png", dpi=110)
    fig.savefig(out / "curves.svg")
    print(table)
    print(f"wrote {out / 'table.md'}, {out / 'curves.png'}, {out / 'curves.svg'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--amk", required=True, help="the amk binary")
    ap.add_argument("--hub", required=True, help="space_defs/data/benchmark_hub")
    ap.add_argument("--work", required=True, help="scratch folder (imported specs, runs)")
    ap.add_argument("--out", required=True, help="where table.md and curves.png go")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1,
                    help="seeds are FIRST..FIRST+SEEDS-1 (other seeds check that a result is "
                    "not an accident of seeds 1..20)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--amk-strategies", default=",".join(AMK_STRATEGIES),
                    help="comma-separated (default: %(default)s)")
    ap.add_argument("--kt-strategies", default=",".join(KT_STRATEGIES),
                    help="comma-separated; empty = none (default: all eleven)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: the first space, 2 seeds, 3 Kernel Tuner strategies")
    ap.add_argument("--check-package", metavar="SPACE/GPU",
                    help="score the runs of the chosen strategies on this one space (e.g. "
                    "convolution_milo/MI250X) both this script's way and with the package's "
                    "own curve estimator, print both and their difference, write nothing")
    args = ap.parse_args()
    args.amk_strategies = [x for x in args.amk_strategies.split(",") if x]
    args.kt_strategies = [x for x in args.kt_strategies.split(",") if x]
    if args.quick:
        args.seeds = min(args.seeds, 2)
        args.kt_strategies = ["random_sample", "genetic_algorithm", "greedy_ils"]
    t0 = time.perf_counter()
    spaces = make_spaces(args)
    for sp in spaces:
        sd = Path(args.work) / "specs" / sp.kernel
        sd.parent.mkdir(parents=True, exist_ok=True)
        if not (sd / "spec.json").exists():
            subprocess.run([args.amk, "--quiet", "import", str(sp.t1), "-o", str(sd)],
                           check=True, stdout=subprocess.DEVNULL)
    tasks = [(tool, sp.name, s, seed, args)
             for sp in spaces
             for tool, strats in (("amk", args.amk_strategies), ("kt", args.kt_strategies))
             for s in strats for seed in range(args.first_seed, args.first_seed + args.seeds)]
    random.Random(0).shuffle(tasks)  # mix slow and fast tasks over the workers
    if args.check_package:
        check_package(spaces[0], tasks, args)
        return
    results = []
    with mp.Pool(args.jobs, initializer=_init, initargs=(args,)) as pool:
        for i, r in enumerate(pool.imap_unordered(_task, tasks, chunksize=1)):
            results.append(r)
            if (i + 1) % 50 == 0 or i + 1 == len(tasks):
                print(f"  {i + 1}/{len(tasks)} runs, {time.perf_counter() - t0:.0f} s",
                      file=sys.stderr, flush=True)
    wall = {}
    for tool, _, strat, _, _, _, _, w in results:
        wall.setdefault(f"{tool} {strat}", []).append(w)
    timing = (f"Bench wall time: {time.perf_counter() - t0:.0f} s on {args.jobs} worker(s), "
              f"{len(tasks)} runs. Mean wall time per run: " +
              ", ".join(f"{k} {np.mean(v):.2f} s" for k, v in sorted(wall.items())) + ".")
    report(spaces, results, args, timing)
    print(timing)


if __name__ == "__main__":
    main()

"""The package's estimator in ranks, seed by seed: development variants of evolve compared
the way autotuning-methodology scores them, with a confidence interval.

The package maps every best-so-far value to its rank in the space's sorted times, fits its
isotonic curve to those ranks pooled over the runs, and maps the fit back to times
(curves.py, get_curve_over_time). On convolution_milo/H200 that rank averaging, not the
pooling, is what separates its score from the bench's time score (README.md). So a variant
is judged here by the bench's check-package column "script in ranks": the per-seed step
curves over the package's time range, their ranks averaged over the seeds, mapped back and
standardised. The difference between two variants gets a paired bootstrap over the seeds
(300 resamples, 95 %); beside it, the time score's difference (mean ± 1.96 s.e.).

    ranks.py compare PAIRS NAME=[ENV:VALUE,...] NAME2=[ENV:VALUE,...] ...
        the first NAME is the base; e.g. k0= pend0=AMK_K_PLAT_END:0
    ranks.py trace PAIR NAME
        the rank of each seed's best-so-far at 2, 5, 10, 20, 30, 50, 80 % of the package's
        time range, and adaptive_tabu_greywolf's from KTC (the same seeds, those cached)
env: AMK (a knob build of knobs.diff), SEEDS (40), FIRST (501), HUB (/tmp/dev-hub/cachefiles,
made by search-quality-2026-11-28-b/dev.sh), SPECS (a dev.sh output's work/specs),
WORK (/tmp/ranks: the runs, kept), KTC (Kernel Tuner's run cache, for trace).
Run with the bench's venv (build/bench-venv/bin/python)."""
import glob
import json
import os
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
import search_vs_kerneltuner as B  # noqa: E402

AMK = os.environ.get("AMK", str(ROOT / "build/amk"))
FIRST = int(os.environ.get("FIRST", "501"))
NSEEDS = int(os.environ.get("SEEDS", "40"))
HUB = os.environ.get("HUB", "/tmp/dev-hub/cachefiles")
SPECS = os.environ.get("SPECS", "/tmp/dev-main/work/specs")
WORK = Path(os.environ.get("WORK", "/tmp/ranks"))
KTC = os.environ.get("KTC", "/tmp/s20/ktc")


def space(pair):
    k, g = pair.split("/")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return B.Space(k, g, f"{HUB}/{k}/{g}.json.gz",
                       str(ROOT / f"space_defs/data/benchmark_hub/spaces/{k}.json"), WORK)


def run(sp, name, env, seed):
    """The config keys of one time-limited run, as the bench's time run makes it."""
    tsv = WORK / f"{sp.kernel}-{sp.gpu}-{name}-{seed}.tsv"
    if not tsv.exists():
        subprocess.run([AMK, "--quiet", "loop", sp.kernel, "--spec-dir", f"{SPECS}/{sp.kernel}",
                        "--backend", f"sim:{sp.sim_file}", "--strategy", "evolve",
                        "--seed", str(seed), "--time", f"{sp.t_end * 1.2:.3f}s", "--budget", "0",
                        "--results", f"{tsv}.tmp", "--best", "/dev/null"],
                       check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **env))
        os.rename(f"{tsv}.tmp", tsv)
    return B.read_rows(tsv, sp)[0]


def ranks_of(sp, keys):
    dist = sp.stats.objective_performances_total_sorted
    return np.searchsorted(dist, sp.curve(keys, sp.package_range)[0])


def rank_score(sp, ranks):
    """The seeds' ranks averaged, mapped back to times, standardised, averaged over time."""
    dist = sp.stats.objective_performances_total_sorted
    mean = np.clip(np.round(np.mean(ranks, axis=0)).astype(int), 0, len(dist) - 1)
    return float(np.mean(sp.standardise(dist[mean], sp.package_range)))


def compare(pairs, variants):
    seeds = range(FIRST, FIRST + NSEEDS)
    rng = np.random.default_rng(0)
    for pair in pairs.split(","):
        sp = space(pair)
        R, T = {}, {}
        for name, env in variants:
            with ThreadPoolExecutor(2) as ex:
                runs = list(ex.map(lambda s: run(sp, name, env, s), seeds))
            R[name] = np.array([ranks_of(sp, k) for k in runs])
            T[name] = np.array([np.mean(sp.standardise(sp.curve(k, sp.package_range)[0],
                                                       sp.package_range)) for k in runs])
        base = variants[0][0]
        out = [f"{pair}: {base} ranks {rank_score(sp, R[base]):.3f} time {T[base].mean():.3f}"]
        for name, _ in variants[1:]:
            d = rank_score(sp, R[name]) - rank_score(sp, R[base])
            boot = []
            for _ in range(300):
                i = rng.integers(0, NSEEDS, NSEEDS)
                boot.append(rank_score(sp, R[name][i]) - rank_score(sp, R[base][i]))
            lo, hi = np.percentile(boot, [2.5, 97.5])
            dt = T[name] - T[base]
            out.append(f"| {name}: ranks {d:+.3f} [{lo:+.3f}, {hi:+.3f}] time {dt.mean():+.3f} "
                       f"± {1.96 * dt.std(ddof=1) / np.sqrt(NSEEDS):.3f}")
        print(" ".join(out), flush=True)


def trace(pair, name):
    sp = space(pair)
    at = [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8]
    idx = [int(f * (len(sp.package_range) - 1)) for f in at]
    print(f"{pair}: {len(sp.stats.objective_performances_total_sorted)} ranks; package range "
          f"{sp.package_range[0]:.2f}-{sp.package_range[-1]:.2f} s; columns at "
          + ", ".join(f"{f:.0%}" for f in at))

    def show(label, runs):
        rows = [ranks_of(sp, k) for _, k in runs]
        for (seed, _), r in zip(runs, rows):
            print(f"{label} {seed:4d} " + " ".join(f"{r[i]:5d}" for i in idx))
        m = np.mean(rows, axis=0)
        print(f"{label} mean " + " ".join(f"{m[i]:5.0f}" for i in idx))

    amk = [(s, run(sp, name, {}, s)) for s in range(FIRST, FIRST + NSEEDS)]
    show("amk", amk)
    amk_rows = [ranks_of(sp, k) for _, k in amk]
    kt = []
    for s in range(FIRST, FIRST + NSEEDS):
        f = glob.glob(f"{KTC}/{sp.kernel}/{sp.gpu}/*/kt1.5.0-adaptive_tabu_greywolf-{s}-rc.json")
        if f:
            kt.append((s, json.load(open(f[0]))["time"]))
    if kt:
        show("atgw", kt)
    for label, rows in (("amk", amk_rows), ("atgw", [ranks_of(sp, k) for _, k in kt])):
        if rows:
            print(f"{label}: share of seeds above rank 300 / at or below rank 30 at each column: "
                  + " ".join(f"{np.mean([r[i] > 300 for r in rows]):.2f}/"
                             f"{np.mean([r[i] <= 30 for r in rows]):.2f}" for i in idx))


def main():
    WORK.mkdir(parents=True, exist_ok=True)
    if len(sys.argv) >= 4 and sys.argv[1] == "compare":
        variants = []
        for a in sys.argv[3:]:
            name, _, envs = a.partition("=")
            variants.append((name, dict(e.split(":", 1) for e in envs.split(",") if e)))
        compare(sys.argv[2], variants)
    elif len(sys.argv) == 4 and sys.argv[1] == "trace":
        trace(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


main()

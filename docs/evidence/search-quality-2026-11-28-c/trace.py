"""Traces of evolve on the development pairs: best ÷ optimum after 10, 15, 20 and 28 trials
(range over seeds, median), and in how many seeds the walk is less than 8 % below the
Default at half its solo trials (the plateau rule's check). Runs `amk loop` on each
cachefile at the bench's time limit, as the bench's time run does.
    python trace.py [PAIRS]   (comma-separated; default: every pair of DEV's budgets.json)
env: AMK (build/amk), DEV (/tmp/dev-main: a dev.sh output, for its budgets.json and specs),
HUB (/tmp/dev-hub/cachefiles: made by dev.sh), FIRST (501), SEEDS (20), OUTD (/tmp/trace)."""
import gzip
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

AMK = os.environ.get("AMK", "build/amk")
DEV = os.environ.get("DEV", "/tmp/dev-main")
HUB = os.environ.get("HUB", "/tmp/dev-hub/cachefiles")
OUTD = os.environ.get("OUTD", "/tmp/trace")
FIRST = int(os.environ.get("FIRST", "501"))
SEEDS = range(FIRST, FIRST + int(os.environ.get("SEEDS", "20")))
budgets = json.load(open(f"{DEV}/budgets.json"))
pairs = sys.argv[1].split(",") if len(sys.argv) > 1 else list(budgets)


def run(pair, seed):
    """The latencies of one run's trials, in order (NaN: failed)."""
    k, g = pair.split("/")
    tsv = f"{OUTD}/{k}-{g}-{seed}.tsv"
    if not os.path.exists(tsv):
        subprocess.run([AMK, "--quiet", "loop", k, "--spec-dir", f"{DEV}/work/specs/{k}",
                        "--backend", f"sim:{HUB}/{k}/{g}.json.gz", "--strategy", "evolve",
                        "--seed", str(seed), "--time", f"{budgets[pair]['t_end'] * 1.2:.3f}s",
                        "--budget", "0", "--results", tsv + ".tmp", "--best", "/dev/null"],
                       check=True, stdout=subprocess.DEVNULL)
        os.rename(tsv + ".tmp", tsv)
    lat = []
    for line in open(tsv):
        if line.startswith(("#", "trial\t")):
            continue
        f = line.rstrip("\n").split("\t")
        lat.append(float(f[8]) if f[7] == "ok" else math.nan)
    return lat


def optimum_us(pair):
    k, g = pair.split("/")
    cache = json.load(gzip.open(f"{HUB}/{k}/{g}.json.gz"))["cache"]
    return 1000 * min(v["time"] for v in cache.values()
                      if isinstance(v.get("time"), (int, float)) and v["time"] > 0)


def main():
    os.makedirs(OUTD, exist_ok=True)
    jobs = [(p, s) for p in pairs for s in SEEDS]
    with ThreadPoolExecutor(2) as ex:
        runs = list(ex.map(lambda a: (a[0], run(*a)), jobs))
    for pair in pairs:
        opt = optimum_us(pair)
        curves = []
        for p, lat in runs:
            if p != pair:
                continue
            best, curve = math.inf, []
            for x in lat:
                best = min(best, x) if x == x else best
                curve.append(best / opt)
            curves.append(curve)
        cells = []
        for t in (10, 15, 20, 28):
            v = sorted(c[t - 1] for c in curves if len(c) >= t)
            if v:
                cells.append(f"{t}: {v[0]:.2f}-{v[-1]:.2f} ({v[len(v) // 2]:.2f})")
        n = len(json.load(open(f"{DEV}/work/specs/{pair.split('/')[0]}/spec.json"))["params"])
        half = (2 * n + 8) // 2
        fires = sum(1 for c in curves if len(c) >= half and c[half - 1] > 0.92 * c[0])
        print(f"{pair}: Default {curves[0][0]:.3f} | " + " | ".join(cells) +
              f" | gain < 8 % after {half}: {fires} of {len(curves)}")


main()

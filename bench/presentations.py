#!/usr/bin/env python3
"""Two runs of bench/search_vs_kerneltuner.sh on the same pairs and seeds, one with the T1
spaces as written and one with --values-reversed, side by side: each strategy's scores in
both presentations of a space and their mean, and the issue's per-pair target read against
the Kernel Tuner strategy best on the package's estimator in the mean of the two. A strategy
that reads the order a file lists its values (Kernel Tuner 1.5's diff_evo evaluates its
Latin hypercube sample in the space's order) scores by luck of that order in one of them;
the mean takes both.

usage: bench/presentations.py AS_WRITTEN/scores.json REVERSED/scores.json > table.md
"""
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search_vs_kerneltuner as bench  # noqa: E402  (the target's rule, not a copy of it)

AMK = f"amk {bench.AMK_DEFAULT} (default)"


def mean(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan


def load(path):
    d = json.loads(open(path).read())
    if d.get("values_reversed") is None:
        sys.exit(f"{path}: not a scores.json of bench/search_vs_kerneltuner.py (no "
                 "values_reversed key: made before --values-reversed existed)")
    return d


def at200(d, strategy, pair):
    runs = d["handed_back_over_optimum"].get(strategy, {}).get(pair) or []
    return mean([r.get("200") for r in runs])


def fmt(x):
    return "–" if x is None or math.isnan(x) else f"{x:.3f}"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    fwd, rev = load(sys.argv[1]), load(sys.argv[2])
    if fwd["values_reversed"] or not rev["values_reversed"]:
        sys.exit("give the run as written first, then the --values-reversed run")
    pairs = [p for p in fwd["time_score"][AMK] if p in rev["time_score"].get(AMK, {})]
    strategies = [s for s in fwd["time_score"] if s in rev["time_score"]]
    both = {}  # (strategy, pair) -> (package fwd, rev, mean; time fwd, rev, mean; 200 ...)
    for s in strategies:
        for p in pairs:
            row = []
            for key in ("package_score", "time_score"):
                a, b = (d[key].get(s, {}).get(p) for d in (fwd, rev))
                if key == "time_score":  # per seed: the mean over seeds
                    a, b = (mean(x.values()) if x else math.nan for x in (a, b))
                a, b = (math.nan if x is None else x for x in (a, b))
                row += [a, b, (a + b) / 2]
            a, b = at200(fwd, s, p), at200(rev, s, p)
            row += [a, b, (a + b) / 2]
            both[(s, p)] = row
    out = ["Package's estimator / time score (mean over seeds) / best ÷ optimum handed back "
           "at 200 evaluations, each as written | values reversed | their mean:", ""]
    for p in pairs:
        out += [f"**{p}**", "", "| strategy | package | time score | at 200 |", "|---|---|---|---|"]
        for s in sorted(strategies, key=lambda s: -both[(s, p)][2]
                        if not math.isnan(both[(s, p)][2]) else math.inf):
            r = both[(s, p)]
            out.append(f"| {s} | " + " | ".join(
                f"{fmt(r[i])} / {fmt(r[i + 1])} / **{fmt(r[i + 2])}**" for i in (0, 3, 6)) + " |")
        out.append("")
    # which strategies' time scores move with the presentation beyond their seeds' noise
    moved, tests = [], 0
    for p in pairs:
        for s in strategies:
            a, b = (d["time_score"][s].get(p) or {} for d in (fwd, rev))
            if len(a) < 2 or len(b) < 2:
                continue
            tests += 1
            dd, lo, hi = bench.welch(list(b.values()), list(a.values()))
            if lo > 0 or hi < 0:
                moved.append(f"| {p} | {s} | {fmt(both[(s, p)][3])} | {fmt(both[(s, p)][4])} | "
                             f"{dd:+.3f} [{lo:+.3f}, {hi:+.3f}] |")
    out += [f"Time scores that move between the presentations beyond noise (reversed − as "
            f"written, Welch 95 % interval excluding 0; {len(moved)} of {tests} tests, of which "
            f"about {0.05 * tests:.0f} would by chance alone):", "",
            "| pair | strategy | as written | reversed | difference [95 %] |", "|---|---|---|---|---|",
            *moved, ""]
    # the per-pair target, by the bench's own rule, on the means of the two presentations
    ts_of = {lab: ("amk", lab.split()[1]) if lab.startswith("amk ") else ("kt", lab[3:])
             for lab in strategies}
    label = {ts: lab for lab, ts in ts_of.items()}.get
    # a strategy without a package estimate on a pair is never the best there
    pkg = {(ts_of[s], p): -math.inf if math.isnan(both[(s, p)][2]) else both[(s, p)][2]
           for s in strategies for p in pairs}
    sd = {(ts_of[s], p): math.hypot(*(d["package_score_draws_sd"][s][p] or 0.0
                                      for d in (fwd, rev))) / 2
          for s in strategies for p in pairs}
    hand = {ts_of[s]: {p: [{int(k): v for k, v in r.items()} for d in (fwd, rev)
                           for r in d["handed_back_over_optimum"][s][p]] for p in pairs}
            for s in strategies}
    low = {(ts_of[s], p): any(p in d.get("time_score_upper_bound", {}).get(s, {})
                              for d in (fwd, rev)) for s in strategies for p in pairs}
    text, _ = bench.target_as_written(pairs, pkg, sd, hand, low, list(ts_of.values()), label)
    out += ["The issue's per-pair target as written, read on the means of the two "
            "presentations (package's estimator: the mean of the two, ± the sd of that mean "
            "over the draws; at 200: the mean over both presentations' seeds):", "", text]
    print("\n".join(out))


if __name__ == "__main__":
    main()

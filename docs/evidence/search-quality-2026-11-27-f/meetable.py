"""How often would a fresh set of 20 seeds meet issue 25's per-pair target, read on the
per-seed scores of a scoring run (scores.json)?  For each pair and each score (the time
score, higher is better; best / optimum at 200 evaluations, lower is better):

- observed: amk's mean against the best Kernel Tuner mean there;
- P(met): the share of bootstrap replicates (seeds resampled with replacement, each
  strategy on its own) in which amk's mean is at least as good as every Kernel Tuner
  strategy's mean;
- P(met | equal): the same with amk replaced by a strategy distributed exactly as the best
  Kernel Tuner strategy of the pair (its own seeds resampled): what the target gives a
  strategy that is as good as the best, not better (the selection effect of comparing one
  mean with the best of 13).
"All pairs" is the share of replicates in which every pair is met at once.
    python3 meetable.py SCORES.json [B] [SEED]"""
import json, sys
import numpy as np

d = json.load(open(sys.argv[1]))
B = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
AMK = "amk evolve (default)"


def per_seed(key, name, pair, sign):
    v = d[key][name][pair]
    if key == "time_score":
        x = np.array([v[s] for s in sorted(v, key=int)], float)
    else:
        x = np.array([r["200"] for r in v], float)
    return sign * x[np.isfinite(x)]


def boot_mean(x, b):
    return x[rng.integers(0, len(x), (b, len(x)))].mean(axis=1)


for key, sign, label in (("time_score", 1, "time score"),
                         ("handed_back_over_optimum", -1, "best / optimum at 200")):
    pairs = list(d[key][AMK])
    kts = [n for n in d[key] if n.startswith("KT ")]
    met_all = np.ones(B, bool)
    eq_all = np.ones(B, bool)
    print(f"\n{label} (B = {B})\n")
    print("| pair | amk | best Kernel Tuner | P(met) | P(met given equal to it) |")
    print("|---|---|---|---|---|")
    for p in pairs:
        a = per_seed(key, AMK, p, sign)
        ks = {n: per_seed(key, n, p, sign) for n in kts if p in d[key][n]}
        ks = {n: x for n, x in ks.items() if len(x)}
        best = max(ks, key=lambda n: ks[n].mean())
        kmax = np.max([boot_mean(x, B) for x in ks.values()], axis=0)
        met = boot_mean(a, B) >= kmax - 1e-12
        eq = boot_mean(ks[best], B) >= kmax - 1e-12
        met_all &= met
        eq_all &= eq
        print(f"| {p} | {sign * a.mean():.3f} | {sign * ks[best].mean():.3f} {best[3:]} | "
              f"{met.mean():.2f} | {eq.mean():.2f} |")
    print(f"| all pairs at once | | | {met_all.mean():.3f} | {eq_all.mean():.3f} |")

"""Per pair: amk's default against the best Kernel Tuner strategy, on the time budget (mean of
the per-seed scores, and the package's estimator) and at 200 evaluations handed back, from a
scores.json of bench/search_vs_kerneltuner.py. A strategy marked † in its table.md (a lower
bound: 200-evaluation runs that end before the budget) counts as a loss only where even its
lower bound is above amk's; elsewhere the pair is "open" for it.
    python3 per_pair.py SCORES.json [DEFAULT_LABEL] [HELD_OUT_PAIRS]"""
import json
import sys

import numpy as np

d = json.load(open(sys.argv[1]))
me = sys.argv[2] if len(sys.argv) > 2 else "amk evolve (default)"
held = (sys.argv[3] if len(sys.argv) > 3 else "").split(",")
ts, pk, hb, cov = d["time_score"], d["package_score"], d["handed_back_over_optimum"], \
    d.get("budget_covered", {})
pairs = list(ts[me])
kt = [s for s in ts if s.startswith("KT ")]


def mean(x):
    return float(np.mean(list(x.values()) if isinstance(x, dict) else x))


def h200(s, p):
    return float(np.nanmean([h["200"] if "200" in h else h[200] for h in hb[s][p]]))


def lower(s, p):
    return s in cov and min(cov[s][p]) < 1.0


print("| pair | amk time | best KT time (exact) | KT lower bounds above amk | amk package | "
      "best KT package | amk at 200 | best KT at 200 |")
print("|---|---|---|---|---|---|---|---|")
loss_t, loss_p, loss_e, open_ = [], [], [], []
for p in pairs:
    mt = mean(ts[me][p])
    exact = [(mean(ts[s][p]), s) for s in kt if not lower(s, p)]
    bt = max(exact)
    lb = [(mean(ts[s][p]), s) for s in kt if lower(s, p) and mean(ts[s][p]) > mt]
    mp = pk[me][p]
    bp = max((pk[s][p], s) for s in kt if pk[s][p] is not None and not lower(s, p))
    me200 = h200(me, p)
    b200 = min((h200(s, p), s) for s in kt if not np.isnan(h200(s, p)))
    name = p + (" (held-out)" if p in held else "")
    print(f"| {name} | {mt:.3f} | {bt[0]:.3f} {bt[1][3:]} | " +
          (", ".join(f"{v:.3f} {s[3:].split(' ')[0]}" for v, s in lb) or "-") +
          f" | {mp:.3f} | {bp[0]:.3f} {bp[1][3:]} | {me200:.3f} | {b200[0]:.3f} {b200[1][3:].split(' ')[0]} |")
    if bt[0] > mt or lb:
        loss_t.append(p)
    if bp[0] > mp:
        loss_p.append(p)
    if b200[0] < me200:
        loss_e.append(p)
    if any(lower(s, p) for s in kt):
        open_.append(p)
print(f"\n{me} loses on the time score (mean of seeds; exact or a lower bound above it): "
      f"{len(loss_t)} of {len(pairs)}: {', '.join(loss_t) or 'none'}")
print(f"loses on the package's estimator (exact strategies): {len(loss_p)}: "
      f"{', '.join(loss_p) or 'none'}")
print(f"loses at 200 evaluations handed back: {len(loss_e)}: {', '.join(loss_e) or 'none'}")
print(f"pairs where a lower-bound strategy is below amk (not decided): {len(open_)}")

# aggregates over the held-out and the other pairs (per-seed mean over the pairs, mean ± sd)
if held != [""]:
    print("\n| strategy | time, held-out pairs | time, development pairs | package, held-out | "
          "package, development | at 200, held-out | at 200, development |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for s in ts:
        out = []
        for group in ([p for p in pairs if p in held], [p for p in pairs if p not in held]):
            seeds = sorted(set.intersection(*[set(ts[s][p]) for p in group]))
            agg = np.mean([[ts[s][p][k] for k in seeds] for p in group], axis=0)
            out.append((agg.mean(), agg.std(), np.mean([pk[s][p] for p in group]),
                        np.mean([h200(s, p) for p in group]),
                        any(lower(s, p) for p in group)))
        rows.append((out[0][0], s, out))
    for _, s, out in sorted(rows, reverse=True):
        (h, hs, hp, he, hl), (dv, ds, dp, de, dl) = out
        print(f"| {s} | {h:.3f} ± {hs:.3f}{'†' if hl else ''} | {dv:.3f} ± {ds:.3f}"
              f"{'†' if dl else ''} | {hp:.3f} | {dp:.3f} | {he:.3f} | {de:.3f} |")

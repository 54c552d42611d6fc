"""Per pair: amk evolve before (docs/evidence/search-quality-2026-11-25-b/scores-time.json)
and after this change (scores-time.json here): time score (mean ± sd over seeds), the
package's estimator, best / optimum handed back after 100 and 200 evaluations.
python3 compare.py BEFORE.json AFTER.json"""
import json, statistics, sys

S = "amk evolve (default)"
HELD = {"convolution_milo/A4000", "convolution_milo/A6000", "convolution_milo/W7800",
        "dedispersion_milo/A4000", "dedispersion_milo/A6000", "dedispersion_milo/W6600",
        "dedispersion_milo/W7800"}
b, a = (json.load(open(f)) for f in sys.argv[1:3])


def row(d, p):
    t = list(d["time_score"][S][p].values())
    hb = d["handed_back_over_optimum"][S][p]
    at = lambda n: statistics.mean(h[str(n)] for h in hb)
    return statistics.mean(t), statistics.pstdev(t), d["package_score"][S][p], at(100), at(200)


pairs = sorted(a["time_score"][S], key=lambda p: (p in HELD, p))
print("| pair | time before | time after | package before | package after "
      "| at 100 before | at 100 after | at 200 before | at 200 after |")
print("|---|---|---|---|---|---|---|---|---|")
agg = {}
for p in pairs:
    rb, ra = row(b, p), row(a, p)
    name = f"**{p}** (held-out)" if p in HELD else p
    print(f"| {name} | {rb[0]:.3f} ± {rb[1]:.3f} | {ra[0]:.3f} ± {ra[1]:.3f} | {rb[2]:.3f} | "
          f"{ra[2]:.3f} | {rb[3]:.3f} | {ra[3]:.3f} | {rb[4]:.3f} | {ra[4]:.3f} |")
    for k, r in (("before", rb), ("after", ra)):
        agg.setdefault((k, p in HELD), []).append(r)
for held, name in ((False, "mean, 5 development"), (True, "mean, 7 held-out")):
    rb, ra = agg[("before", held)], agg[("after", held)]
    m = lambda rs, i: statistics.mean(r[i] for r in rs)
    print(f"| {name} | {m(rb, 0):.3f} | {m(ra, 0):.3f} | {m(rb, 2):.3f} | {m(ra, 2):.3f} | "
          f"{m(rb, 3):.3f} | {m(ra, 3):.3f} | {m(rb, 4):.3f} | {m(ra, 4):.3f} |")

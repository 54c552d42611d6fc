"""Development landscapes where the Default is a poor local optimum (issue 25): copies of
benchmark_hub's convolution_milo space whose T1 Default is, on the development A100
cachefile, slower than 30-65 % of the space with no faster config one step (one param to a
neighbouring value) away. Chosen from the development cachefiles alone.
    python3 make_locopt_hubs.py HUB CACHEFILES OUT   # writes OUT/hub4..6"""
import gzip, json, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "search-quality-2026-11-27-b"))
from make_proxy_hubs import write_hub  # noqa: E402

hub, cdir, out = sys.argv[1:4]
t1 = json.load(open(f"{hub}/spaces/convolution_milo.json"))
params = t1["ConfigurationSpace"]["TuningParameters"]
values = [eval(p["Values"]) for p in params]
cache = json.load(gzip.open(f"{cdir}/convolution_milo/A100.json.gz"))
keys = cache["tune_params_keys"]
assert keys == [p["Name"] for p in params]
t = {tuple(v[k] for k in keys): v["time"] for v in cache["cache"].values()
     if isinstance(v.get("time"), (int, float)) and v["time"] < 1e20}
order = sorted(t.values())
def rank(c): return sum(x < t[c] for x in order) / len(order)
def steps(c):
    for i, vs in enumerate(values):
        j = vs.index(c[i])
        for jj in (j - 1, j + 1):
            if 0 <= jj < len(vs):
                yield c[:i] + (vs[jj],) + c[i + 1:]
loc = sorted(c for c in t if 0.30 < rank(c) < 0.65 and all(t[n] >= t[c] for n in steps(c) if n in t))
random.seed(13)
for i, key in enumerate(random.sample(loc, 3), 4):
    write_hub(hub, cdir, f"{out}/hub{i}", key)
    print(f"hub{i}: Default {key}, A100 rank {rank(key):.2f}, {t[key] / order[0]:.2f} x optimum")

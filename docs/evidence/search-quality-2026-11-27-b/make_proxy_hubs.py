"""Development landscapes with a mediocre Default (issue 25): copies of benchmark_hub's
convolution_milo space whose T1 Default is a config ranked between the 35th and 65th
percentile on every development GPU (A100, MI250X, W6600), the way the T1 Default sits on
the held-out NVIDIA GPUs (40-54 %), chosen from the development cachefiles alone.
    python3 make_proxy_hubs.py HUB CACHEFILES OUT   # writes OUT/hub1..3 (spaces/, cachefiles/)
HUB: space_defs/data/benchmark_hub; CACHEFILES: the development cachefiles/ folder. The
bench prefers the spaces/ beside --cachefiles, so each hubN holds both."""
import gzip, json, os, random, sys


def write_hub(hub, cdir, d, default, kernel="convolution_milo"):
    """A copy of the hub in d: kernel's T1 file with `default` (its values in the T1 order)
    as the Default, every other file a symlink."""
    os.makedirs(f"{d}/spaces", exist_ok=True)
    os.makedirs(f"{d}/cachefiles", exist_ok=True)
    for f in os.listdir(f"{hub}/spaces"):
        if f != f"{kernel}.json" and not os.path.exists(f"{d}/spaces/{f}"):
            os.symlink(os.path.abspath(f"{hub}/spaces/{f}"), f"{d}/spaces/{f}")
    for k in ("convolution_milo", "dedispersion_milo"):
        if not os.path.exists(f"{d}/cachefiles/{k}"):
            os.symlink(os.path.abspath(f"{cdir}/{k}"), f"{d}/cachefiles/{k}")
    t = json.load(open(f"{hub}/spaces/{kernel}.json"))
    for p, v in zip(t["ConfigurationSpace"]["TuningParameters"], default):
        p["Default"] = int(v)
    json.dump(t, open(f"{d}/spaces/{kernel}.json", "w"), indent=1)


def ranks_between(cdir, kernel, gpus, lo, hi):
    """Per GPU, each recorded config's rank (the share of valid configs faster) in kernel's
    cachefile; and, sorted, the configs ranked between lo and hi on every one of gpus."""
    rank = {}
    for g in gpus:
        cache = json.load(gzip.open(f"{cdir}/{kernel}/{g}.json.gz"))["cache"]
        ok = sorted((v["time"], k) for k, v in cache.items()
                    if isinstance(v.get("time"), (int, float)) and v["time"] < 1e20)
        rank[g] = {k: i / len(ok) for i, (_, k) in enumerate(ok)}
    common = set.intersection(*(set(r) for r in rank.values()))
    return rank, sorted(k for k in common if all(lo < rank[g][k] < hi for g in gpus))


def main():
    hub, cdir, out = sys.argv[1:4]
    gpus = ["A100", "MI250X", "W6600"]
    rank, mid = ranks_between(cdir, "convolution_milo", gpus, 0.35, 0.65)
    random.seed(7)
    for i, key in enumerate(random.sample(mid, 3), 1):
        write_hub(hub, cdir, f"{out}/hub{i}", key.split(","))
        print(f"hub{i}: Default {key}, rank " +
              ", ".join(f"{g} {rank[g][key]:.2f}" for g in gpus))


if __name__ == "__main__":
    main()

"""Where evolve's 200 trials go on convolution W6600: per seed, how many configs of the
block_size_y 1 / use_shmem 0 region it tried, the best of them and the best overall (÷ the
optimum), and the first trial within 2 % of the optimum (None: never).
    python3 w66.py AMK SPEC_DIR W6600_CACHEFILE   # SPEC_DIR: `amk import` of the T1 space"""
import gzip, json, os, subprocess, sys

amk, spec_dir, cachefile = sys.argv[1:4]
c = json.load(gzip.open(cachefile))
vals = {k: e["time"] for k, e in c["cache"].items() if not isinstance(e["time"], str)}
opt = min(vals.values())
keys = c["tune_params_keys"]
for seed in range(201, 221):
    tsv = "/tmp/w66.tsv"
    if os.path.exists(tsv):
        os.unlink(tsv)
    subprocess.run([amk, "--quiet", "loop", "convolution_milo", "--spec-dir", spec_dir,
                    "--backend", f"sim:{cachefile}", "--strategy", "evolve", "--seed",
                    str(seed), "--budget", "200", "--results", tsv, "--best", "/tmp/w66.json"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = [l.rstrip("\n").split("\t") for l in open(tsv) if not l.startswith("#")]
    ks = [",".join(str(json.loads(dict(zip(rows[0], r))["params"])[k]) for k in keys)
          for r in rows[1:]]
    region = [k for k in ks if k.split(",")[1] == "1" and k.split(",")[6] == "0"]
    best_region = min((vals[k] for k in region if k in vals), default=float("nan")) / opt
    best = min(vals[k] for k in ks if k in vals) / opt
    first = next((i for i, k in enumerate(ks) if vals.get(k, 9e9) / opt < 1.02), None)
    print(seed, len(region), round(best_region, 3), round(best, 3), first, flush=True)

#!/usr/bin/env python3
"""amk's recorded sweeps as benchmark_hub pairs, so that Kernel Tuner's strategies run on them
beside amk's (issue 25 item 1): for each results file KERNEL.tsv of a sweeps folder, a T1
space OUT/spaces/sweep_KERNEL.json (the params with the values the sweep recorded, the spec's
default config as Default, no conditions) and a Kernel Tuner cachefile
OUT/cachefiles/sweep_KERNEL/GPU.json of every recorded config: its latency as `time` (ms),
its recorded cost (results v4 cost_s) as compile + benchmark time, a failed config as
Kernel Tuner's CompilationFailedConfig / RuntimeFailedConfig.

A sweep holds a subset of its space's product (the valid configs, or a random sample), so
each pair is a partial cachefile: run the bench with --replay-partial, which cuts Kernel
Tuner's space to the recorded configs and lets amk search exactly those.

usage: bench/sweeps_to_hub.py SWEEPS_DIR OUT [--gpu NAME] [--amk build/amk]
  then: bench/search_vs_kerneltuner.sh --cachefiles OUT/cachefiles --replay-partial ...
Every row must carry cost_s (results v4); a sweep whose rows lack it is left out, named.
A sweep of a sample (bench/record_sweeps.sh's 2000 random configs of a large space) is
converted too, and said to be one: Kernel Tuner's neighbourhood strategies stall there.
"""
import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

COMPILE_FAILED = {"compile_error", "compile_crash", "compile_timeout"}


def read_rows(tsv):
    """(shape, device, rows) of an amk results file: the last row per config_id."""
    rows, shape, device = {}, None, None
    with open(tsv) as f:
        for r in csv.DictReader((ln for ln in f if not ln.startswith("#")), delimiter="\t"):
            shape, device = shape or r["shape"], device or r["device"]
            rows[r["config_id"]] = r
    return shape, device, list(rows.values())


def value_type(vals):
    return "int" if all(isinstance(v, int) for v in vals) else \
        "float" if all(isinstance(v, (int, float)) for v in vals) else "str"


def convert(tsv, out, gpu, amk):
    kernel = tsv.stem
    shape, device, rows = read_rows(tsv)
    if not rows or any(not r.get("cost_s") for r in rows):
        print(f"sweeps_to_hub: {tsv}: rows without cost_s (results v4); left out",
              file=sys.stderr)
        return None
    space = json.loads(subprocess.run([amk, "--quiet", "space", kernel, "--shape", shape,
                                       "--exact"],
                                      check=True, capture_output=True, text=True).stdout)
    params = [json.loads(r["params"]) for r in rows]
    names = list(params[0])
    values = {n: sorted({p[n] for p in params}, key=lambda v: (isinstance(v, str), v))
              for n in names}
    default = {n: p["default"] for n, p in space["params"].items()}
    name = f"sweep_{kernel}"
    t1 = {"General": {"BenchmarkName": name, "OutputFormat": "JSON"},
          "ConfigurationSpace": {
              "TuningParameters": [
                  {"Name": n, "Type": value_type(values[n]), "Values": repr(values[n]),
                   "Default": default.get(n, values[n][0])} for n in names],
              "Conditions": []},
          "KernelSpecification": {"Language": "CUDA", "KernelName": name,
                                  "Note": f"amk's recorded sweep {tsv.name} of {kernel} at "
                                          f"{shape} on {device}: the configs it holds"}}
    cache = {}
    for r, p in zip(rows, params):
        key = ",".join(str(p[n]) for n in names)
        cost_ms = float(r["cost_s"]) * 1000
        e = dict(p)
        if r["status"] == "ok":
            lat = float(r["latency_us"]) / 1000
            e.update(time=lat, times=[lat], compile_time=max(cost_ms - lat, 0.0),
                     benchmark_time=lat)
        else:
            e.update(time="CompilationFailedConfig" if r["status"] in COMPILE_FAILED
                     else "RuntimeFailedConfig", times=[], compile_time=cost_ms,
                     benchmark_time=0)
        e.update(verification_time=0, framework_time=0, strategy_time=0,
                 timestamp=r["time"])
        cache[key] = e
    kt = {"device_name": device, "kernel_name": name, "problem_size": [1],
          "tune_params_keys": names, "tune_params": values, "objective": "time",
          "cache": cache}
    (out / "spaces").mkdir(parents=True, exist_ok=True)
    (out / "cachefiles" / name).mkdir(parents=True, exist_ok=True)
    (out / "spaces" / f"{name}.json").write_text(json.dumps(t1, indent=1))
    (out / "cachefiles" / name / f"{gpu}.json").write_text(json.dumps(kt))
    return name, len(cache), space["valid_count"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweeps_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--gpu", default="sweep", help="the pair's GPU name (default: sweep)")
    ap.add_argument("--amk", default=str(Path(__file__).resolve().parent.parent / "build" / "amk"))
    a = ap.parse_args()
    for tsv in sorted(a.sweeps_dir.glob("*.tsv")):
        got = convert(tsv, a.out, a.gpu, a.amk)
        if got:
            name, n, valid = got
            print(f"sweeps_to_hub: {name}/{a.gpu}: {n} configs" +
                  (" (every valid config)" if n >= valid else
                   f" (a sample of {valid} valid configs: its configs have few recorded "
                   "neighbours, and Kernel Tuner's neighbourhood strategies, greedy_ils "
                   "first, can take minutes a run to find an unvisited one)"))


if __name__ == "__main__":
    main()

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

With --t1 FILE (a benchmark_hub T1 space, e.g. space_defs/data/benchmark_hub/spaces/
convolution_milo.json), the sweep of the kernel of that name (KERNEL.tsv, recorded with the
T1 file imported by `amk import --kernel`) becomes a pair of the T1 space itself: its
params, values, conditions and Default, its key order and kernel name. An exhaustive sweep
is then a complete cachefile, a new GPU of that space beside the community's, and the
bench runs it without --replay-partial (amk's sweep of convolution_milo on an H200:
docs/evidence/search-quality-2026-11-28-b).

usage: bench/sweeps_to_hub.py SWEEPS_DIR OUT [--gpu NAME] [--amk build/amk] [--t1 FILE]...
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


def t1_space(t1_file, params):
    """(name, T1 document, param names in the T1 order, their values, the sweep's configs
    with each value as the T1 file writes it: Kernel Tuner's key reads 1, not 1.0) of a T1
    space that the sweep's configs must belong to; exits 2 naming the first that does not."""
    t1 = json.loads(Path(t1_file).read_text())
    cs = t1["ConfigurationSpace"]
    names = [p["Name"] for p in cs["TuningParameters"]]
    values = {p["Name"]: eval(p["Values"], {"__builtins__": {"range": range, "list": list}})
              for p in cs["TuningParameters"]}
    for p in params:
        if set(p) != set(names) or any(p[n] not in values[n] for n in names):
            print(f"sweeps_to_hub: {t1_file}: the sweep's config {json.dumps(p)} is not one "
                  f"of this space's (params {names})", file=sys.stderr)
            sys.exit(2)
    params = [{n: values[n][values[n].index(p[n])] for n in names} for p in params]
    return Path(t1_file).stem, t1, names, values, params


def convert(tsv, out, gpu, amk, t1_file=None):
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
    if t1_file:
        name, t1, names, values, params = t1_space(t1_file, params)
        spec = t1["KernelSpecification"]
        kernel_name, problem_size = spec["KernelName"], spec.get("ProblemSize", [1])
    else:
        names = list(params[0])
        values = {n: sorted({p[n] for p in params}, key=lambda v: (isinstance(v, str), v))
                  for n in names}
        default = {n: p["default"] for n, p in space["params"].items()}
        name = kernel_name = f"sweep_{kernel}"
        problem_size = [1]
        t1 = {"General": {"BenchmarkName": name, "OutputFormat": "JSON"},
              "ConfigurationSpace": {
                  "TuningParameters": [
                      {"Name": n, "Type": value_type(values[n]), "Values": repr(values[n]),
                       "Default": default.get(n, values[n][0])} for n in names],
                  "Conditions": []},
              "KernelSpecification": {"Language": "CUDA", "KernelName": name,
                                      "Note": f"amk's recorded sweep {tsv.name} of {kernel} "
                                              f"at {shape} on {device}: the configs it holds"}}
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
    kt = {"device_name": device, "kernel_name": kernel_name, "problem_size": problem_size,
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
    ap.add_argument("--t1", action="append", default=[], type=Path,
                    help="a T1 space whose kernel's sweep (the file's stem) becomes a pair of "
                    "that space (repeatable)")
    a = ap.parse_args()
    t1s = {f.stem: f for f in a.t1}
    for tsv in sorted(a.sweeps_dir.glob("*.tsv")):
        got = convert(tsv, a.out, a.gpu, a.amk, t1s.get(tsv.stem))
        if got:
            name, n, valid = got
            print(f"sweeps_to_hub: {name}/{a.gpu}: {n} configs" +
                  (" (every valid config)" if n >= valid else
                   f" (a sample of {valid} valid configs: its configs have few recorded "
                   "neighbours, and Kernel Tuner's neighbourhood strategies, greedy_ils "
                   "first, can take minutes a run to find an unvisited one)"))


if __name__ == "__main__":
    main()

"""Driver of bench/kt_examples.sh: runs Kernel Tuner's CUDA examples with only their import
of kernel_tuner rewritten to amk, records each tune_kernel call, re-runs it exhaustively
with amk (unless it was brute force over its whole space already), and writes a JSON
summary. With KT_COMPARE=1 it also runs each example under Kernel Tuner itself, both tuners
brute-forcing the same list of configs, and prints the seconds per config of each.

    python3 bench/kt_examples.py EXAMPLES_DIR OUT.json [NAME...]
    (internal) python3 bench/kt_examples.py --child amk|kt SCRIPT RECORD.json
"""
import inspect
import itertools
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback

DEFAULT = ["vector_add", "matmul", "convolution", "reduction", "pnpoly"]
MAX_THREADS = 1024  # Kernel Tuner drops larger blocks from its space (the device's limit)
ENUMERATE_LIMIT = 200000  # larger spaces are sampled without listing them


def rewrite(text):
    """Only the import: `import kernel_tuner` -> `import amk as kernel_tuner`,
    `from kernel_tuner[.x] import ...` -> `from amk[.x] import ...`."""
    text = re.sub(r"^(\s*)import kernel_tuner\s*$", r"\1import amk as kernel_tuner", text,
                  flags=re.M)
    return re.sub(r"^(\s*)from kernel_tuner(\.\w+)? import", r"\1from amk\2 import", text,
                  flags=re.M)


def best_time(results):
    ok = [r["time"] for r in results if isinstance(r.get("time"), float)]
    return min(ok) if ok else None


# ---------- the list of configs both tuners tune -----------------------------------------


def _accepts(restrictions, params):
    """Kernel Tuner's restrictions on one config: Python expressions over the params, or
    callables given the config as a dict (older ones: its values as a list)."""
    if restrictions is None:
        return True
    if callable(restrictions) or isinstance(restrictions, str):
        restrictions = [restrictions]
    names = dict(vars(math), **params)
    for r in restrictions:
        if isinstance(r, str):
            ok = eval(r, {"__builtins__": __builtins__}, names)  # noqa: S307: the example's own
        else:
            try:
                ok = r(dict(params))
            except (TypeError, KeyError):
                ok = r(list(params.values()))
        if not ok:
            return False
    return True


def _threads(params, block_size_names):
    n = 1
    for b in block_size_names or ["block_size_x", "block_size_y", "block_size_z"]:
        n *= params.get(b, 1)
    return n


def config_sample(tune_params, restrictions, block_size_names, n, seed=1):
    """The configs of tune_params that the restrictions accept and whose block has at most
    MAX_THREADS threads, in tune_params' order: all of them (n == 0), or n of them drawn
    with random.Random(seed). The same arguments give the same list in any process."""
    names = list(tune_params)
    values = [list(tune_params[k]) for k in names]
    size = math.prod(len(v) for v in values)

    def ok(combo):
        p = dict(zip(names, combo))
        return _threads(p, block_size_names) <= MAX_THREADS and _accepts(restrictions, p)

    rng = random.Random(seed)
    if size <= ENUMERATE_LIMIT or not n:
        valid = [c for c in itertools.product(*values) if ok(c)]
        if n and n < len(valid):
            valid = [valid[i] for i in sorted(rng.sample(range(len(valid)), n))]
        return [dict(zip(names, c)) for c in valid]
    # A space too large to list: draw combinations until n valid distinct ones are found.
    picked = {}
    for _ in range(1000 * n):
        idx = tuple(rng.randrange(len(v)) for v in values)
        if idx not in picked:
            combo = tuple(v[i] for v, i in zip(values, idx))
            picked[idx] = combo if ok(combo) else None
            if sum(c is not None for c in picked.values()) == n:
                break
    chosen = sorted(i for i, c in picked.items() if c is not None)
    return [dict(zip(names, picked[i])) for i in chosen]


def sample_restriction(sample, tune_params):
    """A restriction string (Python, which both tuners translate) that accepts exactly the
    configs of sample: one conjunction per config over the params with several values."""
    moving = [k for k in tune_params if len(tune_params[k]) > 1]
    if not moving:
        return None
    return " or ".join("(%s)" % " and ".join("%s == %d" % (k, int(c[k])) for k in moving)
                       for c in sample)


def sample_callable(sample, tune_params):
    """The same as a callable, for amk where its probe named params that change the
    output: a restriction string makes configs invalid, and each config's reference (the
    default config with the config's values of those params) must stay valid; a callable
    only leaves configs out of the search. Called with the config as a dict (amk, Kernel
    Tuner's lone callable) or with its values (Kernel Tuner's callables in a list)."""
    names = list(tune_params)
    keys = {tuple(int(c[k]) for k in names) for c in sample}

    def in_sample(*args):
        if len(args) == 1 and isinstance(args[0], dict):
            return tuple(int(args[0][k]) for k in names) in keys
        vals = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        return tuple(int(v) for v in vals) in keys
    return in_sample


def restrict_to(restrictions, sample, tune_params, as_callable=False):
    """The example's restrictions plus the sample's (a string, or a callable). A lone
    callable (Kernel Tuner hands it the config as a dict) keeps that form: the sample joins
    it inside."""
    s = sample_restriction(sample, tune_params)
    if s is None:
        return restrictions
    if as_callable or callable(restrictions):
        s = sample_callable(sample, tune_params)
    if callable(restrictions):
        orig = restrictions

        def restriction(p):
            return bool(orig(p)) and s(p)
        return restriction
    if restrictions is None:
        return [s]
    if isinstance(restrictions, str):
        return [restrictions, s]
    return list(restrictions) + [s]


# ---------- one side's record of a call ---------------------------------------------------


def _status(r, mode):
    if mode == "amk":
        return r.get("amk_status", "?")
    return "ok" if isinstance(r.get("time"), float) else type(r.get("time")).__name__


def call_record(mode, kernel_name, tune_params, res, env, wall):
    """What one tune_kernel call cost: wall time, configs, statuses, the split the tuner
    reports (seconds), and the configs themselves (values in tune_params' order)."""
    c = {"kernel_name": kernel_name, "wall_s": wall, "configs": len(res),
         "best_ms": best_time(res), "statuses": {}}
    if res:
        c["wall_per_config_s"] = wall / len(res)
    for r in res:
        s = _status(r, mode)
        c["statuses"][s] = c["statuses"].get(s, 0) + 1

    def total(key):
        return sum(float(r.get(key) or 0) for r in res) / 1000.0
    if mode == "amk":
        # compile_time is per config (NVRTC in amk's workers, overlapping the runs); the
        # engine's search is amk_elapsed_s, its start-up and shutdown (run worker, driver,
        # compile pool) the rest of amk_engine_wall_s; the probe (amk_probe_s) and the
        # Python around them the rest of the call.
        loop, whole = env.get("amk_elapsed_s"), env.get("amk_engine_wall_s")
        probe = env.get("amk_probe_s") or 0.0
        c["split_s"] = {"compile_sum": total("compile_time"), "engine": loop,
                        "startup": whole - loop if None not in (whole, loop) else None,
                        "probe": probe,
                        "python": wall - (whole if whole is not None else loop or 0) - probe}
        c["amk_vary"] = env.get("amk_vary")
    else:
        c["split_s"] = {k: total(k + "_time") for k in
                        ("compile", "verification", "benchmark", "strategy", "framework")}
    c["config_list"] = [[r.get(k) for k in tune_params] for r in res]
    return c


def engine_log(text):
    """What amk logs at AMK_LOG=debug about where its time goes, from a child's stderr, in
    seconds: the run worker's phases summed over its jobs ("gpu 0 done: inputs 1.0 ms,
    settle 1000.2 ms, ..."; settle holds the sustained regime's warm-up), and each opening
    and closing of the backend and device query. {} when nothing was logged."""
    out = {}
    phases = {}
    for line in text.splitlines():
        m = re.search(r"gpu \d+ done: (.*)", line)
        if m:
            for name, ms in re.findall(r"([\w -]+?) ([0-9.]+) ms", m.group(1)):
                name = name.strip(" ,")
                phases[name] = phases.get(name, 0.0) + float(ms) / 1000.0
            continue
        for key, pat in (("backend_open_s", r"tune: gpu backend opened in ([0-9.]+) s"),
                         ("backend_close_s", r"tune: gpu backend closed in ([0-9.]+) s"),
                         ("device_query_s", r"gpu: device query took ([0-9.]+) s")):
            m = re.search(pat, line)
            if m:
                out.setdefault(key, []).append(float(m.group(1)))
    if phases:
        out["run_phases_s"] = phases
    return out


def exhaustive_itself(kw):
    """True when a tune_kernel call (its keywords) runs every config of its space: Kernel
    Tuner's brute force (the default) without a budget. Such a call is its own exhaustive
    run: re-running it would only time every config twice (Kernel Tuner's reduction example:
    4 752 configs)."""
    so = kw.get("strategy_options") or {}
    return kw.get("strategy") in (None, "brute_force") and \
        not any(k in so for k in ("max_fevals", "time_limit", "fraction"))


def full_calls(text):
    """KT_FULL's call numbers (1-based, by spaces or commas): the calls a KT_SMOKE run
    leaves whole."""
    return {int(x) for x in re.split(r"[\s,]+", text or "") if x}


def call_line(name, number, c):
    """The line kt_examples prints when a call ends (on stderr, as it happens)."""
    line = "kt_examples: %s call %d (%s): %d configs in %.1f s, %s s/config, best %s ms" % (
        name, number, c["kernel_name"], c["configs"], c["wall_s"],
        _f(c.get("wall_per_config_s")), c["best_ms"])
    if c.get("exhaustive_best_ms") is not None:
        line += ", exhaustive best %s ms (%s)" % (
            c["exhaustive_best_ms"], c.get("exhaustive", "re-run"))
    return line


# ---------- the child: one example under one tuner ----------------------------------------


def child(mode, script, record):
    """Runs script as __main__ with tune_kernel wrapped to record every call.
    KT_SMOKE=N: each call tunes a fixed sample of N configs (brute force over it), but the
    calls KT_FULL names, which run as written; KT_COMPARE=1: each call tunes all configs of
    its space (the same list under both tuners) and skips amk's exhaustive re-run; KT_LANG:
    lang= of Kernel Tuner's calls;
    KT_CACHE_DIR (KT_SIMULATE): amk writes a cachefile per call there, Kernel Tuner replays
    it (simulation_mode), so the comparison runs without a GPU."""
    calls = []
    if mode == "amk":
        import amk as mod
    else:
        import kernel_tuner as mod
    real = mod.tune_kernel
    sig = inspect.signature(real)
    smoke = int(os.environ.get("KT_SMOKE", "0") or 0)
    compare = os.environ.get("KT_COMPARE") == "1"
    seed = int(os.environ.get("KT_SEED", "1") or 1)
    lang = os.environ.get("KT_LANG") or None
    cache_dir = os.environ.get("KT_CACHE_DIR") or None
    full = full_calls(os.environ.get("KT_FULL"))
    name = os.path.splitext(os.path.basename(script))[0]

    def wrapped(*args, **kw):
        bound = sig.bind_partial(*args, **kw).arguments
        kw = {}
        for k, v in bound.items():  # amk's **amk_options flattened back into keywords
            kw.update(v if sig.parameters[k].kind == inspect.Parameter.VAR_KEYWORD else {k: v})
        tp = kw["tune_params"]
        c = {}
        whole = len(calls) + 1 in full and not compare
        if (smoke and not whole) or compare:
            sample = config_sample(tp, kw.get("restrictions"), kw.get("block_size_names"),
                                   smoke, seed)
            orig = dict(kw)
            kw.update(restrictions=restrict_to(kw.get("restrictions"), sample, tp),
                      strategy=None, strategy_options=None)
            c["sample"] = len(sample)
            if mode == "amk" and smoke and kw.get("answer") is None and \
                    kw.get("verify") is None and "amk_vary" not in kw:
                # amk's probe for params that change the output moves params around its
                # reference config in the space: in the example's space, not the sample's.
                t0 = time.monotonic()
                _, penv = real(**dict(orig, strategy="random_sample", cache=None, quiet=True,
                                      strategy_options={"max_fevals": 1}))
                c["probe_wall_s"] = time.monotonic() - t0
                kw["amk_vary"] = penv.get("amk_vary")
                if kw["amk_vary"]:
                    kw["restrictions"] = restrict_to(orig.get("restrictions"), sample, tp,
                                                     as_callable=True)
            if cache_dir:
                path = os.path.join(cache_dir, "call%d.json" % len(calls))
                kw["cache"] = path
                if mode == "kt":
                    kw["simulation_mode"] = True
        if mode == "kt" and lang:
            kw["lang"] = lang
        t0 = time.monotonic()
        res, env = real(**kw)
        wall = time.monotonic() - t0
        c.update(call_record(mode, kw["kernel_name"], tp, res, env, wall))
        c["strategy"] = kw.get("strategy") or "brute_force"
        if mode == "amk" and not compare and (whole or not smoke) and exhaustive_itself(kw):
            c["exhaustive"] = "the call itself"
            c["exhaustive_configs"] = c["configs"]
            c["exhaustive_best_ms"] = c["best_ms"]
            c["within_5pct"] = c["best_ms"] is not None
        elif mode == "amk" and not compare and (whole or not smoke):
            # the same call, exhaustively, as the yardstick of the example's best
            kw2 = dict(kw, strategy=None, strategy_options=None, cache=None, quiet=True)
            t0 = time.monotonic()
            res2, _ = real(**kw2)
            c["exhaustive_wall_s"] = time.monotonic() - t0
            c["exhaustive_configs"] = len(res2)
            c["exhaustive_best_ms"] = best_time(res2)
            if c["best_ms"] and c["exhaustive_best_ms"]:
                c["within_5pct"] = c["best_ms"] <= 1.05 * c["exhaustive_best_ms"]
        if smoke and not compare:
            c["whole"] = whole
        calls.append(c)
        print(call_line(name, len(calls), c), file=sys.stderr, flush=True)
        with open(record, "w") as f:
            json.dump(calls, f, indent=1, default=str)
        return res, env

    mod.tune_kernel = wrapped
    sys.argv = [script]
    os.chdir(os.path.dirname(os.path.abspath(script)))
    import runpy
    status = {"status": "ok"}
    try:
        runpy.run_path(script, run_name="__main__")
    except BaseException as e:  # noqa: B902: the record says what stopped the example
        status = {"status": "error", "error": "%s: %s" % (type(e).__name__, e),
                  "argument": getattr(e, "argument", None),
                  "traceback": traceback.format_exc(limit=4)}
        if type(e).__name__ == "UnsupportedError":
            status["status"] = "unsupported"
    with open(record, "w") as f:
        json.dump({"calls": calls, **status}, f, indent=1, default=str)


def _pump(stream, lines):
    """Collects a child's stderr, echoing kt_examples' own lines (one per call) as they
    come."""
    for line in stream:
        lines.append(line)
        if line.startswith("kt_examples:"):
            sys.stderr.write(line)
            sys.stderr.flush()


def run_one(src, name, mode, cache_dir=None, deadline=None):
    """Runs one example in a child; past deadline (time.monotonic()) the child is killed and
    the calls it recorded are kept (status "timeout")."""
    work = tempfile.mkdtemp(prefix="kt-%s-" % name)
    try:
        for f in os.listdir(src):
            p = os.path.join(src, f)
            if os.path.isfile(p):
                shutil.copy(p, work)
        script = os.path.join(work, name + ".py")
        if not os.path.exists(script):
            return {"status": "missing", "error": "%s.py is not among the examples" % name}
        if mode == "amk":
            with open(script) as f:
                text = f.read()
            with open(script, "w") as f:
                f.write(rewrite(text))
        record = os.path.join(work, "record.json")
        env = dict(os.environ)
        if cache_dir:
            env["KT_CACHE_DIR"] = cache_dir
        t0 = time.monotonic()
        lines = []
        with open(os.path.join(work, "stdout"), "w") as so:
            p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", mode,
                                  script, record], stdout=so, stderr=subprocess.PIPE,
                                 text=True, env=env)
            pump = threading.Thread(target=_pump, args=(p.stderr, lines), daemon=True)
            pump.start()
            timed_out = False
            try:
                p.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                timed_out = True
            pump.join()
        stderr = "".join(lines)
        out = {"status": "crashed", "returncode": p.returncode, "stderr": stderr[-2000:]}
        if os.path.exists(record):
            with open(record) as f:
                out = json.load(f)
            if isinstance(out, list):  # killed mid-way: the calls recorded so far
                out = {"status": "crashed", "calls": out, "stderr": stderr[-2000:]}
        if timed_out:
            out["status"] = "timeout"
            out["error"] = "KT_DEADLINE_S passed: killed after %d calls" % len(
                out.get("calls", []))
        if mode == "amk" and engine_log(stderr):  # AMK_LOG=debug: where the time went
            out["engine_log"] = engine_log(stderr)
        out["wall_s"] = time.monotonic() - t0
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---------- the comparison ------------------------------------------------------------------


def compare_calls(amk_calls, kt_calls):
    """One row per call both tuners made (in order): configs, seconds per config of each,
    and whether both tuned the same configs."""
    rows = []
    for a, k in zip(amk_calls, kt_calls):
        same = sorted(map(tuple, a["config_list"])) == sorted(map(tuple, k["config_list"]))
        row = {"kernel_name": a["kernel_name"], "configs": a["configs"],
               "kt_configs": k["configs"], "same_configs": same,
               "amk_s_per_config": a.get("wall_per_config_s"),
               "kt_s_per_config": k.get("wall_per_config_s"),
               "amk_split_s": a.get("split_s"), "kt_split_s": k.get("split_s")}
        if row["amk_s_per_config"] and row["kt_s_per_config"]:
            row["kt_over_amk"] = row["kt_s_per_config"] / row["amk_s_per_config"]
        rows.append(row)
    return rows


def _f(x, fmt="%.3f"):
    return "-" if x is None else fmt % x


def table(summary):
    """The comparison as text: per call, configs, wall and s/config of each tuner, and how
    each tuner's time splits (amk: compile summed over configs / engine's search / its
    start-up and shutdown / probe + Python around them;
    Kernel Tuner: compile / benchmark / framework + strategy + verification, summed)."""
    lines = ["%-12s %-20s %5s %5s %8s %8s %8s %8s %6s  %-22s %s" % (
        "example", "kernel", "cfgs", "same", "amk s", "amk s/c", "KT s", "KT s/c", "KT/amk",
        "amk cmp/eng/start/py s", "KT cmp/bench/fw+ s")]
    for name, ex in summary["examples"].items():
        for i, row in enumerate(ex.get("comparison", [])):
            a, k = ex["amk"]["calls"][i], ex["kernel_tuner"]["calls"][i]
            sa, sk = a.get("split_s") or {}, k.get("split_s") or {}
            rest = None if not sk else sk["framework"] + sk["strategy"] + sk["verification"]
            py = None if sa.get("python") is None else sa["python"] + (sa.get("probe") or 0)
            lines.append("%-12s %-20s %5d %5s %8s %8s %8s %8s %6s  %-22s %s" % (
                name, row["kernel_name"][:20], row["configs"],
                "yes" if row["same_configs"] else "NO", _f(a["wall_s"], "%.2f"),
                _f(row["amk_s_per_config"]), _f(k["wall_s"], "%.2f"),
                _f(row["kt_s_per_config"]), _f(row.get("kt_over_amk"), "%.2f"),
                "/".join(_f(x, "%.1f") for x in (sa.get("compile_sum"), sa.get("engine"),
                                                   sa.get("startup"), py)),
                "/".join(_f(x, "%.1f") for x in (sk.get("compile"), sk.get("benchmark"),
                                                   rest))))
    return "\n".join(lines)


def main():
    if sys.argv[1] == "--child":
        return child(*sys.argv[2:5])
    src, out = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or DEFAULT
    compare = os.environ.get("KT_COMPARE") == "1"
    simulate = os.environ.get("KT_SIMULATE") == "1"
    summary = {"examples": {}, "smoke": int(os.environ.get("KT_SMOKE", "0") or 0),
               "full_calls": sorted(full_calls(os.environ.get("KT_FULL"))),
               "compare": compare, "kt_lang": os.environ.get("KT_LANG") or None,
               "kt_simulate": simulate}
    limit = float(os.environ.get("KT_DEADLINE_S", "0") or 0)
    deadline = time.monotonic() + limit if limit > 0 else None
    good = True
    for name in names:
        cache_dir = tempfile.mkdtemp(prefix="kt-cache-") if compare and simulate else None
        try:
            r = {"amk": run_one(src, name, "amk", cache_dir, deadline)}
            if compare:
                r["kernel_tuner"] = run_one(src, name, "kt", cache_dir, deadline)
        finally:
            if cache_dir:
                shutil.rmtree(cache_dir, ignore_errors=True)
        calls = r["amk"].get("calls", [])
        if compare:
            kc = r["kernel_tuner"].get("calls", [])
            r["comparison"] = compare_calls(calls, kc)
            r["ok"] = r["amk"]["status"] == "ok" and bool(calls) and \
                len(kc) == len(calls) and all(c["same_configs"] for c in r["comparison"])
        else:
            r["ok"] = r["amk"]["status"] == "ok" and bool(calls) and all(
                c.get("within_5pct") for c in calls)
        good &= r["ok"]
        summary["examples"][name] = r
        n = sum(c["configs"] for c in calls)
        line = "%-12s %-11s %d calls, %d configs in %.1f s (%s s/config)" % (
            name, r["amk"]["status"], len(calls), n, r["amk"]["wall_s"],
            _f(r["amk"]["wall_s"] / n if n else None))
        for c in calls:
            line += " | %s: %d configs, best %s ms, %.3f s/config" % (
                c["kernel_name"], c["configs"], c["best_ms"],
                c.get("wall_per_config_s", float("nan")))
            if "exhaustive_best_ms" in c:
                line += ", exhaustive %s ms" % c["exhaustive_best_ms"]
        if r["amk"].get("error"):
            line += " | " + r["amk"]["error"]
        if compare:
            line += " | Kernel Tuner: %s" % r["kernel_tuner"]["status"]
            if r["kernel_tuner"].get("error"):
                line += " (%s)" % r["kernel_tuner"]["error"]
        print(line, flush=True)
        with open(out, "w") as f:  # after each example: a run cut short keeps the ones done
            json.dump(summary, f, indent=1, default=str)
    if compare:
        print(table(summary))
    print("kt_examples: %s written" % out)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main() or 0)

"""Driver of bench/kt_examples.sh: runs Kernel Tuner's CUDA examples with only their import
of kernel_tuner rewritten to amk, records each tune_kernel call, re-runs it exhaustively
with amk, and writes a JSON summary.

    python3 bench/kt_examples.py EXAMPLES_DIR OUT.json [NAME...]
    (internal) python3 bench/kt_examples.py --child amk|kt SCRIPT RECORD.json
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

DEFAULT = ["vector_add", "matmul", "convolution", "reduction", "pnpoly"]


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


def child(mode, script, record):
    """Runs script as __main__ with tune_kernel wrapped to record every call."""
    calls = []
    if mode == "amk":
        import amk as mod
    else:
        import kernel_tuner as mod
    real = mod.tune_kernel
    smoke = int(os.environ.get("KT_SMOKE", "0") or 0)

    def wrapped(*args, **kw):
        if smoke:
            kw = dict(kw, strategy="random_sample", strategy_options={"max_fevals": smoke})
        t0 = time.monotonic()
        res, env = real(*args, **kw)
        wall = time.monotonic() - t0
        c = {"kernel_name": args[0] if args else kw.get("kernel_name"), "wall_s": wall,
             "configs": len(res), "best_ms": best_time(res),
             "strategy": kw.get("strategy") or "brute_force"}
        if wall and res:
            c["wall_per_config_s"] = wall / len(res)
        if mode == "amk" and not smoke:
            # the same call, exhaustively, as the yardstick of the example's best
            kw2 = dict(kw, strategy=None, strategy_options=None, cache=None, quiet=True)
            t0 = time.monotonic()
            res2, _ = real(*args, **kw2)
            c["exhaustive_wall_s"] = time.monotonic() - t0
            c["exhaustive_configs"] = len(res2)
            c["exhaustive_best_ms"] = best_time(res2)
            if c["best_ms"] and c["exhaustive_best_ms"]:
                c["within_5pct"] = c["best_ms"] <= 1.05 * c["exhaustive_best_ms"]
        if mode == "amk":  # smoke runs too: how many came back ok, wrong, ...
            c["amk_statuses"] = {}
            for r in res:
                s = r.get("amk_status", "?")
                c["amk_statuses"][s] = c["amk_statuses"].get(s, 0) + 1
            c["amk_vary"] = env.get("amk_vary")
        calls.append(c)
        with open(record, "w") as f:
            json.dump(calls, f, indent=1)
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
        json.dump({"calls": calls, **status}, f, indent=1)


def run_one(src, name, mode):
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
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode, script,
                            record], capture_output=True, text=True)
        out = {"status": "crashed", "returncode": p.returncode, "stderr": p.stderr[-2000:]}
        if os.path.exists(record):
            with open(record) as f:
                out = json.load(f)
            if isinstance(out, list):  # killed mid-way: the calls recorded so far
                out = {"status": "crashed", "calls": out, "stderr": p.stderr[-2000:]}
        out["wall_s"] = time.monotonic() - t0
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    if sys.argv[1] == "--child":
        return child(*sys.argv[2:5])
    src, out = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or DEFAULT
    compare = os.environ.get("KT_COMPARE") == "1"
    summary = {"examples": {}}
    good = True
    for name in names:
        r = {"amk": run_one(src, name, "amk")}
        if compare:
            r["kernel_tuner"] = run_one(src, name, "kt")
        calls = r["amk"].get("calls", [])
        r["ok"] = r["amk"]["status"] == "ok" and bool(calls) and all(
            c.get("within_5pct") for c in calls)
        good &= r["ok"]
        summary["examples"][name] = r
        line = "%-12s %-11s" % (name, r["amk"]["status"])
        for c in calls:
            line += " | %s: %d configs, best %s ms, exhaustive %s ms, %.3f s/config" % (
                c["kernel_name"], c["configs"], c["best_ms"], c.get("exhaustive_best_ms"),
                c.get("wall_per_config_s", float("nan")))
        if r["amk"].get("error"):
            line += " | " + r["amk"]["error"]
        if compare:
            kc = r["kernel_tuner"].get("calls", [])
            if kc:
                line += " | Kernel Tuner: %.3f s/config" % kc[0].get("wall_per_config_s",
                                                                     float("nan"))
            else:
                line += " | Kernel Tuner: %s" % r["kernel_tuner"].get("error", "did not run")
        print(line, flush=True)
    with open(out, "w") as f:
        json.dump(summary, f, indent=1)
    print("kt_examples: %s written" % out)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main() or 0)

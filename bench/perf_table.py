#!/usr/bin/env python3
"""Best rows of amk results files and the side-by-side table of bench/perf_all.sh.

  perf_table.py best FILE.tsv [--kinds measured,replayed]   best ok row + status counts (JSON)
  perf_table.py table DIR [--kernels-dir D] [--kinds K]      DIR/perf_table.md from the files
                                                              perf_all.sh leaves in DIR
Standard library only (runs where torch is missing). Work per problem (bytes, flops) comes
from the kernel's spec.json cost expressions evaluated at the row's shape and params, so a
rate is always the spec's own `min_bytes` or `flops` over the measured latency.
"""
import argparse
import collections
import csv
import json
import math
import os
import re
import sys

ELT = {"f32": 4, "f16": 2, "bf16": 2, "fp8e4m3": 1, "int8": 1}
MEMORY_BOUND_INTENSITY = 64  # flops per byte; below this a kernel is judged by bandwidth


def read_rows(path):
    """Rows of a results.tsv as dicts; a torn (short) row is skipped as amk's reader does."""
    with open(path, newline="") as f:
        first = f.readline()
        if not first.startswith("# amk results"):
            raise ValueError("%s: not an amk results file (first line %r)" % (path, first[:40]))
        reader = csv.DictReader((l for l in f if l.strip() and not l.startswith("#")),
                                delimiter="\t")
        return [r for r in reader if r.get("kept") not in (None, "")]


def best_row(rows, kinds):
    """Lowest latency among ok rows whose latency_kind is in kinds, rows timed beside the same
    peer held in one clock state as amk's best rule holds them (HARNESS.md "Best": latency x
    the first such row's peer_us / the row's); None when there is none."""
    ok = [r for r in rows if r["status"] == "ok" and r["latency_kind"] in kinds and r["latency_us"]]

    def peer_us(r):
        try:
            return float(r.get("peer_us") or "nan")
        except ValueError:
            return float("nan")

    ref = next(((r.get("peer"), peer_us(r)) for r in ok if r.get("peer") and peer_us(r) > 0),
               (None, None))

    def held(r):
        lat = float(r["latency_us"])
        return lat * ref[1] / peer_us(r) if ref[0] and r.get("peer") == ref[0] and peer_us(r) > 0 else lat
    return min(ok, key=held) if ok else None


def summarize(path, kinds):
    rows = read_rows(path)
    b = best_row(rows, kinds)
    return {"file": path, "rows": len(rows),
            "status": dict(collections.Counter(r["status"] for r in rows)),
            "best": b and {k: b[k] for k in ("trial", "kernel", "shape", "params", "latency_us",
                                             "latency_kind", "spread", "pct_of_roofline",
                                             "device")}}


# ---- spec cost expressions --------------------------------------------------------------

def _py_expr(expr):
    """amk's integer expression syntax as Python (no ?: support: such costs come out None)."""
    if "?" in expr:
        raise ValueError("conditional expression")
    e = expr.replace("&&", " and ").replace("||", " or ")
    e = re.sub(r"!(?!=)", " not ", e)
    return re.sub(r"(?<![/])/(?![/])", "//", e)


_FUNCS = {"min": min, "max": max, "cdiv": lambda a, b: -(-a // b),
          "log2": lambda a: a.bit_length() - 1, "ispow2": lambda a: int(a > 0 and a & (a - 1) == 0)}


def problem_work(kernels_dir, kernel, shape, params):
    """(min_bytes, flops, unit) of one problem from the spec, or (None, None, None)."""
    try:
        spec = json.load(open(os.path.join(kernels_dir, kernel, "spec.json")))
    except (OSError, ValueError):
        return None, None, None
    names = dict(_FUNCS)
    for part in shape.split(","):
        k, _, v = part.partition("=")
        if k == "dtype":
            names["elt"] = ELT.get(v)
            dts = spec.get("dtypes", [])
            names["dtype"] = dts.index(v) if v in dts else 0
        elif v.lstrip("-").isdigit():
            names[k] = int(v)
    names.update({k: v for k, v in params.items() if isinstance(v, int)})
    derived = dict(spec.get("derived", {}))
    for _ in range(len(derived) + 1):  # derived values may name each other: settle in passes
        for k, e in list(derived.items()):
            try:
                names[k] = eval(_py_expr(e), {"__builtins__": {}}, names)  # spec text, trusted
                del derived[k]
            except Exception:
                pass
    out = []
    for key in ("min_bytes", "flops"):
        try:
            out.append(eval(_py_expr(str(spec["cost"][key])), {"__builtins__": {}}, names))
        except Exception:
            out.append(None)
    return out[0], out[1], spec.get("cost", {}).get("unit")


# ---- the table --------------------------------------------------------------------------

def fmt(x, spec="%.1f"):
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else spec % x


def shape_text(shape):
    dims = [p.split("=")[1] for p in shape.split(",") if not p.startswith("dtype=")]
    dt = [p.split("=")[1] for p in shape.split(",") if p.startswith("dtype=")]
    return "×".join(dims) + (" " + dt[0] if dt else "")


def read_sections(d):
    path = os.path.join(d, "sections.tsv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def read_peers(d):
    peers = {}
    path = os.path.join(d, "peers.jsonl")
    if os.path.exists(path):
        for line in open(path):
            try:
                p = json.loads(line)
            except ValueError:
                continue
            if "kernel" in p:
                peers[(p["kernel"], p["shape"])] = p
    return peers


def section_result(d, s, kinds, kernels_dir):
    """Everything the table says about one section: best row, rates, counts."""
    r = {"sec": s, "best": None, "rows": 0, "status": {}, "bytes": None, "flops": None}
    path = os.path.join(d, s["results"]) if s.get("results") else ""
    if path and os.path.exists(path):
        try:
            rows = [x for x in read_rows(path) if x["kernel"] == s["kernel"]]
        except (ValueError, KeyError) as e:
            r["error"] = str(e)
            return r
        r["rows"] = len(rows)
        r["status"] = dict(collections.Counter(x["status"] for x in rows))
        r["best"] = best_row(rows, kinds)
    params = json.loads(r["best"]["params"]) if r["best"] else {}
    shape = r["best"]["shape"] if r["best"] else s["shape"]
    r["bytes"], r["flops"], r["unit"] = problem_work(kernels_dir, s["kernel"], shape, params)
    if r["best"]:
        r["us"] = float(r["best"]["latency_us"])
    return r


def memory_bound(r):
    if r.get("unit") == "none":
        return True
    return bool(r["bytes"] and r["flops"] is not None and r["flops"] / r["bytes"] < MEMORY_BOUND_INTENSITY)


def render(d, kinds, kernels_dir):
    secs = read_sections(d)
    peers = read_peers(d)
    res = [section_result(d, s, kinds, kernels_dir) for s in secs]
    copy_tbs = None
    for r in res:
        if r["sec"]["role"] == "yardstick" and r["best"] and r["bytes"]:
            copy_tbs = r["bytes"] / r["us"] / 1e6
    meta = {}
    if os.path.exists(os.path.join(d, "meta.txt")):
        for line in open(os.path.join(d, "meta.txt")):
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    out = []
    if meta.get("backend") == "model":
        out.append("**Dry run** (`AMK_PERF_DRY=1`): model backend, every amk latency below is a "
                   "prediction, not a measurement.")
        out.append("")
    out.append("Measured %s on %s (driver %s), amk %s, backend `%s`, one call of "
               "`bench/perf_all.sh` (%s s wall)." % (
                   meta.get("date", "?"), meta.get("gpu", "?"), meta.get("driver", "?"),
                   meta.get("amk", "?"), meta.get("backend", "?"), meta.get("wall_s", "?")))
    out.append("")
    if copy_tbs:
        out.append("Device-copy yardstick of this run: amk `copy` best %.1f µs → **%.2f TB/s**." % (
            next(r["us"] for r in res if r["sec"]["role"] == "yardstick" and r["best"]), copy_tbs))
    else:
        out.append("Device-copy yardstick of this run: not measured (see the copy section below).")
    out.append("")
    out.append("| kernel | shape | amk best µs | amk rate | % of roofline | % of copy | trials ok/all "
               "| regime, SM MHz, W | peer | peer µs | peer rate | ratio (peer/amk) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    notes = []
    for r in res:
        s = r["sec"]
        p = peers.get((s["kernel"], s["shape"]))
        mem = memory_bound(r)
        b = r["best"]
        # The row's own peer (timed by amk's harness beside it, same regime) wins over the
        # separate peers.py process, whose clock state is not the row's.
        if b and b.get("peer_us"):
            p = {"peer": "%s, same harness" % b["peer"], "us": float(b["peer_us"])}
        elif p and p.get("us"):
            p = dict(p, peer="%s, separate process" % p["peer"])
        state = "—"
        if b and b.get("clock_regime"):
            state = "%s, %s, %s" % (b["clock_regime"], fmt(float(b["sm_mhz"])) if b.get("sm_mhz") else "?",
                                    fmt(float(b["power_w"])) if b.get("power_w") else "?")
        if b:
            us = r["us"]
            kind = "" if b["latency_kind"] == "measured" else " (%s)" % b["latency_kind"]
            if mem and r["bytes"]:
                rate = "%.2f TB/s" % (r["bytes"] / us / 1e6)
            elif r["flops"]:
                rate = "%.1f TFLOP/s" % (r["flops"] / us / 1e6)
            else:
                rate = "—"
            pct = b["pct_of_roofline"] or None
            pct = fmt(float(pct)) + "%" if pct else "—"
            pcopy = (fmt(100 * r["bytes"] / us / 1e6 / copy_tbs) + "%"
                     if mem and copy_tbs and r["bytes"] and s["role"] != "yardstick" else "—")
            amk_cells = ["%.2f%s" % (us, kind), rate, pct, pcopy]
        else:
            why = s.get("note") or "no ok row"
            amk_cells = [why if len(why) < 40 else why[:why.find(":") if ":" in why else 40] + " (see below)",
                         "—", "—", "—"]
        counts = "%d/%d" % (r["status"].get("ok", 0), r["rows"])
        if p and p.get("us"):
            pus = p["us"]
            if mem and r["bytes"]:
                prate = "%.2f TB/s" % (r["bytes"] / pus / 1e6)
            elif r["flops"]:
                prate = "%.1f TFLOP/s" % (r["flops"] / pus / 1e6)
            else:
                prate = "—"
            ratio = "**%.2f**" % (pus / r["us"]) if b else "—"
            peer_cells = ["`%s`" % p["peer"], "%.2f" % pus, prate, ratio]
        elif p:
            peer_cells = ["`%s`: %s" % (p.get("peer", "?"), p.get("error", "no time")), "—", "—", "—"]
        else:
            peer_cells = ["—", "—", "—", "—"]
        label = s["label"] if s["label"] == s["kernel"] else "%s (%s)" % (s["kernel"], s["label"])
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            label, shape_text(s["shape"]), " | ".join(amk_cells), counts, state,
            " | ".join(peer_cells)))
        why = s.get("note") or ""
        notes.append("- %s %s: %s s wall, exit %s, %s%s%s" % (
            label, shape_text(s["shape"]), s["wall_s"], s["rc"],
            ", ".join("%s %d" % kv for kv in sorted(r["status"].items())) or "no rows",
            ("; best " + b["params"]) if b else "", ("; " + why) if why else ""))
        if p and p.get("note"):
            notes[-1] += "; peer: " + p["note"]
    out.append("")
    out.append("Ratio = peer time / amk time (> 1: amk faster). A peer marked *same harness* was "
               "timed by amk's run worker interleaved with the best row's config, same buffers, "
               "same regime (the row's `peer_us`); *separate process* is bench/peers.py, whose "
               "clock state is not the row's: that ratio is not a like-for-like result. "
               "Rates are the spec's `min_bytes` "
               "(memory-bound rows) or `flops` over the latency; % of roofline is the row's "
               "`pct_of_roofline`; % of copy is the rate over the copy yardstick above.")
    out.append("")
    out.append("Sections (wall time, exit code, status counts, best params):")
    out.append("")
    out.extend(notes)
    out.extend(render_race(d, res, meta))
    return "\n".join(out) + "\n"


def render_race(d, res, meta):
    """The tuning-speed comparison: amk's race section against triton.json."""
    race = [r for r in res if r["sec"]["role"] == "race"]
    tri = None
    path = os.path.join(d, "triton.json")
    if os.path.exists(path):
        try:
            tri = json.load(open(path))
        except ValueError:
            tri = {"error": "triton.json unreadable"}
    out = ["", "### Tuning speed: `amk loop` vs `triton.autotune`, fp16 gemm, 72 configs each", ""]
    out.append("| tuner | configs done | wall s | s/config | best µs | best TFLOP/s | best config |")
    out.append("|---|---|---|---|---|---|---|")
    amk_per = tri_per = None
    for r in race:
        s, b = r["sec"], r["best"]
        n = r["rows"]
        wall = float(s["wall_s"]) if s["wall_s"] not in ("", "-") else None
        amk_per = wall / n if wall and n else None
        tf = r["flops"] / r["us"] / 1e6 if b and r["flops"] else None
        screened = r["status"].get("screened", 0) + r["status"].get("rejected", 0)
        out.append("| amk loop (--jobs %s, fresh compile cache) | %d%s | %s | %s | %s | %s | `%s` |" % (
            meta.get("jobs", "?"), n,
            " (%d screened/rejected, not compiled)" % screened if screened else "",
            fmt(wall), fmt(amk_per, "%.2f"), fmt(r.get("us"), "%.1f"), fmt(tf), b["params"] if b else "—"))
    if tri is None:
        out.append("| triton.autotune | — | — | — | — | — | section did not run |")
    elif tri.get("error"):
        out.append("| triton.autotune | %s | %s | — | — | — | %s |" % (
            tri.get("configs", "—"), fmt(tri.get("wall_s")), tri["error"]))
    else:
        tri_per = tri["wall_s"] / tri["configs"]
        out.append("| triton %s autotune (fresh TRITON_CACHE_DIR) | %d | %.1f | %.2f | %.1f | %.1f | `%s`%s |" % (
            tri.get("triton", ""), tri["configs"], tri["wall_s"], tri_per, tri["best_us"],
            tri["best_tflops"], tri["best_config"],
            "" if tri.get("verified") else " (**result does not match torch.matmul**)"))
    out.append("")
    if amk_per and tri_per:
        out.append("Per config, amk is **%.1f×** %s than Triton's autotuner (wall per config, "
                   "compile + check + benchmark for amk, compile + benchmark for Triton)." % (
                       tri_per / amk_per if tri_per >= amk_per else amk_per / tri_per,
                       "faster" if tri_per >= amk_per else "slower"))
    # The bests against each other, in one regime: each tuner's best over cuBLAS timed beside
    # it (amk: the row's vs_peer, amk's harness; Triton: sustained_pair in peers.py), so the
    # clock state cancels within each ratio and the two ratios compare.
    amk_vs = None
    for r in race:
        b = r["best"]
        if b and b.get("vs_peer") not in (None, "", "-"):
            amk_vs = float(b["vs_peer"])
    tri_vs = tri.get("vs_peer") if tri and not tri.get("error") else None
    if amk_vs and tri_vs:
        out.append("")
        out.append("Bests in one regime (sustained), each against cuBLAS timed beside it: amk "
                   "%.3f× cuBLAS (amk's harness, the best row's vs_peer), Triton %.3f× cuBLAS "
                   "(bench/peers.py sustained_pair: %.1f µs vs %.1f µs). amk's best is **%.3f×** "
                   "Triton's (> 1: amk's is faster)." % (
                       amk_vs, tri_vs, tri["sustained_us"], tri["sustained_peer_us"],
                       amk_vs / tri_vs))
    both = tri.get("amk_beside") if tri else None
    if both and not both.get("error"):
        out.append("")
        out.append("Side by side, one harness (amk's best through amk.torch and Triton's best "
                   "interleaved in one process, sustained): amk %.1f µs, Triton %.1f µs: amk's "
                   "best is **%.3f×** Triton's%s." % (
                       both["amk_us"], both["triton_us"], both["amk_over_triton"],
                       "" if both.get("amk_verified") else
                       " (**amk.torch's result does not match torch.matmul**)"))
    elif both:
        out.append("")
        out.append("Side by side, one harness: not run (%s)." % both["error"])
    if tri and tri.get("note"):
        out.append("")
        out.append("Triton: " + tri["note"])
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("best")
    b.add_argument("file")
    b.add_argument("--kinds", default="measured,replayed")
    t = sub.add_parser("table")
    t.add_argument("dir")
    t.add_argument("--kinds", default="measured")
    t.add_argument("--kernels-dir", default=os.environ.get("AMK_KERNELS_DIR", "space_defs/kernels"))
    a = ap.parse_args(argv)
    kinds = set(a.kinds.split(","))
    if a.cmd == "best":
        try:
            print(json.dumps(summarize(a.file, kinds), indent=1))
        except (OSError, ValueError) as e:
            print("perf_table: %s" % e, file=sys.stderr)
            return 1
        return 0
    text = render(a.dir, kinds, a.kernels_dir)
    with open(os.path.join(a.dir, "perf_table.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The record: amk.read_results (results.tsv as a pandas DataFrame, read by amk's own
torn-row-tolerant reader), amk.best (the one best row, HARNESS.md "Best"), amk.report,
amk.export and amk.lookup (docs/RESULTS.md, docs/EXPORT.md)."""
import json
import os

from . import _amk
from .errors import translate


def _paths(paths):
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return [os.fspath(p) for p in paths]


def read_results(path, params=True):
    """results.tsv as a pandas DataFrame, one row per trial, columns in file order (trial,
    time, kernel, shape, config_id, params, source, status, latency_us, latency_kind,
    spread, predicted_us, bound_us, pct_of_roofline, compile_ms, cache_hit, kept, device,
    note, and v2's device observation and peer: clock_regime, sm_mhz, sm_mhz_min,
    sm_mhz_max, mem_mhz, power_w, temp_c, throttle, energy_uj, peer, peer_us, vs_peer;
    v3's objective, energy_window_ms, energy_ticks; and v4's cost_s; an older file's rows
    have those empty, objective "time"). Empty fields are None/NaN. With params=True the
    params column holds dicts and each param also gets a column of its own, "p.NAME" (NaN
    where a row's kernel lacks it).
    Torn rows (a killed writer) are skipped; df.attrs["torn"] counts them."""
    import pandas as pd
    with translate:
        cols, torn = _amk.read_results(os.fspath(path))
    df = pd.DataFrame(cols)
    for c in ("latency_us", "spread", "predicted_us", "bound_us", "pct_of_roofline",
              "compile_ms", "sm_mhz", "sm_mhz_min", "sm_mhz_max", "mem_mhz", "power_w",
              "temp_c", "energy_uj", "peer_us", "vs_peer", "energy_window_ms", "energy_ticks",
              "cost_s"):
        if c in df:
            df[c] = pd.to_numeric(df[c], errors="coerce")
    if params:
        parsed = [json.loads(p) if p else {} for p in df["params"]]
        df["params"] = parsed
        names = []
        for p in parsed:
            for k in p:
                if k not in names:
                    names.append(k)
        for k in names:
            df["p." + k] = [p.get(k) for p in parsed]
    df.attrs["torn"] = torn
    df.attrs["path"] = os.fspath(path)
    return df


class Report(dict):
    """`amk report --json` as a dict; .table is the human table `amk report` prints."""
    table = ""

    def __str__(self):
        return self.table


def report(paths, spec_dirs=None, svg_dir=None):
    """`amk report FILE...`: best per kernel/shape/device, speedup over the default config,
    counts by status (docs/RESULTS.md). svg_dir: also write the plots there."""
    with translate:
        text, table = _amk.report(_paths(paths), spec_dirs=[os.fspath(d) for d in spec_dirs or []],
                                  svg_dir=os.fspath(svg_dir) if svg_dir else None)
    r = Report(json.loads(text))
    r.table = table
    return r


def best(paths, kernel=None, shape=None, device=None, spec_dirs=None):
    """The one best row of the results file(s), by amk's history rule (HARNESS.md "Best":
    what best.json, resume, report and export use): a dict with the group's kernel, shape
    and device and its best row, or None when no row is correct. When the files hold several
    kernel/shape/device groups, name the one you want (kernel, shape, device; any left None
    must match a single group). Where nothing was measured (the model backend) it is the
    best predicted row, latency_kind "predicted"."""
    groups = report(paths, spec_dirs=spec_dirs).get("groups", [])
    sel = [g for g in groups
           if (kernel is None or g["kernel"] == kernel) and (shape is None or g["shape"] == shape)
           and (device is None or g["device"] == device)]
    if len(sel) > 1:
        from .errors import InputError
        raise InputError("best: %d kernel/shape/device groups match (%s); name kernel, shape "
                         "or device" % (len(sel), "; ".join(
                             "%s %s %s" % (g["kernel"], g["shape"], g["device"]) for g in sel)))
    if not sel or not (sel[0].get("best") or sel[0].get("best_predicted")):
        return None
    g = sel[0]
    # A prediction never competes with a measurement: the predicted best only where
    # nothing was measured (or replayed), e.g. a run on the model backend.
    out = dict(g.get("best") or g["best_predicted"])
    out.update(kernel=g["kernel"], shape=g["shape"], device=g["device"])
    return out


def export(paths, output=None, *, kernel=None, include_replayed=False, c_header=False,
           spec_dirs=None):
    """`amk export FILE...`: the database of best configs (a dict), or its C header (text)
    with c_header=True; written to output too when given. spec_dirs: user kernels, as
    `--spec-dir` (rows recorded before a param joined a spec are exported as today's)."""
    with translate:
        text = _amk.export(_paths(paths), kernel=kernel, include_replayed=include_replayed,
                           c_header=c_header, spec_dirs=[os.fspath(d) for d in spec_dirs or []])
    if output:
        tmp = os.fspath(output) + ".tmp.%d" % os.getpid()
        with open(tmp, "w") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        os.replace(tmp, os.fspath(output))
    return text if c_header else json.loads(text)


def lookup(db, kernel, device, shape, dtype=None):
    """`amk lookup`: the tuned config of kernel on device at shape ("M=4096,N=4096") from an
    export database file, with the export's fallback rules (nearest shape, defaults)."""
    with translate:
        return json.loads(_amk.lookup(os.fspath(db), kernel, device, shape, dtype))

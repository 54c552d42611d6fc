"""amk.loop, amk.propose, amk.evaluate: the commands `amk loop`, `amk propose` and
`amk evaluate` as calls, with the same options and defaults, on every backend ("auto",
"gpu", "model", "sim:FILE")."""
import json
import os

from . import _amk
from .errors import translate, UsageError
from .progress import Progress
from .space import Space


def _space(kernel, spec_dirs, target):
    if isinstance(kernel, Space):
        if spec_dirs or target:
            raise UsageError("spec_dirs and target belong to the Space when a Space is given")
        return kernel
    return Space(kernel, spec_dirs=spec_dirs, target=target)


def _duration(value):
    """Seconds from a number or amk's text ("90s", "10m", "1h", "250ms")."""
    if value is None:
        return 0.0
    if isinstance(value, (int, float)):
        return float(value)
    units = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    for u in ("ms", "s", "m", "h"):
        if value.endswith(u):
            try:
                return float(value[:-len(u)]) * units[u]
            except ValueError:
                break
    try:
        return float(value)
    except ValueError:
        raise UsageError("time: '%s' is not a duration (90s, 10m, 1h)" % value) from None


def loop(kernel, shape=None, *, backend="auto", strategy="evolve", budget=None, time=None,
         seed=1, batch=0, min_gain=0.01, results="results.tsv", best="best.json",
         resume=False, jobs=0, devices=None, spec_dirs=None, target=None, progress=True,
         exclude=None, notes=None, regime=None, objective=None, verify=None, outputs=None):
    """`amk loop KERNEL`: search, logging every trial to `results`, the best to `best`.

    kernel: a kernel name, a kernel folder or an amk.Space. budget: trials (default 100, or
    none when time is given). time: seconds or "10m". devices: GPU indices (None: all of
    device 0's model). regime: "sustained" or "burst" (gpu timing; None: amk's default).
    objective: "time" (None), "energy" or "edp": what the search minimises (HARNESS.md
    "Objectives"); another name is a Kernel Tuner field to replay (backend "sim:FILE").
    exclude: config ids never to try. progress: True (tqdm or a line),
    False, or a callable(trial, budget, elapsed_s, time_limit_s, status, latency_us,
    best_us). notes: a callable(message, warning) for what `amk loop` prints as notes
    (default: warnings.warn for warnings). verify: the judge of outputs checked outside amk
    (spec "check": "external"), a callable(config_id, prefix) -> (ok, why) where the file
    prefix + buffer name holds each such output after the config's check run (gpu backend;
    written into the folder `outputs`); amk.tune_kernel's verify= goes through it.
    Returns the summary `amk loop` prints (a dict), or a list of them when the devices span
    several models.
    """
    sp = _space(kernel, spec_dirs, target)
    time_s = _duration(time)
    if budget is None:
        budget = 0 if time_s > 0 else 100
    if best is not None and os.fspath(best) == os.fspath(results):
        raise UsageError("results and best name the same file '%s'" % results)
    bar = None
    if callable(progress):
        cb = progress
    else:
        bar = Progress(sp.name, budget, enabled=progress)
        cb = bar
    if notes is None:
        import warnings

        def notes(msg, warning):
            if warning:
                warnings.warn(msg, stacklevel=3)
    try:
        with translate:
            groups = sp._k.tune(shape=sp._shape(shape), backend=backend, strategy=strategy,
                                seed=seed, budget=budget, time_limit_s=time_s, batch=batch,
                                min_gain=min_gain, results=os.fspath(results),
                                best=os.fspath(best) if best else None, resume=resume,
                                jobs=jobs, devices=devices, exclude=list(exclude or []),
                                progress=cb, note=notes, regime=regime,
                                objective=objective, verify=verify,
                                outputs=os.fspath(outputs) if outputs else None)
    finally:
        if bar:
            bar.close()
    for g in groups:
        g.update(strategy=strategy, seed=seed, budget=budget, min_gain=min_gain,
                 results=os.fspath(results), resumed=bool(resume),
                 objective=objective if objective in ("energy", "edp") else "time")
        if not g.get("best_file"):
            g["best_file"] = None
    return groups[0] if len(groups) == 1 else groups


def propose(kernel, shape=None, *, strategy="evolve", seed=1, results=None,
            spec_dirs=None, target=None, objective=None):
    """`amk propose KERNEL`: the next config to try given the trials in `results`, whose
    search minimises `objective` ("time" when None, "energy" or "edp").
    Returns {"config", "config_id", "shape", "params", "source", "exhausted", ...};
    "config" is what amk.evaluate takes."""
    sp = _space(kernel, spec_dirs, target)
    with translate:
        p = sp._k.propose(shape=sp._shape(shape), strategy=strategy, seed=seed,
                          results=os.fspath(results) if results else None,
                          objective=objective)
    p["config"] = json.loads(p["config"])
    return p


def evaluate(config, params=None, *, shape=None, backend="model", results=None,
             spec_dirs=None, target=None, devices=None, regime=None, objective=None):
    """`amk evaluate CONFIG`: one config through the pipeline; its verdict (a dict, as
    `amk evaluate` prints it; the backend defaults to model, as there). config: a config dict {"kernel", "shape", "params"}, a
    propose() answer, JSON text, a file path; or a kernel name / Space with params."""
    if params is not None:
        sp = _space(config, spec_dirs, target)
        text = json.dumps(sp.config(params, shape))
        spec_dirs, target = sp.spec_dirs, sp.target_name
    elif isinstance(config, dict):
        text = json.dumps(config.get("config", config) if "source" in config else config)
    elif isinstance(config, (str, os.PathLike)) and os.path.isfile(os.fspath(config)):
        with open(os.fspath(config)) as f:
            text = f.read()
        doc = json.loads(text)
        if isinstance(doc, dict) and "config" in doc:
            text = json.dumps(doc["config"])
    else:
        text = config
    with translate:
        r = _amk.evaluate(text, spec_dirs=list(spec_dirs or []), backend=backend,
                          target=target, results=os.fspath(results) if results else None,
                          devices=devices, regime=regime, objective=objective)
    v = json.loads(r["verdict"])
    v.setdefault("backend", r["backend"])
    if r["trial"]:
        v["trial"] = r["trial"]
    return v

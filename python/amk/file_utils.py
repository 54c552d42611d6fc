"""kernel_tuner.file_utils' output files, so that Kernel Tuner's examples that store their
results (`from kernel_tuner.file_utils import store_output_file, store_metadata_file`) run
under amk: the T4 results file (what amk's sim backend replays: sim:FILE) and a metadata
file naming amk."""
import datetime
import json
import os
import platform

_INVALIDITY = {"InvalidConfig": "constraints", "CompilationFailedConfig": "compile",
               "RuntimeFailedConfig": "runtime"}


def _t4_result(r, tune_params, objective):
    t = r.get("time")
    ok = isinstance(t, float)
    status = r.get("amk_status")
    return {
        "timestamp": r.get("timestamp"),
        "configuration": {k: r[k] for k in tune_params if k in r},
        "times": {"compilation": r.get("compile_time", 0),
                  "framework": r.get("framework_time", 0),
                  "search_algorithm": r.get("strategy_time", 0),
                  "validation": r.get("verification_time", 0),
                  "runtimes": list(r.get("times", [t] if ok else []))},
        "invalidity": "correct" if ok else ("correctness" if status == "wrong"
                                             else _INVALIDITY.get(t, "runtime")),
        "correctness": 1 if ok else 0,
        "measurements": [{"name": "time", "value": t, "unit": "ms"}] if ok else [],
        "objective": objective,
    }


def store_output_file(output_filename, results, tune_params, objective="time"):
    """Writes results (tune_kernel's) as a T4 results file (.json added when missing)."""
    if not output_filename.endswith(".json"):
        output_filename += ".json"
    doc = {"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"},
           "results": [_t4_result(r, tune_params, objective) for r in results]}
    with open(output_filename, "w") as f:
        json.dump(doc, f, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o))


def store_metadata_file(metadata_filename):
    """Writes what amk knows of this run's environment (not Kernel Tuner's hardware probes)."""
    from . import __version__, devices
    if not metadata_filename.endswith(".json"):
        metadata_filename += ".json"
    doc = {"schema_version": "1.0.0",
           "data": {"tuner": "amk", "amk_version": __version__,
                    "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                    "host": platform.node(), "python": platform.python_version(),
                    "gpus": devices().get("devices", []),
                    "cwd": os.getcwd()}}
    with open(metadata_filename, "w") as f:
        json.dump(doc, f, indent=1)

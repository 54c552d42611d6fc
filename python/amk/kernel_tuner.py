"""amk.tune_kernel: a drop-in for kernel_tuner.tune_kernel (the common case).

    import amk as kernel_tuner
    results, env = kernel_tuner.tune_kernel("vector_add", kernel_string, size, args, tune_params)

How it works: the call becomes a T1 document (Kernel Tuner's benchmark_hub format: the
tune_params, restrictions, problem size, grid divisors, block size names and arguments)
plus the kernel source, which the library's own importer (`amk import --kernel`,
amk_import_t1) turns into a kernel folder; amk then tunes it on the GPU (or replays the
cachefile with simulation_mode=True) and the trials come back in Kernel Tuner's shapes.
Everything but the tuning itself (_tune below: one call into the engine, on whatever backend)
is plain Python and is tested without a GPU. docs/PYTHON.md lists every difference.
"""
import datetime
import json
import math
import os
import re
import shutil
import tempfile
import time
import warnings

from . import datafiles
from .errors import AmkError, InputError, UnsupportedError
from .space import build_folder, Space

# Kernel Tuner's strategy names -> amk's (the search differs; the space and budget do not).
STRATEGIES = {None: "exhaustive", "brute_force": "exhaustive", "random_sample": "random",
              "simulated_annealing": "anneal", "greedy_ils": "hillclimb",
              "greedy_mls": "hillclimb", "mls": "hillclimb", "ils": "hillclimb",
              "basinhopping": "hillclimb", "hillclimb": "hillclimb", "exhaustive": "exhaustive",
              "random": "random", "anneal": "anneal", "genetic_algorithm": "evolve",
              "evolve": "evolve"}

# numpy dtype -> the T1 "Type" of an argument (the importer decides what it supports).
_T1_TYPES = {"float32": "float", "float16": "half", "float64": "double", "int8": "int8",
             "int16": "int16", "int32": "int", "int64": "int64", "uint8": "uint8",
             "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "bool": "bool"}

# What amk's trial statuses are in Kernel Tuner's results and cachefiles.
_KT_ERRORS = {"rejected": "InvalidConfig", "screened": "InvalidConfig",
              "compile_error": "CompilationFailedConfig",
              "compile_crash": "CompilationFailedConfig",
              "compile_timeout": "CompilationFailedConfig", "wrong": "RuntimeFailedConfig",
              "run_error": "RuntimeFailedConfig", "run_timeout": "RuntimeFailedConfig",
              "withheld": "RuntimeFailedConfig", "not_recorded": "InvalidConfig"}


def _unsupported(argument, why):
    return UnsupportedError("tune_kernel: %s is not supported by amk: %s (docs/PYTHON.md)"
                            % (argument, why), argument=argument)


# ---------- arguments -------------------------------------------------------------------


def kernel_params(source, kernel_name):
    """The parameter names of kernel_name's signature in source (None when not found):
    `__global__ void NAME(float *a, const int n)` -> ["a", "n"]."""
    m = re.search(r"\b%s\s*\(([^)]*)\)\s*\{" % re.escape(kernel_name), source)
    if not m:
        return None
    names = []
    for p in m.group(1).split(","):
        p = re.sub(r"\[[^\]]*\]", "", p).strip()
        w = re.findall(r"[A-Za-z_]\w*", p)
        if not w:
            return None
        names.append(w[-1])
    return names


def _is_constant(arr):
    """True when every element of arr is its first (chunk by chunk: a large array of data
    is told apart from a fill at its first chunk, without a temporary of its size)."""
    flat = arr.reshape(-1)
    if flat.size == 0:
        return False
    step = 1 << 22
    return all(bool((flat[i:i + step] == flat[0]).all()) for i in range(0, flat.size, step))


def _le_flat(a):
    """a as a 1-D little-endian C-order array (no copy where it already is one)."""
    import numpy as np
    a = np.ascontiguousarray(a).reshape(-1)
    return a.astype(a.dtype.newbyteorder("<"), copy=False)


def _save(path, flat):
    import numpy as np
    np.save(path, flat, allow_pickle=False)
    return path


def _npy(path, a):
    """Writes a as a 1-D little-endian C-order .npy (the format the library reads)."""
    return _save(path, _le_flat(a))


def _data_file(owner, a, data_dir, file_name):
    """The .npy file of a (owner's content as an amk buffer holds it): for a numpy array
    owner of datafiles.MIN_BYTES or more, the file this process wrote for it before when its
    bytes are still a's (datafiles.py: a call does not write again a large array the script
    passes unchanged), else a new file in data_dir."""
    import numpy as np
    if isinstance(owner, np.ndarray) and a.nbytes >= datafiles.MIN_BYTES:
        return datafiles.files.path(owner, _le_flat(a), file_name, _save)
    return _npy(os.path.join(data_dir, file_name), a)


def _buffer_view(a, label):
    """(T1 Type, array) of an array argument as an amk buffer holds it: float32, float16 and
    int8 as they are; other integer and bool arrays as their little-endian bytes (an int8
    buffer of nbytes elements: a kernel sees the same memory, and integer outputs compare
    exactly, byte by byte). Other element types are refused naming the argument."""
    import numpy as np
    kind = a.dtype.kind
    if a.dtype.name in ("float32", "float16", "int8"):
        return _T1_TYPES[a.dtype.name], a
    if kind in "iub":
        le = np.ascontiguousarray(a).reshape(-1)
        le = le.astype(le.dtype.newbyteorder("<"), copy=False)
        return "int8", le.view(np.int8)
    raise _unsupported(label, "element type %s (amk buffers hold float32, float16 and "
                       "integer data)" % a.dtype)


def _answer_array(a, ans, label):
    """The expected output of argument a as an array of a's type and size (Kernel Tuner's
    checks: an array, castable from a's type, of a's size)."""
    import numpy as np
    if not isinstance(ans, np.ndarray):
        raise _unsupported(label, "an expected result of type %s for an array argument "
                           "(amk compares arrays element-wise; give an array of the "
                           "argument's size)" % type(ans).__name__)
    if not np.can_cast(a.dtype, ans.dtype):
        raise TypeError("tune_kernel: %s has dtype %s, not compatible with the kernel output's "
                        "%s" % (label, ans.dtype, a.dtype))
    if ans.size != a.size:
        raise TypeError("tune_kernel: %s has %d elements, the kernel argument %d" %
                        (label, ans.size, a.size))
    return ans.reshape(-1).astype(a.dtype, copy=False)


def describe_arguments(arguments, answer, names, data_dir, verify=False):
    """T1 Arguments for Kernel Tuner's argument list, plus the files the library's importer
    copies into the kernel folder: (arguments, data, answers, external), data and answers
    mapping an argument's name to an .npy file (_data_file: the process's file of a numpy
    array it wrote before, else written now), external the indices of the outputs a verify
    function judges (verify=True).

    Outputs: the arguments whose answer is not None, or (no answer) the arrays whose content
    is one constant (Kernel Tuner's numpy.zeros output convention); an output whose initial
    content is not one constant is ReadWrite (the kernel may read it) and keeps its bytes.
    Inputs: a constant fill (FillType Constant), else the array itself as the buffer's data.
    answer[i] becomes the answer file of output i (the correctness reference of that output).
    With verify (Kernel Tuner's verify=), answer is only handed to that function: the outputs
    are ReadWrite with their initial content (Kernel Tuner copies an output's original
    array to the device before the check run) and no answer file, and a scalar may have
    an answer entry.
    numpy scalars are Scalar arguments of their type (int32: a value; float32, float64,
    uint32, int64, uint64: the spec's scalars)."""
    import numpy as np
    if answer is not None and len(answer) != len(arguments):
        raise InputError("tune_kernel: answer has %d entries for %d arguments" %
                         (len(answer), len(arguments)))
    out, data, answers, external = [], {}, {}, []
    for i, a in enumerate(arguments):
        name = names[i] if names and i < len(names) else "arg%d" % i
        label = "arguments[%d] (%s)" % (i, name)
        if isinstance(a, np.ndarray):
            owner, constant = a, _is_constant(a)
            if answer is not None:
                is_out = answer[i] is not None
            else:
                is_out = constant
            if is_out and verify:
                external.append(i)
            elif is_out and answer is not None and answer[i] is not None:
                ans = _answer_array(a, answer[i], "answer[%d] (%s)" % (i, name))
                answers[name] = _data_file(answer[i], _buffer_view(ans, label)[1], data_dir,
                                           "%s_answer.npy" % name)
            t, a = _buffer_view(a, label)
            if a is not owner:  # integers as bytes: 1s in int32 are not one byte value
                constant = _is_constant(a)
            d = {"Name": name, "Type": t, "Size": int(a.size), "MemoryType": "Vector"}
            if is_out and constant and not verify:
                d.update(AccessType="WriteOnly", FillType="Constant",
                         FillValue=a.reshape(-1)[0].item(), Output=1)
            elif is_out and constant:
                d.update(AccessType="ReadWrite", FillType="Constant",
                         FillValue=a.reshape(-1)[0].item(), Output=1)
            elif is_out:
                d.update(AccessType="ReadWrite", Output=1)
                data[name] = _data_file(owner, a, data_dir, "%s.npy" % name)
            elif constant:
                d.update(AccessType="ReadOnly", FillType="Constant",
                         FillValue=a.reshape(-1)[0].item())
            else:
                d.update(AccessType="ReadOnly")
                data[name] = _data_file(owner, a, data_dir, "%s.npy" % name)
            out.append(d)
        elif isinstance(a, (np.generic, int, float)):
            if answer is not None and answer[i] is not None and not verify:
                raise _unsupported("answer[%d] (%s)" % (i, name), "an expected value of a "
                                   "scalar argument (a kernel cannot change it)")
            v = np.asarray(a)
            if isinstance(a, bool) or v.dtype.kind not in "iuf":
                raise _unsupported(label, "a scalar of type %s" % v.dtype)
            if isinstance(a, (int, float)) and not isinstance(a, np.generic):
                v = v.astype(np.int32 if isinstance(a, int) else np.float32)
            out.append({"Name": name, "Type": _T1_TYPES.get(v.dtype.name, v.dtype.name),
                        "MemoryType": "Scalar", "AccessType": "ReadOnly",
                        "FillValue": v.item()})
        else:
            raise _unsupported(label, "an argument of type %s (amk takes numpy arrays and "
                               "numpy scalars)" % type(a).__name__)
    return out, data, answers, external


def verify_judge(verify, answer, arguments, names, external, atol):
    """The judge amk's evaluator calls, in this process, for each config whose run passed
    amk's own checks: Kernel Tuner's verify(answer, gpu_result, atol=atol), gpu_result being
    what Kernel Tuner hands it: each output the function judges as the run worker wrote it
    after the config's check run (the files prefix + name, a numpy array of the argument's
    dtype and shape), without answer every other array as given (amk's inputs: the kernel
    does not write them), and None for the rest (scalars; arrays whose answer is None).
    Returns judge(config_id, prefix) -> (ok, why): ok None when it cannot judge (no file);
    verify raising, or returning something that is not a truth value, is a wrong config
    whose why names it."""
    import numpy as np

    def judge(config_id, prefix):
        gpu_result = []
        for i, a in enumerate(arguments):
            if i in external:
                path = prefix + names[i]
                try:
                    raw = np.fromfile(path, dtype=np.uint8)
                except OSError as e:
                    return None, "no output %s for verify(): %s" % (names[i], e)
                if raw.size != a.nbytes:
                    return None, "output %s: %d bytes, the argument has %d" % (
                        names[i], raw.size, a.nbytes)
                gpu_result.append(raw.view(a.dtype).reshape(a.shape))
            elif answer is None and isinstance(a, np.ndarray):
                gpu_result.append(a.copy())
            else:
                gpu_result.append(None)
        try:
            ok = verify(answer, gpu_result, atol=atol)
        except Exception as e:  # noqa: B902: a failing verify is that config's verdict
            return False, "verify() raised %s: %s" % (type(e).__name__, e)
        try:
            ok = bool(ok)
        except Exception as e:  # noqa: B902
            return False, "verify() returned %s, not a truth value (%s)" % (
                type(ok).__name__, e)
        return ok, "" if ok else "verify() returned False"
    return judge


def check_verify(verify, answer, atol):
    """Kernel Tuner calls verify(answer, gpu_result, atol=atol): a verify that cannot be
    called so is a TypeError naming it, before anything runs."""
    import inspect
    if not callable(verify):
        raise TypeError("tune_kernel: verify must be a function verify(answer, gpu_result, "
                        "atol=None), got %s" % type(verify).__name__)
    try:
        sig = inspect.signature(verify)
    except (TypeError, ValueError):
        return  # a builtin without a signature: it is called as it is
    try:
        sig.bind(answer, [], atol=atol)
    except TypeError as e:
        raise TypeError("tune_kernel: verify%s cannot be called as verify(answer, gpu_result, "
                        "atol=...): %s" % (sig, e)) from None


def declares_constant(source, symbol):
    """True when source declares a __constant__ variable called symbol."""
    return re.search(r"__constant__[^;{]*\b%s\b" % re.escape(symbol), source) is not None


def describe_cmem(cmem_args, data_dir, taken=()):
    """T1 Arguments of constant memory (MemType Constant), in cmem_args' order, plus
    (data, symbols): the .npy file of each one that is not one constant, and the __constant__
    symbol of each T1 argument. Kernel Tuner copies cmem_args into the symbols only (the
    kernel does not take them as arguments): finish_spec takes them out of the args. A symbol
    that is also an argument's name gets another buffer name."""
    import numpy as np
    out, data, symbols = [], {}, {}
    for sym, a in (cmem_args or {}).items():
        owner = a
        t, a = _buffer_view(np.asarray(a), "cmem_args[%r]" % sym)
        name = sym if sym not in taken else "amk_cmem_%s" % sym
        d = {"Name": name, "Type": t, "Size": int(a.size), "MemoryType": "Vector",
             "AccessType": "ReadOnly", "MemType": "Constant"}
        if _is_constant(a):
            d.update(FillType="Constant", FillValue=a.reshape(-1)[0].item())
        else:
            data[name] = _data_file(owner, a, data_dir, "cmem_%s.npy" % sym)
        symbols[name] = sym
        out.append(d)
    return out, data, symbols


def finish_spec(folder, symbols, atol, external=()):
    """What T1 cannot say, written into the imported spec.json: the cmem_args buffers live in
    constant memory only (memory "constant", symbol; not kernel arguments), Kernel
    Tuner's atol is the tolerance's atol when an answer is given, and the outputs a verify
    function judges (names in external) are "check": "external" (never compared by amk).
    The library loads the result (Space) and refuses it if it is wrong."""
    path = os.path.join(folder, "spec.json")
    with open(path) as f:
        spec = json.load(f)
    for b in spec.get("buffers", []):
        if b["name"] in symbols:
            b["memory"] = "constant"
            b["symbol"] = symbols[b["name"]]
        if b["name"] in external:
            b["check"] = "external"
    for section in (spec, spec.get("reference") or {}):
        if "args" in section:
            section["args"] = [a for a in section["args"] if a not in symbols]
    if atol is not None:
        spec.setdefault("tolerance", {})["atol"] = float(atol)
    tmp = path + ".tmp.%d" % os.getpid()
    with open(tmp, "w") as f:
        json.dump(spec, f, indent=1)
    os.replace(tmp, path)
    return spec


def _expr_list(value, what):
    if value is None:
        return None
    if callable(value):
        raise _unsupported(what, "a callable (give the divisor as a list of parameter names "
                           "or expression strings)")
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def kernel_specification(kernel_name, problem_size, arguments, cmem, grid_div,
                         block_size_names, tune_params):
    """The T1 KernelSpecification of a tune_kernel call."""
    if callable(problem_size):
        raise _unsupported("problem_size", "a callable")
    ps = [problem_size] if isinstance(problem_size, (int, str)) or hasattr(problem_size, "item") \
        else list(problem_size)
    names = block_size_names or ["block_size_x", "block_size_y", "block_size_z"]
    grid_div = list(grid_div)
    for i, p in enumerate(ps):
        if isinstance(p, str):
            # A tuning parameter as the size (Kernel Tuner: the grid is its value divided by
            # the grid divisors). The importer takes integer sizes, so the dim is the lcm L
            # of the param's values and the divisors gain L // param: cdiv(L, (L // v) * D)
            # is cdiv(v, D) exactly.
            if p not in tune_params:
                raise _unsupported("problem_size", "%r: sizes given by expressions (a "
                                   "tuning parameter's name is supported)" % p)
            lcm = 1
            for v in tune_params[p]:
                lcm = lcm * v // math.gcd(lcm, v)
            if i >= 3 or lcm > 2**31 - 1:
                raise _unsupported("problem_size", "%r: too large a size" % p)
            div = grid_div[i] if grid_div[i] is not None else (
                [names[i]] if i < len(names) and names[i] in tune_params else [])
            grid_div[i] = ["%d // %s" % (lcm, p)] + list(div)
            ps[i] = lcm
        elif not float(p).is_integer():
            raise _unsupported("problem_size", "%r: sizes given by expressions" % (p,))
    if len(names) > 3:
        raise InputError("tune_kernel: block_size_names has more than 3 names")
    ks = {"Language": "CUDA", "KernelName": kernel_name,
          "ProblemSize": [int(p) for p in ps], "SharedMemory": 0,
          "Arguments": arguments + cmem}
    # Kernel Tuner's block: the named params, 256 x 1 x 1 where one is not tuned.
    local = {}
    for ax, n, dv in zip("XYZ", list(names) + [None] * (3 - len(names)), (256, 1, 1)):
        local[ax] = n if n is not None and n in tune_params else str(dv)
    ks["LocalSize"] = local
    for ax, div in zip("XYZ", grid_div):
        if div is not None:
            ks["GridDiv" + ax] = div
    return ks


def kernel_prelude(tune_params, block_size_names, defines):
    """What Kernel Tuner defines in the source besides the tuned params: kernel_tuner, the
    block size names it does not tune (their defaults 256/1/1: what the launch uses), and
    `defines` with constant values."""
    lines = ["#define kernel_tuner 1"]
    names = block_size_names or ["block_size_x", "block_size_y", "block_size_z"]
    for n, dv in zip(names, (256, 1, 1)):
        if n not in tune_params:
            lines.append("#define %s %d" % (n, dv))
    for k, v in (defines or {}).items():
        if callable(v):
            raise _unsupported("defines[%r]" % k, "a callable value")
        lines.append("#define %s %s" % (k, v))
    return "\n".join(lines) + "\n"


# ---------- restrictions -----------------------------------------------------------------


def split_restrictions(restrictions):
    """(strings for the engine, callables for Python) from Kernel Tuner's restrictions."""
    if restrictions is None:
        return [], []
    if callable(restrictions):
        return [], [restrictions]
    if isinstance(restrictions, str):
        return [restrictions], []
    strs, fns = [], []
    for r in restrictions:
        (fns if callable(r) else strs).append(r)
    return strs, fns


def _call_restriction(fn, params):
    """Kernel Tuner calls a restriction with the config as a dict; older scripts take the
    values as a list in tune_params order."""
    try:
        return bool(fn(dict(params)))
    except (TypeError, KeyError):
        return bool(fn(list(params.values())))


def excluded_by(space, fns, problem_size=None):
    """Config ids of the space's valid configs that a callable restriction refuses."""
    if not fns:
        return []
    out = []
    for cid, params in space.configs(ids=True):
        if not all(_call_restriction(f, params) for f in fns):
            out.append(cid)
    return out


# ---------- cachefiles -------------------------------------------------------------------


def cache_path(cache):
    """Kernel Tuner's cachefile name: NAME.json (a gzipped .json.gz is read as it is)."""
    cache = os.fspath(cache)
    return cache if cache.endswith((".json", ".json.gz")) else cache + ".json"


def _ps_list(ps):
    """A problem size as a list: ints, or a tuning parameter's name as it is."""
    if isinstance(ps, (int, str)) or hasattr(ps, "item"):
        ps = [ps]
    return [p if isinstance(p, str) else int(p) for p in ps]


def cache_key(tune_params, params):
    return ",".join(str(params[k]) for k in tune_params)


def read_cache(path, kernel_name, problem_size, tune_params, device_name=None):
    """A Kernel Tuner cachefile's entries (dict key -> entry), {} when the file does not
    exist; ValueError (as Kernel Tuner) when it holds another kernel, size or space."""
    if not os.path.exists(path):
        return {}
    if path.endswith(".gz"):
        import gzip
        with gzip.open(path, "rt") as f:
            doc = json.load(f)
    else:
        with open(path) as f:
            text = f.read().strip()
        if text.endswith(","):  # Kernel Tuner's file while it is still being written
            text = text[:-1] + "}}"
        doc = json.loads(text)
    if doc.get("kernel_name") != kernel_name:
        raise ValueError("Cannot load cache which contains results for different kernel "
                         "(cache: %s, tuning: %s)" % (doc.get("kernel_name"), kernel_name))
    if "problem_size" in doc and _ps_list(doc["problem_size"]) != _ps_list(problem_size):
        raise ValueError("Cannot load cache which contains results for different problem_size")
    if doc.get("tune_params_keys") != list(tune_params):
        raise ValueError("Cannot load cache which contains results obtained with different "
                         "tunable parameters")
    if device_name and doc.get("device_name") not in (None, device_name):
        raise ValueError("Cannot load cache which contains results for different device "
                         "(cache: %s, tuning: %s)" % (doc.get("device_name"), device_name))
    return dict(doc.get("cache", {}))


def write_cache(path, entries, kernel_name, problem_size, tune_params, device_name,
                objective="time"):
    """Writes a Kernel Tuner cachefile (the benchmark_hub format) atomically."""
    doc = {"device_name": device_name, "kernel_name": kernel_name,
           "problem_size": _ps_list(problem_size),
           "tune_params_keys": list(tune_params),
           "tune_params": {k: list(v) for k, v in tune_params.items()},
           "objective": objective, "cache": entries}
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(doc, f, default=_json_default)
    os.replace(tmp, path)


def _json_default(o):
    if hasattr(o, "item"):
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(type(o).__name__)


# ---------- results ---------------------------------------------------------------------


def _kt_timestamp(t):
    if not t:
        return None
    try:
        dt = datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ")
        return dt.replace(tzinfo=datetime.timezone.utc).isoformat(sep=" ")
    except ValueError:
        return t


def row_to_result(row, tune_params):
    """One results.tsv row as a Kernel Tuner result (times in ms); failures carry Kernel
    Tuner's error name in "time"; amk's own status and config id ride along."""
    params = row["params"] if isinstance(row["params"], dict) else json.loads(row["params"])
    r = {k: params[k] for k in tune_params if k in params}
    status = row["status"]
    lat = row["latency_us"]
    if status == "ok" and lat is not None and lat == lat:
        r["time"] = lat / 1000.0
        r["times"] = [lat / 1000.0]
    else:
        r["time"] = _KT_ERRORS.get(status, "RuntimeFailedConfig")
    cm = row.get("compile_ms")
    r["compile_time"] = cm if cm is not None and cm == cm else 0.0
    r["verification_time"] = 0
    r["benchmark_time"] = 0
    r["strategy_time"] = 0
    r["framework_time"] = 0
    r["timestamp"] = _kt_timestamp(row.get("time"))
    r["amk_status"] = status
    r["amk_config_id"] = row["config_id"]
    if row.get("note"):
        r["amk_note"] = row["note"]
    return r


def output_changing_params(results, reference, tune_params):
    """The params that seem to change what the kernel computes, when no answer was given:
    every config wrong against the reference config (amk's check without an answer) differs
    from it in these params, and every correct config agrees with it in them. [] when the
    wrong configs have no such param in common (a real bug looks like that) or none is
    wrong. Kernel Tuner's convolution example tunes its filter size, for one."""
    wrong = [r for r in results if r.get("amk_status") == "wrong"]
    ok = [r for r in results if r.get("amk_status") == "ok"]
    if not wrong or not reference:
        return []
    names = [k for k in tune_params if k in reference and len(tune_params[k]) > 1]
    fixed = [k for k in names if all(r.get(k) == reference[k] for r in ok)]
    # The params left out must be shown harmless: some correct config moves one of them.
    if not fixed or len(fixed) == len(names):
        return []
    if not all(any(r.get(k) != reference[k] for k in fixed) for r in wrong):
        return []
    return fixed


# ---------- params that change what the kernel computes ----------------------------------
# Without answer=, amk checks each config against the kernel at the reference config. A
# param such as the convolution example's filter size changes what is computed: tuned
# against one reference, every other value is `wrong`. Before tuning, a probe moves one
# param at a time away from the reference config; the params whose every move is wrong,
# while a move of another param is correct, are named in the spec's reference.vary, so each
# config is checked against the reference config with the same values of them.


def probe_values(tune_params, default, per_param=2):
    """{param: values} of the probe space: the reference config's value and up to per_param
    others (its neighbour in the list, then the farthest)."""
    out = {}
    for k, vals in tune_params.items():
        d = vals.index(default[k])
        others = []
        for i in (d + 1 if d + 1 < len(vals) else d - 1, 0 if d == len(vals) - 1 else
                  len(vals) - 1):
            if 0 <= i < len(vals) and i != d and vals[i] not in others:
                others.append(vals[i])
        out[k] = [default[k]] + others[:per_param]
    return out


def probe_restrictions(values, default):
    """At most one param away from the reference config: one condition per pair."""
    names = [k for k, v in values.items() if len(v) > 1]
    return ["%s == %d or %s == %d" % (a, default[a], b, default[b])
            for i, a in enumerate(names) for b in names[i + 1:]]


def output_params(default, probed):
    """The params whose every probed move (a config that differs from the reference config
    in that param only) came back wrong, in probe order; [] unless some move of another
    param came back ok (the check can pass away from the reference config: otherwise the
    kernel, or the reference config itself, is what fails). probed: [(params, status)]."""
    moves = {}
    for params, status in probed:
        moved = [k for k in default if params.get(k) != default[k]]
        if len(moved) == 1 and status in ("ok", "wrong"):
            moves.setdefault(moved[0], []).append(status)
    found = [k for k in default if k in moves and all(x == "wrong" for x in moves[k])]
    ok_elsewhere = any("ok" in st for k, st in moves.items() if k not in found)
    return found if ok_elsewhere else []


def _probe_statuses(space, backend, device, exclude, results):
    """[(params, status)] of every config of the probe space not in exclude, run on backend
    (the model backend checks nothing: every config is ok there)."""
    n = space.count() - len(exclude)
    if n <= 0:
        return []
    summary = _tune(space, backend, "exhaustive", 1, n, 0.0, results, exclude, device, True)
    if not summary["trials"]:
        return []
    rows = rows_of_run(results, summary["first_trial"], summary["last_trial"])
    return [(row_to_result(r, space.params), r["status"]) for r in rows]


def probe_output_params(kernel_name, tune_params, strs, fns, ks, kfile, default, data,
                        symbols, backend, device, work):
    """The params of a tune_kernel call without answer= that change what the kernel
    computes (output_params of a probe run on backend; docs/PYTHON.md)."""
    values = probe_values(tune_params, default)
    if all(len(v) == 1 for v in values.values()):
        return []
    remove = None
    try:
        folder, remove = build_folder(kernel_name, values, list(strs) + probe_restrictions(
            values, default), default, ks, kfile, data, link_data=True)
        finish_spec(folder, symbols, None)
        space = Space(folder)
        probed = _probe_statuses(space, backend, device, excluded_by(space, fns),
                                 os.path.join(work, "probe.tsv"))
    except AmkError as e:
        # the tuning itself reports what is wrong with the call; it only lacks the probe
        warnings.warn("tune_kernel: the probe for params that change what the kernel "
                      "computes failed (%s); tuning without it" % e, stacklevel=4)
        return []
    finally:
        if remove:
            remove()
    return output_params(default, probed)


def add_metrics(results, metrics):
    """Kernel Tuner's metrics: functions of a result (its params and "time" in ms), in order,
    each seeing the ones before; computed for the configs that ran correctly."""
    for r in results:
        if not isinstance(r.get("time"), float):
            continue
        for name, fn in (metrics or {}).items():
            r[name] = fn(r)


def cached_to_result(entry, tune_params):
    r = dict(entry)
    r.setdefault("amk_status", "cached")
    return r


def rows_of_run(results_path, first_trial, last_trial):
    """The rows [first_trial, last_trial] of results_path, as dicts."""
    from . import _amk
    from .errors import translate
    with translate:
        cols, _ = _amk.read_results(results_path)
    n = len(cols["trial"])
    rows = [{k: cols[k][i] for k in cols} for i in range(n)]
    return [r for r in rows if first_trial <= r["trial"] <= last_trial]


# ---------- the call ---------------------------------------------------------------------

_KT_OPTIONS = ("grid_div_x", "grid_div_y", "grid_div_z", "restrictions", "answer", "atol",
               "verify", "verbose", "lang", "device", "platform", "smem_args", "cmem_args",
               "texmem_args", "compiler", "compiler_options", "defines", "log", "iterations",
               "block_size_names", "quiet", "strategy", "strategy_options", "cache", "metrics",
               "simulation_mode", "observers", "objective", "objective_higher_is_better")


def _check_unsupported(o):
    """Options amk cannot honour: an UnsupportedError naming the first one."""
    if o["lang"] not in (None, "CUDA", "cuda", "cupy", "nvcuda", "NVCUDA", "CuPy"):
        raise _unsupported("lang=%r" % o["lang"], "amk runs CUDA kernels (NVRTC)")
    if o["smem_args"]:
        raise _unsupported("smem_args", "dynamic shared memory sizes from Python")
    if o["texmem_args"]:
        raise _unsupported("texmem_args", "texture memory")
    for k, f in (o["metrics"] or {}).items():
        if not callable(f):
            raise _unsupported("metrics[%r]" % k, "a metric that is not a function of the "
                               "result (amk measures time only)")
    if o["observers"]:
        raise _unsupported("observers", "observers (amk measures time only)")
    if o["objective"] not in (None, "time"):
        raise _unsupported("objective=%r" % o["objective"], "amk minimises time")
    if o["objective_higher_is_better"]:
        raise _unsupported("objective_higher_is_better", "amk minimises time")
    if o["compiler"] not in (None, "nvrtc"):
        raise _unsupported("compiler=%r" % o["compiler"], "amk compiles with NVRTC")
    for opt in o["compiler_options"] or []:
        if not re.fullmatch(r"-std=c\+\+(11|14|17)|--std=c\+\+(11|14|17)", opt):
            raise _unsupported("compiler_options %r" % opt, "amk's compiler options are its "
                               "own (NVRTC, C++17); only -std=c++11/14/17 are accepted")
    if o["platform"] not in (None, 0):
        raise _unsupported("platform", "OpenCL platforms")
    if o["strategy"] not in STRATEGIES:
        raise _unsupported("strategy=%r" % o["strategy"], "known: %s" % ", ".join(
            sorted(k for k in STRATEGIES if k)))


def _budget(strategy_options, n_valid):
    """(budget, time limit in s) from Kernel Tuner's strategy_options."""
    so = dict(strategy_options or {})
    budget, time_s = 0, 0.0
    if "max_fevals" in so:
        budget = int(so.pop("max_fevals"))
    if "time_limit" in so:
        time_s = float(so.pop("time_limit"))
    if "fraction" in so:
        budget = max(1, int(round(float(so.pop("fraction")) * n_valid)))
    so.pop("seed", None)  # handled by the caller
    if so:
        raise _unsupported("strategy_options[%r]" % sorted(so)[0],
                           "amk takes max_fevals, time_limit, fraction and seed")
    return budget, time_s


def _tune(space, backend, strategy, seed, budget, time_s, results, exclude, device, quiet,
          verify=None, outputs=None):
    """The one path that runs kernels (on the GPU, or replays a cachefile): amk.loop. The
    summary's wall_s is the whole call (the engine's start-up and shutdown: its elapsed_s
    counts from the search's start)."""
    from .search import loop
    t0 = time.monotonic()
    summary = loop(space, backend=backend, strategy=strategy, seed=seed, budget=budget,
                   time=time_s, results=results, best=None, exclude=exclude,
                   devices=None if device is None else [device], progress=not quiet,
                   notes=lambda msg, warning: warning and warnings.warn(msg, stacklevel=4),
                   verify=verify, outputs=outputs)
    summary["wall_s"] = time.monotonic() - t0
    return summary


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params,
                grid_div_x=None, grid_div_y=None, grid_div_z=None, restrictions=None,
                answer=None, atol=1e-6, verify=None, verbose=False, lang=None, device=0,
                platform=0, smem_args=None, cmem_args=None, texmem_args=None, compiler=None,
                compiler_options=None, defines=None, log=None, iterations=7,
                block_size_names=None, quiet=False, strategy=None, strategy_options=None,
                cache=None, metrics=None, simulation_mode=False, observers=None,
                objective=None, objective_higher_is_better=None, **amk_options):
    """Kernel Tuner's tune_kernel, run by amk. Returns (results, env) as Kernel Tuner does.

    amk_options (not Kernel Tuner's): amk_backend ("gpu" by default; "model" runs the cost
    model instead, e.g. to check a script without a GPU), amk_results (keep the trials in
    this results.tsv; default: a temporary file), amk_seed (search seed, default 1),
    amk_spec_dir (a new folder: a copy of the kernel folder amk generated, spec.json and the
    data and answer files included, for `amk loop --spec-dir` or a look at what was tuned),
    amk_vary (the params that change what the kernel computes, which the check without
    answer= takes from each config; default: found by a probe run; [] for none).
    An argument amk cannot honour raises amk.UnsupportedError naming it.
    """
    o = dict(zip(_KT_OPTIONS, (grid_div_x, grid_div_y, grid_div_z, restrictions, answer, atol,
                               verify, verbose, lang, device, platform, smem_args, cmem_args,
                               texmem_args, compiler, compiler_options, defines, log,
                               iterations, block_size_names, quiet, strategy,
                               strategy_options, cache, metrics, simulation_mode, observers,
                               objective, objective_higher_is_better)))
    backend = amk_options.pop("amk_backend", None)
    keep_results = amk_options.pop("amk_results", None)
    seed = int(amk_options.pop("amk_seed", (strategy_options or {}).get("seed", 1) or 1))
    keep_spec = amk_options.pop("amk_spec_dir", None)
    amk_vary = amk_options.pop("amk_vary", None)
    if amk_options:
        raise TypeError("tune_kernel() got an unexpected keyword argument '%s'" %
                        sorted(amk_options)[0])
    _check_unsupported(o)
    if verify is not None and not simulation_mode:
        check_verify(verify, answer, atol)
    if not isinstance(tune_params, dict) or not tune_params:
        raise InputError("tune_kernel: tune_params must be a non-empty dict")
    for k, vals in tune_params.items():
        for v in vals:
            if isinstance(v, bool) or not isinstance(v, int) and not (
                    hasattr(v, "dtype") and v.dtype.kind in "iu"):
                raise _unsupported("tune_params[%r] value %r" % (k, v),
                                   "amk passes params to the compiler as integer #defines")
    tune_params = {k: [int(v) for v in vals] for k, vals in tune_params.items()}

    # The kernel source: text, or a file name.
    if callable(kernel_source):
        raise _unsupported("kernel_source", "a code generator (callable)")
    if isinstance(kernel_source, (list, tuple)):
        if len(kernel_source) != 1:
            raise _unsupported("kernel_source", "several files (give the kernel's file only)")
        kernel_source = kernel_source[0]
    src = os.fspath(kernel_source)
    kernel_file_name = "%s.cu" % kernel_name
    if "\n" not in src and os.path.isfile(src):
        kernel_file_name = os.path.basename(src)
        with open(src) as f:
            src = f.read()

    strs, fns = split_restrictions(restrictions)
    work = tempfile.mkdtemp(prefix="amk-tune-")
    remove = None
    try:
        data_dir = os.path.join(work, "data")
        os.mkdir(data_dir)
        args, cmem, data, answers, symbols, external = [], [], {}, {}, {}, []
        judge = None
        if not simulation_mode:
            names = kernel_params(src, kernel_name)
            args, data, answers, external = describe_arguments(
                arguments, answer, names, data_dir, verify=verify is not None)
            cmem, cdata, symbols = describe_cmem(cmem_args, data_dir,
                                                 taken=[a["Name"] for a in args])
            data.update(cdata)
            for name, sym in symbols.items():
                if not declares_constant(src, sym):
                    raise InputError("tune_kernel: cmem_args[%r]: the kernel declares no "
                                     "__constant__ %s" % (sym, sym))
        grid = [_expr_list(g, "grid_div_%s" % ax)
                for g, ax in ((grid_div_x, "x"), (grid_div_y, "y"), (grid_div_z, "z"))]
        ks = kernel_specification(kernel_name, problem_size, args, cmem, grid,
                                  block_size_names, tune_params)
        if simulation_mode:
            # Replay runs nothing: the space and the problem size are all it needs.
            ks, kfile = {"ProblemSize": ks["ProblemSize"]}, None
        else:
            kfile = os.path.join(work, kernel_file_name)
            with open(kfile, "w") as f:
                f.write(kernel_prelude(tune_params, block_size_names, defines))
                f.write("#line 1 \"%s\"\n" % kernel_file_name)
                f.write(src)
        default = None if simulation_mode else reference_config(
            kernel_name, tune_params, strs, fns, ks["ProblemSize"], block_size_names)
        # with verify= every output is the function's to judge: amk compares none of them.
        # Brute force runs every config of the probe anyway: the probe's rule is applied to
        # the run itself (_vary_after_run), one engine session instead of two.
        defer = amk_vary is None and not simulation_mode and not (answers or external) and \
            _brute_force(strategy, strategy_options) and \
            not (cache and os.path.exists(cache_path(cache)))
        probe_t0 = time.monotonic()
        vary = [] if defer else _vary(
            amk_vary, tune_params, simulation_mode, answers or external,
            lambda: probe_output_params(
                kernel_name, tune_params, strs, fns, ks, kfile, default, data, symbols,
                backend or os.environ.get("AMK_TUNE_KERNEL_BACKEND") or "gpu", device, work))
        probed = not defer and amk_vary is None and not simulation_mode and \
            not (answers or external)
        probe_s = time.monotonic() - probe_t0 if probed else 0.0
        folder, remove = _import(kernel_name, tune_params, strs, ks, kfile, default, data,
                                 answers, symbols, vary)
        if not simulation_mode:
            finish_spec(folder, symbols, atol if answers else None,
                        [args[i]["Name"] for i in external])
            if verify is not None:
                judge = verify_judge(verify, answer, arguments,
                                     [a["Name"] for a in args], external, atol)
        if keep_spec:
            shutil.copytree(folder, os.fspath(keep_spec))
        space = Space(folder)

        cpath = cache_path(cache) if cache else None
        if simulation_mode:
            if not cpath or not os.path.exists(cpath):
                raise InputError("tune_kernel: simulation_mode needs an existing cache file "
                                 "(cache=%r)" % cache)
            backend = "sim:" + cpath
        # AMK_TUNE_KERNEL_BACKEND: run unchanged scripts on another backend ("model": no GPU)
        backend = backend or os.environ.get("AMK_TUNE_KERNEL_BACKEND") or "gpu"
        device_name = None
        if backend == "gpu" and cpath and os.path.exists(cpath):
            # a cachefile of another device is refused before anything runs; otherwise the
            # run names the device (asking first costs a run worker and a CUDA start-up)
            from . import devices
            devs = devices()["devices"]
            device_name = next((d["name"] for d in devs if d["index"] == device), None)
        cached = read_cache(cpath, kernel_name, problem_size, tune_params,
                            device_name) if cpath and not simulation_mode else {}

        exclude = excluded_by(space, fns)
        n_valid = space.count() - len(exclude)
        known = []
        for key, entry in cached.items():
            try:
                known.append(space.config_id({k: entry[k] for k in tune_params}))
            except (AmkError, KeyError):
                pass
        budget, time_s = _budget(strategy_options, n_valid)
        results_path = keep_results or os.path.join(work, "results.tsv")
        if n_valid > 0 and len(set(known)) >= n_valid and \
                not set(c for c, _ in space.configs(ids=True)) - set(exclude + known):
            # every config is in the cachefile: nothing to tune (as Kernel Tuner)
            summary = {"trials": 0, "device": device_name, "backend": backend, "best": None}
        else:
            outputs = os.path.join(work, "outputs")
            os.mkdir(outputs)
            summary = _tune(space, backend, STRATEGIES[strategy], seed, budget, time_s,
                            results_path, exclude + known, device, quiet, judge,
                            outputs if judge else None)
        rows = rows_of_run(results_path, summary["first_trial"], summary["last_trial"]) \
            if summary["trials"] else []
        if defer and rows:
            found = _vary_after_run(rows, default, tune_params)
            if found:
                # the probe's verdict, from the run: re-check what the reference changes for
                rows, summary = _rerun_varied(
                    found, rows, summary, default, tune_params,
                    lambda v: _import(kernel_name, tune_params, strs, ks, kfile, default,
                                      data, answers, symbols, v),
                    lambda folder: finish_spec(folder, symbols, None),
                    lambda sp, exclude: _tune(sp, backend, "exhaustive", seed, 0, 0.0,
                                              results_path, exclude, device, quiet),
                    results_path, keep_spec)
                vary = found
        results = [cached_to_result(e, tune_params) for e in cached.values()]
        results += [row_to_result(r, tune_params) for r in rows]
        add_metrics(results[len(cached):], metrics)
        suspects = output_changing_params(results[len(cached):], default, tune_params) \
            if not answers and verify is None else []
        if suspects:
            warnings.warn(
                "tune_kernel: every config that failed the check as wrong differs from the "
                "reference config in %s, and every correct one agrees with it there: without "
                "answer=, outputs are compared with the reference config's (%s), so if these "
                "params change what the kernel computes, tune each of their values as its own "
                "problem or pass answer= (docs/PYTHON.md)" % (
                    ", ".join(suspects),
                    ", ".join("%s=%s" % (k, default[k]) for k in suspects)), stacklevel=2)
        device_name = summary["device"] if device_name is None else device_name
        if cpath and not simulation_mode and summary["trials"]:
            entries = dict(cached)
            for r in results[len(cached):]:
                entries[cache_key(tune_params, r)] = {
                    k: v for k, v in r.items() if not k.startswith("amk_")}
            write_cache(cpath, entries, kernel_name, problem_size, tune_params, device_name)
        env = _env(kernel_name, src, problem_size, tune_params, o, summary, device_name,
                   backend, results_path if keep_results else None)
        env["amk_vary"] = vary
        # where the call's time went (docs/PYTHON.md): the engine's calls whole, the probe's
        env["amk_engine_wall_s"] = summary.get("wall_s")
        env["amk_probe_s"] = probe_s
        if verbose and not quiet:
            for r in results:
                print(", ".join("%s=%s" % (k, v) for k, v in r.items()
                                if k in tune_params or k == "time"))
        return results, env
    finally:
        if remove:
            remove()
        shutil.rmtree(work, ignore_errors=True)


def reference_config(kernel_name, tune_params, strs, fns, problem_size, block_size_names):
    """The config amk checks the others against (the imported kernel's default): the first
    valid one, in amk's order, that the callable restrictions accept and whose block has at
    most 1024 threads. Kernel Tuner has no default; the first values need not be valid."""
    folder, remove = build_folder(kernel_name, tune_params, strs, None,
                                  {"ProblemSize": problem_size})
    try:
        names = block_size_names or ["block_size_x", "block_size_y", "block_size_z"]
        space, limit, seen = Space(folder), 1024, 0
        while True:  # the first configs in amk's order: spaces reach millions (convolution)
            got = space.configs(limit=limit)
            for params in got[seen:]:
                threads = 1
                for n in names:
                    threads *= params.get(n, 1)
                if threads <= 1024 and all(_call_restriction(f, params) for f in fns):
                    return params
            if len(got) < limit:
                break
            seen, limit = len(got), limit * 16
    finally:
        remove()
    raise InputError("tune_kernel: no config of tune_params satisfies the restrictions")


def _brute_force(strategy, strategy_options):
    """True when the call runs every config: Kernel Tuner's brute force (amk's exhaustive
    search) without a budget or a time limit."""
    so = strategy_options or {}
    return STRATEGIES.get(strategy) == "exhaustive" and \
        not any(k in so for k in ("max_fevals", "time_limit", "fraction"))


def _warn_vary(found, stacklevel):
    warnings.warn(
        "tune_kernel: %s change%s what the kernel computes (without answer=, each other "
        "value failed the check against the reference config while moving another param "
        "did not): each config is checked against the reference config with the same %s "
        "(docs/PYTHON.md; amk_vary= names them yourself)" % (
            ", ".join(found), "s" if len(found) == 1 else "", ", ".join(found)),
        stacklevel=stacklevel + 1)


def _params_of(row, tune_params):
    params = row["params"] if isinstance(row["params"], dict) else json.loads(row["params"])
    return tuple(params.get(k) for k in tune_params)


def _vary_after_run(rows, default, tune_params):
    """The probe's verdict (output_params) from a brute-force run checked against the
    reference config: the statuses of the probe's configs (probe_values: the reference
    config and each param moved alone to up to two other values) among the run's rows.
    Every config the probe would run is in such a run (same restrictions, same callables),
    so the verdict is the probe's."""
    values = probe_values(tune_params, default)
    probed = []
    for r in rows:
        p = dict(zip(tune_params, _params_of(r, tune_params)))
        if all(p[k] in values[k] for k in tune_params):
            probed.append((p, r["status"]))
    return output_params(default, probed)


def _rerun_varied(found, rows, summary, default, tune_params, build, finish, tune,
                  results_path, keep_spec=None):
    """After a brute-force run checked against the reference config named found: the
    configs whose reference config changes (found params not the reference config's) are
    run again in a kernel folder with reference.vary = found (build(vary) -> (folder,
    remove); finish(folder) completes its spec; tune(space, exclude) runs it into
    results_path), the others keep their verdicts (their reference is the same). Returns
    (rows, summary): the run's rows with those configs' rows replaced by the new ones, and
    the summary of both runs (trials and elapsed time added; best: the faster of the two
    runs' bests that is not a replaced row)."""
    _warn_vary(found, stacklevel=3)
    idx = [list(tune_params).index(k) for k in found]
    want = [default[k] for k in found]
    again = {p for p in (_params_of(r, tune_params) for r in rows)
             if [p[i] for i in idx] != want}
    folder, remove = build(found)
    try:
        finish(folder)
        if keep_spec:
            shutil.rmtree(os.fspath(keep_spec), ignore_errors=True)
            shutil.copytree(folder, os.fspath(keep_spec))
        space = Space(folder)
        exclude = [cid for cid, p in space.configs(ids=True)
                   if tuple(p.get(k) for k in tune_params) not in again]
        second = tune(space, exclude)
    finally:
        remove()
    new = rows_of_run(results_path, second["first_trial"], second["last_trial"]) \
        if second["trials"] else []
    kept = [r for r in rows if _params_of(r, tune_params) not in again]
    merged = dict(summary)
    merged["trials"] = summary["trials"] + second["trials"]
    for k in ("elapsed_s", "wall_s"):
        merged[k] = (summary.get(k) or 0) + (second.get(k) or 0)
    bests = [b for b in (summary.get("best"), second.get("best"))
             if b and b.get("latency_us") is not None and
             (b is second.get("best") or
              tuple(b["params"].get(k) for k in tune_params) not in again)]
    merged["best"] = min(bests, key=lambda b: b["latency_us"]) if bests else None
    return kept + new, merged


def _vary(named, tune_params, simulation_mode, answers, probe):
    """The params the reference takes from each config (reference.vary): amk_vary= as
    given, else (no answer= and no verify=: answers empty; not a replay) what probe()
    finds, with a warning naming them."""
    if simulation_mode:
        return []
    if named is not None:
        named = [named] if isinstance(named, str) else list(named)
        for k in named:
            if k not in tune_params:
                raise InputError("tune_kernel: amk_vary names %r, which is not in tune_params"
                                 % (k,))
        return named
    if answers:
        return []
    found = probe()
    if found:
        _warn_vary(found, stacklevel=3)
    return found


def _import(kernel_name, tune_params, strs, ks, kfile, default=None, data=None,
            answers=None, symbols=None, vary=None):
    """The kernel folder of the call (the library's importer, data and answer files
    included). A refusal is an UnsupportedError naming what it refused."""
    try:
        # the data files are this call's own: linked, not copied (large inputs)
        return build_folder(kernel_name, tune_params, strs, default, ks, kfile, data, answers,
                            vary, link_data=True)
    except AmkError as e:
        raise UnsupportedError("tune_kernel: %s" % e.message,
                               argument=_culprit(e.message, ks, data, answers, symbols),
                               code=e.code, name=e.name) from None


def _culprit(message, ks, data=None, answers=None, symbols=None):
    """The Kernel Tuner argument a library message is about: the T1 argument it names, or
    the argument whose data or answer file it names."""
    symbols = symbols or {}

    def label(name):
        return "cmem_args[%r]" % symbols[name] if name in symbols else name
    m = re.search(r"Arguments\[(\d+)\]", message)
    if m and int(m.group(1)) < len(ks.get("Arguments", [])):
        return label(ks["Arguments"][int(m.group(1))]["Name"])
    for name, path in (data or {}).items():
        if path in message:
            return label(name)
    for name, path in (answers or {}).items():
        if path in message:
            return "answer (%s)" % name
    return None


def _env(kernel_name, src, problem_size, tune_params, o, summary, device_name, backend,
         results_path):
    from . import __version__
    return {"kernel_name": kernel_name, "kernel_string": src, "problem_size": problem_size,
            "tune_params": tune_params, "device_name": device_name,
            "iterations": o["iterations"], "block_size_names": o["block_size_names"],
            "compiler_options": o["compiler_options"], "strategy": o["strategy"] or "brute_force",
            "strategy_options": o["strategy_options"], "objective": "time",
            "simulation_mode": bool(o["simulation_mode"]), "amk_version": __version__,
            "amk_backend": summary.get("backend", backend), "amk_best": summary.get("best"),
            "amk_trials": summary.get("trials"), "amk_elapsed_s": summary.get("elapsed_s"),
            "amk_results": results_path}

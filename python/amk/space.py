"""amk.Space: a kernel's search space, from a built-in kernel name, a spec folder, or built
in Python (params + restrictions written in the Python subset `amk import` translates).

A space built in Python becomes a kernel folder written by the library's own T1 importer
(amk_import_t1: the same translator and the same errors as `amk import`), in a temporary
folder that lives as long as the Space.
"""
import json
import os
import shutil
import tempfile
import weakref

from . import _amk
from .errors import translate, InputError


def _t1_document(name, params, restrictions, default, kernel_spec=None):
    """The T1 file (Kernel Tuner's benchmark_hub format) of a space built in Python."""
    tps = []
    for pname, values in params.items():
        values = list(values)
        if not values:
            raise InputError("param %s: no values" % pname, exit_code=2)
        d = default.get(pname, values[0]) if default else values[0]
        tps.append({"Name": pname,
                    "Type": "string" if all(isinstance(v, str) for v in values) else "int",
                    "Values": repr(values), "Default": d})
    doc = {"General": {"BenchmarkName": name, "OutputFormat": "JSON"},
           "ConfigurationSpace": {"TuningParameters": tps,
                                  "Conditions": [{"Expression": r} for r in restrictions]}}
    if kernel_spec is not None:
        doc["KernelSpecification"] = kernel_spec
    return doc


def import_t1(t1, out_dir, kernel_file=None, name=None, data=None, answers=None, vary=None,
              link_data=False):
    """`amk import T1.json [--kernel FILE] [--data ARG=FILE,...] [--answer ARG=FILE,...]
    [--vary P,...] -o OUT_DIR`: writes the kernel folder out_dir. data / answers: {argument:
    file}; vary: param names (the reference takes them from the checked config). link_data:
    hard-link the data and answer files into the folder where the filesystem allows (the
    caller leaves them unchanged while the folder lives) instead of copying them."""
    def pairs(d):
        return ["%s=%s" % (k, os.fspath(v)) for k, v in d.items()] if d else None
    with translate:
        _amk.import_t1(os.fspath(t1), os.fspath(out_dir), name=name,
                       kernel_file=os.fspath(kernel_file) if kernel_file else None,
                       data=pairs(data), answers=pairs(answers),
                       vary=list(vary) if vary else None, link_data=bool(link_data))


def build_folder(name, params, restrictions=(), default=None, kernel_spec=None,
                 kernel_file=None, data=None, answers=None, vary=None, link_data=False):
    """Writes a kernel folder for a space (and optionally a kernel, its inputs' data files and
    its outputs' answer files: {argument: file}, and the params its reference takes from the
    checked config: vary) built in Python; returns (folder, remove) where remove() deletes
    it. link_data: as import_t1's."""
    tmp = tempfile.mkdtemp(prefix="amk-space-")
    try:
        t1 = os.path.join(tmp, name + ".json")
        with open(t1, "w") as f:
            json.dump(_t1_document(name, params, list(restrictions), default or {},
                                   kernel_spec), f, indent=1)
        out = os.path.join(tmp, name)
        import_t1(t1, out, kernel_file=kernel_file, name=name, data=data, answers=answers,
                  vary=vary, link_data=link_data)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out, lambda: shutil.rmtree(tmp, ignore_errors=True)


def _spec_name(folder):
    try:
        with open(os.path.join(folder, "spec.json")) as f:
            return json.load(f)["name"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError("%s: not a kernel folder (%s)" % (folder, e)) from None


class Space:
    """A kernel's search space on a target.

    Space("gemm")                       a built-in kernel (or one of spec_dirs)
    Space("path/to/kernel_folder")      a folder holding spec.json
    Space(params={"BM": [64, 128], "BN": [64, 128]},
          restrictions=["BM * BN <= 8192"], default={"BM": 64}, name="mine")
                                        built in Python (restrictions: Python expressions)
    """

    def __init__(self, kernel=None, *, params=None, restrictions=(), default=None,
                 name=None, spec_dirs=None, target=None, shape=None):
        self.spec_dirs = [os.fspath(d) for d in (spec_dirs or [])]
        self._remove = None
        if params is not None:
            if kernel is not None:
                raise InputError("Space: give a kernel or params, not both")
            name = name or "space"
            folder, self._remove = build_folder(name, params, restrictions, default)
            weakref.finalize(self, self._remove)
            self.spec_dirs.append(folder)
            kernel = name
        elif kernel is None:
            raise InputError("Space: give a kernel name, a kernel folder, or params")
        elif os.path.isfile(os.path.join(os.fspath(kernel), "spec.json")):
            folder = os.path.abspath(os.fspath(kernel))
            self.spec_dirs.append(folder)
            kernel = _spec_name(folder)
        elif restrictions or default:
            raise InputError("Space: restrictions and default go with params")
        self.target_name = target
        with translate:
            self._k = _amk.Kernel(kernel, self.spec_dirs, target)
            self._info = self._k.info()
        self.shape = shape

    # --- what the spec says ------------------------------------------------------------
    name = property(lambda self: self._info["name"])
    params = property(lambda self: dict(self._info["params"]))
    defaults = property(lambda self: dict(self._info["defaults"]))
    restrictions = property(lambda self: list(self._info["restrictions"]))
    dims = property(lambda self: list(self._info["dims"]))
    shapes = property(lambda self: dict(self._info["shapes"]))
    target = property(lambda self: self._info["target"])
    folder = property(lambda self: self._info["dir"])

    def info(self):
        """The spec as a dict (params, defaults, restrictions, derived, dims, shapes...)."""
        return dict(self._info)

    def _shape(self, shape):
        return shape if shape is not None else self.shape

    # --- counts and enumeration --------------------------------------------------------
    def size(self, shape=None, exact=True):
        """{"shape", "raw", "valid", "feasible", "exact"} as `amk space` counts them."""
        with translate:
            return self._k.size(shape=self._shape(shape), exact=exact)

    def count(self, shape=None):
        """Valid configs (restrictions and launch limits), enumerated exactly."""
        return int(self.size(shape)["valid"])

    def __len__(self):
        return self.count()

    def configs(self, shape=None, limit=None, ids=False):
        """The valid configs as dicts {param: value}, in amk's order (last param fastest);
        with ids=True, (config_id, dict) pairs."""
        with translate:
            got = self._k.configs(shape=self._shape(shape), limit=limit or 0)
        return got if ids else [p for _, p in got]

    def __iter__(self):
        return iter(self.configs())

    def check(self, params, shape=None):
        """None when params is a valid, feasible config here, else the reason (text)."""
        with translate:
            return self._k.check(params, shape=self._shape(shape))[1]

    def config_id(self, params, shape=None):
        with translate:
            return self._k.check(params, shape=self._shape(shape))[0]

    def config(self, params, shape=None):
        """The config as `amk evaluate` reads it: {"kernel", "shape", "params"}."""
        with translate:
            return json.loads(self._k.config_json(params, shape=self._shape(shape)))

    def plan(self, params, shape=None, arch=None):
        """What a launch of the config needs (amk.torch uses it): the source and compiler
        options amk compiles (arch: the target's), the launch, buffers, tensor maps and
        argument list."""
        with translate:
            return self._k.plan(params, shape=self._shape(shape), arch=arch)

    def __repr__(self):
        return "amk.Space(%r: %d params, target %s)" % (self.name, len(self._info["params"]),
                                                        self.target)

    # --- search (amk.loop / amk.propose on this space) ---------------------------------
    def loop(self, **kw):
        from .search import loop
        return loop(self, **kw)

    def propose(self, **kw):
        from .search import propose
        return propose(self, **kw)

    def evaluate(self, params, **kw):
        from .search import evaluate
        return evaluate(self, params, **kw)

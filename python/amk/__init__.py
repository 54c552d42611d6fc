"""amk: an autotuning search engine for GPU kernels, from Python.

The engine is libamk (C), reached through its public C API by the extension amk._amk: no
subprocess. docs/PYTHON.md is the guide.

    import amk
    sp = amk.Space("gemm")                      # or amk.Space(params=..., restrictions=...)
    summary = amk.loop(sp, backend="model", budget=50)
    df = amk.read_results("results.tsv")

and, for Kernel Tuner users, `import amk as kernel_tuner` then `kernel_tuner.tune_kernel(...)`.
"""
import os as _os

# An installed wheel carries the built-in kernels and recorded sweeps in amk/share; the
# library looks next to the running executable (python) otherwise, so point it here.
_share = _os.path.join(_os.path.dirname(__file__), "share")
if _os.path.isdir(_os.path.join(_share, "kernels")):
    _os.environ.setdefault("AMK_KERNELS_DIR", _os.path.join(_share, "kernels"))
if _os.path.isdir(_os.path.join(_share, "data")):
    _os.environ.setdefault("AMK_DATA_DIR", _os.path.join(_share, "data"))

from . import _amk  # noqa: E402
from .errors import (AmkError, UsageError, InputError, ResultsError, NoDeviceError,  # noqa: E402
                     InternalError, UnsupportedError)
from .space import Space, import_t1  # noqa: E402
from .search import loop, propose, evaluate  # noqa: E402
from .results import read_results, best, report, export, lookup  # noqa: E402
from .kernel_tuner import tune_kernel  # noqa: E402

__version__ = _amk.VERSION


def kernels(spec_dirs=None):
    """The names of the known kernels (built-ins plus spec_dirs)."""
    from .errors import translate
    with translate:
        return _amk.kernels(spec_dirs=[_os.fspath(d) for d in spec_dirs or []])


def devices():
    """The GPU side of `amk devices`: {"vendor", "devices": [{index, name, arch, target}],
    "reason"} (reason says why no GPU answers)."""
    return _amk.gpu_status()


__all__ = ["Space", "loop", "propose", "evaluate", "read_results", "best", "report", "export",
           "lookup", "import_t1", "tune_kernel", "kernels", "devices", "AmkError", "UsageError",
           "InputError", "ResultsError", "NoDeviceError", "InternalError", "UnsupportedError",
           "__version__"]

"""amk.torch: amk's tuned built-in kernels as PyTorch operators.

    import amk.torch as at
    at.load("tuned.json")                         # an `amk export` database
    y = torch.ops.amk.rmsnorm(x, w)               # or at.rmsnorm(x, w)
    c = torch.ops.amk.gemm_hopper(a, b)           # a (M, K) @ b (K, N), bf16 or f16
    c = torch.ops.amk.gemm_hopper_fp8(a, b, sa, sb)  # fp8 e4m3, b (N, K), f32 scales -> bf16
    y = torch.ops.amk.softmax(x)                  # over the last dim

Each call picks the tuned config for its shape from the database (amk.lookup: the nearest tuned
shape when there is no exact one, with a one-time warning, as vLLM's "using default config"),
builds the kernel once with NVRTC from the very source and options amk compiles
(amk_compile_source_get: the vendor prelude, the template, the config's defines), keeps the
CUBIN in amk's cache folder (torch/), and launches it on PyTorch's current stream through the
CUDA driver. The operators are defined with torch.library.Library (the dispatcher calls the
CUDA kernel's Python function directly) with fake implementations, so torch.compile traces
them. Per call, after the first at a shape: one dict lookup on a tuple of ints, the current
stream's handle, and the extension's Launcher (_launch.c: the data pointers written into the
argument block, gemm_hopper's tensor maps re-encoded when a pointer changed, the launch).
"""
import ctypes
import ctypes.util
import glob
import hashlib
import os
import warnings

import torch

from . import _amk
from .errors import translate, from_engine, NoDeviceError, InputError
from .launcher import launcher as _plan_launcher
from .results import lookup as _lookup

_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
if hasattr(torch, "float8_e4m3fn"):
    _DTYPES["fp8e4m3"] = torch.float8_e4m3fn
_NAMES = {v: k for k, v in _DTYPES.items()}
# The dims of each kernel's shape, in the order of the dims in its cache key.
_DIMS = {"rmsnorm": "MN", "softmax": "MN", "gemm_hopper": "MNK", "gemm_hopper_fp8": "MNK"}

# The current stream's handle for a device index: torch's raw getter (what Inductor's
# generated code calls) costs a fraction of building torch.cuda.current_stream()'s object.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
if _raw_stream is None:
    def _raw_stream(device_index):
        return torch.cuda.current_stream(device_index).cuda_stream

# ---------- NVRTC and the CUDA driver: ctypes for the one-time work ----------------------


def _load(names, globs=()):
    for n in names:
        try:
            return ctypes.CDLL(n)
        except OSError:
            pass
    for g in globs:
        for p in sorted(glob.glob(g), reverse=True):
            try:
                return ctypes.CDLL(p)
            except OSError:
                pass
    return None


class _Cuda:
    """The few driver and NVRTC calls that build and load a kernel (once per config and
    shape); launches go through the extension's Driver (launch_driver)."""

    def __init__(self):
        site = os.path.dirname(os.path.dirname(torch.__file__))
        self.cu = _load(["libcuda.so.1", "libcuda.so"])
        self.rtc = _load(["libnvrtc.so", "libnvrtc.so.12", "libnvrtc.so.13",
                          ctypes.util.find_library("nvrtc") or "libnvrtc.so.11.2"],
                         [os.path.join(site, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so*"),
                          "/usr/local/cuda/lib64/libnvrtc.so*"])
        if not self.cu or not self.rtc:
            raise NoDeviceError("amk.torch: %s not found" % (
                "the CUDA driver (libcuda.so.1)" if not self.cu else "NVRTC (libnvrtc.so)"),
                exit_code=4)
        with translate:
            self.launch_driver = _amk.Driver()

    def check(self, r, what):
        if r != 0:
            s = ctypes.c_char_p()
            self.cu.cuGetErrorString(r, ctypes.byref(s))
            raise RuntimeError("amk.torch: %s: %s (CUresult %d)" % (
                what, s.value.decode() if s.value else "?", r))

    def compile(self, name, text, options, entry):
        """CUBIN bytes and the lowered entry name, as amk's compile worker builds them."""
        prog = ctypes.c_void_p()
        r = self.rtc.nvrtcCreateProgram(ctypes.byref(prog), text.encode(), name.encode(), 0,
                                        None, None)
        if r:
            raise RuntimeError("amk.torch: nvrtcCreateProgram: %d" % r)
        try:
            expr = ("&" + entry).encode()
            self.rtc.nvrtcAddNameExpression(prog, expr)
            opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
            r = self.rtc.nvrtcCompileProgram(prog, len(options), opts)
            if r:
                n = ctypes.c_size_t()
                self.rtc.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
                log = ctypes.create_string_buffer(n.value)
                self.rtc.nvrtcGetProgramLog(prog, log)
                raise RuntimeError("amk.torch: %s does not compile:\n%s" % (
                    name, log.value.decode(errors="replace")[:2000]))
            low = ctypes.c_char_p()
            self.rtc.nvrtcGetLoweredName(prog, expr, ctypes.byref(low))
            n = ctypes.c_size_t()
            self.rtc.nvrtcGetCUBINSize(prog, ctypes.byref(n))
            buf = ctypes.create_string_buffer(n.value)
            self.rtc.nvrtcGetCUBIN(prog, buf)
            return buf.raw, low.value.decode()
        finally:
            self.rtc.nvrtcDestroyProgram(ctypes.byref(prog))

    def function(self, image, lowered, shared, cluster):
        torch.cuda.current_stream()  # PyTorch's primary context is current from here on
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        self._image = image  # the driver reads it during the load only
        self.check(self.cu.cuModuleLoadData(ctypes.byref(mod), image), "cuModuleLoadData")
        self.check(self.cu.cuModuleGetFunction(ctypes.byref(fn), mod, lowered.encode()),
                   "cuModuleGetFunction")
        if shared > 48 * 1024:  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.check(self.cu.cuFuncSetAttribute(fn, 8, ctypes.c_int(shared)),
                       "cuFuncSetAttribute(max dynamic shared)")
        if cluster[0] * cluster[1] * cluster[2] > 8:  # NON_PORTABLE_CLUSTER_SIZE_ALLOWED
            self.check(self.cu.cuFuncSetAttribute(fn, 14, ctypes.c_int(1)),
                       "cuFuncSetAttribute(non-portable cluster)")
        return mod, fn


_cuda = None


def _driver():
    global _cuda
    if _cuda is None:
        _cuda = _Cuda()
    return _cuda


# ---------- one compiled config at one shape ---------------------------------------------


def _cache_dir():
    base = os.environ.get("AMK_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "amk")
    d = os.path.join(base, "torch")
    os.makedirs(d, exist_ok=True)
    return d


# Workspaces of the built launches (gemm_hopper's stream-K pieces), kept alive with them.
_workspaces = []


def _build(kernel, params, shape, arch, inputs, label, device):
    """The extension's Launcher for params at shape: the kernel compiled by NVRTC (or read
    from the cache folder), loaded into PyTorch's context, its argument block laid out for
    the tensors named by inputs then the output (amk.launcher); a workspace the kernel
    needs is allocated zeroed on device, once per launch (the kernel leaves it zero)."""
    with translate:
        plan = kernel.plan(params, shape, arch)
    src = plan["source"]
    key = hashlib.sha256((src["text"] + "\0" + "\0".join(src["options"]) + "\0" +
                          src["entry"]).encode()).hexdigest()[:24]
    path = os.path.join(_cache_dir(), key)
    cu = _driver()
    if os.path.exists(path + ".cubin") and os.path.exists(path + ".name"):
        with open(path + ".cubin", "rb") as f:
            image = f.read()
        with open(path + ".name") as f:
            lowered = f.read()
    else:
        image, lowered = cu.compile(src["entry"] + ".cu", src["text"], src["options"],
                                    src["entry"])
        for ext, data, mode in ((".cubin", image, "wb"), (".name", lowered, "w")):
            tmp = "%s%s.tmp.%d" % (path, ext, os.getpid())
            with open(tmp, mode) as f:
                f.write(data)
            os.replace(tmp, path + ext)
    la = plan["launch"]
    _, fn = cu.function(image, lowered, la["shared_bytes"], la["cluster"])
    def workspace(nbytes):
        w = torch.zeros(nbytes, dtype=torch.uint8, device=device)
        _workspaces.append(w)
        return w.data_ptr()

    with translate:
        return _plan_launcher(cu.launch_driver, fn.value, plan, inputs, label, workspace)


# ---------- the tuned database and the operators -----------------------------------------

_state = {"db": None, "kernels": {}, "warned": set()}
# (kernel, dims..., dtype, device index) -> its Launcher's launch: the per-call lookup.
_launches = {}


def load(db):
    """Uses the export database db (`amk export`'s JSON) for every later call."""
    if not os.path.exists(os.fspath(db)):
        raise InputError("amk.torch: %s: no such database" % db)
    _state.update(db=os.fspath(db))
    _launches.clear()


def _kernel(name):
    k = _state["kernels"].get(name)
    if k is None:
        with translate:
            k = _state["kernels"][name] = _amk.Kernel(name)
    return k


def _config(kernel, name, shape, dtype, device):
    """The tuned params for shape (nearest tuned shape, warned once), else the default."""
    info = kernel.info()
    params, why = None, None
    if _state["db"]:
        try:
            ans = _lookup(_state["db"], name, device, shape, dtype)
            params = ans["config"]
            m = ans.get("matched", {})
            if m.get("nearest") or m.get("level") != "device":
                why = "using the config tuned for %s on %s (%s level of the database)" % (
                    m.get("shape"), m.get("device") or m.get("arch") or "any device",
                    m.get("level"))
        except Exception as e:  # noqa: BLE001: the default config is the answer then
            why = "no tuned config (%s); using the default config" % e
    else:
        why = "no database loaded (amk.torch.load); using the default config"
    full = "%s,dtype=%s" % (shape, dtype)
    if params is not None:  # tuned before a param joined the spec: it is the default's (SPEC.md)
        params = dict(info["defaults"], **params)
    if params is not None and kernel.check(params, full)[1] is not None:
        why = "the tuned config is not valid at %s; using the default config" % full
        params = None
    if params is None:
        params = info["defaults"]
    key = (name, full, device)
    if why and key not in _state["warned"]:
        _state["warned"].add(key)
        warnings.warn("amk.torch: %s at %s on %s: %s" % (name, full, device, why), stacklevel=3)
    return params, full


def _new_launch(key, inputs, what):
    """The launch for key = (kernel, dims..., dtype, device index), on the first call at
    it: the config (tuned, nearest or default; warned once), the kernel built and loaded,
    its Launcher; kept in _launches. what names the tensor whose dtype is the kernel's."""
    name, dims, dtype, dev = key[0], key[1:-2], key[-2], key[-1]
    if dev < 0:
        raise InputError("amk.torch: %s: the tensors are not on a CUDA device" % name)
    if isinstance(dtype, str):  # the kernel's dtype whatever the tensor's (fp8)
        dt = dtype
    elif dtype in _NAMES:
        dt = _NAMES[dtype]
    else:
        raise InputError("amk.torch: %s: dtype %s is not one amk's kernels take" % (what, dtype))
    shape = ",".join("%s=%d" % nv for nv in zip(_DIMS[name], dims))
    kernel = _kernel(name)
    params, full = _config(kernel, name, shape, dt, torch.cuda.get_device_name(dev))
    major, minor = torch.cuda.get_device_capability(dev)
    lz = _build(kernel, params, full, "sm_%d%d" % (major, minor), inputs,
                "amk.torch: %s at %s" % (name, full), torch.device("cuda", dev))
    launch = _launches[key] = lz.launch
    return launch


# The operators' CUDA kernels. Each call: the inputs made contiguous, the output allocated,
# the launch found by a tuple of ints (built on the first call at it), and launched on the
# current stream of the output's device; a driver error becomes amk's InternalError.

def _rmsnorm(x, w):
    x = x.contiguous()
    w = w.contiguous()
    n = x.size(-1)
    y = torch.empty_like(x)
    dev = y.get_device()
    key = ("rmsnorm", x.numel() // n, n, x.dtype, dev)
    launch = _launches.get(key) or _new_launch(key, ("x", "w"), "x")
    try:
        launch(_raw_stream(dev), x, w, y)
    except _amk.Error as e:
        raise from_engine(e) from None
    return y


def _softmax(x):
    x = x.contiguous()
    n = x.size(-1)
    y = torch.empty_like(x)
    dev = y.get_device()
    key = ("softmax", x.numel() // n, n, x.dtype, dev)
    launch = _launches.get(key) or _new_launch(key, ("x",), "x")
    try:
        launch(_raw_stream(dev), x, y)
    except _amk.Error as e:
        raise from_engine(e) from None
    return y


def _gemm(a, b):
    a = a.contiguous()
    b = b.contiguous()
    m, k = a.shape
    n = b.size(1)
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    dev = c.get_device()
    key = ("gemm_hopper", m, n, k, a.dtype, dev)
    launch = _launches.get(key) or _new_launch(key, ("A", "B"), "a")
    try:
        launch(_raw_stream(dev), a, b, c)
    except _amk.Error as e:
        raise from_engine(e) from None
    return c


def _gemm_fp8(a, b, sa, sb):
    a = a.contiguous()
    b = b.contiguous()
    sa = sa.float().contiguous()
    sb = sb.float().contiguous()
    m, k = a.shape
    n = b.size(0)
    c = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    dev = c.get_device()
    key = ("gemm_hopper_fp8", m, n, k, "fp8e4m3", dev)
    launch = _launches.get(key) or _new_launch(key, ("A", "B", "SA", "SB"), "a")
    try:
        launch(_raw_stream(dev), a, b, sa, sb, c)
    except _amk.Error as e:
        raise from_engine(e) from None
    return c


# schema, CUDA kernel, fake implementation (what torch.compile traces with).
_OPS = (
    ("rmsnorm(Tensor x, Tensor w) -> Tensor", _rmsnorm,
     lambda x, w: torch.empty_like(x, memory_format=torch.contiguous_format)),
    ("softmax(Tensor x) -> Tensor", _softmax,
     lambda x: torch.empty_like(x, memory_format=torch.contiguous_format)),
    ("gemm_hopper(Tensor a, Tensor b) -> Tensor", _gemm,
     lambda a, b: a.new_empty((a.shape[0], b.shape[1]))),
    ("gemm_hopper_fp8(Tensor a, Tensor b, Tensor sa, Tensor sb) -> Tensor", _gemm_fp8,
     lambda a, b, sa, sb: a.new_empty((a.shape[0], b.shape[0]), dtype=torch.bfloat16)),
)


def _register():
    """The operators amk::NAME as torch.library.Library definitions with a CUDA kernel each,
    which the dispatcher calls directly (custom_op's Python wrapper costs tens of
    microseconds a call), and their fake implementations (register_fake, torch >= 2.4;
    impl_abstract before). The library is returned: registrations last while it lives."""
    lib = torch.library.Library("amk", "DEF")
    fake = getattr(torch.library, "register_fake", None) or torch.library.impl_abstract
    # as custom_op marks its ops: fake implementations make them safe for torch.compile
    tags = (torch.Tag.pt2_compliant_tag,) if hasattr(torch.Tag, "pt2_compliant_tag") else ()
    for schema, kernel, abstract in _OPS:
        name = schema.split("(")[0]
        lib.define(schema, tags=tags)
        lib.impl(name, kernel, "CUDA")
        fake("amk::" + name, abstract, lib=lib)
    return lib


_lib = _register()
rmsnorm = torch.ops.amk.rmsnorm
softmax = torch.ops.amk.softmax
gemm_hopper = torch.ops.amk.gemm_hopper
gemm_hopper_fp8 = torch.ops.amk.gemm_hopper_fp8

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
CUDA driver. The operators are torch.library custom ops with fake implementations, so
torch.compile traces them. Per call, after the first at a shape: one dict lookup, the tensor
maps of gemm_hopper re-encoded when the data pointers changed, and the launch.
"""
import ctypes
import ctypes.util
import glob
import hashlib
import os
import struct
import warnings

import torch

from . import _amk
from .errors import translate, NoDeviceError, InputError
from .results import lookup as _lookup

_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
if hasattr(torch, "float8_e4m3fn"):
    _DTYPES["fp8e4m3"] = torch.float8_e4m3fn
_NAMES = {v: k for k, v in _DTYPES.items()}

# ---------- NVRTC and the CUDA driver, through ctypes ------------------------------------


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
    """The few driver and NVRTC calls a launch needs."""

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
        vp = ctypes.c_void_p
        self.cu.cuLaunchKernel.argtypes = [vp] + [ctypes.c_uint] * 7 + [vp, vp, vp]
        self.cu.cuLaunchKernelEx.argtypes = [vp, vp, vp, vp]
        self.cu.cuTensorMapEncodeTiled.argtypes = [vp, ctypes.c_int, ctypes.c_uint32, vp, vp,
                                                   vp, vp, vp, ctypes.c_int, ctypes.c_int,
                                                   ctypes.c_int, ctypes.c_int]

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


class _LaunchAttr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4),
                ("value", ctypes.c_ubyte * 64)]


class _LaunchConfig(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(_LaunchAttr)), ("nattrs", ctypes.c_uint)]


_TMAP_TYPES = {"f32": 7, "f16": 6, "bf16": 9, "fp8e4m3": 0, "int8": 0, "i32": 3, "f64": 8}
_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}
_L2 = {0: 0, 64: 1, 128: 2, 256: 3}


# ---------- one compiled config at one shape ---------------------------------------------


def _cache_dir():
    base = os.environ.get("AMK_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "amk")
    d = os.path.join(base, "torch")
    os.makedirs(d, exist_ok=True)
    return d


class _Launcher:
    """A kernel built for one config and shape: the function, its launch, and the argument
    block whose pointer slots are refilled per call."""

    def __init__(self, kernel, params, shape, arch):
        with translate:
            self.plan = plan = kernel.plan(params, shape, arch)
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
        self.mod, self.fn = cu.function(image, lowered, la["shared_bytes"], la["cluster"])
        self.cu = cu
        n = len(plan["args"])
        self.slots = []        # ctypes objects the kernel reads, one per argument
        self.ptr_of = []       # (slot index, buffer name) of pointer arguments
        self.maps = []         # (slot index, map description) of tensor maps
        for i, a in enumerate(plan["args"]):
            if a["kind"] == "buffer":
                self.slots.append(ctypes.c_void_p(0))
                self.ptr_of.append((i, a["name"]))
            elif a["kind"] == "tensor_map":
                raw = ctypes.create_string_buffer(128 + 64)
                self.slots.append(raw)
                m = next(t for t in plan["tensor_maps"] if t["name"] == a["name"])
                self.maps.append((i, m))
            elif a["kind"] == "scalar":  # a spec's scalars entry, passed in its own type
                ct = {"f32": ctypes.c_float, "f64": ctypes.c_double, "i32": ctypes.c_int32,
                      "u32": ctypes.c_uint32, "i64": ctypes.c_int64, "u64": ctypes.c_uint64}
                self.slots.append(ct[a["dtype"]](a["value"]))
            else:
                self.slots.append(ctypes.c_int32(a["value"]))
        self.argv = (ctypes.c_void_p * n)()
        for i, s in enumerate(self.slots):
            addr = ctypes.addressof(s)
            if isinstance(s, ctypes.Array):  # a tensor map: 64-byte aligned inside its buffer
                addr = (addr + 63) & ~63
            self.argv[i] = addr
        self.last_ptrs = None
        self.cluster = tuple(la["cluster"])
        self.grid, self.block, self.shared = la["grid"], la["block"], la["shared_bytes"]
        if self.cluster != (1, 1, 1):
            self.attr = _LaunchAttr(id=4)  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            struct.pack_into("III", self.attr.value, 0, *self.cluster)
            self.cfg = _LaunchConfig((ctypes.c_uint * 3)(*self.grid),
                                     (ctypes.c_uint * 3)(*self.block), self.shared, None,
                                     ctypes.pointer(self.attr), 1)

    def _encode(self, i, m, ptr):
        cu = self.cu
        rank = len(m["dims"])
        dims = (ctypes.c_uint64 * rank)(*m["dims"])
        strides = (ctypes.c_uint64 * max(1, rank - 1))(*(m["strides"] or [0]))
        box = (ctypes.c_uint32 * rank)(*m["box"])
        one = (ctypes.c_uint32 * rank)(*([1] * rank))
        cu.check(cu.cu.cuTensorMapEncodeTiled(
            ctypes.c_void_p(self.argv[i]), _TMAP_TYPES[m["dtype"]], rank, ctypes.c_void_p(ptr),
            dims, strides, box, one, 0, _SWIZZLE[m["swizzle"]], _L2[m["l2_promotion"]], 0),
            "cuTensorMapEncodeTiled(%s)" % m["name"])

    def __call__(self, tensors):
        ptrs = tuple(t.data_ptr() for t in tensors.values())
        if ptrs != self.last_ptrs:
            for i, name in self.ptr_of:
                self.slots[i].value = tensors[name].data_ptr()
            for i, m in self.maps:
                self._encode(i, m, tensors[m["buffer"]].data_ptr())
            self.last_ptrs = ptrs
        stream = torch.cuda.current_stream().cuda_stream
        cu = self.cu
        if self.cluster == (1, 1, 1):
            cu.check(cu.cu.cuLaunchKernel(self.fn, *self.grid, *self.block, self.shared,
                                          ctypes.c_void_p(stream), self.argv, None),
                     "cuLaunchKernel")
        else:
            self.cfg.stream = stream
            cu.check(cu.cu.cuLaunchKernelEx(ctypes.byref(self.cfg), self.fn, self.argv, None),
                     "cuLaunchKernelEx")


# ---------- the tuned database and the operators -----------------------------------------

_state = {"db": None, "launchers": {}, "kernels": {}, "warned": set()}


def load(db):
    """Uses the export database db (`amk export`'s JSON) for every later call."""
    if not os.path.exists(os.fspath(db)):
        raise InputError("amk.torch: %s: no such database" % db)
    _state.update(db=os.fspath(db), launchers={})


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
    if params is not None and kernel.check(params, full)[1] is not None:
        why = "the tuned config is not valid at %s; using the default config" % full
        params = None
    if params is None:
        params = info["defaults"]
    key = (name, full, device)
    if why and key not in _state["warned"]:
        _state["warned"].add(key)
        warnings.warn("amk.torch: %s at %s on %s: %s" % (name, full, device, why), stacklevel=4)
    return params, full


def _launcher(name, shape, dtype, device_index):
    key = (name, shape, dtype, device_index)
    lz = _state["launchers"].get(key)
    if lz is None:
        kernel = _kernel(name)
        dev = torch.cuda.get_device_name(device_index)
        params, full = _config(kernel, name, shape, dtype, dev)
        major, minor = torch.cuda.get_device_capability(device_index)
        lz = _state["launchers"][key] = _Launcher(kernel, params, full,
                                                  "sm_%d%d" % (major, minor))
    return lz


def _run(name, shape, dtype, inputs, out):
    lz = _launcher(name, shape, dtype, out.device.index or 0)
    bufs = dict(inputs)
    for b in lz.plan["buffers"]:
        if b["role"] != "in":
            bufs[b["name"]] = out
    lz(bufs)
    return out


def _dt(t, what):
    n = _NAMES.get(t.dtype)
    if n is None:
        raise InputError("amk.torch: %s: dtype %s is not one amk's kernels take" % (what, t.dtype))
    return n


def _rmsnorm(x, w):
    x, w = x.contiguous(), w.contiguous()
    N = x.shape[-1]
    y = torch.empty_like(x)
    return _run("rmsnorm", "M=%d,N=%d" % (x.numel() // N, N), _dt(x, "x"), {"x": x, "w": w}, y)


def _softmax(x):
    x = x.contiguous()
    N = x.shape[-1]
    y = torch.empty_like(x)
    return _run("softmax", "M=%d,N=%d" % (x.numel() // N, N), _dt(x, "x"), {"x": x}, y)


def _gemm(a, b):
    a, b = a.contiguous(), b.contiguous()
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    return _run("gemm_hopper", "M=%d,N=%d,K=%d" % (M, N, K), _dt(a, "a"), {"A": a, "B": b}, c)


def _gemm_fp8(a, b, sa, sb):
    a, b = a.contiguous(), b.contiguous()
    (M, K), N = a.shape, b.shape[0]
    c = torch.empty((M, N), dtype=torch.bfloat16, device=a.device)
    return _run("gemm_hopper_fp8", "M=%d,N=%d,K=%d" % (M, N, K), "fp8e4m3",
                {"A": a, "B": b, "SA": sa.float().contiguous(), "SB": sb.float().contiguous()}, c)


def _register():
    """torch.library custom ops (torch >= 2.4) with fake implementations."""
    from torch.library import custom_op
    ops = {}

    @custom_op("amk::rmsnorm", mutates_args=())
    def rmsnorm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return _rmsnorm(x, w)

    @rmsnorm.register_fake
    def _(x, w):
        return torch.empty_like(x)

    @custom_op("amk::softmax", mutates_args=())
    def softmax(x: torch.Tensor) -> torch.Tensor:
        return _softmax(x)

    @softmax.register_fake
    def _(x):
        return torch.empty_like(x)

    @custom_op("amk::gemm_hopper", mutates_args=())
    def gemm_hopper(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _gemm(a, b)

    @gemm_hopper.register_fake
    def _(a, b):
        return a.new_empty((a.shape[0], b.shape[1]))

    @custom_op("amk::gemm_hopper_fp8", mutates_args=())
    def gemm_hopper_fp8(a: torch.Tensor, b: torch.Tensor, sa: torch.Tensor,
                        sb: torch.Tensor) -> torch.Tensor:
        return _gemm_fp8(a, b, sa, sb)

    @gemm_hopper_fp8.register_fake
    def _(a, b, sa, sb):
        return a.new_empty((a.shape[0], b.shape[0]), dtype=torch.bfloat16)

    ops.update(rmsnorm=rmsnorm, softmax=softmax, gemm_hopper=gemm_hopper,
               gemm_hopper_fp8=gemm_hopper_fp8)
    return ops


_ops = _register()
rmsnorm = _ops["rmsnorm"]
softmax = _ops["softmax"]
gemm_hopper = _ops["gemm_hopper"]
gemm_hopper_fp8 = _ops["gemm_hopper_fp8"]

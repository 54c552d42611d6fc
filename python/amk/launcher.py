"""A kernel's plan (amk._amk.Kernel.plan) made into the extension's Launcher (_launch.c), the
per-call path of amk.torch. Kept free of torch, so that the tests without a GPU check it
against a fake driver (python/tests/test_core_launch.py)."""
from . import _amk

# cuTensorMapEncodeTiled's enum values (CUtensorMapDataType, CUtensorMapSwizzle,
# CUtensorMapL2promotion) for the plan's dtype names and byte counts.
TMAP_TYPES = {"f32": 7, "f16": 6, "bf16": 9, "fp8e4m3": 0, "int8": 0, "i32": 3, "f64": 8}
SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}
L2_PROMOTION = {0: 0, 64: 1, 128: 2, 256: 3}


def is_workspace(buf):
    """The kernel's own workspace, not a tensor of the caller's: a scratch buffer (split
    tiles' pieces) or a zero-filled inout buffer (counters the kernel leaves zero again after
    every launch)."""
    return buf["role"] == "scratch" or (buf["role"] == "inout" and buf["init"] == "zero")


def launcher(driver, function, plan, inputs, label="", workspace=None):
    """The Launcher of a loaded kernel (function: its CUfunction as an int) laid out by plan.
    Its launch(stream, *tensors) takes the buffers named by inputs, in that order, then the
    output: every other buffer of the plan (role out or inout) is that last tensor, except
    a workspace (is_workspace), whose device address workspace(nbytes) gives once, zeroed.
    label prefixes its error messages."""
    index = {name: i for i, name in enumerate(inputs)}
    out = len(inputs)
    fixed = {}
    for b in plan["buffers"]:
        if b["name"] in index:
            continue
        if is_workspace(b):
            if workspace is None:
                raise ValueError("%s: the kernel needs a workspace (buffer %s) and none was given"
                                 % (label or "launcher", b["name"]))
            fixed[b["name"]] = workspace(b["bytes"])
        elif b["role"] != "in":
            index[b["name"]] = out
    maps = {m["name"]: m for m in plan["tensor_maps"]}
    args = []
    for a in plan["args"]:
        kind = a["kind"]
        if kind == "buffer" and a["name"] in fixed:
            args.append(("u64", fixed[a["name"]]))
        elif kind == "buffer":
            args.append(("ptr", index[a["name"]]))
        elif kind == "tensor_map":
            m = maps[a["name"]]
            args.append(("tensor_map", index[m["buffer"]], TMAP_TYPES[m["dtype"]], m["dims"],
                         m["strides"], m["box"], SWIZZLE[m["swizzle"]],
                         L2_PROMOTION[m["l2_promotion"]]))
        elif kind == "scalar":  # a spec's scalars entry, passed in its own type
            args.append((a["dtype"], a["value"]))
        else:  # a value: a 32-bit int, as the gpu backend passes it
            args.append(("i32", a["value"]))
    la = plan["launch"]
    return _amk.Launcher(driver, function, la["grid"], la["block"], la["shared_bytes"],
                         la["cluster"], out + 1, args, label=label)

"""amk.torch's C launcher (amk._amk.Launcher) without a GPU: it is pointed at a fake CUDA
driver, a shared object built here from C with the system compiler that records what
cuLaunchKernel, cuLaunchKernelEx and cuTensorMapEncodeTiled receive. The tests check that the
grid, block, shared memory, stream and every argument reach the driver as the plan gave them,
and that a tensor map is encoded again only when its tensor's pointer changes; then the same
for real plans of built-in kernels through amk.launcher, amk.torch's way to them."""
import ctypes
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

import amk
from amk import _amk
from amk.errors import from_engine
from amk.launcher import L2_PROMOTION, SWIZZLE, launcher

FAKE_DRIVER = r"""
#include <stdint.h>
#include <string.h>

typedef struct { int id; char pad[4]; union { unsigned cluster[3]; char b[64]; } v; } attr_t;
typedef struct { unsigned grid[3], block[3], shared; void *stream; attr_t *attrs;
                 unsigned nattrs; } config_t;

struct rec {
    int launches, ex_launches, encodes;
    void *fn;
    unsigned grid[3], block[3], shared;
    void *stream;
    uint64_t args[16];
    uint64_t arg_addr[16];
    unsigned nattrs, attr_id, cluster[3];
    int dtype, interleave, swizzle, l2, oob;
    unsigned rank;
    void *addr, *map;
    uint64_t dims[5], strides[4];
    unsigned box[5], elem[5];
} fake_rec;
int fake_nargs;  /* arguments the launch copies into fake_rec.args (8 bytes each) */
int fake_fail;   /* a CUresult the next launch or encode returns */

static int record(void **params)
{
    for (int i = 0; i < fake_nargs && i < 16; i++) {
        memcpy(&fake_rec.args[i], params[i], 8);
        fake_rec.arg_addr[i] = (uint64_t)(uintptr_t)params[i];
    }
    int r = fake_fail;
    fake_fail = 0;
    return r;
}

int cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void *stream, void **params, void **extra)
{
    (void)extra;
    fake_rec.launches++;
    fake_rec.fn = fn;
    fake_rec.grid[0] = gx; fake_rec.grid[1] = gy; fake_rec.grid[2] = gz;
    fake_rec.block[0] = bx; fake_rec.block[1] = by; fake_rec.block[2] = bz;
    fake_rec.shared = shared;
    fake_rec.stream = stream;
    return record(params);
}

int cuLaunchKernelEx(const config_t *c, void *fn, void **params, void **extra)
{
    (void)extra;
    fake_rec.ex_launches++;
    fake_rec.fn = fn;
    memcpy(fake_rec.grid, c->grid, sizeof c->grid);
    memcpy(fake_rec.block, c->block, sizeof c->block);
    fake_rec.shared = c->shared;
    fake_rec.stream = c->stream;
    fake_rec.nattrs = c->nattrs;
    if (c->nattrs) {
        fake_rec.attr_id = (unsigned)c->attrs[0].id;
        memcpy(fake_rec.cluster, c->attrs[0].v.cluster, sizeof fake_rec.cluster);
    }
    return record(params);
}

/* Writes the address and the encode's ordinal into the map, as a real one holds its address. */
int cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr, const uint64_t *dims,
                           const uint64_t *strides, const unsigned *box, const unsigned *elem,
                           int interleave, int swizzle, int l2, int oob)
{
    int r = fake_fail;
    fake_fail = 0;
    if (r)
        return r;
    fake_rec.encodes++;
    fake_rec.map = map;
    fake_rec.dtype = dtype; fake_rec.rank = rank; fake_rec.addr = addr;
    memcpy(fake_rec.dims, dims, rank * 8);
    if (rank > 1)
        memcpy(fake_rec.strides, strides, (rank - 1) * 8);
    memcpy(fake_rec.box, box, rank * 4);
    memcpy(fake_rec.elem, elem, rank * 4);
    fake_rec.interleave = interleave; fake_rec.swizzle = swizzle; fake_rec.l2 = l2;
    fake_rec.oob = oob;
    uint64_t a = (uint64_t)(uintptr_t)addr, n = (uint64_t)fake_rec.encodes;
    memcpy(map, &a, 8);
    memcpy((char *)map + 8, &n, 8);
    return 0;
}

int cuGetErrorName(int r, const char **s)
{
    *s = r == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_UNKNOWN";
    return 0;
}

int cuGetErrorString(int r, const char **s)
{
    *s = r == 700 ? "an illegal memory access was encountered" : "unknown error";
    return 0;
}
"""


class Rec(ctypes.Structure):
    _fields_ = [("launches", ctypes.c_int), ("ex_launches", ctypes.c_int),
                ("encodes", ctypes.c_int), ("fn", ctypes.c_void_p),
                ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("args", ctypes.c_uint64 * 16), ("arg_addr", ctypes.c_uint64 * 16),
                ("nattrs", ctypes.c_uint), ("attr_id", ctypes.c_uint),
                ("cluster", ctypes.c_uint * 3), ("dtype", ctypes.c_int),
                ("interleave", ctypes.c_int), ("swizzle", ctypes.c_int), ("l2", ctypes.c_int),
                ("oob", ctypes.c_int), ("rank", ctypes.c_uint), ("addr", ctypes.c_void_p),
                ("map", ctypes.c_void_p), ("dims", ctypes.c_uint64 * 5),
                ("strides", ctypes.c_uint64 * 4), ("box", ctypes.c_uint * 5),
                ("elem", ctypes.c_uint * 5)]


def compiler():
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(cc):
            return cc
    return None


class Tensor:
    """What the launcher asks of a torch.Tensor: data_ptr()."""

    def __init__(self, ptr):
        self.ptr = ptr

    def data_ptr(self):
        return self.ptr


class TestLauncher(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cc = compiler()
        if not cc:
            raise unittest.SkipTest("no C compiler (cc, gcc, clang) to build the fake driver")
        cls.dir = tempfile.mkdtemp(prefix="amk-fakecuda-")
        src = os.path.join(cls.dir, "fakecuda.c")
        cls.so = os.path.join(cls.dir, "libfakecuda.so")
        with open(src, "w") as f:
            f.write(FAKE_DRIVER)
        subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", cls.so, src], check=True)
        cls.lib = ctypes.CDLL(cls.so)  # the same handle the Driver's dlopen gets
        cls.drv = _amk.Driver(cls.so)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def setUp(self):
        self.rec = Rec.in_dll(self.lib, "fake_rec")
        ctypes.memset(ctypes.addressof(self.rec), 0, ctypes.sizeof(Rec))
        self.nargs = ctypes.c_int.in_dll(self.lib, "fake_nargs")
        self.fail = ctypes.c_int.in_dll(self.lib, "fake_fail")

    def launcher(self, args, ntensors, grid=(3, 2, 1), block=(128, 1, 1), shared=4096,
                 cluster=(1, 1, 1)):
        self.nargs.value = len(args)
        return _amk.Launcher(self.drv, 0xF00D, grid, block, shared, cluster, ntensors, args,
                             label="test kernel")

    def test_launch_passes_grid_block_shared_stream_and_arguments(self):
        lz = self.launcher([("ptr", 1), ("i32", -7), ("ptr", 0), ("f32", 1.5),
                            ("u64", 2**63 + 5), ("f64", -0.25), ("i64", -3), ("u32", 2**32 - 1)],
                           2)
        lz.launch(0xABC0, 0x1000, Tensor(0x2000))
        r = self.rec
        self.assertEqual((r.launches, r.ex_launches, r.encodes), (1, 0, 0))
        self.assertEqual(r.fn, 0xF00D)
        self.assertEqual((list(r.grid), list(r.block), r.shared), ([3, 2, 1], [128, 1, 1], 4096))
        self.assertEqual(r.stream, 0xABC0)
        a = [struct.pack("<Q", r.args[i]) for i in range(8)]
        self.assertEqual(struct.unpack("<Q", a[0])[0], 0x2000)
        self.assertEqual(struct.unpack("<i", a[1][:4])[0], -7)
        self.assertEqual(struct.unpack("<Q", a[2])[0], 0x1000)
        self.assertEqual(struct.unpack("<f", a[3][:4])[0], 1.5)
        self.assertEqual(struct.unpack("<Q", a[4])[0], 2**63 + 5)
        self.assertEqual(struct.unpack("<d", a[5])[0], -0.25)
        self.assertEqual(struct.unpack("<q", a[6])[0], -3)
        self.assertEqual(struct.unpack("<I", a[7][:4])[0], 2**32 - 1)

    def test_launch_refills_changed_pointers_and_takes_stream_zero(self):
        lz = self.launcher([("ptr", 0), ("ptr", 1)], 2)
        lz.launch(0, 0x1000, 0x2000)
        lz.launch(0, 0x1000, 0x3000)
        self.assertEqual(self.rec.launches, 2)
        self.assertIsNone(self.rec.stream)
        self.assertEqual(list(self.rec.args[:2]), [0x1000, 0x3000])

    def test_cluster_launch_goes_through_launch_kernel_ex(self):
        lz = self.launcher([("ptr", 0), ("i32", 5)], 1, grid=(132, 1, 1), block=(384, 1, 1),
                           shared=200 * 1024, cluster=(2, 1, 1))
        lz.launch(0x77, 0x5000)
        r = self.rec
        self.assertEqual((r.launches, r.ex_launches), (0, 1))
        self.assertEqual((list(r.grid), list(r.block), r.shared, r.stream),
                         ([132, 1, 1], [384, 1, 1], 200 * 1024, 0x77))
        self.assertEqual((r.nattrs, r.attr_id, list(r.cluster)), (1, 4, [2, 1, 1]))
        self.assertEqual((r.args[0], r.args[1] & 0xFFFFFFFF), (0x5000, 5))

    def test_tensor_maps_are_encoded_again_only_when_their_pointer_changes(self):
        lz = self.launcher([("tensor_map", 0, 9, [4096, 512], [8192], [64, 128], 3, 2),
                            ("ptr", 1), ("tensor_map", 2, 7, [1000], [], [256], 0, 0)], 3)
        lz.launch(1, 0xA000, 0xB000, 0xC000)
        r = self.rec
        self.assertEqual(r.encodes, 2)
        self.assertEqual(r.arg_addr[0] % 128, 0, "a CUtensorMap is 128-byte aligned")
        self.assertEqual(r.arg_addr[2] % 128, 0)
        self.assertEqual((r.args[0], r.args[1], r.args[2]), (0xA000, 0xB000, 0xC000))
        self.assertEqual((r.map, r.dtype, r.rank, r.addr, list(r.dims[:1]), list(r.box[:1])),
                         (r.arg_addr[2], 7, 1, 0xC000, [1000], [256]))
        lz.launch(1, 0xA000, 0xB000, 0xC000)
        lz.launch(1, 0xA000, 0xB100, 0xC000)  # not a map's tensor
        self.assertEqual((r.launches, r.encodes, r.args[1]), (3, 2, 0xB100))
        lz.launch(1, 0xA800, 0xB100, 0xC000)  # the first map's tensor
        self.assertEqual((r.launches, r.encodes, r.args[0], r.args[2]), (4, 3, 0xA800, 0xC000))
        self.assertEqual((r.map, r.dtype, r.rank, r.addr), (r.arg_addr[0], 9, 2, 0xA800))
        self.assertEqual((list(r.dims[:2]), r.strides[0], list(r.box[:2]), list(r.elem[:2])),
                         ([4096, 512], 8192, [64, 128], [1, 1]))
        self.assertEqual((r.interleave, r.swizzle, r.l2, r.oob), (0, 3, 2, 0))

    def test_driver_error_is_an_internal_error_naming_the_driver_error(self):
        lz = self.launcher([("ptr", 0)], 1)
        self.fail.value = 700
        with self.assertRaises(_amk.Error) as cm:
            lz.launch(0, 0x1000)
        e = from_engine(cm.exception)
        self.assertIsInstance(e, amk.InternalError)
        self.assertIn("test kernel: cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS", str(e))
        self.assertIn("CUresult 700", str(e))
        lz.launch(0, 0x1000)
        self.assertEqual(self.rec.launches, 2)

    def test_failed_encode_is_retried_on_the_next_launch(self):
        lz = self.launcher([("tensor_map", 0, 9, [64], [], [64], 0, 0)], 1)
        self.fail.value = 1
        with self.assertRaises(_amk.Error) as cm:
            lz.launch(0, 0x1000)
        self.assertIn("cuTensorMapEncodeTiled: CUDA_ERROR_UNKNOWN", str(from_engine(cm.exception)))
        self.assertEqual((self.rec.launches, self.rec.encodes), (0, 0))
        lz.launch(0, 0x1000)
        self.assertEqual((self.rec.launches, self.rec.encodes, self.rec.args[0]), (1, 1, 0x1000))

    def test_wrong_calls_raise_type_and_value_errors(self):
        lz = self.launcher([("ptr", 0)], 1)
        with self.assertRaises(TypeError):
            lz.launch(0)
        with self.assertRaises(TypeError):
            lz.launch(0, 0x1000, 0x2000)
        with self.assertRaises(AttributeError):  # neither an int nor a tensor
            lz.launch(0, "x")
        with self.assertRaises(ValueError):
            self.launcher([("ptr", 1)], 1)
        with self.assertRaises(ValueError):
            self.launcher([("bf16", 1)], 0)
        with self.assertRaises(ValueError):  # strides: rank - 1 values
            self.launcher([("tensor_map", 0, 9, [64, 64], [], [64, 64], 0, 0)], 1)
        with self.assertRaises(OverflowError):
            self.launcher([("i32", 2**40)], 0)
        self.assertEqual(self.rec.launches, 0)

    def plan(self, kernel, shape):
        k = _amk.Kernel(kernel)
        return k.plan(k.info()["defaults"], shape, "sm_90")

    def test_rmsnorm_plan_reaches_the_driver_in_the_kernels_argument_order(self):
        plan = self.plan("rmsnorm", "M=3,N=4096,dtype=bf16")
        self.assertEqual([a["name"] for a in plan["args"]], ["x", "w", "y", "M", "N"])
        self.nargs.value = 5
        lz = launcher(self.drv, 0xF00D, plan, ("x", "w"), "rmsnorm")
        lz.launch(0x99, 0x1000, 0x2000, 0x3000)  # x, w, then the output y
        r, la = self.rec, plan["launch"]
        self.assertEqual((list(r.grid), list(r.block), r.shared),
                         (list(la["grid"]), list(la["block"]), la["shared_bytes"]))
        self.assertEqual((r.fn, r.stream, list(r.args[:3])), (0xF00D, 0x99, [0x1000, 0x2000, 0x3000]))
        self.assertEqual([r.args[3] & 0xFFFFFFFF, r.args[4] & 0xFFFFFFFF], [3, 4096])

    def test_gemm_hopper_plan_encodes_its_three_tensor_maps(self):
        plan = self.plan("gemm_hopper", "M=512,N=256,K=128,dtype=bf16")
        names = [a["name"] for a in plan["args"]]
        self.assertEqual(names[:4], ["tmA", "tmB", "tmC", "C"])
        self.nargs.value = len(names)
        lz = launcher(self.drv, 0xF00D, plan, ("A", "B"), "gemm", workspace=lambda n: 0xD000)
        lz.launch(0, 0xA000, 0xB000, 0xC000)
        r = self.rec
        self.assertEqual((r.launches, r.encodes), (1, 3))
        self.assertEqual(list(r.args[:4]), [0xA000, 0xB000, 0xC000, 0xC000])
        self.assertEqual([r.args[i] & 0xFFFFFFFF for i in range(4, 7)], [512, 256, 128])
        tm_c = plan["tensor_maps"][2]  # the last one encoded
        self.assertEqual((r.map, r.addr, r.dtype, r.rank), (r.arg_addr[2], 0xC000, 9, 2))
        self.assertEqual((list(r.dims[:2]), [r.strides[0]], list(r.box[:2])),
                         (tm_c["dims"], tm_c["strides"], tm_c["box"]))
        self.assertEqual((r.swizzle, r.l2), (SWIZZLE[tm_c["swizzle"]],
                                             L2_PROMOTION[tm_c["l2_promotion"]]))
        self.assertEqual(list(r.grid), list(plan["launch"]["grid"]))

    def test_stream_k_workspace_is_allocated_once_and_passed_by_address(self):
        k = _amk.Kernel("gemm_hopper")
        params = dict(k.info()["defaults"], PERSISTENT=3)
        plan = k.plan(params, "M=8192,N=14336,K=4096,dtype=bf16", "sm_90")
        ws = [b for b in plan["buffers"] if b["name"] == "ws"][0]
        grid = plan["launch"]["grid"][0]
        sk = [b for b in plan["buffers"] if b["name"] == "sk"][0]
        self.assertEqual((ws["count"], sk["count"], sk["role"]),
                         (2 * grid, grid * 2 * params["BM"] * params["BN"], "scratch"))
        names = [a["name"] for a in plan["args"]]
        self.nargs.value = len(names)
        asked = []
        lz = launcher(self.drv, 0xF00D, plan, ("A", "B"), "gemm",
                      workspace=lambda n: asked.append(n) or 0xD000)
        lz.launch(0, 0xA000, 0xB000, 0xC000)
        lz.launch(0, 0xA000, 0xB000, 0xC000)
        self.assertEqual(asked, [ws["count"] * 4, sk["count"] * 4])  # once each, in bytes
        r = self.rec
        self.assertEqual(list(r.args[:4]), [0xA000, 0xB000, 0xC000, 0xC000])
        # not the output tensor
        self.assertEqual((r.args[names.index("ws")], r.args[names.index("sk")]), (0xD000, 0xD000))
        with self.assertRaisesRegex(ValueError, "needs a workspace"):
            launcher(self.drv, 0xF00D, plan, ("A", "B"), "gemm")

    def test_driver_that_cannot_be_loaded_is_a_no_device_error(self):
        with self.assertRaises(_amk.Error) as cm:
            _amk.Driver(os.path.join(self.dir, "missing.so"))
        e = from_engine(cm.exception)
        self.assertIsInstance(e, amk.NoDeviceError)
        self.assertIn("cannot be loaded", str(e))


if __name__ == "__main__":
    unittest.main()

"""amk.tune_kernel without a GPU: argument handling, restrictions, cachefile reading and
writing, result shaping, unsupported arguments, and whole calls on the model backend and in
simulation mode (replaying a Kernel Tuner cachefile written here)."""
import itertools
import json
import os
import shutil
import tempfile
import unittest
import warnings

import amk
from amk import kernel_tuner as kt

try:
    import numpy as np
except ImportError:
    np = None

VECTOR_ADD = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

SAXPY = """
__constant__ float d_w[3];
__global__ void saxpy(float *c, const float *a, float alpha, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = alpha * a[i] + d_w[i % 3];
    }
}
"""

REDUCTION = """
__global__ void sum_floats(float *sum_global, float *array, int n) {
    int x = blockIdx.x * block_size_x + threadIdx.x;
    float sum = 0.0f;
    for (int i = x; i < n; i += num_blocks * block_size_x)
        sum += array[i];
    __shared__ float sh[block_size_x];
    sh[threadIdx.x] = sum;
    __syncthreads();
    for (int s = block_size_x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        sum_global[blockIdx.x] = sh[0];
}
"""


def partial_sums(cpu_result, gpu_result, atol=None):
    """Kernel Tuner's reduction example's verify: the partial sums add up to the answer."""
    return bool(np.isclose(cpu_result[0], np.sum(gpu_result[0]), atol=atol))


@unittest.skipIf(np is None, "numpy is not installed (Debian: python3-numpy)")
class TestOutputChangingParams(unittest.TestCase):
    """The hint tune_kernel gives when configs fail as wrong against the reference config
    because a tuned param changes the output (Kernel Tuner's convolution tunes its filter)."""
    tp = {"filter_width": [3, 5], "block_size_x": [16, 32]}
    ref = {"filter_width": 3, "block_size_x": 16}

    def res(self, fw, bx, status):
        return {"filter_width": fw, "block_size_x": bx, "amk_status": status}

    def test_wrong_exactly_where_a_param_leaves_the_reference(self):
        rs = [self.res(3, 16, "ok"), self.res(3, 32, "ok"), self.res(5, 16, "wrong"),
              self.res(5, 32, "wrong"), self.res(5, 32, "compile_error")]
        self.assertEqual(kt.output_changing_params(rs, self.ref, self.tp), ["filter_width"])

    def test_a_wrong_config_at_the_reference_values_is_a_bug_not_a_hint(self):
        rs = [self.res(3, 16, "ok"), self.res(3, 32, "wrong"), self.res(5, 16, "wrong")]
        self.assertEqual(kt.output_changing_params(rs, self.ref, self.tp), [])

    def test_no_wrong_config_no_hint(self):
        rs = [self.res(3, 16, "ok"), self.res(5, 32, "ok")]
        self.assertEqual(kt.output_changing_params(rs, self.ref, self.tp), [])
        self.assertEqual(kt.output_changing_params([self.res(5, 16, "wrong")], None, self.tp), [])


class TestArguments(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="amk-kt-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_kernel_params_reads_the_signature(self):
        self.assertEqual(kt.kernel_params(VECTOR_ADD, "vector_add"), ["c", "a", "b", "n"])
        src = "__global__ void k(const float * __restrict__ x, int n[], float2 *p) {}"
        self.assertEqual(kt.kernel_params(src, "k"), ["x", "n", "p"])
        self.assertIsNone(kt.kernel_params(src, "other"))

    def test_outputs_come_from_answer_else_from_constant_arrays(self):
        a = np.arange(8, dtype=np.float32)
        c = np.zeros(8, dtype=np.float32)
        n = np.int32(8)
        d, data, answers, _ = kt.describe_arguments([c, a, n], None, ["c", "a", "n"],
                                                     self.dir)
        self.assertEqual(d[0]["Output"], 1)
        self.assertNotIn("FillType", d[1])
        self.assertEqual(sorted(data), ["a"])
        self.assertTrue(np.array_equal(np.load(data["a"]), a))
        self.assertEqual(answers, {})
        self.assertEqual((d[2]["MemoryType"], d[2]["Type"], d[2]["FillValue"]),
                         ("Scalar", "int", 8))
        # with an answer: exactly the arguments it checks are outputs, and its arrays are
        # the answer files (in the output's type); an output that holds data keeps it
        d, data, answers, _ = kt.describe_arguments([c, a, n], [None, a * 2.0, None],
                                                 ["c", "a", "n"], self.dir)
        self.assertEqual([x.get("Output", 0) for x in d], [0, 1, 0])
        self.assertEqual(d[0]["FillType"], "Constant")
        self.assertEqual(d[1]["AccessType"], "ReadWrite")
        self.assertTrue(np.array_equal(np.load(data["a"]), a))
        want = np.load(answers["a"])
        self.assertEqual(want.dtype, np.float32)
        self.assertTrue(np.array_equal(want, a * 2))
        with self.assertRaises(amk.InputError):
            kt.describe_arguments([c, a], [None], None, self.dir)
        with self.assertRaises(TypeError):  # Kernel Tuner's size check
            kt.describe_arguments([c, a], [a[:4], None], None, self.dir)
        with self.assertRaises(amk.UnsupportedError) as cm:  # a scalar answer for an array
            kt.describe_arguments([c, a], [np.float32(1), None], None, self.dir)
        self.assertIn("answer[0]", str(cm.exception))

    def test_integer_arrays_are_their_bytes(self):
        # pnpoly's int32 bitmap, spmv's index arrays: int8 buffers of nbytes elements holding
        # the same memory; a constant that is not one repeated byte is data, not a fill
        idx = np.array([0, 5, 70000, -1], np.int32)
        ones = np.ones(4, np.int32)
        out = np.zeros(4, np.int64)
        d, data, answers, _ = kt.describe_arguments(
            [out, idx, ones], [np.array([1, 2, 3, 2**40]), None, None], ["o", "i", "k"],
            self.dir)
        self.assertEqual([(x["Type"], x["Size"]) for x in d],
                         [("int8", 32), ("int8", 16), ("int8", 16)])
        self.assertEqual(d[0]["Output"], 1)
        self.assertEqual(np.load(data["i"]).tobytes(), idx.astype("<i4").tobytes())
        self.assertEqual(np.load(data["k"]).tobytes(), ones.astype("<i4").tobytes())
        self.assertEqual(np.load(answers["o"]).tobytes(),
                         np.array([1, 2, 3, 2**40], "<i8").tobytes())
        with self.assertRaises(amk.UnsupportedError) as cm:
            kt.describe_arguments([np.zeros(3, np.float64)], None, None, self.dir)
        self.assertIn("float64", str(cm.exception))

    def test_float_scalars_and_types_go_through_as_they_are(self):
        d, _, _, _ = kt.describe_arguments([np.float32(0.5), np.zeros(2, np.float16)], None,
                                        None, self.dir)
        self.assertEqual((d[0]["Type"], d[0]["FillValue"]), ("float", 0.5))
        self.assertEqual((d[1]["Name"], d[1]["Type"]), ("arg1", "half"))
        with self.assertRaises(amk.UnsupportedError) as cm:
            kt.describe_arguments(["text"], None, None, self.dir)
        self.assertIn("arguments[0]", str(cm.exception))

    def test_cmem_args_are_constant_memory_in_order(self):
        w = np.arange(3, dtype=np.float32)
        d, data, symbols = kt.describe_cmem({"d_filter": np.ones(9, np.float32), "d_w": w},
                                            self.dir, taken=["d_w"])
        self.assertEqual([x["Name"] for x in d], ["d_filter", "amk_cmem_d_w"])
        self.assertEqual(symbols, {"d_filter": "d_filter", "amk_cmem_d_w": "d_w"})
        self.assertEqual({x["MemType"] for x in d}, {"Constant"})
        self.assertEqual((d[0]["FillType"], d[0]["FillValue"]), ("Constant", 1.0))
        self.assertEqual(sorted(data), ["amk_cmem_d_w"])
        self.assertTrue(np.array_equal(np.load(data["amk_cmem_d_w"]), w))
        self.assertTrue(kt.declares_constant("__constant__ float d_w[3];", "d_w"))
        self.assertFalse(kt.declares_constant("__constant__ float d_wx[3]; float d_w;", "d_w"))

    def test_launch_follows_kernel_tuner_defaults(self):
        ks = kt.kernel_specification("k", (100, 50), [], [], [None, ["by", "ty"], None],
                                     ["bx", "by"], {"bx": [32], "by": [1, 2], "ty": [1]})
        self.assertEqual(ks["LocalSize"], {"X": "bx", "Y": "by", "Z": "1"})
        self.assertEqual(ks["GridDivY"], ["by", "ty"])
        self.assertNotIn("GridDivX", ks)
        self.assertEqual(ks["ProblemSize"], [100, 50])
        ks = kt.kernel_specification("k", 1000, [], [], [None] * 3, None, {"tile": [1]})
        self.assertEqual(ks["LocalSize"], {"X": "256", "Y": "1", "Z": "1"})
        # a tuning parameter as the problem size: grid = cdiv(value, divisors)
        ks = kt.kernel_specification("k", "nb", [], [], [[], None, None], None,
                                     {"nb": [32, 48, 64], "block_size_x": [32]})
        self.assertEqual(ks["ProblemSize"], [192])
        self.assertEqual(ks["GridDivX"], ["192 // nb"])
        pre = kt.kernel_prelude({"tile": [1]}, None, {"N": 4})
        self.assertIn("#define block_size_x 256", pre)
        self.assertIn("#define N 4", pre)


class TestRestrictionsAndCache(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="amk-kt-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_callable_restrictions_exclude_exactly_what_they_refuse(self):
        params = {"x": [1, 2, 4, 8], "y": [1, 2, 4]}
        sp = amk.Space(params=params, restrictions=["x >= y"], name="rs")
        fn = lambda p: p["x"] * p["y"] != 8  # noqa: E731
        ex = set(kt.excluded_by(sp, [fn]))
        want = {sp.config_id(dict(zip(params, v))) for v in itertools.product(*params.values())
                if v[0] >= v[1] and v[0] * v[1] == 8}
        self.assertEqual(ex, want)
        self.assertEqual(len(ex), 2)
        # old style: the values as a list
        ex2 = set(kt.excluded_by(sp, [lambda v: v[0] * v[1] != 8]))
        self.assertEqual(ex2, want)
        self.assertEqual(kt.split_restrictions(["a < b", fn]), (["a < b"], [fn]))

    def test_cachefile_round_trip_and_refusals(self):
        path = kt.cache_path(os.path.join(self.dir, "c"))
        self.assertTrue(path.endswith("c.json"))
        tp = {"bx": [32, 64], "t": [1, 2]}
        entries = {"32,1": {"bx": 32, "t": 1, "time": 0.5, "times": [0.5]},
                   "64,2": {"bx": 64, "t": 2, "time": "CompilationFailedConfig"}}
        kt.write_cache(path, entries, "k", (10, 10), tp, "Dev")
        self.assertEqual(kt.read_cache(path, "k", [10, 10], tp, "Dev"), entries)
        with open(path) as f:
            doc = json.load(f)
        self.assertEqual(doc["tune_params_keys"], ["bx", "t"])
        with self.assertRaises(ValueError):
            kt.read_cache(path, "other", (10, 10), tp)
        with self.assertRaises(ValueError):
            kt.read_cache(path, "k", (10, 11), tp)
        with self.assertRaises(ValueError):
            kt.read_cache(path, "k", (10, 10), {"t": [1, 2], "bx": [32, 64]})
        with self.assertRaises(ValueError):
            kt.read_cache(path, "k", (10, 10), tp, "Other GPU")
        self.assertEqual(kt.cache_key(tp, {"t": 2, "bx": 64}), "64,2")

    def test_rows_become_kernel_tuner_results(self):
        row = {"trial": 3, "time": "2026-01-02T03:04:05Z", "params": '{"bx":64,"t":1}',
               "status": "ok", "latency_us": 1500.0, "compile_ms": 20.0, "config_id": "ab",
               "note": None}
        r = kt.row_to_result(row, {"bx": [64], "t": [1]})
        self.assertEqual((r["bx"], r["t"], r["time"], r["times"]), (64, 1, 1.5, [1.5]))
        self.assertEqual(r["compile_time"], 20.0)
        self.assertEqual(r["timestamp"], "2026-01-02 03:04:05+00:00")
        row.update(status="compile_error", latency_us=None)
        self.assertEqual(kt.row_to_result(row, {"bx": [64]})["time"], "CompilationFailedConfig")
        row.update(status="wrong")
        self.assertEqual(kt.row_to_result(row, {"bx": [64]})["time"], "RuntimeFailedConfig")


def kt_best(results):
    return min(r["time"] for r in results if isinstance(r["time"], float))


@unittest.skipIf(np is None, "numpy is not installed (Debian: python3-numpy)")
class TestVerify(unittest.TestCase):
    """Kernel Tuner's verify=: the outputs it judges, the gpu_result it gets, its verdicts
    (the evaluator's hook is tested in check_evaluator; the GPU path in test_gpu.py)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="amk-kt-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_judged_outputs_keep_their_content_and_have_no_answer_file(self):
        s = np.zeros(64, np.float32)
        x = np.random.rand(1000).astype(np.float32)
        idx = np.arange(6, dtype=np.int32)
        d, data, answers, ext = kt.describe_arguments(
            [s, x, idx, np.int32(1000)], [np.sum(x), None, idx + 1, 7], ["s", "x", "i", "n"],
            self.dir, verify=True)
        self.assertEqual(ext, [0, 2])
        self.assertEqual(answers, {})  # the answer goes to verify, not to amk's compare
        self.assertEqual((d[0]["AccessType"], d[0]["FillType"], d[0]["FillValue"]),
                         ("ReadWrite", "Constant", 0.0))  # Kernel Tuner refreshes it: zeros
        self.assertEqual((d[2]["AccessType"], d[2]["Type"]), ("ReadWrite", "int8"))
        self.assertEqual(np.load(data["i"]).tobytes(), idx.tobytes())
        self.assertNotIn("Output", d[1])
        # without verify the same scalar answer is refused, naming it
        with self.assertRaises(amk.UnsupportedError) as cm:
            kt.describe_arguments([s, x], [np.sum(x), None], ["s", "x"], self.dir)
        self.assertIn("answer[0]", str(cm.exception))

    def test_the_judge_hands_verify_what_kernel_tuner_does(self):
        s = np.zeros(8, np.float32)
        x = np.arange(16, dtype=np.float32)
        idx = np.zeros((2, 3), np.int32)
        prefix = os.path.join(self.dir, "0123456789abcdef.")
        s_out = np.arange(8, dtype=np.float32)
        s_out.tofile(prefix + "s")
        np.arange(6, dtype="<i4").tofile(prefix + "i")
        seen = []

        def verify(answer, gpu_result, atol=None):
            seen.append((answer, gpu_result, atol))
            return np.isclose(answer[0], np.sum(gpu_result[0]), atol=atol)

        args = [s, x, idx, np.int32(16)]
        answer = [np.float32(28), None, None, None]
        judge = kt.verify_judge(verify, answer, args, ["s", "x", "i", "n"], [0, 2], 1e-6)
        self.assertEqual(judge("0123456789abcdef", prefix), (True, ""))
        a, g, atol = seen[-1]
        self.assertIs(a, answer)
        self.assertEqual(atol, 1e-6)
        self.assertTrue(np.array_equal(g[0], s_out) and g[0].dtype == np.float32)
        self.assertEqual((g[2].dtype, g[2].shape), (np.dtype(np.int32), (2, 3)))
        self.assertEqual(g[2].ravel().tolist(), list(range(6)))
        self.assertEqual((g[1], g[3]), (None, None))  # answer None there: not synced
        # without answer, every other array comes as given (amk's inputs); scalars None
        judge = kt.verify_judge(verify, None, args, ["s", "x", "i", "n"], [0, 2], 1e-6)
        with self.assertRaises(TypeError):  # answer[0] of None: verify raises ...
            verify(None, [s_out], atol=1e-6)
        ok, why = judge("0123456789abcdef", prefix)
        self.assertFalse(ok)  # ... which makes the config wrong, naming the exception
        self.assertIn("verify() raised TypeError", why)
        self.assertTrue(np.array_equal(seen[-1][1][1], x))
        self.assertIsNone(seen[-1][1][3])
        # False, a non-truth value, a missing file
        judge = kt.verify_judge(lambda a, g, atol=None: False, answer, args,
                                ["s", "x", "i", "n"], [0], 1e-6)
        self.assertEqual(judge("id", prefix), (False, "verify() returned False"))
        judge = kt.verify_judge(lambda a, g, atol=None: np.ones(3) > 0, answer, args,
                                ["s", "x", "i", "n"], [0], 1e-6)
        ok, why = judge("id", prefix)
        self.assertFalse(ok)
        self.assertIn("not a truth value", why)
        judge = kt.verify_judge(verify, answer, args, ["s", "x", "i", "n"], [0], 1e-6)
        ok, why = judge("id", os.path.join(self.dir, "missing."))
        self.assertIsNone(ok)
        self.assertIn("no output s for verify()", why)

    def test_a_verify_that_cannot_be_called_so_is_an_error_naming_it(self):
        x = np.random.rand(256).astype(np.float32)
        args = [np.zeros(4, np.float32), x, np.int32(256)]
        tp = {"block_size_x": [32, 64], "num_blocks": [4]}
        for bad in (lambda a, g: True, lambda a: True, 3):
            with self.assertRaises(TypeError) as cm:
                amk.tune_kernel("sum_floats", REDUCTION, "num_blocks", args, tp, grid_div_x=[],
                                answer=[np.sum(x), None, None], verify=bad,
                                amk_backend="model", quiet=True)
            self.assertIn("verify", str(cm.exception))

    def test_kernel_tuner_s_reduction_call_reaches_the_engine(self):
        # the example's first call: a scalar answer and verify=; on the model backend
        # nothing runs, so verify is never called, and every config gets its prediction
        x = np.random.rand(4096).astype(np.float32)
        args = [np.zeros(64, np.float32), x, np.int32(4096)]
        tp = {"block_size_x": [32, 64, 128], "num_blocks": [16, 32, 64]}
        calls = []

        def verify(cpu_result, gpu_result, atol=None):
            calls.append(1)
            return partial_sums(cpu_result, gpu_result, atol)
        spec_dir = os.path.join(self.dir, "spec")
        res, env = amk.tune_kernel("sum_floats", REDUCTION, "num_blocks", args, tp,
                                   grid_div_x=[], answer=[np.sum(x), None, None],
                                   verify=verify, amk_backend="model", quiet=True,
                                   amk_spec_dir=spec_dir)
        self.assertEqual(len(res), 9)
        self.assertTrue(all(isinstance(r["time"], float) for r in res))
        self.assertEqual(calls, [])
        with open(os.path.join(spec_dir, "spec.json")) as f:
            bufs = {b["name"]: b for b in json.load(f)["buffers"]}
        self.assertEqual((bufs["sum_global"]["role"], bufs["sum_global"]["check"],
                          bufs["sum_global"]["init"]), ("inout", "external", "constant"))
        self.assertNotIn("answer", bufs["sum_global"])
        self.assertNotIn("check", bufs["array"])
        # the library loads the folder as written (the CLI tunes it without a judge:
        # run_error rows, docs/PYTHON.md)
        sp = amk.Space(spec_dir)
        self.assertEqual(sp.count(), 9)

    def test_second_phase_without_answer_poisons_and_compares(self):
        # the example's later calls: no answer, num_blocks=[1]; sum_global is an output
        # poisoned before each run, of which the reference config writes element 0 only
        # (the elements it leaves unwritten are not compared: check_numeric)
        x = np.random.rand(4096).astype(np.float32)
        tp = {"block_size_x": [32, 64], "num_blocks": [1]}
        spec_dir = os.path.join(self.dir, "spec2")
        res, _ = amk.tune_kernel("sum_floats", REDUCTION, "num_blocks",
                                 [np.zeros(64, np.float32), x, np.int32(32)], tp,
                                 grid_div_x=[], amk_backend="model", quiet=True,
                                 amk_spec_dir=spec_dir)
        self.assertEqual(len(res), 2)
        with open(os.path.join(spec_dir, "spec.json")) as f:
            b = json.load(f)["buffers"][0]
        self.assertEqual((b["name"], b["role"]), ("sum_global", "out"))
        self.assertNotIn("check", b)


@unittest.skipIf(np is None, "numpy is not installed (Debian: python3-numpy)")
class TestTuneKernel(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="amk-kt-")
        self.old = os.getcwd()
        os.chdir(self.dir)
        n = 100000
        self.args = [np.zeros(n, np.float32), np.random.randn(n).astype(np.float32),
                     np.random.randn(n).astype(np.float32), np.int32(n)]
        self.n = n

    def tearDown(self):
        os.chdir(self.old)
        shutil.rmtree(self.dir, ignore_errors=True)

    def tune(self, tp, problem_size_override=None, **kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return amk.tune_kernel("vector_add", VECTOR_ADD, problem_size_override or self.n,
                                   self.args, tp, amk_backend="model", quiet=True, **kw)

    def test_brute_force_covers_the_space_and_writes_the_cache(self):
        tp = {"block_size_x": [128 + 64 * i for i in range(15)]}
        res, env = self.tune(tp, cache="vcache")
        self.assertEqual(sorted(r["block_size_x"] for r in res), tp["block_size_x"])
        self.assertTrue(all(isinstance(r["time"], float) for r in res))
        self.assertEqual(env["amk_trials"], 15)
        self.assertEqual(env["problem_size"], self.n)
        with open("vcache.json") as f:
            doc = json.load(f)
        self.assertEqual(len(doc["cache"]), 15)
        self.assertEqual(doc["kernel_name"], "vector_add")
        # a second run finds every config in the cache and tunes none
        res2, env2 = self.tune(tp, cache="vcache")
        self.assertEqual(env2["amk_trials"], 0)
        self.assertEqual(sorted(r["block_size_x"] for r in res2), tp["block_size_x"])

    def test_the_kernel_folder_links_the_call_s_data_instead_of_copying_it(self):
        seen = []
        real = amk.space.import_t1

        def spy(t1, out_dir, **kw):
            real(t1, out_dir, **kw)
            for arg, path in (kw.get("data") or {}).items():
                seen.append((kw.get("link_data"), os.stat(path).st_ino,
                             os.stat(os.path.join(out_dir, os.path.basename(path))).st_ino))
        amk.space.import_t1 = spy
        try:
            self.tune({"block_size_x": [128, 256]})
        finally:
            amk.space.import_t1 = real
        self.assertTrue(seen)  # a and b, given as data
        for link, src, dst in seen:
            self.assertTrue(link)
            self.assertEqual(src, dst)  # one file, not a copy of 2 x 400 kB

    def test_import_t1_copies_data_unless_asked_to_link(self):
        kspec = kt.kernel_specification("vector_add", self.n, [
            {"Name": "c", "Type": "float", "Size": self.n, "MemoryType": "Vector",
             "AccessType": "WriteOnly", "FillType": "Constant", "FillValue": 0, "Output": 1},
            {"Name": "a", "Type": "float", "Size": self.n, "MemoryType": "Vector",
             "AccessType": "ReadOnly"},
            {"Name": "b", "Type": "float", "Size": self.n, "MemoryType": "Vector",
             "AccessType": "ReadOnly", "FillType": "Constant", "FillValue": 1},
            {"Name": "n", "Type": "int", "MemoryType": "Scalar", "AccessType": "ReadOnly",
             "FillValue": self.n}], [], [None, None, None], None, {"block_size_x": [128]})
        with open("vector_add.cu", "w") as f:
            f.write("#define kernel_tuner 1\n" + VECTOR_ADD)
        src = kt._npy("a.npy", self.args[1])
        for link in (False, True):
            folder, remove = amk.space.build_folder(
                "vector_add", {"block_size_x": [128]}, (), None, kspec, "vector_add.cu",
                {"a": src}, link_data=link)
            try:
                same = os.stat(os.path.join(folder, "a.npy")).st_ino == os.stat(src).st_ino
                self.assertEqual(same, link)
            finally:
                remove()

    def test_metrics_are_computed_from_each_result(self):
        tp = {"block_size_x": [128, 256]}
        m = {"GB/s": lambda p: 3 * 4 * self.n / 1e9 / (p["time"] / 1e3),
             "twice": lambda p: 2 * p["GB/s"]}
        res, _ = self.tune(tp, metrics=m)
        for r in res:
            self.assertAlmostEqual(r["GB/s"], 3 * 4 * self.n / 1e9 / (r["time"] / 1e3))
            self.assertAlmostEqual(r["twice"], 2 * r["GB/s"])

    def test_file_utils_t4_output_replays_in_amk_s_sim_backend(self):
        from amk.file_utils import store_output_file, store_metadata_file
        tp = {"block_size_x": [128, 192, 256, 320]}
        res, _ = self.tune(tp)
        store_output_file("out.json", res, tp)
        store_metadata_file("meta")
        self.assertTrue(os.path.exists("meta.json"))
        # the T4 file replays: the same best through amk's sim backend
        sp = amk.Space(params=tp, name="vector_add")
        s = amk.loop(sp, backend="sim:out.json", strategy="exhaustive", budget=0,
                     results="r.tsv", best=None, progress=False)
        self.assertAlmostEqual(s["best"]["latency_us"] / 1000.0, kt_best(res), places=6)

    def test_restrictions_strings_and_callables_and_a_budget(self):
        tp = {"block_size_x": [32, 64, 128, 256, 512, 1024], "tile": [1, 2, 4]}
        res, _ = self.tune(tp, restrictions=["block_size_x * tile <= 1024",
                                             lambda p: p["tile"] != 2])
        got = {(r["block_size_x"], r["tile"]) for r in res}
        want = {(b, t) for b in tp["block_size_x"] for t in tp["tile"]
                if b * t <= 1024 and t != 2}
        self.assertEqual(got, want)
        res, env = self.tune(tp, strategy="random_sample", strategy_options={"max_fevals": 5})
        self.assertEqual(len(res), 5)

    def test_problem_size_named_by_a_parameter_launches_that_many_blocks(self):
        tp = {"block_size_x": [64, 128], "num_blocks": [32, 48, 64]}
        res, env = self.tune(tp, problem_size_override="num_blocks", grid_div_x=[])
        self.assertEqual(len(res), 6)
        self.assertEqual(env["problem_size"], "num_blocks")

    def test_the_reference_is_a_valid_config_when_the_first_values_are_not(self):
        # Kernel Tuner's matmul: block_size_x == block_size_y * tile_size_y rules out the
        # first values; the reference must satisfy it (and the callable restriction)
        tp = {"block_size_x": [16, 32, 64], "block_size_y": [1, 2, 4, 8],
              "tile_size_y": [1, 2, 4, 8]}
        r = ["block_size_x == block_size_y * tile_size_y"]
        ref = kt.reference_config("k", tp, r, [lambda p: p["block_size_y"] > 1], [64], None)
        self.assertEqual(ref["block_size_x"], ref["block_size_y"] * ref["tile_size_y"])
        self.assertGreater(ref["block_size_y"], 1)
        res, _ = self.tune(tp, restrictions=r)
        self.assertEqual(len(res), sum(1 for x in tp["block_size_x"] for y in tp["block_size_y"]
                                       for t in tp["tile_size_y"] if x == y * t))

    def test_unsupported_arguments_are_named(self):
        tp = {"block_size_x": [128, 256]}
        for kw, name in ((dict(texmem_args={"t": self.args[1]}), "texmem_args"),
                         (dict(metrics={"x": 1}), "metrics['x']"),
                         (dict(objective="GFLOP/s"), "objective"),
                         (dict(lang="OpenCL"), "lang"),
                         (dict(strategy="bayes_opt_xyz"), "strategy"),
                         (dict(compiler_options=["-O0"]), "compiler_options"),
                         (dict(strategy_options={"maxiter": 3}), "maxiter")):
            with self.assertRaises(amk.UnsupportedError) as cm:
                self.tune(tp, **kw)
            self.assertIn(name, str(cm.exception))
        with self.assertRaises(TypeError):
            self.tune(tp, not_an_option=1)

    def test_cmem_args_need_the_kernel_s_constant_symbol(self):
        tp = {"block_size_x": [128, 256]}
        with self.assertRaises(amk.InputError) as cm:
            self.tune(tp, cmem_args={"d_filter": np.arange(9, dtype=np.float32)})
        self.assertIn("__constant__ d_filter", str(cm.exception))

    def test_the_kernel_as_written_reaches_the_spec_and_the_library_loads_it(self):
        # inputs as data, a float scalar, constant memory, an answer with atol: the generated
        # folder (amk_spec_dir) holds exactly those, and the library loads and tunes it
        n = 1000
        a = np.random.randn(n).astype(np.float32)
        w = np.array([1.0, 2.0, 3.0], np.float32)
        alpha = np.float32(0.5)
        want = alpha * a + w[np.arange(n) % 3]
        tp = {"block_size_x": [64, 128, 256]}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res, _ = amk.tune_kernel("saxpy", SAXPY, n, [np.zeros(n, np.float32), a, alpha,
                                                          np.int32(n)], tp,
                                     answer=[want, None, None, None], atol=1e-4,
                                     cmem_args={"d_w": w}, amk_backend="model", quiet=True,
                                     amk_spec_dir="kept")
        self.assertEqual(sorted(r["block_size_x"] for r in res), tp["block_size_x"])
        with open(os.path.join("kept", "spec.json")) as f:
            spec = json.load(f)
        bufs = {b["name"]: b for b in spec["buffers"]}
        self.assertEqual(bufs["c"]["role"], "out")
        self.assertTrue(np.array_equal(np.load(os.path.join("kept", bufs["c"]["answer"])),
                                       want))
        self.assertEqual(bufs["a"]["role"], "in")
        self.assertNotIn("init", bufs["a"])
        self.assertTrue(np.array_equal(np.load(os.path.join("kept", bufs["a"]["data"])), a))
        self.assertEqual((bufs["d_w"]["memory"], bufs["d_w"]["symbol"]), ("constant", "d_w"))
        self.assertTrue(np.array_equal(np.load(os.path.join("kept", bufs["d_w"]["data"])), w))
        self.assertEqual(spec["args"], ["c", "a", "alpha", "n"])
        self.assertEqual(spec["reference"]["args"], spec["args"])
        self.assertEqual(spec["scalars"], {"alpha": {"dtype": "f32", "value": 0.5}})
        self.assertEqual(spec["tolerance"]["atol"], 1e-4)
        sp = amk.Space("kept")
        self.assertEqual(sp.count(), 3)
        plan = sp.plan({"block_size_x": 128})
        self.assertEqual([(x["name"], x["kind"]) for x in plan["args"]],
                         [("c", "buffer"), ("a", "buffer"), ("alpha", "scalar"),
                          ("n", "value")])
        self.assertEqual((plan["args"][2]["dtype"], plan["args"][2]["value"]), ("f32", 0.5))
        pb = {b["name"]: b for b in plan["buffers"]}
        self.assertEqual((pb["d_w"]["memory"], pb["d_w"]["symbol"]), ("constant", "d_w"))
        self.assertEqual((pb["c"]["answer"], pb["a"]["data"]),
                         (bufs["c"]["answer"], bufs["a"]["data"]))

    def test_without_an_answer_atol_is_not_the_tolerance(self):
        # Kernel Tuner uses atol with answer only; the zeros array is the output (poisoned),
        # the inputs are the arrays given
        tp = {"block_size_x": [128, 256]}
        self.tune(tp, amk_spec_dir="kept", atol=0.5)
        with open(os.path.join("kept", "spec.json")) as f:
            spec = json.load(f)
        bufs = {b["name"]: b for b in spec["buffers"]}
        self.assertEqual((bufs["c"]["role"], bufs["a"]["role"]), ("out", "in"))
        self.assertTrue(np.array_equal(np.load(os.path.join("kept", bufs["b"]["data"])),
                                       self.args[2]))
        self.assertNotIn("atol", spec["tolerance"])

    def test_constant_inputs_are_constant_fills(self):
        tp = {"block_size_x": [128, 256]}
        self.args[1] = np.full(self.n, 2.5, np.float32)
        self.tune(tp, amk_spec_dir="kept", answer=[np.zeros(self.n, np.float32), None, None,
                                                  None])
        with open(os.path.join("kept", "spec.json")) as f:
            spec = json.load(f)
        bufs = {b["name"]: b for b in spec["buffers"]}
        self.assertEqual((bufs["a"]["init"], bufs["a"]["value"]), ("constant", 2.5))
        self.assertNotIn("data", bufs["a"])
        self.assertEqual(spec["tolerance"]["atol"], 1e-6)

    def test_simulation_mode_replays_a_cachefile(self):
        tp = {"block_size_x": [64, 128, 256, 512], "tile": [1, 2]}
        times = {}
        entries = {}
        for i, (b, t) in enumerate(itertools.product(tp["block_size_x"], tp["tile"])):
            times[(b, t)] = 1.0 + ((i * 7) % 8) / 10
            entries["%d,%d" % (b, t)] = {"block_size_x": b, "tile": t, "time": times[(b, t)],
                                         "times": [times[(b, t)]] * 3, "compile_time": 100.0}
        entries["512,2"]["time"] = "RuntimeFailedConfig"
        kt.write_cache("sim.json", entries, "vector_add", self.n, tp, "Recorded GPU")
        res, env = amk.tune_kernel("vector_add", "unused", self.n, self.args, tp,
                                   restrictions=["block_size_x * tile <= 512"],
                                   cache="sim.json", simulation_mode=True, quiet=True)
        valid = {k for k in times if k[0] * k[1] <= 512}
        self.assertEqual({(r["block_size_x"], r["tile"]) for r in res}, valid)
        best = min((r for r in res if isinstance(r["time"], float)), key=lambda r: r["time"])
        self.assertAlmostEqual(best["time"], min(times[k] for k in valid if k != (512, 2)))
        self.assertEqual(env["amk_backend"], "sim")
        self.assertTrue(env["device_name"].startswith("Recorded GPU"))


if __name__ == "__main__":
    unittest.main()

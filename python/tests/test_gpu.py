"""The Python package on a GPU (CTest python_gpu, label gpu): skipped, with the reason, where
no GPU answers. tune_kernel runs Kernel Tuner's vector_add on the device (and a kernel with
the user's data, a float scalar, constant memory and an answer), and amk.loop tunes
a built-in kernel; the checks compare with the engine's own record and can fail."""
import os
import shutil
import tempfile
import unittest

import amk
from test_core_tune_kernel import REDUCTION, partial_sums

try:
    import numpy as np
except ImportError:
    np = None

_GPU = amk.devices()
NO_GPU = "no GPU answers: %s" % _GPU.get("reason") if not _GPU["devices"] else None

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


@unittest.skipIf(NO_GPU, NO_GPU or "")
class TestGpu(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="amk-pygpu-")
        self.old = os.getcwd()
        os.chdir(self.dir)

    def tearDown(self):
        os.chdir(self.old)
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_loop_measures_on_the_gpu(self):
        s = amk.loop("copy", backend="gpu", budget=6, results="r.tsv", best=None,
                     progress=False)
        self.assertEqual(s["backend"], "gpu")
        self.assertEqual(s["best"]["latency_kind"], "measured")
        b = amk.best("r.tsv")
        self.assertEqual(b["config_id"], s["best"]["config_id"])

    @unittest.skipIf(np is None, "numpy is not installed")
    def test_tune_kernel_vector_add_runs_every_config_correctly(self):
        n = 1 << 22
        args = [np.zeros(n, np.float32), np.random.randn(n).astype(np.float32),
                np.random.randn(n).astype(np.float32), np.int32(n)]
        tp = {"block_size_x": [128, 256, 512, 1024]}
        res, env = amk.tune_kernel("vector_add", VECTOR_ADD, n, args, tp, quiet=True,
                                   cache="va")
        self.assertEqual(sorted(r["block_size_x"] for r in res), tp["block_size_x"])
        self.assertEqual({r["amk_status"] for r in res}, {"ok"}, res)
        self.assertEqual(env["amk_backend"], "gpu")
        # 3 arrays of n floats move through memory: no faster than a few TB/s
        best = min(r["time"] for r in res)
        self.assertGreater(3 * 4 * n / (best / 1e3), 1e9)
        self.assertLess(3 * 4 * n / (best / 1e3), 10e12)
        self.assertTrue(os.path.exists("va.json"))

    @unittest.skipIf(np is None, "numpy is not installed")
    def test_tune_kernel_runs_the_kernel_on_the_user_s_data_and_answer(self):
        # the answer is only right if the kernel reads the user's array, the float scalar
        # and the constant memory given: every config ok; an answer off by 1 in one element
        # beyond atol makes every config wrong
        n = 1 << 20
        a = np.random.randn(n).astype(np.float32)
        w = np.array([1.0, -2.0, 3.0], np.float32)
        alpha = np.float32(0.75)
        want = alpha * a + w[np.arange(n) % 3]
        args = [np.zeros(n, np.float32), a, alpha, np.int32(n)]
        tp = {"block_size_x": [128, 256, 512]}
        res, _ = amk.tune_kernel("saxpy", SAXPY, n, args, tp, answer=[want, None, None, None],
                                 atol=1e-5, cmem_args={"d_w": w}, quiet=True)
        self.assertEqual({r["amk_status"] for r in res}, {"ok"}, res)
        bad = want.copy()
        bad[12345] += 1.0
        res, _ = amk.tune_kernel("saxpy", SAXPY, n, args, tp, answer=[bad, None, None, None],
                                 atol=1e-5, cmem_args={"d_w": w}, quiet=True)
        self.assertEqual({r["amk_status"] for r in res}, {"wrong"}, res)

    @unittest.skipIf(np is None, "numpy is not installed")
    def test_tune_kernel_integer_arrays_compare_exactly(self):
        src = ("__global__ void twice(int *o, const int *i, int n) {\n"
               "    int t = blockIdx.x * block_size_x + threadIdx.x;\n"
               "    if (t < n) o[t] = i[t] * 2;\n}\n")
        n = 100000
        i = np.random.randint(-2**20, 2**20, n).astype(np.int32)
        args = [np.zeros(n, np.int32), i, np.int32(n)]
        tp = {"block_size_x": [64, 256]}
        res, _ = amk.tune_kernel("twice", src, n, args, tp, answer=[i * 2, None, None],
                                 quiet=True)
        self.assertEqual({r["amk_status"] for r in res}, {"ok"}, res)
        res, _ = amk.tune_kernel("twice", src, n, args, tp, answer=[i * 2 + 1, None, None],
                                 quiet=True)
        self.assertEqual({r["amk_status"] for r in res}, {"wrong"}, res)

    @unittest.skipIf(np is None, "numpy is not installed")
    def test_tune_kernel_verify_judges_every_config_before_its_time(self):
        # Kernel Tuner's reduction: num_blocks partial sums whose total is the answer; the
        # outputs verify gets hold the user's zeros where no block wrote (Kernel Tuner
        # copies the original array before the check run)
        n = 1 << 20
        x = np.random.rand(n).astype(np.float32)
        args = [np.zeros(64, np.float32), x, np.int32(n)]
        tp = {"block_size_x": [32, 128], "num_blocks": [16, 64]}
        seen = []

        def verify(cpu_result, gpu_result, atol=None):
            seen.append(int(np.count_nonzero(gpu_result[0])))
            self.assertIsNone(gpu_result[1])
            return partial_sums(cpu_result, gpu_result, atol)
        res, _ = amk.tune_kernel("sum_floats", REDUCTION, "num_blocks", args, tp,
                                 grid_div_x=[], answer=[np.sum(x), None, None],
                                 verify=verify, quiet=True, amk_results="r.tsv")
        self.assertEqual({r["amk_status"] for r in res}, {"ok"}, res)
        self.assertEqual(sorted(seen), [16, 16, 64, 64])
        self.assertTrue(all("passed the external check" in r["amk_note"] for r in res))

        # a verify that refuses the 64-block configs: those are wrong, with no time in the
        # results, the results file or best; a verify that raises names the exception
        def refuse64(cpu_result, gpu_result, atol=None):
            if np.count_nonzero(gpu_result[0]) > 32:
                return False
            return partial_sums(cpu_result, gpu_result, atol)
        res, env = amk.tune_kernel("sum_floats", REDUCTION, "num_blocks", args, tp,
                                   grid_div_x=[], answer=[np.sum(x), None, None],
                                   verify=refuse64, quiet=True, amk_results="r2.tsv")
        by = {r["num_blocks"]: r for r in res}
        self.assertEqual(by[64]["amk_status"], "wrong")
        self.assertEqual(by[64]["time"], "RuntimeFailedConfig")
        self.assertIn("verify() returned False", by[64]["amk_note"])
        self.assertEqual(by[16]["amk_status"], "ok")
        self.assertEqual(env["amk_best"]["params"]["num_blocks"], 16)
        from amk import kernel_tuner as kt  # the rows as written (pandas not needed)
        wrong = [r for r in kt.rows_of_run("r2.tsv", 1, 1 << 40) if r["status"] == "wrong"]
        self.assertEqual(len(wrong), 2)
        self.assertTrue(all(r["latency_us"] is None or r["latency_us"] != r["latency_us"]
                            for r in wrong), wrong)

        def boom(cpu_result, gpu_result, atol=None):
            raise ValueError("no")
        res, _ = amk.tune_kernel("sum_floats", REDUCTION, "num_blocks", args, tp,
                                 grid_div_x=[], answer=[np.sum(x), None, None],
                                 verify=boom, quiet=True)
        self.assertEqual({r["amk_status"] for r in res}, {"wrong"})
        self.assertIn("verify() raised ValueError: no", res[0]["amk_note"])

    @unittest.skipIf(np is None, "numpy is not installed")
    def test_tune_kernel_partial_outputs_compare_where_the_reference_writes(self):
        # the reduction's second phase: no answer, one block writes sum_global[0] of 64;
        # the 63 elements the reference config leaves unwritten are not compared, element
        # 0 is (a kernel that writes a wrong sum there is wrong)
        x = np.random.rand(4096).astype(np.float32)
        tp = {"block_size_x": [32, 64, 128, 256], "num_blocks": [1]}
        args = [np.zeros(64, np.float32), x, np.int32(4096)]
        res, _ = amk.tune_kernel("sum_floats", REDUCTION, "num_blocks", args, tp,
                                 grid_div_x=[], quiet=True)
        self.assertEqual({r["amk_status"] for r in res}, {"ok"}, res)
        self.assertIn("63 of 64 elements left unwritten by the reference", res[0]["amk_note"])
        bad = REDUCTION.replace("sum_global[blockIdx.x] = sh[0];",
                                "sum_global[blockIdx.x] = block_size_x == 32 ? sh[0] : 1.0f;")
        res, _ = amk.tune_kernel("sum_floats", bad, "num_blocks", args, tp, grid_div_x=[],
                                 quiet=True)
        self.assertEqual({r["block_size_x"] for r in res if r["amk_status"] == "wrong"},
                         {64, 128, 256}, res)


if __name__ == "__main__":
    unittest.main()

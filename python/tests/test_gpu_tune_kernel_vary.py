"""tune_kernel on a GPU (CTest python_gpu, label gpu; skipped, with the reason, where no GPU
answers) with a param that changes what the kernel computes and no answer: the probe finds
it, every config is checked against the reference config with the same value of it, and a
bug that only some values of a performance param have is still caught. A reference config
that breaks a restriction is a run_error saying so."""
import os
import shutil
import tempfile
import unittest
import warnings

import amk

try:
    import numpy as np
except ImportError:
    np = None

_GPU = amk.devices()
NO_GPU = "no GPU answers: %s" % _GPU.get("reason") if not _GPU["devices"] else None

# filter_width changes the output; block_size_x 128 writes one wrong element (a tiling bug)
SCALE = """
__global__ void scale(float *out, const float *in, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) out[i] = filter_width * in[i] + ((block_size_x == 128 && i == 5) ? 1.0f : 0.0f);
}
"""


@unittest.skipIf(NO_GPU, NO_GPU or "")
@unittest.skipIf(np is None, "numpy is not installed")
class TestGpuTuneKernelVary(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="amk-pygpu-vary-")
        n = 1 << 16
        self.args = [np.zeros(n, np.float32), np.random.randn(n).astype(np.float32),
                     np.int32(n)]
        self.n = n

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def tune(self, tp, **kw):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            res, env = amk.tune_kernel("scale", SCALE, self.n, self.args, tp, quiet=True,
                                       **kw)
        return res, env, [str(x.message) for x in w]

    def test_the_probe_finds_the_output_param_and_the_tiling_bug_is_still_caught(self):
        tp = {"filter_width": [1, 2, 3], "block_size_x": [32, 64, 128]}
        res, env, warned = self.tune(tp)
        self.assertEqual(env["amk_vary"], ["filter_width"], warned)
        self.assertEqual(len([m for m in warned if "filter_width changes what" in m]), 1,
                         warned)
        for r in res:
            want = "wrong" if r["block_size_x"] == 128 else "ok"
            self.assertEqual(r["amk_status"], want, r)
        self.assertEqual(len(res), 9)

    def test_an_invalid_reference_config_is_said_in_the_verdict(self):
        # the reference config is (1, 32); (2, 64) is valid, its reference config (2, 32) not
        tp = {"filter_width": [1, 2], "block_size_x": [32, 64]}
        res, env, _ = self.tune(tp, restrictions=["filter_width == 1 or block_size_x == 64"],
                                amk_vary=["filter_width"])
        got = {(r["filter_width"], r["block_size_x"]): r for r in res}
        self.assertEqual(sorted(got), [(1, 32), (1, 64), (2, 64)])
        self.assertEqual(got[(1, 32)]["amk_status"], "ok")
        self.assertEqual(got[(1, 64)]["amk_status"], "ok")
        bad = got[(2, 64)]
        self.assertEqual(bad["amk_status"], "run_error", bad)
        self.assertIn("the reference config (the default with filter_width=2) is not valid",
                      bad.get("amk_note", ""))


if __name__ == "__main__":
    unittest.main()

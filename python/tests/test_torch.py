"""amk.torch on a GPU with PyTorch (CTest python_torch, label gpu): skipped, with the reason,
without torch, without a CUDA device, or without Hopper (sm_90) for gemm_hopper. Every op is
compared with torch's own on several shapes; the tuned config comes from a database this test
exports after a short GPU run; the host time per call is measured and printed (not asserted:
bench/torch_overhead.py is the benchmark)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

try:
    import torch
    HAVE_CUDA = torch.cuda.is_available()
    WHY = None if HAVE_CUDA else "torch sees no CUDA device"
except ImportError as e:
    torch, HAVE_CUDA, WHY = None, False, "torch is not installed (%s)" % e

import amk


def hopper():
    return HAVE_CUDA and torch.cuda.get_device_capability(0) >= (9, 0)


@unittest.skipIf(not HAVE_CUDA, WHY or "")
class TestTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import amk.torch as at
        cls.at = at
        cls.dir = tempfile.mkdtemp(prefix="amk-pytorch-")
        res = os.path.join(cls.dir, "r.tsv")
        cls.db = os.path.join(cls.dir, "tuned.json")
        # The tuning runs in a fresh process: amk's run workers are forked, and a process in
        # which CUDA is already initialised (torch above) cannot hand a fork a GPU
        # (docs/PYTHON.md). amk.torch itself launches in this process.
        # gemm_hopper at a decode shape tuned to PERSISTENT 3 (stream-K: the kernel's
        # workspace and scratch buffers, which amk.torch allocates itself), where a GPU can
        # run it.
        sk = ("amk.evaluate('gemm_hopper', dict(amk.Space('gemm_hopper').defaults, "
              "PERSISTENT=3, BM=128, BN=256, STAGES=3), shape='M=16,N=4096,K=8192,dtype=bf16', "
              "backend='gpu', results=%r)\n" % res) if hopper() else ""
        script = ("import amk\n"
                  "for k, s in (('rmsnorm', 'M=4096,N=4096,dtype=bf16'), "
                  "('softmax', 'M=4096,N=4096,dtype=f16')):\n"
                  "    amk.loop(k, shape=s, backend='gpu', budget=6, results=%r, best=None, "
                  "progress=False)\n" % res + sk +
                  "amk.export(%r, %r)\n" % (res, cls.db))
        subprocess.run([sys.executable, "-c", script], check=True)
        at.load(cls.db)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def close(self, got, want, tol):
        err = (got.float() - want.float()).abs().max().item()
        scale = want.float().abs().max().item()
        self.assertLessEqual(err, tol * max(scale, 1.0), "max error %g (scale %g)" % (err, scale))

    def test_rmsnorm_matches_torch(self):
        for (m, n), dt in (((4096, 4096), torch.bfloat16), ((32, 8192), torch.bfloat16),
                           ((1023, 3001), torch.float16), ((64, 4096), torch.float32)):
            x = torch.randn(m, n, device="cuda", dtype=dt)
            w = torch.rand(n, device="cuda", dtype=dt) + 0.5
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                y = torch.ops.amk.rmsnorm(x, w)
            xf = x.float()
            ref = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
            self.close(y, ref, 2e-2 if dt != torch.float32 else 1e-5)

    def test_exact_tuned_shape_gives_no_warning_and_nearest_warns_once(self):
        x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            self.at.rmsnorm(x, w)
        self.assertEqual([str(w.message) for w in ws if "amk.torch" in str(w.message)], [])
        x2 = torch.randn(2048, 4096, device="cuda", dtype=torch.bfloat16)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            self.at.rmsnorm(x2, w)
            self.at.rmsnorm(x2, w)
        self.assertEqual(len([w for w in ws if "amk.torch" in str(w.message)]), 1)

    def test_softmax_matches_torch(self):
        for (m, n), dt in (((4096, 4096), torch.float16), ((32, 32000), torch.bfloat16),
                           ((1, 4096), torch.float16)):
            x = torch.randn(m, n, device="cuda", dtype=dt)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                y = torch.ops.amk.softmax(x)
            self.close(y, torch.softmax(x.float(), -1), 1e-2)

    @unittest.skipIf(not hopper(), "gemm_hopper needs an sm_90 GPU")
    def test_gemm_hopper_matches_torch(self):
        for (m, n, k), dt in (((4096, 4096, 4096), torch.bfloat16),
                              ((257, 520, 200), torch.bfloat16),
                              ((1024, 2048, 512), torch.float16)):
            a = torch.randn(m, k, device="cuda", dtype=dt)
            b = torch.randn(k, n, device="cuda", dtype=dt)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                c = torch.ops.amk.gemm_hopper(a, b)
            self.close(c, a.float() @ b.float(), 2e-2)

    @unittest.skipIf(not hopper(), "gemm_hopper needs sm_90")
    def test_gemm_hopper_stream_k_config_from_the_database_matches_torch(self):
        a = torch.randn(16, 8192, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(3):  # the workspace's counters left zero for the next call
                c = torch.ops.amk.gemm_hopper(a, b)
                self.close(c, a.float() @ b.float(), 2e-2)
        self.assertEqual([str(x.message) for x in w], [])  # the tuned config, exact shape

    def test_new_tensors_at_a_known_shape_get_their_own_pointers(self):
        # The launcher keeps the argument block of the last call: new tensors must refill it
        # (and re-encode gemm_hopper's tensor maps).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(2):
                x = torch.randn(8, 1024, device="cuda", dtype=torch.bfloat16)
                w = torch.rand(1024, device="cuda", dtype=torch.bfloat16) + 0.5
                xf = x.float()
                ref = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
                self.close(torch.ops.amk.rmsnorm(x, w), ref, 2e-2)
                if hopper():
                    a = torch.randn(257, 200, device="cuda", dtype=torch.bfloat16)
                    b = torch.randn(200, 520, device="cuda", dtype=torch.bfloat16)
                    self.close(torch.ops.amk.gemm_hopper(a, b), a.float() @ b.float(), 2e-2)

    def test_torch_compile_traces_the_ops(self):
        x = torch.randn(256, 4096, device="cuda", dtype=torch.float16)
        w = torch.rand(4096, device="cuda", dtype=torch.float16) + 0.5

        @torch.compile(fullgraph=True)
        def f(x, w):
            return torch.ops.amk.softmax(torch.ops.amk.rmsnorm(x, w) * 2)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = f(x, w)
            want = self.at.softmax(self.at.rmsnorm(x, w) * 2)
        self.close(got, want, 1e-3)

    def test_host_time_per_call(self):
        x = torch.randn(32, 4096, device="cuda", dtype=torch.bfloat16)
        w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.at._rmsnorm(x, w)
        torch.cuda.synchronize()
        n = 2000
        t0 = time.perf_counter()
        for _ in range(n):
            self.at._rmsnorm(x, w)
        host = (time.perf_counter() - t0) / n * 1e6
        t0 = time.perf_counter()
        for _ in range(n):
            torch.ops.amk.rmsnorm(x, w)
        op = (time.perf_counter() - t0) / n * 1e6
        torch.cuda.synchronize()
        # A figure to read, not a check: bench/torch_overhead.py measures it with yardsticks.
        print("\namk.torch rmsnorm host time per call: %.1f us direct, %.1f us through "
              "torch.ops.amk" % (host, op))


if __name__ == "__main__":
    unittest.main()

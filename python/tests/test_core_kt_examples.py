"""bench/kt_examples.py's comparison with Kernel Tuner, without a GPU and without Kernel
Tuner: the list of configs both tuners are given (the same in any process, every one valid),
the restriction that confines a tuner to it (amk on its model backend tunes exactly that
list), and the per-call comparison and its table."""
import importlib.util
import itertools
import os
import unittest

import amk

try:
    import numpy as np
except ImportError:
    np = None

here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "kt_examples", os.path.join(here, "..", "..", "bench", "kt_examples.py"))
kx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kx)

# Kernel Tuner's matmul example: 288 combinations, 11 pass its restriction per tile_size_x,
# one of which has a 64 x 32 block (2048 threads).
MATMUL_TP = {"block_size_x": [16, 32, 64], "block_size_y": [1, 2, 4, 8, 16, 32],
             "tile_size_x": [1, 2, 4, 8], "tile_size_y": [1, 2, 4, 8]}
MATMUL_R = ["block_size_x==block_size_y*tile_size_y"]

VECTOR_ADD = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""


def key(c, tp):
    return tuple(c[k] for k in tp)


class TestConfigSample(unittest.TestCase):
    def test_config_sample_all_is_every_valid_config_within_the_thread_limit(self):
        got = kx.config_sample(MATMUL_TP, MATMUL_R, None, 0)
        self.assertEqual(len(got), 40)
        for c in got:
            self.assertEqual(c["block_size_x"], c["block_size_y"] * c["tile_size_y"])
            self.assertLessEqual(c["block_size_x"] * c["block_size_y"], 1024)

    def test_config_sample_n_is_a_fixed_subset(self):
        full = [key(c, MATMUL_TP) for c in kx.config_sample(MATMUL_TP, MATMUL_R, None, 0)]
        a = [key(c, MATMUL_TP) for c in kx.config_sample(MATMUL_TP, MATMUL_R, None, 6)]
        b = [key(c, MATMUL_TP) for c in kx.config_sample(MATMUL_TP, MATMUL_R, None, 6)]
        other = [key(c, MATMUL_TP) for c in kx.config_sample(MATMUL_TP, MATMUL_R, None, 6,
                                                              seed=2)]
        self.assertEqual(a, b)
        self.assertEqual(len(set(a)), 6)
        self.assertTrue(set(a) <= set(full))
        self.assertEqual(a, sorted(a, key=full.index))  # in the space's order
        self.assertNotEqual(a, other)

    def test_config_sample_callable_restriction_sees_the_config(self):
        tp = {"block_size_x": [32, 64, 128, 256]}
        got = kx.config_sample(tp, lambda p: p["block_size_x"] > 64, None, 0)
        self.assertEqual([c["block_size_x"] for c in got], [128, 256])

    def test_config_sample_large_space_is_sampled_without_listing(self):
        tp = {"p%d" % i: list(range(1, 6)) for i in range(8)}  # 390625 > ENUMERATE_LIMIT
        got = kx.config_sample(tp, ["p0 != p1"], [], 10)
        self.assertEqual(len({key(c, tp) for c in got}), 10)
        self.assertTrue(all(c["p0"] != c["p1"] for c in got))
        self.assertEqual(got, kx.config_sample(tp, ["p0 != p1"], [], 10))


class TestRestriction(unittest.TestCase):
    def test_sample_restriction_accepts_exactly_the_sample(self):
        sample = kx.config_sample(MATMUL_TP, MATMUL_R, None, 7)
        s = kx.sample_restriction(sample, MATMUL_TP)
        accepted = set()
        for combo in itertools.product(*MATMUL_TP.values()):
            if eval(s, {}, dict(zip(MATMUL_TP, combo))):  # noqa: S307
                accepted.add(combo)
        self.assertEqual(accepted, {key(c, MATMUL_TP) for c in sample})

    def test_restrict_to_keeps_the_example_restrictions(self):
        sample = kx.config_sample(MATMUL_TP, MATMUL_R, None, 3)
        r = kx.restrict_to(MATMUL_R, sample, MATMUL_TP)
        self.assertEqual(r[:1], MATMUL_R)
        self.assertEqual(len(r), 2)
        self.assertIsNone(kx.restrict_to(None, sample, {k: [1] for k in MATMUL_TP}))

    def test_restrict_to_keeps_a_lone_callable_a_callable(self):
        tp = {"block_size_x": [32, 64, 128, 256]}
        sample = [{"block_size_x": 64}, {"block_size_x": 256}]
        r = kx.restrict_to(lambda p: p["block_size_x"] != 64, sample, tp)
        self.assertTrue(callable(r))
        self.assertEqual([v for v in tp["block_size_x"] if r({"block_size_x": v})], [256])

    @unittest.skipIf(np is None, "needs numpy")
    def test_restrict_to_amk_tunes_exactly_the_sample(self):
        tp = {"block_size_x": [32 * i for i in range(1, 33)]}  # 1056 and up: beyond 1024
        sample = kx.config_sample(tp, None, None, 5)
        n = 4096
        args = [np.zeros(n, np.float32), np.random.rand(n).astype(np.float32),
                np.random.rand(n).astype(np.float32), np.int32(n)]
        res, _ = amk.tune_kernel("vector_add", VECTOR_ADD, n, args, tp,
                                 restrictions=kx.restrict_to(None, sample, tp),
                                 amk_backend="model", amk_vary=[], quiet=True)
        self.assertEqual(sorted(r["block_size_x"] for r in res),
                         [c["block_size_x"] for c in sample])


class TestWholeCalls(unittest.TestCase):
    def test_exhaustive_itself_only_for_brute_force_without_a_budget(self):
        self.assertTrue(kx.exhaustive_itself({}))  # Kernel Tuner's default: reduction.py
        self.assertTrue(kx.exhaustive_itself({"strategy": "brute_force",
                                              "strategy_options": {"seed": 3}}))
        self.assertFalse(kx.exhaustive_itself({"strategy": "random_sample"}))
        for budget in ("max_fevals", "time_limit", "fraction"):
            self.assertFalse(kx.exhaustive_itself({"strategy_options": {budget: 10}}))

    def test_full_calls_reads_numbers_by_spaces_or_commas(self):
        self.assertEqual(kx.full_calls("1 2,5"), {1, 2, 5})
        self.assertEqual(kx.full_calls(""), set())
        self.assertEqual(kx.full_calls(None), set())

    def test_call_line_gives_wall_seconds_per_config_and_the_yardstick(self):
        c = {"kernel_name": "sum_floats", "configs": 216, "wall_s": 32.4,
             "wall_per_config_s": 0.15, "best_ms": 0.0042,
             "exhaustive_best_ms": 0.0042, "exhaustive": "the call itself"}
        line = kx.call_line("reduction", 3, c)
        self.assertTrue(line.startswith("kt_examples: reduction call 3 (sum_floats)"))
        self.assertIn("216 configs in 32.4 s, 0.150 s/config", line)
        self.assertIn("(the call itself)", line)
        del c["exhaustive_best_ms"]
        self.assertNotIn("exhaustive", kx.call_line("reduction", 3, c))


class TestComparison(unittest.TestCase):
    def call(self, configs, wall, split):
        return {"kernel_name": "k", "configs": len(configs), "wall_s": wall,
                "wall_per_config_s": wall / len(configs), "config_list": configs,
                "split_s": split}

    def test_compare_calls_same_list_and_ratio(self):
        a = self.call([[1], [2]], 1.0, {"compile_sum": 0.2, "engine": 0.7, "python": 0.3})
        k = self.call([[2], [1]], 3.0, {"compile": 1.0, "verification": 0.1,
                                        "benchmark": 1.5, "strategy": 0.1, "framework": 0.2})
        rows = kx.compare_calls([a], [k])
        self.assertTrue(rows[0]["same_configs"])
        self.assertAlmostEqual(rows[0]["kt_over_amk"], 3.0)
        summary = {"examples": {"ex": {"amk": {"calls": [a]}, "kernel_tuner": {"calls": [k]},
                                       "comparison": rows}}}
        line = kx.table(summary).splitlines()[1]
        self.assertIn("yes", line)
        self.assertIn("1.0/1.5/0.4", line)  # Kernel Tuner's compile / benchmark / the rest

    def test_call_record_splits_amk_s_wall(self):
        res = [{"block_size_x": 64, "time": 0.1, "compile_time": 30.0, "amk_status": "ok"},
               {"block_size_x": 128, "time": 0.2, "compile_time": 40.0, "amk_status": "ok"}]
        env = {"amk_elapsed_s": 1.5, "amk_engine_wall_s": 2.25, "amk_probe_s": 0.5}
        c = kx.call_record("amk", "k", {"block_size_x": [64, 128]}, res, env, 3.0)
        s = c["split_s"]
        self.assertAlmostEqual(s["compile_sum"], 0.07)
        self.assertAlmostEqual(s["engine"], 1.5)
        self.assertAlmostEqual(s["startup"], 0.75)  # the engine call less its search
        self.assertAlmostEqual(s["probe"], 0.5)
        self.assertAlmostEqual(s["python"], 0.25)  # 3.0 - 2.25 - 0.5
        a = self.call([[64], [128]], 3.0, s)
        k = self.call([[64], [128]], 1.0, {"compile": 0.1, "verification": 0, "benchmark": 0.1,
                                           "strategy": 0, "framework": 0.2})
        summary = {"examples": {"ex": {"amk": {"calls": [a]}, "kernel_tuner": {"calls": [k]},
                                       "comparison": kx.compare_calls([a], [k])}}}
        self.assertIn("0.1/1.5/0.8/0.8", kx.table(summary))  # compile/engine/start/py+probe

    def test_engine_log_sums_the_run_phases_and_lists_openings(self):
        text = "\n".join([
            "amk: debug: gpu: device query took 0.412 s (answered)",
            "amk: debug: tune: gpu backend opened in 0.731 s",
            "amk: debug: gpu: 12.500 s: gpu 0 runs a job",
            "amk: debug: gpu: 13.600 s: gpu 0 done: keeper idle 12.1 ms, inputs 2.0 ms, "
            "settle 1000.0 ms, timed 20.5 ms",
            "amk: debug: gpu: 13.700 s: gpu 0 done: inputs 1.0 ms, settle 10.0 ms",
            "vector_add: 15 configs",
            "amk: debug: tune: gpu backend closed in 0.250 s"])
        log = kx.engine_log(text)
        self.assertEqual(log["device_query_s"], [0.412])
        self.assertEqual(log["backend_open_s"], [0.731])
        self.assertEqual(log["backend_close_s"], [0.25])
        ph = log["run_phases_s"]
        self.assertEqual(sorted(ph), ["inputs", "keeper idle", "settle", "timed"])
        self.assertAlmostEqual(ph["settle"], 1.01)
        self.assertAlmostEqual(ph["inputs"], 0.003)
        self.assertEqual(kx.engine_log("no debug lines"), {})

    def test_compare_calls_names_a_different_list(self):
        a = self.call([[1], [2]], 1.0, {})
        k = self.call([[1], [3]], 1.0, {})
        rows = kx.compare_calls([a], [k])
        self.assertFalse(rows[0]["same_configs"])
        summary = {"examples": {"ex": {"amk": {"calls": [a]}, "kernel_tuner": {"calls": [k]},
                                       "comparison": rows}}}
        self.assertIn(" NO ", kx.table(summary))


if __name__ == "__main__":
    unittest.main()

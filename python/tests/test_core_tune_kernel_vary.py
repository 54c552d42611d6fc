"""tune_kernel's params that change what the kernel computes, without a GPU: the probe's
values and conditions, the decision from the probed statuses, and whole calls on the model
backend with the probe's statuses faked (the model checks nothing), which must write
reference.vary into the spec and warn once, naming the params. Brute force (Kernel Tuner's
default) runs no probe: the same rule reads the run's own statuses (faked the same way), and
only the configs whose reference config changes run again."""
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

# out[i] = filter_width * in[i]: filter_width changes the output, block_size_x does not
SCALE = """
__global__ void scale(float *out, const float *in, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) out[i] = filter_width * in[i];
}
"""


class TestProbe(unittest.TestCase):
    ref = {"fw": 3, "bx": 32, "ro": 0}

    def test_probe_values_take_the_neighbour_and_the_farthest(self):
        tp = {"fw": [3, 5, 7, 9], "bx": [16, 32, 64, 128], "ro": [0], "ty": [1, 2]}
        got = kt.probe_values(tp, {"fw": 3, "bx": 128, "ro": 0, "ty": 2})
        self.assertEqual(got, {"fw": [3, 5, 9], "bx": [128, 64, 16], "ro": [0], "ty": [2, 1]})

    def test_probe_restrictions_allow_one_move_at_a_time(self):
        vals = {"fw": [3, 5], "bx": [32, 64], "ro": [0], "ty": [1, 2]}
        got = kt.probe_restrictions(vals, {"fw": 3, "bx": 32, "ro": 0, "ty": 1})
        self.assertEqual(got, ["fw == 3 or bx == 32", "fw == 3 or ty == 1",
                               "bx == 32 or ty == 1"])

    def p(self, **moved):
        d = dict(self.ref)
        d.update(moved)
        return d

    def test_a_param_whose_every_move_is_wrong_is_named(self):
        probed = [(self.p(), "ok"), (self.p(fw=5), "wrong"), (self.p(fw=9), "wrong"),
                  (self.p(bx=64), "ok"), (self.p(ro=1), "ok")]
        self.assertEqual(kt.output_params(self.ref, probed), ["fw"])

    def test_params_are_named_in_tune_params_order(self):
        probed = [(self.p(ro=1), "wrong"), (self.p(fw=5), "wrong"), (self.p(bx=64), "ok")]
        self.assertEqual(kt.output_params(self.ref, probed), ["fw", "ro"])

    def test_one_correct_move_clears_a_param(self):
        probed = [(self.p(fw=5), "wrong"), (self.p(fw=9), "ok"), (self.p(bx=64), "ok")]
        self.assertEqual(kt.output_params(self.ref, probed), [])

    def test_nothing_is_named_when_no_other_move_passes(self):
        # every move wrong: the kernel (or its reference config) is what fails
        probed = [(self.p(fw=5), "wrong"), (self.p(bx=64), "wrong"), (self.p(ro=1), "wrong")]
        self.assertEqual(kt.output_params(self.ref, probed), [])
        # failures that are not a wrong output say nothing either way
        probed = [(self.p(fw=5), "compile_error"), (self.p(bx=64), "ok")]
        self.assertEqual(kt.output_params(self.ref, probed), [])

    def test_configs_that_move_two_params_are_not_moves(self):
        probed = [(self.p(fw=5, bx=64), "wrong"), (self.p(bx=64), "ok")]
        self.assertEqual(kt.output_params(self.ref, probed), [])


@unittest.skipIf(np is None, "numpy is not installed (Debian: python3-numpy)")
class TestTuneKernelVary(unittest.TestCase):
    tp = {"filter_width": [1, 2, 3], "block_size_x": [32, 64, 128]}

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="amk-kt-vary-")
        n = 4096
        self.args = [np.zeros(n, np.float32), np.random.randn(n).astype(np.float32),
                     np.int32(n)]
        self.n = n
        self.real_probe = kt._probe_statuses
        self.real_rows = kt.rows_of_run
        self.real_tune = kt._tune
        self.probes = []
        self.runs = []

    def tearDown(self):
        kt._probe_statuses = self.real_probe
        kt.rows_of_run = self.real_rows
        kt._tune = self.real_tune
        shutil.rmtree(self.dir, ignore_errors=True)

    def fake_probe(self, space, *args):
        """The model's statuses (all ok), with what a GPU would say for this kernel: a
        config whose filter_width is not the reference config's has another output."""
        got = self.real_probe(space, *args)
        self.probes.append(got)
        return [(p, "wrong" if p["filter_width"] != 1 else s) for p, s in got]

    def tune(self, **kw):
        """A call that probes first: random_sample (the probe is folded into brute force
        only)."""
        kw.setdefault("strategy", "random_sample")
        return self.tune_as(**kw)

    def tune_as(self, **kw):
        spec_dir = os.path.join(self.dir, "spec%d" % len(os.listdir(self.dir)))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            res, env = amk.tune_kernel("scale", SCALE, self.n, self.args, self.tp,
                                       amk_backend="model", quiet=True,
                                       amk_spec_dir=spec_dir, **kw)
        with open(os.path.join(spec_dir, "spec.json")) as f:
            spec = json.load(f)
        return res, env, spec, [str(x.message) for x in w]

    def spy_probe(self, space, *args):
        got = self.real_probe(space, *args)
        self.probes.append(got)
        return got

    def test_the_probe_runs_on_the_backend_and_the_model_finds_nothing(self):
        kt._probe_statuses = self.spy_probe
        res, env, spec, warned = self.tune()
        self.assertEqual(len(self.probes), 1)
        self.assertGreater(env["amk_probe_s"], 0.0)
        self.assertEqual({s for _, s in self.probes[0]}, {"ok"})  # the model checks nothing
        self.assertEqual(len(self.probes[0]), 5)
        self.assertEqual(env["amk_vary"], [])
        self.assertNotIn("vary", spec["reference"])
        self.assertFalse([m for m in warned if "computes" in m], warned)
        self.assertEqual(len(res), 9)

    def test_found_params_reach_the_spec_with_one_warning(self):
        kt._probe_statuses = self.fake_probe
        res, env, spec, warned = self.tune()
        self.assertEqual(len(self.probes), 1)
        moved = sorted((p["filter_width"], p["block_size_x"]) for p, _ in self.probes[0])
        # the reference config (1, 32) and each param moved alone to two other values
        self.assertEqual(moved, [(1, 32), (1, 64), (1, 128), (2, 32), (3, 32)])
        self.assertEqual(env["amk_vary"], ["filter_width"])
        self.assertEqual(spec["reference"]["vary"], ["filter_width"])
        with open(os.path.join(self.dir, "spec0", "reference.cu")) as f:
            ref = f.read()
        self.assertIn("#define block_size_x 32\n", ref)
        self.assertNotIn("#define filter_width", ref)
        hits = [m for m in warned if "change what the kernel computes" in m or
                "changes what the kernel computes" in m]
        self.assertEqual(len(hits), 1, warned)
        self.assertIn("filter_width changes what the kernel computes", hits[0])
        self.assertIn("with the same filter_width", hits[0])
        self.assertEqual(len(res), 9)

    def test_amk_vary_names_them_without_a_probe(self):
        kt._probe_statuses = self.fake_probe
        _, env, spec, warned = self.tune(amk_vary=["filter_width"])
        self.assertEqual(self.probes, [])
        self.assertEqual(spec["reference"]["vary"], ["filter_width"])
        self.assertFalse([m for m in warned if "computes" in m], warned)
        _, env, spec, _ = self.tune(amk_vary=[])
        self.assertEqual(self.probes, [])
        self.assertNotIn("vary", spec["reference"])
        with self.assertRaises(amk.InputError) as e:
            self.tune(amk_vary=["filter"])
        self.assertIn("'filter', which is not in tune_params", str(e.exception))

    def test_a_failed_probe_warns_and_tunes_without(self):
        def broken(*args):
            raise amk.AmkError("probe: no device")
        kt._probe_statuses = broken
        res, env, spec, warned = self.tune()
        self.assertEqual(env["amk_vary"], [])
        self.assertNotIn("vary", spec["reference"])
        self.assertTrue([m for m in warned if "the probe for params that change what the "
                         "kernel computes failed (probe: no device)" in m], warned)
        self.assertEqual(len(res), 9)

    def test_an_answer_needs_no_probe(self):
        kt._probe_statuses = self.fake_probe
        want = self.args[1] * 1.0
        _, env, spec, _ = self.tune(answer=[want, None, None])
        self.assertEqual(self.probes, [])
        self.assertEqual(env["amk_vary"], [])

    def spy_tune(self, space, *args):
        summary = self.real_tune(space, *args)
        with open(os.path.join(space.folder, "spec.json")) as f:
            reference = json.load(f)["reference"]
        self.runs.append((reference, list(args[6]), summary))
        return summary

    def fake_first_run(self, *args):
        """The rows of each run; the first (checked against the reference config, no vary)
        as a GPU would judge them: filter_width other than the reference's is wrong."""
        rows = self.real_rows(*args)
        if len(self.runs) == 1:
            for r in rows:
                p = r["params"] if isinstance(r["params"], dict) else json.loads(r["params"])
                if p["filter_width"] != 1:
                    r["status"], r["latency_us"] = "wrong", float("nan")
        return rows

    def test_brute_force_runs_once_without_a_probe_when_nothing_is_wrong(self):
        kt._probe_statuses = self.spy_probe
        kt._tune = self.spy_tune
        res, env, spec, warned = self.tune_as()
        self.assertEqual(self.probes, [])
        self.assertEqual(len(self.runs), 1)
        self.assertEqual(env["amk_probe_s"], 0.0)
        self.assertGreaterEqual(env["amk_engine_wall_s"], env["amk_elapsed_s"])
        self.assertEqual(env["amk_vary"], [])
        self.assertNotIn("vary", spec["reference"])
        self.assertFalse([m for m in warned if "computes" in m], warned)
        self.assertEqual(len(res), 9)

    def test_brute_force_names_the_params_from_its_run_and_reruns_what_they_change(self):
        kt._probe_statuses = self.spy_probe
        kt._tune = self.spy_tune
        kt.rows_of_run = self.fake_first_run
        res, env, spec, warned = self.tune_as(strategy="brute_force")
        self.assertEqual(self.probes, [])
        self.assertEqual(len(self.runs), 2)
        self.assertNotIn("vary", self.runs[0][0])
        self.assertEqual(self.runs[1][0]["vary"], ["filter_width"])
        # the second run tunes the 6 configs whose filter_width is not the reference's
        self.assertEqual(self.runs[1][2]["trials"], 6)
        self.assertEqual(env["amk_vary"], ["filter_width"])
        self.assertEqual(env["amk_trials"], 9 + 6)
        self.assertEqual(spec["reference"]["vary"], ["filter_width"])  # the kept folder
        hits = [m for m in warned if "changes what the kernel computes" in m]
        self.assertEqual(len(hits), 1, warned)
        got = sorted((r["filter_width"], r["block_size_x"], r["amk_status"]) for r in res)
        self.assertEqual(got, [(f, b, "ok") for f in (1, 2, 3) for b in (32, 64, 128)])
        self.assertIn(env["amk_best"]["params"]["filter_width"], (1, 2, 3))

    def test_a_wrong_config_that_moves_no_output_param_stays_wrong(self):
        kt._tune = self.spy_tune

        def wrong_tile(*args):  # block_size_x 128 is wrong in every run (a tiling bug)
            rows = self.fake_first_run(*args)
            for r in rows:
                p = r["params"] if isinstance(r["params"], dict) else json.loads(r["params"])
                if p["block_size_x"] == 128:
                    r["status"], r["latency_us"] = "wrong", float("nan")
            return rows
        kt.rows_of_run = wrong_tile
        res, env, _, _ = self.tune_as()
        self.assertEqual(env["amk_vary"], ["filter_width"])
        for r in res:
            self.assertEqual(r["amk_status"], "wrong" if r["block_size_x"] == 128 else "ok", r)
        self.assertEqual(len(res), 9)

    def test_a_budget_or_a_cachefile_probes_first(self):
        kt._probe_statuses = self.spy_probe
        self.tune_as(strategy="brute_force", strategy_options={"max_fevals": 4})
        self.assertEqual(len(self.probes), 1)
        cache = os.path.join(self.dir, "cache.json")
        self.tune_as(cache=cache)  # writes the cachefile: no probe yet
        self.assertEqual(len(self.probes), 1)
        self.tune_as(cache=cache)
        self.assertEqual(len(self.probes), 2)


class TestDeviceQuery(unittest.TestCase):
    """amk.devices() starts a run worker (a CUDA start-up): tune_kernel asks it only to
    check a cachefile's device before tuning; otherwise the run names the device."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="amk-kt-devq-")
        self.real_devices, self.real_tune = amk.devices, kt._tune
        self.asked, self.name = 0, None

        def devices():  # the device the run names (the model's, here)
            self.asked += 1
            return {"devices": [{"index": 0, "name": self.name}]}
        amk.devices = devices
        # the run itself on the model backend (no GPU here), as if it were the gpu's
        kt._tune = lambda space, backend, *a, **k: self.real_tune(space, "model", *a, **k)

    def tearDown(self):
        amk.devices, kt._tune = self.real_devices, self.real_tune
        shutil.rmtree(self.dir, ignore_errors=True)

    @unittest.skipIf(np is None, "numpy is not installed")
    def test_devices_are_asked_only_for_a_cachefile(self):
        n = 1024
        args = [np.zeros(n, np.float32), np.random.randn(n).astype(np.float32), np.int32(n)]
        tp = {"filter_width": [1], "block_size_x": [32, 64]}
        _, env = amk.tune_kernel("scale", SCALE, n, args, tp, amk_backend="gpu", quiet=True)
        self.assertEqual(self.asked, 0)
        self.assertTrue(env["device_name"])  # the run's
        self.name = env["device_name"]
        cache = os.path.join(self.dir, "c.json")
        amk.tune_kernel("scale", SCALE, n, args, tp, amk_backend="gpu", quiet=True,
                        cache=cache)
        self.assertEqual(self.asked, 0)  # no file yet: nothing to refuse
        amk.tune_kernel("scale", SCALE, n, args, tp, amk_backend="gpu", quiet=True,
                        cache=cache)
        self.assertEqual(self.asked, 1)


if __name__ == "__main__":
    unittest.main()

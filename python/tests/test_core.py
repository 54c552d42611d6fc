"""The Python package without a GPU: spaces, the commands as calls on the model and sim
backends, the record, errors. Each result is compared with something computed another way
(the CLI's own output, a brute-force count in Python, the rows in the file)."""
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import amk

FIX = os.environ.get("AMK_TEST_FIXTURES", os.path.join(os.path.dirname(__file__), "..", "..",
                                                        "tests", "fixtures"))
CLI = os.environ.get("AMK_CLI")

try:
    import pandas  # noqa: F401
    HAVE_PANDAS = True
except ImportError:
    HAVE_PANDAS = False


class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="amk-pytest-")
        self.old = os.getcwd()
        os.chdir(self.dir)

    def tearDown(self):
        os.chdir(self.old)
        shutil.rmtree(self.dir, ignore_errors=True)

    def cli(self, *args):
        if not CLI:
            self.skipTest("AMK_CLI not set (CTest sets it)")
        r = subprocess.run([CLI] + list(args), capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)


class TestSpace(Tmp):
    def test_version_is_the_library_s(self):
        self.assertRegex(amk.__version__, r"^\d+\.\d+\.\d+$")
        if CLI:
            out = subprocess.run([CLI, "--version"], capture_output=True, text=True).stdout
            self.assertIn(amk.__version__, out)

    def test_builtin_space_counts_match_its_enumeration_and_the_cli(self):
        sp = amk.Space("gemv")
        n = sp.count()
        self.assertEqual(n, len(sp.configs()))
        self.assertEqual(n, len(list(sp)))
        ids = [cid for cid, _ in sp.configs(ids=True)]
        self.assertEqual(len(set(ids)), n)
        if CLI:
            self.assertEqual(self.cli("space", "gemv")["valid_count"], n)
        self.assertIsNone(sp.check(sp.defaults))

    def test_python_built_space_matches_a_brute_force_count(self):
        params = {"a": [1, 2, 4, 8, 16], "b": [1, 2, 3, 4], "c": [0, 1]}
        rs = ["a * b <= 16", "a % b == 0 or c == 1", "a // b >= 1"]
        sp = amk.Space(params=params, restrictions=rs, name="pyspace")
        want = [dict(zip(params, v)) for v in itertools.product(*params.values())
                if all(eval(r, {}, dict(zip(params, v))) for r in rs)]
        got = sp.configs()
        self.assertEqual(sorted(map(lambda d: tuple(d.values()), got)),
                         sorted(map(lambda d: tuple(d.values()), want)))
        self.assertEqual(sp.params["a"], [1, 2, 4, 8, 16])
        self.assertIsNotNone(sp.check({"a": 16, "b": 3, "c": 0}))

    def test_spec_folder_loads_by_path(self):
        sp = amk.Space(os.path.join(FIX, "specs", "landscape"))
        self.assertEqual(sp.name, "landscape")
        self.assertGreater(sp.count(), 0)

    def test_bad_restriction_is_an_input_error_naming_the_column(self):
        with self.assertRaises(amk.InputError) as cm:
            amk.Space(params={"a": [1, 2]}, restrictions=["a ++ 1 === 2"], name="bad")
        self.assertEqual(cm.exception.exit_code, 2)
        self.assertIn("column", str(cm.exception))

    def test_unknown_kernel_names_the_known_ones(self):
        with self.assertRaises(amk.InputError) as cm:
            amk.Space("no_such_kernel")
        self.assertEqual(cm.exception.name, "AMK_ENOENT")
        self.assertIn("gemm", str(cm.exception))


class TestPlan(Tmp):
    """What amk.torch launches (no GPU needed to build the plan)."""

    def test_plan_is_the_spec_s_launch_source_and_args(self):
        k = amk.Space("rmsnorm")
        p = k.plan({"THREADS": 256, "VEC": 4, "ROWS": 2}, "M=1000,N=512,dtype=f16")
        self.assertEqual(p["launch"]["grid"], (500, 1, 1))
        self.assertEqual(p["launch"]["block"], (256, 1, 1))
        self.assertIn("-DTHREADS=256", p["source"]["options"])
        self.assertIn("-DROWS=2", p["source"]["options"])
        self.assertEqual(p["source"]["entry"], "rmsnorm_kernel")
        self.assertIn("rmsnorm_kernel", p["source"]["text"])
        self.assertEqual([(a["name"], a["kind"], a["value"]) for a in p["args"]],
                         [("x", "buffer", 0), ("w", "buffer", 0), ("y", "buffer", 0),
                          ("M", "value", 1000), ("N", "value", 512)])
        self.assertEqual({b["name"]: (b["dtype"], b["count"]) for b in p["buffers"]},
                         {"x": ("f16", 512000), "w": ("f16", 512), "y": ("f16", 512000)})
        # a config the restrictions refuse has no plan
        g = amk.Space("gemm")
        bad = next(dict(zip(g.params, v)) for v in itertools.product(*g.params.values())
                   if g.check(dict(zip(g.params, v))) is not None)
        with self.assertRaises(amk.InputError):
            g.plan(bad)

    def test_plan_of_gemm_hopper_has_its_tensor_maps(self):
        sp = amk.Space("gemm_hopper")
        p = sp.plan(sp.defaults, "M=4096,N=2048,K=1024,dtype=bf16")
        self.assertEqual(p["source"]["arch"], "sm_90a")
        maps = {m["name"]: m for m in p["tensor_maps"]}
        self.assertEqual(sorted(maps), ["tmA", "tmB", "tmC"])
        self.assertEqual(maps["tmA"]["dims"], [1024, 4096])
        self.assertEqual(maps["tmA"]["strides"], [1024 * 2])
        self.assertEqual(maps["tmB"]["dims"], [2048, 1024])


class TestCommands(Tmp):
    def test_loop_logs_budget_rows_and_its_best_is_the_file_s(self):
        seen = []
        s = amk.loop("gemv", backend="model", budget=12, results="r.tsv", best="b.json",
                     progress=lambda *a: seen.append(a))
        self.assertEqual(s["trials"], 12)
        self.assertEqual(len(seen), 12)
        self.assertEqual(s["backend"], "model")
        with open("b.json") as f:
            self.assertEqual(json.load(f)["config_id"], s["best"]["config_id"])
        if HAVE_PANDAS:
            df = amk.read_results("r.tsv")
            self.assertEqual(len(df), 12)
            self.assertEqual(df["trial"].tolist(), list(range(1, 13)))
            if CLI:  # every column of the file, in its order (the header line names them)
                with open("r.tsv") as f:
                    header = [l for l in f if not l.startswith("# ")][0].rstrip("\n").split("\t")
                self.assertEqual(list(df.columns[:len(header)]), header)
            self.assertIn(s["best"]["config_id"], df["config_id"].tolist())
            ok = df[df.status == "ok"]
            self.assertLessEqual(s["best"]["latency_us"], ok.latency_us.min() * 1.0101)
        b = amk.best("r.tsv")
        self.assertEqual(b["config_id"], s["best"]["config_id"])

    def test_loop_equals_the_cli_on_the_same_seed(self):
        s = amk.loop("gemv", backend="model", budget=10, seed=7, results="py.tsv",
                     best="py.json", progress=False)
        c = self.cli("loop", "gemv", "--backend", "model", "--budget", "10", "--seed", "7",
                     "--results", "cli.tsv", "--best", "cli.json")
        self.assertEqual(s["best"]["config_id"], c["best"]["config_id"])
        self.assertEqual(s["trials"], c["trials"])

    def test_resume_continues_the_numbering(self):
        amk.loop("gemv", backend="model", budget=5, results="r.tsv", best=None, progress=False)
        s = amk.loop("gemv", backend="model", budget=3, results="r.tsv", best=None,
                     resume=True, progress=False)
        self.assertEqual((s["first_trial"], s["last_trial"]), (6, 8))
        self.assertFalse(os.path.exists("(null)"))

    def test_propose_then_evaluate_appends_one_row(self):
        amk.loop("gemv", backend="model", budget=4, results="r.tsv", best=None, progress=False)
        p = amk.propose("gemv", results="r.tsv")
        self.assertEqual(p["history_rows"], 4)
        v = amk.evaluate(p, backend="model", results="r.tsv")
        self.assertEqual(v["config_id"], p["config_id"])
        self.assertEqual(v["trial"], 5)
        v2 = amk.evaluate("gemv", p["params"], backend="model")
        self.assertEqual(v2["config_id"], p["config_id"])

    def test_exclude_keeps_configs_out_of_the_search(self):
        sp = amk.Space("gemv")
        ids = [cid for cid, _ in sp.configs(ids=True)]
        keep = ids[:4]
        s = amk.loop(sp, backend="model", strategy="exhaustive", budget=0, results="r.tsv",
                     best=None, exclude=ids[4:], progress=False)
        self.assertEqual(s["trials"], 4)
        self.assertTrue(s["exhausted"])
        self.assertIsNone(s["setup_s"])  # a GPU run's set-up; the model has none
        if HAVE_PANDAS:
            self.assertEqual(sorted(amk.read_results("r.tsv")["config_id"]), sorted(keep))

    def test_sim_replays_on_the_recorded_devices_target(self):
        # An H200 sweep: its fastest gemv rows lie below an H100's roofline floor. With no
        # target named the replay judges them on the H200's, as `amk loop` does.
        sweep = os.path.join(FIX, "sim", "gemv-h200.tsv")
        sp = amk.Space("gemv", shape="N=14336,K=4096,dtype=bf16")
        s = amk.loop(sp, backend="sim:" + sweep, strategy="exhaustive", budget=0,
                     results="h200.tsv", best=None, progress=False)
        self.assertAlmostEqual(s["best"]["latency_us"], 30.656, places=3)
        self.assertEqual(s["device"], "NVIDIA H200 (replayed)")

    def test_report_export_lookup_match_the_cli(self):
        res = os.path.join(FIX, "export", "results.tsv")
        r = amk.report(res)
        self.assertEqual(r["groups"][0]["kernel"], "gemm")
        self.assertIn("gemm", str(r))
        db = amk.export(res, "db.json")
        self.assertTrue(os.path.exists("db.json"))
        hdr = amk.export(res, c_header=True)
        self.assertIn("#", hdr)
        dev = r["groups"][0]["device"]
        ans = amk.lookup("db.json", "gemm", dev, "M=4096,N=4096,K=4096")
        self.assertIn("config", ans)
        if CLI:
            self.assertEqual(self.cli("export", res), db)
            self.assertEqual(self.cli("report", res, "--json")["groups"], r["groups"])
            self.assertEqual(self.cli("lookup", "gemm", "--db", "db.json", "--device", dev,
                                      "--shape", "M=4096,N=4096,K=4096"), ans)


    def test_rows_recorded_before_a_param_read_as_today(self):
        # rmsnorm rows written before ROWS joined the spec: params without it, older ids.
        head = ("# amk results v1\ntrial\ttime\tkernel\tshape\tconfig_id\tparams\tsource\t"
                "status\tlatency_us\tlatency_kind\tspread\tpredicted_us\tbound_us\t"
                "pct_of_roofline\tcompile_ms\tcache_hit\tkept\tdevice\tnote\n")
        rows = [(1, "00000000000000a1", '{"THREADS":128,"VEC":8}', 31.5),
                (2, "00000000000000a2", '{"THREADS":64,"VEC":4}', 30.0)]
        with open("older.tsv", "w") as f:
            f.write(head)
            for t, cid, params, us in rows:
                f.write("%d\t2026-11-01T00:00:00Z\trmsnorm\tM=4096,N=4096,dtype=bf16\t%s\t%s\t"
                        "test\tok\t%s\tmeasured\t0.01\t\t\t\t\t\t0\tNVIDIA H100 80GB HBM3\t\n"
                        % (t, cid, params, us))
        g = amk.report("older.tsv")["groups"][0]
        self.assertEqual(g["best"]["params"], {"ROWS": 1, "THREADS": 64, "VEC": 4})
        self.assertNotEqual(g["best"]["config_id"], "00000000000000a2")
        self.assertAlmostEqual(g["vs_default"]["speedup"], 31.5 / 30.0, places=3)
        db = amk.export("older.tsv")
        self.assertIn('"ROWS"', json.dumps(db))
        if CLI:
            self.assertEqual(self.cli("export", "older.tsv"), db)
            self.assertEqual(self.cli("report", "older.tsv", "--json")["groups"][0]["best"],
                             g["best"])


class TestErrors(Tmp):
    def test_categories_follow_the_cli_exit_codes(self):
        with self.assertRaises(amk.UsageError) as cm:
            amk.loop("gemv", backend="nope", budget=1, results="r.tsv", progress=False)
        self.assertEqual(cm.exception.exit_code, 1)
        with self.assertRaises(amk.UsageError):
            amk.loop("gemv", strategy="nope", budget=1, results="r.tsv", progress=False)
        with self.assertRaises(amk.UsageError) as cm:
            amk.loop("gemv", regime="lukewarm", budget=1, results="r.tsv", progress=False)
        self.assertIn("lukewarm", str(cm.exception))
        with open("foreign.tsv", "w") as f:
            f.write("not a results file\n")
        with self.assertRaises(amk.ResultsError) as cm:
            amk.loop("gemv", backend="model", budget=1, results="foreign.tsv", progress=False)
        self.assertEqual((cm.exception.exit_code, cm.exception.step), (3, "results"))
        self.assertIn("foreign.tsv", str(cm.exception))
        with self.assertRaises(amk.ResultsError):
            amk.report("missing.tsv")
        with self.assertRaises(amk.InputError):
            amk.loop("gemv", shape="Q=3", backend="model", budget=1, results="r.tsv")

    def test_objective_needs_an_energy_measurement_and_one_per_search(self):
        # The model backend measures no energy: bad input before any work (exit 2).
        with self.assertRaises(amk.InputError) as cm:
            amk.loop("gemv", backend="model", objective="energy", budget=1, results="e.tsv",
                     progress=False)
        self.assertEqual(cm.exception.exit_code, 2)
        self.assertFalse(os.path.exists("e.tsv"))
        with self.assertRaises(amk.UsageError):
            amk.loop("gemv", backend="model", objective="joules", budget=1, results="e.tsv",
                     progress=False)
        # Rows of objective time: another objective on the same search is refused (exit 3).
        s = amk.loop("gemv", backend="model", objective="time", budget=2, results="t.tsv",
                     progress=False)
        self.assertEqual(s["objective"], "time")
        with open("t.tsv") as f:
            lines = [l.rstrip("\n").split("\t") for l in f if not l.startswith("#")]
        col = lines[0].index("objective")
        self.assertEqual({l[col] for l in lines[1:]}, {"time"})
        with self.assertRaises(amk.ResultsError) as cm:
            amk.propose("gemv", results="t.tsv", objective="edp")
        self.assertEqual(cm.exception.exit_code, 3)
        self.assertIn("never switches objective", str(cm.exception))

    def test_gpu_backend_without_a_gpu_is_no_device(self):
        if amk.devices()["devices"]:
            self.skipTest("a GPU answers here")
        with self.assertRaises(amk.NoDeviceError) as cm:
            amk.loop("gemv", backend="gpu", budget=1, results="r.tsv", progress=False)
        self.assertEqual(cm.exception.exit_code, 4)

    def test_a_callback_s_exception_reaches_the_caller(self):
        def boom(*a):
            raise KeyError("from the callback")
        with self.assertRaises(KeyError):
            amk.loop("gemv", backend="model", budget=3, results="r.tsv", progress=boom)


if __name__ == "__main__":
    unittest.main()

"""amk.datafiles without a GPU: an argument array passed unchanged to several tune_kernel calls
is written once and its file reused; an array changed in place (any byte), or another array,
gets a new file; a file goes with its array. End to end on the model backend: the kernel
folders of two calls link one file, and a third call after a change links the new bytes."""
import gc
import os
import shutil
import tempfile
import unittest
import warnings

import amk
from amk import datafiles
from amk import kernel_tuner as kt

try:
    import numpy as np
except ImportError:
    np = None

from test_core_tune_kernel import VECTOR_ADD


@unittest.skipIf(np is None, "numpy is not installed")
class TestDataFiles(unittest.TestCase):
    def setUp(self):
        self.files = datafiles.DataFiles()
        self.chunk = datafiles.CHUNK
        datafiles.CHUNK = 4096  # several chunks: a change in the last one must be seen

    def tearDown(self):
        datafiles.CHUNK = self.chunk

    def path(self, a, name="x.npy"):
        return self.files.path(a, kt._le_flat(a), name, kt._save)

    def test_path_reuses_the_file_of_an_unchanged_array(self):
        a = np.random.rand(10000).astype(np.float32)
        a[7] = np.nan  # bytes are compared, not values: NaN is equal to itself
        p1 = self.path(a)
        p2 = self.path(a)
        self.assertEqual(p1, p2)
        self.assertEqual(self.files.stats, {"written": 1, "reused": 1})
        self.assertEqual(os.path.basename(p1), "x.npy")
        self.assertEqual(np.load(p1).tobytes(), a.tobytes())

    def test_path_writes_new_bytes_when_the_array_changed_in_place(self):
        a = np.random.rand(10000).astype(np.float32)
        p1 = self.path(a)
        for i in (0, 5000, a.size - 1):  # first, a middle and the last chunk
            a[i] += 1
            p2 = self.path(a)
            self.assertNotEqual(p2, p1)
            self.assertFalse(os.path.exists(p1))  # never rewritten: a new file
            self.assertEqual(np.load(p2).tobytes(), a.tobytes())
            p1 = p2
        self.assertEqual(self.files.stats, {"written": 4, "reused": 0})

    def test_path_never_gives_one_array_s_file_to_another(self):
        a = np.random.rand(10000).astype(np.float32)
        b = a.copy()
        c = a.view(np.int32)  # same bytes, another item type
        pa, pb = self.path(a), self.path(b)
        self.assertNotEqual(pa, pb)
        self.assertNotEqual(self.path(c), pa)
        self.assertEqual(np.load(self.path(c)).dtype, np.int32)
        # one array under two names (two arguments): two files, each its own
        self.assertNotEqual(self.path(a, "y.npy"), pa)
        self.assertEqual(self.files.stats["reused"], 1)

    def test_path_file_goes_with_its_array(self):
        a = np.random.rand(10000).astype(np.float32)
        p = self.path(a)
        self.assertTrue(os.path.exists(p))
        del a
        gc.collect()
        self.assertFalse(os.path.exists(p))

    @unittest.skipUnless(hasattr(os, "fork"), "needs fork")
    def test_path_files_outlive_a_forked_child_s_exit(self):
        a = np.random.rand(10000).astype(np.float32)
        p = self.path(a)
        pid = os.fork()
        if pid == 0:  # the child's interpreter exits normally: atexit and finalizers run
            try:
                del a
                gc.collect()
                datafiles._remove(os.path.dirname(os.path.dirname(p)), os.getppid())
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        self.assertTrue(os.path.exists(p))
        self.assertEqual(self.path(a), p)

    def test_same_bytes_refuses_another_length_or_a_missing_file(self):
        a = np.arange(10000, dtype=np.float32)
        p = self.path(a)
        self.assertTrue(datafiles.same_bytes(p, a))
        self.assertFalse(datafiles.same_bytes(p, a[:-1]))
        os.unlink(p)
        self.assertFalse(datafiles.same_bytes(p, a))
        self.assertNotEqual(self.path(a), p)  # the vanished file is written again


@unittest.skipIf(np is None, "numpy is not installed")
class TestTuneKernelReusesData(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="amk-kt-")
        self.old = os.getcwd()
        os.chdir(self.dir)
        n = 400000  # 1.6 MB arrays: past datafiles.MIN_BYTES
        self.args = [np.zeros(n, np.float32), np.random.randn(n).astype(np.float32),
                     np.random.randn(n).astype(np.float32), np.int32(n)]
        self.n = n
        self.linked = []
        self.real = amk.space.import_t1

        def spy(t1, out_dir, **kw):
            self.real(t1, out_dir, **kw)
            for arg, path in sorted((kw.get("data") or {}).items()):
                inside = os.path.join(out_dir, os.path.basename(path))
                self.assertEqual(os.stat(inside).st_ino, os.stat(path).st_ino)  # linked
                self.linked.append((arg, path, np.load(inside)))
        amk.space.import_t1 = spy

    def tearDown(self):
        amk.space.import_t1 = self.real
        os.chdir(self.old)
        shutil.rmtree(self.dir, ignore_errors=True)

    def tune(self):
        self.linked.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            amk.tune_kernel("vector_add", VECTOR_ADD, self.n, self.args,
                            {"block_size_x": [128, 256]}, amk_backend="model", quiet=True,
                            amk_vary=[])
        self.assertEqual([a for a, _, _ in self.linked], ["a", "b"])
        return list(self.linked)

    def test_tune_kernel_links_one_file_for_an_unchanged_array_and_new_bytes_after_a_change(self):
        before = dict(datafiles.files.stats)
        first = self.tune()
        second = self.tune()
        self.assertEqual([p for _, p, _ in first], [p for _, p, _ in second])  # same files
        self.assertEqual(datafiles.files.stats["written"] - before["written"], 2)
        self.assertEqual(datafiles.files.stats["reused"] - before["reused"], 2)
        self.args[1][-1] += 1.0  # a changed in place: its file must not be reused
        third = self.tune()
        self.assertNotEqual(third[0][1], first[0][1])
        self.assertEqual(third[0][2].tobytes(), self.args[1].tobytes())
        self.assertEqual(third[1][1], first[1][1])  # b unchanged
        self.args[2] = np.random.randn(self.n).astype(np.float32)  # b replaced
        fourth = self.tune()
        self.assertNotEqual(fourth[1][1], first[1][1])
        self.assertEqual(fourth[1][2].tobytes(), self.args[2].tobytes())


if __name__ == "__main__":
    unittest.main()

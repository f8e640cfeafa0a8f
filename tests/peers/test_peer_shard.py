"""The peer's port of accubench's data-parallel sharding (peer_data.
shard_split, shard_part) against the C itself: harness/run/step/split.c compiled
here into a shared library and called through ctypes, over every effective
batch to 40, device count to 5 and micro-batch, its refusals included (the
same reason, word for word); the ragged split the docs give (E = 10,
micro 2, 3 ranks: 2,2,2 then 1,1,2); and the loss scales of a sharded
window: every rank's micro-batches scaled by the global window's valid
items, each example on exactly one rank. Run by tests/e2e_peer_ddp.sh where
torch imports (CC: the compiler, cc by default)."""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))

import torch  # noqa: E402

import peer_data  # noqa: E402


class Split(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int) for n in
                ("effective", "global_", "micro", "accum", "last", "devices")]


def c_split_library(folder):
    src = os.path.join(ROOT, "harness", "run", "step", "split.c")
    out = os.path.join(folder, "libsplit.so")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-std=c11", "-shared", "-fPIC", "-O1",
                    "-I", os.path.join(ROOT, "harness", "run", "step"),
                    "-I", os.path.join(ROOT, "harness", "util"), src, "-o", out], check=True)
    lib = ctypes.CDLL(out)
    lib.split_make_sharded.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                       ctypes.POINTER(Split), ctypes.c_char_p, ctypes.c_int]
    lib.split_shard.argtypes = [ctypes.POINTER(Split), ctypes.c_int, ctypes.c_int,
                                ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
    return lib


class ShardAgainstC(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.lib = c_split_library(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def c_split(self, e, micro, n):
        s, why = Split(), ctypes.create_string_buffer(300)
        rc = self.lib.split_make_sharded(e, micro, n, ctypes.byref(s), why, 300)
        if rc:
            return None, why.value.decode()
        parts = []
        for k in range(s.accum):
            row = []
            for r in range(n):
                first, count = ctypes.c_int(), ctypes.c_int()
                self.lib.split_shard(ctypes.byref(s), r, k, ctypes.byref(first),
                                     ctypes.byref(count))
                row.append((first.value, count.value))
            parts.append(row)
        return (s.accum, s.last, parts), None

    def test_every_split_to_40(self):
        checked = refused = 0
        for n in range(1, 6):
            for e in range(1, 41):
                for micro in range(1, e + 1):
                    want, why = self.c_split(e, micro, n)
                    try:
                        accum, last = peer_data.shard_split(e, micro, n)
                    except peer_data.ShardError as ex:
                        self.assertEqual(str(ex), why, (e, micro, n))
                        refused += 1
                        continue
                    self.assertIsNotNone(want, "C refused %s: %s" % ((e, micro, n), why))
                    got = [[peer_data.shard_part(e, micro, n, r, k) for r in range(n)]
                           for k in range(accum)]
                    self.assertEqual((accum, last, got), want, (e, micro, n))
                    checked += 1
        self.assertGreater(checked, 1000)
        self.assertGreater(refused, 100)

    def test_ragged_example_of_the_docs(self):
        accum, last = peer_data.shard_split(10, 2, 3)
        counts = [[peer_data.shard_part(10, 2, 3, r, k)[1] for r in range(3)]
                  for k in range(accum)]
        self.assertEqual(counts, [[2, 2, 2], [1, 1, 2]])
        self.assertEqual(last, 2)
        self.assertEqual(peer_data.micro_ranges(10, 3), [(0, 3), (3, 3), (6, 3), (9, 1)])


class ShardedScales(unittest.TestCase):
    def test_global_window_normalisation(self):
        """E = 10, micro 2 over 3 ranks, sum reduction: every rank's scales
        are 1 / (the global window's valid items) times the averaging
        factor; the ranks' parts cover the window once."""
        e, micro, n, per = 10, 2, 3, 1
        mask = torch.tensor([1, 0, 1, 1, 1, 0, 1, 1, 0, 1], dtype=torch.float32)
        valid = int(mask.sum())
        seen = []
        for rank in range(n):
            b = peer_data.Buffer(torch.zeros(e, 4), torch.zeros(e, dtype=torch.int64), mask)
            b.set_split(e, micro, "sum", per, n, rank, n)
            ranges = peer_data.shard_ranges(e, micro, n, rank)
            seen += [i for f, c in ranges for i in range(f, f + c)]
            self.assertEqual(len(b.scales), len(ranges) + 1)
            for s in b.scales[:-1].tolist():
                self.assertAlmostEqual(s, n / valid, places=6)
            self.assertAlmostEqual(float(b.scales[-1]), 1 / valid, places=6)
            self.assertEqual(b.valid_counts,
                             [int(mask[f:f + c].sum()) for f, c in ranges])
        self.assertEqual(sorted(seen), list(range(e)))


if __name__ == "__main__":
    unittest.main()

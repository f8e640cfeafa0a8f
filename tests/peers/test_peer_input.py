"""The peer takes its input like the C side: a --profile or a --verify dump
that is a FIFO nobody writes, a folder or a device is refused at once
(never a wait, never a read without bound); a manifest with a missing or
wrongly typed field, a split that is not positive sizes adding up to the
effective batch, or a tensor file outside the dump folder is refused with
one line, and nothing outside the dump is opened (a FIFO planted there
would hang the reader). Each case runs under an alarm, so a hang fails.
Run by tests/e2e/e2e_peer_input.sh where torch imports."""
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
sys.path.insert(0, HERE)

import peer_verify  # noqa: E402
import peer_models  # noqa: E402
import peer_options  # noqa: E402
from test_peer_verify import write_dump  # noqa: E402

PEER = os.path.join(ROOT, "bench", "peers", "torch_accum.py")


class Hung(Exception):
    pass


def _alarm(signum, frame):
    raise Hung("still waiting after 5 s")


class Bounded(unittest.TestCase):
    """Every case ends within 5 s: a blocking open or read is a failure."""

    def setUp(self):
        self.old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(5)
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.old)
        self.tmp.cleanup()


class ProfileInput(Bounded):
    def refused(self, path, words):
        with self.assertRaises(peer_options.BadInput) as cm:
            peer_options.read_profile(path)
        self.assertIn(words, str(cm.exception))
        self.assertNotIn("\n", str(cm.exception))

    def test_fifo_refused_without_waiting(self):
        fifo = os.path.join(self.d, "p.profile")
        os.mkfifo(fifo)
        self.refused(fifo, "a FIFO")

    def test_folder_refused(self):
        os.mkdir(os.path.join(self.d, "f.profile"))
        self.refused(os.path.join(self.d, "f.profile"), "a directory")

    def test_device_refused_not_read_without_bound(self):
        self.refused("/dev/zero", "a device")

    def test_binary_refused(self):
        path = os.path.join(self.d, "b.profile")
        with open(path, "wb") as f:
            f.write(b"model = tiny\n\xff\xfe\x00\n")
        self.refused(path, "not a text file")

    def test_byte_order_mark_read(self):
        path = os.path.join(self.d, "bom.profile")
        with open(path, "wb") as f:
            f.write(b"\xef\xbb\xbfmodel = tiny\neffective = 8\n")
        self.assertEqual(peer_options.read_profile(path), {"model": "tiny", "effective": "8"})


class VerifyInput(Bounded):
    def setUp(self):
        super().setUp()
        self.dump = os.path.join(self.d, "dump")
        os.mkdir(self.dump)
        write_dump(self.dump)
        self.man_path = os.path.join(self.dump, "manifest.json")
        with open(self.man_path) as f:
            self.man = json.load(f)

    def rewrite(self, change):
        change(self.man)
        with open(self.man_path, "w") as f:
            json.dump(self.man, f)

    def refused(self, words):
        err = io.StringIO()
        old, sys.stderr = sys.stderr, err
        try:
            rc = peer_verify.verify(self.dump, io.StringIO())
        finally:
            sys.stderr = old
        self.assertEqual(rc, 2, err.getvalue())
        lines = err.getvalue().splitlines()
        self.assertEqual(len(lines), 1, err.getvalue())
        self.assertIn(words, lines[0])

    def test_good_dump_still_passes(self):
        self.assertEqual(peer_verify.verify(self.dump, io.StringIO()), 0)

    def test_manifest_fifo(self):
        os.unlink(self.man_path)
        os.mkfifo(self.man_path)
        self.refused("a FIFO")

    def test_manifest_folder(self):
        os.unlink(self.man_path)
        os.mkdir(self.man_path)
        self.refused("a directory")

    def test_tensor_file_fifo(self):
        os.unlink(os.path.join(self.dump, "mask.npy"))
        os.mkfifo(os.path.join(self.dump, "mask.npy"))
        self.refused("a FIFO")

    def test_missing_file_key(self):
        self.rewrite(lambda m: m["tensors"][0].pop("file"))
        self.refused("no 'file'")

    def test_effective_zero(self):
        self.rewrite(lambda m: m.update(effective=0))
        self.refused("effective")

    def test_tensors_not_a_list(self):
        self.rewrite(lambda m: m.update(tensors={"a": 1}))
        self.refused("tensors")

    def test_tensor_not_an_object(self):
        self.rewrite(lambda m: m["tensors"].append(7))
        self.refused("tensors")

    def test_shape_not_an_object(self):
        self.rewrite(lambda m: m.update(shape=[24, 2, 7]))
        self.refused("shape")

    def test_shape_keys_missing(self):
        self.rewrite(lambda m: m.update(shape={}))
        self.refused("shape")

    def test_shape_too_large_never_built(self):
        self.rewrite(lambda m: m["shape"].update(hidden=1 << 30))
        self.refused("outside")

    def test_shape_not_the_dumps(self):
        self.rewrite(lambda m: m["shape"].update(hidden=25))
        self.refused("parameters")

    def test_negative_split(self):
        self.rewrite(lambda m: m.update(effective=4, split=[-4, 8]))
        self.refused("split")

    def test_split_not_whole_numbers(self):
        self.rewrite(lambda m: m.update(split=[4, 4, "2"]))
        self.refused("split")

    def outside(self, name):
        """A FIFO outside the dump that the manifest points a tensor at:
        opening it would hang."""
        os.mkfifo(os.path.join(self.d, "outside.npy"))
        self.rewrite(lambda m: m["tensors"][0].update(file=name))
        self.refused("outside the dump")

    def test_parent_path_never_opened(self):
        self.outside("../outside.npy")

    def test_absolute_path_never_opened(self):
        self.outside(os.path.join(self.d, "outside.npy"))

    def test_link_out_of_the_dump_never_opened(self):
        os.unlink(os.path.join(self.dump, "mask.npy"))
        os.symlink(os.path.join(self.d, "outside.npy"), os.path.join(self.dump, "mask.npy"))
        os.mkfifo(os.path.join(self.d, "outside.npy"))
        self.refused("outside the dump")


class ProfileSettings(unittest.TestCase):
    """Every profile accubench ships reads here as accubench reads it: its
    keys, and a model list with a shape's own commas in it (harness/models/
    registry.c's model_spec_list_parse: a key=value item continues the
    shape before it)."""

    def test_model_list_keeps_a_shapes_commas(self):
        got = peer_options.model_items("S,gpt:d=128,layers=4,heads=4,seq=64,vocab=2048,"
                                       "llama-tiny,linear:in=6;classes=4")
        self.assertEqual(got, ["S", "gpt:d=128,layers=4,heads=4,seq=64,vocab=2048",
                               "llama-tiny", "linear:in=6;classes=4"])
        self.assertEqual(peer_models.parse_model(got[1]).name,
                         "gpt:d=128;layers=4;heads=4;seq=64;vocab=2048")
        with self.assertRaises(peer_options.BadInput):
            peer_options.model_items("tiny,,S")

    def test_every_shipped_profile_reads(self):
        folder = os.path.join(HERE, "..", "..", "profiles")
        for name in sorted(f[:-len(".profile")] for f in os.listdir(folder)
                           if f.endswith(".profile")):
            with self.subTest(profile=name):
                s = peer_options.read_profile(name)
                for m in peer_options.model_items(s["model"]):
                    peer_models.parse_model(m)


class CommandLine(unittest.TestCase):
    """The program itself: one line on stderr, exit 2, no wait."""

    def run_peer(self, *args):
        return subprocess.run([sys.executable, PEER] + list(args), capture_output=True,
                              text=True, timeout=120)

    def test_profile_fifo(self):
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "p.profile")
            os.mkfifo(fifo)
            r = self.run_peer("--profile", fifo, "--csv", os.path.join(d, "out.csv"))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "out.csv")))

    def test_verify_bad_split(self):
        with tempfile.TemporaryDirectory() as d:
            write_dump(d)
            path = os.path.join(d, "manifest.json")
            with open(path) as f:
                man = json.load(f)
            man.update(effective=4, split=[-4, 8])
            with open(path, "w") as f:
                json.dump(man, f)
            r = self.run_peer("--verify", d)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()

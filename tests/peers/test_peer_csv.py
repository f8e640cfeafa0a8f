"""bench/peers/peer_csv.py writes accubench's CSV as the C side does: under
PATH.lock (csv_lock.c's protocol), never through a planted link, and every
rewrite from the file on disk. Needs no PyTorch: run by
tests/e2e/e2e_hardening.sh."""
import fcntl
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))

import peer_csv  # noqa: E402

ROW = {"backend": "torch", "model": "tiny", "status": "ok", "micro_batch": 1}


class PeerCsvLock(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.csv = os.path.join(self.dir.name, "run.csv")

    def tearDown(self):
        self.dir.cleanup()

    def target(self):
        return peer_csv.CsvTarget(self.csv, ROOT, [("backend", "torch")], [("peers", "torch")])

    def test_refused_while_another_writer_holds_the_lock(self):
        with open(self.csv, "w") as f:
            f.write("# accubench results\nbackend,model\ncpu,tiny\n")
        fd = os.open(self.csv + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        os.write(fd, b"4242\n")
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            with self.assertRaises(peer_csv.CsvRefused) as e:
                self.target()
            self.assertIn("pid 4242", str(e.exception))
        finally:
            os.close(fd)
        with open(self.csv) as f:
            self.assertEqual(f.read(), "# accubench results\nbackend,model\ncpu,tiny\n")

    def test_lock_taken_written_and_removed(self):
        t = self.target()
        with open(self.csv + ".lock") as f:
            self.assertEqual(f.read().strip(), str(os.getpid()))
        t.append(dict(ROW))
        t.close()
        self.assertFalse(os.path.lexists(self.csv + ".lock"))

    def test_every_rewrite_starts_from_the_file_on_disk(self):
        t = self.target()
        t.append(dict(ROW, micro_batch=1))
        # A row that reached the file after the peer read it (a writer that
        # ignored the lock, or an edit): the next rewrite keeps it.
        with open(self.csv, "a") as f:
            f.write("cpu" + "," * (len(t.header) - 1) + "\n")
        t.append(dict(ROW, micro_batch=2))
        t.close()
        with open(self.csv) as f:
            rows = [l for l in f.read().splitlines() if l and not l.startswith("#")][1:]
        self.assertEqual(len(rows), 3, rows)
        self.assertTrue(any(r.startswith("cpu,") for r in rows))

    def test_planted_lock_link_is_not_followed(self):
        victim = os.path.join(self.dir.name, "victim")
        with open(victim, "w") as f:
            f.write("keep me\n")
        os.symlink(victim, self.csv + ".lock")
        with self.assertRaises(peer_csv.CsvRefused):
            self.target()
        with open(victim) as f:
            self.assertEqual(f.read(), "keep me\n")
        self.assertFalse(os.path.exists(self.csv))

    def test_planted_temporary_link_is_not_followed(self):
        victim = os.path.join(self.dir.name, "victim")
        with open(victim, "w") as f:
            f.write("keep me\n")
        os.symlink(victim, "%s.tmp.%d" % (self.csv, os.getpid()))
        t = self.target()
        with self.assertRaises(OSError):
            t.append(dict(ROW))
        t.close()
        with open(victim) as f:
            self.assertEqual(f.read(), "keep me\n")


    def test_not_an_accubench_csv_is_refused_and_kept(self):
        text = "some notes\n\n# a comment, a blank line\nmore\n"
        with open(self.csv, "w") as f:
            f.write(text)
        with self.assertRaises(peer_csv.CsvRefused):
            self.target()
        with open(self.csv) as f:
            self.assertEqual(f.read(), text)
        self.assertFalse(os.path.lexists(self.csv + ".lock"))

    def test_special_files_are_refused(self):
        os.mkdir(os.path.join(self.dir.name, "adir"))
        os.mkfifo(os.path.join(self.dir.name, "fifo"))
        for name in ("adir", "fifo", "nodir/x.csv"):
            path = os.path.join(self.dir.name, name)
            with self.assertRaises(peer_csv.CsvRefused, msg=name):
                peer_csv.CsvTarget(path, ROOT, [], [])
        os.symlink("/dev/null", os.path.join(self.dir.name, "devnull"))
        with self.assertRaises(peer_csv.CsvRefused):
            peer_csv.CsvTarget(os.path.join(self.dir.name, "devnull"), ROOT, [], [])
        self.assertFalse(os.path.lexists(os.path.join(self.dir.name, "devnull.lock")))


if __name__ == "__main__":
    unittest.main()

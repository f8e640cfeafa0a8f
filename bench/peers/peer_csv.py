"""Rows in accubench's CSV schema (harness/results/result_row.h's
RESULT_COLUMNS), written into accubench's own CSV or a new one.

The columns come from the header of the file being joined, so a column the
C side adds is carried (empty: the peer does not measure it); a new file
takes them from result_row.h. A value the peer did not measure is written
empty, as the C writer writes NAN and -1. Metadata lines go before the
header, where the C reader reads them; the whole file is written to a
temporary name and renamed, so a reader never sees half of it.

The file is written under PATH.lock, taken as harness/results/csv_lock.c
takes it (flock, never waiting; the holder's pid inside; removed before it
is let go), so a run and the peer never write one file at once; and every
rewrite starts from the file on disk, never from a copy read earlier."""
import errno
import fcntl
import math
import os
import re
import stat

COLUMN_RE = re.compile(r"X\((\w+),\s*(TEXT|INT|REAL),\s*(\w+),\s*(KEY|SPLIT|VALUE)\)")


class CsvRefused(Exception):
    """A CSV the peer may not write: one line for the user, exit 2."""


class CsvLock:
    """PATH.lock as csv_lock.c holds it. The lock file is opened without
    following a symbolic link, and only a regular file with one name is
    locked, so a planted link or hard link never redirects the pid write."""

    def __init__(self, csv_path):
        self.path = csv_path + ".lock"
        self.fd = None
        # A holder removes the file before it lets go: the file locked may
        # have been unlinked in between, then try again on the new one.
        for _ in range(100):
            fd = self._open(csv_path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                pid = os.pread(fd, 31, 0).decode("ascii", "replace").strip()
                os.close(fd)
                if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise CsvRefused("--csv %s is being written by another run (%s); give this "
                                     "run another --csv" % (csv_path, "pid " + pid if pid.isdigit()
                                                            else self.path + " is held"))
                raise CsvRefused("--csv %s: cannot lock %s: %s" % (csv_path, self.path,
                                                                 e.strerror))
            held = os.fstat(fd)
            try:
                now = os.stat(self.path, follow_symlinks=False)
            except OSError:
                now = None
            if now and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                os.ftruncate(fd, 0)
                os.pwrite(fd, b"%d\n" % os.getpid(), 0)
                self.fd = fd
                return
            os.close(fd)
        raise CsvRefused("--csv %s: cannot hold the lock %s (it keeps being replaced)"
                         % (csv_path, self.path))

    def _open(self, csv_path):
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                         | os.O_NONBLOCK, 0o644)
        except OSError as e:
            raise CsvRefused("--csv %s: cannot create the lock %s: %s"
                             % (csv_path, self.path, "a symbolic link is there"
                                if e.errno == errno.ELOOP else e.strerror))
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            os.close(fd)
            raise CsvRefused("--csv %s: the lock %s is not a regular file of its own "
                             "(refused: it would be written)" % (csv_path, self.path))
        return fd

    def release(self):
        if self.fd is None:
            return
        try:
            os.unlink(self.path)  # while still held, as csv_lock.c does
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None


def write_new(path, text):
    """Writes text to PATH.tmp.PID (created, never followed or reused) and
    renames it over path; a file of that name left by a dead writer is
    removed first if it is a regular file."""
    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        if stat.S_ISREG(os.lstat(tmp).st_mode):
            os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o644)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        try:
            if stat.S_ISREG(os.lstat(tmp).st_mode):
                os.unlink(tmp)
        except FileNotFoundError:
            pass


def result_columns(root):
    """[(name, type)] in CSV order, from RESULT_COLUMNS."""
    with open(os.path.join(root, "harness", "results", "result_row.h")) as f:
        cols = [(m.group(1), m.group(2)) for m in COLUMN_RE.finditer(f.read())]
    if not cols:
        raise RuntimeError("no RESULT_COLUMNS found in harness/results/result_row.h")
    return cols


def read_csv(path):
    """(metadata [(key, value)], header [names], data lines [text]) of an
    accubench CSV."""
    meta, header, rows = [], None, []
    with open(path) as f:
        for line in f:
            text = line.strip()
            if not text:
                continue
            if text.startswith("#"):
                if header is None and ":" in text:
                    key, _, value = text[1:].partition(":")
                    if key.strip() and " " not in key.strip():
                        meta.append((key.strip(), value.strip()))
                continue
            if header is None:
                header = [c.strip() for c in text.split(",")]
            else:
                rows.append(text)
    if header is None:
        raise RuntimeError("%s: not an accubench CSV (no header row)" % path)
    return meta, header, rows


def _text(v):
    return str(v).replace(",", ";").replace("\n", " ").replace("\r", " ")


def format_cell(value, ctype):
    if value is None:
        return ""
    if ctype == "TEXT":
        return _text(value)
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return ""
    if ctype == "INT":
        return "%d" % int(value)
    return "%.6g" % float(value)


SPLIT_TEXT_LISTED, SPLIT_TEXT_WIDTH = 4, 14  # harness/results/split_text.h


def split_text(micro, accum, last):
    """A split as harness/results/split_text.c writes it: "8x4", or a
    ragged one spelled out, "K=4: 3+3+3+1" (long ones "K=9: 3x8+1")."""
    if not (last > 0 and last != micro) or accum < 2:
        return "%dx%d" % (micro, accum)
    listed = "K=%d: " % accum + "+".join([str(micro)] * (accum - 1) + [str(last)])
    if accum <= SPLIT_TEXT_LISTED and len(listed) <= SPLIT_TEXT_WIDTH:
        return listed
    return "K=%d: %dx%d+%d" % (accum, micro, accum - 1, last)


def note_split(row):
    """A ragged split's row says its split first in the note, as
    csv_writer.c's note_split does: "split K=4: 3+3+3+1; REASON"."""
    micro, accum, last = (row.get(k) for k in ("micro_batch", "accum_steps", "last_micro_batch"))
    if None in (micro, accum, last) or not (last > 0 and last != micro):
        return row
    note = row.get("note") or ""
    text = "split " + split_text(micro, accum, last) + ("; " + note if note else "")
    return dict(row, note=text)


class CsvTarget:
    """A CSV the peer appends rows to: an existing accubench CSV (its
    metadata and header kept; the peer's metadata added before the header)
    or a new file with the peer's metadata alone. The lock is taken here and
    held until close(); each rewrite reads the file on disk again and adds
    the peer's rows to what it holds then."""

    def __init__(self, path, root, own_meta, peer_meta):
        self.path = path
        self.columns = result_columns(root)
        self.own_meta, self.peer_meta = list(own_meta), list(peer_meta)
        self._stat()  # a device or a folder is refused before a lock is made beside it
        self.lock = CsvLock(path)
        try:
            self._read()
        except BaseException:
            self.lock.release()
            raise
        self.pending = []  # rows not yet on disk
        self.written = 0

    def _stat(self):
        """The file's stat, None when absent; CsvRefused unless a regular file."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise CsvRefused("--csv %s: %s" % (self.path, e.strerror))
        if not stat.S_ISREG(st.st_mode):
            raise CsvRefused("--csv %s is not a regular file (refused: it would be replaced)"
                             % self.path)
        return st

    def _read(self):
        """The file on disk now: its metadata (with the peer's), header and rows."""
        types = dict(self.columns)
        st = self._stat()
        if st is not None and st.st_size > 0:
            try:
                meta, self.header, self.lines = read_csv(self.path)
            except (RuntimeError, UnicodeDecodeError) as e:
                raise CsvRefused("--csv %s is not an accubench CSV (%s): refused, it would be "
                                 "rewritten" % (self.path, e))
            # status too: a loss-curves file has backend and model (csv_existing.c)
            if not {"backend", "model", "status"} <= set(self.header):
                raise CsvRefused("--csv %s is not an accubench CSV (no backend, model and "
                                 "status columns): refused, it would be rewritten" % self.path)
        else:
            meta, self.lines = list(self.own_meta), []
            self.header = [name for name, _ in self.columns]
        self.types = {c: types.get(c, "TEXT") for c in self.header}
        keys = {k for k, _ in self.peer_meta}
        self.meta = [(k, v) for k, v in meta if k not in keys] + self.peer_meta

    def unmeasured(self, row):
        return [c for c in self.header if format_cell(row.get(c), self.types[c]) == ""]

    def append(self, row):
        """Adds one row ({column: value}; absent = not measured) and
        rewrites the file whole."""
        self.pending.append(note_split(row))
        self.flush()
        self.written += 1

    def flush(self):
        """The file on disk now, the peer's metadata and its pending rows."""
        self._read()
        mine = [",".join(format_cell(r.get(c), self.types[c]) for c in self.header)
                for r in self.pending]
        text = "".join("# %s: %s\n" % (k, _text(v)) for k, v in self.meta)
        text += ",".join(self.header) + "\n"
        text += "".join(line + "\n" for line in self.lines + mine)
        write_new(self.path, text)
        self.lines += mine
        self.pending = []

    def close(self):
        self.lock.release()

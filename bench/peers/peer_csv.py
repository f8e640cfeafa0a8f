"""Rows in accubench's CSV schema (harness/results/result_row.h's
RESULT_COLUMNS), written into accubench's own CSV or a new one.

The columns come from the header of the file being joined, so a column the
C side adds is carried (empty: the peer does not measure it); a new file
takes them from result_row.h. A value the peer did not measure is written
empty, as the C writer writes NAN and -1. Metadata lines go before the
header, where the C reader reads them; the whole file is written to a
temporary name and renamed, so a reader never sees half of it."""
import math
import os
import re

COLUMN_RE = re.compile(r"X\((\w+),\s*(TEXT|INT|REAL),\s*(\w+),\s*(KEY|SPLIT|VALUE)\)")


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


class CsvTarget:
    """A CSV the peer appends rows to: an existing accubench CSV (its
    metadata and header kept; the peer's metadata added before the header)
    or a new file with the peer's metadata alone."""

    def __init__(self, path, root, own_meta, peer_meta):
        self.path = path
        types = dict(result_columns(root))
        if os.path.exists(path):
            self.meta, self.header, self.lines = read_csv(path)
        else:
            self.meta, self.lines = list(own_meta), []
            self.header = [name for name, _ in result_columns(root)]
        self.types = {c: types.get(c, "TEXT") for c in self.header}
        keys = {k for k, _ in peer_meta}
        self.meta = [(k, v) for k, v in self.meta if k not in keys] + list(peer_meta)
        self.written = 0

    def unmeasured(self, row):
        return [c for c in self.header if format_cell(row.get(c), self.types[c]) == ""]

    def append(self, row):
        """Adds one row ({column: value}; absent = not measured) and
        rewrites the file whole."""
        self.lines.append(",".join(format_cell(row.get(c), self.types[c]) for c in self.header))
        self.written += 1
        self.flush()

    def flush(self):
        folder = os.path.dirname(os.path.abspath(self.path))
        tmp = os.path.join(folder, ".%s.tmp.%d" % (os.path.basename(self.path), os.getpid()))
        try:
            with open(tmp, "w") as f:
                for k, v in self.meta:
                    f.write("# %s: %s\n" % (k, _text(v)))
                f.write(",".join(self.header) + "\n")
                for line in self.lines:
                    f.write(line + "\n")
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

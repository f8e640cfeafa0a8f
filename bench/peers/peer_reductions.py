"""The reductions the peer runs, read from accubench's own table
(harness/util/reduction.c) rather than a list of names here: the program
prints each row as "NAME exact|inexact RULE" (`accubench
--list-reductions`), the RULE saying what one micro-batch's scale divides
by ("1/window", "1/(micro*k)", "1/micro"); a dump's manifest carries the
same RULE as reduction_scale. Standard library only, so that reading the
table needs neither NumPy nor PyTorch."""
import os
import subprocess

# The counts a rule may divide by: the window's valid items, the
# micro-batch's valid items, the window's micro-batch count.
COUNTS = ("window", "micro", "k")

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class TableError(Exception):
    """The program's table could not be read, or a rule is not one this
    module knows how to run."""


def parse_rule(text):
    """"1/(micro*k)" -> ("micro", "k"): the counts the scale divides by."""
    if not text.startswith("1/"):
        raise TableError("reduction rule '%s' is not 1/..." % text)
    body = text[2:]
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]
    counts = tuple(body.split("*")) if body != "1" else ()
    for c in counts:
        if c not in COUNTS:
            raise TableError("reduction rule '%s' divides by '%s' (known: %s)"
                             % (text, c, ", ".join(COUNTS)))
    return counts


def parse_table(text):
    """The lines of --list-reductions as {name: (exact, counts)}, in order."""
    rows = {}
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if len(words) != 3 or words[1] not in ("exact", "inexact"):
            raise TableError("--list-reductions line %d is not NAME exact|inexact RULE: '%s'"
                             % (n, line))
        rows[words[0]] = (words[1] == "exact", parse_rule(words[2]))
    if not rows:
        raise TableError("--list-reductions printed no reduction")
    return rows


def program():
    """$ACCUBENCH, else the build beside this tree."""
    return os.environ.get("ACCUBENCH") or os.path.join(ROOT, "build", "accubench")


def load():
    """accubench's reduction rows, {name: (exact, counts)}."""
    prog = program()
    try:
        out = subprocess.run([prog, "--list-reductions"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise TableError("cannot read accubench's reductions from %s --list-reductions (%s): "
                         "build it with make, or set ACCUBENCH" % (prog, e))
    if out.returncode != 0:
        raise TableError("%s --list-reductions exited %d: %s"
                         % (prog, out.returncode, out.stderr.strip()))
    return parse_table(out.stdout)

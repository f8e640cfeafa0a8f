"""What the peer reads, checked as accubench checks its own input: a file is
opened without waiting for a writer (O_NONBLOCK: a FIFO nobody writes is
refused at once, not waited on) and read only when it is a regular file
(a folder or /dev/zero is refused before a byte is read), text is read to
a bound, and a dump's manifest is checked field by field before any of it
is used, with each tensor file a plain name inside the dump folder. Every
refusal is one line (InputRefused); the caller says it and exits 2."""
import json
import math
import numbers
import os
import stat

import numpy as np

PROFILE_MAX_BYTES = 1 << 20   # a profile is a few lines
MANIFEST_MAX_BYTES = 16 << 20  # a manifest lists a few thousand tensors at most
BOM = b"\xef\xbb\xbf"


class InputRefused(Exception):
    pass


def kind_of(mode):
    """What a file that is not a regular one is, in words (as options.c)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a plain file"


def open_regular(path, what):
    """A binary file object on `path`, refused unless it is a regular file;
    the open itself never waits (a FIFO's open would, for a writer)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise InputRefused("cannot read %s %s: %s" % (what, path, e.strerror))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputRefused("%s %s is not a regular file (%s)" % (what, path, kind_of(mode)))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_text(path, what, limit):
    """A regular file's UTF-8 text (a leading byte-order mark skipped), at
    most `limit` bytes; a NUL byte or bytes that are not UTF-8 are not text."""
    with open_regular(path, what) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise InputRefused("%s %s is larger than %d bytes (not a %s?)" % (what, path, limit, what))
    if data.startswith(BOM):
        data = data[len(BOM):]
    if b"\0" in data:
        raise InputRefused("%s %s holds a NUL byte (not a text file)" % (what, path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputRefused("%s %s is not a text file (not UTF-8 at byte %d)"
                           % (what, path, e.start))


def read_json(path, what, limit):
    try:
        return json.loads(read_text(path, what, limit))
    except (ValueError, RecursionError) as e:
        raise InputRefused("cannot read %s %s: %s" % (what, path, e))


def dump_member(folder, name, manifest):
    """The path of a tensor file the manifest names: a plain file name in
    the dump folder itself. An absolute path, a folder part ("../x",
    "a/b") or a link that leads out of the folder is refused before it is
    opened."""
    if not isinstance(name, str) or not name:
        raise InputRefused("%s: a tensor's 'file' is not a file name: %r" % (manifest, name))
    if os.path.isabs(name) or "/" in name or name in (".", ".."):
        raise InputRefused("%s: tensor file '%s' is outside the dump folder (a file name in "
                           "it is expected)" % (manifest, name))
    path = os.path.join(folder, name)
    if os.path.dirname(os.path.realpath(path)) != os.path.realpath(folder):
        raise InputRefused("%s: tensor file '%s' is a link outside the dump folder"
                           % (manifest, name))
    return path


def load_array(path):
    """A .npy file, never pickled code, never a FIFO waited on."""
    with open_regular(path, "tensor file") as f:
        try:
            return np.load(f, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise InputRefused("cannot read %s: %s" % (path, e))


# The shape keys a kind may give as a real number (a model kind's
# `constants`), checked against the kind's values by check_shape.
CONSTANT_KEYS = ("rope_theta", "norm_eps")


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _whole(v):
    """A JSON whole number (true and false are not numbers here)."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def check_manifest(man, path):
    """The fields a --verify reads, each of the type and range docs/dump.md
    gives; the first that is not is refused."""
    if not isinstance(man, dict):
        raise InputRefused("%s is not a JSON object" % path)
    if not (_whole(man.get("effective")) and man["effective"] >= 1):
        raise InputRefused("%s: 'effective' is not a whole number of 1 or more: %r"
                           % (path, man.get("effective")))
    split = man.get("split")
    if not (isinstance(split, list) and split and all(_whole(c) and c >= 1 for c in split)):
        raise InputRefused("%s: 'split' is not a list of micro-batch sizes of 1 or more: %r"
                           % (path, split))
    if sum(split) != man["effective"]:
        raise InputRefused("%s: split %s does not add up to effective %d"
                           % (path, split, man["effective"]))
    if not (_whole(man.get("valid_items")) and man["valid_items"] >= 1):
        raise InputRefused("%s: 'valid_items' is not a whole number of 1 or more: %r"
                           % (path, man.get("valid_items")))
    shape = man.get("shape")
    # whole numbers, but for the constants a kind adds (the Llama's
    # rope_theta and norm_eps), which check_shape holds to the kind's
    if not (isinstance(shape, dict) and all(_whole(v) or (_number(v) and k in CONSTANT_KEYS)
                                            for k, v in shape.items())):
        raise InputRefused("%s: 'shape' is not an object of whole numbers: %r" % (path, shape))
    for key in ("kind", "dtype", "reduction"):
        if not isinstance(man.get(key), str):
            raise InputRefused("%s: '%s' is not a text: %r" % (path, key, man.get(key)))
    check_tensors(man.get("tensors"), path)


def check_tensors(tensors, path):
    if not isinstance(tensors, list):
        raise InputRefused("%s: 'tensors' is not a list" % path)
    for i, t in enumerate(tensors):
        if not isinstance(t, dict):
            raise InputRefused("%s: tensors[%d] is not an object" % (path, i))
        for key in ("name", "role", "file"):
            if key not in t:
                raise InputRefused("%s: tensors[%d] has no '%s'" % (path, i, key))
            if not isinstance(t[key], str):
                raise InputRefused("%s: tensors[%d]'s '%s' is not a text" % (path, i, key))
        if "shape" in t and not (isinstance(t["shape"], list) and
                                 all(_whole(d) and d >= 0 for d in t["shape"])):
            raise InputRefused("%s: tensors[%d]'s 'shape' is not a list of sizes" % (path, i))
        if "dtype" in t and not isinstance(t["dtype"], str):
            raise InputRefused("%s: tensors[%d]'s 'dtype' is not a text" % (path, i))


def check_shape(kind, shape, dumped_params, path):
    """The model shape against its kind's dimensions (names and ranges, as
    the C registry's) and against the parameters the dump holds, before a
    model is built: a shape the dump does not hold is never allocated."""
    constants = getattr(kind, "constants", {})
    if set(shape) != set(kind.dims) | set(constants):
        raise InputRefused("%s: shape %s is not a %s shape (%s)"
                           % (path, sorted(shape), kind.name,
                              ", ".join(list(kind.dims) + list(constants))))
    for key, value in constants.items():
        if not isinstance(shape[key], (int, float)) or \
                not abs(shape[key] - value) <= 1e-6 * abs(value):
            raise InputRefused("%s: shape %s=%s; the %s's arithmetic fixes it at %g"
                               % (path, key, shape[key], kind.name, value))
    for key, (lo, hi) in kind.dims.items():
        if not lo <= shape[key] <= hi:
            raise InputRefused("%s: shape %s=%d is outside %d..%d" % (path, key, shape[key], lo, hi))
    why = kind.check(shape) if hasattr(kind, "check") else None
    if why:
        raise InputRefused("%s: shape: %s" % (path, why))
    if kind.param_count(shape) != dumped_params:
        raise InputRefused("%s: the shape has %d parameters, the dump's tensors %d"
                           % (path, kind.param_count(shape), dumped_params))


def check_window(man, data, path):
    """The window's arrays hold the manifest's effective batch of examples."""
    for role in ("input", "label", "mask"):
        a = data[role]
        if a.ndim < 1 or a.shape[0] != man["effective"]:
            raise InputRefused("%s: the %s tensor holds %s examples, effective is %d"
                               % (path, role, a.shape[0] if a.ndim else "no", man["effective"]))
    if data["label"].size != data["mask"].size:
        raise InputRefused("%s: %d labels but %d mask entries"
                           % (path, data["label"].size, data["mask"].size))

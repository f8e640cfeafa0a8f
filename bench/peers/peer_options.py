"""The PyTorch peer's options: accubench's names, defaults and profile
files (harness/run/setup/options.c), its lists and ranges read as
accubench reads them, and a parser whose every refusal is one line."""
import argparse
import os
import sys

import peer_ddp
import peer_input
import peer_step

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


class BadInput(Exception):
    pass


# Options, with accubench's names and defaults (harness/run/setup/options.c).
DEFAULTS = {
    "model": "S", "effective": "64", "micro": "pow2", "dtype": "fp32", "reduction": "sum",
    "warmup": "2", "min-samples": "5", "max-samples": "1000", "budget-s": "2",
    "max-noise": "2", "max-step-s": "10", "seed": "1", "buffers": "3",
}
# Profile keys that describe accubench's own axes (its execution modes, its
# backend and trace pass): the peer has its own modes and no trace pass.
# Under torchrun the ranks are torchrun's processes and the sync modes the
# peer's own (--sync): the profile's devices and sync are accubench's.
PROFILE_IGNORED = {"mode", "backend", "mem-cap", "trace-steps", "no-cupti", "quiet", "out",
                   "csv", "optimizer", "devices", "trace", "sync",
                   # the peer's step keeps every activation and an fp32
                   # gradient, unsharded, and its rows' recompute, grad_dtype
                   # and shard columns say so: they join accubench's rows of
                   # those values (none, fp32, none)
                   "recompute", "grad-dtype", "shard", "optimizer-at",
                   # accubench's passes beside the timed steps (the noise
                   # scale, the loss curves and their learning rates, the
                   # dump) and its own timing schedule: the peer times by
                   # its own rule (peer_timing.py) and runs none of them
                   "noise-windows", "train-steps", "lr", "lr-grid", "dump", "steps", "rounds",
                   "append", "replace"}


def plural(n, one, many):
    """The noun for a count of n, as harness/util/plural.h: "1 row", "2 rows"."""
    return one if n == 1 else many


def read_profile(name):
    path = name if ("/" in name or name.endswith(".profile")) else \
        os.path.join(ROOT, "profiles", name + ".profile")
    if not os.path.exists(path):
        raise BadInput("unknown profile '%s' (no file %s)" % (name, path))
    values = {}
    try:
        content = peer_input.read_text(path, "profile", peer_input.PROFILE_MAX_BYTES)
    except peer_input.InputRefused as e:
        raise BadInput(str(e))
    for n, line in enumerate(content.split("\n"), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        key, eq, value = text.partition("=")
        if not eq:
            raise BadInput("%s:%d: '%s' is not key = value" % (path, n, text))
        key = key.strip()
        if key not in DEFAULTS and key not in PROFILE_IGNORED:
            raise BadInput("%s:%d: unknown key '%s'" % (path, n, key))
        values[key] = value.strip()
    return values


def int_in(key, text, lo, hi):
    try:
        v = int(text)
    except ValueError:
        raise BadInput("--%s must be a whole number, got '%s'" % (key, text))
    if not lo <= v <= hi:
        raise BadInput("--%s must be from %d to %d, got '%s'" % (key, lo, hi, text))
    return v


def real_in(key, text, lo, hi):
    try:
        v = float(text)
    except ValueError:
        raise BadInput("--%s must be a number, got '%s'" % (key, text))
    if not lo <= v <= hi:
        raise BadInput("--%s must be from %g to %g, got '%s'" % (key, lo, hi, text))
    return v


def items(text):
    out = [t.strip() for t in text.split(",")]
    if any(not t for t in out):
        raise BadInput("empty item in '%s'" % text)
    return out


# What a list of an axis's values says to mean every row of its table, as
# accubench reads it (AXIS_ALL, harness/util/axis.h).
AXIS_ALL = "all"


def axis_items(key, text, known):
    """An axis's comma list, or AXIS_ALL alone: every name of `known` (the
    program's table, in its order)."""
    if text.strip() == AXIS_ALL:
        return list(known)
    out = items(text)
    if AXIS_ALL in out:
        raise BadInput("--%s '%s': %s names every value and stands alone" % (key, text, AXIS_ALL))
    return out


def model_items(text):
    """A comma list of models as model_spec_list_parse reads it
    (harness/models/registry.c): a key=value item with no ':' continues
    the kind:key=value shape before it, so "S,gpt:d=128,layers=4,..." is two
    models."""
    out = []
    for t in items(text):
        if out and ":" in out[-1] and "=" in t and ":" not in t:
            out[-1] += "," + t
        else:
            out.append(t)
    return out


def micro_list(spec, effective, share):
    """As options_micro_list: pow2 (1, 2, 4, .. <= the largest share of E a
    rank takes, and that share) and the sizes given, ascending, without
    repeats; a size larger than E has no split of it and is left out
    (check_micro_fits refuses one that fits no E)."""
    out = set()
    for t in items(spec):
        if t == "pow2":
            m = 1
            while m <= share:
                out.add(m)
                m *= 2
            out.add(share)  # the split without accumulation
        else:
            m = int_in("micro", t, 1, 1 << 20)
            if m <= effective:
                out.add(m)
    return sorted(out)


def check_micro_fits(spec, effectives):
    """As options_validate: a size larger than every effective batch would
    never run."""
    largest = max(effectives)
    for m in micro_named(spec):
        if m > largest:
            raise BadInput("micro-batch %d is larger than the effective batch %d" % (m, largest)
                           if len(effectives) == 1 else
                           "micro-batch %d is larger than every effective batch "
                           "(the largest is %d)" % (m, largest))


def micro_named(spec):
    """The sizes --micro names (not pow2's): one past a rank's share is a
    skipped row with the reason, as config.c makes it; pow2's stop there."""
    return {int(t) for t in items(spec) if t != "pow2"}


class OneLineParser(argparse.ArgumentParser):
    """Bad input is one line on stderr and exit 2, as accubench's."""

    def error(self, message):
        print("torch_accum: %s (--help lists the options)" % message, file=sys.stderr)
        sys.exit(2)


def parse_args(argv):
    p = OneLineParser(
        prog="torch_accum.py",
        description="The PyTorch peer of accubench: the same models and splits, rows in "
                    "accubench's CSV.")
    p.add_argument("--profile", help="profiles/NAME.profile: the run's model, effective, "
                   "micro, dtype, reduction and timing (accubench's own modes are not the "
                   "peer's: --mode)")
    for key in DEFAULTS:
        p.add_argument("--" + key, help="as accubench run --%s (default %s)"
                       % (key, DEFAULTS[key]))
    p.add_argument("--mode", help="peer modes, comma list (default: every mode this device "
                   "runs): " + ", ".join(m.name for m in peer_step.MODES))
    p.add_argument("--sync", help="under torchrun: DDP's sync modes, comma list (default: "
                   "every one): " + ", ".join(s.name for s in peer_ddp.SYNCS))
    p.add_argument("--device", default="auto", help="auto (cuda when present), cpu or cuda")
    p.add_argument("--threads", help="torch.set_num_threads (default: PyTorch's own; 1 on each "
                   "rank under torchrun)")
    p.add_argument("--csv", help="append rows to this CSV (accubench's, or a new one)")
    p.add_argument("--out", default="results", help="folder of the new CSV when no --csv")
    p.add_argument("--verify", metavar="DIR", help="check an `accubench run --dump DIR` "
                   "window's gradient against PyTorch's and exit")
    p.add_argument("--quiet", action="store_true", help="no line per config")
    return p.parse_args(argv)


def settings_of(args):
    s = dict(DEFAULTS)
    if args.profile:
        s.update({k: v for k, v in read_profile(args.profile).items() if k in DEFAULTS})
    s.update({k: getattr(args, k.replace("-", "_")) for k in DEFAULTS
              if getattr(args, k.replace("-", "_")) is not None})
    return s

"""Outside verification: PyTorch's accumulated gradient against the one
accubench wrote with `accubench run --dump DIR` (docs/dump.md is the
contract). The window is run in PyTorch over the dump's own split (one
forward and backward per micro-batch, each scaled by the reduction's scale
from the mask), at the dump's parameters, in fp32, and each tensor's
gradient is compared by its relative error ‖g_torch − g_dump‖ / ‖g_dump‖.
One line per tensor; exit 0 all within tolerance, 1 a mismatch, 2 the dump
cannot be read."""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

import peer_data
import peer_input
import peer_models
import peer_reductions

# The dump's gradient against this fp32 window, which stands for the exact
# gradient: fp32 and tf32 as harness/util/dtype_table.c holds the window
# against the full batch; bf16 three times that table's 1e-2, which compares
# two bf16 gradients where this compares a bf16 gradient with the exact
# (E=10 micro=4: llama-tiny's worst tensor 0.010, llama-cpu's 0.016, and
# PyTorch's own bf16 autocast of the same windows 0.008 and 0.014);
# tests/run/dump_check.py holds dumps to the same figures.
TOLERANCE = {"fp32": 1e-5, "tf32": 1e-3, "bf16": 3e-2}
# A gradient held in bf16 between micro-batches (accubench --grad-dtype
# bf16): the window here rounds its sum to bf16 after each micro-batch as
# accubench does, but a sum that differs in fp32's last bits can round to
# the other neighbour, one bf16 ulp apart (gpt-tiny and llama-tiny, E=10
# micro=4: 7e-5 and 1.7e-4; against the unrounded window 3e-3, growing with
# K). The tolerance adds grad_dtype.c's bf16 accumulator's 2^-8.
BF16_ACCUM_TOLERANCE = 1.0 / 256
GRAD_DTYPES = ("fp32", "bf16")


def grad_dtype(man):
    """What the gradient was held in between micro-batches (a dump from
    before the manifest said so: fp32)."""
    return man.get("grad_dtype", "fp32")


class DumpError(Exception):
    pass


def _load(folder, name, dtype, manifest):
    try:
        path = peer_input.dump_member(folder, name, manifest)
        a = peer_input.load_array(path)
    except peer_input.InputRefused as e:
        raise DumpError(str(e))
    if a.dtype != np.dtype(dtype):
        raise DumpError("%s is %s, docs/dump.md says %s" % (path, a.dtype, dtype))
    return a


def read_dump(folder):
    path = os.path.join(folder, "manifest.json")
    try:
        man = peer_input.read_json(path, "manifest", peer_input.MANIFEST_MAX_BYTES)
    except peer_input.InputRefused as e:
        raise DumpError(str(e))
    if not isinstance(man, dict) or man.get("format") != "accubench-dump" or \
            man.get("version") != 1:
        raise DumpError("%s is not an accubench-dump version 1 manifest" % path)
    for key in ("kind", "shape", "dtype", "reduction", "effective", "split", "valid_items",
                "tensors"):
        if key not in man:
            raise DumpError("%s has no '%s'" % (path, key))
    if grad_dtype(man) not in GRAD_DTYPES:
        raise DumpError("%s: grad_dtype '%s' is not one the peer reproduces (%s)"
                        % (path, grad_dtype(man), ", ".join(GRAD_DTYPES)))
    try:
        peer_input.check_manifest(man, path)
    except peer_input.InputRefused as e:
        raise DumpError(str(e))
    params, grads, data = {}, {}, {}
    for t in man["tensors"]:
        role = t.get("role")
        dtype = t.get("dtype", "float32")
        a = _load(folder, t["file"], dtype, path)
        if list(a.shape) != list(t.get("shape", a.shape)):
            raise DumpError("%s has shape %s, the manifest says %s"
                            % (t["file"], list(a.shape), t["shape"]))
        if role == "param":
            params[t["name"]] = a
        elif role == "grad":
            grads[t["name"]] = a
        elif role in ("input", "label", "mask"):
            data[role] = a
        else:
            raise DumpError("%s: tensor %s has an unknown role '%s'"
                            % (path, t.get("name"), role))
    for role in ("input", "label", "mask"):
        if role not in data:
            raise DumpError("%s lists no %s tensor" % (path, role))
    try:
        peer_input.check_window(man, data, path)
    except peer_input.InputRefused as e:
        raise DumpError(str(e))
    return man, params, grads, data


def torch_window(man, params, data):
    """The window in PyTorch: the model at the dump's parameters, the
    gradient accumulated over the dump's split. Returns (model, loss)."""
    kind = peer_models.KINDS.get(man["kind"])
    if kind is None:
        raise DumpError("model kind '%s' is not one the peer knows (%s)"
                        % (man["kind"], ", ".join(peer_models.KINDS)))
    try:
        peer_input.check_shape(kind, man["shape"], sum(a.size for a in params.values()),
                               "the manifest")
    except peer_input.InputRefused as e:
        raise DumpError(str(e))
    model = kind.build(man["shape"])
    # a tied alias (the GPT's lm_head, a tied Llama's) is one parameter
    # under two names: named_parameters lists it once, as the dump does
    want = set(dict(model.named_parameters()))
    if set(params) != want:
        raise DumpError("the dump's parameters %s are not the model's %s (missing %s, "
                        "unexpected %s)" % (len(params), len(want), sorted(want - set(params))[:3],
                                            sorted(set(params) - want)[:3]))
    # strict=False: a tied alias (the GPT's lm_head) is loaded through the
    # tensor it shares, which the set check above found complete
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in params.items()},
                          strict=False)
    x = torch.from_numpy(data["input"].copy())
    if x.dtype == torch.int32:
        x = x.long()
    labels = torch.from_numpy(data["label"].astype(np.int64)).reshape(-1)
    mask = torch.from_numpy(data["mask"].astype(np.float32)).reshape(-1)
    per = labels.numel() // man["effective"]
    split = [int(c) for c in man["split"]]
    if sum(split) != man["effective"]:
        raise DumpError("split %s does not add up to effective %d" % (split, man["effective"]))
    counts, first = [], 0
    for c in split:
        counts.append(int(mask[first * per:(first + c) * per].sum()))
        first += c
    if sum(counts) != man["valid_items"]:
        raise DumpError("the mask holds %d valid items, the manifest says %d"
                        % (sum(counts), man["valid_items"]))
    # the manifest's own rule where it has one: a dump is checked from
    # itself, wherever it was written
    try:
        scales = peer_data.window_scales(man["reduction"], counts, man.get("reduction_scale"))
    except (peer_reductions.TableError, KeyError) as e:
        raise DumpError("reduction '%s': %s" % (man["reduction"], e))
    torch.set_float32_matmul_precision("highest")
    model.zero_grad(set_to_none=True)
    first, loss_sum = 0, 0.0
    for k, c in enumerate(split):
        items = slice(first * per, (first + c) * per)
        logits, lab = kind.logits_and_labels(model, x[first:first + c], labels[items])
        ce = F.cross_entropy(logits.float(), lab, reduction="none")
        loss = (ce * mask[items]).sum() * scales[k]
        loss.backward()
        if grad_dtype(man) == "bf16":
            with torch.no_grad():  # round to nearest even, as accubench's round_bf16
                for p in model.parameters():
                    p.grad.copy_(p.grad.to(torch.bfloat16).float())
        loss_sum += float(loss.detach())
        first += c
    return model, loss_sum


def verify(folder, out=sys.stdout):
    try:
        man, params, grads, data = read_dump(folder)
        model, loss = torch_window(man, params, data)
    except DumpError as e:
        print("torch_accum: --verify %s: %s" % (folder, e), file=sys.stderr)
        return 2
    tol = TOLERANCE.get(man["dtype"], 1e-5)
    if grad_dtype(man) == "bf16":
        tol += BF16_ACCUM_TOLERANCE
    named = dict(model.named_parameters())
    bad = good = 0
    for name in sorted(named, key=list(named).index):
        if name not in grads:
            print("MISSING  %-36s the dump has no grad.%s.npy" % (name, name), file=out)
            bad += 1
            continue
        g_dump = torch.from_numpy(grads[name].astype(np.float64))
        g_torch = named[name].grad.detach().double()
        if tuple(g_dump.shape) != tuple(g_torch.shape):
            print("MISMATCH %-36s shape %s, PyTorch's %s" % (name, list(g_dump.shape),
                                                            list(g_torch.shape)), file=out)
            bad += 1
            continue
        denom = float(torch.linalg.vector_norm(g_dump))
        diff = float(torch.linalg.vector_norm(g_torch - g_dump))
        err = diff / denom if denom > 0 else (0.0 if diff == 0 else float("inf"))
        ok = err < tol
        bad += not ok
        good += ok
        print("%-8s %-36s %-14s rel err %.3g (%s tolerance %g)"
              % ("ok" if ok else "MISMATCH", name, "x".join(map(str, g_dump.shape)), err,
                 man["dtype"], tol), file=out)
    extra = sorted(set(grads) - set(named))
    for name in extra:
        print("MISMATCH %-36s a gradient the model has no parameter for" % name, file=out)
        bad += 1
    dumped_loss = man.get("loss")
    print("loss: PyTorch %.7g, accubench %s; %s %s over split %s, %d valid items"
          % (loss, "%.7g" % dumped_loss if dumped_loss is not None else "not in the dump",
             man.get("model", man["kind"]), man["reduction"], man["split"],
             man["valid_items"]), file=out)
    print("verify: %s (%d of %d tensors within %g)"
          % ("PASS" if not bad else "FAIL", good, len(named), tol), file=out)
    return 1 if bad else 0

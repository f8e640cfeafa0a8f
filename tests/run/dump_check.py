#!/usr/bin/env python3
"""Checks a window dump (docs/dump.md) with NumPy alone, in float64, from
PyTorch's conventions, never from accubench's code: every file has the
manifest's shape and dtype; the loss recomputed from the dumped weights and
window is the manifest's; and the gradient is d(loss)/d(weights): for the
MLP (and the linear classifier, an MLP of one layer) by backpropagation
written here; for the GPT against Hugging Face's
GPT2LMHeadModel where PyTorch and transformers import, every tensor, else
by central differences on a few entries of every tensor; for the Llama
against Hugging Face's own LlamaForCausalLM (dump_check_hf.py: needs
PyTorch and transformers), the accumulated gradient of every tensor. A dump with the noise pass's windows
(DIR/noise/, docs/dump.md) is checked too, the same way, and for the MLP
its noise scale recomputed from per-small-batch gradients with the pass's
estimator (docs/noise-scale.md) must be the manifest's; the exact figure
from per-example gradients is printed beside it, in the pass's errors.

usage: dump_check.py DIR
  DIR   a folder written by accubench run --dump DIR

The last line is PASS (exit 0: the dump holds) or FAIL (exit 1: it does
not; exit 2: it cannot be checked here: no folder given, no manifest, a
model kind this checker has no reference for, no NumPy, or for the Llama
no PyTorch or transformers)."""
import json
import math
import os
import sys

np = None  # NumPy, imported once the dump is one this checker can read


class CannotCheck(Exception):
    """The dump cannot be checked here: one line, exit 2."""


def gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_grad(x):
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    t = np.tanh(inner)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x * x)


def xent(logits, labels, mask):
    """Sum over valid rows of -log softmax(logits)[label]; and d/dlogits."""
    z = logits - logits.max(axis=-1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=-1, keepdims=True)
    rows = np.arange(len(labels))
    loss = -(np.log(p[rows, labels]) * mask).sum()
    d = p.copy()
    d[rows, labels] -= 1
    return loss, d * mask[:, None]


def mlp_loss_and_grads(w, x, labels, mask):
    n = len([k for k in w if k.endswith(".weight")])
    hs, zs = [x], []
    h = x
    for i in range(n):
        z = h @ w[f"layers.{i}.weight"].T + w[f"layers.{i}.bias"]
        zs.append(z)
        h = gelu(z) if i < n - 1 else z
        hs.append(h)
    loss, dz = xent(zs[-1], labels[:, 0], mask[:, 0].astype(np.float64))
    grads = {}
    for i in reversed(range(n)):
        grads[f"layers.{i}.weight"] = dz.T @ hs[i]
        grads[f"layers.{i}.bias"] = dz.sum(axis=0)
        if i:
            dz = (dz @ w[f"layers.{i}.weight"]) * gelu_grad(zs[i - 1])
    return loss, grads


def layernorm(x, g, b):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * g + b


def gpt_loss(w, shape, tokens, labels, mask):
    d, heads, layers = shape["d"], shape["heads"], shape["layers"]
    hd = d // heads
    e, t = tokens.shape
    x = w["transformer.wte.weight"][tokens] + w["transformer.wpe.weight"][:t]
    causal = np.tril(np.ones((t, t), dtype=bool))
    for i in range(layers):
        p = f"transformer.h.{i}."
        a = layernorm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = a @ w[p + "attn.c_attn.weight"].T + w[p + "attn.c_attn.bias"]
        q, k, v = (qkv[..., j * d:(j + 1) * d].reshape(e, t, heads, hd).transpose(0, 2, 1, 3)
                   for j in range(3))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)
        s = np.where(causal, s, -np.inf)
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        s /= s.sum(axis=-1, keepdims=True)
        y = (s @ v).transpose(0, 2, 1, 3).reshape(e, t, d)
        x = x + y @ w[p + "attn.c_proj.weight"].T + w[p + "attn.c_proj.bias"]
        a = layernorm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        h = gelu(a @ w[p + "mlp.c_fc.weight"].T + w[p + "mlp.c_fc.bias"])
        x = x + h @ w[p + "mlp.c_proj.weight"].T + w[p + "mlp.c_proj.bias"]
    a = layernorm(x, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"])
    logits = a @ w["transformer.wte.weight"].T  # the LM head, tied
    loss, _ = xent(logits.reshape(e * t, -1), labels.reshape(-1),
                   mask.reshape(-1).astype(np.float64))
    return loss


def read_manifest(root):
    path = os.path.join(root, "manifest.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise CannotCheck(f"{path}: {e}")


def load_arrays(root, m, fail):
    arrays = {}
    for t in m["tensors"]:
        a = np.load(os.path.join(root, t["file"]))
        if list(a.shape) != t["shape"] or str(a.dtype) != t["dtype"]:
            fail(f"{t['file']}: {a.shape} {a.dtype}, manifest {t['shape']} {t['dtype']}")
        arrays[(t["role"], t["name"])] = a
    return arrays


# The dump's gradient against an exact one (float64), per tensor, by
# relative error. fp32 and tf32 as harness/util/dtype_table.c holds the
# window against the full batch; bf16 three times that table's 1e-2, since
# the table compares two bf16 gradients and this a bf16 gradient with the
# exact: with E=10 micro=4, the worst tensor of gpt-tiny 0.006-0.007, of
# llama-tiny 0.010, of llama-cpu 0.014-0.016 (PyTorch's own bf16 autocast
# of the same windows: 0.005, 0.008, 0.014).
GRAD_TOLERANCE = {"fp32": 1e-5, "tf32": 1e-3, "bf16": 3e-2}


def grad_tolerance(m, method_error=0.0):
    """The dump's dtype's tolerance, or the reference's own error where
    that is larger (central differences)."""
    return max(GRAD_TOLERANCE.get(m["dtype"], 1e-5), method_error)


def check_mlp(m, params, grads, x, labels, mask, valid, fail):
    loss, want = mlp_loss_and_grads(params, x.astype(np.float64), labels, mask)
    tol = grad_tolerance(m)
    for name, g in want.items():
        g = g / valid
        err = np.linalg.norm(grads[name] - g) / max(np.linalg.norm(g), 1e-30)
        if not err < tol:
            fail(f"grad {name}: relative error {err:.3g} (over {tol:g})")
    return loss, "every gradient by backpropagation"


def check_linear(m, params, grads, x, labels, mask, valid, fail):
    """The linear classifier is the MLP of one layer, by nn.Linear's names."""
    mlp = {"layers.0.weight": "linear.weight", "layers.0.bias": "linear.bias"}
    return check_mlp(m, {k: params[v] for k, v in mlp.items()},
                     {k: grads[v] for k, v in mlp.items()}, x, labels, mask, valid,
                     lambda why: fail(why.replace("layers.0.", "linear.")))


def check_gpt(m, params, grads, x, labels, mask, valid, fail):
    """Against GPT2LMHeadModel where Hugging Face's model can be built here;
    else by central differences in NumPy (what CI without PyTorch runs)."""
    if hf_missing() is None:
        import dump_check_hf
        return dump_check_hf.check_gpt(np, m, params, grads, x, labels, mask, valid,
                                       grad_tolerance(m), fail)
    return check_gpt_differences(m, params, grads, x, labels, mask, valid, fail)


def check_gpt_differences(m, params, grads, x, labels, mask, valid, fail):
    """Per tensor, its three largest dumped entries against central
    differences: the largest, so that the differences' own error and the
    dtype's rounding are small beside them (a tensor the dump got wrong by a
    factor, or zeroed, is seen there too), and per tensor, so that a small
    tensor's error is not lost in the norm of the embedding's."""
    loss = gpt_loss(params, m["shape"], x, labels, mask)
    tol = grad_tolerance(m, 1e-3)  # the differences' own error, in float64
    entries, worst = 0, 0.0
    for name, w in params.items():
        flat, dumped = w.reshape(-1), grads[name].reshape(-1)
        got, fds = [], []
        for idx in np.argsort(-np.abs(dumped), kind="stable")[:3]:
            keep, h = flat[idx], 1e-4
            flat[idx] = keep + h
            up = gpt_loss(params, m["shape"], x, labels, mask)
            flat[idx] = keep - h
            down = gpt_loss(params, m["shape"], x, labels, mask)
            flat[idx] = keep
            fds.append((up - down) / (2 * h) / valid)
            got.append(dumped[idx])
        got, fds = np.array(got), np.array(fds)
        err = np.linalg.norm(got - fds) / max(np.linalg.norm(fds), 1e-30)
        entries, worst = entries + len(got), max(worst, err)
        if not err < tol:
            fail(f"grad {name}: relative error {err:.3g} against central differences on its "
                 f"{len(got)} largest entries (over {tol:g})")
    return loss, (f"{entries} gradient entries by central differences (each tensor's largest), "
                  f"worst tensor {worst:.2g}")


def mlp_item_grads(params, x, labels, mask):
    """Per-item gradients of the unnormalised loss, flattened, valid items
    only: one backpropagation per example (an MLP example is one item)."""
    names = sorted(params)
    out = []
    for i in range(len(x)):
        if mask[i].sum():
            _, g = mlp_loss_and_grads(params, x[i:i + 1], labels[i:i + 1], mask[i:i + 1])
            out.append(np.concatenate([g[n].ravel() for n in names]))
    return np.array(out)


def jackknife(trace, g2):
    """sum(trace) / sum(g2) and its leave-one-window-out standard error."""
    w = len(trace)
    loo = (trace.sum() - trace) / (g2.sum() - g2)
    return trace.sum() / g2.sum(), math.sqrt((w - 1) / w * ((loo - loo.mean()) ** 2).sum())


def noise_scale_check(m, params, x, labels, mask, fail):
    """The pass's estimator (noise_scale.c) on the dump's windows, from
    per-item gradients summed into small batches, against the manifest;
    and the exact figure from the per-item gradients themselves."""
    w_n, e_w = m["noise_windows"], m["window_effective"]
    k_n = len(m["split"]) // w_n
    items = mlp_item_grads(params, x.astype(np.float64), labels, mask)
    valid = mask[:, 0].astype(bool)
    # each valid item's place in items: the running count of valid rows
    index = np.cumsum(valid) - 1
    bounds = np.concatenate([[0], np.cumsum(m["split"])])
    trace, g2 = [], []
    for w in range(w_n):
        sq, inv, n_w, g_w = [], [], 0, 0
        for k in range(w * k_n, (w + 1) * k_n):
            rows = np.arange(bounds[k], bounds[k + 1])
            rows = rows[valid[rows]]
            if not len(rows):
                continue  # padding alone adds nothing
            g = items[index[rows]].sum(axis=0)
            sq.append(g @ g / len(rows) ** 2)
            inv.append(1 / len(rows))
            n_w += len(rows)
            g_w = g_w + g
        s, wq = np.mean(sq), g_w @ g_w / n_w ** 2
        t = (s - wq) / (np.mean(inv) - 1 / n_w)
        trace.append(t)
        g2.append(wq - t / n_w)
    b, err = jackknife(np.array(trace), np.array(g2))
    per_example = m["valid_items"] / m["effective"]  # B_simple in examples, as the row
    b, err = b / per_example, err / per_example
    # the pass's gradients carry the dump's dtype's error (bf16's 3e-2),
    # the reference is exact: 1e-3 (the estimator's own float sums) or that
    tol = max(1e-3, grad_tolerance(m))
    for name, got, want in (("grad_noise_scale", b, m["grad_noise_scale"]),
                            ("grad_noise_scale_err", err, m["grad_noise_scale_err"])):
        if not abs(got - want) <= tol * abs(want):
            fail(f"{name} {got:.6g} recomputed from the windows, manifest {want:.6g}")
    n = len(items)
    mean = items.mean(axis=0)
    tr = ((items - mean) ** 2).sum() / (n - 1)
    exact = tr / (mean @ mean - tr / n) / per_example
    return (f"noise scale {b:.4g} +- {err:.3g} recomputed over {w_n} windows of {e_w}; "
            f"exact from {n} per-item gradients {exact:.4g} "
            f"({abs(exact - b) / err:.2f} errors apart)")


def check_llama(m, params, grads, x, labels, mask, valid, fail):
    import dump_check_hf
    return dump_check_hf.check_llama(np, m, params, grads, x, labels, mask, valid,
                                     grad_tolerance(m), fail)


def hf_missing():
    """None where Hugging Face's models can be built here; else why not."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import dump_check_hf
    return dump_check_hf.missing()


# The model kinds this checker has a reference for; any other is refused
# by name rather than checked as one of these. needs: what a kind's
# reference imports beyond NumPy (None where all of it imports, else why).
CHECKERS = {"mlp": check_mlp, "linear": check_linear, "gpt": check_gpt, "llama": check_llama}
NEEDS = {"llama": hf_missing}


LOSS_TOLERANCE = {"fp32": 1e-5, "tf32": 1e-3, "bf16": 1e-2}


def check(root):
    """The dump's failures, and a line saying what was checked."""
    global np
    m = read_manifest(root)
    kind = m.get("kind")
    if kind not in CHECKERS:
        raise CannotCheck(f"{root}: model kind '{kind}' ({m.get('model')}) has no reference "
                          f"in dump_check.py (it knows {', '.join(CHECKERS)})")
    try:
        import numpy
    except ImportError as e:
        raise CannotCheck(f"{root}: NumPy is not importable ({e})")
    np = numpy
    why = NEEDS[kind]() if kind in NEEDS else None
    if why:
        raise CannotCheck(f"{root}: {why}")
    failures = []
    fail = failures.append
    arrays = load_arrays(root, m, fail)
    params = {n: a.astype(np.float64) for (r, n), a in arrays.items() if r == "param"}
    grads = {n: a.astype(np.float64) for (r, n), a in arrays.items() if r == "grad"}
    x, labels, mask = (arrays[("input", "inputs")], arrays[("label", "labels")],
                       arrays[("mask", "mask")])
    valid = int(mask.sum())
    if valid != m["valid_items"]:
        fail(f"mask has {valid} valid items, manifest {m['valid_items']}")
    if sum(m["split"]) != m["effective"] or len(m["split"]) != m["accum"]:
        fail(f"split {m['split']} is not {m['accum']} micro-batches of {m['effective']}")
    noise = "noise_windows" in m
    if noise:
        w_n, e_w = m["noise_windows"], m["window_effective"]
        k_n = len(m["split"]) // max(w_n, 1)
        if not (w_n >= 2 and m["effective"] == w_n * e_w and k_n * w_n == len(m["split"])
                and all(m["split"][i] == m["split"][i % k_n] for i in range(len(m["split"])))
                and sum(m["split"][:k_n]) == e_w):
            fail(f"the noise pass's windows: {w_n} of {e_w} examples, split {m['split']}")
            noise = False
    if not m.get("reduction_exact", False):
        return failures, (f"reduction {m['reduction']} is not exact (or the manifest "
                          "predates reduction_exact): shapes only")
    if m.get("grad_dtype", "fp32") != "fp32":  # its roundings are not reproduced here
        return failures, (f"the gradient was held in {m['grad_dtype']} between micro-batches "
                          "(--grad-dtype): shapes only")
    loss, checked = CHECKERS[kind](m, params, grads, x, labels, mask, valid, fail)
    loss /= valid
    # fp32's 1e-5; a bf16 window's loss is bf16's own (dtype_table.c)
    if not abs(loss - m["loss"]) <= LOSS_TOLERANCE.get(m["dtype"], 1e-5) * abs(loss):
        fail(f"loss {loss:.9g} recomputed, manifest {m['loss']:.9g}")
    if noise and kind == "mlp":
        checked += "; " + noise_scale_check(m, params, x, labels, mask, fail)
    elif noise:
        checked += "; its noise scale not recomputed (per-item gradients: the MLP's alone)"
    return failures, (f"{m['model']}: {len(m['tensors'])} files, loss {loss:.6g}, "
                      f"{checked}")


def main(argv):
    if argv[1:] in (["-h"], ["--help"]):
        print(__doc__.split("\n\n", 1)[1])
        return 0
    if len(argv) != 2:
        print(__doc__.split("\n\n", 1)[1], file=sys.stderr)
        print("FAIL: dump_check.py takes one dump folder" +
              (f", not {len(argv) - 1} arguments" if len(argv) > 2 else ""))
        return 2
    failures = []
    try:
        roots = [argv[1]]
        top = read_manifest(argv[1])
        if "noise_dump" in top:  # the noise pass's windows, a dump of their own
            roots.append(os.path.join(argv[1], top["noise_dump"]))
        for root in roots:
            found, checked = check(root)
            print(f"dump_check: {root}: {checked}")
            failures += [f"{root}: {f}" for f in found]
    except CannotCheck as e:
        print(f"FAIL: {e}")
        return 2
    for f in failures:
        print("dump_check: FAILED:", f)
    print("FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

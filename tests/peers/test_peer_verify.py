"""torch_accum.py --verify against window dumps written here from NumPy as
docs/dump.md lays them out, with the gradient from an MLP written out in
NumPy (float64, tanh GELU, softmax cross-entropy over the valid examples):
a right dump passes; a dump with one tensor off, or with the gradient of
the mean-of-means bug on a ragged split, fails; a broken dump is refused.
Run by tests/e2e_peer.sh where torch imports."""
import io
import json
import os
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "peers"))

import peer_verify  # noqa: E402

C = np.sqrt(2 / np.pi)


def gelu(z):
    return 0.5 * z * (1 + np.tanh(C * (z + 0.044715 * z ** 3)))


def gelu_grad(z):
    t = np.tanh(C * (z + 0.044715 * z ** 3))
    return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * C * (1 + 3 * 0.044715 * z * z)


def mlp_grads(params, layers, x, labels, weight):
    """d(sum_i weight_i * ce_i)/d(param) of the MLP, float64."""
    W = [params["layers.%d.weight" % i] for i in range(layers + 1)]
    B = [params["layers.%d.bias" % i] for i in range(layers + 1)]
    acts, zs, h = [x], [], x
    for i in range(layers + 1):
        z = h @ W[i].T + B[i]
        zs.append(z)
        h = gelu(z) if i < layers else z
        acts.append(h)
    logits = acts[-1]
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    ce = -np.log(p[np.arange(len(labels)), labels])
    d = p.copy()
    d[np.arange(len(labels)), labels] -= 1
    d *= weight[:, None]
    g = {}
    for i in range(layers, -1, -1):
        g["layers.%d.weight" % i] = d.T @ acts[i]
        g["layers.%d.bias" % i] = d.sum(0)
        if i:
            d = (d @ W[i]) * gelu_grad(zs[i - 1])
    return g, float((weight * ce).sum())


def write_dump(folder, hidden=24, layers=2, classes=7, effective=10, split=(4, 4, 2),
               reduction_of_grad="sum", tamper=None, tamper_by=1e-4, dtype="fp32", grad_dtype="fp32",
               seed=3, kind="mlp"):
    """kind "linear": the linear classifier (linear:in=hidden,classes=N),
    the MLP with no hidden layer under nn.Linear's names linear.*."""
    if kind == "linear":
        layers = 0
    rng = np.random.default_rng(seed)
    params = {}
    dims = [hidden] * (layers + 1) + [classes]
    for i in range(layers + 1):
        bound = 1 / np.sqrt(dims[i])
        params["layers.%d.weight" % i] = rng.uniform(-bound, bound, (dims[i + 1], dims[i]))
        params["layers.%d.bias" % i] = rng.uniform(-0.1, 0.1, dims[i + 1]) * bound
    params = {k: v.astype(np.float32) for k, v in params.items()}
    x = rng.uniform(-1, 1, (effective, hidden)).astype(np.float32)
    labels = rng.integers(0, classes, (effective, 1)).astype(np.int32)
    mask = np.zeros((effective, 1), np.int32)
    mask[[0, 1, 2, 3, 4, 8], 0] = 1  # 4 valid in the first micro-batch, 2 in the last
    valid = mask[:, 0].astype(np.float64)
    if reduction_of_grad == "sum":
        weight = valid / valid.sum()
    else:  # mean-of-means: each micro-batch over its own valid count, / K
        weight, first = np.zeros(effective), 0
        for c in split:
            n = valid[first:first + c].sum()
            weight[first:first + c] = valid[first:first + c] / (n * len(split)) if n else 0
            first += c
    g, loss = mlp_grads({k: v.astype(np.float64) for k, v in params.items()}, layers,
                        x.astype(np.float64), labels[:, 0], weight)
    g = {k: v.astype(np.float32) for k, v in g.items()}
    if kind == "linear":
        params, g = ({k.replace("layers.0", "linear"): v for k, v in d.items()} for d in (params, g))
    if tamper:
        g[tamper] = g[tamper] * np.float32(1 + tamper_by)
    tensors = []

    def put(name, role, file, a):
        np.save(os.path.join(folder, file), a)
        tensors.append({"name": name, "role": role, "file": file, "shape": list(a.shape),
                        "dtype": str(a.dtype)})
    for k, v in params.items():
        put(k, "param", "param.%s.npy" % k, v)
        put(k, "grad", "grad.%s.npy" % k, g[k])
    put("inputs", "input", "inputs.npy", x)
    put("labels", "label", "labels.npy", labels)
    put("mask", "mask", "mask.npy", mask)
    man = {"format": "accubench-dump", "version": 1, "accubench_version": "test",
           "model": "mlp:hidden=%d;layers=%d;classes=%d" % (hidden, layers, classes),
           "kind": "mlp", "shape": {"hidden": hidden, "layers": layers, "classes": classes},
           "dtype": dtype, "grad_dtype": grad_dtype, "reduction": "sum", "optimizer": "adamw", "seed": seed,
           "effective": effective, "micro": split[0], "accum": len(split),
           "split": list(split), "valid_items": int(valid.sum()), "loss": loss,
           "tensors": tensors}
    if kind == "linear":
        man.update(model="linear:in=%d;classes=%d" % (hidden, classes), kind="linear",
                   shape={"in": hidden, "classes": classes})
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(man, f)


class VerifyTest(unittest.TestCase):
    def run_verify(self, **kw):
        with tempfile.TemporaryDirectory() as d:
            write_dump(d, **kw)
            out = io.StringIO()
            return peer_verify.verify(d, out), out.getvalue()

    def test_right_dump_passes(self):
        rc, text = self.run_verify()
        self.assertEqual(rc, 0, text)
        self.assertEqual(text.count("\nok ") + text.startswith("ok "), 6, text)
        self.assertIn("verify: PASS", text)

    def test_one_tensor_off_fails_and_is_named(self):
        rc, text = self.run_verify(tamper="layers.1.weight")
        self.assertEqual(rc, 1, text)
        bad = [l for l in text.splitlines() if l.startswith("MISMATCH")]
        self.assertEqual(len(bad), 1, text)
        self.assertIn("layers.1.weight", bad[0])

    def test_bf16_dump_is_held_to_bf16s_error_against_the_exact(self):
        # a bf16 gradient is off the exact by bf16's own error (llama-cpu's
        # worst tensor 0.016): that passes, a tensor 5% off does not
        rc, text = self.run_verify(dtype="bf16", tamper="layers.1.weight", tamper_by=0.015)
        self.assertEqual(rc, 0, text)
        rc, text = self.run_verify(dtype="bf16", tamper="layers.1.weight", tamper_by=0.05)
        self.assertEqual(rc, 1, text)
        self.assertIn("MISMATCH layers.1.weight", text)

    def test_mean_of_means_gradient_fails_on_a_ragged_split(self):
        rc, text = self.run_verify(reduction_of_grad="mean-of-means")
        self.assertEqual(rc, 1, text)

    def test_linear_kind_is_checked(self):
        # the linear classifier (harness/models/linear.c): nn.Linear's names
        rc, text = self.run_verify(kind="linear")
        self.assertEqual(rc, 0, text)
        self.assertIn("ok       linear.weight", text)
        self.assertIn("ok       linear.bias", text)
        rc, text = self.run_verify(kind="linear", tamper="linear.weight")
        self.assertEqual(rc, 1, text)
        self.assertIn("MISMATCH linear.weight", text)

    def test_unreadable_dump_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            write_dump(d)
            os.unlink(os.path.join(d, "mask.npy"))
            self.assertEqual(peer_verify.verify(d, io.StringIO()), 2)
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(peer_verify.verify(d, io.StringIO()), 2)
        with tempfile.TemporaryDirectory() as d:  # an accumulator it cannot reproduce
            write_dump(d, grad_dtype="fp8")
            self.assertEqual(peer_verify.verify(d, io.StringIO()), 2)


if __name__ == "__main__":
    unittest.main()

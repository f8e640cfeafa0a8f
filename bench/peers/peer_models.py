"""The models accubench trains, in PyTorch: one table of model kinds.

Each kind mirrors its C module (harness/models/<kind>.c): the shape keys
with their bounds, the presets, the parameter count, the GEMM FLOPs per
optimizer step as the C side counts them, the input it wants, and a
torch.nn.Module whose state_dict names are the ones the window dump
(docs/dump.md) uses. Adding a kind (the GPT family) is one class and one
entry in KINDS."""
import math

import torch
import torch.nn.functional as F


class ModelError(ValueError):
    """A model name that names no preset or a malformed shape."""


class MLP(torch.nn.Module):
    """harness/models/mlp.c: `layers` blocks of Linear + bias + GELU (the
    tanh approximation of kernels/elementwise.h), a final Linear to
    `classes`. layers.0 .. layers.<layers> (the last is the classifier)."""

    def __init__(self, hidden, layers, classes):
        super().__init__()
        dims = [hidden] * (layers + 1) + [classes]
        self.layers = torch.nn.ModuleList(
            torch.nn.Linear(dims[i], dims[i + 1]) for i in range(layers + 1))

    def forward(self, x):
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < last:
                x = F.gelu(x, approximate="tanh")
        return x


class MLPKind:
    name = "mlp"
    # key: (min, max), as DIMS in mlp.c
    dims = {"hidden": (1, 1 << 20), "layers": (1, 64), "classes": (2, 1 << 20)}
    presets = {
        "tiny": {"hidden": 64, "layers": 2, "classes": 16},
        "S": {"hidden": 1024, "layers": 4, "classes": 1024},
        "M": {"hidden": 4096, "layers": 8, "classes": 1024},
        "L": {"hidden": 8192, "layers": 8, "classes": 1024},
        "XL": {"hidden": 16384, "layers": 8, "classes": 1024},
    }

    @staticmethod
    def linears(shape):
        h, n, c = shape["hidden"], shape["layers"], shape["classes"]
        return [(h, h)] * n + [(h, c)]  # (in, out) per Linear

    @classmethod
    def param_count(cls, shape):
        return sum(i * o + o for i, o in cls.linears(shape))

    @classmethod
    def flops_per_step(cls, shape, examples):
        """As mlp_flops_per_step: forward, weight gradient, and the input
        gradient of every layer but the first."""
        flops = 0.0
        for k, (i, o) in enumerate(cls.linears(shape)):
            mac = float(i) * o * examples
            flops += 4 * mac + (2 * mac if k > 0 else 0)
        return flops

    @staticmethod
    def input(shape):
        """What the dataset draws: float features of width `hidden`, one
        loss item (a class label) per example."""
        return {"kind": "features", "width": shape["hidden"], "classes": shape["classes"],
                "loss_items": 1}

    @staticmethod
    def build(shape):
        return MLP(shape["hidden"], shape["layers"], shape["classes"])

    @classmethod
    def init_weights(cls, module, generator):
        """mlp_init_weights' distribution (not its generator): weights
        U(-1/sqrt(in), 1/sqrt(in)), biases 0.1 of that."""
        with torch.no_grad():
            for layer in module.layers:
                bound = 1.0 / math.sqrt(layer.in_features)
                layer.weight.uniform_(-bound, bound, generator=generator)
                layer.bias.uniform_(-0.1 * bound, 0.1 * bound, generator=generator)

    @staticmethod
    def logits_and_labels(module, x, labels):
        """Per loss item: logits [items, classes] and labels [items]."""
        return module(x), labels.reshape(-1)


# Every model kind. The GPT family: a GPTKind beside MLPKind, and its entry.
KINDS = {k.name: k for k in (MLPKind,)}


class ModelSpec:
    def __init__(self, kind, shape, name):
        self.kind, self.shape, self.name = kind, shape, name

    def params(self):
        return self.kind.param_count(self.shape)


def model_names():
    presets = [p for k in KINDS.values() for p in k.presets]
    forms = ["%s:%s" % (k.name, ",".join("%s=N" % d for d in k.dims)) for k in KINDS.values()]
    return ", ".join(presets) + "; or " + "; or ".join(forms)


def parse_model(text):
    """A preset name, or KIND:key=value,... (',' or ';' between items) as
    accubench's registry takes it; the name is written the way the C side
    writes it, so rows of both join on the model column."""
    for kind in KINDS.values():
        if text in kind.presets:
            return ModelSpec(kind, dict(kind.presets[text]), text)
    kname, colon, body = text.partition(":")
    kind = KINDS.get(kname)
    if not colon or kind is None:
        raise ModelError("unknown model '%s' (known: %s)" % (text, model_names()))
    shape = {}
    for item in body.replace(";", ",").split(","):
        key, eq, value = item.partition("=")
        if not item or not eq:
            raise ModelError("model '%s': '%s' is not key=value" % (text, item))
        if key not in kind.dims:
            raise ModelError("model '%s': unknown key '%s'" % (text, key))
        if key in shape:
            raise ModelError("model '%s' gives %s twice" % (text, key))
        lo, hi = kind.dims[key]
        if not value.isdigit() or not lo <= int(value) <= hi:
            raise ModelError("model '%s': %s must be a whole number from %d to %d, got '%s'"
                             % (text, key, lo, hi, value))
        shape[key] = int(value)
    missing = [k for k in kind.dims if k not in shape]
    if missing:
        raise ModelError("model '%s' gives no %s" % (text, missing[0]))
    name = "%s:%s" % (kind.name, ";".join("%s=%d" % (k, shape[k]) for k in kind.dims))
    return ModelSpec(kind, shape, name)

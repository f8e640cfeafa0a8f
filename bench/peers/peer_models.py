"""The models accubench trains, in PyTorch: one table of model kinds.

Each kind mirrors its C module (harness/models/<kind>.c): the shape keys
with their bounds, the presets, the parameter count, the GEMM FLOPs per
optimizer step as the C side counts them, the input it wants, and a
torch.nn.Module whose state_dict names are the ones the window dump
(docs/dump.md) uses (a tied alias, one parameter under two names, is
written once). Adding a kind is one class and one entry in KINDS (the
Llama's class is in peer_llama)."""
import math

import torch
import torch.nn.functional as F

from peer_llama import LlamaKind


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


class Linear(torch.nn.Module):
    """harness/models/linear.c: one Linear from `in` features to `classes`
    logits (softmax regression), under nn.Linear's names linear.*."""

    def __init__(self, features, classes):
        super().__init__()
        self.linear = torch.nn.Linear(features, classes)

    def forward(self, x):
        return self.linear(x)


class LinearKind:
    name = "linear"
    # key: (min, max), as DIMS in linear.c; no presets
    dims = {"in": (1, 1 << 20), "classes": (2, 1 << 20)}
    presets = {}

    @staticmethod
    def check(shape):
        params = (shape["in"] + 1) * shape["classes"]
        if params > 1 << 40:
            return "%.3g parameters; at most 2^40 (%.3g)" % (params, float(1 << 40))
        return None

    @staticmethod
    def param_count(shape):
        return (shape["in"] + 1) * shape["classes"]

    @staticmethod
    def flops_per_step(shape, examples):
        """As linear_flops_per_step: the forward product and the weight
        gradient's (the inputs need no gradient)."""
        return 4.0 * shape["in"] * shape["classes"] * examples

    @staticmethod
    def input(shape):
        return {"kind": "features", "width": shape["in"], "classes": shape["classes"],
                "loss_items": 1}

    @staticmethod
    def build(shape):
        return Linear(shape["in"], shape["classes"])

    @staticmethod
    def init_weights(module, generator):
        """linear_init_weights' distribution, the MLP layers': weights
        U(-1/sqrt(in), 1/sqrt(in)), biases 0.1 of that."""
        layer = module.linear
        bound = 1.0 / math.sqrt(layer.in_features)
        with torch.no_grad():
            layer.weight.uniform_(-bound, bound, generator=generator)
            layer.bias.uniform_(-0.1 * bound, 0.1 * bound, generator=generator)

    @staticmethod
    def logits_and_labels(module, x, labels):
        return module(x), labels.reshape(-1)


class Block(torch.nn.Module):
    """GPT-2's block as nanoGPT writes it: pre-LayerNorm (eps 1e-5),
    causal self-attention (scale 1/sqrt(hd), no dropout), an MLP with the
    tanh GELU, biases everywhere."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = torch.nn.LayerNorm(d, eps=1e-5)
        self.attn = torch.nn.Module()
        self.attn.c_attn = torch.nn.Linear(d, 3 * d)
        self.attn.c_proj = torch.nn.Linear(d, d)
        self.ln_2 = torch.nn.LayerNorm(d, eps=1e-5)
        self.mlp = torch.nn.Module()
        self.mlp.c_fc = torch.nn.Linear(d, 4 * d)
        self.mlp.c_proj = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn.c_proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(torch.nn.Module):
    """harness/models/gpt.c with nanoGPT's state_dict names; lm_head is
    tied to transformer.wte."""

    def __init__(self, d, layers, heads, seq, vocab):
        super().__init__()
        self.transformer = torch.nn.ModuleDict(dict(
            wte=torch.nn.Embedding(vocab, d), wpe=torch.nn.Embedding(seq, d),
            h=torch.nn.ModuleList(Block(d, heads) for _ in range(layers)),
            ln_f=torch.nn.LayerNorm(d, eps=1e-5)))
        self.lm_head = torch.nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.transformer.wte.weight

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


class GPTKind:
    name = "gpt"
    dims = {"d": (1, 1 << 16), "layers": (1, 96), "heads": (1, 1 << 10),
            "seq": (1, 1 << 15), "vocab": (2, 1 << 21)}
    presets = {
        "gpt-tiny": {"d": 64, "layers": 2, "heads": 4, "seq": 32, "vocab": 512},
        "gpt-small": {"d": 768, "layers": 12, "heads": 12, "seq": 1024, "vocab": 50304},
        "gpt-medium": {"d": 1024, "layers": 24, "heads": 16, "seq": 1024, "vocab": 50304},
        "gpt-large": {"d": 1280, "layers": 36, "heads": 20, "seq": 1024, "vocab": 50304},
        "gpt-xl": {"d": 1600, "layers": 48, "heads": 25, "seq": 1024, "vocab": 50304},
    }
    @staticmethod
    def check(shape):
        if shape["d"] % shape["heads"]:
            return "heads=%d does not divide d=%d" % (shape["heads"], shape["d"])
        return None

    @staticmethod
    def param_count(shape):
        d, n = shape["d"], shape["layers"]
        return d * shape["vocab"] + d * shape["seq"] + n * (12 * d * d + 13 * d) + 2 * d

    @staticmethod
    def flops_per_step(shape, examples):
        """As gpt_flops_per_step: 6 FLOPs per weight of a matrix product per
        token over 12 L d^2 + V d, and 12 L d T per token of attention."""
        d, n, t = float(shape["d"]), float(shape["layers"]), float(shape["seq"])
        tokens = examples * t
        return 6 * (12 * n * d * d + shape["vocab"] * d) * tokens + 12 * n * d * t * tokens

    @staticmethod
    def input(shape):
        return {"kind": "tokens", "width": shape["seq"], "vocab": shape["vocab"],
                "classes": shape["vocab"], "loss_items": shape["seq"]}

    @staticmethod
    def build(shape):
        return GPT(shape["d"], shape["layers"], shape["heads"], shape["seq"], shape["vocab"])

    @staticmethod
    def init_weights(module, generator):
        """nanoGPT's: N(0, 0.02), the projections into the residual stream
        0.02/sqrt(2 layers), biases 0, LayerNorms 1 and 0."""
        std = 0.02
        proj = std / math.sqrt(2 * len(module.transformer.h))
        with torch.no_grad():
            for name, p in module.named_parameters():
                if name.endswith("c_proj.weight"):
                    p.normal_(0, proj, generator=generator)
                elif "ln_" in name:
                    p.fill_(1.0 if name.endswith("weight") else 0.0)
                elif name.endswith("bias"):
                    p.zero_()
                else:
                    p.normal_(0, std, generator=generator)

    @staticmethod
    def logits_and_labels(module, x, labels):
        logits = module(x)
        return logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)


# Every model kind: adding one is its class above and its entry here.
KINDS = {k.name: k for k in (MLPKind, LinearKind, GPTKind, LlamaKind)}


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
    why = kind.check(shape) if hasattr(kind, "check") else None
    if why:
        raise ModelError("model '%s': %s" % (text, why))
    name = "%s:%s" % (kind.name, ";".join("%s=%d" % (k, shape[k]) for k in kind.dims))
    return ModelSpec(kind, shape, name)

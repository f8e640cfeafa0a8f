"""harness/models/llama.c in PyTorch: a Llama-style decoder written the way
a nanoGPT-style trainer writes one, with Hugging Face's LlamaForCausalLM
state_dict names (docs/dump.md), so that a window dump loads as it is.

RMSNorm (F.rms_norm, eps 1e-5), grouped-query causal attention through
scaled_dot_product_attention(enable_gqa=True) with rotary embeddings on q
and k in Hugging Face's rotate_half convention (element e of a head turns
with e + hd/2, base 500000), no biases, a SwiGLU MLP down(silu(gate(x)) *
up(x)), a final RMSNorm and an LM head of its own or tied to the
embedding (tied=1)."""
import torch
import torch.nn.functional as F

# llama.h's LLAMA_ROPE_THETA and LLAMA_NORM_EPS: what a dump's manifest
# adds to the shape.
ROPE_THETA = 500000.0
NORM_EPS = 1e-5


class RMSNorm(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight, NORM_EPS)


def rotary_tables(seq, hd):
    """cos and sin [seq, hd] as LlamaRotaryEmbedding computes them in fp32:
    inv_freq(e) = 1 / theta^(2e / hd), the angles repeated over both halves."""
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
    angles = torch.outer(torch.arange(seq, dtype=torch.float32), inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos(), angles.sin()


def rotate(x, cos, sin):
    """x [b, heads, t, hd] turned: x cos + rotate_half(x) sin."""
    half = x.shape[-1] // 2
    turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + turned * sin


class Attention(torch.nn.Module):
    def __init__(self, d, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        kv = kv_heads * self.hd
        self.q_proj = torch.nn.Linear(d, d, bias=False)
        self.k_proj = torch.nn.Linear(d, kv, bias=False)
        self.v_proj = torch.nn.Linear(d, kv, bias=False)
        self.o_proj = torch.nn.Linear(d, d, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        cos, sin = cos.to(q.dtype), sin.to(q.dtype)  # as Hugging Face's, under autocast
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           enable_gqa=self.kv_heads != self.heads)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, d))


class MLP(torch.nn.Module):
    def __init__(self, d, ffn):
        super().__init__()
        self.gate_proj = torch.nn.Linear(d, ffn, bias=False)
        self.up_proj = torch.nn.Linear(d, ffn, bias=False)
        self.down_proj = torch.nn.Linear(ffn, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(torch.nn.Module):
    def __init__(self, d, heads, kv_heads, ffn):
        super().__init__()
        self.input_layernorm = RMSNorm(d)
        self.self_attn = Attention(d, heads, kv_heads)
        self.post_attention_layernorm = RMSNorm(d)
        self.mlp = MLP(d, ffn)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(torch.nn.Module):
    def __init__(self, d, layers, heads, kv_heads, ffn, seq, vocab, tied):
        super().__init__()
        self.model = torch.nn.Module()
        self.model.embed_tokens = torch.nn.Embedding(vocab, d)
        self.model.layers = torch.nn.ModuleList(Layer(d, heads, kv_heads, ffn)
                                                for _ in range(layers))
        self.model.norm = RMSNorm(d)
        self.lm_head = torch.nn.Linear(d, vocab, bias=False)
        if tied:
            self.lm_head.weight = self.model.embed_tokens.weight
        cos, sin = rotary_tables(seq, d // heads)
        # not in the state_dict: the dump has no such tensor
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        cos, sin = self.rope_cos[:t], self.rope_sin[:t]
        x = self.model.embed_tokens(idx)
        for layer in self.model.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.model.norm(x))


class LlamaKind:
    name = "llama"
    # as DIMS in llama.c
    dims = {"d": (1, 1 << 16), "layers": (1, 80), "heads": (1, 1 << 10),
            "kv_heads": (1, 1 << 10), "ffn": (1, 1 << 20), "seq": (1, 1 << 15),
            "vocab": (2, 1 << 21), "tied": (0, 1)}
    presets = {
        "llama-tiny": {"d": 64, "layers": 2, "heads": 4, "kv_heads": 2, "ffn": 176,
                       "seq": 32, "vocab": 512, "tied": 0},
        "llama-cpu": {"d": 128, "layers": 4, "heads": 4, "kv_heads": 2, "ffn": 352,
                      "seq": 64, "vocab": 2048, "tied": 0},
        "llama3.2-1b": {"d": 2048, "layers": 16, "heads": 32, "kv_heads": 8, "ffn": 8192,
                        "seq": 2048, "vocab": 128256, "tied": 1},
        "llama3-8b": {"d": 4096, "layers": 32, "heads": 32, "kv_heads": 8, "ffn": 14336,
                      "seq": 2048, "vocab": 128256, "tied": 0},
    }
    # what the arithmetic fixes for every shape; a dump's manifest carries them
    constants = {"rope_theta": ROPE_THETA, "norm_eps": NORM_EPS}

    @staticmethod
    def check(shape):
        """llama_check's reasons, word for word."""
        d, heads, kv = shape["d"], shape["heads"], shape["kv_heads"]
        if d % heads:
            return "heads=%d does not divide d=%d" % (heads, d)
        if heads % kv:
            return ("kv_heads=%d does not divide heads=%d (each key/value head serves a "
                    "whole group of query heads)" % (kv, heads))
        if (d // heads) % 2:
            return ("the head dimension d/heads=%d is odd; rotary embeddings turn pairs of "
                    "its elements" % (d // heads))
        return None

    @staticmethod
    def param_count(shape):
        d, f, n = shape["d"], shape["ffn"], shape["layers"]
        kv = d // shape["heads"] * shape["kv_heads"]
        vd = shape["vocab"] * d
        return vd * (1 if shape["tied"] else 2) + n * (2 * d + 2 * d * d + 2 * kv * d +
                                                       3 * f * d) + d

    @staticmethod
    def flops_per_step(shape, examples):
        """As llama_flops_per_step: 6 per weight of a product per token over
        L (2 d^2 + 2 d kv + 3 d ffn) + V d, and the GPT's 12 L d T of
        attention per token."""
        d, n, t = float(shape["d"]), float(shape["layers"]), float(shape["seq"])
        kv = d / shape["heads"] * shape["kv_heads"]
        tokens = examples * t
        weights = n * (2 * d * d + 2 * d * kv + 3 * d * shape["ffn"]) + shape["vocab"] * d
        return 6 * weights * tokens + 12 * n * d * t * tokens

    @staticmethod
    def input(shape):
        return {"kind": "tokens", "width": shape["seq"], "vocab": shape["vocab"],
                "classes": shape["vocab"], "loss_items": shape["seq"]}

    @staticmethod
    def build(shape):
        return Llama(shape["d"], shape["layers"], shape["heads"], shape["kv_heads"],
                     shape["ffn"], shape["seq"], shape["vocab"], shape["tied"])

    @staticmethod
    def init_weights(module, generator):
        """llama_init_weights' distribution: every matrix N(0, 0.02), the
        norms' gains 1."""
        with torch.no_grad():
            for name, p in module.named_parameters():
                if name.endswith("norm.weight"):
                    p.fill_(1.0)
                else:
                    p.normal_(0, 0.02, generator=generator)

    @staticmethod
    def logits_and_labels(module, x, labels):
        logits = module(x)
        return logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)


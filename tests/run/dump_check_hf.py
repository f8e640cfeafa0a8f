"""The Llama's reference for dump_check.py: Hugging Face's own
LlamaForCausalLM, built from a LlamaConfig filled from the manifest (no
download: the model is made, not fetched), the dump's parameters loaded
with load_state_dict as they are (Hugging Face's names and layouts), the
window's micro-batches run forward and backward in float64, and the
accumulated gradient compared tensor by tensor with the dump's.

Needs PyTorch and transformers; where either is missing, `missing()` says
which, and dump_check.py reports that the dump cannot be checked here."""

def missing():
    """None where PyTorch and transformers import; else why not."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        return "the Llama is checked against Hugging Face's LlamaForCausalLM: %s" % e
    return None


def build(shape):
    """LlamaForCausalLM of the manifest's shape: the rotary base and the
    norms' epsilon from the manifest, no biases, eager attention (the
    reference, not a fused kernel), in float64."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(
        vocab_size=shape["vocab"], hidden_size=shape["d"], intermediate_size=shape["ffn"],
        num_hidden_layers=shape["layers"], num_attention_heads=shape["heads"],
        num_key_value_heads=shape["kv_heads"], max_position_embeddings=shape["seq"],
        rms_norm_eps=shape["norm_eps"], tie_word_embeddings=bool(shape["tied"]),
        rope_parameters={"rope_type": "default", "rope_theta": shape["rope_theta"]},
        attention_bias=False, mlp_bias=False, attention_dropout=0.0, use_cache=False,
        attn_implementation="eager")
    torch.manual_seed(0)  # its own init is overwritten by the dump's
    return LlamaForCausalLM(config).to(torch.float64)


def check_llama(np, m, params, grads, x, labels, mask, valid, tol, fail):
    """The window in Hugging Face's model against the dump: per tensor
    relative error under tol (dump_check.py's, for the dump's dtype).
    Returns (the window's loss sum over the valid items, what was
    checked)."""
    import torch
    import torch.nn.functional as F
    model = build(m["shape"])
    # strict: every name of the model but a tied lm_head, which is the
    # embedding itself (written once)
    got = model.load_state_dict({n: torch.from_numpy(a) for n, a in params.items()},
                                strict=False)
    tied = ["lm_head.weight"] if m["shape"]["tied"] else []
    if list(got.missing_keys) != tied or got.unexpected_keys:
        fail(f"the dump's names are not LlamaForCausalLM's: missing {got.missing_keys[:3]}, "
             f"unexpected {got.unexpected_keys[:3]}")
        return float("nan"), "no gradient checked"
    ids = torch.from_numpy(x.astype(np.int64))
    lab = torch.from_numpy(labels.astype(np.int64))
    msk = torch.from_numpy(mask.astype(np.float64))
    loss_sum, first = 0.0, 0
    for count in m["split"]:
        rows = slice(first, first + count)
        logits = model(input_ids=ids[rows]).logits
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), lab[rows].reshape(-1),
                             reduction="none")
        part = (ce * msk[rows].reshape(-1)).sum()
        (part / valid).backward()
        loss_sum += float(part.detach())
        first += count
    worst, checked = 0.0, 0
    for name, p in model.named_parameters():
        if name not in grads:
            fail(f"grad {name}: not in the dump")
            continue
        want = p.grad.detach().numpy()
        err = np.linalg.norm(grads[name] - want) / \
            max(np.linalg.norm(want), 1e-30)
        worst, checked = max(worst, err), checked + 1
        if not err < tol:
            fail(f"grad {name}: relative error {err:.3g} against Hugging Face's (over {tol:g})")
    return loss_sum, (f"{checked} gradients against Hugging Face's LlamaForCausalLM "
                      f"(transformers), worst relative error {worst:.2g}")

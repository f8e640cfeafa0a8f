"""The Hugging Face references for dump_check.py: the Llama against
LlamaForCausalLM and the GPT against GPT2LMHeadModel, each built from a
config filled from the manifest (no download: the model is made, not
fetched), the dump's parameters loaded with load_state_dict under their
own names (the GPT's four Conv1D weights transposed: Hugging Face's GPT-2
stores them [in, out], nanoGPT's names [out, in]), the window's
micro-batches run forward and backward in float64, and the accumulated
gradient compared tensor by tensor with the dump's.

Needs PyTorch and transformers; where either is missing, `missing()` says
which: the Llama then cannot be checked here, the GPT falls back to
dump_check.py's central differences."""

def missing():
    """None where PyTorch and transformers import; else why not."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        return "the reference is Hugging Face's model (PyTorch and transformers): %s" % e
    return None


def build_llama(shape):
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


def build_gpt(shape):
    """GPT2LMHeadModel of the manifest's shape: the MLP 4 d wide, GELU's
    tanh form ("gelu_new", as gpt.c's), LayerNorm's epsilon 1e-5, no
    dropout, the head tied to the embedding, eager attention, float64."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    config = GPT2Config(
        vocab_size=shape["vocab"], n_positions=shape["seq"], n_embd=shape["d"],
        n_layer=shape["layers"], n_head=shape["heads"], n_inner=4 * shape["d"],
        activation_function="gelu_new", layer_norm_epsilon=1e-5, resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True, use_cache=False,
        bos_token_id=None, eos_token_id=None,
        attn_implementation="eager")
    torch.manual_seed(0)  # its own init is overwritten by the dump's
    return GPT2LMHeadModel(config).to(torch.float64)


def transposed_names(model):
    """The weights Hugging Face holds [in, out] (GPT-2's Conv1D), where the
    dump, in nanoGPT's layout, holds [out, in]."""
    from transformers.pytorch_utils import Conv1D
    return {f"{name}.weight" for name, mod in model.named_modules() if isinstance(mod, Conv1D)}


def check_window(np, model, name, m, params, grads, x, labels, mask, valid, tol, fail):
    """The window in Hugging Face's model against the dump: per tensor
    relative error under tol (dump_check.py's, for the dump's dtype).
    Returns (the window's loss sum over the valid items, what was
    checked)."""
    import torch
    import torch.nn.functional as F
    flip = transposed_names(model)

    def layout(n, a):  # the dump's layout to the model's and back
        return a.T if n in flip else a
    # every name of the model but a tied lm_head, which is the embedding
    # itself (written once)
    got = model.load_state_dict(
        {n: torch.from_numpy(np.ascontiguousarray(layout(n, a))) for n, a in params.items()},
        strict=False)
    tied = ["lm_head.weight"] if model.config.tie_word_embeddings else []
    if list(got.missing_keys) != tied or got.unexpected_keys:
        fail(f"the dump's names are not {name}'s: missing {got.missing_keys[:3]}, "
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
    for n, p in model.named_parameters():
        if n not in grads:
            fail(f"grad {n}: not in the dump")
            continue
        want = layout(n, p.grad.detach().numpy())
        err = np.linalg.norm(grads[n] - want) / max(np.linalg.norm(want), 1e-30)
        worst, checked = max(worst, err), checked + 1
        if not err < tol:
            fail(f"grad {n}: relative error {err:.3g} against Hugging Face's (over {tol:g})")
    return loss_sum, (f"{checked} gradients against Hugging Face's {name} "
                      f"(transformers), worst relative error {worst:.2g}")


def check_llama(np, m, params, grads, x, labels, mask, valid, tol, fail):
    return check_window(np, build_llama(m["shape"]), "LlamaForCausalLM", m, params, grads, x,
                        labels, mask, valid, tol, fail)


def check_gpt(np, m, params, grads, x, labels, mask, valid, tol, fail):
    return check_window(np, build_gpt(m["shape"]), "GPT2LMHeadModel", m, params, grads, x,
                        labels, mask, valid, tol, fail)

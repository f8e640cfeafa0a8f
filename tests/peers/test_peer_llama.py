"""The peer's Llama (bench/peers/peer_llama.py): the spec strings and
presets accubench takes, with llama.c's parameter counts and reasons; the
module against Hugging Face's LlamaForCausalLM loaded with its own
state_dict (logits and every gradient, float64; skipped with a message
where transformers does not import); and one bf16 window (torch.autocast,
fp32 master weights) through the peer's step runner, its accumulated
gradient the full batch's. Run by tests/e2e/e2e_peer_llama.sh where torch
imports."""
import os
import sys
import unittest

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "peers"))

import peer_data  # noqa: E402
import peer_models  # noqa: E402
import peer_step  # noqa: E402

# tests/models/test_llama.c's figures (Hugging Face's counts for Llama 3)
# and llama-tiny's and llama-cpu's from accubench's CSV.
C_PARAMS = {"llama-tiny": 158016, "llama-cpu": 1262720, "llama3.2-1b": 1235814400,
            "llama3-8b": 8030261248}
GQA_TIED = "llama:d=16,layers=2,heads=4,kv_heads=1,ffn=24,seq=8,vocab=64,tied=1"
GQA = "llama:d=32,layers=2,heads=4,kv_heads=2,ffn=40,seq=12,vocab=50,tied=0"


def hf_model(shape):
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(
        vocab_size=shape["vocab"], hidden_size=shape["d"], intermediate_size=shape["ffn"],
        num_hidden_layers=shape["layers"], num_attention_heads=shape["heads"],
        num_key_value_heads=shape["kv_heads"], max_position_embeddings=shape["seq"],
        rms_norm_eps=1e-5, tie_word_embeddings=bool(shape["tied"]),
        rope_parameters={"rope_type": "default", "rope_theta": 500000.0},
        attn_implementation="eager", use_cache=False)
    return LlamaForCausalLM(config).double()


class Names(unittest.TestCase):
    def test_presets_count_as_accubench(self):
        for name, want in C_PARAMS.items():
            spec = peer_models.parse_model(name)
            self.assertEqual(spec.params(), want, name)
        for name in ("llama-tiny", "llama-cpu", GQA_TIED, GQA):
            spec = peer_models.parse_model(name)
            module = spec.kind.build(spec.shape)
            self.assertEqual(sum(p.numel() for p in module.parameters()), spec.params(), name)

    def test_spec_string_is_written_as_the_c_side_writes_it(self):
        spec = peer_models.parse_model(GQA_TIED.replace(",", ";"))
        self.assertEqual(spec.name, GQA_TIED.replace(",", ";"))
        self.assertEqual(spec.shape["kv_heads"], 1)

    def test_bad_shapes_say_why_as_llama_c(self):
        for text, why in (
                (GQA.replace("heads=4,", "heads=3,", 1), "heads=3 does not divide d=32"),
                (GQA.replace("kv_heads=2", "kv_heads=3"), "kv_heads=3 does not divide heads=4"),
                (GQA.replace("d=32", "d=12").replace("heads=4,", "heads=4,", 1),
                 "the head dimension d/heads=3 is odd"),
                (GQA.replace("tied=0", "tied=2"), "tied must be a whole number from 0 to 1"),
                (GQA.replace(",tied=0", ""), "gives no tied")):
            with self.assertRaises(peer_models.ModelError) as e:
                peer_models.parse_model(text)
            self.assertIn(why, str(e.exception))


class AgainstHuggingFace(unittest.TestCase):
    def setUp(self):
        try:
            import transformers  # noqa: F401
        except ImportError as e:
            self.skipTest("transformers is not importable (%s)" % e)

    def check(self, text):
        spec = peer_models.parse_model(text)
        peer = spec.kind.build(spec.shape).double()
        spec.kind.init_weights(peer, torch.Generator().manual_seed(3))
        with torch.no_grad():  # the norms' gains off 1, so that they are tested
            for name, p in peer.named_parameters():
                if name.endswith("norm.weight"):
                    p.add_(torch.rand(p.shape, generator=torch.Generator().manual_seed(4),
                                      dtype=p.dtype) * 0.5)
        hf = hf_model(spec.shape)
        got = hf.load_state_dict(peer.state_dict(), strict=False)
        self.assertEqual(got.unexpected_keys, [])
        self.assertEqual(got.missing_keys, [])  # a tied lm_head: the alias, both sides
        self.assertEqual(hf.lm_head.weight is hf.model.embed_tokens.weight,
                         bool(spec.shape["tied"]))
        g = torch.Generator().manual_seed(5)
        ids = torch.randint(0, spec.shape["vocab"], (3, spec.shape["seq"]), generator=g)
        labels = torch.randint(0, spec.shape["vocab"], (3 * spec.shape["seq"],), generator=g)
        outs = []
        for model, logits_of in ((peer, lambda m: m(ids)),
                                 (hf, lambda m: m(input_ids=ids).logits)):
            logits = logits_of(model)
            F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels).backward()
            outs.append((logits.detach(), {n: p.grad for n, p in model.named_parameters()}))
        (pl, pg), (hl, hg) = outs
        # Hugging Face's eager attention takes its softmax in fp32, even here
        self.assertLess(float((pl - hl).abs().max()), 1e-6)
        self.assertEqual(sorted(pg), sorted(hg))
        for name in pg:
            err = float(torch.linalg.vector_norm(pg[name] - hg[name]) /
                        torch.linalg.vector_norm(hg[name]))
            self.assertLess(err, 1e-5, name)

    def test_gqa_untied(self):
        self.check(GQA)

    def test_gqa_tied_one_kv_head(self):
        self.check(GQA_TIED)


class Bf16(unittest.TestCase):
    def test_autocast_window_keeps_fp32_weights_and_is_the_full_batch(self):
        spec = peer_models.parse_model(GQA_TIED)
        cpu = torch.device("cpu")
        inp = spec.kind.input(spec.shape)
        bufs = peer_data.make_buffers(inp, 6, 1, 1, cpu)
        bufs[0].set_split(6, 4, "sum", inp["loss_items"])
        run = peer_step.StepRunner(spec, peer_step.MODE_BY_NAME["eager"], "bf16", cpu, bufs,
                                   6, 4, 1, False)
        err, loss, _ = run.check()
        self.assertLess(err, 1e-2)
        self.assertTrue(4.0 < loss < 4.5, loss)  # about log(64) at the initial weights
        run.step()
        self.assertTrue(all(p.dtype == torch.float32 for p in run.params))
        self.assertTrue(all(p.grad is None or p.grad.dtype == torch.float32
                            for p in run.params))


if __name__ == "__main__":
    unittest.main()

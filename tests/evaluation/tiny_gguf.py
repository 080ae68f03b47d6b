"""A tiny random llama model written as a GGUF file, as llama.cpp lays one out.

    build_tiny_gguf(path, seed=0, quantization="Q8_0") -> Path

The tokenizer is the byte-level BPE of `tiny_models` (trained on its sentences) stored
under GGUF's tokenizer keys ("gpt2" model, tokens, token types, merges; BOS "<s>" that
the tokenizer does not add itself, like SmolLM2's GGUF). The matrices are quantised
(Q8_0 by default), the norms kept in float32, so loading the file de-quantises weights
the way the real SmolLM2 GGUF is loaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.evaluation.tiny_models import _train_bpe

SPECIAL = ["<|endoftext|>", "<s>", "<pad>"]


def build_tiny_gguf(
    path: Path, *, seed: int = 0, quantization: str = "Q8_0", hidden: int = 32, layers: int = 2
) -> Path:
    import gguf

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = _train_bpe(SPECIAL)
    vocab = raw.get_vocab()
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    merges = [" ".join(pair) for pair in json.loads(raw.to_str())["model"]["merges"]]
    n_vocab, ffn, heads, kv_heads = len(tokens), 2 * hidden, 4, 2
    head_dim = hidden // heads

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny-llama")
    writer.add_context_length(128)
    writer.add_embedding_length(hidden)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(n_vocab)
    writer.add_rope_dimension_count(head_dim)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types([3 if t in SPECIAL else 1 for t in tokens])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(vocab["<s>"])
    writer.add_eos_token_id(vocab["<|endoftext|>"])
    writer.add_pad_token_id(vocab["<pad>"])
    writer.add_add_bos_token(False)

    rng = np.random.default_rng(seed)
    qtype = getattr(gguf.GGMLQuantizationType, quantization)

    def matrix(name: str, rows: int, cols: int) -> None:
        data = rng.normal(0.0, 0.3, size=(rows, cols)).astype(np.float32)
        if qtype == gguf.GGMLQuantizationType.F32:
            writer.add_tensor(name, data)
        else:
            writer.add_tensor(name, gguf.quants.quantize(data, qtype), raw_dtype=qtype)

    def norm(name: str) -> None:
        writer.add_tensor(name, (1.0 + rng.normal(0.0, 0.1, size=hidden)).astype(np.float32))

    matrix("token_embd.weight", n_vocab, hidden)
    for i in range(layers):
        norm(f"blk.{i}.attn_norm.weight")
        norm(f"blk.{i}.ffn_norm.weight")
        matrix(f"blk.{i}.attn_q.weight", hidden, hidden)
        matrix(f"blk.{i}.attn_k.weight", kv_heads * head_dim, hidden)
        matrix(f"blk.{i}.attn_v.weight", kv_heads * head_dim, hidden)
        matrix(f"blk.{i}.attn_output.weight", hidden, hidden)
        matrix(f"blk.{i}.ffn_gate.weight", ffn, hidden)
        matrix(f"blk.{i}.ffn_up.weight", ffn, hidden)
        matrix(f"blk.{i}.ffn_down.weight", hidden, ffn)
    norm("output_norm.weight")
    matrix("output.weight", n_vocab, hidden)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path

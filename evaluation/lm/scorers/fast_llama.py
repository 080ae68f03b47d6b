"""A lean forward pass of Llama-type decoders for the packed prefix-tree rows of causal.py.

The same computation as transformers' `LlamaModel` (embedding, then per layer: RMS norm,
query/key/value projections, rotary positions, attention, output projection, residual;
RMS norm, SiLU-gated MLP, residual; a final RMS norm), on the model's own weights, with
fewer and larger operations: the query, key and value projections are one matrix product
and so are the gate and up projections (their weights concatenated once per model and
kept beside it, `FUSED_ATTRIBUTE`; the layers' weights become views of them), the norms are `torch.rms_norm`, the residual adds are
folded into the matrix products (`addmm`), the SiLU and the gate product work in place,
rotary positions are applied to the queries and keys together, and the attention mask is
a boolean matrix, given to SDPA as a batch of one so that it runs its CPU flash kernel
(a 3D call with grouped keys takes its math path). The numbers are those of
transformers' forward to float32 rounding
(tests/evaluation/test_prefix_tree.py and the lm-eval parity tests check the scores).

Used only where `supports(base)` holds: a `LlamaModel` (SmolLM2 is one) with SiLU, no
biases and plain rotary positions; every other model runs transformers' own forward.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

#: Attribute of the base model holding the concatenated weights (built on first use).
FUSED_ATTRIBUTE = "_winnow_fused_layers"


def supports(base) -> bool:
    config = getattr(base, "config", None)
    if type(base).__name__ != "LlamaModel" or config is None:
        return False
    rope = getattr(config, "rope_scaling", None) or {}
    rope_type = rope.get("rope_type", rope.get("type", "default")) if isinstance(rope, dict) else "default"
    return (
        getattr(config, "hidden_act", None) == "silu"
        and not getattr(config, "attention_bias", False)
        and not getattr(config, "mlp_bias", False)
        and getattr(config, "pretraining_tp", 1) == 1
        and rope_type == "default"
        and hasattr(base, "rotary_emb")
    )


def _fused(base) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per layer: (query|key|value weights, gate|up weights), concatenated once. The
    layers' own weights then become views of the concatenation, so no memory is added
    and transformers' forward reads the very same numbers."""
    fused = getattr(base, FUSED_ATTRIBUTE, None)
    if fused is None:
        fused = []
        with torch.no_grad():
            for layer in base.layers:
                attn, mlp = layer.self_attn, layer.mlp
                parts = (attn.q_proj, attn.k_proj, attn.v_proj)
                qkv = torch.cat([m.weight for m in parts])
                _rebind(parts, qkv)
                gate_up = torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight])
                _rebind((mlp.gate_proj, mlp.up_proj), gate_up)
                fused.append((qkv, gate_up))
        object.__setattr__(base, FUSED_ATTRIBUTE, fused)
    return fused


def _rebind(modules, whole: torch.Tensor) -> None:
    """Make each module's weight the matching block of rows of ``whole``."""
    start = 0
    for module in modules:
        rows = module.weight.shape[0]
        module.weight = torch.nn.Parameter(whole[start : start + rows], requires_grad=False)
        start += rows


def hidden_states(base, tokens: torch.Tensor, positions: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Last hidden states [n, hidden] of one packed row: ``tokens`` and ``positions`` [n],
    ``allowed`` [n, n] booleans (True where a token may attend)."""
    config = base.config
    n_heads = config.num_attention_heads
    n_kv = config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // n_heads
    q_size, kv_size = n_heads * head_dim, n_kv * head_dim
    n = tokens.shape[0]

    x = base.embed_tokens(tokens)  # [n, H]
    cos, sin = base.rotary_emb(x[None], positions[None])  # [1, n, head_dim]
    cos, sin = cos[0][:, None, :], sin[0][:, None, :]  # [n, 1, head_dim]
    half = head_dim // 2
    mask = allowed[None, None]  # [1, 1, n, n], broadcast over heads
    for layer, (w_qkv, w_gate_up) in zip(base.layers, _fused(base), strict=True):
        attn, mlp = layer.self_attn, layer.mlp
        norm = layer.input_layernorm
        h = F.rms_norm(x, (x.shape[-1],), norm.weight, norm.variance_epsilon)
        qkv = F.linear(h, w_qkv)  # [n, q + 2 kv]
        qk = qkv[:, : q_size + kv_size].view(n, n_heads + n_kv, head_dim)
        rotated = torch.cat([-qk[..., half:], qk[..., :half]], dim=-1)
        qk = qk * cos + rotated * sin
        q = qk[:, :n_heads].transpose(0, 1)  # [heads, n, d]
        k = qk[:, n_heads:].transpose(0, 1)
        v = qkv[:, q_size + kv_size :].view(n, n_kv, head_dim).transpose(0, 1)
        # 4D (a batch of one): SDPA then takes its CPU flash kernel; a 3D call with
        # grouped keys falls back to its math path (docs/scoring.md, "Profile")
        out = F.scaled_dot_product_attention(
            q[None], k[None], v[None], attn_mask=mask, scale=attn.scaling, enable_gqa=n_kv != n_heads
        )[0]  # [heads, n, d]
        out = out.transpose(0, 1).reshape(n, q_size)
        x = torch.addmm(x, out, attn.o_proj.weight.t())
        norm = layer.post_attention_layernorm
        h = F.rms_norm(x, (x.shape[-1],), norm.weight, norm.variance_epsilon)
        gate_up = F.linear(h, w_gate_up)
        inter = gate_up.shape[-1] // 2
        gate = F.silu(gate_up[:, :inter], inplace=True)
        gate.mul_(gate_up[:, inter:])
        x = torch.addmm(x, gate, mlp.down_proj.weight.t())
    norm = base.norm
    return F.rms_norm(x, (x.shape[-1],), norm.weight, norm.variance_epsilon)

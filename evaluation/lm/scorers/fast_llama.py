"""A lean forward pass of Llama-type decoders for the packed prefix-tree rows of causal.py.

The same computation as transformers' `LlamaModel` (embedding, then per layer: RMS norm,
query/key/value projections, rotary positions, attention, output projection, residual;
RMS norm, SiLU-gated MLP, residual; a final RMS norm), on the model's own weights, with
fewer and larger operations: the query, key and value projections are one matrix product
and so are the gate and up projections (their weights concatenated once per model and
kept beside it, `FUSED_ATTRIBUTE`; the layers' weights become views of them), an RMS norm
is three passes over its input (`_rms_norm`), the residual adds are folded into the
matrix products, in place (`addmm_`: the residual stream is this function's own), the
SiLU and the gate product work in place, rotary positions are applied to the queries and
keys together in one product and two fused multiply-adds, written into one buffer that
already holds the attention pieces' padding rows, the normed states and the projections
go to buffers kept for the call (not new tensors, which at these sizes are fresh pages
from the system each time), and attention runs in pieces of
`PIECE_ROWS` queries, each over its own keys (`attention_pieces`), as one 4D call to
SDPA, which then runs its CPU flash kernel (a 3D call with grouped keys takes its math
path). Where the native kernels are built (`evaluation.lm.kernels`), the RMS norms, the
rotary positions and the SiLU-gated product are one C++ pass each instead, and the
attention is `tree_attention`: each query over its own path only (about 15 keys a query
on WSC273 where the pieces hold 60 or more), its numbers computed the way SDPA's flash
kernel computes them, with no gathered keys (float32, the head sizes of
`TREE_HEAD_SIZES`). The rotary cos and sin are taken from a table of the row's distinct
positions (`_rotary_rows`). The numbers are those of transformers' forward to float32 rounding
(tests/evaluation/test_prefix_tree.py and the lm-eval parity tests check the scores).

Used only where `supports(base)` holds: a `LlamaModel` (SmolLM2 is one) with SiLU, no
biases and plain rotary positions; every other model runs transformers' own forward.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F

from evaluation.lm import kernels
from evaluation.lm.scorers.prepacked import Packed, prepacked_weights, product

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


class _Layer(NamedTuple):
    """One decoder layer's weights as the loop uses them: the concatenated projections and
    the output and down projections transposed (views), and the two RMS norms."""

    qkv_t: torch.Tensor
    gate_up_t: torch.Tensor
    o_t: torch.Tensor
    down_t: torch.Tensor
    input_norm: tuple[torch.Tensor, torch.Tensor, float]  # (weight, epsilon, epsilon): `_norm`
    post_attention_norm: tuple[torch.Tensor, torch.Tensor, float]
    scaling: float
    sources: tuple[torch.Tensor, ...]  # the layer's parameters these were made from: `_sources`


_SOURCES = (
    ("self_attn", "q_proj"),
    ("self_attn", "k_proj"),
    ("self_attn", "v_proj"),
    ("self_attn", "o_proj"),
    ("mlp", "gate_proj"),
    ("mlp", "up_proj"),
    ("mlp", "down_proj"),
    ("input_layernorm",),
    ("post_attention_layernorm",),
)


def _sources(layer) -> tuple[torch.Tensor, ...]:
    """The weight parameters of a decoder layer that `_Layer` holds views of, read from
    the modules' own tables: `_current` checks 30 layers in about 0.2 ms this way, 0.9 ms
    through the modules' attribute lookups."""
    out = []
    for path in _SOURCES:
        module = layer
        for name in path:
            module = module._modules[name]
        out.append(module._parameters["weight"])
    return tuple(out)


def _current(base, fused: list[_Layer]) -> bool:
    """Whether ``fused`` still views the model's parameters: a parameter replaced by
    another object (``load_state_dict(..., assign=True)``, a weight set by hand) makes
    them stale; values copied into the parameters in place are seen through the views."""
    layers = base.layers
    return len(layers) == len(fused) and all(
        all(a is b for a, b in zip(_sources(layer), entry.sources, strict=True))
        for layer, entry in zip(layers, fused, strict=True)
    )


def _fused(base) -> list[_Layer]:
    """Per layer: (query|key|value weights, gate|up weights) concatenated once, and the
    views the loop reads. The layers' own weights then become views of the
    concatenations, so no memory is added and transformers' forward reads the very same
    numbers. Made once per model (a module attribute lookup or a transposed view costs
    about as much as a small operation, and the loop would make 9 a layer), and again
    if a parameter has been replaced since (`_current`)."""
    fused = getattr(base, FUSED_ATTRIBUTE, None)
    if fused is None or not _current(base, fused):
        fused = []
        with torch.no_grad():
            for layer in base.layers:
                attn, mlp = layer.self_attn, layer.mlp
                parts = (attn.q_proj, attn.k_proj, attn.v_proj)
                qkv = torch.cat([m.weight for m in parts])
                _rebind(parts, qkv)
                gate_up = torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight])
                _rebind((mlp.gate_proj, mlp.up_proj), gate_up)
                fused.append(
                    _Layer(
                        qkv.t(),
                        gate_up.t(),
                        attn.o_proj.weight.t(),
                        mlp.down_proj.weight.t(),
                        _norm(layer.input_layernorm),
                        _norm(layer.post_attention_layernorm),
                        attn.scaling,
                        _sources(layer),
                    )
                )
        object.__setattr__(base, FUSED_ATTRIBUTE, fused)
    return fused


def _rebind(modules, whole: torch.Tensor) -> None:
    """Make each module's weight the matching block of rows of ``whole``."""
    start = 0
    for module in modules:
        rows = module.weight.shape[0]
        module.weight = torch.nn.Parameter(whole[start : start + rows], requires_grad=False)
        start += rows


def _prepacked_layers(base, fused: list[_Layer], native) -> list[tuple[Packed, ...]] | None:
    """Each layer's (query|key|value, output, gate|up, down) weights packed for the product
    chosen (prepacked.py), kept beside the model; None where they cannot be."""
    weights = prepacked_weights(
        base,
        "layers",
        [p for layer in fused for p in layer.sources],
        lambda: [w.t() for layer in fused for w in (layer.qkv_t, layer.o_t, layer.gate_up_t, layer.down_t)],
        native,
    )
    return None if weights is None else [tuple(weights[4 * i : 4 * i + 4]) for i in range(len(fused))]


_UNPACKED = (None, None, None, None)  # a layer's entry where nothing is packed: torch's products


#: Queries per attention piece (`attention_pieces`).
PIECE_ROWS = 32
#: The head sizes the native tree attention takes (kernels.cpp `tree_attention`).
TREE_HEAD_SIZES = (16, 32, 64, 128)


def attention_pieces(end: torch.Tensor, rows: int) -> tuple[int, torch.Tensor, torch.Tensor]:
    """Cut a packed row's attention into pieces of at most ``rows`` consecutive queries.

    ``end[i]`` is the index after node i's last descendant in the row (depth-first order,
    `prefix_tree.ancestor_intervals`): node j is visible to node i exactly when
    ``j <= i < end[j]``. A node's ancestors before a piece's first node s are ancestors of
    s too (j < s <= i < end[j]), so a piece's keys are s's ancestors and the piece itself:
    each piece attends over its own few keys instead of all n, and dense attention work
    falls from n^2 to about n x (rows + depth).

    Returns (piece length L, key index [P, K], mask [P, 1, L, K]): piece p holds the
    queries ``p * L ... p * L + L - 1`` (the last piece's rows past n are padding, given
    key 0 so that their softmax is defined, and dropped); key slots past a piece's keys
    are masked."""
    n = int(end.shape[0])
    count = -(-n // max(1, rows))
    length = -(-n // count)
    index = torch.arange(n)
    keys: list[torch.Tensor] = []
    for p in range(count):
        s = p * length
        ancestors = index[:s][end[:s] > s]
        keys.append(torch.cat([ancestors, index[s : min(n, s + length)]]))
    width = max(len(k) for k in keys)
    key_index = torch.zeros((count, width), dtype=torch.long)
    key_valid = torch.zeros((count, width), dtype=torch.bool)
    for p, k in enumerate(keys):
        key_index[p, : len(k)] = k
        key_valid[p, : len(k)] = True
    query = (torch.arange(count) * length)[:, None] + torch.arange(length)[None, :]  # [P, L]
    kk = key_index[:, None, :]
    qq = query[:, :, None]
    mask = (kk <= qq) & (qq < end[key_index][:, None, :]) & key_valid[:, None, :]
    mask[:, :, 0] |= query >= n
    return length, key_index, mask[:, None]


def additive(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A boolean attention mask as the additive one SDPA would make of it at every call
    (0 where allowed, -inf elsewhere), made once for all the layers."""
    return torch.zeros(mask.shape, dtype=dtype).masked_fill_(~mask, float("-inf"))


def hidden_states(
    base, tokens: torch.Tensor, positions: torch.Tensor, end: torch.Tensor, rows: torch.Tensor | None = None
) -> torch.Tensor:
    """Last hidden states [n, hidden] of one packed row: ``tokens`` and ``positions`` [n],
    ``end`` [n] the ancestor intervals of `attention_pieces` (node j is visible to node i
    exactly when ``j <= i < end[j]``). With ``rows`` (indices into the row), only those
    rows' states, in that order: the last layer then runs its output projection and MLP
    at those rows alone (the other rows' keys and values are all the layer needs of them)."""
    config = base.config
    n_heads = config.num_attention_heads
    n_kv = config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // n_heads
    q_size, kv_size = n_heads * head_dim, n_kv * head_dim
    n = tokens.shape[0]

    x = base.embed_tokens(tokens)  # [n, H], a new tensor: the residual adds write into it
    # the fused passes of kernels.cpp when they are built for this machine (float32 only)
    native = kernels.get() if x.dtype == torch.float32 else None
    cos_rows, sin_rows = _rotary_rows(base, x, positions)  # [n, head_dim]
    half = head_dim // 2
    fused = _fused(base)
    prepacked = _prepacked_layers(base, fused, native)
    # every layer's normed states and projections go to buffers of this call, not to new
    # tensors: new ones of these sizes are fresh pages from the system each time
    h_rows = torch.empty_like(x)
    qkv_rows = torch.empty((n, fused[0].qkv_t.shape[1]), dtype=x.dtype)
    gate_up_rows = torch.empty((n, fused[0].gate_up_t.shape[1]), dtype=x.dtype)
    inter = gate_up_rows.shape[1] // 2
    # views of those buffers, the same for every layer
    qk = qkv_rows[:, : q_size + kv_size].view(n, n_heads + n_kv, head_dim)
    v_rows = qkv_rows[:, q_size + kv_size :].view(n, n_kv, head_dim)
    gate, up = gate_up_rows[:, :inter], gate_up_rows[:, inter:]
    tree_attention = native.tree_attention if native is not None and head_dim in TREE_HEAD_SIZES else None
    if tree_attention is not None:
        # each query over its own path only (kernels.cpp `tree_attention`)
        rotated = torch.empty((n, n_heads + n_kv, head_dim), dtype=x.dtype)
        attended = torch.empty((n, q_size), dtype=x.dtype)
    else:
        length, key_index, allowed = attention_pieces(end, PIECE_ROWS)
        mask = additive(allowed, x.dtype)
        count, width = key_index.shape
        flat_keys = key_index.reshape(-1)
        # the rotated queries and keys of every layer go to one buffer with the attention
        # pieces' padding rows at its end: zeros, written once, so no layer pads its queries
        rotated_rows = torch.zeros((count * length, n_heads + n_kv, head_dim), dtype=x.dtype)
        rotated = rotated_rows[:n]
        q = (
            rotated_rows[:, :n_heads].view(count, length, n_heads, head_dim).transpose(1, 2)
        )  # [P, heads, L, d]
        k_rows = rotated[:, n_heads:]
        cos = cos_rows[:, None, :]  # [n, 1, head_dim]
        # rotate_half(x) * sin = [-x2 * sin1, x1 * sin2] for x = [x1, x2]
        sin1 = sin_rows[:, None, :half].contiguous()
        sin2 = sin_rows[:, None, half:].contiguous()
        qk_low, qk_high = qk[..., :half], qk[..., half:]
        rotated_low, rotated_high = rotated[..., :half], rotated[..., half:]
    last = len(fused) - 1
    for i, layer in enumerate(fused):
        p = prepacked[i] if prepacked is not None else _UNPACKED
        h = _rms_norm(x, *layer.input_norm, h_rows, native)
        product(native, h, layer.qkv_t, p[0], qkv_rows)  # [n, q + 2 kv]
        if native is not None:
            native.rotary(qkv_rows, n_heads + n_kv, cos_rows, sin_rows, rotated)
        else:
            torch.mul(qk, cos, out=rotated)
            rotated_low.addcmul_(qk_high, sin1, value=-1)
            rotated_high.addcmul_(qk_low, sin2)
        if tree_attention is not None:
            tree_attention(rotated, n_heads, v_rows, end, layer.scaling, attended)
            out = attended
        else:
            k = k_rows.index_select(0, flat_keys).view(count, width, n_kv, head_dim).transpose(1, 2)
            v = v_rows.index_select(0, flat_keys).view(count, width, n_kv, head_dim).transpose(1, 2)
            # 4D: SDPA takes its CPU flash kernel (a 3D call with grouped keys falls back to
            # its math path: docs/scoring.md, "Profile")
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, scale=layer.scaling, enable_gqa=n_kv != n_heads
            )  # [P, heads, L, d]
            out = out.transpose(1, 2).reshape(count * length, q_size)[:n]
        if rows is not None and i == last:
            # the rest of the last layer works only at the rows asked for
            x, out = x.index_select(0, rows), out.index_select(0, rows)
            h_rows, gate_up_rows = h_rows[: len(rows)], gate_up_rows[: len(rows)]
            gate, up = gate_up_rows[:, :inter], gate_up_rows[:, inter:]
        product(native, out, layer.o_t, p[1], x, add=True)
        h = _rms_norm(x, *layer.post_attention_norm, h_rows, native)
        product(native, h, layer.gate_up_t, p[2], gate_up_rows)
        if native is not None:
            native.swiglu(gate_up_rows, inter)
        else:
            F.silu(gate, inplace=True).mul_(up)
        product(native, gate, layer.down_t, p[3], x, add=True)
    return _rms_norm(x, *_norm(base.norm), torch.empty_like(x), native)


def _rotary_rows(base, x: torch.Tensor, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin) [n, head_dim] of each row's position: the model's rotary embedding of the
    distinct positions 0 ... max (a packed row's positions are depths, a few dozen), then
    one row of that table a position, instead of the embedding's cos and sin of every row."""
    span = torch.arange(int(positions.max()) + 1 if len(positions) else 1)
    cos, sin = base.rotary_emb(x[None], span[None])  # [1, positions, head_dim]
    return cos[0].index_select(0, positions), sin[0].index_select(0, positions)


def _norm(norm) -> tuple[torch.Tensor, torch.Tensor, float]:
    """(weight, epsilon as a 0-d tensor and as a number) of a `LlamaRMSNorm`: the layers'
    are made once per model (`_fused`), the final norm's once a call."""
    weight = norm.weight
    return weight, torch.tensor(norm.variance_epsilon, dtype=weight.dtype), float(norm.variance_epsilon)


def _rms_norm(
    x: torch.Tensor,
    weight: torch.Tensor,
    epsilon: torch.Tensor,
    epsilon_value: float,
    out: torch.Tensor | None = None,
    native=None,
) -> torch.Tensor:
    """transformers' `LlamaRMSNorm` (x / sqrt(mean(x^2) + eps) * weight): with the native
    kernels one pass a row into ``out``; else three passes over x: one reduction (the
    Euclidean norm of each row) and two products, and two small operations on the row
    norms. torch's own `rms_norm` decomposes into six on this build (pow, mean, add,
    rsqrt, mul, mul)."""
    if native is not None and out is not None:
        native.rms_norm(x, weight, epsilon_value, out)
        return out
    norm2 = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    # eps + |x|^2 / n in one operation on the [rows, 1] column (each small operation costs
    # its dispatch, about as much as its arithmetic here)
    scale = torch.addcmul(epsilon, norm2, norm2, value=1.0 / x.shape[-1])
    return torch.mul(x, scale.rsqrt_(), out=out).mul_(weight)

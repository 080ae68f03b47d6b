"""Weights packed for MKL's matrix products, made once and kept beside their model.

torch's product (MKL's sgemm) copies its weight operand into the layout of MKL's kernel at
every call; a weight packed once (kernels.cpp `pack_weight`) is read as it lies by
`packed_mm`, which gives the same numbers (from a few hundred rows: 200 for SmolLM2's
shapes; with fewer, torch's product takes another of MKL's paths and the two differ by
float32 rounding) about a tenth faster on SmolLM2's shapes (docs/scoring.md, "Exactness
and speed", point 8). A packed weight is a second copy: the model's memory grows by its
weights' size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

#: Whether scoring reads packed weights where the native kernels can pack them; False:
#: torch's products everywhere.
ENABLED = True
#: Attribute of the owning module where its packed weights are kept.
ATTRIBUTE = "_winnow_prepacked"


def usable(native) -> bool:
    """Whether products may read packed weights: enabled, the native kernels loaded and
    built against a torch that has MKL's packed products."""
    return ENABLED and native is not None and bool(native.packed_available())


def prepacked_weights(
    owner: torch.nn.Module,
    name: str,
    sources: Sequence[torch.Tensor],
    parts: Callable[[], Sequence[torch.Tensor]],
    native,
) -> list[torch.Tensor] | None:
    """The weights ``parts()`` ([n, k] float32 each, out = x @ weight.T) packed for MKL,
    kept on ``owner`` under ``name``; None where they cannot be (`usable`).

    Packed again when ``sources`` (the parameters they are made from) are other objects
    than at packing, when one was changed in place since (its version counter moved; a
    model loaded in inference mode holds inference tensors, which keep none), or when the
    packed data is no longer where it was packed (a deep copy of the model: MKL's layout
    depends on the address)."""
    if not usable(native) or any(s.dtype != torch.float32 for s in sources):
        return None
    store = owner.__dict__.setdefault(ATTRIBUTE, {})
    versions = tuple(None if s.is_inference() else s._version for s in sources)
    kept = store.get(name)
    if kept is not None:
        made_from, made_at, addresses, weights = kept
        if (
            len(made_from) == len(sources)
            and all(a is b for a, b in zip(made_from, sources, strict=True))
            and made_at == versions
            and addresses == tuple(w.data_ptr() for w in weights)
        ):
            return weights
    with torch.no_grad():
        weights = [native.pack_weight(w) for w in parts()]
    store[name] = (tuple(sources), versions, tuple(w.data_ptr() for w in weights), weights)
    return weights


def product(
    native,
    x: torch.Tensor,
    weight_t: torch.Tensor,
    packed: torch.Tensor | None,
    out: torch.Tensor,
    add: bool = False,
) -> None:
    """out = x @ weight_t, or with ``add`` out += x @ weight_t (the residual add), reading
    the packed copy of the weight when there is one."""
    if packed is not None:
        native.packed_mm(x, packed, out.shape[1], 1.0 if add else 0.0, out)
    elif add:
        out.addmm_(x, weight_t)
    else:
        torch.mm(x, weight_t, out=out)

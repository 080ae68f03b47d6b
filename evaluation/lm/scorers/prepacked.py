"""Weights packed for MKL's matrix products, made once and kept beside their model.

torch's product (MKL's sgemm) copies its weight operand into the layout of MKL's kernel at
every call; a weight packed once (kernels.cpp `pack_weight`) is read as it lies by
`packed_mm`, which gives the same numbers (from a few hundred rows: 200 for SmolLM2's
shapes; with fewer, torch's product takes another of MKL's paths and the two differ by
float32 rounding) about a tenth faster on SmolLM2's shapes (docs/scoring.md, "Exactness
and speed", point 8). A packed weight is a second copy: the model's memory grows by its
weights' size.

Where oneDNN's products are faster, they run instead (`engine`): on processors where MKL
runs its AVX2 code although the cores have AVX-512 (AMD's EPYC), oneDNN's AVX-512 kernels
run SmolLM2's products about twice as fast (point 9). They read the weights as they lie
(nothing packed, no second copy) and add in another order than MKL, so the numbers differ
from torch's product by float32 rounding. Which product runs is chosen once a process by
measuring both on one product of a model's shapes, and recorded with each run's model
settings (``products``); scoring in the `lm-eval` normalization, which reproduces
lm-evaluation-harness's numbers, asks for torch's (`torch_numbers`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import torch

#: Whether scoring reads packed weights where the native kernels can pack them; False:
#: torch's products everywhere.
ENABLED = True
#: Attribute of the owning module where its packed weights are kept.
ATTRIBUTE = "_winnow_prepacked"
#: The float32 products scoring can run: MKL's with weights packed once (kernels.cpp
#: `packed_mm`), oneDNN's (`onednn_mm`), torch's own (MKL's sgemm, repacking each call).
ENGINES = ("packed", "onednn", "torch")
#: The product to run; None: the faster of "packed" and "onednn" here, measured once a
#: process (`engine`). Tests and comparisons set it.
ENGINE: str | None = None
#: How much faster oneDNN's product must measure to run instead of MKL's packed one,
#: which gives torch's (so lm-evaluation-harness's) numbers bit for bit: a tie on a noisy
#: machine must not switch a worker's rounding from one process to the next.
ONEDNN_MARGIN = 1.2
_chosen: dict[int, str] = {}


def _available(name: str, native) -> bool:
    if name == "torch":
        return True
    if native is None:
        return False
    return bool(native.packed_available() if name == "packed" else native.onednn_available())


_torch_numbers: ContextVar[bool] = ContextVar("winnow_torch_numbers", default=False)


@contextmanager
def torch_numbers(on: bool = True) -> Iterator[None]:
    """Within it (where ``on``), the products give torch's own numbers: MKL's, packed or
    not, never oneDNN's. The `lm-eval` normalization scores in it, since it reproduces
    lm-evaluation-harness's float32 numbers, which torch's products make (oneDNN's
    rounding moved WSC273's full scores up to 1.5e-4 from lm-eval's: docs/scoring.md,
    point 9)."""
    token = _torch_numbers.set(on)
    try:
        yield
    finally:
        _torch_numbers.reset(token)


def engine(native) -> str:
    """Which float32 product scoring runs (one of ENGINES): ``ENGINE`` where it is
    available; "torch" without the native kernels or with ``ENABLED`` off; else "packed"
    unless oneDNN's product measures ONEDNN_MARGIN times faster here (`_measure`, once a
    process: about 0.1 s) and the call does not ask for torch's numbers (`torch_numbers`)."""
    if not ENABLED or native is None:
        return "torch"
    if ENGINE is not None:
        if ENGINE not in ENGINES:
            raise ValueError(f"prepacked.ENGINE {ENGINE!r}: one of {', '.join(ENGINES)} or None expected")
        return ENGINE if _available(ENGINE, native) else "torch"
    if id(native) not in _chosen:
        _chosen[id(native)] = _measure(native)
    chosen = _chosen[id(native)]
    if chosen == "onednn" and _torch_numbers.get():
        return "packed" if _available("packed", native) else "torch"
    return chosen


def _measure(native) -> str:
    """The faster product on one product of SmolLM2's shapes (512 rows of 576 by a gate and
    up weight of 3,072 x 576: 1.8 GFLOP), the best of five calls each."""
    candidates = [name for name in ("packed", "onednn") if _available(name, native)]
    if len(candidates) < 2:
        return candidates[0] if candidates else "torch"
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        x = torch.randn(512, 576, generator=generator)
        weight = torch.randn(3072, 576, generator=generator)
        out = torch.empty(512, 3072)
        packed = native.pack_weight(weight)
        calls = {
            "packed": lambda: native.packed_mm(x, packed, 3072, 0.0, out),
            "onednn": lambda: native.onednn_mm(x, weight.t(), 0.0, out),
        }
        best = {}
        for name, call in calls.items():
            call()  # oneDNN makes its kernel on the first call
            times = []
            for _ in range(5):
                started = time.perf_counter()
                call()
                times.append(time.perf_counter() - started)
            best[name] = min(times)
    return choice(best["packed"], best["onednn"])


def choice(packed_seconds: float, onednn_seconds: float) -> str:
    """ "onednn" where its product took less than 1/ONEDNN_MARGIN of the packed one's time."""
    return "onednn" if packed_seconds > ONEDNN_MARGIN * onednn_seconds else "packed"


def usable(native) -> bool:
    """Whether products read packed weights: the native kernels loaded, built against a
    torch that has MKL's packed products, and those chosen (`engine`)."""
    return engine(native) == "packed"


def may_pack(native) -> bool:
    """Whether some scoring call may pack weights (a model's memory then counts a packed
    copy): MKL's packed products available and switched on, whatever `engine` chooses
    outside `torch_numbers`."""
    return ENABLED and _available("packed", native) and ENGINE in (None, "packed")


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
    the packed copy of the weight when there is one, by oneDNN's product where that is
    the one chosen (`engine`), else by torch's."""
    if packed is not None:
        native.packed_mm(x, packed, out.shape[1], 1.0 if add else 0.0, out)
    elif native is not None and x.dtype == torch.float32 and engine(native) == "onednn":
        native.onednn_mm(x, weight_t, 1.0 if add else 0.0, out)
    elif add:
        out.addmm_(x, weight_t)
    else:
        torch.mm(x, weight_t, out=out)

"""Which float32 matrix product scoring runs, and the weights packed for it, made once and
kept beside their model.

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

Winnow's own product (kernels.cpp `ordered_mm`, point 10) gives torch's numbers at oneDNN's
rate where MKL runs its AVX2 code: it adds in MKL's order (blocks of k, each a chain of
fused multiply-adds) on AVX-512's lanes. The block length is found on the machine
(`order_block`: the one whose products equal torch's bit for bit); where none does, it
does not run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NamedTuple

import torch

#: Whether scoring reads packed weights where the native kernels can pack them; False:
#: torch's products everywhere.
ENABLED = True
#: Attribute of the owning module where its packed weights are kept.
ATTRIBUTE = "_winnow_prepacked"
#: The float32 products scoring can run: Winnow's own in MKL's order (kernels.cpp
#: `ordered_mm`), MKL's with weights packed once (`packed_mm`), oneDNN's (`onednn_mm`),
#: torch's own (MKL's sgemm, repacking each call).
ENGINES = ("ordered", "packed", "onednn", "torch")
#: The products that give torch's numbers (from a few rows up; bit for bit).
TORCH_NUMBERS = ("ordered", "packed", "torch")
#: The product to run; None: the fastest here, measured once a process (`engine`). Tests
#: and comparisons set it.
ENGINE: str | None = None
#: How much faster oneDNN's product must measure to run instead of the fastest that gives
#: torch's (so lm-evaluation-harness's) numbers: a tie on a noisy machine must not switch
#: a worker's rounding from one process to the next.
ONEDNN_MARGIN = 1.2
#: The block lengths along k `order_block` tries, most likely first (MKL's AVX2 sgemm: 192).
ORDER_BLOCKS = (192, 128, 256, 384, 96, 64, 512, 320, 160, 224, 288)
#: Per native module: (the product chosen, the fastest of those giving torch's numbers).
_chosen: dict[int, tuple[str, str]] = {}
_blocks: dict[tuple[int, int], int | None] = {}
#: The product `_measure` times (rows, k, n: SmolLM2's gate and up weight); Winnow's own
#: runs only where a block length agrees with MKL's at this k (`_available`).
MEASURED_SHAPE = (512, 576, 3072)


class OrderedWeight(NamedTuple):
    """A weight [rows, k] packed for `ordered_mm` (kernels.cpp `order_pack`)."""

    data: torch.Tensor
    rows: int
    block: int  # the length of the blocks along k MKL adds in here (`order_block`)


def _available(name: str, native) -> bool:
    if name == "torch":
        return True
    if native is None:
        return False
    if name == "ordered":
        return bool(native.ordered_available()) and order_block(native, MEASURED_SHAPE[1]) is not None
    return bool(native.packed_available() if name == "packed" else native.onednn_available())


def order_block(native, k: int) -> int | None:
    """The block length along k with which `ordered_mm` gives torch's products bit for bit
    for weights of ``k`` columns on this machine (checked once a process: with and without
    the residual add, on 64 rows by 48 columns, each length of ORDER_BLOCKS and k itself);
    None where none does, or the kernels lack the product."""
    key = (id(native), k)
    if key not in _blocks:
        _blocks[key] = _find_block(native, k)
    return _blocks[key]


def _find_block(native, k: int) -> int | None:
    if native is None or not native.ordered_available():
        return None
    generator = torch.Generator().manual_seed(k)
    with torch.no_grad():
        x = torch.randn(64, k, generator=generator)
        weight = torch.randn(48, k, generator=generator)
        start = torch.randn(64, 48, generator=generator)
        expected = torch.mm(x, weight.t())
        added = start.clone().addmm_(x, weight.t())
        packed = native.order_pack(weight)
        for block in dict.fromkeys([b for b in ORDER_BLOCKS if b < k] + [k]):
            out = torch.empty(64, 48)
            native.ordered_mm(x, packed, 48, block, 0.0, out)
            if not torch.equal(out, expected):
                continue
            out = start.clone()
            native.ordered_mm(x, packed, 48, block, 1.0, out)
            if torch.equal(out, added):
                return block
    return None


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
    available; "torch" without the native kernels or with ``ENABLED`` off; else the fastest
    here (`_measure`, once a process: about 0.2 s) of those that give torch's numbers, or
    oneDNN's where it measures ONEDNN_MARGIN times faster than that and the call does not
    ask for torch's numbers (`torch_numbers`)."""
    if not ENABLED or native is None:
        return "torch"
    if ENGINE is not None:
        if ENGINE not in ENGINES:
            raise ValueError(f"prepacked.ENGINE {ENGINE!r}: one of {', '.join(ENGINES)} or None expected")
        return ENGINE if _available(ENGINE, native) else "torch"
    if id(native) not in _chosen:
        _chosen[id(native)] = _measure(native)
    chosen, exact = _chosen[id(native)]
    return exact if _torch_numbers.get() else chosen


def _measure(native) -> tuple[str, str]:
    """(the product to run, the fastest of those giving torch's numbers), measured on one
    product of SmolLM2's shapes (MEASURED_SHAPE: 512 rows of 576 by a gate and up weight
    of 3,072 x 576, 1.8 GFLOP), the best of five calls each."""
    candidates = [name for name in ("ordered", "packed", "onednn") if _available(name, native)]
    if not candidates:
        return "torch", "torch"
    rows, k, n = MEASURED_SHAPE
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        x = torch.randn(rows, k, generator=generator)
        weight = torch.randn(n, k, generator=generator)
        out = torch.empty(rows, n)
        calls = {}
        if "ordered" in candidates:
            ordered = native.order_pack(weight)
            block = order_block(native, k)
            calls["ordered"] = lambda: native.ordered_mm(x, ordered, n, block, 0.0, out)
        if "packed" in candidates:
            packed = native.pack_weight(weight)
            calls["packed"] = lambda: native.packed_mm(x, packed, n, 0.0, out)
        if "onednn" in candidates:
            calls["onednn"] = lambda: native.onednn_mm(x, weight.t(), 0.0, out)
        best = {}
        for name, call in calls.items():
            call()  # oneDNN makes its kernel on the first call
            times = []
            for _ in range(5):
                started = time.perf_counter()
                call()
                times.append(time.perf_counter() - started)
            best[name] = min(times)
    return choice(best)


def choice(seconds: dict[str, float]) -> tuple[str, str]:
    """(the product to run, the fastest of those giving torch's numbers) from the measured
    seconds of each available product: oneDNN only where it took less than
    1/ONEDNN_MARGIN of the time of the fastest of the others."""
    exact = min((name for name in seconds if name in TORCH_NUMBERS), key=seconds.__getitem__, default="torch")
    onednn = seconds.get("onednn")
    if onednn is not None and (exact == "torch" or seconds[exact] > ONEDNN_MARGIN * onednn):
        return "onednn", exact
    return exact, exact


def usable(native) -> bool:
    """Whether products read packed weights: the native kernels loaded, with Winnow's own
    product or MKL's packed products, and one of those chosen (`engine`)."""
    return engine(native) in ("ordered", "packed")


def may_pack(native) -> bool:
    """Whether some scoring call may pack weights (a model's memory then counts a packed
    copy): Winnow's own or MKL's packed products available and switched on, whatever
    `engine` chooses outside `torch_numbers`."""
    if not ENABLED or ENGINE not in (None, "ordered", "packed"):
        return False
    return _available("packed", native) or _available("ordered", native)


#: A weight packed for scoring's products: MKL's layout (a tensor), or Winnow's own.
Packed = torch.Tensor | OrderedWeight


def _address(weight: Packed) -> int:
    return (weight.data if isinstance(weight, OrderedWeight) else weight).data_ptr()


def _kind(native) -> str | None:
    """The product chosen (`engine`) where it reads packed weights ("ordered" or
    "packed"), else None."""
    chosen = engine(native)
    return chosen if chosen in ("ordered", "packed") else None


def prepacked_weights(
    owner: torch.nn.Module,
    name: str,
    sources: Sequence[torch.Tensor],
    parts: Callable[[], Sequence[torch.Tensor]],
    native,
) -> list[Packed] | None:
    """The weights ``parts()`` ([n, k] float32 each, out = x @ weight.T) packed for the
    product chosen (`engine`: Winnow's own, or MKL's where no block length of Winnow's
    agrees with torch's for some part's k), kept on ``owner`` under ``name``; None where
    they cannot be (`usable`).

    Packed again when ``sources`` (the parameters they are made from) are other objects
    than at packing, when one was changed in place since (its version counter moved; a
    model loaded in inference mode holds inference tensors, which keep none), when the
    packed data is no longer where it was packed (a deep copy of the model: MKL's layout
    depends on the address), or when another product is chosen."""
    kind = _kind(native)
    if kind is None or any(s.dtype != torch.float32 for s in sources):
        return None
    store = owner.__dict__.setdefault(ATTRIBUTE, {})
    versions = tuple(None if s.is_inference() else s._version for s in sources)
    kept = store.get(name)
    if kept is not None:
        made_from, made_at, made_as, addresses, kept_weights = kept
        if (
            len(made_from) == len(sources)
            and all(a is b for a, b in zip(made_from, sources, strict=True))
            and made_at == versions
            and made_as == kind
            and addresses == tuple(_address(w) for w in kept_weights)
        ):
            return kept_weights
    with torch.no_grad():
        matrices = list(parts())
        blocks = [order_block(native, int(w.shape[1])) for w in matrices] if kind == "ordered" else []
        weights: list[Packed]
        if kind == "ordered" and all(b is not None for b in blocks):
            weights = [
                OrderedWeight(native.order_pack(w), int(w.shape[0]), b)
                for w, b in zip(matrices, blocks, strict=True)
                if b is not None
            ]
        elif _available("packed", native):
            weights = [native.pack_weight(w) for w in matrices]
        else:
            return None
    store[name] = (tuple(sources), versions, kind, tuple(_address(w) for w in weights), weights)
    return weights


def product(
    native,
    x: torch.Tensor,
    weight_t: torch.Tensor,
    packed: Packed | None,
    out: torch.Tensor,
    add: bool = False,
) -> None:
    """out = x @ weight_t, or with ``add`` out += x @ weight_t (the residual add), reading
    the packed copy of the weight when there is one (by Winnow's own product or MKL's, as
    it was packed for), by oneDNN's product where that is the one chosen (`engine`), else
    by torch's."""
    beta = 1.0 if add else 0.0
    if isinstance(packed, OrderedWeight):
        native.ordered_mm(x, packed.data, packed.rows, packed.block, beta, out)
    elif packed is not None:
        native.packed_mm(x, packed, out.shape[1], beta, out)
    elif native is not None and x.dtype == torch.float32 and engine(native) == "onednn":
        native.onednn_mm(x, weight_t, beta, out)
    elif add:
        out.addmm_(x, weight_t)
    else:
        torch.mm(x, weight_t, out=out)

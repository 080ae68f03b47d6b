"""Weights packed once for MKL's products (kernels.cpp `pack_weight` / `packed_mm`,
evaluation/lm/scorers/prepacked.py), Winnow's own product in MKL's order (`order_pack` /
`ordered_mm`) and oneDNN's products (`onednn_mm`) against torch's products; which of them
scoring runs (`prepacked.engine`), and the packed weights' upkeep beside a model. The
tests of MKL's packed weights ask for them (`ENGINE`): where another product measures
faster scoring would not run them."""

from __future__ import annotations

import copy

import pytest
import torch

from evaluation.lm import kernels
from evaluation.lm.scorers import output_layer, prepacked
from evaluation.lm.scorers.causal import loglikelihood
from tests.evaluation.test_prefix_tree import REQUESTS, alone

# SmolLM2-135M's four weights of a layer and its output layer's vocabulary block, [n, k]
SHAPES = [(960, 576), (576, 576), (3072, 576), (576, 1536), (2048, 576)]


@pytest.fixture(autouse=True)
def packed_products(monkeypatch):
    """MKL's packed products, whichever product is faster on this machine (each test of
    another product sets its own)."""
    monkeypatch.setattr(prepacked, "ENGINE", "packed")


@pytest.mark.parametrize(("n", "k"), SHAPES)
@pytest.mark.parametrize("rows", [256, 333, 1024])
def test_a_packed_product_is_torch_product_bit_for_bit(native, n: int, k: int, rows: int) -> None:
    """From a few hundred rows up: the same numbers as torch.mm and as addmm_ (beta 1, the residual
    add), also for an input whose rows are strided (the gate half of the gate|up buffer)."""
    assert native.packed_available()
    torch.manual_seed(rows + n + k)
    weight = torch.randn(n, k) * 0.05
    packed = native.pack_weight(weight)
    x = torch.randn(rows, 2 * k)[:, :k]  # rows strided by 2k
    out = torch.empty(rows, n)
    native.packed_mm(x, packed, n, 0.0, out)
    assert torch.equal(out, torch.mm(x, weight.t()))
    residual = torch.randn(rows, n)
    added = residual.clone()
    native.packed_mm(x, packed, n, 1.0, added)
    assert torch.equal(added, residual.clone().addmm_(x, weight.t()))


@pytest.mark.parametrize("rows", [1, 5, 99, 190])
def test_a_packed_product_of_few_rows_is_torch_product_to_rounding(native, rows: int) -> None:
    torch.manual_seed(rows)
    weight = torch.randn(576, 1536) * 0.05
    x = torch.randn(rows, 1536)
    out = torch.empty(rows, 576)
    native.packed_mm(x, native.pack_weight(weight), 576, 0.0, out)
    torch.testing.assert_close(out, torch.mm(x, weight.t()), rtol=1e-5, atol=1e-5)


def test_a_packed_product_refuses_what_it_cannot_take(native) -> None:
    packed = native.pack_weight(torch.randn(64, 32))
    with pytest.raises(RuntimeError, match="not one of"):
        native.packed_mm(torch.randn(8, 320), packed, 640, 0.0, torch.empty(8, 640))
    with pytest.raises(RuntimeError, match="out must be"):
        native.packed_mm(torch.randn(8, 32), packed, 64, 0.0, torch.empty(8, 65))
    with pytest.raises(RuntimeError, match="beta must be 0 or 1"):
        native.packed_mm(torch.randn(8, 32), packed, 64, 0.5, torch.empty(8, 64))
    with pytest.raises(RuntimeError, match="float32"):
        native.pack_weight(torch.randn(64, 32).double())


def test_packed_weights_are_kept_and_made_again_when_their_weights_change(native) -> None:
    """Kept on the module between calls; packed again when a parameter is replaced, changed
    in place (its version counter moves) or the module is deep-copied (MKL's layout
    depends on where the packed data lies); never used stale."""
    linear = torch.nn.Linear(32, 300, bias=False)
    hidden = torch.randn(120, 32)

    def kept(module):
        weight = module.weight
        got = prepacked.prepacked_weights(module, "whole", (weight,), lambda: (weight.detach(),), native)
        assert got is not None
        out = torch.empty(120, 300)
        native.packed_mm(hidden, got[0], 300, 0.0, out)
        assert torch.equal(out, torch.mm(hidden, weight.detach().t()))
        return got[0]

    first = kept(linear)
    assert kept(linear) is first
    with torch.no_grad():
        linear.weight.mul_(2)  # in place: the version counter moves
    second = kept(linear)
    assert second is not first
    linear.weight = torch.nn.Parameter(torch.randn(300, 32), requires_grad=False)
    third = kept(linear)
    assert third is not second
    twin = copy.deepcopy(linear)  # the packed copy lies elsewhere now: packed again
    assert kept(twin) is not third
    assert kept(linear) is third


def test_switched_off_or_without_kernels_nothing_is_packed(native, monkeypatch) -> None:
    linear = torch.nn.Linear(8, 16, bias=False)
    args = (linear, "whole", (linear.weight,), lambda: (linear.weight.detach(),))
    assert prepacked.prepacked_weights(*args, None) is None
    monkeypatch.setattr(prepacked, "ENABLED", False)
    assert prepacked.prepacked_weights(*args, native) is None
    assert prepacked.ATTRIBUTE not in linear.__dict__


def test_scores_are_the_same_with_and_without_packed_weights(native, tiny_causal, monkeypatch) -> None:
    """Whole requests through the lean forward: the packed products give torch's products'
    scores (the tiny model's products have fewer than 100 rows: to float32 rounding), and
    the packed weights are kept beside the model."""
    got = loglikelihood(tiny_causal, REQUESTS, batch_size=64)
    base = tiny_causal.model.model
    assert "layers" in base.__dict__[prepacked.ATTRIBUTE]
    monkeypatch.setattr(prepacked, "ENABLED", False)
    plain = loglikelihood(tiny_causal, REQUESTS, batch_size=64)
    reference = alone(tiny_causal, REQUESTS)
    for req, (a, ga), (b, gb), (c, gc) in zip(REQUESTS, got, plain, reference, strict=True):
        assert a == pytest.approx(b, abs=1e-5), req
        assert a == pytest.approx(c, abs=1e-5), req
        assert ga == gb == gc, req


@pytest.mark.parametrize(("normalization", "kept"), [("lm-eval", "whole"), ("exact", "blocks of 2048")])
def test_the_output_layer_reads_packed_weights_with_the_same_numbers(
    native,
    normalization: str,
    kept: str,
    monkeypatch,
) -> None:
    """Both normalizations: lm-eval's whole rows from the whole weight packed, the exact
    one's vocabulary blocks each packed (the last, partial block through torch), the same
    numbers bit for bit at 150 rows."""
    torch.manual_seed(3)
    linear = torch.nn.Linear(16, 4100, bias=False)  # two whole blocks of 2,048 and 4 entries
    hidden = torch.randn(300, 16) * 4
    targets = torch.randint(0, 4100, (300,))
    head = output_layer.OutputLayer(linear, None, None, normalization)
    with torch.inference_mode():
        packed_scores = output_layer._score_rows(head, hidden, targets)
        assert list(linear.__dict__[prepacked.ATTRIBUTE]) == [kept]
        monkeypatch.setattr(prepacked, "ENABLED", False)
        plain = output_layer._score_rows(head, hidden, targets)
    assert torch.equal(packed_scores[0], plain[0])
    assert torch.equal(packed_scores[1], plain[1])


# --- oneDNN's products, and which product runs ------------------------------------------


@pytest.mark.parametrize(("n", "k"), SHAPES)
@pytest.mark.parametrize("rows", [1, 64, 333])
def test_a_onednn_product_is_torch_product_to_rounding(native, n: int, k: int, rows: int) -> None:
    """oneDNN adds in another order than MKL: the same products to float32 rounding, into
    the buffer given (beta 0) and added to it (beta 1, the residual add), also for an input
    whose rows are strided (the gate half of the gate|up buffer) and for a weight that is the
    transpose of a block of rows (an output-layer vocabulary block)."""
    assert native.onednn_available()
    torch.manual_seed(rows + n + k)
    whole = torch.randn(n + 64, k) * 0.05
    weight = whole[32 : 32 + n]
    x = torch.randn(rows, 2 * k)[:, :k]
    out = torch.full((rows, n), float("nan"))
    native.onednn_mm(x, weight.t(), 0.0, out)
    reference = torch.mm(x.double(), weight.t().double())
    torch.testing.assert_close(out.double(), reference, rtol=1e-5, atol=1e-5)
    residual = torch.randn(rows, n)
    added = residual.clone()
    native.onednn_mm(x, weight.t(), 1.0, added)
    torch.testing.assert_close(added.double(), residual.double() + reference, rtol=1e-5, atol=1e-5)


def test_a_onednn_product_refuses_what_it_cannot_take(native) -> None:
    weight_t = torch.randn(32, 64).t()  # [64, 32]
    with pytest.raises(RuntimeError, match="beta must be 0 or 1"):
        native.onednn_mm(torch.randn(8, 64), weight_t, 0.5, torch.empty(8, 32))
    with pytest.raises(RuntimeError, match=r"x \[m, k\], weight_t \[k, n\] and out \[m, n\] expected"):
        native.onednn_mm(torch.randn(8, 64), weight_t, 0.0, torch.empty(8, 33))
    with pytest.raises(RuntimeError, match="float32"):
        native.onednn_mm(torch.randn(8, 64).double(), weight_t.double(), 0.0, torch.empty(8, 32).double())
    native.onednn_mm(torch.randn(0, 64), weight_t, 0.0, torch.empty(0, 32))  # no rows: nothing to do


def test_the_product_is_chosen_once_a_process_by_measuring_and_can_be_set(native, monkeypatch) -> None:
    monkeypatch.setattr(prepacked, "ENGINE", None)
    monkeypatch.setattr(prepacked, "_chosen", {})
    measured = []
    real = prepacked._measure

    def measure(kernels):
        measured.append(real(kernels))
        return measured[-1]

    monkeypatch.setattr(prepacked, "_measure", measure)
    first = prepacked.engine(native)
    assert first in ("ordered", "packed", "onednn") and prepacked.engine(native) == first
    assert measured[0][0] == first and len(measured) == 1  # measured once
    assert measured[0][1] in prepacked.TORCH_NUMBERS
    assert prepacked.usable(native) == (first in ("ordered", "packed"))
    assert prepacked.engine(None) == "torch"  # no native kernels: torch's products
    for name in prepacked.ENGINES:  # each where this machine has it (Winnow's own: where
        monkeypatch.setattr(prepacked, "ENGINE", name)  # a block length agrees with MKL's)
        assert prepacked.engine(native) == (name if prepacked._available(name, native) else "torch")
    assert prepacked._available("packed", native) and prepacked._available("onednn", native)
    monkeypatch.setattr(prepacked, "ENGINE", "blas")
    with pytest.raises(
        ValueError, match="prepacked.ENGINE 'blas': one of ordered, packed, onednn, torch or None"
    ):
        prepacked.engine(native)
    monkeypatch.setattr(prepacked, "ENGINE", "onednn")
    monkeypatch.setattr(prepacked, "ENABLED", False)
    assert prepacked.engine(native) == "torch"


def test_onednn_is_chosen_only_when_it_measures_clearly_faster() -> None:
    """The fastest product giving torch's own numbers runs, unless oneDNN's takes less than
    1/ONEDNN_MARGIN of its time; the second of the pair is what a call asking for torch's
    numbers runs."""
    assert prepacked.ONEDNN_MARGIN == 1.2
    assert prepacked.choice({"packed": 1.0, "onednn": 1.0}) == ("packed", "packed")
    assert prepacked.choice({"packed": 1.1, "onednn": 1.0}) == ("packed", "packed")
    assert prepacked.choice({"packed": 1.3, "onednn": 1.0}) == ("onednn", "packed")
    assert prepacked.choice({"packed": 1.0, "onednn": 2.0}) == ("packed", "packed")
    # Winnow's own product in MKL's order at oneDNN's rate: torch's numbers, no oneDNN
    assert prepacked.choice({"ordered": 1.05, "packed": 2.2, "onednn": 1.0}) == ("ordered", "ordered")
    assert prepacked.choice({"ordered": 1.5, "packed": 2.2, "onednn": 1.0}) == ("onednn", "ordered")
    assert prepacked.choice({"ordered": 1.0, "packed": 0.9}) == ("packed", "packed")
    assert prepacked.choice({"onednn": 1.0}) == ("onednn", "torch")
    assert prepacked.choice({}) == ("torch", "torch")


def test_scores_through_onednn_products_are_torch_scores_to_rounding(
    native, tiny_causal, monkeypatch
) -> None:
    """Whole requests through the lean forward and both output layers on oneDNN's products:
    the reference's scores to float32 rounding, the same greedy answers, nothing packed."""
    monkeypatch.setattr(prepacked, "ENGINE", "onednn")
    base = tiny_causal.model.model
    base.__dict__.pop(prepacked.ATTRIBUTE, None)
    got = loglikelihood(tiny_causal, REQUESTS, batch_size=64)
    assert prepacked.ATTRIBUTE not in base.__dict__
    reference = alone(tiny_causal, REQUESTS)
    for req, (a, ga), (c, gc) in zip(REQUESTS, got, reference, strict=True):
        assert a == pytest.approx(c, abs=1e-5), req
        assert ga == gc, req
    torch.manual_seed(3)
    linear = torch.nn.Linear(16, 4100, bias=False)
    hidden = torch.randn(300, 16) * 4
    targets = torch.randint(0, 4100, (300,))
    for normalization in ("lm-eval", "exact"):
        head = output_layer.OutputLayer(linear, None, None, normalization)
        with torch.inference_mode():
            onednn = output_layer._score_rows(head, hidden, targets)
            monkeypatch.setattr(prepacked, "ENGINE", "torch")
            plain = output_layer._score_rows(head, hidden, targets)
            monkeypatch.setattr(prepacked, "ENGINE", "onednn")
        torch.testing.assert_close(onednn[0], plain[0], rtol=1e-5, atol=1e-5)
        assert prepacked.ATTRIBUTE not in linear.__dict__


def test_lm_eval_normalization_asks_for_torch_numbers(native, tiny_causal, monkeypatch) -> None:
    """Where oneDNN's products were chosen, a call that reproduces lm-evaluation-harness's
    numbers (`torch_numbers`, the `lm-eval` normalization's scoring) runs MKL's packed
    products; the loaded model's settings say which products its runs use."""
    monkeypatch.setattr(prepacked, "ENGINE", None)
    monkeypatch.setattr(prepacked, "_chosen", {id(native): ("onednn", "packed")})
    assert prepacked.engine(native) == "onednn"
    with prepacked.torch_numbers():
        assert prepacked.engine(native) == "packed"
        with prepacked.torch_numbers(False):
            assert prepacked.engine(native) == "onednn"
    assert prepacked.engine(native) == "onednn"
    from evaluation.lm import modeling

    assert modeling._products(torch.float32, "lm-eval") == "packed"
    assert modeling._products(torch.float32, "exact") == "onednn"
    assert modeling._products(torch.float64, "exact") == "torch"
    base = tiny_causal.model.model
    base.__dict__.pop(prepacked.ATTRIBUTE, None)
    monkeypatch.setitem(tiny_causal.settings, "normalization", "lm-eval")
    loglikelihood(tiny_causal, REQUESTS[:2], batch_size=64)
    assert "layers" in base.__dict__[prepacked.ATTRIBUTE]  # packed: MKL's products ran


# --- Winnow's own product, in MKL's order of additions ----------------------------------


def _mkl_avx2_here() -> bool:
    """An AMD processor with AVX-512, where torch's MKL runs its AVX2 code (docs/scoring.md,
    point 10): there MKL adds along k in blocks of 192. (The processor as the kernels'
    build key reads it.)"""
    return "AMD" in kernels.cpu_name() and " avx512f" in kernels._cpu()


def test_the_block_length_is_found_on_the_machine(native) -> None:
    """MKL's AVX2 sgemm adds blocks of 192 along k (measured on an AMD EPYC for k of 384, 576,
    600, 1,536 and 2,048); k of one block or less is one chain. Where MKL adds otherwise
    (its AVX-512 code on Intel's processors) no block length need agree: then None, and
    scoring never runs the product."""
    assert native.ordered_available()
    found = {k: prepacked.order_block(native, k) for k in (64, 100, 576, 600, 1536)}
    if _mkl_avx2_here():
        assert found == {64: 64, 100: 100, 576: 192, 600: 192, 1536: 192}
    assert prepacked._available("ordered", native) == (found[576] is not None)


@pytest.mark.parametrize(("n", "k"), [*SHAPES, (1000, 576), (33, 600), (7, 64)])
@pytest.mark.parametrize("rows", [2, 13, 14, 37, 333])
def test_an_ordered_product_is_torch_product(native, n: int, k: int, rows: int) -> None:
    """Into the buffer given (beta 0) and added to it (beta 1, the residual add), for
    strided input rows, a weight that is a block of a larger one's rows, partial panels of
    columns and partial tiles of rows: torch's product bit for bit where a block length
    agrees with MKL's (`order_block`) from 12 rows and 32 columns up (with fewer, MKL takes
    other paths), and always the float64 product to float32 rounding."""
    torch.manual_seed(rows + n + k)
    whole = torch.randn(n + 64, k) * 0.05
    weight = whole[32 : 32 + n]
    packed = native.order_pack(weight)
    assert packed.numel() == -(-n // 32) * 32 * k
    x = torch.randn(rows, 2 * k)[:, :k]
    residual = torch.randn(rows, n)
    block = prepacked.order_block(native, k)
    out = torch.full((rows, n), float("nan"))
    native.ordered_mm(x, packed, n, block or 192, 0.0, out)
    added = residual.clone()
    native.ordered_mm(x, packed, n, block or 192, 1.0, added)
    reference = torch.mm(x.double(), weight.t().double())
    torch.testing.assert_close(out.double(), reference, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(added.double(), residual.double() + reference, rtol=1e-5, atol=1e-5)
    if block is not None and rows >= 12 and n >= 32:
        assert torch.equal(out, torch.mm(x, weight.t()))
        assert torch.equal(added, residual.clone().addmm_(x, weight.t()))


def test_an_ordered_product_does_not_depend_on_threads_or_other_rows(native) -> None:
    """Each output is made by one thread in one order: the same bits at 1 and 2 threads and
    for a row alone or among 300."""
    torch.manual_seed(5)
    weight = torch.randn(3072, 576) * 0.05
    packed = native.order_pack(weight)
    x = torch.randn(300, 576)
    outs = []
    threads = torch.get_num_threads()
    try:
        for count in (1, 2):
            torch.set_num_threads(count)
            out = torch.empty(300, 3072)
            native.ordered_mm(x, packed, 3072, 192, 0.0, out)
            outs.append(out)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(outs[0], outs[1])
    alone_row = torch.empty(1, 3072)
    native.ordered_mm(x[17:18], packed, 3072, 192, 0.0, alone_row)
    assert torch.equal(alone_row[0], outs[0][17])


def test_an_ordered_product_refuses_what_it_cannot_take(native) -> None:
    packed = native.order_pack(torch.randn(64, 32))
    with pytest.raises(RuntimeError, match="packed by order_pack expected"):
        native.ordered_mm(torch.randn(8, 32), packed, 96, 32, 0.0, torch.empty(8, 96))
    with pytest.raises(RuntimeError, match="out must be"):
        native.ordered_mm(torch.randn(8, 32), packed, 64, 32, 0.0, torch.empty(8, 65))
    with pytest.raises(RuntimeError, match="beta must be 0 or 1"):
        native.ordered_mm(torch.randn(8, 32), packed, 64, 32, 0.5, torch.empty(8, 64))
    with pytest.raises(RuntimeError, match="block length must be positive"):
        native.ordered_mm(torch.randn(8, 32), packed, 64, 0, 0.0, torch.empty(8, 64))
    with pytest.raises(RuntimeError, match="float32"):
        native.order_pack(torch.randn(64, 32).double())
    native.ordered_mm(torch.randn(0, 32), packed, 64, 32, 0.0, torch.empty(0, 64))  # no rows


def test_scores_through_ordered_products_are_torch_scores(native, tiny_causal, monkeypatch) -> None:
    """Whole requests through the lean forward on Winnow's own products: the weights packed
    in its panels and kept beside the model, the scores torch's products give (bit for bit
    where MKL's block length is found here), the same greedy answers; asking for MKL's
    packed products packs again in their layout."""
    widths = {m.weight.shape[1] for m in tiny_causal.model.modules() if isinstance(m, torch.nn.Linear)}
    exact = all(prepacked.order_block(native, k) is not None for k in widths)
    for k in {*widths, 576}:  # where MKL adds otherwise (Intel's processors): the product
        if prepacked.order_block(native, k) is None:  # still runs, to float32 rounding
            monkeypatch.setitem(prepacked._blocks, (id(native), k), 192)
    monkeypatch.setattr(prepacked, "ENGINE", "ordered")
    base = tiny_causal.model.model
    base.__dict__.pop(prepacked.ATTRIBUTE, None)
    got = loglikelihood(tiny_causal, REQUESTS, batch_size=64)
    kept = base.__dict__[prepacked.ATTRIBUTE]["layers"]
    assert kept[2] == "ordered" and all(isinstance(w, prepacked.OrderedWeight) for w in kept[-1])
    monkeypatch.setattr(prepacked, "ENGINE", "torch")
    plain = loglikelihood(tiny_causal, REQUESTS, batch_size=64)
    for req, (a, ga), (b, gb) in zip(REQUESTS, got, plain, strict=True):
        assert a == pytest.approx(b, abs=1e-5), req
        assert ga == gb, req
    if exact and _mkl_avx2_here():
        assert [a for a, _ in got] == [b for b, _ in plain]
    monkeypatch.setattr(prepacked, "ENGINE", "packed")
    loglikelihood(tiny_causal, REQUESTS[:2], batch_size=64)
    kept = base.__dict__[prepacked.ATTRIBUTE]["layers"]
    assert kept[2] == "packed" and all(isinstance(w, torch.Tensor) for w in kept[-1])


def test_a_k_without_an_agreeing_block_is_packed_for_mkl(native, monkeypatch) -> None:
    """Where no block length of Winnow's gives torch's numbers for a weight's k, its group of
    weights is packed for MKL's products instead, which give them."""
    monkeypatch.setattr(prepacked, "ENGINE", "ordered")
    if prepacked.order_block(native, 576) is None:  # Winnow's own product runs here
        monkeypatch.setitem(prepacked._blocks, (id(native), 576), 192)
    monkeypatch.setitem(prepacked._blocks, (id(native), 48), None)
    linear = torch.nn.Linear(48, 300, bias=False)
    weight = linear.weight
    got = prepacked.prepacked_weights(linear, "whole", (weight,), lambda: (weight.detach(),), native)
    assert got is not None and isinstance(got[0], torch.Tensor)
    hidden = torch.randn(256, 48)
    out = torch.empty(256, 300)
    prepacked.product(native, hidden, weight.detach().t(), got[0], out)
    assert torch.equal(out, torch.mm(hidden, weight.detach().t()))

"""Weights packed once for MKL's products (kernels.cpp `pack_weight` / `packed_mm`,
evaluation/lm/scorers/prepacked.py) against torch's products, and their upkeep beside a model."""

from __future__ import annotations

import copy

import pytest
import torch

from evaluation.lm.scorers import output_layer, prepacked
from evaluation.lm.scorers.causal import loglikelihood
from tests.evaluation.test_prefix_tree import REQUESTS, alone

# SmolLM2-135M's four weights of a layer and its output layer's vocabulary block, [n, k]
SHAPES = [(960, 576), (576, 576), (3072, 576), (576, 1536), (2048, 576)]


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

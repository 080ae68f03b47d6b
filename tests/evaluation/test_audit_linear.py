"""The batched logistic regressions (evaluation.audit.linear): design rows made once and
selected, a given start instead of the pilot, the float64 stage that evaluates only the
models whose float32 gradient met tol narrowly, predictions from the last evaluation's
scores. Small seeded sets; no database."""

import numpy as np
import pytest
import torch

from evaluation.audit import linear
from evaluation.audit.aflite import draw_partitions
from evaluation.audit.data import check_inputs
from evaluation.audit.synthetic import leaky_set
from tests.evaluation.audit_threads import one_torch_thread  # noqa: F401 (autouse)


def _inputs(options: int | None, n: int = 400):
    data = leaky_set(n, dim=12, leak=0.3, options=options, seed=5)
    return check_inputs(data.features, data.labels)


@pytest.mark.parametrize("options", [None, 2, 3])
def test_selected_design_rows_equal_those_made_from_the_selected_items(options):
    inputs = _inputs(options)
    items = np.array([7, 3, 250, 0, 399, 12])
    selected = linear.Design.of(inputs).select(items)
    sub = type(inputs)(
        features=inputs.features[items], labels=inputs.labels[items], task=inputs.task, classes=inputs.classes
    )
    direct = linear.Design.of(sub)
    assert np.array_equal(selected.rows32, direct.rows32)
    assert np.array_equal(selected.rows64_of(), direct.rows64_of())
    assert np.array_equal(selected.rows64_of(np.array([1, 4])), direct.rows64_of()[[1, 4]])
    again = selected.select(np.array([2, 0]))  # a selection of a selection
    assert np.array_equal(again.rows64_of(), direct.rows64_of()[[2, 0]])
    assert np.array_equal(again.rows32, direct.rows32[[2, 0]])
    assert np.array_equal(selected.labels, inputs.labels[items])
    assert linear.Design.of(inputs).select(items, float64=False).rows64 is None
    # float64 rows are the exact differences of the float32 features (multiple choice)
    if options:
        features = inputs.features[items].astype(np.float64)
        assert np.array_equal(direct.rows64_of(), features[:, 1:, :] - features[:, :1, :])


@pytest.mark.parametrize("options", [None, 2, 3])
def test_a_given_start_reaches_the_same_models_as_the_pilot(options):
    inputs = _inputs(options)
    train = draw_partitions(np.random.default_rng(1), inputs.n, 8, 100)
    piloted = linear.fit_predict(inputs, train)
    size = piloted.mean.shape[0]
    elsewhere = linear.fit_predict(inputs, train, start=np.full(size, 0.05))
    assert np.abs(piloted.gold_probability - elsewhere.gold_probability).max() < 1e-3
    assert (piloted.predictions != elsewhere.predictions).mean() < 0.002
    warm = linear.fit_predict(inputs, train, start=piloted.mean)
    assert np.abs(piloted.gold_probability - warm.gold_probability).max() < 1e-3


@pytest.mark.parametrize("options", [None, 2, 3])
def test_the_curvature_of_another_fit_reaches_the_same_models(options):
    inputs = _inputs(options)
    train = draw_partitions(np.random.default_rng(1), inputs.n, 8, 100)
    own = linear.fit_predict(inputs, train)
    other = linear.fit_predict(inputs, draw_partitions(np.random.default_rng(9), inputs.n, 8, 150))
    reused = linear.fit_predict(inputs, train, start=other.mean, curvature=other.curvature)
    assert np.abs(own.gold_probability - reused.gold_probability).max() < 1e-3
    assert (own.predictions != reused.predictions).mean() < 0.002


@pytest.mark.parametrize("options", [None, 2])
def test_binary_models_with_different_training_sizes_have_the_objective_of_their_own_items(options):
    """The binary loss and gradient over each model's gathered training items (padded
    where a model has fewer) equal the mean over a dense mask of its items, computed
    here directly in float64."""
    inputs = _inputs(options)
    rng = np.random.default_rng(4)
    train = np.zeros((5, inputs.n), dtype=bool)
    for j, size in enumerate([100, 37, 1, 250, 100]):
        train[j, rng.choice(inputs.n, size, replace=False)] = True
    design = linear.Design.of(inputs)
    model = linear._Batched(design, train, c=0.7, dtype=torch.float64)
    theta = torch.from_numpy(rng.normal(0.0, 0.3, (5, model.size)))
    value, grad = model.value_and_grad(theta, torch.arange(5))
    sub_value, sub_grad = model.value_and_grad(theta[[3, 1]], torch.tensor([3, 1]))
    x = torch.from_numpy(design.rows64_of()[:, 0, :])
    y = torch.from_numpy(inputs.labels).to(torch.float64)
    for j in range(5):
        items = torch.from_numpy(np.flatnonzero(train[j]))
        w, t = theta[j, : model.d], float(items.numel())
        z = x[items] @ w + (theta[j, model.d] if model.intercept else 0.0)
        loss = torch.nn.functional.softplus(z).sum() - (y[items] * z).sum()
        expected = loss / t + (w @ w) / (2.0 * 0.7 * t)
        residual = (torch.sigmoid(z) - y[items]) / t
        expected_grad = x[items].T @ residual + w / (0.7 * t)
        if model.intercept:
            expected_grad = torch.cat([expected_grad, residual.sum().view(1)])
        assert float(value[j]) == pytest.approx(float(expected), rel=1e-12)
        assert torch.allclose(grad[j], expected_grad, rtol=1e-10, atol=1e-14)
    assert torch.equal(sub_value, value[[3, 1]])
    assert torch.allclose(sub_grad, grad[[3, 1]], rtol=1e-12, atol=1e-16)


@pytest.mark.parametrize("tol", [1e-6, 1e-7])
@pytest.mark.parametrize("options", [None, 2])
def test_models_the_float64_stage_skips_meet_tol_in_float64(options, tol):
    inputs = _inputs(options)
    train = draw_partitions(np.random.default_rng(2), inputs.n, 16, 100)
    design = linear.Design.of(inputs)
    trusted = tol - linear.float32_margin(tol)
    with torch.no_grad():
        fast = linear._Batched(design, train, c=1.0, dtype=torch.float32)
        theta, _, _, largest = linear.lbfgs(
            fast.value_and_grad, torch.zeros(fast.m, fast.size), max_iter=500, tol=trusted
        )
        _, g64 = fast.to(torch.float64).value_and_grad(theta.to(torch.float64), torch.arange(fast.m))
        _, g32 = fast.value_and_grad(theta, torch.arange(fast.m))
    skipped = largest <= trusted
    assert bool(skipped.any())
    assert float(g64[skipped].abs().amax()) <= tol
    # the margin covers the float32 gradient's rounding (at tol 1e-6 many times over)
    error = float((g32.to(torch.float64) - g64).abs().amax())
    assert error < linear.FLOAT32_GRADIENT_ABSOLUTE
    assert error < linear.float32_margin(tol) / (4 if tol >= 1e-6 else 1)


def test_below_the_absolute_margin_every_model_is_finished_in_float64():
    inputs = _inputs(2)
    train = draw_partitions(np.random.default_rng(3), inputs.n, 8, 100)
    tol = linear.FLOAT32_GRADIENT_ABSOLUTE * 0.8
    fitted = linear.fit_predict(inputs, train, tol=tol)
    assert fitted.float64_models == 8
    reference = linear.fit_predict(inputs, train, tol=1e-6)
    assert np.abs(fitted.gold_probability - reference.gold_probability).max() < 1e-4


def test_the_float64_stage_evaluates_every_model_without_the_margin_with_the_same_result(monkeypatch):
    inputs = _inputs(2)
    train = draw_partitions(np.random.default_rng(3), inputs.n, 8, 100)
    margin = linear.fit_predict(inputs, train)
    monkeypatch.setattr(linear, "FLOAT32_GRADIENT_ERROR", 1.0)  # every model is "near" tol
    everyone = linear.fit_predict(inputs, train)
    assert everyone.float64_models == 8
    assert margin.float64_models < 8
    assert np.array_equal(margin.predictions, everyone.predictions)
    assert np.abs(margin.gold_probability - everyone.gold_probability).max() < 1e-4
    float32 = linear.fit_predict(inputs, train, float64=False)
    assert float32.float64_models == 0


@pytest.mark.parametrize("options", [None, 2, 3])
def test_predictions_from_the_last_evaluation_equal_a_fresh_product(options):
    inputs = _inputs(options)
    train = draw_partitions(np.random.default_rng(4), inputs.n, 4, 100)
    design = linear.Design.of(inputs)
    with torch.no_grad():
        model = linear._Batched(design, train, c=1.0, dtype=torch.float64)
        theta = torch.randn(
            model.m, model.size, dtype=torch.float64, generator=torch.Generator().manual_seed(0)
        )
        model.value_and_grad(theta, torch.arange(model.m))
        assert model.scored is not None
        reused = model.predict(theta)
        fresh = linear._Batched(design, train, c=1.0, dtype=torch.float64)
        assert fresh.scored is None
        assert fresh.x.dtype == torch.float64  # the whole float64 product, not float32's
        computed = fresh.predict(theta)
        other = theta + 0.1  # other weights than the last evaluation's: computed again
        assert not torch.equal(model.predict(other)[1], reused[1])
    assert torch.equal(reused[0], computed[0])
    assert torch.allclose(reused[1], computed[1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("options", [None, 2])
def test_binary_float64_predictions_from_float32_scores_equal_the_float64_product(options):
    inputs = _inputs(options, n=600)
    train = draw_partitions(np.random.default_rng(6), inputs.n, 6, 100)
    design = linear.Design.of(inputs).select(np.arange(0, 600, 2))  # a selection, as AfLite's
    rng = torch.Generator().manual_seed(1)
    with torch.no_grad():
        model = linear._Batched(design, train[:, ::2], c=1.0, dtype=torch.float64)
        theta = torch.randn(model.m, model.size, dtype=torch.float64, generator=rng) * 0.3
        x64 = torch.from_numpy(design.rows64_of()).reshape(-1, model.d)
        # scores a hair from 0: model j's intercept (or, without one, its weights moved
        # along item j's row) puts item j within 1e-9 of its decision boundary
        for j in range(model.m):
            row = x64[j]
            if model.intercept:
                theta[j, -1] = -(row @ theta[j, : model.d]) + 1e-9 * (-1) ** j
            else:
                theta[j, : model.d] -= (row @ theta[j, : model.d] - 1e-9 * (-1) ** j) / (row @ row) * row
        assert model._x is None
        predicted, gold = model.predict(theta)  # float32 product, float64 where unsure
        assert model._x is None  # the float64 rows were never copied whole
        exact = x64 @ theta[:, : model.d].T + (theta[:, model.d :].T if model.intercept else 0.0)
    assert torch.equal(predicted, (exact > 0).T)
    for j in range(model.m):
        assert bool(predicted[j, j]) == (j % 2 == 0)  # the hair's side, not float32's
    positive = torch.from_numpy(design.labels == 1)
    assert torch.allclose(
        gold.to(torch.float64), torch.sigmoid(torch.where(positive[None, :], exact.T, -exact.T)), atol=1e-5
    )


@pytest.mark.parametrize("options", [None, 2])
def test_binary_float64_predictions_reuse_the_last_float32_evaluation_only_at_its_weights(options):
    inputs = _inputs(options, n=600)
    train = draw_partitions(np.random.default_rng(7), inputs.n, 6, 100)
    design = linear.Design.of(inputs)
    rng = torch.Generator().manual_seed(2)
    with torch.no_grad():
        fast = linear._Batched(design, train, c=1.0, dtype=torch.float32)
        theta = torch.randn(fast.m, fast.size, generator=rng) * 0.3
        fast.value_and_grad(theta, torch.arange(fast.m))
        fresh = linear._Batched(design, train, c=1.0, dtype=torch.float32).to(torch.float64)
        reused = fast.to(torch.float64)
        assert reused.scored32 is not None and fresh.scored32 is None
        for weights in (theta.to(torch.float64), theta.to(torch.float64) + 1e-3):  # at them, elsewhere
            predicted, gold = reused.predict(weights)
            expected, expected_gold = fresh.predict(weights)
            assert torch.equal(predicted, expected)
            assert torch.allclose(gold, expected_gold, rtol=1e-6, atol=1e-7)
        # the reused scores are left as they were (predict works on a copy)
        assert reused.scored32 is not None and fast.scored is not None
        assert torch.equal(reused.scored32[1], fast.scored[1])

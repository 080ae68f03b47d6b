"""The verdict on a written item: what each model of the round makes of it. Pure: no Django
(torch only inside the scorers, which run in the model worker).

The scoring requests are exactly those ``manage.py evaluate`` builds, through the same
functions, so a verdict's scores are an evaluation's per-item scores of the same items:

- a Winograd twin pair is two ``WscItem``s (each sentence cut at its marked pronoun, the two
  candidates, the answer's index), as ``evaluation.release_data.read_wsc`` builds one from a
  release row, scored by ``score_wsc`` with the round's method (partial by default);
- a ComVE pair is scored by ``evaluation.metrics.comve.comve_a_scores``, the function the
  evaluator of subtask A calls, and decided by the papers' perplexity rule.

Both go through ``evaluation.lm.scorers.scorer_for``: one scorer per kind of model.

Per model: ``{"sha256", "method", "twins": [{"choice", "right", "scores", "margin",
"fooled"}, ...], "verdict"}``; ``margin`` = score of the right answer - score of the wrong
one (negative: the model is fooled). An item fools a model that is wrong on at least one
twin; the item's verdict is the strongest over the models (both > one > none).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from annotation.adversarial_content import winograd_questions
from evaluation.lm.methods import TEXT_METHODS, Method, default_method
from evaluation.lm.scorers import ItemScore, WscItem, score_wsc
from evaluation.metrics.comve import comve_a_scores

BOTH, ONE, NONE = "both", "one", "none"
STRENGTH = {NONE: 0, ONE: 1, BOTH: 2}
TWIN_IDS = ("sentence", "twin")
LETTERS = ("A", "B")
#: What ComVE's perplexity rule calls each statement (its index as evaluate records it).
STATEMENTS = ("0", "1")


def winograd_items(content: Mapping[str, Any]) -> list[WscItem]:
    """The twin pair's two questions as ``manage.py evaluate`` reads them from a release's
    ``wsc.jsonl`` row (text_before, pronoun, text_after, candidates, answer)."""
    candidates = (str(content["candidate_a"]), str(content["candidate_b"]))
    return [
        WscItem(
            id=twin_id,
            text_before=marked.before,
            pronoun=marked.pronoun,
            text_after=marked.after,
            candidates=candidates,
            answer=answer,
        )
        for twin_id, (marked, answer) in zip(TWIN_IDS, winograd_questions(content), strict=True)
    ]


def _twin(
    scores: tuple[float, ...] | list[float], right: int, choice: int, letters: tuple[str, ...]
) -> dict[str, Any]:
    return {
        "choice": letters[choice],
        "right": letters[right],
        "scores": [float(s) for s in scores],
        "margin": float(scores[right] - scores[1 - right]),
        "fooled": choice != right,
    }


def model_verdict(twins: list[dict[str, Any]]) -> str:
    """Fooled on both twins, on one, or not at all (a ComVE pair: both or none)."""
    fooled = sum(1 for t in twins if t["fooled"])
    if fooled == 0:
        return NONE
    return BOTH if fooled == len(twins) else ONE


def winograd_twins(scored: list[ItemScore]) -> list[dict[str, Any]]:
    """Each twin's choice, scores and margin from ``score_wsc``'s per-item scores."""
    by_id = {s.id: s for s in scored if s.variant == "original"}
    return [_twin(by_id[i].scores, by_id[i].answer, by_id[i].prediction, LETTERS) for i in TWIN_IDS]


def winograd_verdict(
    model: Any, content: Mapping[str, Any], *, method: str, batch_size: int = 32
) -> dict[str, Any]:
    """One model on a twin pair with the round's ``method`` (partial, full or pll)."""
    twins = winograd_twins(score_wsc(model, winograd_items(content), method, batch_size=batch_size))
    return {"method": str(Method(method).value), "twins": twins, "verdict": model_verdict(twins)}


def comve_method(model: Any, method: str | None) -> str:
    """The whole-text method a ComVE pair is scored with: the round's when it is one that
    fits the model's kind (full: causal, pll: masked), else the model's own."""
    if method in TEXT_METHODS and Method(method).model_kind == model.kind:
        return str(Method(method).value)
    return str(default_method(model.kind).value)


def comve_verdict(
    model: Any, content: Mapping[str, Any], *, method: str | None, batch_size: int = 32
) -> dict[str, Any]:
    """One model on a ComVE pair: the statement of the higher perplexity is the one it
    takes as against common sense (the papers' rule, evaluate's default); the margin is in
    log perplexity (the right statement's minus the other's: negative, fooled)."""
    chosen_method = comve_method(model, method)
    found = comve_a_scores(
        model,
        [(str(content["statement_0"]), str(content["statement_1"]))],
        method=chosen_method,
        batch_size=batch_size,
    )
    right = int(content["false_index"])
    choice = int(found.rules["perplexity"][0])
    logs = [math.log(p) for p in found.perplexities[0]]
    twin = _twin(logs, right, choice, STATEMENTS)
    twin["scores"] = [float(s) for s in found.scores[0]]
    twin["perplexities"] = [float(p) for p in found.perplexities[0]]
    return {"method": chosen_method, "twins": [twin], "verdict": model_verdict([twin])}


def item_verdict(per_model: Mapping[str, Mapping[str, Any]]) -> tuple[str, list[str]]:
    """The item's verdict (the strongest over the models) and the models it fooled."""
    verdict = max((str(m["verdict"]) for m in per_model.values()), key=STRENGTH.__getitem__, default=NONE)
    fooled = [name for name, m in per_model.items() if m["verdict"] != NONE]
    return verdict, fooled

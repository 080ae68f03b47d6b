"""ComVE (SemEval-2020 Task 4) and the Sen-Making pilot: subtask A (which statement is
against common sense), B (which reason explains it) through one choice function, and C
(explanations scored by BLEU); the SemEval submission files beside the metrics."""

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation import release_data
from evaluation.evaluators.base import Evaluated, Evaluator
from evaluation.lm.methods import MODEL_METHODS, TEXT_METHODS, Method
from evaluation.metrics.adversarial import AdversarialOutcome, adversarial_metrics
from evaluation.metrics.comve import (
    COMVE_RULES,
    DEFAULT_COMVE_RULE,
    SUBMISSION_FILES,
    choice_accuracy,
    comve_a_scores,
    explanation_sentence,
    length_normalised_choice,
    lowest,
    perplexity,
    subtask_c_bleu,
)
from evaluation.metrics.significance import accuracy_significance, wilson_interval
from evaluation.models import EvaluationRun
from evaluation.predictions_io import read_label_predictions
from evaluation.runs.errors import EvaluationError
from evaluation.runs.progress import RunProgress
from releases.dataset import Dataset


class ComveEvaluator(Evaluator):
    dataset = Dataset.COMVE
    unfit = {Method.PARTIAL: "scores WSC candidates after the pronoun; ComVE statements have none"}
    results_template = "evaluation/results/comve.html"

    def predictions_check(self, folder: release_data.ReleaseFolder, path: Path) -> None:
        _comve_uploads(path)

    def evaluate(
        self, *, run: EvaluationRun, folder: release_data.ReleaseFolder, model: Any, writer: RunProgress
    ) -> Evaluated:
        return _evaluate_comve(run=run, folder=folder, model=model, writer=writer)


def _best_of_three(scores: Sequence[float]) -> int:
    """The index of the highest of three scores; a tie goes to the first."""
    return max(range(3), key=lambda k: (scores[k], -k))


def _baseline_choice(method: str, golds: list[str], options: Sequence[str], seed: int) -> list[str]:
    if method == Method.FIRST:
        return [options[0]] * len(golds)
    if method == Method.MAJORITY:
        counts = Counter(golds)
        top = max(options, key=lambda o: (counts[o], -options.index(o)))  # ties: the first option
        return [top] * len(golds)
    rng = random.Random(seed)
    return [rng.choice(list(options)) for _ in golds]


@dataclass(frozen=True)
class _Subtask:
    """Subtask A or B: a choice among ``options`` per item, scored the same way."""

    key: str  # "a" | "b": the metrics' and the records' name
    task: str  # "A" | "B": the SemEval file's letter
    items: Sequence[Any]
    options: tuple[str, ...]
    norm_rule: str  # the per-character rule, shown as prediction_norm
    offset: int  # the items before it, for the progress


def _scores_a(
    model: Any, items: Sequence[Any], method: str, batch_size: int, writer: RunProgress, offset: int
) -> tuple[list[list[float]], list[list[float]], dict[str, list[str]]]:
    """Which statement is against common sense: the one the model finds less likely
    (``comve_a_scores``, which adversarial writing's verdict calls too)."""
    found = comve_a_scores(
        model,
        [x.statements for x in items],
        method=method,
        batch_size=batch_size,
        progress=writer.stage(offset, len(items)),
    )
    return found.scores, found.perplexities, found.rules


def _scores_b(
    model: Any, items: Sequence[Any], method: str, batch_size: int, writer: RunProgress, offset: int
) -> tuple[list[list[float]], list[list[float]], dict[str, list[str]]]:
    """Which reason explains the false statement: the option most likely after it."""
    from evaluation.lm.scorers import score_continuations, score_texts, text_token_counts

    half = len(items) // 2
    flat = score_continuations(
        model,
        [(x.false_sent, " " + o) for x in items for o in x.options],
        method=method,
        batch_size=batch_size,
        progress=writer.stage(offset, half),
    )
    scores = [flat[3 * i : 3 * i + 3] for i in range(len(items))]
    sentences = [explanation_sentence(x.false_sent, o) for x in items for o in x.options]
    whole = score_texts(
        model,
        sentences,
        method=method,
        batch_size=batch_size,
        progress=writer.stage(offset + half, len(items) - half),
    )
    counts = text_token_counts(model, sentences, method=method)
    perplexities = [
        [perplexity(whole[3 * i + k], counts[3 * i + k]) for k in range(3)] for i in range(len(items))
    ]
    rules = {
        "perplexity": ["ABC"[lowest(p)] for p in perplexities],
        "continuation": ["ABC"[_best_of_three(s)] for s in scores],
        "continuation_per_character": [
            "ABC"[length_normalised_choice(s, x.options)] for s, x in zip(scores, items, strict=True)
        ],
    }
    return scores, perplexities, rules


_MODEL_SCORES = {"a": _scores_a, "b": _scores_b}


def _evaluate_choice(
    sub: _Subtask,
    *,
    run: EvaluationRun,
    model: Any,
    writer: RunProgress,
    uploaded: dict[str, dict[str, str]],
    metrics: dict[str, Any],
    records: list[dict[str, Any]],
    submissions: dict[str, list[tuple[str, str | int]]],
) -> None:
    """Subtask A or B: the predictions of the run's method, their accuracy (with every
    rule's beside the headline one for a model), the SemEval file and the per-item records."""
    method = run.method
    seed = int(run.settings.get("seed") or 0)
    batch_size = int(run.settings.get("batch_size") or 32)
    ids = [x.id for x in sub.items]
    golds = [str(x.answer) for x in sub.items]
    scores: list[list[float]] | None = None
    perplexities: list[list[float]] = []
    rules: dict[str, list[str]] = {}
    if method in TEXT_METHODS:
        scores, perplexities, rules = _MODEL_SCORES[sub.key](
            model, sub.items, method, batch_size, writer, sub.offset
        )
        preds = rules[_comve_rule(run, sub.key)]
    elif method == Method.PREDICTIONS:
        preds = _take(uploaded, sub.task, ids)
    else:
        preds = _baseline_choice(method, golds, sub.options, seed)
    acc = choice_accuracy(dict(zip(ids, golds, strict=True)), dict(zip(ids, preds, strict=True)))
    metrics[sub.key] = {
        **acc.as_dict(),
        "significance": accuracy_significance(acc.correct, acc.n, chance=1 / len(sub.options)),
    }
    if rules:
        metrics[sub.key].update(_rule_accuracies(sub, _comve_rule(run, sub.key), ids, golds, rules))
    # an adversarial release (subtask A's items written with models in the loop): accuracy per
    # round, on fooling and non-fooling items, per split
    written = adversarial_metrics(
        AdversarialOutcome(
            round=w.round if w else None,
            fooling=bool(w and w.fooling),
            split=w.split if w else None,
            correct=p == g,
        )
        for w, p, g in zip((getattr(x, "written", None) for x in sub.items), preds, golds, strict=True)
    )
    if written is not None:
        metrics["adversarial"] = written
    submissions[SUBMISSION_FILES[sub.task]] = [(x.id, p) for x, p in zip(sub.items, preds, strict=True)]
    for i, (x, p, g) in enumerate(zip(sub.items, preds, golds, strict=True)):
        records.append(
            {
                "id": x.id,
                "variant": sub.key,
                "scores": scores[i] if scores else None,
                "prediction": p,
                "gold": g,
                "correct": p == g,
                **(
                    {
                        "perplexities": [round(v, 6) for v in perplexities[i]],
                        "prediction_by_rule": {name: r[i] for name, r in rules.items()},
                        "prediction_norm": rules[sub.norm_rule][i],
                    }
                    if rules
                    else {}
                ),
            }
        )
    writer(sub.offset + len(sub.items))


def _evaluate_comve(
    *, run: EvaluationRun, folder: release_data.ReleaseFolder, model: Any, writer: RunProgress
) -> Evaluated:
    data = release_data.read_comve(folder, limit=run.settings.get("limit"))
    method = run.method
    writer.total = len(data.a) + len(data.b) + (len(data.c) if method not in MODEL_METHODS else 0)
    metrics: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    submissions: dict[str, list[tuple[str, str | int]]] = {}
    uploaded: dict[str, dict[str, str]] = {}
    if method == Method.PREDICTIONS:
        uploaded = _comve_uploads(Path(run.predictions_path))
    if method == Method.PARTIAL:
        raise EvaluationError("method 'partial' applies to WSC only; use full or pll for ComVE")

    subtasks = (
        _Subtask("a", "A", data.a, ("0", "1"), "per_character", 0),
        _Subtask("b", "B", data.b, ("A", "B", "C"), "continuation_per_character", len(data.a)),
    )
    for sub in subtasks:
        if sub.items:
            _evaluate_choice(
                sub,
                run=run,
                model=model,
                writer=writer,
                uploaded=uploaded,
                metrics=metrics,
                records=records,
                submissions=submissions,
            )

    # Subtask C: generated explanations scored by BLEU.
    if data.c:
        explanations: list[str] | None = None
        metrics_c_note = ""
        if method == Method.PREDICTIONS:
            if "C" in uploaded:
                explanations = _take(uploaded, "C", [x.id for x in data.c])
        elif method in MODEL_METHODS:
            if run.settings.get("generate_explanations") and getattr(model, "kind", None) == "causal":
                from evaluation.lm.generation import PROMPT, generate_explanations

                writer.total += len(data.c)
                explanations = generate_explanations(
                    model,
                    [release_data.model_text(x.false_sent) for x in data.c],
                    progress=writer.stage(len(data.a) + len(data.b), len(data.c)),
                )
                metrics_c_note = f"greedy generation after the prompt {PROMPT!r}"
        else:
            # Baselines: copy the false statement as its own "explanation".
            explanations = [x.false_sent for x in data.c]
        if explanations is None:
            metrics["c"] = {
                "computed": False,
                "reason": "subtask C needs generated explanations: upload them (subtaskC_answers.csv) "
                "as uploaded predictions, or ask a causal LM run to generate them (the option "
                "'generate explanations'); scoring alone ranks given texts",
            }
        else:
            refs = {x.id: list(x.references) for x in data.c}
            bleu = subtask_c_bleu(refs, dict(zip(refs, explanations, strict=True)))
            metrics["c"] = {"computed": True, "n": len(data.c), **bleu.as_dict()}
            if method in MODEL_METHODS:
                metrics["c"]["explanations"] = metrics_c_note
            elif method != Method.PREDICTIONS:
                metrics["c"]["explanations"] = "the false statement copied (baseline)"
            submissions[SUBMISSION_FILES["C"]] = list(zip(refs, explanations, strict=True))
            for xc, e in zip(data.c, explanations, strict=True):
                records.append({"id": xc.id, "variant": "c", "prediction": e, "gold": list(xc.references)})
            writer(writer.total)
    first = metrics.get("a") or metrics.get("b") or {}
    metrics["summary"] = {
        "accuracy": first.get("accuracy"),
        "n": first.get("n"),
        "subtask": "A" if "a" in metrics else "B",
    }
    return metrics, records, submissions, len(records)


def _comve_rule(run: EvaluationRun, subtask: str) -> str:
    """The rule whose answers a run reports as its subtask's accuracy (setting
    ``comve_rule_a`` / ``comve_rule_b``; default: perplexity, as the papers)."""
    rule = str(run.settings.get(f"comve_rule_{subtask}") or DEFAULT_COMVE_RULE)
    if rule not in COMVE_RULES[subtask]:
        raise EvaluationError(
            f"comve_rule_{subtask}: {rule!r} is not a rule of subtask {subtask.upper()} "
            f"({', '.join(COMVE_RULES[subtask])})"
        )
    return rule


def _rule_accuracies(
    sub: _Subtask, headline: str, ids: list[str], golds: list[str], by_rule: dict[str, list[str]]
) -> dict[str, Any]:
    """The headline rule's name and every rule's accuracy beside it (``rules``);
    ``length_normalised`` stays the per-character rule, as before the rules were named."""
    rules: dict[str, Any] = {}
    for name, predictions in by_rule.items():
        acc = choice_accuracy(dict(zip(ids, golds, strict=True)), dict(zip(ids, predictions, strict=True)))
        rules[name] = {
            **acc.as_dict(),
            "wilson_95": list(wilson_interval(acc.correct, acc.n)),
            "rule": COMVE_RULES[sub.key][name],
        }
    return {
        "rule": headline,
        "rule_text": COMVE_RULES[sub.key][headline],
        "rules": rules,
        "length_normalised": rules[sub.norm_rule],
    }


def _comve_uploads(path: Path) -> dict[str, dict[str, str]]:
    """SemEval submission files in a folder (subtaskA/B/C_answers.csv), or one file for A."""
    if path.is_file():
        return {"A": read_label_predictions(path)}
    out = {}
    for task, name in SUBMISSION_FILES.items():
        if (path / name).is_file():
            out[task] = read_label_predictions(path / name)
    if not out:
        raise EvaluationError(f"{path}: no {', '.join(SUBMISSION_FILES.values())} in the folder")
    return out


def _take(uploaded: dict[str, dict[str, str]], task: str, ids: list[str]) -> list[str]:
    if task not in uploaded:
        raise EvaluationError(f"the predictions have no {SUBMISSION_FILES[task]}")
    values = uploaded[task]
    missing = [i for i in ids if i not in values]
    if missing:
        raise EvaluationError(
            f"{SUBMISSION_FILES[task]}: missing prediction for id {missing[0]!r} ({len(missing)} missing)"
        )
    labels = {"A": ("0", "1"), "B": ("A", "B", "C")}.get(task)
    out = []
    for i in ids:
        v = values[i].strip()
        if labels is not None:
            v = v.upper()
            if v not in labels:
                raise EvaluationError(
                    f"{SUBMISSION_FILES[task]}: id {i!r}, field 'label': {values[i]!r} is not one of {', '.join(labels)}"
                )
        out.append(v)
    return out

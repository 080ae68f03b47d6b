"""What an audit feeds its classifiers: the items' labels, fold groups and partial inputs. No Django.

Each data set has one :class:`AuditSpec` (``SPECS``, keyed by the release's data set) that
reads the frozen payloads of a release or a collection (the shapes ``releases.snapshot``
writes) into an :class:`AuditInput`: the items' keys, labels and fold groups, and one
:class:`InputView` per partial-input baseline, each the texts of every item's options
(multiple choice, the label indexes the option) or one text per item (classification):

- Winograd (Trichelair et al. 2019; Elazar et al. 2021): ``full`` (the sentence with each
  candidate in place of the pronoun), ``no_context`` (the same without the text before the
  pronoun: Trichelair's associativity, automated) and ``candidates`` (the candidates
  alone); folds grouped by twin pair, and each baseline also scored by twin pair (both
  twins right).
- WinoWhy (Zhang et al. 2020): ``reason`` (the reason alone, the hypothesis-only analogue)
  and ``question_reason`` (the reason with its question); positive against negative
  reasons (acceptable ones are left out, as the paper's 2,865), folds grouped by question.
- ComVE subtask A (Wang et al. 2020): ``statement`` (each statement alone, without its
  pair: the classifier scores each on its own and picks the one against sense).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from evaluation.audit.errors import AuditInputError
from evaluation.lm.scorers.types import WscText
from evaluation.lm.scorers.wsc import substitute
from evaluation.release_data import model_text


@dataclass(frozen=True)
class InputView:
    """One partial input: ``texts[i]`` are item i's option texts (``multiple_choice``) or
    its one text."""

    name: str
    title: str
    texts: list[list[str]]
    multiple_choice: bool


@dataclass
class AuditInput:
    dataset: str
    keys: list[str]
    labels: npt.NDArray[np.int64]
    groups: list[str] | None
    views: dict[str, InputView]
    #: the view cartography and AfLite read (the whole input)
    full_view: str
    #: the view whose per-option log-probabilities give the language model's own answer
    lm_view: str | None = None
    #: "lower" when the LM's answer is the option with the lowest perplexity per token is
    #: the label (ComVE: the label is the statement against sense, the highest perplexity)
    lm_picks: str = "highest_logprob"
    #: item key -> its twin's key (Winograd: pair scoring)
    twins: dict[str, str] = field(default_factory=dict)
    #: extra per-item labels the page and the real-data figures use (WSC: associative)
    extra: dict[str, list[Any]] = field(default_factory=dict)
    #: what the items are, for messages (a release's NAME@VERSION)
    source_name: str = "the items"

    @property
    def size(self) -> int:
        return len(self.keys)

    def texts(self) -> list[str]:
        """Every distinct text of every view, in first-seen order (what the job computes)."""
        seen: dict[str, None] = {}
        for view in self.views.values():
            for options in view.texts:
                for text in options:
                    seen.setdefault(text, None)
        return list(seen)


class AuditSpec:
    """How one data set's items become an audit's input (one subclass per data set)."""

    dataset = ""
    views: tuple[tuple[str, str], ...] = ()

    def build(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> AuditInput:
        raise NotImplementedError


def _answer(value: Any) -> int | None:
    """A payload's answer as an index: 0/1, or the letters A/B the releases write."""
    if value in (0, 1) and not isinstance(value, bool):
        return int(value)
    letter = str(value or "").strip().upper()
    return {"A": 0, "B": 1}.get(letter)


def _empty(dataset: str, what: str) -> AuditInputError:
    return AuditInputError(f"dataset: the {dataset} items have no labels to audit ({what})")


class WscSpec(AuditSpec):
    dataset = "wsc"
    views = (
        ("full", "full sentence with each candidate"),
        ("no_context", "without the context before the pronoun"),
        ("candidates", "the candidates alone"),
    )

    def build(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> AuditInput:
        keys: list[str] = []
        labels: list[int] = []
        groups: list[str] = []
        texts: dict[str, list[list[str]]] = {name: [] for name, _ in self.views}
        by_id: dict[tuple[str, str], str] = {}
        twin_of: dict[str, tuple[str, str]] = {}
        associative: list[Any] = []
        for key, p in rows:
            answer = _answer(p.get("answer"))
            if answer is None or len(p.get("candidates") or []) != 2:
                continue
            text = WscText(p["text_before"], p["pronoun"], p["text_after"])
            bare = WscText("", p["pronoun"], p["text_after"])
            candidates = [str(c) for c in p["candidates"]]
            keys.append(key)
            labels.append(answer)
            collection = str(p.get("collection") or "")
            by_id[(collection, str(p["id"]))] = key
            if p.get("twin"):
                twin_of[key] = (collection, str(p["twin"]))
            pair = sorted([str(p["id"]), str(p.get("twin") or p["id"])])
            groups.append(f"{collection}:{pair[0]}|{pair[1]}")
            texts["full"].append([model_text(substitute(text, c).sentence) for c in candidates])
            texts["no_context"].append([model_text(substitute(bare, c).sentence) for c in candidates])
            texts["candidates"].append([model_text(c) for c in candidates])
            associative.append(p.get("associative"))
        if not keys:
            raise _empty(self.dataset, "no schema with an answer and two candidates")
        twins = {k: by_id[t] for k, t in twin_of.items() if t in by_id}
        return AuditInput(
            dataset=self.dataset,
            keys=keys,
            labels=np.asarray(labels, dtype=np.int64),
            groups=groups,
            views={n: InputView(n, title, texts[n], True) for n, title in self.views},
            full_view="full",
            lm_view="full",
            twins=twins,
            extra={"associative": associative},
        )


class WinoWhySpec(AuditSpec):
    dataset = "winowhy"
    views = (
        ("reason", "the reason alone"),
        ("question_reason", "the reason with its question"),
    )

    def build(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> AuditInput:
        keys: list[str] = []
        labels: list[int] = []
        groups: list[str] = []
        texts: dict[str, list[list[str]]] = {name: [] for name, _ in self.views}
        for key, p in rows:
            answer = _answer(p.get("answer"))
            if p.get("label") not in ("positive", "negative") or answer is None:
                continue
            reason = model_text(str(p["text"]))
            answer_text = str(p["candidates"][answer])
            question = f"{model_text(p['sentence'])} '{p['pronoun']}' refers to {answer_text} because"
            keys.append(key)
            labels.append(1 if p["label"] == "positive" else 0)
            groups.append(f"{p.get('collection') or key.split(':')[0]}:{p['schema_id']}")
            texts["reason"].append([reason])
            texts["question_reason"].append([f"{question} {reason}"])
        if not keys:
            raise _empty(self.dataset, "no reason labelled positive or negative")
        return AuditInput(
            dataset=self.dataset,
            keys=keys,
            labels=np.asarray(labels, dtype=np.int64),
            groups=groups,
            views={n: InputView(n, title, texts[n], False) for n, title in self.views},
            full_view="question_reason",
        )


class ComveSpec(AuditSpec):
    dataset = "comve"
    views = (("statement", "each statement alone, without its pair"),)

    def build(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> AuditInput:
        keys: list[str] = []
        labels: list[int] = []
        statements: list[list[str]] = []
        for key, p in rows:
            if not p.get("has_a", True) or p.get("false_index") not in (0, 1):
                continue
            keys.append(key)
            labels.append(int(p["false_index"]))
            statements.append([model_text(str(p["sent0"])), model_text(str(p["sent1"]))])
        if not keys:
            raise _empty(self.dataset, "no subtask-A item with the statement against sense marked")
        return AuditInput(
            dataset=self.dataset,
            keys=keys,
            labels=np.asarray(labels, dtype=np.int64),
            groups=None,
            views={"statement": InputView("statement", self.views[0][1], statements, True)},
            full_view="statement",
            lm_view="statement",
            lm_picks="highest_perplexity",
        )


class SenMakingSpec(ComveSpec):
    dataset = "senmaking"


SPECS: dict[str, AuditSpec] = {s.dataset: s for s in (WscSpec(), WinoWhySpec(), ComveSpec(), SenMakingSpec())}


def audit_input(dataset: str, rows: Iterable[tuple[str, dict[str, Any]]]) -> AuditInput:
    spec = SPECS.get(dataset)
    if spec is None:
        raise AuditInputError(f"dataset: {dataset!r} cannot be audited; choose one of {', '.join(SPECS)}")
    return spec.build(rows)

"""ComVE (SemEval-2020 Task 4) metrics and submission files.

Official scorer: github.com/wangcunxiang/SemEval2020-Task4-Commonsense-Validation-and-Explanation,
``evaluation tools/taskC_scorer.py`` and ``starting_kit/scoring_program/evaluate.py``
(commit ce9430a), itself adapted from tensorflow/nmt ``nmt/scripts/bleu.py``:

- subtasks A and B: accuracy; every gold id needs exactly one prediction, extra ids are
  an error;
- subtask C: corpus BLEU over whitespace tokens (``str.split()``), n-grams up to order
  4, n-gram counts clipped by the maximum count over an item's references, precisions
  summed over the corpus, NO smoothing (a zero precision makes BLEU 0), geometric mean
  with equal weights, brevity penalty ``exp(1 - r/c)`` when ``c <= r`` where ``r`` sums
  the length of the SHORTEST reference of each item (not the closest, as in
  nltk/sacrebleu) and ``c`` the candidate lengths. Empty reference strings are dropped.

The official script crashes (ZeroDivisionError) when every prediction is empty or every
shortest reference is empty; here that yields BLEU 0 (no candidate words) or a brevity
penalty of 1 (no reference words), and ``BleuResult`` says which.

Submission files (no header): ``subtaskA_answers.csv`` rows ``id,label`` (label = index
0/1 of the statement against common sense), ``subtaskB_answers.csv`` rows ``id,label``
(A/B/C), ``subtaskC_answers.csv`` rows ``id,explanation`` (CSV-quoted as needed).
"""

import csv
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evaluation.metrics.common import Accuracy

SUBMISSION_FILES = {
    "A": "subtaskA_answers.csv",
    "B": "subtaskB_answers.csv",
    "C": "subtaskC_answers.csv",
}


def _match_ids(gold_ids: Iterable[str], prediction_ids: Iterable[str]) -> None:
    gold, predicted = list(gold_ids), set(prediction_ids)
    missing = [i for i in gold if i not in predicted]
    if missing:
        raise ValueError(f"missing prediction for id {missing[0]!r} ({len(missing)} missing)")
    extra = sorted(predicted - set(gold))
    if extra:
        raise ValueError(f"{len(extra)} extra predictions, for example: {', '.join(extra[:3])}")


def choice_accuracy(gold: Mapping[str, str], predictions: Mapping[str, str]) -> Accuracy:
    """Subtasks A and B: labels compared as strings, as the official scorer does."""
    _match_ids(gold, predictions)
    return Accuracy(n=len(gold), correct=sum(1 for i, label in gold.items() if predictions[i] == label))


def length_normalised_choice(scores: Sequence[float], texts: Sequence[str], *, lowest: bool = False) -> int:
    """The index of the highest (``lowest``: the lowest) log-likelihood per character of
    its text, as lm-evaluation-harness's ``acc_norm`` divides by ``len(choice)``; ties go
    to the first."""
    if len(scores) != len(texts) or not scores:
        raise ValueError("one score per text, at least one")
    per_char = [s / max(len(t), 1) for s, t in zip(scores, texts, strict=True)]
    sign = -1.0 if lowest else 1.0
    return max(range(len(per_char)), key=lambda k: (sign * per_char[k], -k))


# The rules that choose an answer in subtasks A and B from a language model's scores.
# "perplexity" is what Wang et al. 2019 (section 4) and the SemEval-2020 Task 4 proposal
# (section 5) did, and the default; the others are kept by name and reported beside it.
COMVE_RULES: dict[str, dict[str, str]] = {
    "a": {
        "perplexity": "the statement with the higher perplexity is against common sense "
        "(Wang et al. 2019 section 4; task proposal section 5)",
        "total": "the statement with the lower total log-probability is against common sense",
        "per_character": "the lower log-probability per character (lm-evaluation-harness acc_norm)",
    },
    "b": {
        "perplexity": 'the reason whose sentence \'"<false statement>" is against common sense because '
        "<reason>' has the lowest perplexity (Wang et al. 2019 section 4; task proposal section 5)",
        "continuation": "the reason with the highest log-probability after the false statement",
        "continuation_per_character": "the highest log-probability per character of the reason after the "
        "false statement (lm-evaluation-harness acc_norm)",
    },
}
DEFAULT_COMVE_RULE = "perplexity"
# Runs made before the rules were named used these as their headline (23 Nov 2026).
RULE_BEFORE_NAMED = {"a": "total", "b": "continuation"}


def explanation_sentence(false_statement: str, reason: str) -> str:
    """Subtask B's sentence as the papers build it: '"he put an elephant into the fridge" is
    against common sense because an elephant cannot eat a fridge'. Both texts as given."""
    return f'"{false_statement}" is against common sense because {reason}'


def perplexity(log_probability: float, tokens: int) -> float:
    """exp of the negative mean log-probability per token (natural log)."""
    if tokens <= 0:
        raise ValueError("a perplexity needs at least one token")
    return math.exp(-log_probability / tokens)


def lowest(values: Sequence[float]) -> int:
    """The index of the lowest value; ties go to the first."""
    return min(range(len(values)), key=lambda k: (values[k], k))


@dataclass(frozen=True)
class ComveAScores:
    """Subtask A's scores for pairs of statements: each statement's score (log P, or PLL),
    its perplexity, and each rule's choice of the statement against common sense ("0"/"1")."""

    scores: list[list[float]]
    perplexities: list[list[float]]
    rules: dict[str, list[str]]


def comve_a_scores(
    model: Any,
    pairs: Sequence[tuple[str, str]],
    *,
    method: str,
    batch_size: int = 32,
    progress: Any = None,
) -> ComveAScores:
    """Which statement of each pair is against common sense: the one the model finds less
    likely. The ONE place subtask A's scoring requests are built (``manage.py evaluate`` and
    adversarial writing's verdict both call it): each statement scored whole by the scorer
    of the model's kind (``evaluation.lm.scorers``), its perplexity over the tokens scored."""
    from evaluation.lm.scorers import score_texts, text_token_counts

    texts = [s for pair in pairs for s in pair]
    flat = score_texts(model, texts, method=method, batch_size=batch_size, progress=progress)
    counts = text_token_counts(model, texts, method=method)
    n = len(pairs)
    scores = [[flat[2 * i], flat[2 * i + 1]] for i in range(n)]
    perplexities = [[perplexity(flat[2 * i + k], counts[2 * i + k]) for k in (0, 1)] for i in range(n)]
    rules = {
        # against common sense: the higher perplexity (ties: statement 0)
        "perplexity": ["0" if p[0] >= p[1] else "1" for p in perplexities],
        "total": ["0" if s[0] < s[1] else "1" for s in scores],
        "per_character": [
            str(length_normalised_choice(s, pair, lowest=True)) for s, pair in zip(scores, pairs, strict=True)
        ],
    }
    return ComveAScores(scores=scores, perplexities=perplexities, rules=rules)


def ngram_counts(tokens: Sequence[str], max_order: int) -> Counter[tuple[str, ...]]:
    counts: Counter[tuple[str, ...]] = Counter()
    for order in range(1, max_order + 1):
        for start in range(len(tokens) - order + 1):
            counts[tuple(tokens[start : start + order])] += 1
    return counts


@dataclass(frozen=True)
class BleuResult:
    bleu: float
    precisions: tuple[float, ...]
    brevity_penalty: float
    ratio: float
    translation_length: int
    reference_length: int
    matches: tuple[int, ...]
    possible: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["bleu_percent"] = round(self.bleu * 100, 4)  # the official script prints bleu*100 to 4 places
        return d


def corpus_bleu(
    references: Sequence[Sequence[Sequence[str]]],
    translations: Sequence[Sequence[str]],
    *,
    max_order: int = 4,
    smooth: bool = False,
) -> BleuResult:
    """BLEU of tokenised ``translations`` against tokenised ``references`` (a list per item)."""
    if len(references) != len(translations):
        raise ValueError(f"{len(references)} reference lists for {len(translations)} translations")
    matches = [0] * max_order
    possible = [0] * max_order
    reference_length = 0
    translation_length = 0
    for index, (refs, hyp) in enumerate(zip(references, translations, strict=True)):
        if not refs:
            raise ValueError(f"item {index}: no reference")
        reference_length += min(len(r) for r in refs)
        translation_length += len(hyp)
        clip: Counter[tuple[str, ...]] = Counter()
        for ref in refs:
            clip |= ngram_counts(ref, max_order)  # max count over the references
        overlap = ngram_counts(hyp, max_order) & clip
        for ngram, count in overlap.items():
            matches[len(ngram) - 1] += count
        for order in range(1, max_order + 1):
            if len(hyp) - order + 1 > 0:
                possible[order - 1] += len(hyp) - order + 1

    precisions: list[float] = []
    for order in range(max_order):
        if smooth:
            precisions.append((matches[order] + 1.0) / (possible[order] + 1.0))
        else:
            precisions.append(matches[order] / possible[order] if possible[order] > 0 else 0.0)
    geo_mean = math.exp(sum(math.log(p) / max_order for p in precisions)) if min(precisions) > 0 else 0.0

    if reference_length == 0:
        ratio, bp = math.inf, 1.0
    elif translation_length == 0:
        ratio, bp = 0.0, 0.0
    else:
        ratio = translation_length / reference_length
        bp = 1.0 if ratio > 1.0 else math.exp(1 - 1.0 / ratio)
    return BleuResult(
        bleu=geo_mean * bp,
        precisions=tuple(precisions),
        brevity_penalty=bp,
        ratio=ratio,
        translation_length=translation_length,
        reference_length=reference_length,
        matches=tuple(matches),
        possible=tuple(possible),
    )


def subtask_c_bleu(
    references: Mapping[str, Sequence[str]], predictions: Mapping[str, str], *, max_order: int = 4
) -> BleuResult:
    """Subtask C as the official scorer: ids matched, whitespace tokens, empty references dropped."""
    _match_ids(references, predictions)
    ref_corpus: list[list[list[str]]] = []
    hyp_corpus: list[list[str]] = []
    for item_id, refs in references.items():
        tokens = [r.split() for r in refs if r]
        if not tokens:
            raise ValueError(f"id {item_id!r}: no reference sentence")
        ref_corpus.append(tokens)
        hyp_corpus.append(predictions[item_id].split())
    return corpus_bleu(ref_corpus, hyp_corpus, max_order=max_order)


def write_submission(path: Path, rows: Iterable[tuple[str, str | int]]) -> int:
    """Write ``id,value`` rows without a header (the official format); returns the row count."""
    count = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        for item_id, value in rows:
            writer.writerow([item_id, value])
            count += 1
    return count

"""Agreement of a campaign: gather its judgments, compute the figures, shape the charts.

Reads, and one write: the headline figure kept for the curator dashboard
(:func:`agreement_headline_store`). The computation is :mod:`annotation.agreement`; this
module turns a campaign's judgments into codes and the results into plain, JSON-ready dicts.

- :func:`campaign_agreement_summary` is the one function the release dataset card calls.
  By default it names no annotator (researchers may not see identities): annotators appear
  as "annotator 1..n" in order of their user id. Curator pages pass ``identities=True``.
- :func:`campaign_chart` gives the numbers behind each chart on the curator's page
  (also downloadable as CSV and JSON).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from django.utils import timezone

from annotation.agreement import stats as ag
from annotation.models import AgreementHeadline, Campaign, CampaignItem, Judgment, Task
from annotation.task_types import task_spec, task_type
from core.tables import frame_records
from datasets.models import KnowledgeType, ReasonOrigin

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
BOOTSTRAP_LEVEL = 0.95


@dataclass(frozen=True)
class CampaignJudgments:
    """A campaign's categorical judgments as codes, with what the codes stand for."""

    codes: ag.Codes  # items are CampaignItem ids, raters are user ids
    usernames: dict[int, str]
    gold_answer: dict[int, str]  # campaign item id -> gold answer, gold items only
    items_total: int


JUDGMENT_COLUMNS = [
    "judgment",
    "item",
    "schema",
    "reason",
    "comve_item",
    "annotator",
    "answer",
    "text",
    "is_gold",
    "gold_answer",
    "correct",
    "duration_ms",
    "submitted_at",
]


def _judgment_rows(campaign: Campaign, *, answered_only: bool = False) -> pd.DataFrame:
    judgments = Judgment.objects.filter(campaign_item__campaign=campaign)
    if answered_only:
        judgments = judgments.exclude(answer="")
    rows = judgments.order_by("campaign_item_id", "annotator_id", "id").values_list(
        "id",
        "campaign_item_id",
        "campaign_item__schema_id",
        "campaign_item__reason_id",
        "campaign_item__comve_item_id",
        "annotator_id",
        "annotator__username",
        "answer",
        "text",
        "campaign_item__is_gold",
        "campaign_item__gold_answer",
        "duration_ms",
        "submitted_at",
    )
    columns = [
        *JUDGMENT_COLUMNS[:5],
        "annotator_id",
        "username",
        *JUDGMENT_COLUMNS[6:10],
        "duration_ms",
        "submitted_at",
    ]
    return pd.DataFrame.from_records(list(rows), columns=columns)


def campaign_judgments_frame(*, campaign: Campaign, identities: bool = False) -> pd.DataFrame:
    """Every judgment of the campaign, one row each, by item then annotator (``JUDGMENT_COLUMNS``).

    ``item`` is the campaign item; ``schema``, ``reason``, ``comve_item`` the item it shows
    (Int64, NA where it shows another kind); ``annotator`` the user name with
    ``identities`` (curators), else "annotator N", N counting the campaign's annotators by
    user id as the agreement pages do; ``answer`` the category chosen ("" on free-text
    tasks) and ``text`` the free text; ``gold_answer`` and ``correct`` (boolean) only on
    gold items; ``submitted_at`` in UTC.
    """
    raw = _judgment_rows(campaign)
    order = {uid: i for i, uid in enumerate(sorted(set(raw["annotator_id"])))}
    names = (
        raw["username"] if identities else raw["annotator_id"].map(lambda uid: f"annotator {order[uid] + 1}")
    )
    frame = raw.drop(columns=["annotator_id", "username"])
    frame.insert(5, "annotator", names)
    gold = frame["is_gold"].astype(bool)
    frame["gold_answer"] = frame["gold_answer"].where(gold)
    frame["correct"] = (frame["answer"] == frame["gold_answer"]).astype("boolean").where(gold)
    frame["submitted_at"] = pd.to_datetime(frame["submitted_at"], utc=True)
    return frame.astype(
        {
            "judgment": "int64",
            "item": "int64",
            "schema": "Int64",
            "reason": "Int64",
            "comve_item": "Int64",
            "annotator": "str",
            "answer": "str",
            "text": "str",
            "is_gold": "bool",
            "duration_ms": "Int64",
        }
    )[JUDGMENT_COLUMNS]


def campaign_judgments(*, campaign: Campaign) -> CampaignJudgments:
    """Every non-empty answer of the campaign, encoded for :mod:`annotation.agreement`."""
    raw = _judgment_rows(campaign, answered_only=True)
    # the answers the annotation pages offer, in their order, then any others seen
    order = list(task_spec(campaign.task).choice_values)
    categories = order + sorted(set(raw["answer"]) - set(order))
    if len(raw):
        codes = ag.encode(
            raw["item"].to_numpy(dtype=np.int64),
            raw["annotator_id"].to_numpy(dtype=np.int64),
            raw["answer"].to_numpy(dtype=object),
            categories=categories,
        )
    else:
        empty = np.zeros(0, dtype=np.int64)
        codes = ag.Codes(empty, empty, empty, [], [], categories)
    raters = raw.drop_duplicates("annotator_id")
    gold = CampaignItem.objects.filter(campaign=campaign, is_gold=True).values_list("id", "gold_answer")
    return CampaignJudgments(
        codes=codes,
        usernames=dict(zip(raters["annotator_id"].astype(int), raters["username"].astype(str), strict=True)),
        gold_answer={int(k): str(v) for k, v in gold},
        items_total=CampaignItem.objects.filter(campaign=campaign).count(),
    )


# --------------------------------------------------------------------------- figures


def _figure(value: float | None, reason: str | None, ci: ag.Interval | None) -> dict[str, Any]:
    return {
        "value": value,
        "ci_low": ci.low if ci else None,
        "ci_high": ci.high if ci else None,
        "undefined": reason,
    }


def _table_block(table: np.ndarray) -> dict[str, Any]:
    f = ag.table_figures(table, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED, level=BOOTSTRAP_LEVEL)
    return {
        "items_pairable": f.items_pairable,
        "fleiss_kappa": _figure(f.fleiss_kappa, f.fleiss_kappa_reason, f.fleiss_kappa_ci),
        "pairwise_agreement": _figure(
            f.pairwise_agreement, f.pairwise_agreement_reason, f.pairwise_agreement_ci
        ),
        "krippendorff_alpha": _figure(
            f.krippendorff_alpha, f.krippendorff_alpha_reason, f.krippendorff_alpha_ci
        ),
    }


def _annotator_names(data: CampaignJudgments, identities: bool) -> list[str]:
    if identities:
        return [data.usernames.get(int(r), f"user {r}") for r in data.codes.raters]
    return [f"annotator {i + 1}" for i in range(data.codes.n_raters)]  # raters are sorted by id


ANNOTATOR_COLUMNS = [
    "annotator",
    "judgments",
    "compared_with_majority",
    "agreed_with_majority",
    "majority_agreement",
    "gold_seen",
    "gold_correct",
    "gold_accuracy",
]
COHEN_COLUMNS = ["annotator_a", "annotator_b", "items", "observed_agreement", "cohen_kappa", "undefined"]


def _share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    """part / whole as floats, NaN where whole is 0 (no share, never a fake 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(whole > 0, part / np.where(whole > 0, whole, 1), np.nan)


def _per_annotator(data: CampaignJudgments, identities: bool) -> tuple[pd.DataFrame, dict[str, Any]]:
    c = data.codes
    names = _annotator_names(data, identities)
    majority = ag.majority_agreement(c.item_idx, c.rater_idx, c.category_idx, c.n_raters, c.n_categories)
    item_ids = np.asarray(c.items, dtype=np.int64)[c.item_idx] if c.items else np.zeros(0, np.int64)
    on_gold = np.isin(item_ids, list(data.gold_answer)) if data.gold_answer else np.zeros(len(item_ids), bool)
    gold_idx = np.flatnonzero(on_gold)
    correct = np.array(
        [c.categories[c.category_idx[j]] == data.gold_answer[int(item_ids[j])] for j in gold_idx], dtype=bool
    )
    gold = ag.gold_accuracy(c.rater_idx[gold_idx], correct, c.n_raters)
    table = pd.DataFrame(
        {
            "annotator": pd.Series(names, dtype="str"),
            "judgments": majority.judgments.astype(np.int64),
            "compared_with_majority": majority.compared,
            "agreed_with_majority": majority.agreed,
            "majority_agreement": _share(majority.agreed, majority.compared),
            "gold_seen": gold.seen.astype(np.int64),
            "gold_correct": gold.correct,
            "gold_accuracy": _share(gold.correct, gold.seen),
        },
        columns=ANNOTATOR_COLUMNS,
    )
    compared, agreed = int(majority.compared.sum()), int(majority.agreed.sum())
    # This interval resamples the compared judgments (a mean of 0/1), not items.
    overall = {
        "majority_agreement": _figure(
            agreed / compared if compared else None,
            None if compared else "no judgment had other judgments with a unique majority to compare with",
            ag.bootstrap_interval(
                np.concatenate([np.ones(agreed), np.zeros(compared - agreed)]),
                resamples=BOOTSTRAP_RESAMPLES,
                seed=BOOTSTRAP_SEED,
                level=BOOTSTRAP_LEVEL,
            )
            if compared
            else None,
        ),
        "gold_accuracy": _figure(
            float(correct.mean()) if correct.size else None,
            None if correct.size else "no judgment on a gold item",
            ag.bootstrap_interval(
                correct.astype(np.float64), resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED
            )
            if correct.size
            else None,
        ),
    }
    overall["majority_agreement"]["judgments_compared"] = compared
    overall["gold_accuracy"]["judgments_on_gold"] = int(correct.size)
    return table, overall


def _cohen_table(data: CampaignJudgments, identities: bool) -> pd.DataFrame:
    """Cohen's kappa per pair of annotators who share an item (``COHEN_COLUMNS``)."""
    c = data.codes
    names = np.asarray(_annotator_names(data, identities), dtype=object)
    pairs = pd.DataFrame(
        [asdict(p) for p in ag.cohen_kappa_pairs(c.item_idx, c.rater_idx, c.category_idx, c.n_categories)],
        columns=["rater_a", "rater_b", "items", "observed", "kappa", "reason"],
    )
    table = pd.DataFrame(
        {
            "annotator_a": names[pairs["rater_a"].to_numpy(dtype=np.int64)],
            "annotator_b": names[pairs["rater_b"].to_numpy(dtype=np.int64)],
            "items": pairs["items"].astype(np.int64),
            "observed_agreement": pairs["observed"].astype(np.float64),
            "cohen_kappa": pairs["kappa"].astype(np.float64),
            "undefined": pairs["reason"].astype(object),
        },
        columns=COHEN_COLUMNS,
    )
    return table.astype({"annotator_a": "str", "annotator_b": "str"})


def _item_groups(campaign: Campaign, item_ids: list[int]) -> dict[str, dict[str, list[int]]]:
    """Item positions grouped by reason origin and by knowledge type (of the item's schema)."""
    by_origin: dict[str, list[int]] = defaultdict(list)
    by_type: dict[str, list[int]] = defaultdict(list)
    position = {item_id: i for i, item_id in enumerate(item_ids)}
    for item_id, origin, reason_types, schema_types in CampaignItem.objects.filter(
        campaign=campaign, pk__in=item_ids
    ).values_list("id", "reason__origin", "reason__schema__knowledge_types", "schema__knowledge_types"):
        if origin:
            by_origin[origin].append(position[item_id])
        for kt in reason_types or schema_types or []:
            by_type[str(kt)].append(position[item_id])
    groups = {}
    if by_origin:
        groups["reason origin"] = dict(sorted(by_origin.items()))
    if by_type:
        groups["knowledge type"] = dict(sorted(by_type.items()))
    return groups


def campaign_agreement_summary(
    *,
    campaign: Campaign,
    identities: bool = False,
    include_pairs: bool = True,
    data: CampaignJudgments | None = None,
) -> dict[str, Any]:
    """Every agreement figure of a campaign as a JSON-ready dict (the dataset card quotes it).

    Figures carry ``value``, ``ci_low``/``ci_high`` (95% percentile bootstrap over items,
    1,000 resamples, seed 0) and ``undefined`` (why there is no value, else None); no NaN.
    """
    data = data if data is not None else campaign_judgments(campaign=campaign)
    c = data.codes
    summary: dict[str, Any] = {
        "campaign": campaign.name,
        "task": campaign.task,
        "task_label": Task(campaign.task).label if campaign.task in Task.values else campaign.task,
        "imported": campaign.imported,
        "judgments_per_item": campaign.judgments_per_item,
        "items": data.items_total,
        "items_judged": c.n_items,
        "judgments": int(c.item_idx.size),
        "annotators": c.n_raters,
        "categories": c.categories,
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": BOOTSTRAP_SEED, "level": BOOTSTRAP_LEVEL},
        "definitions": {
            "fleiss_kappa": "Fleiss (1971) over the items x answers count table; equals statsmodels fleiss_kappa",
            "pairwise_agreement": "WinoWhy's IAA: per item the share of annotator pairs that agree, averaged over items",
            "krippendorff_alpha": "nominal metric, missing answers allowed; equals the krippendorff package",
            "majority_agreement": "a judgment agrees when it equals the unique plurality of the item's other judgments",
            "cohen_kappa": "per annotator pair, over the items both answered",
        },
        "notes": campaign_notes(campaign=campaign),
    }
    if task_spec(campaign.task).free_text:
        summary["applicable"] = False
        summary["not_applicable"] = "a free-text task: answers are texts, not categories"
        return summary
    summary["applicable"] = True
    table = c.table()
    summary["figures"] = _table_block(table)
    annotators, overall = _per_annotator(data, identities)
    summary["figures"].update(overall)
    try:
        category_kappas: list[float | None] = ag.category_kappas(table)
    except ag.UndefinedAgreement:
        category_kappas = [None] * c.n_categories
    totals = table.sum(axis=0)
    summary["per_category"] = [
        {
            "category": cat,
            "judgments": int(totals[j]),
            "share": float(totals[j] / totals.sum()) if totals.sum() else None,
            "fleiss_kappa": category_kappas[j],
            "undefined": None if category_kappas[j] is not None else "category never or always chosen",
        }
        for j, cat in enumerate(c.categories)
    ]
    summary["groups"] = []
    for group_by, groups in _item_groups(campaign, [int(i) for i in c.items]).items():
        for group, positions in groups.items():
            sub = table[np.asarray(positions, dtype=np.int64)]
            block = _table_block(sub)
            summary["groups"].append(
                {"group_by": group_by, "group": group, "items": len(positions), "judgments": int(sub.sum())}
                | block
            )
    summary["per_annotator"] = frame_records(annotators)
    if include_pairs:
        summary["cohen_pairs"] = frame_records(_cohen_table(data, identities))
    return summary


#: The figure the dashboard and the campaign list show for a campaign (the agreement page's first).
HEADLINE_FIGURE = "fleiss_kappa"


def agreement_headline_store(*, campaign: Campaign, summary: dict[str, Any]) -> AgreementHeadline | None:
    """Keep the headline figure of ``summary`` (from :func:`campaign_agreement_summary` of
    ``campaign``) for the dashboard: the same value and interval the agreement page shows.
    None for a free-text task (no figure): nothing is kept."""
    if not summary.get("applicable"):
        AgreementHeadline.objects.filter(campaign=campaign).delete()
        return None
    figure = summary["figures"][HEADLINE_FIGURE]
    headline, _ = AgreementHeadline.objects.update_or_create(
        campaign=campaign,
        defaults={
            "figure": HEADLINE_FIGURE,
            "value": figure["value"],
            "ci_low": figure["ci_low"],
            "ci_high": figure["ci_high"],
            "undefined": figure["undefined"] or "",
            "judgments": summary["judgments"],
            "computed_at": timezone.now(),
        },
    )
    return headline


def agreement_headline_compute(*, campaign: Campaign) -> AgreementHeadline | None:
    """Compute the campaign's agreement as its page does and keep the headline figure."""
    summary = campaign_agreement_summary(campaign=campaign, include_pairs=False)
    return agreement_headline_store(campaign=campaign, summary=summary)


#: The figures of the agreement page with their labels; those in PERCENT_FIGURES are shares.
FIGURE_LABELS: dict[str, str] = {
    "fleiss_kappa": "Fleiss' kappa",
    "pairwise_agreement": "Average pairwise agreement",
    "krippendorff_alpha": "Krippendorff's alpha (nominal)",
    "majority_agreement": "Agreement with the majority (leave-one-out)",
    "gold_accuracy": "Accuracy on gold items",
    "share": "Share of the judgments",
}
PERCENT_FIGURES = frozenset({"pairwise_agreement", "majority_agreement", "gold_accuracy", "share"})
GROUP_FIGURES = ("fleiss_kappa", "pairwise_agreement", "krippendorff_alpha")
FIGURE_COLUMNS = [
    "scope",
    "group",
    "figure",
    "label",
    "value",
    "ci_low",
    "ci_high",
    "undefined",
    "items",
    "judgments",
]


def campaign_figures(summary: dict[str, Any]) -> pd.DataFrame:
    """Every figure of :func:`campaign_agreement_summary`, one row per figure.

    ``scope`` is ``campaign`` (the whole campaign), ``answer`` (one answer against the rest:
    its ``share`` of the judgments and its Fleiss' kappa; ``group`` names the answer) or the
    label the items are grouped by (``reason origin``, ``knowledge type``; ``group`` is the
    label's value). ``items`` and ``judgments`` count what the figure was computed on
    (agreement with the majority: the compared judgments; gold accuracy: the judgments on
    gold items). The agreement page's tables and the figures' CSV are this frame."""
    rows: list[dict[str, Any]] = []
    if summary.get("applicable"):
        total = {"items": summary["items_judged"], "judgments": summary["judgments"]}
        for key, fig in summary["figures"].items():
            if isinstance(fig, dict):
                judged = fig.get("judgments_compared", fig.get("judgments_on_gold", total["judgments"]))
                rows.append(
                    {"scope": "campaign", "group": "", "figure": key, **fig} | total | {"judgments": judged}
                )
        for cat in summary["per_category"]:
            answer = {"scope": "answer", "group": cat["category"], "judgments": cat["judgments"]}
            rows.append(answer | {"figure": "share", "value": cat["share"]})
            rows.append(
                answer
                | {"figure": "fleiss_kappa", "value": cat["fleiss_kappa"], "undefined": cat["undefined"]}
            )
        for group in summary["groups"]:
            counts = {"scope": group["group_by"], "group": group["group"], "items": group["items"]}
            rows += [
                counts | {"figure": key, **group[key], "judgments": group["judgments"]}
                for key in GROUP_FIGURES
            ]
    frame = pd.DataFrame.from_records(rows, columns=[c for c in FIGURE_COLUMNS if c != "label"])
    frame.insert(3, "label", frame["figure"].map(FIGURE_LABELS))
    return frame.astype(
        {
            "scope": "str",
            "group": "str",
            "figure": "str",
            "label": "str",
            "value": "float64",
            "ci_low": "float64",
            "ci_high": "float64",
            "undefined": "object",
            "items": "Int64",
            "judgments": "Int64",
        }
    )[FIGURE_COLUMNS]


def figures_by_group(figures: pd.DataFrame, scope: str) -> pd.DataFrame:
    """The rows of one ``scope`` of :func:`campaign_figures` side by side, one row per
    ``group``: ``items``, ``judgments`` and per figure ``FIGURE``, ``FIGURE_low``,
    ``FIGURE_high``, ``FIGURE_undefined`` (the per-answer and per-label tables)."""
    part = figures[figures["scope"] == scope]
    groups = pd.unique(part["group"])
    wide = part.pivot(index="group", columns="figure", values=["value", "ci_low", "ci_high", "undefined"])
    out = pd.DataFrame(index=pd.Index(groups, name="group"))
    counts = part.groupby("group", sort=False)[["items", "judgments"]].first()
    out = out.join(counts)
    for key in pd.unique(part["figure"]):
        out[key] = wide[("value", key)]
        out[f"{key}_low"] = wide[("ci_low", key)]
        out[f"{key}_high"] = wide[("ci_high", key)]
        out[f"{key}_undefined"] = wide[("undefined", key)]
    return out.reset_index()


def campaign_notes(*, campaign: Campaign) -> list[str]:
    notes = []
    selection = campaign.selection or {}
    if campaign.imported and selection.get("votes_format") == "winowhy":
        notes.append(
            "Imported from WinoWhy's released plausibility scores (share of 5 votes). The data set does "
            "not say who voted, so each reason's votes were given to 5 anonymous raters in a seeded "
            "random order. Fleiss' kappa, pairwise agreement and Krippendorff's alpha do not depend on "
            "who the raters are; Cohen's kappa per pair and agreement per annotator describe that "
            "assignment, not real people."
        )
    elif campaign.imported:
        notes.append("Imported votes from a published data set (see the campaign's selection for the file).")
    return notes


# --------------------------------------------------------------------------- charts

CHARTS: dict[str, str] = {
    "plausibility-by-origin": "Plausibility scores by reason origin (WinoWhy figure 5)",
    "knowledge-types": "Knowledge types (WinoWhy figure 4)",
    "annotator-agreement": "Agreement with the majority per annotator",
}
TABLES: dict[str, str] = CHARTS | {"cohen-pairs": "Cohen's kappa per annotator pair"}
SCORE_BINS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


def _empty_if(frame: pd.DataFrame, reason: str) -> pd.DataFrame:
    """``frame`` with ``attrs["empty"]``: why it has no rows (None when it has some)."""
    frame.attrs["empty"] = None if len(frame) else reason
    return frame


def _plausibility_by_origin(campaign: Campaign, data: CampaignJudgments) -> pd.DataFrame:
    """Count reasons per (origin, score); score = share of plausible votes, binned to fifths."""
    c = data.codes
    columns = ["origin", "score", "reasons"]
    answer = task_type(campaign.task).plausible_answer
    if answer is None or c.n_items == 0:
        return _empty_if(pd.DataFrame(columns=columns), "only for reason plausibility campaigns with votes")
    plausible = c.categories.index(answer) if answer in c.categories else -1
    table = c.table()
    n = table.sum(axis=1)
    score = (table[:, plausible] if plausible >= 0 else np.zeros(len(n))) / np.maximum(n, 1)
    origin_of = dict(
        CampaignItem.objects.filter(campaign=campaign, pk__in=c.items).values_list("id", "reason__origin")
    )
    reasons = pd.DataFrame(
        {
            "origin": pd.Series(c.items).map(origin_of).fillna("unknown").replace("", "unknown"),
            "score": np.round(np.rint(score * 5) / 5, 1),
        }
    )
    seen = set(reasons["origin"])
    origins = [o for o in ReasonOrigin.values if o in seen] + sorted(seen - set(ReasonOrigin.values))
    grid = pd.MultiIndex.from_product([origins, SCORE_BINS], names=["origin", "score"])
    counts = reasons.value_counts(["origin", "score"]).reindex(grid, fill_value=0)
    frame = counts.rename("reasons").reset_index().astype({"origin": "str", "reasons": "int64"})
    return _empty_if(frame[columns], "no reasons among the items")


def _knowledge_types(campaign: Campaign, data: CampaignJudgments) -> pd.DataFrame:
    """Knowledge-type campaigns: reasons per majority type (ties count for each tied type).
    Other campaigns: questions (schemas) of the campaign's items per knowledge type."""
    c = data.codes
    if task_type(campaign.task).answers_are_knowledge_types:
        unit = "reasons"
        table = c.table()
        top = table.max(axis=1, keepdims=True) if table.size else np.zeros((0, 1), np.int64)
        majority = (table == top) & (top > 0)
        counts = pd.Series(majority.sum(axis=0), index=[str(k) for k in c.categories], dtype="int64")
    else:
        unit = "questions"
        items = pd.DataFrame.from_records(
            list(
                CampaignItem.objects.filter(campaign=campaign)
                .order_by("id")
                .values_list(
                    "schema_id",
                    "schema__knowledge_types",
                    "reason__schema_id",
                    "reason__schema__knowledge_types",
                )
            ),
            columns=["schema", "schema_types", "reason_schema", "reason_types"],
        )
        by_schema = items["schema"].notna()
        questions = pd.DataFrame(
            {
                "question": items["schema"].where(by_schema, items["reason_schema"]),
                "types": items["schema_types"].where(by_schema, items["reason_types"]),
            }
        )
        questions = questions.dropna(subset=["question"]).drop_duplicates("question")
        types = questions["types"].map(lambda t: [str(k) for k in t or []]).explode().dropna()
        counts = types.value_counts()
    counts = counts[counts > 0]
    # every type of the papers' list is shown (0 where none was seen), then any other
    order = (
        [*KnowledgeType.values, *sorted(set(counts.index) - set(KnowledgeType.values))] if len(counts) else []
    )
    frame = pd.DataFrame(
        {
            "knowledge_type": pd.Series(order, dtype="str"),
            "count": counts.reindex(order, fill_value=0).to_numpy(dtype=np.int64),
            "unit": pd.Series([unit] * len(order), dtype="str"),
        }
    )
    return _empty_if(frame[["knowledge_type", "count", "unit"]], "no knowledge types on these items")


def campaign_table(
    *, campaign: Campaign, chart: str, identities: bool = False, data: CampaignJudgments | None = None
) -> pd.DataFrame:
    """The numbers behind one chart or table of the agreement page (see TABLES) as a DataFrame;
    ``frame.attrs["empty"]`` says why it has no rows. ``data`` (from
    :func:`campaign_judgments`) saves reading the judgments again."""
    if chart not in TABLES:
        raise KeyError(chart)
    data = data if data is not None else campaign_judgments(campaign=campaign)
    if chart == "cohen-pairs":
        if task_spec(campaign.task).free_text:
            return _empty_if(pd.DataFrame(columns=COHEN_COLUMNS), "no two annotators share an item")
        return _empty_if(_cohen_table(data, identities), "no two annotators share an item")
    if chart == "plausibility-by-origin":
        return _plausibility_by_origin(campaign, data)
    if chart == "knowledge-types":
        return _knowledge_types(campaign, data)
    annotators, _ = _per_annotator(data, identities)
    return _empty_if(annotators, "no judgments yet")


def campaign_chart(
    *, campaign: Campaign, chart: str, identities: bool = False, data: CampaignJudgments | None = None
) -> dict[str, Any]:
    """:func:`campaign_table` as plain data: {chart, title, campaign, columns, rows, empty}."""
    frame = campaign_table(campaign=campaign, chart=chart, identities=identities, data=data)
    return {
        "chart": chart,
        "title": TABLES[chart],
        "campaign": campaign.name,
        "columns": [str(c) for c in frame.columns],
        "rows": frame_records(frame),
        "empty": frame.attrs.get("empty"),
    }

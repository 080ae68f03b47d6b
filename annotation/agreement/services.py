"""Agreement of a campaign: gather its judgments, compute the figures, shape the charts.

Reads only (no writes). The computation is :mod:`annotation.agreement`; this module turns a
campaign's judgments into codes and the results into plain, JSON-ready dicts.

- :func:`campaign_agreement_summary` is the one function the release dataset card calls.
  By default it names no annotator (researchers may not see identities): annotators appear
  as "annotator 1..n" in order of their user id. Curator pages pass ``identities=True``.
- :func:`campaign_chart` gives the numbers behind each chart on the curator's page
  (also downloadable as CSV and JSON).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model

from annotation.agreement import stats as ag
from annotation.models import Campaign, CampaignItem, Judgment, Task
from annotation.task_types import task_type
from annotation.tasks_registry import task_spec
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


def campaign_judgments(*, campaign: Campaign) -> CampaignJudgments:
    """Every non-empty answer of the campaign, encoded for :mod:`annotation.agreement`."""
    rows = list(
        Judgment.objects.filter(campaign_item__campaign=campaign)
        .exclude(answer="")
        .order_by()
        .values_list("campaign_item_id", "annotator_id", "answer")
    )
    seen_answers = sorted({r[2] for r in rows})
    # the answers the annotation pages offer, in their order, then any others seen
    order = list(task_spec(campaign.task).choice_values)
    categories = order + [a for a in seen_answers if a not in order]
    if rows:
        items, raters, answers = zip(*rows, strict=True)
        codes = ag.encode(
            np.array(items, dtype=np.int64),
            np.array(raters, dtype=np.int64),
            np.array(answers, dtype=object),
            categories=categories,
        )
    else:
        empty = np.zeros(0, dtype=np.int64)
        codes = ag.Codes(empty, empty, empty, [], [], categories)
    usernames = dict(get_user_model().objects.filter(pk__in=codes.raters).values_list("pk", "username"))
    gold = dict(CampaignItem.objects.filter(campaign=campaign, is_gold=True).values_list("id", "gold_answer"))
    return CampaignJudgments(
        codes=codes,
        usernames={int(k): str(v) for k, v in usernames.items()},
        gold_answer={int(k): str(v) for k, v in gold.items()},
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


def _per_annotator(data: CampaignJudgments, identities: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
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
    rows = []
    for r, name in enumerate(names):
        rows.append(
            {
                "annotator": name,
                "judgments": int(majority.judgments[r]),
                "compared_with_majority": int(majority.compared[r]),
                "agreed_with_majority": int(majority.agreed[r]),
                "majority_agreement": majority.shares()[r],
                "gold_seen": int(gold.seen[r]),
                "gold_correct": int(gold.correct[r]),
                "gold_accuracy": gold.shares()[r],
            }
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
    return rows, overall


def _cohen_rows(data: CampaignJudgments, identities: bool) -> list[dict[str, Any]]:
    c = data.codes
    names = _annotator_names(data, identities)
    return [
        {
            "annotator_a": names[p.rater_a],
            "annotator_b": names[p.rater_b],
            "items": p.items,
            "observed_agreement": p.observed,
            "cohen_kappa": p.kappa,
            "undefined": p.reason,
        }
        for p in ag.cohen_kappa_pairs(c.item_idx, c.rater_idx, c.category_idx, c.n_categories)
    ]


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
    annotator_rows, overall = _per_annotator(data, identities)
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
    summary["per_annotator"] = annotator_rows
    if include_pairs:
        summary["cohen_pairs"] = _cohen_rows(data, identities)
    return summary


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


def _plausibility_by_origin(campaign: Campaign, data: CampaignJudgments) -> dict[str, Any]:
    """Count reasons per (origin, score); score = share of plausible votes, binned to fifths."""
    c = data.codes
    columns = ["origin", "score", "reasons"]
    answer = task_type(campaign.task).plausible_answer
    if answer is None or c.n_items == 0:
        return {"columns": columns, "rows": [], "empty": "only for reason plausibility campaigns with votes"}
    plausible = c.categories.index(answer) if answer in c.categories else -1
    table = c.table()
    n = table.sum(axis=1)
    score = (table[:, plausible] if plausible >= 0 else np.zeros(len(n))) / np.maximum(n, 1)
    binned = np.rint(score * 5) / 5
    origin_of = dict(
        CampaignItem.objects.filter(campaign=campaign, pk__in=c.items).values_list("id", "reason__origin")
    )
    origins = [o for o in ReasonOrigin.values]
    counts: Counter[tuple[str, float]] = Counter()
    for item_id, s in zip(c.items, binned.tolist(), strict=True):
        counts[(origin_of.get(item_id) or "unknown", round(s, 1))] += 1
    extra = sorted({o for o, _ in counts} - set(origins))
    rows = [
        {"origin": o, "score": s, "reasons": counts[(o, s)]}
        for o in origins + extra
        if any(k[0] == o for k in counts)
        for s in SCORE_BINS
    ]
    return {"columns": columns, "rows": rows, "empty": None if rows else "no reasons among the items"}


def _knowledge_types(campaign: Campaign, data: CampaignJudgments) -> dict[str, Any]:
    """Knowledge-type campaigns: reasons per majority type (ties count for each tied type).
    Other campaigns: questions (schemas) of the campaign's items per knowledge type."""
    columns = ["knowledge_type", "count", "unit"]
    c = data.codes
    counts: Counter[str] = Counter()
    if task_type(campaign.task).answers_are_knowledge_types:
        unit = "reasons"
        table = c.table()
        if table.size:
            top = table.max(axis=1, keepdims=True)
            for row, best in zip(table, top, strict=True):
                for j in np.flatnonzero((row == best) & (best > 0)):
                    counts[str(c.categories[j])] += 1
    else:
        unit = "questions"
        seen: set[int] = set()
        for schema_id, schema_types, reason_schema_id, reason_types in CampaignItem.objects.filter(
            campaign=campaign
        ).values_list(
            "schema_id", "schema__knowledge_types", "reason__schema_id", "reason__schema__knowledge_types"
        ):
            sid, types = (schema_id, schema_types) if schema_id else (reason_schema_id, reason_types)
            if sid is None or sid in seen:
                continue
            seen.add(sid)
            for kt in types or []:
                counts[str(kt)] += 1
    order = list(KnowledgeType.values) + sorted(set(counts) - set(KnowledgeType.values))
    rows = [{"knowledge_type": kt, "count": counts[kt], "unit": unit} for kt in order] if counts else []
    return {"columns": columns, "rows": rows, "empty": None if rows else "no knowledge types on these items"}


def _annotator_agreement(campaign: Campaign, data: CampaignJudgments, identities: bool) -> dict[str, Any]:
    rows, _ = _per_annotator(data, identities)
    columns = [
        "annotator",
        "judgments",
        "compared_with_majority",
        "agreed_with_majority",
        "majority_agreement",
        "gold_seen",
        "gold_correct",
        "gold_accuracy",
    ]
    return {"columns": columns, "rows": rows, "empty": None if rows else "no judgments yet"}


def campaign_chart(
    *, campaign: Campaign, chart: str, identities: bool = False, data: CampaignJudgments | None = None
) -> dict[str, Any]:
    """The numbers behind one chart (or table, see TABLES): {chart, title, campaign, columns, rows, empty}.

    ``data`` (from :func:`campaign_judgments`) saves reading the judgments again."""
    if chart not in TABLES:
        raise KeyError(chart)
    data = data if data is not None else campaign_judgments(campaign=campaign)
    if chart == "cohen-pairs":
        columns = ["annotator_a", "annotator_b", "items", "observed_agreement", "cohen_kappa", "undefined"]
        pairs = [] if task_spec(campaign.task).free_text else _cohen_rows(data, identities)
        body = {
            "columns": columns,
            "rows": pairs,
            "empty": None if pairs else "no two annotators share an item",
        }
    elif chart == "plausibility-by-origin":
        body = _plausibility_by_origin(campaign, data)
    elif chart == "knowledge-types":
        body = _knowledge_types(campaign, data)
    else:
        body = _annotator_agreement(campaign, data, identities)
    return {"chart": chart, "title": TABLES[chart], "campaign": campaign.name} | body

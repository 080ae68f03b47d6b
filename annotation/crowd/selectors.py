"""Reads for a campaign's crowd participants: quality figures per participant and the
payment report in the columns the platforms' bulk uploads take (docs/crowd.md)."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from decimal import Decimal
from typing import Any

from django.db.models import Count, Q, QuerySet

from annotation.models import (
    AdversarialItem,
    AdversarialStatus,
    Campaign,
    CampaignAnnotator,
    Judgment,
    Participant,
    ParticipantState,
    PaymentDecision,
    StudyLink,
    ValidationStatus,
    Verdict,
)
from annotation.task_types import task_spec


def participant_code(participant: Participant) -> str:
    """The code a participant whose part is over takes back to their platform: the
    completion code for a finished batch, the partial (else the return) code for who ended
    early, the return code for who did not pass the screening; "" before the end."""
    link = participant.link
    if participant.state == ParticipantState.DONE:
        return link.completion_code
    if participant.state == ParticipantState.ENDED_EARLY:
        return link.partial_code or link.return_code
    if participant.state == ParticipantState.SCREENED_OUT:
        return link.return_code
    return ""


def study_links_counted(*, campaign: Campaign) -> QuerySet[StudyLink]:
    """A campaign's study links, oldest first, each with ``n_participants`` and
    ``n_finished`` (who got the completion code) counted in the same query."""
    return (
        campaign.study_links.select_related("campaign")
        .annotate(
            n_participants=Count("participants"),
            n_finished=Count("participants", filter=Q(participants__state=ParticipantState.DONE)),
        )
        .order_by("pk")
    )


def validated_fooling_counts(*, users: set[int]) -> Counter[int]:
    """Per writer (user id): the adversarial items they wrote that were kept, fooled at least
    one model of their round (verdict both or one) and were validated correct: what a study
    link's ``fooling_bonus`` pays for."""
    return Counter(
        AdversarialItem.objects.filter(
            writer_id__in=users,
            status=AdversarialStatus.KEPT,
            verdict__in=[Verdict.BOTH, Verdict.ONE],
            validation=ValidationStatus.VALIDATED,
        ).values_list("writer_id", flat=True)
    )


def participant_pay(participant: Participant, *, fooling: int) -> dict[str, Any]:
    """What the payment records give a participant: the curator's bonus, the bonus for
    ``fooling`` validated fooling items at their link's rate, the two added (the bonus the
    platform pays), and the link's reward when one is recorded (None otherwise)."""
    fooling_bonus = (participant.link.fooling_bonus * fooling).quantize(Decimal("0.01"))
    return {
        "fooling_validated": fooling,
        "fooling_bonus": fooling_bonus,
        "bonus_total": (participant.bonus + fooling_bonus).quantize(Decimal("0.01")),
        "reward": participant.link.reward,
    }


def participant_rows(*, campaign: Campaign) -> list[dict[str, Any]]:
    """One row per participant of the campaign's study links: who (platform, external id,
    the platform's ids), where they are, items answered, seconds per item (median), gold
    accuracy, agreement with the majority of the others on the same items, answers flagged
    as too fast, paused or not, the code they were given, and the curator's decision."""
    participants = list(
        Participant.objects.filter(link__campaign=campaign)
        .select_related("link", "user")
        .order_by("created_at")
    )
    users = {p.user_id for p in participants}
    spec = task_spec(campaign.task)
    # every judgment of the campaign's real items: for the majority of the others
    answers: dict[int, dict[int, str]] = defaultdict(dict)
    durations: dict[int, list[int]] = defaultdict(list)
    for item_id, user_id, answer, payload, duration in Judgment.objects.filter(
        campaign_item__campaign=campaign, campaign_item__is_gold=False
    ).values_list("campaign_item_id", "annotator_id", "answer", "payload", "duration_ms"):
        answers[item_id][user_id] = spec.answer_key(answer, payload)
        if user_id in users and duration is not None:
            durations[user_id].append(duration)
    agree: Counter[int] = Counter()
    compared: Counter[int] = Counter()
    for by_user in answers.values():
        for user_id, answer in by_user.items():
            if user_id not in users:
                continue
            others = Counter(a for u, a in by_user.items() if u != user_id)
            if not others:
                continue
            (top, n), *rest = others.most_common()
            if rest and rest[0][1] == n:
                continue  # no unique majority among the others
            compared[user_id] += 1
            agree[user_id] += int(answer == top)
    fooling = validated_fooling_counts(users=users)
    members = {
        m.annotator_id: m for m in CampaignAnnotator.objects.filter(campaign=campaign, annotator_id__in=users)
    }
    rows = []
    for p in participants:
        member = members.get(p.user_id)
        seen = member.gold_seen if member else 0
        times = durations.get(p.user_id, [])
        rows.append(
            {
                "participant": p,
                "platform": p.link.platform,
                "external_id": p.external_id,
                "study_id": p.platform_ids.get("STUDY_ID", ""),
                "session_id": p.platform_ids.get("SESSION_ID", ""),
                "assignment_id": p.platform_ids.get("assignmentId", ""),
                "hit_id": p.platform_ids.get("hitId", ""),
                "state": p.state,
                "ended_early": p.state == ParticipantState.ENDED_EARLY,
                "items": p.answered,
                "median_seconds": round(statistics.median(times) / 1000, 1) if times else None,
                "total_seconds": round(sum(times) / 1000, 1) if times else 0.0,
                "gold_seen": seen,
                "gold_accuracy": (member.gold_correct / seen) if member and seen else None,
                "screening": f"{p.screening_correct}/{p.screening_seen}" if p.screening_seen else "",
                "majority_agreement": agree[p.user_id] / compared[p.user_id] if compared[p.user_id] else None,
                "compared": compared[p.user_id],
                "fast_answers": p.fast_answers,
                "paused": bool(member and member.paused),
                "code": participant_code(p),
                "decision": p.decision,
                "bonus": p.bonus,
                **participant_pay(p, fooling=fooling[p.user_id]),
                "note": p.decision_note,
            }
        )
    return rows


REPORT_COLUMNS = (
    "platform",
    "external_id",
    "study_id",
    "session_id",
    "assignment_id",
    "hit_id",
    "state",
    "ended_early",
    "items",
    "total_seconds",
    "median_seconds",
    "gold_seen",
    "gold_accuracy",
    "screening",
    "majority_agreement",
    "fast_answers",
    "paused",
    "code",
    "decision",
    "fooling_validated",
    "fooling_bonus",
    "bonus",
    "note",
)
#: The report's ``bonus`` is what the platform pays on top: the curator's bonus plus the
#: bonus per validated fooling item (the participants' page shows the two apart).
REPORT_SOURCES = {"bonus": "bonus_total"}


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def payment_report(*, campaign: Campaign, kind: str) -> tuple[list[str] | None, list[list[str]]]:
    """(header or None, rows) of a payment report: ``all`` (every column above),
    ``prolific-approve`` (the Prolific ids to approve, one a line: the bulk approve box),
    ``prolific-bonus`` (``id,amount`` lines, no header: Prolific's bulk bonus box),
    ``mturk`` (AssignmentId, WorkerId, HITId, Approve, Reject: the columns of the results
    file MTurk's "Upload CSV" reads, "x" to approve, the reason to reject)."""
    rows = participant_rows(campaign=campaign)
    if kind == "all":
        return list(REPORT_COLUMNS), [
            [_cell(r[REPORT_SOURCES.get(c, c)]) for c in REPORT_COLUMNS] for r in rows
        ]
    prolific = [r for r in rows if r["platform"] == "prolific"]
    if kind == "prolific-approve":
        return None, [[r["external_id"]] for r in prolific if r["decision"] == PaymentDecision.APPROVE]
    if kind == "prolific-bonus":
        return None, [
            [r["external_id"], f"{Decimal(r['bonus_total']):.2f}"]
            for r in prolific
            if Decimal(r["bonus_total"]) > 0
        ]
    if kind == "mturk":
        mturk = [r for r in rows if r["platform"] == "mturk" and r["decision"] != PaymentDecision.PENDING]
        return ["AssignmentId", "WorkerId", "HITId", "Approve", "Reject"], [
            [
                r["assignment_id"],
                r["external_id"],
                r["hit_id"],
                "x" if r["decision"] == PaymentDecision.APPROVE else "",
                r["note"] if r["decision"] == PaymentDecision.REJECT else "",
            ]
            for r in mturk
        ]
    raise KeyError(kind)


REPORT_KINDS = ("all", "prolific-approve", "prolific-bonus", "mturk")

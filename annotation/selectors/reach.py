"""Items that can no longer reach K with the annotators left (the pipeline and dashboard
pages name them with their actions)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db.models import F, IntegerField, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import AssignmentStatus, Campaign, CampaignAnnotator, CampaignItem, CampaignStatus
from core.roles import Role


@dataclass(frozen=True)
class OutOfReach:
    """Items that can no longer reach K with the annotators left: each needs more
    judgments than its live holders and the annotators who may still get it can give."""

    item_ids: list[int]
    #: of those, items someone skipped (they can reopen them)
    skipped: int
    #: the most judgments every one of them can still reach (judgments, live leases and
    #: annotators left): the K to lower them to so that none is stranded
    reachable: int = 0

    def __bool__(self) -> bool:
        return bool(self.item_ids)


def items_out_of_reach(*, campaign: Campaign, now: datetime | None = None) -> OutOfReach:
    """The campaign's regular items that cannot get their K judgments from the annotators
    there are (:func:`items_out_of_reach_many`)."""
    return items_out_of_reach_many(campaigns=[campaign], now=now)[campaign.pk]


def items_out_of_reach_many(
    *, campaigns: Sequence[Campaign], now: datetime | None = None
) -> dict[int, OutOfReach]:
    """Per active campaign, its regular items that cannot get their K judgments (the item's
    own ``judgments_needed`` where a curator lowered it, else the campaign's) from the
    annotators there are: judgments + live leases + annotators who may still be given the
    item (holders of the annotator role, not paused there, with no assignment on it: an
    annotator gets an item once; a skip or a lapsed lease uses that once; not its author)
    < the item's K (its own, else the campaign's). Four
    queries whatever the number of campaigns."""
    now = now or timezone.now()
    out = {c.pk: OutOfReach(item_ids=[], skipped=0) for c in campaigns}
    active = {c.pk: c for c in campaigns if c.status == CampaignStatus.ACTIVE}
    if not active:
        return out
    # the items still needing judgments (under their own K, else their campaign's), each
    # with its author (never given it) and its assignments (one row per assignment)
    pending: dict[int, tuple[int, int, int, int | None]] = {}
    holders: dict[int, set[int]] = defaultdict(set)
    live: Counter[int] = Counter()
    skipped_items: set[int] = set()
    for pk, campaign_id, judged, k, author_id, annotator_id, status, expires_at in (
        CampaignItem.objects.annotate(
            k=Coalesce("judgments_needed", "campaign__judgments_per_item", output_field=IntegerField())
        )
        .filter(campaign_id__in=list(active), is_gold=False, judgment_count__lt=F("k"))
        .order_by()
        .values_list(
            "pk",
            "campaign_id",
            "judgment_count",
            "k",
            "author_id",
            "assignments__annotator_id",
            "assignments__status",
            "assignments__expires_at",
        )
    ):
        pending[pk] = (campaign_id, judged, int(k), author_id)
        if annotator_id is None:
            continue
        holders[pk].add(annotator_id)
        if status == AssignmentStatus.LEASED and expires_at > now:
            live[pk] += 1
        elif status == AssignmentStatus.SKIPPED:
            skipped_items.add(pk)
    if not pending:
        return out
    # the annotators (campaign 0) and, per campaign, those paused there: one query
    annotators = (
        get_user_model()
        .objects.filter(is_active=True, groups__name=Role.ANNOTATOR.value)
        .order_by()
        .annotate(campaign=Value(0, output_field=IntegerField()))
        .values_list("pk", "campaign")
    )
    stopped = (
        CampaignAnnotator.objects.filter(campaign_id__in=list(active), paused=True)
        .order_by()
        .values_list("annotator_id", "campaign_id")
    )
    pool: set[int] = set()
    paused: dict[int, set[int]] = defaultdict(set)
    for annotator_id, campaign_id in annotators.union(stopped, all=True):
        if campaign_id == 0:
            pool.add(annotator_id)
        else:
            paused[campaign_id].add(annotator_id)
    stuck: dict[int, list[int]] = defaultdict(list)
    reach_of: dict[int, int] = {}
    for item_id, (campaign_id, judged, k, writer) in sorted(pending.items()):
        eligible = len(pool - paused[campaign_id] - holders[item_id] - {writer})
        reach = judged + live[item_id] + eligible
        if reach < k:
            stuck[campaign_id].append(item_id)
            reach_of[campaign_id] = min(reach, reach_of.get(campaign_id, reach))
    for campaign_id, ids in stuck.items():
        out[campaign_id] = OutOfReach(
            item_ids=ids, skipped=len(skipped_items.intersection(ids)), reachable=reach_of[campaign_id]
        )
    return out

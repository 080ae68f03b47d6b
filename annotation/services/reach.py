"""A curator's way out for items that can no longer reach K with the annotators left
(``annotation.selectors.reach``): lower K for those items only, the campaign's K unchanged
for the others."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from annotation.errors import CampaignError
from annotation.models import Campaign, CampaignItem, CampaignStatus


def items_k_lower(*, campaign: Campaign, item_ids: Sequence[int], k: int) -> int:
    """Set ``judgments_needed`` = ``k`` on these regular items of ``campaign``; the number
    of items changed. Refused (nothing written) for a K below 1 or above the campaign's K
    (this lowers K; it never raises it), below the judgments an item already has (they
    stay: K cannot be lower than what was given), for an item that is not a regular item of
    the campaign, and on a closed campaign."""
    if campaign.status == CampaignStatus.CLOSED:
        raise CampaignError(f"{campaign.name} is closed: its items' K no longer changes.")
    if k < 1:
        raise CampaignError(f"K = {k}: an item needs at least one judgment.")
    if k > campaign.judgments_per_item:
        raise CampaignError(f"K = {k} is not lower than the campaign's K = {campaign.judgments_per_item}.")
    wanted = set(item_ids)
    if not wanted:
        raise CampaignError("No items given to lower K for.")
    with transaction.atomic():
        items = list(
            CampaignItem.objects.select_for_update()
            .filter(campaign=campaign, pk__in=wanted, is_gold=False)
            .order_by("pk")
        )
        missing = sorted(wanted - {item.pk for item in items})
        if missing:
            raise CampaignError(f"Not regular items of {campaign.name}: {', '.join(map(str, missing))}.")
        over = [item for item in items if item.judgment_count > k]
        if over:
            shown = ", ".join(f"item {item.pk} has {item.judgment_count}" for item in over[:5])
            raise CampaignError(
                f"K = {k} is below the judgments some items already have ({shown}"
                f"{', …' if len(over) > 5 else ''}): choose at least {max(i.judgment_count for i in over)}."
            )
        return CampaignItem.objects.filter(pk__in=[item.pk for item in items]).update(judgments_needed=k)

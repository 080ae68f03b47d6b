"""Annotators answering a campaign through the services, as the pages do."""

from collections.abc import Callable, Iterable
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotation.models import Campaign
from annotation.services import assignment_next, judgment_submit
from core.roles import Role


def answer_all(
    campaign: Campaign,
    annotators: Iterable[Any],
    answers_for: Callable[[Any, int], dict[str, Any]],
    limit: int | None = None,
) -> None:
    """Each annotator answers the items it is given, at most ``limit`` (all without one):
    ``answers_for(item, annotator's index)`` gives the answer's keyword arguments."""
    for index, annotator in enumerate(annotators):
        done = 0
        while limit is None or done < limit:
            lease = assignment_next(campaign=campaign, annotator=annotator)
            if lease is None:
                break
            judgment_submit(annotator=annotator, assignment=lease, **answers_for(lease.campaign_item, index))
            done += 1


def annotators(n: int, prefix: str = "ann") -> list[Any]:
    """``n`` new users with the annotator role, named prefix0.. (password "pw")."""
    group, _ = Group.objects.get_or_create(name=Role.ANNOTATOR.value)
    users = []
    for i in range(n):
        user = get_user_model().objects.create_user(username=f"{prefix}{i}", password="pw")
        user.groups.add(group)
        users.append(user)
    return users

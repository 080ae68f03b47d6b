"""Study links and their participants (issue 14): a campaign opened to a crowd platform.

A curator opens a campaign to Prolific, Mechanical Turk or a plain invitation link and gets
a link to paste there (:func:`study_link_url`). The link's token is signed
(``django.core.signing``), so a changed token is told apart from a link that never existed.
Following the link creates or resumes the one participant of that external id
(:func:`participant_enter`): a password-less account with the annotator role that sees
only this campaign (``annotation.selectors.campaign_list``). Entry is rate limited per
client address. Closed or expired links, and entries of a participant who has finished,
are refused with a page saying why.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core import signing
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from annotation.crowd.platforms import StudyEntryError, platform_spec
from annotation.errors import AnnotationError
from annotation.models import (
    Campaign,
    Participant,
    ParticipantState,
    Platform,
    StudyLink,
    StudyLinkStatus,
)
from core.roles import Actor, Role, account_of, user_is_curator

SALT = "winnow.study-link"
#: Entries one client address may make per minute (a platform sends each person once).
ENTRY_RATE = 60


class StudyLinkRefused(AnnotationError):
    """A study link that cannot be followed: its page says why (``status`` as HTTP)."""

    def __init__(
        self, message: str, *, status: int = 400, title: str = "This study link cannot be used"
    ) -> None:
        super().__init__(message, status=status)
        self.title = title


class StudyLinkReplayed(StudyLinkRefused):
    """The participant has finished: the link is not handed out again."""

    def __init__(self, participant: Participant) -> None:
        super().__init__(
            "you have finished this study already; your answers are recorded. "
            "If your platform still asks for the completion code, it is on the next line.",
            status=409,
            title="You have finished this study",
        )
        self.participant = participant


def _refuse_unless_curator(user: Actor | None) -> None:
    if user is None or not user_is_curator(user):
        raise AnnotationError("only curators open campaigns to crowd platforms")


def study_link_create(
    *,
    campaign: Campaign,
    platform: str,
    consent: str,
    expires_at: datetime | None = None,
    completion_code: str = "",
    user: Actor | None = None,
) -> StudyLink:
    """Open ``campaign`` to ``platform``; the link to paste is :func:`study_link_url`."""
    _refuse_unless_curator(user)
    platform_spec(platform)
    if not consent.strip():
        raise AnnotationError("consent: write what participants agree to (the study, its use, pay, contact)")
    if expires_at is not None and expires_at <= timezone.now():
        raise AnnotationError("expires: the time has passed already")
    code = completion_code.strip() or secrets.token_hex(4).upper()
    if not code.isalnum() or len(code) > 40:
        raise AnnotationError("completion code: letters and digits only, at most 40")
    return StudyLink.objects.create(
        campaign=campaign,
        platform=platform,
        consent=consent.strip(),
        expires_at=expires_at,
        completion_code=code,
        created_by=account_of(user),
    )


def study_link_close(*, link: StudyLink, user: Actor | None = None) -> StudyLink:
    """No new entries; participants who are in keep their session."""
    _refuse_unless_curator(user)
    if link.status != StudyLinkStatus.CLOSED:
        link.status = StudyLinkStatus.CLOSED
        link.closed_at = timezone.now()
        link.save(update_fields=["status", "closed_at"])
    return link


def study_link_token(link: StudyLink) -> str:
    return signing.dumps(link.pk, salt=SALT, compress=False)


def study_link_path(link: StudyLink) -> str:
    """The path and query a curator pastes after the site's address."""
    path = reverse("crowd:enter", args=[study_link_token(link)])
    query = platform_spec(link.platform).link_query
    return f"{path}?{query}" if query else path


def study_link_get(token: str, *, now: datetime | None = None, entered: bool = False) -> StudyLink:
    """The open link of ``token``; StudyLinkRefused saying why not. ``entered``: for a
    participant who is in already, a closed or expired link still counts (they finish)."""
    try:
        pk = signing.loads(token, salt=SALT)
    except signing.BadSignature:
        raise StudyLinkRefused(
            "the link is damaged (it was changed or cut short): copy it again from the platform",
            status=400,
            title="This study link is damaged",
        ) from None
    link = StudyLink.objects.select_related("campaign").filter(pk=pk).first()
    if link is None:
        raise StudyLinkRefused("this study no longer exists", status=404, title="No such study")
    if entered:
        return link
    if link.status == StudyLinkStatus.CLOSED:
        raise StudyLinkRefused(
            "the study is closed: it takes no new participants", status=410, title="This study is closed"
        )
    if link.expires_at is not None and link.expires_at <= (now or timezone.now()):
        raise StudyLinkRefused(
            "the study's link has expired: it takes no new participants",
            status=410,
            title="This study has ended",
        )
    return link


def entry_allowed(address: str) -> bool:
    """At most ENTRY_RATE entries a minute from one address (cache counter; when the
    cache is down the count is lost and entries are let through)."""
    key = "study-entry:" + hashlib.sha256(address.encode()).hexdigest()[:32]
    cache.add(key, 0, timeout=60)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=60)
        count = 1
    return int(count) <= ENTRY_RATE


@dataclass(frozen=True)
class Entry:
    participant: Participant
    created: bool


def _username(link: StudyLink, external_id: str) -> str:
    digest = hashlib.sha256(f"{link.pk}:{external_id}".encode()).hexdigest()[:16]
    return f"p{link.pk}-{digest}"


def participant_enter(*, link: StudyLink, params: dict[str, Any]) -> Entry:
    """The participant of the external id in ``params``: created on the first entry, the
    same one on every later entry (never a second under the same id, even when two
    entries race). StudyLinkReplayed once they have finished."""
    spec = platform_spec(link.platform)
    external_id = spec.external_id(params)
    kept = spec.kept(params)
    existing = Participant.objects.select_related("user").filter(link=link, external_id=external_id).first()
    created = False
    if existing is None:
        try:
            with transaction.atomic():
                user = get_user_model().objects.create_user(username=_username(link, external_id))
                user.set_unusable_password()
                user.save(update_fields=["password"])
                user.groups.add(Group.objects.get_or_create(name=Role.ANNOTATOR.value)[0])
                existing = Participant.objects.create(
                    link=link, external_id=external_id, user=user, platform_ids=kept
                )
                created = True
        except IntegrityError:  # the same id entered at the same moment: take that one
            existing = Participant.objects.select_related("user").get(link=link, external_id=external_id)
    participant = existing
    if participant.state == ParticipantState.DONE:
        raise StudyLinkReplayed(participant)
    if not created:
        Participant.objects.filter(pk=participant.pk).update(
            entries=F("entries") + 1,
            last_entry_at=timezone.now(),
            platform_ids={**participant.platform_ids, **kept},
        )
        participant.refresh_from_db()
    return Entry(participant=participant, created=created)


def participant_consent(*, participant: Participant) -> Participant:
    if participant.state == ParticipantState.CONSENT:
        participant.state = ParticipantState.WORKING
        participant.consented_at = timezone.now()
        participant.save(update_fields=["state", "consented_at"])
    return participant


def participant_finish(*, participant: Participant) -> Participant:
    """The participant is done: the completion code (or the platform's return) follows."""
    if participant.state != ParticipantState.DONE:
        participant.state = ParticipantState.DONE
        participant.finished_at = timezone.now()
        participant.save(update_fields=["state", "finished_at"])
    return participant


def participant_of(user: Actor | None) -> Participant | None:
    """The participant a signed-in account is, or None for an ordinary account."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return Participant.objects.select_related("link__campaign").filter(user_id=int(user.pk or 0)).first()


__all__ = [
    "Entry",
    "Platform",
    "StudyEntryError",
    "StudyLinkRefused",
    "StudyLinkReplayed",
    "entry_allowed",
    "participant_consent",
    "participant_enter",
    "participant_finish",
    "participant_of",
    "study_link_close",
    "study_link_create",
    "study_link_get",
    "study_link_path",
    "study_link_token",
]

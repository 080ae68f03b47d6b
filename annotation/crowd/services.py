"""Study links and their participants (issue 14): a campaign opened to a crowd platform.

A curator opens a campaign to Prolific, Mechanical Turk or a plain invitation link and gets
a link to paste there (:func:`study_link_url`). The link's token is signed
(``django.core.signing``), so a changed token is told apart from a link that never existed.
Following the link shows a landing page; entering is a POST, which creates or resumes
the one participant of that external id (:func:`participant_enter`): a password-less
account with the participant role that sees only this campaign (the participation this
package registers, ``annotation.crowd.participation``). The first entry binds the
participant to the browser it came from: a secret, kept in that browser as a signed
cookie and here as its hash; a later entry under the same id without it is refused
(:class:`StudyOpenElsewhere`) and changes nothing. Entry is rate limited per client
address. Closed or expired links, and entries of a participant who has finished, are
refused with a page saying why.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core import signing
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode

from annotation.crowd.platforms import StudyEntryError, platform_spec
from annotation.errors import AnnotationError
from annotation.models import (
    Assignment,
    Campaign,
    CampaignAnnotator,
    CampaignItem,
    Judgment,
    Participant,
    ParticipantState,
    PaymentDecision,
    Platform,
    StudyLink,
    StudyLinkStatus,
    Task,
)
from annotation.services import assignment_gold_next, assignment_next
from annotation.task_types import task_spec
from core.roles import Actor, Role, account_of, user_is_curator, user_is_participant

SALT = "winnow.study-link"
_UNREAD = object()
#: Entries one client address may make per minute (a platform sends each person once).
ENTRY_RATE = 60


class StudyLinkRefused(AnnotationError):
    """A study link that cannot be followed: its page says why (``status`` as HTTP)."""

    def __init__(
        self, message: str, *, status: int = 400, title: str = "This study link cannot be used"
    ) -> None:
        super().__init__(message, status=status)
        self.title = title


class StudyOpenElsewhere(StudyLinkRefused):
    """The id has entered from another browser, which holds its secret: nobody else
    becomes that participant (their answers, their ids and their code are theirs)."""

    def __init__(self) -> None:
        super().__init__(
            "this study was started under this id in another browser, and only that browser "
            "can go on with it (nothing was changed). Go back to the browser where you started; "
            "if you cannot, return the study on your platform or write to the researcher. "
            "A study is taken once",
            status=409,
            title="This study is open in another browser",
        )


class StudyLinkReplayed(StudyLinkRefused):
    """The participant has finished: the link is not handed out again."""

    def __init__(self, participant: Participant) -> None:
        super().__init__(
            "you have taken part in this study already; your answers are recorded. "
            "If your platform still asks for the code, it is below.",
            status=409,
            title="You have taken part already",
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
    return_code: str = "",
    partial_code: str = "",
    screening_items: int = 0,
    pass_mark: float = 0.8,
    batch_size: int = 0,
    min_seconds: float = 0.0,
    gold_pause_below: float = 0.0,
    gold_pause_after: int = 3,
    reward: Decimal | str | int | None = None,
    fooling_bonus: Decimal | str | int = 0,
    user: Actor | None = None,
) -> StudyLink:
    """Open ``campaign`` to ``platform``; the link to paste is :func:`study_link_path`.

    ``screening_items`` gold items come first, and a participant goes on to real work only
    with at least ``pass_mark`` of them right (else the ``return_code``); after
    ``batch_size`` real items (0: until none is left) comes the completion code, and who
    ends before gets the ``partial_code`` (empty: the return code); answers
    faster than ``min_seconds`` are flagged; a participant whose gold accuracy falls below
    ``gold_pause_below`` (after ``gold_pause_after`` gold answers) is paused. ``reward``:
    what the platform pays each participant (None: not recorded); ``fooling_bonus``: the
    bonus per validated model-fooling item a participant writes (adversarial writing), which
    the payment report adds to their bonus."""
    _refuse_unless_curator(user)
    reward_amount = None if reward in (None, "") else _amount("reward", reward)
    fooling_amount = _amount("fooling bonus", fooling_bonus or 0)
    platform_spec(platform)
    if not consent.strip():
        raise AnnotationError("consent: write what participants agree to (the study, its use, pay, contact)")
    if expires_at is not None and expires_at <= timezone.now():
        raise AnnotationError("expires: the time has passed already")
    code = completion_code.strip() or secrets.token_hex(4).upper()
    if not code.isalnum() or len(code) > 40:
        raise AnnotationError("completion code: letters and digits only, at most 40")
    for name, other in (("return code", return_code.strip()), ("partial code", partial_code.strip())):
        if other and (not other.isalnum() or len(other) > 40):
            raise AnnotationError(f"{name}: letters and digits only, at most 40")
        if other and other == code:
            raise AnnotationError(f"{name}: not the completion code (it is for a finished batch only)")
    spec = task_spec(campaign.task)
    # a written item has no known answer (nor a known validation): such campaigns have no gold items
    without_gold = "a writing task" if spec.free_text else ""
    if campaign.task == Task.ADVERSARIAL_VALIDATION:
        without_gold = "the validation of written items"
    if screening_items and without_gold:
        raise AnnotationError(
            f"screening items: {without_gold} ({spec.title}) has no right answer to check, so its "
            "campaign has no gold items and its link cannot screen (leave 0); screen people with "
            "another campaign's link and its gold items"
        )
    gold = CampaignItem.objects.filter(campaign=campaign, is_gold=True).count()
    if not 0 <= screening_items <= gold:
        raise AnnotationError(
            f"screening items: {screening_items} asked, but the campaign has {gold} gold items "
            "(add gold items when creating the campaign)"
        )
    for name, value in (("pass mark", pass_mark), ("gold pause below", gold_pause_below)):
        if not 0.0 <= value <= 1.0:
            raise AnnotationError(f"{name}: {value} is not between 0 and 1")
    if not 0 <= batch_size <= 10000:
        raise AnnotationError(f"batch size: {batch_size} is not between 0 and 10000")
    if not 0.0 <= min_seconds <= 600:
        raise AnnotationError(f"min seconds: {min_seconds} is not between 0 and 600")
    return StudyLink.objects.create(
        campaign=campaign,
        platform=platform,
        consent=consent.strip(),
        expires_at=expires_at,
        completion_code=code,
        return_code=return_code.strip(),
        partial_code=partial_code.strip(),
        screening_items=screening_items,
        pass_mark=pass_mark,
        batch_size=batch_size,
        min_seconds=min_seconds,
        gold_pause_below=gold_pause_below,
        gold_pause_after=max(1, gold_pause_after),
        reward=reward_amount,
        fooling_bonus=fooling_amount,
        created_by=account_of(user),
    )


def _amount(name: str, value: Decimal | str | int | float) -> Decimal:
    """A sum of money in the platform's currency, 0 to 1000 with two decimals."""
    try:
        amount = Decimal(str(value)).quantize(Decimal("0.01"))
    except (InvalidOperation, ValueError):
        raise AnnotationError(f"{name}: {value!r} is not an amount") from None
    if not Decimal(0) <= amount <= Decimal(1000):
        raise AnnotationError(f"{name}: between 0 and 1000")
    return amount


def study_link_close(*, link: StudyLink, user: Actor | None = None) -> StudyLink:
    """No new entries; participants who are in keep their session."""
    _refuse_unless_curator(user)
    if link.status != StudyLinkStatus.CLOSED:
        link.status = StudyLinkStatus.CLOSED
        link.closed_at = timezone.now()
        link.save(update_fields=["status", "closed_at"])
    return link


def study_link_token(link: StudyLink) -> str:
    """The link's signed token: always the same for one link (it is pasted once)."""
    return signing.Signer(salt=SALT).sign(str(link.pk))


def study_link_path(link: StudyLink) -> str:
    """The path and query a curator pastes after the site's address."""
    path = reverse("study:enter", args=[study_link_token(link)])
    query = platform_spec(link.platform).link_query
    return f"{path}?{query}" if query else path


def participant_reentry_path(participant: Participant) -> str:
    """The link as the platform sent this participant (their id and the platform's other
    ids): where a page takes them when their session has ended, since they have no
    password to sign in with. Following it resumes them (:func:`participant_enter`)."""
    spec = platform_spec(participant.link.platform)
    params = {spec.id_param: participant.external_id, **participant.platform_ids}
    return reverse("study:enter", args=[study_link_token(participant.link)]) + "?" + urlencode(params)


def study_link_get(token: str, *, now: datetime | None = None, entered: bool = False) -> StudyLink:
    """The open link of ``token``; StudyLinkRefused saying why not. ``entered``: for a
    participant who is in already, a closed or expired link still counts (they finish)."""
    try:
        pk = int(signing.Signer(salt=SALT).unsign(token))
    except (signing.BadSignature, ValueError):
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
    #: A new secret for the browser to keep (the first entry, or a participant made before
    #: entries were bound): "" when the browser's own secret was accepted.
    secret: str = ""


def _secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _holds_secret(participant: Participant, secret: str) -> bool:
    return bool(secret) and secrets.compare_digest(participant.secret_hash, _secret_hash(secret))


FINISHED = (ParticipantState.DONE, ParticipantState.ENDED_EARLY, ParticipantState.SCREENED_OUT)


def _username(link: StudyLink, external_id: str) -> str:
    digest = hashlib.sha256(f"{link.pk}:{external_id}".encode()).hexdigest()[:16]
    return f"p{link.pk}-{digest}"


def participant_enter(*, link: StudyLink, params: dict[str, Any], secret: str = "") -> Entry:
    """The participant of the external id in ``params``: created on the first entry (with
    a new secret for the browser to keep, ``Entry.secret``), the same one on every later
    entry that brings that secret (never a second under the same id, even when two
    entries race). An entry without the secret is refused (StudyOpenElsewhere) and changes
    nothing: not the kept study, session or assignment ids, not the count of entries.
    StudyLinkReplayed (with the code) once they have finished, to their own browser only."""
    spec = platform_spec(link.platform)
    external_id = spec.external_id(params)
    kept = spec.kept(params)
    existing = Participant.objects.select_related("user").filter(link=link, external_id=external_id).first()
    if existing is None:
        fresh = secrets.token_urlsafe(32)
        try:
            with transaction.atomic():
                user = get_user_model().objects.create_user(username=_username(link, external_id))
                user.set_unusable_password()
                user.save(update_fields=["password"])
                user.groups.add(Group.objects.get_or_create(name=Role.PARTICIPANT.value)[0])
                participant = Participant.objects.create(
                    link=link,
                    external_id=external_id,
                    user=user,
                    platform_ids=kept,
                    secret_hash=_secret_hash(fresh),
                )
            return Entry(participant=participant, created=True, secret=fresh)
        except IntegrityError:  # the same id entered at the same moment: the first one holds it
            existing = Participant.objects.select_related("user").get(link=link, external_id=external_id)
    participant = existing
    bind = ""
    if not participant.secret_hash and participant.state not in FINISHED:
        # a participant made before entries were bound: the next browser to enter holds it
        bind = secrets.token_urlsafe(32)
    elif not _holds_secret(participant, secret):
        raise StudyOpenElsewhere()  # (a finished one made before: their code to nobody)
    if participant.state in FINISHED:
        raise StudyLinkReplayed(participant)
    changes: dict[str, Any] = {
        "entries": F("entries") + 1,
        "last_entry_at": timezone.now(),
        "platform_ids": {**participant.platform_ids, **kept},
    }
    if bind:
        changes["secret_hash"] = _secret_hash(bind)
    Participant.objects.filter(pk=participant.pk).update(**changes)
    participant.refresh_from_db()
    return Entry(participant=participant, created=False, secret=bind)


def participant_consent(*, participant: Participant) -> Participant:
    """Agreed: on to the screening if the link has one, else to work."""
    if participant.state == ParticipantState.CONSENT:
        screening = participant.link.screening_items > 0
        participant.state = ParticipantState.SCREENING if screening else ParticipantState.WORKING
        participant.consented_at = timezone.now()
        participant.save(update_fields=["state", "consented_at"])
    return participant


def participant_finish(*, participant: Participant) -> Participant:
    """The participant's part is over, as they asked. Their batch complete (or, without a
    batch, nothing left for them after at least one answer): done, with the completion
    code. Before that, in any state (the consent, the screening, the work): ended early,
    with what they answered kept and the partial (or return) code. A participant whose
    part is over already keeps their state."""
    if participant.state not in FINISHED:
        participant.state = (
            ParticipantState.DONE if batch_complete(participant) else ParticipantState.ENDED_EARLY
        )
        participant.finished_at = timezone.now()
        participant.save(update_fields=["state", "finished_at"])
    return participant


def batch_complete(participant: Participant) -> bool:
    """The link's rule for the completion code: the batch answered (a link without a batch
    completes when nothing is left for them, which ``_batch_done`` records)."""
    link = participant.link
    return (
        participant.state == ParticipantState.WORKING
        and link.batch_size > 0
        and participant.answered >= link.batch_size
    )


def _batch_done(participant: Participant) -> None:
    participant.state = ParticipantState.DONE
    participant.finished_at = timezone.now()
    participant.save(update_fields=["state", "finished_at"])


def participant_of(user: Actor | None) -> Participant | None:
    """The participant a signed-in account is, or None for an ordinary account."""
    if user is None or not user_is_participant(user):
        return None  # only a participant's account holds the role: no query for the others
    # Read once per request: the user object is the request's, and the pages ask often.
    cached = getattr(user, "_study_participant", _UNREAD)
    if cached is _UNREAD:
        cached = (
            Participant.objects.select_related("link__campaign").filter(user_id=int(user.pk or 0)).first()
        )
        user._study_participant = cached  # type: ignore[union-attr]
    return cast(Participant | None, cached)


__all__ = [
    "FINISHED",
    "Entry",
    "Platform",
    "StudyEntryError",
    "StudyLinkRefused",
    "StudyLinkReplayed",
    "StudyOpenElsewhere",
    "batch_complete",
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


# --- screening, batches and quality control ---------------------------------------------


@dataclass(frozen=True)
class StudyStep:
    """What comes next for a participant: a lease (``assignment``), or the end of their
    part (``finished``: the done page says whether with the completion or the return code)."""

    assignment: Assignment | None = None
    finished: bool = False


def _screening_result(participant: Participant) -> None:
    """Pass (to work) or not (screened out) once the screening is over. The mark is over
    the link's screening items, not the ones answered: an item skipped, or one there was
    no gold item left for, counts as not right."""
    link = participant.link
    total = max(link.screening_items, participant.screening_seen, 1)
    passed = participant.screening_seen > 0 and participant.screening_correct / total >= link.pass_mark - 1e-9
    if passed:
        participant.state = ParticipantState.WORKING
    else:
        participant.state = ParticipantState.SCREENED_OUT
        participant.finished_at = timezone.now()
    participant.save(update_fields=["state", "finished_at"])


def study_next(*, participant: Participant, campaign: Campaign) -> StudyStep:
    """The participant's next item, or the end of their part: a screening item while they
    are screened; after the screening, on (passed) or the end (screened out); their batch
    complete, or nothing left for them after at least one answer, the end with the
    completion code. Refusals of the ordinary hand-out (a pause, a closed campaign) pass
    through as they are."""
    if participant.state in FINISHED:
        return StudyStep(finished=True)
    link = participant.link
    if participant.state == ParticipantState.SCREENING:
        if participant.screening_seen < link.screening_items:
            lease = assignment_gold_next(campaign=campaign, annotator=participant.user)
            if lease is not None:
                return StudyStep(assignment=lease)
        _screening_result(participant)  # every screening item answered (or none left)
        if participant.state == ParticipantState.SCREENED_OUT:
            return StudyStep(finished=True)
    if batch_complete(participant):
        _batch_done(participant)
        return StudyStep(finished=True)
    lease = assignment_next(campaign=campaign, annotator=participant.user)
    if lease is None and participant.answered > 0:
        _batch_done(participant)  # "0: until none is left" (and a campaign that ran out)
        return StudyStep(finished=True)
    return StudyStep(assignment=lease)


def study_after_answer(
    *, participant: Participant, is_gold: bool, gold_answer: str, judgment: Judgment, campaign: Campaign
) -> Participant:
    """Count an answer for the study (inside the answer's transaction): a screening item
    right or wrong, a real item (and whether it came faster than the link's minimum), and
    pause a participant whose gold accuracy fell below the link's mark."""
    link = participant.link
    if participant.state in FINISHED:
        return participant
    fields: list[str] = []
    if is_gold and participant.state == ParticipantState.SCREENING:
        spec = task_spec(campaign.task)
        participant.screening_seen += 1
        participant.screening_correct += int(
            spec.answer_key(judgment.answer, judgment.payload) == gold_answer
        )
        fields += ["screening_seen", "screening_correct"]
    elif not is_gold:
        participant.answered += 1
        fields.append("answered")
        if (
            link.min_seconds
            and judgment.duration_ms is not None
            and judgment.duration_ms < link.min_seconds * 1000
        ):
            participant.fast_answers += 1
            fields.append("fast_answers")
    if fields:
        participant.save(update_fields=fields)
    if is_gold and participant.state == ParticipantState.WORKING and link.gold_pause_below > 0:
        member = CampaignAnnotator.objects.filter(campaign=campaign, annotator=participant.user).first()
        if (
            member is not None
            and not member.paused
            and member.gold_seen >= link.gold_pause_after
            and member.gold_correct / member.gold_seen < link.gold_pause_below
        ):
            member.paused = True
            member.save(update_fields=["paused"])
    return participant


def study_after_skip(*, participant: Participant, assignment: Assignment) -> Participant:
    """A screening item skipped counts as answered wrong (the pass mark is over every
    screening item: skipping cannot pass it)."""
    if participant.state == ParticipantState.SCREENING and assignment.campaign_item.is_gold:
        participant.screening_seen += 1
        participant.save(update_fields=["screening_seen"])
    return participant


def participant_decide(
    *,
    participant: Participant,
    decision: str,
    bonus: Decimal | str | int = 0,
    note: str = "",
    user: Actor | None = None,
) -> Participant:
    """The curator's approve or reject, with a bonus, for the payment report."""
    _refuse_unless_curator(user)
    if decision not in PaymentDecision.values:
        raise AnnotationError(f"decision: {decision!r} is not one of {', '.join(PaymentDecision.values)}")
    try:
        amount = Decimal(str(bonus or 0)).quantize(Decimal("0.01"))
    except InvalidOperation:
        raise AnnotationError(f"bonus: {bonus!r} is not an amount") from None
    if amount < 0 or amount > 1000:
        raise AnnotationError("bonus: between 0 and 1000")
    if decision == PaymentDecision.REJECT and not note.strip():
        raise AnnotationError("note: say why (the platform shows the reason to the participant)")
    participant.decision = decision
    participant.bonus = amount
    participant.decision_note = note.strip()[:500]
    participant.decided_by = account_of(user)
    participant.decided_at = timezone.now()
    participant.save(update_fields=["decision", "bonus", "decision_note", "decided_by", "decided_at"])
    return participant

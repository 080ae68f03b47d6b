"""The crowd's participation (annotation.participation): what a study link's participant
sees and does on the annotator's page. Registered when Django starts (``apps.py``)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.urls import reverse

from annotation.crowd.services import (
    participant_of,
    participant_reentry_path,
    study_after_answer,
    study_after_skip,
    study_link_token,
    study_next,
)
from annotation.models import Assignment, Campaign, Participant, ParticipantState
from annotation.participation import Answered, Progress, Step


class StudyParticipation:
    """A crowd participant: their study's campaign only; the consent, then the screening,
    then their batch, then the page with their code."""

    def visible_campaigns(self, *, user: Any, campaigns: QuerySet[Campaign]) -> QuerySet[Campaign]:
        # participant_of reads once per request, and the annotate page asks it too
        participant = participant_of(user)
        return campaigns if participant is None else campaigns.filter(pk=participant.link.campaign_id)

    def elsewhere(self, *, user: Any) -> str:
        participant = participant_of(user)
        if participant is None:
            return ""
        token = study_link_token(participant.link)
        if participant.state == ParticipantState.CONSENT:
            return reverse("study:consent", args=[token])
        if participant.state in (
            ParticipantState.DONE,
            ParticipantState.ENDED_EARLY,
            ParticipantState.SCREENED_OUT,
        ):
            return reverse("study:done", args=[token])
        return ""

    def next_step(self, *, user: Any, campaign: Campaign) -> Step | None:
        participant = participant_of(user)
        if participant is None:
            return None
        step = study_next(participant=participant, campaign=campaign)
        if step.finished:
            return Step(redirect=reverse("study:done", args=[study_link_token(participant.link)]))
        return Step(assignment=step.assignment)

    def progress(self, *, user: Any) -> Progress | None:
        """Their qualification questions while screening, else their batch (not the
        campaign's items, which are not theirs to finish)."""
        participant = participant_of(user)
        if participant is None:
            return None
        link = participant.link
        if participant.state == ParticipantState.SCREENING and link.screening_items:
            return Progress(done=participant.screening_seen, total=link.screening_items, kind="screening")
        if link.batch_size:
            return Progress(done=participant.answered, total=link.batch_size, kind="batch")
        return None

    def page_context(self, *, user: Any) -> dict[str, Any]:
        participant = participant_of(user)
        if participant is None:
            return {}
        token = study_link_token(participant.link)
        return {
            "study": participant,
            "study_token": token,
            "study_entry": participant_reentry_path(participant),
            "study_finish": reverse("study:finish", args=[token]),
        }

    def after_answer(self, *, user: Any, answered: Answered) -> None:
        participant = participant_of(user)
        if participant is not None:
            study_after_answer(
                participant=participant,
                is_gold=answered.is_gold,
                gold_answer=answered.gold_answer,
                judgment=answered.judgment,
                campaign=answered.campaign,
            )

    def after_skip(self, *, user: Any, assignment: Assignment) -> None:
        participant = participant_of(user)
        if participant is not None:
            study_after_skip(participant=participant, assignment=assignment)

    def same_person(self, *, user: Any) -> list[int]:
        """The accounts of the same platform id under the other study links: a writer who
        comes back through a validation study's link is still the writer."""
        participant = participant_of(user)
        if participant is None:
            return []
        return list(
            Participant.objects.filter(
                external_id=participant.external_id, link__platform=participant.link.platform
            )
            .exclude(user_id=participant.user_id)
            .order_by("user_id")
            .values_list("user_id", flat=True)
        )

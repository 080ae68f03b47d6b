"""Who may do what in annotation (roles from config/roles.py)."""

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission

from core.roles import Actor, user_is_annotator, user_is_curator, user_is_participant


def user_can_annotate(user: Actor) -> bool:
    """Annotators, and crowd participants (in their study's campaign only: selectors)."""
    return user_is_annotator(user) or user_is_participant(user)


def user_can_curate(user: Actor) -> bool:
    return user_is_curator(user)


def user_can_annotate_or_curate(user: Actor) -> bool:
    return user_can_annotate(user) or user_can_curate(user)


class IsAnnotator(BasePermission):
    message = "Only annotators can take and answer items."

    def has_permission(self, request: Any, view: Any) -> bool:
        return user_can_annotate(request.user)


class NotStudyParticipant(BasePermission):
    """Crowd participants (annotation.crowd) answer on their study's page, where screening,
    batches and quality control apply: the annotator API is not theirs."""

    message = "Crowd participants answer on the study's page, not through the API."

    def has_permission(self, request: Any, view: Any) -> bool:
        return not user_is_participant(request.user)


class IsCurator(BasePermission):
    message = "Campaign management is for curators."

    def has_permission(self, request: Any, view: Any) -> bool:
        return user_can_curate(request.user)


class CampaignListPermission(BasePermission):
    """The campaign list, as its page: annotators and curators read it; curators create."""

    message = "Campaign management is for curators."

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method not in SAFE_METHODS:
            return user_can_curate(request.user)
        self.message = "Campaigns are for annotators and curators."
        return user_can_annotate(request.user) or user_can_curate(request.user)

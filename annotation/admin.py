"""Annotation admin: campaigns and their items, leases, judgments, adjudications.

Curators see all of it (`core.roles`); superusers too. What the services own is
read-only here for everyone: items and their counts, leases, judgments (changed only by
their annotator, through the annotation page, never deleted), the answers they had
before (revisions) and adjudications (recorded beside the votes on the campaign page).
In a campaign a curator may change its status, instructions, lease time and gold rate,
and pause or resume an annotator; new campaigns are made on the campaign page or with
`manage.py campaign_create`, which also create their items.
"""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from annotation.models import (
    Adjudication,
    Assignment,
    Campaign,
    CampaignAnnotator,
    CampaignItem,
    Judgment,
    JudgmentRevision,
)
from core.roles import user_is_curator


class _CuratorsSee(admin.ModelAdmin):
    def has_module_permission(self, request: HttpRequest) -> bool:
        return user_is_curator(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return user_is_curator(request.user)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Campaign)
class CampaignAdmin(_CuratorsSee):
    list_display = ("name", "task", "status", "judgments_per_item", "gold_rate", "imported", "created_at")
    list_filter = ("task", "status", "imported")
    search_fields = ("name",)
    readonly_fields = (
        "name",
        "task",
        "judgments_per_item",
        "selection",
        "imported",
        "created_by",
        "created_at",
    )

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return user_is_curator(request.user)


@admin.register(CampaignItem)
class CampaignItemAdmin(_CuratorsSee):
    list_display = ("pk", "campaign", "is_gold", "judgment_count", "needs_review")
    list_filter = ("campaign", "is_gold", "needs_review")
    raw_id_fields = ("schema", "reason", "comve_item")
    list_select_related = ("campaign",)


@admin.register(Assignment)
class AssignmentAdmin(_CuratorsSee):
    list_display = ("pk", "campaign_item", "annotator", "status", "leased_at", "expires_at", "skipped_at")
    list_filter = ("status",)
    raw_id_fields = ("campaign_item", "annotator")
    list_select_related = ("campaign_item__campaign", "annotator")


@admin.register(Judgment)
class JudgmentAdmin(_CuratorsSee):
    """Judgments are changed only by their annotator (with a revision kept) and never
    deleted by the app; the admin only shows them."""

    list_display = ("pk", "campaign_item", "annotator", "answer", "duration_ms", "submitted_at")
    list_filter = ("campaign_item__campaign",)
    raw_id_fields = ("campaign_item", "annotator")
    list_select_related = ("campaign_item__campaign", "annotator")


@admin.register(JudgmentRevision)
class JudgmentRevisionAdmin(_CuratorsSee):
    """The answer a judgment had before its annotator changed it."""

    list_display = ("pk", "judgment", "revised_by", "answer", "revised_at")
    list_filter = ("judgment__campaign_item__campaign",)
    raw_id_fields = ("judgment", "revised_by")
    list_select_related = ("judgment", "revised_by")


@admin.register(Adjudication)
class AdjudicationAdmin(_CuratorsSee):
    list_display = ("pk", "campaign_item", "curator", "decision", "created_at")
    raw_id_fields = ("campaign_item", "curator")
    list_select_related = ("campaign_item__campaign", "curator")


@admin.register(CampaignAnnotator)
class CampaignAnnotatorAdmin(_CuratorsSee):
    list_display = ("campaign", "annotator", "paused", "gold_seen", "gold_correct")
    list_filter = ("campaign", "paused")
    list_editable = ("paused",)
    readonly_fields = ("campaign", "annotator", "gold_seen", "gold_correct")
    list_select_related = ("campaign", "annotator")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return user_is_curator(request.user)

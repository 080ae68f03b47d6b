"""Annotation admin: campaigns and their items, leases, judgments (read-only), adjudications."""

from typing import Any

from django.contrib import admin

from annotation.models import Adjudication, Assignment, Campaign, CampaignAnnotator, CampaignItem, Judgment


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("name", "task", "status", "judgments_per_item", "gold_rate", "imported", "created_at")
    list_filter = ("task", "status", "imported")
    search_fields = ("name",)


@admin.register(CampaignItem)
class CampaignItemAdmin(admin.ModelAdmin):
    list_display = ("pk", "campaign", "is_gold", "judgment_count", "needs_review")
    list_filter = ("campaign", "is_gold", "needs_review")
    raw_id_fields = ("schema", "reason", "comve_item")
    readonly_fields = ("judgment_count",)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("pk", "campaign_item", "annotator", "status", "leased_at", "expires_at")
    list_filter = ("status",)
    raw_id_fields = ("campaign_item", "annotator")


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    """Judgments are never edited or deleted by the app; the admin only shows them."""

    list_display = ("pk", "campaign_item", "annotator", "answer", "duration_ms", "submitted_at")
    list_filter = ("campaign_item__campaign",)
    raw_id_fields = ("campaign_item", "annotator")

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: Any) -> bool:
        return False


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    list_display = ("pk", "campaign_item", "curator", "decision", "created_at")
    raw_id_fields = ("campaign_item", "curator")


@admin.register(CampaignAnnotator)
class CampaignAnnotatorAdmin(admin.ModelAdmin):
    list_display = ("campaign", "annotator", "paused", "gold_seen", "gold_correct")
    list_filter = ("campaign", "paused")

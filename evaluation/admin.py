"""Evaluation admin."""

from django.contrib import admin

from evaluation.models import EvaluationRun, GenerationJob


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = ("id", "release_name", "release_version", "dataset", "method", "status", "created_at")
    list_filter = ("status", "dataset", "method")
    readonly_fields = (
        "metrics",
        "timing",
        "settings",
        "model_identity",
        "release_identity",
        "attempts",
        "job_events",
        "heartbeat_at",
        "lease_owner",
    )


@admin.register(GenerationJob)
class GenerationJobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "collection", "run", "model_name", "status", "stored", "created_at")
    list_filter = ("kind", "status")
    raw_id_fields = ("run", "import_batch", "campaign")
    readonly_fields = ("settings", "attempts", "job_events", "heartbeat_at", "lease_owner")

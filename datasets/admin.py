"""The Django admin for curators: items with their labels, search and filters.

Every changelist loads its related rows in the page query (list_select_related) and
never counts the whole table twice (show_full_result_count), so a page costs the same
handful of queries with 100 items or 100,000. Foreign keys use raw id inputs: a select
box of 100,000 schemas would be the slow part of a change form.

Who gets in: staff users with the model permissions. ``manage.py seed_demo`` (and
``curator_admin_access_grant``) makes curators staff and gives the curator group the
permissions on these models; see docs/foundation.md.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from datasets.models import (
    ComVEItem,
    Explanation,
    ImportBatch,
    KnowledgeType,
    Label,
    LabelSource,
    Reason,
    Schema,
)


def _short(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


PROVENANCE = ("source_file", "source_row", "file_checksum", "import_batch")


class KnowledgeTypeFilter(admin.SimpleListFilter):
    title = "knowledge type"
    parameter_name = "knowledge_type"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(k.value, k.label) for k in KnowledgeType]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value():
            # JSON containment is not portable to SQLite: match the quoted name in the list.
            return queryset.filter(knowledge_types__icontains=f'"{self.value()}"')
        return queryset


@admin.register(Schema)
class SchemaAdmin(admin.ModelAdmin):
    list_display = (
        "external_id",
        "collection",
        "sentence_display",
        "candidate_a",
        "candidate_b",
        "answer",
        "twin_display",
        "switchable",
        "associative",
        "knowledge_types_display",
    )
    list_display_links = ("external_id", "sentence_display")
    list_filter = ("collection", "answer", "switchable", "associative", KnowledgeTypeFilter)
    search_fields = ("=external_id", "text_before", "text_after", "candidate_a", "candidate_b")
    list_select_related = ("twin",)
    raw_id_fields = ("twin", "import_batch")
    readonly_fields = PROVENANCE
    show_full_result_count = False
    list_per_page = 100
    fieldsets = (
        (None, {"fields": ("collection", "external_id", "text_before", "pronoun", "text_after")}),
        ("Answer", {"fields": ("candidate_a", "candidate_b", "answer", "source", "twin")}),
        ("Labels", {"fields": ("switched_text", "switchable", "associative", "knowledge_types")}),
        ("Provenance", {"fields": PROVENANCE}),
    )

    @admin.display(description="sentence", ordering="text_before")
    def sentence_display(self, obj: Schema) -> str:
        return _short(f"{obj.text_before} [{obj.pronoun}] {obj.text_after}", 100)

    @admin.display(description="twin", ordering="twin__external_id")
    def twin_display(self, obj: Schema) -> str:
        return obj.twin.external_id if obj.twin else "–"

    @admin.display(description="knowledge types")
    def knowledge_types_display(self, obj: Schema) -> str:
        return ", ".join(obj.knowledge_types or [])


@admin.register(Reason)
class ReasonAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "schema_display",
        "position",
        "text_display",
        "origin",
        "plausibility",
        "label",
        "source_label",
        "knowledge_type",
    )
    list_display_links = ("id", "text_display")
    list_filter = ("origin", "label", "source_label", "knowledge_type", "schema__collection")
    search_fields = ("text", "=schema__external_id")
    list_select_related = ("schema",)
    raw_id_fields = ("schema", "import_batch")
    readonly_fields = PROVENANCE
    show_full_result_count = False
    list_per_page = 100

    @admin.display(description="schema", ordering="schema__external_id")
    def schema_display(self, obj: Reason) -> str:
        return f"{obj.schema.collection}:{obj.schema.external_id}"

    @admin.display(description="text", ordering="text")
    def text_display(self, obj: Reason) -> str:
        return _short(obj.text)


@admin.register(ComVEItem)
class ComVEItemAdmin(admin.ModelAdmin):
    list_display = (
        "external_id",
        "dataset",
        "split",
        "statement_0_display",
        "statement_1_display",
        "false_index",
        "correct_option",
        "has_a",
        "has_b",
        "has_c",
        "needs_rewrite",
    )
    list_display_links = ("external_id",)
    list_filter = (
        "dataset",
        "split",
        "has_a",
        "has_b",
        "has_c",
        "correct_option",
        "false_index",
        "needs_rewrite",
    )
    search_fields = ("=external_id", "statement_0", "statement_1", "false_statement")
    raw_id_fields = ("import_batch",)
    readonly_fields = PROVENANCE
    show_full_result_count = False
    list_per_page = 100

    @admin.display(description="statement 0", ordering="statement_0")
    def statement_0_display(self, obj: ComVEItem) -> str:
        return _short(obj.statement_0, 60)

    @admin.display(description="statement 1", ordering="statement_1")
    def statement_1_display(self, obj: ComVEItem) -> str:
        return _short(obj.statement_1, 60)


@admin.register(ImportBatch)
class ImportBatchAdmin(admin.ModelAdmin):
    """Read-only: batches are written by the import service only."""

    list_display = (
        "id",
        "format",
        "created_at",
        "created_by",
        "created",
        "updated",
        "unchanged",
        "file_names",
    )
    list_filter = ("format",)
    list_select_related = ("created_by",)
    search_fields = ("=id",)
    show_full_result_count = False

    @admin.display(description="files")
    def file_names(self, obj: ImportBatch) -> str:
        return ", ".join(f.get("name", "?") for f in obj.files)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(LabelSource)
class LabelSourceAdmin(admin.ModelAdmin):
    """Read-only: sources are written by imports and aggregations."""

    list_display = ("name", "title", "kind", "import_batch", "campaign_id", "created_at")
    list_filter = ("kind",)
    search_fields = ("name", "title")
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin):
    """Read-only: every label of every item from every source (a layer each)."""

    list_display = ("id", "name", "source", "schema_id", "reason_id", "comve_item_id", "value", "updated_at")
    list_filter = ("name", "source__kind")
    list_select_related = ("source",)
    raw_id_fields = ("source", "schema", "reason", "comve_item")
    search_fields = ("=schema__external_id", "=source__name")
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Explanation)
class ExplanationAdmin(admin.ModelAdmin):
    """A model's ComVE explanations, stored to be judged (evaluation's generation jobs)."""

    list_display = ("id", "run_id", "model_name", "comve_item", "text")
    list_filter = ("model_name",)
    raw_id_fields = ("comve_item",)

"""Releases in the admin: curators approve and publish (with a confirmation showing the
diff and agreement figures); nothing about a published release can be changed or deleted."""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from core.roles import user_is_curator
from releases import services
from releases.errors import ReleaseError
from releases.models import Release, ReleaseFile, ReleaseItem, ReleaseStatus
from releases.notices import approved_notice, published_notice


class ReleaseCreateForm(forms.ModelForm):
    """The add form: what release_create needs; the service freezes the items."""

    collection = forms.CharField(
        required=False,
        help_text="WSC/WinoWhy: only this collection (e.g. wsc273; empty: the public ones); ComVE: your own items' collection",
    )

    class Meta:
        model = Release
        fields = ["name", "dataset", "split", "version", "changelog"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.request_user = kwargs.pop("request_user", None)
        super().__init__(*args, **kwargs)
        self.release: Release | None = None

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]  # field and NAME@VERSION checks on the unsaved row
        if self.errors:
            return
        data = self.cleaned_data
        try:
            # The service validates and writes in one transaction; the admin then shows it.
            self.release = services.release_create(
                name=data["name"],
                dataset=data["dataset"],
                split=data.get("split") or "",
                version=data["version"],
                changelog=data.get("changelog") or "",
                collection=data.get("collection") or "",
                user=self.request_user,
            )
        except ReleaseError as error:
            self.add_error(None, str(error))


class _NoWrites:
    """Admin pages that show release parts but never add, change or delete them."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReleaseFileInline(_NoWrites, admin.TabularInline):
    model = ReleaseFile
    extra = 0
    can_delete = False
    fields = ("name", "size", "sha256", "items", "path")
    readonly_fields = fields


@admin.register(Release)
class ReleaseAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "version",
        "dataset",
        "split",
        "status",
        "build_status",
        "build_progress",
        "item_count",
        "approved_at",
        "published_at",
    )
    list_filter = ("status", "dataset", "build_status")
    search_fields = ("name", "version", "changelog")
    inlines = [ReleaseFileInline]
    actions = ["approve_releases", "publish_releases"]
    fields = (
        "name",
        "version",
        "dataset",
        "split",
        "selection",
        "status",
        "changelog",
        "item_count",
        "previous_version",
        "diff",
        "agreement_summary",
        "sources",
        "manifest",
        "build_status",
        "build_progress",
        "build_error",
        "built_at",
        "attempts",
        "job_events",
        "heartbeat_at",
        "lease_owner",
        "created_by",
        "created_at",
        "approved_by",
        "approved_at",
        "published_by",
        "published_at",
    )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return []
        # Only a draft's changelog is editable (through release_changelog_update).
        return [f for f in self.fields if f != "changelog"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ["name", "dataset", "split", "collection", "version", "changelog"]
        return self.fields

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is not None:
            return super().get_form(request, obj, change=change, **kwargs)
        user = request.user

        class BoundCreateForm(ReleaseCreateForm):
            def __init__(self, *args: Any, **inner: Any) -> None:
                super().__init__(*args, request_user=user, **inner)

        return BoundCreateForm

    def get_inlines(self, request: HttpRequest, obj: Any) -> Any:
        return [] if obj is None else self.inlines

    # Curators work here; model permissions are not needed on top of the role.
    def has_module_permission(self, request: HttpRequest) -> bool:
        return user_is_curator(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return user_is_curator(request.user)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return user_is_curator(request.user)  # the add form calls release_create

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if not user_is_curator(request.user):
            return False
        return obj is None or obj.status == ReleaseStatus.DRAFT

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if not user_is_curator(request.user):
            return False
        return obj is not None and obj.status != ReleaseStatus.PUBLISHED

    def get_actions(self, request: HttpRequest) -> Any:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # a bulk delete could reach published rows
        return actions

    def save_model(self, request: HttpRequest, obj: Release, form: Any, change: bool) -> None:
        if not change:
            created = form.release  # written by release_create in the form's clean()
            obj.pk = created.pk
            obj._state.adding = False
            return
        services.release_changelog_update(release=obj, changelog=obj.changelog, user=request.user)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        pass  # nothing related is edited here

    def delete_model(self, request: HttpRequest, obj: Release) -> None:
        services.release_delete(release=obj, user=request.user)

    def _confirm(self, request: HttpRequest, queryset: QuerySet[Release], action: str, title: str) -> Any:
        """Releases whose state refuses the step are refused at once (never shown the
        "publishing is final" page); the others are confirmed, then the step is taken."""
        publishing = action == "publish_releases"
        refusal_of = services.release_publish_refusal if publishing else services.release_approve_refusal
        allowed = []
        for release in queryset:
            refusal = refusal_of(release=release, user=request.user)
            if refusal is None:
                allowed.append(release)
            else:
                self.message_user(
                    request, f"Not {'published' if publishing else 'approved'}: {refusal}", messages.ERROR
                )
        if not allowed:
            return None
        if request.POST.get("confirm") == "yes":
            service = services.release_publish if publishing else services.release_approve
            notice = published_notice if publishing else approved_notice
            for release in allowed:
                try:
                    done = service(release=release, user=request.user)
                except ReleaseError as error:
                    self.message_user(request, str(error), messages.ERROR)
                else:
                    self.message_user(request, notice(done), messages.SUCCESS)
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "action": action,
            "releases": allowed,
            "opts": self.model._meta,
            "action_checkbox_name": ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "releases/admin_confirm.html", context)

    @admin.action(description="Approve the selected releases (curators)")
    def approve_releases(self, request: HttpRequest, queryset: QuerySet[Release]) -> HttpResponse | None:
        return self._confirm(request, queryset, "approve_releases", "Approve releases")

    @admin.action(description="Publish the selected releases (curators; final)")
    def publish_releases(self, request: HttpRequest, queryset: QuerySet[Release]) -> HttpResponse | None:
        return self._confirm(request, queryset, "publish_releases", "Publish releases")


class _ReadOnlyAdmin(_NoWrites, admin.ModelAdmin):
    def has_module_permission(self, request: HttpRequest) -> bool:
        return user_is_curator(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return user_is_curator(request.user)


@admin.register(ReleaseItem)
class ReleaseItemAdmin(_ReadOnlyAdmin):
    list_display = ("release", "position", "key", "digest")
    list_filter = ("release",)
    search_fields = ("key",)
    list_select_related = ("release",)


@admin.register(ReleaseFile)
class ReleaseFileAdmin(_ReadOnlyAdmin):
    list_display = ("release", "name", "size", "sha256", "items")
    list_filter = ("release",)
    list_select_related = ("release",)

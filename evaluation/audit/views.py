"""Audit pages: the list (and, for curators, the form that starts one), an audit's page
(progress while its features are computed, then the baselines, the cartography map and
AfLite, each table downloadable as CSV and JSON from the same frame), and the curator's
filtered release."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from core.downloads import table_download
from core.roles import role_required
from core.tables import frame_records
from core.web import enqueue_after_commit
from evaluation import selectors as evaluation_selectors
from evaluation.audit import selectors
from evaluation.audit.forms import AuditStartForm, FilteredReleaseForm
from evaluation.audit.permissions import user_can_see_audit, user_can_see_audits, user_can_start_audit
from evaluation.audit.services import (
    AuditError,
    audit_create,
    audit_filtered_release_create,
    lm_accuracy_on,
    source_parse,
)
from evaluation.audit.tables import cartography_map
from evaluation.audit.tasks import audit_enqueue
from evaluation.models import Audit, AuditStatus

AUDITS_ONLY = "Audits are for curators and researchers."


@role_required(user_can_see_audits, AUDITS_ONLY)
def audit_list(request: HttpRequest) -> HttpResponse:
    can_start = user_can_start_audit(user=request.user)
    form = None
    status = 200
    if can_start:
        form = AuditStartForm(
            request.POST if request.method == "POST" else None,
            sources=selectors.audit_sources(),
            models=evaluation_selectors.model_list(),
        )
        if request.method == "POST":
            status = 400
            if form.is_valid():
                arguments = form.service_arguments()
                try:
                    audit = audit_create(
                        source=source_parse(arguments.pop("source")), created_by=request.user, **arguments
                    )
                except AuditError as exc:
                    form.add_refusal(exc)
                else:
                    enqueue_after_commit(
                        request, f"Audit #{audit.pk}", lambda: audit_enqueue(audit_id=audit.pk)
                    )
                    return redirect("evaluation:audit-detail", audit_id=audit.pk)
    elif request.method == "POST":
        raise PermissionDenied("Only curators start audits.")
    context = {"form": form, "audits": selectors.audit_list(user=request.user)[:100]}
    return render(request, "evaluation/audit_list.html", context, status=status)


def _cell(value: Any) -> str:
    """A table cell as the page writes it (the downloads keep full precision)."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) >= 1e-4 or value == 0 else f"{value:.2e}"
    return str(value)


def _tables(audit: Audit) -> list[dict[str, Any]]:
    out = []
    for name, (title, frame_of) in selectors.AUDIT_TABLES.items():
        if name == "items":
            continue
        frame = frame_of(audit)
        if frame.empty:
            continue
        rows = [[_cell(v) for v in record.values()] for record in frame_records(frame)]
        out.append({"name": name, "title": title, "columns": [str(c) for c in frame.columns], "rows": rows})
    return out


@role_required(user_can_see_audits, AUDITS_ONLY)
def audit_detail(request: HttpRequest, audit_id: int) -> HttpResponse:
    audit = selectors.audit_get(user=request.user, audit_id=audit_id)
    context: dict[str, Any] = {"audit": audit, "active": audit.active}
    if getattr(request, "htmx", False) and audit.active:
        return render(request, "evaluation/audit_detail.html#progress", context)
    if audit.status == AuditStatus.DONE:
        kept = [
            k
            for k, r in zip(
                audit.per_item.get("key", []), audit.per_item.get("aflite_removed_in", []), strict=False
            )
            if r is None
        ]
        context |= {
            "tables": _tables(audit),
            "map": cartography_map(audit.per_item, seed=int(audit.params.get("seed", 0))),
            "lm_full": lm_accuracy_on(audit),
            "lm_kept": lm_accuracy_on(audit, kept),
            "release_form": FilteredReleaseForm(initial={"name": _filtered_name(audit)})
            if user_can_start_audit(user=request.user) and audit.release_id
            else None,
        }
    return render(request, "evaluation/audit_detail.html", context)


def _filtered_name(audit: Audit) -> str:
    return f"{audit.release.name}-aflite" if audit.release else ""


@role_required(user_can_see_audits, AUDITS_ONLY)
def audit_table(request: HttpRequest, audit_id: int, table: str, fmt: str) -> HttpResponse:
    audit = selectors.audit_get(user=request.user, audit_id=audit_id)
    if table not in selectors.AUDIT_TABLES or audit.status != AuditStatus.DONE:
        raise Http404("no such table")
    title, frame_of = selectors.AUDIT_TABLES[table]
    meta = {
        "audit": audit.pk,
        "source": audit.source_label,
        "model": audit.model_name,
        "model_sha256": audit.model_sha256,
        "table": title,
    }
    return table_download(frame_of(audit), stem=f"audit-{audit.pk}-{table}", fmt=fmt, meta=meta)


@role_required(user_can_start_audit, "Only curators make releases.")
@require_POST
def audit_filtered_release(request: HttpRequest, audit_id: int) -> HttpResponse:
    audit = selectors.audit_get(user=request.user, audit_id=audit_id)
    if not user_can_see_audit(user=request.user, audit=audit):
        raise Http404("no such audit")
    form = FilteredReleaseForm(request.POST)
    if not form.is_valid():
        messages.error(
            request, "; ".join(f"{k}: {' '.join(str(e) for e in v)}" for k, v in form.errors.items())
        )
        return redirect("evaluation:audit-detail", audit_id=audit.pk)
    release = audit_filtered_release_create(
        audit=audit, name=form.cleaned_data["name"], version=form.cleaned_data["version"], user=request.user
    )
    messages.success(
        request,
        f"Release {release.name}@{release.version} (draft) holds the {release.item_count} items AfLite kept.",
    )
    return redirect("releases:release-detail", name=release.name, version=release.version)

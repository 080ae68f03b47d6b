"""manage.py audit and manage.py aflite: their help, what they print, and their refusals."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError

from evaluation.models import Audit, AuditStatus
from releases.models import Release
from tests.evaluation.audit_helpers import comve_release

pytestmark = pytest.mark.django_db

#: A small audit of comve_release's release with the tiny model: folds, epochs and
#: AfLite's parameters cut down to its size.
SMALL_AUDIT = (
    "--release=comve-audit@1.0.0",
    "--model=tiny-causal",
    "--folds=3",
    "--epochs=3",
    "--repeats=1",
    "--aflite=m=8",
    "--aflite=k=4",
    "--aflite=tau=0.6",
    "--aflite=target_n=20",
)


@pytest.mark.parametrize("name", ["audit", "aflite"])
def test_help_says_what_the_command_does(name):
    text = load_command_class("evaluation", name).create_parser("manage.py", name).format_help()
    assert "AfLite" in text and "Examples:" in text


def test_audit_then_aflite_print_the_figures_and_make_the_filtered_release(
    audit_registry, curator, django_capture_on_commit_callbacks, tmp_path, settings
):
    settings.MEDIA_ROOT = tmp_path / "media"
    comve_release(django_capture_on_commit_callbacks, curator)
    out = io.StringIO()
    call_command(
        "audit",
        *SMALL_AUDIT,
        stdout=out,
        stderr=io.StringIO(),
    )
    text = out.getvalue()
    audit = Audit.objects.get()
    assert audit.status == AuditStatus.DONE
    assert "Partial-input baselines" in text and "statement" in text and "lm zero-shot" in text
    assert f"AfLite: kept {audit.results['aflite']['kept']}" in text
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "aflite",
            f"--audit={audit.pk}",
            "--release=comve-audit-aflite",
            "--user=cora",
            "--json",
            stdout=out,
        )
    body = json.loads(out.getvalue())
    release = Release.objects.get(name="comve-audit-aflite")
    assert body["release"] == "comve-audit-aflite@1.0.0" and release.item_count == body["aflite"]["kept"]
    assert body["lm_accuracy_all"]["n"] == 40 and body["lm_accuracy_kept"]["n"] == release.item_count
    again = io.StringIO()
    call_command("aflite", f"--audit={audit.pk}", "--aflite=k=2", "--json", stdout=again)
    assert json.loads(again.getvalue())["aflite"]["params"]["k"] == 2


def test_audit_refuses_a_model_not_in_the_registry_naming_it_and_writes_nothing(
    audit_registry, curator, django_capture_on_commit_callbacks, tmp_path, settings
):
    settings.MEDIA_ROOT = tmp_path / "media"
    comve_release(django_capture_on_commit_callbacks, curator)
    with pytest.raises(CommandError, match="model: no model 'gpt-9' in the registry"):
        call_command("audit", "--release=comve-audit@1.0.0", "--model=gpt-9")
    with pytest.raises(CommandError, match="release: no release 'nope@1.0.0'"):
        call_command("audit", "--release=nope@1.0.0", "--model=tiny-causal")
    assert not Audit.objects.exists()


def test_audit_without_queue_waits_when_another_process_finishes_the_last_chunk(
    audit_registry, curator, django_capture_on_commit_callbacks, tmp_path, settings, monkeypatch
):
    """A model worker took the last chunk while this process ran the others: the command
    waits for the audit to end (the worker analyses it) and prints its results, instead
    of stopping at "audit #N is features"."""
    from evaluation.audit import services
    from evaluation.management.commands import audit as command

    settings.MEDIA_ROOT = tmp_path / "media"
    comve_release(django_capture_on_commit_callbacks, curator)
    worker_ran: list[int] = []

    def all_but_the_last_chunk(*, audit):
        chunks = list(audit.chunks.order_by("index").values_list("pk", flat=True))
        for chunk_id in chunks[:-1]:
            assert not services.audit_chunk_run(chunk_id=chunk_id)
        worker_ran.append(chunks[-1])  # "the worker" has claimed it
        audit.refresh_from_db()
        return audit

    def the_worker_meanwhile(seconds):  # the command's poll: the worker finishes and analyses
        if worker_ran and worker_ran[-1] > 0:
            chunk_id, worker_ran[-1] = worker_ran[-1], 0
            if services.audit_chunk_run(chunk_id=chunk_id):
                services.audit_analyse(audit_id=Audit.objects.get().pk)

    monkeypatch.setattr(command, "audit_run_here", all_but_the_last_chunk)
    monkeypatch.setattr(command.time, "sleep", the_worker_meanwhile)
    out = io.StringIO()
    call_command(
        "audit",
        *SMALL_AUDIT,
        "--chunk-texts=20",
        stdout=out,
        stderr=io.StringIO(),
    )
    audit = Audit.objects.get()
    assert audit.chunks_total >= 2 and worker_ran == [0]
    assert audit.status == AuditStatus.DONE
    assert f"AfLite: kept {audit.results['aflite']['kept']}" in out.getvalue()

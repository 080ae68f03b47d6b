"""release_create / approve / publish / export as management commands."""

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from releases.models import Release, ReleaseStatus
from tests.releases.factories import make_comve, make_schemas

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_commands_create_approve_publish_and_export(
    settings, tmp_path, curator, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_comve(4)
    with django_capture_on_commit_callbacks(execute=True):
        out = run(
            "release_create",
            "comve-test",
            "--dataset",
            "comve",
            "--split",
            "test",
            "--version",
            "1.0.0",
            "--changelog",
            "First",
            "--user",
            curator.username,
        )
    assert "created comve-test@1.0.0" in out and "4 items" in out
    assert "is approved" in run("release_approve", "comve-test@1.0.0", "--user", curator.username)
    assert "is published" in run("release_publish", "comve-test@1.0.0")  # as the system
    release = Release.objects.get(name="comve-test")
    assert (
        release.status == ReleaseStatus.PUBLISHED
        and release.approved_by == curator
        and release.published_by is None
    )
    out_dir = tmp_path / "export"
    out = run("release_export", "comve-test@1.0.0", "--out", str(out_dir))
    assert "identical to the manifest" in out
    for file in release.files.all():
        assert (out_dir / file.name).read_bytes() == (Path(settings.MEDIA_ROOT) / file.path).read_bytes()


def test_commands_report_bad_input_clearly(settings, tmp_path, curator):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(1)
    with pytest.raises(CommandError, match="not a semantic version"):
        run("release_create", "wsc", "--dataset", "wsc", "--version", "1.0")
    with pytest.raises(CommandError, match="NAME@X.Y.Z"):
        run("release_approve", "wsc")
    with pytest.raises(CommandError, match="no release wsc@9.9.9"):
        run("release_publish", "wsc@9.9.9")
    with pytest.raises(CommandError, match="no user named"):
        run("release_approve", "wsc@1.0.0", "--user", "ghost")
    run("release_create", "wsc", "--dataset", "wsc", "--version", "1.0.0", "--build-now")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(CommandError, match="not empty"):
        run("release_export", "wsc@1.0.0", "--out", str(tmp_path / "full"))


def test_release_build_recovers_a_failed_build_and_only_checks_a_published_release(
    settings, tmp_path, curator
):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_schemas(2)
    run("release_create", "wsc", "--dataset", "wsc", "--version", "1.0.0")  # queued, never built here
    Release.objects.filter(name="wsc").update(build_status="failed", build_error="worker died")
    assert "files done" in run("release_build", "wsc@1.0.0", "--user", curator.username)
    run("release_approve", "wsc@1.0.0")
    run("release_publish", "wsc@1.0.0")
    before = Release.objects.filter(name="wsc").values().get()
    assert "files done" in run("release_build", "wsc@1.0.0", "--force")
    assert Release.objects.filter(name="wsc").values().get() == before

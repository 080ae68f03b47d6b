"""Builds a small, realistic site, or reads one back, for tests/backups/test_backup_restore.py.

Run in a subprocess against a site of its own (``DATABASE_URL``, ``WINNOW_VAR_DIR``):
``python site_probe.py build OUTSIDE_DIR`` makes the demo site (accounts, items, campaigns,
two published releases with their files, baseline runs, a run whose predictions were
uploaded on the runs page, and a run whose result folder lies outside MEDIA_ROOT);
``python site_probe.py state`` prints JSON: the rows of every table, each published
release's files (rows and bytes on disk), each run's results and upload, and whether the
published releases still refuse changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.files.uploadedfile import SimpleUploadedFile  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import DatabaseError, connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.urls import reverse  # noqa: E402

from backups.services import site_models  # noqa: E402
from evaluation.models import EvaluationRun  # noqa: E402
from evaluation.services import evaluation_run, evaluation_run_create  # noqa: E402
from releases.errors import ReleaseImmutableError  # noqa: E402
from releases.models import Release  # noqa: E402


def _sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def build(outside: Path) -> dict[str, Any]:
    for command, args in (
        ("seed_demo", []),
        ("annotation_demo", []),
        ("release_demo", []),
        ("evaluation_demo", ["--no-model"]),
    ):
        call_command(command, *args, verbosity=0)
    # An upload through the runs page, as a researcher does it.
    wsc = Path(settings.MEDIA_ROOT) / "releases" / "demo-wsc" / "1.0.0" / "wsc.jsonl"
    rows = [json.loads(line) for line in wsc.read_text().splitlines()]
    predictions = "".join(json.dumps({"id": row["id"], "prediction": "A"}) + "\n" for row in rows)
    client = Client()
    client.login(username="researcher", password="researcher")
    response = client.post(
        reverse("evaluation:run-list"),
        {
            "release": "demo-wsc@1.0.0",
            "method": "predictions",
            "seed": 0,
            "predictions": SimpleUploadedFile("mine.jsonl", predictions.encode()),
        },
    )
    assert response.status_code == 302, response.content[:2000]
    # A run whose results were written outside MEDIA_ROOT (`manage.py evaluate --out`).
    run = evaluation_run_create(release="demo-wsc@1.0.0", method="first", out_dir=str(outside))
    evaluation_run(run=run)
    return state()


def state() -> dict[str, Any]:
    counts = {m._meta.label_lower: m._base_manager.count() for m in site_models()}
    releases = []
    for release in Release.objects.order_by("name", "version"):
        releases.append(
            {
                "ref": release.ref,
                "status": release.status,
                "manifest": release.manifest,
                "files": [
                    [f.name, f.sha256, f.size, _sha(Path(settings.MEDIA_ROOT) / f.path)]
                    for f in release.files.order_by("name")
                ],
                "items": list(release.items.order_by("position").values_list("key", "digest")),
            }
        )
    runs = []
    for run in EvaluationRun.objects.order_by("pk"):
        folder = Path(run.results_dir)
        runs.append(
            {
                "id": run.pk,
                "method": run.method,
                "status": run.status,
                "metrics": run.metrics,
                "results": {p.name: _sha(p) for p in sorted(folder.iterdir())} if folder.is_dir() else None,
                "under_media": Path(run.results_dir).is_relative_to(Path(settings.MEDIA_ROOT).resolve()),
                "upload": _sha(Path(run.predictions_path)) if run.predictions_path else None,
                "upload_under_media": run.predictions_path.startswith(
                    str(Path(settings.MEDIA_ROOT).resolve())
                ),
            }
        )
    published = Release.objects.filter(status="published").first()
    refusals = []
    if published is not None:
        try:
            Release.objects.filter(pk=published.pk).update(changelog="changed")
            refusals.append(False)
        except ReleaseImmutableError:
            refusals.append(True)
        for sql in (
            "UPDATE datasets_release SET changelog = 'changed' WHERE id = %s",
            "DELETE FROM datasets_releaseitem WHERE release_id = %s",
        ):
            try:
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute(sql, [published.pk])
                refusals.append(False)
            except DatabaseError:
                refusals.append(True)
    # New rows get fresh ids after a restore (sequences follow the loaded ids).
    from django.contrib.auth import get_user_model

    newcomer = get_user_model().objects.create_user(username="newcomer-probe", password="x")
    new_id_free = newcomer.pk > max(counts.get("auth.user", 0), 0)
    newcomer.delete()
    return {
        "vendor": connection.vendor,
        "counts": counts,
        "releases": releases,
        "runs": runs,
        "guard_refusals": refusals,
        "new_id_free": new_id_free,
    }


if __name__ == "__main__":
    step = sys.argv[1]
    result = build(Path(sys.argv[2])) if step == "build" else state()
    print(json.dumps(result, sort_keys=True))

"""Seeds a database migrated to the state of the previous main (release models still in
``datasets``) and, after ``migrate``, reads it back with today's models.

Run by tests/releases/test_migration_from_datasets.py in a subprocess against a database
of its own (``DATABASE_URL``): ``python migration_probe.py seed`` or ``... check``; prints
JSON on stdout.
"""

from __future__ import annotations

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

from django.db import connection, transaction  # noqa: E402
from django.db.migrations.executor import MigrationExecutor  # noqa: E402

#: The leaf migrations of the previous main (before the releases app existed).
PREVIOUS_MAIN = [
    ("datasets", "0004_release_published_guards"),
    ("annotation", "0002_assignment_indexes"),
    ("evaluation", "0002_cloze_run"),
    ("admin", "0003_logentry_add_action_flag_choices"),
    ("sessions", "0001_initial"),
]


def _rows(release_model: Any, item_model: Any, file_model: Any) -> dict[str, Any]:
    fields = ("id", "name", "version", "status", "dataset", "changelog", "manifest", "item_count")
    return {
        "releases": [{k: r[k] for k in fields} for r in release_model.objects.order_by("id").values(*fields)],
        "items": list(
            item_model.objects.order_by("id").values_list(
                "id", "release_id", "position", "key", "digest", "payload"
            )
        ),
        "files": list(
            file_model.objects.order_by("id").values_list("id", "release_id", "name", "sha256", "size")
        ),
    }


def seed() -> dict[str, Any]:
    executor = MigrationExecutor(connection)
    old = executor.loader.project_state(PREVIOUS_MAIN).apps
    Release = old.get_model("datasets", "Release")  # noqa: N806
    ReleaseItem = old.get_model("datasets", "ReleaseItem")  # noqa: N806
    ReleaseFile = old.get_model("datasets", "ReleaseFile")  # noqa: N806
    ContentType = old.get_model("contenttypes", "ContentType")  # noqa: N806
    Permission = old.get_model("auth", "Permission")  # noqa: N806
    Group = old.get_model("auth", "Group")  # noqa: N806
    User = old.get_model("auth", "User")  # noqa: N806
    LogEntry = old.get_model("admin", "LogEntry")  # noqa: N806
    with transaction.atomic():
        curator = User.objects.create(username="cora", is_staff=True)
        releases = []
        for n, (name, status) in enumerate(
            (("wsc273", "published"), ("wsc273", "draft"), ("winowhy", "approved"))
        ):
            version = f"1.{n}.0"
            release = Release.objects.create(
                name=name,
                dataset="wsc" if name == "wsc273" else "winowhy",
                version=version,
                version_minor=n,
                status="draft" if status == "published" else status,
                changelog=f"release {n}",
                manifest={"files": {"wsc.jsonl": {"sha256": "ab" * 32}}},
                item_count=3,
                created_by=curator,
            )
            for position in range(3):
                ReleaseItem.objects.create(
                    release=release,
                    position=position,
                    key=f"{name}:{position}",
                    payload={"id": position, "text": f"item {position} of {version}"},
                    digest=f"{n}{position}" * 32,
                )
            ReleaseFile.objects.create(
                release=release, name="wsc.jsonl", size=123 + n, sha256="cd" * 32, items=3, path=f"r/{n}"
            )
            releases.append(release)
        # published last, as release_publish does: the triggers refuse new rows afterwards
        Release.objects.filter(pk=releases[0].pk).update(status="published")
        release_type = ContentType.objects.get(app_label="datasets", model="release")
        change = Permission.objects.get(content_type=release_type, codename="change_release")
        group = Group.objects.create(name="release-editors")
        group.permissions.add(change)
        curator.groups.add(group)
        LogEntry.objects.create(
            user=curator,
            content_type=release_type,
            object_id=str(releases[0].pk),
            object_repr="wsc273@1.0.0",
            action_flag=1,
            change_message="published",
        )
    return {
        "rows": _rows(Release, ReleaseItem, ReleaseFile),
        "release_content_type": release_type.pk,
        "change_permission": change.pk,
        "published": releases[0].pk,
        "draft": releases[1].pk,
    }


def check() -> dict[str, Any]:
    from django.contrib.admin.models import LogEntry
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType

    from releases.errors import ReleaseImmutableError
    from releases.models import Release, ReleaseFile, ReleaseItem

    published = Release.objects.get(status="published")
    draft = Release.objects.filter(status="draft").get()
    outcome: dict[str, Any] = {"rows": _rows(Release, ReleaseItem, ReleaseFile)}
    try:
        Release.objects.filter(pk=published.pk).update(changelog="changed")
        outcome["orm_update_refused"] = False
    except ReleaseImmutableError:
        outcome["orm_update_refused"] = True
    refused = []
    for statement in (
        "UPDATE datasets_release SET changelog = 'raw' WHERE id = %s",
        "DELETE FROM datasets_releaseitem WHERE release_id = %s",
        "UPDATE datasets_releasefile SET sha256 = 'x' WHERE release_id = %s",
    ):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(statement, [published.pk])
            refused.append(False)
        except Exception:  # the trigger's error, whatever the database calls it
            refused.append(True)
    outcome["raw_writes_refused"] = refused
    Release.objects.filter(pk=draft.pk).update(changelog="a draft still changes")
    outcome["draft_changelog"] = Release.objects.get(pk=draft.pk).changelog
    release_type = ContentType.objects.get_for_model(Release)
    outcome["release_content_type"] = [release_type.pk, release_type.app_label]
    outcome["stale_content_types"] = ContentType.objects.filter(
        app_label="datasets", model__in=["release", "releaseitem", "releasefile"]
    ).count()
    entry = LogEntry.objects.get(object_repr="wsc273@1.0.0")
    outcome["log_entry_object"] = str(entry.get_edited_object())
    change = Permission.objects.get(content_type__app_label="releases", codename="change_release")
    outcome["change_permission"] = change.pk
    user = get_user_model().objects.get(username="cora")
    outcome["has_perm"] = user.has_perm("releases.change_release")
    return outcome


if __name__ == "__main__":
    step = sys.argv[1]
    result = seed() if step == "seed" else check()
    print(json.dumps(result, default=str))

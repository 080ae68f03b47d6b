"""release_create / build / approve / publish: the happy path and every refusal."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from releases import services
from releases.errors import ReleaseStateError, ReleaseValidationError
from releases.models import BuildStatus, Release, ReleaseItem, ReleaseStatus
from tests.releases.factories import create_release, make_comve, make_reasons, make_schemas

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"version": "1.0"}, "not a semantic version"),
        ({"version": "01.0.0"}, "not a semantic version"),
        ({"version": "v1.0.0"}, "not a semantic version"),
        ({"name": "Not A Slug"}, "must be a slug"),
        ({"dataset": "imagenet"}, "unknown data set"),
        ({"dataset": "comve"}, "needs a split"),
        ({"dataset": "comve", "split": "nope"}, "needs a split"),
        ({"split": "test"}, "applies to comve"),
        ({"collection": "nothing-here"}, "nothing to release"),
    ],
)
def test_release_create_refuses_bad_input_and_writes_nothing(curator, kwargs, message):
    make_schemas(2)
    args = {"name": "wsc", "dataset": "wsc", "version": "1.0.0", "user": curator, **kwargs}
    with pytest.raises(ReleaseValidationError, match=message):
        services.release_create(**args)
    assert not Release.objects.exists()
    assert not ReleaseItem.objects.exists()


def test_release_create_refuses_an_existing_version_and_another_dataset_under_the_same_name(
    curator, django_capture_on_commit_callbacks
):
    make_schemas(2)
    create_release(django_capture_on_commit_callbacks, user=curator)
    with pytest.raises(ReleaseValidationError, match="exists already"):
        services.release_create(name="wsc", dataset="wsc", version="1.0.0", user=curator)
    make_reasons(make_schemas(1, collection="more"))
    with pytest.raises(ReleaseValidationError, match="is a wsc release"):
        services.release_create(name="wsc", dataset="winowhy", version="2.0.0", user=curator)
    assert Release.objects.count() == 1


def test_release_create_freezes_items_in_order_and_builds_after_commit(
    curator, django_capture_on_commit_callbacks
):
    make_schemas(5)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        release = services.release_create(name="wsc", dataset="wsc", version="0.1.0", user=curator)
    assert Release.objects.get(pk=release.pk).build_status == BuildStatus.QUEUED
    assert len(callbacks) == 1
    callbacks[0]()
    release.refresh_from_db()
    assert release.build_status == BuildStatus.DONE and release.build_progress == 100
    keys = list(ReleaseItem.objects.filter(release=release).values_list("key", flat=True))
    assert keys == [f"wsc273:{i}" for i in range(5)]
    assert release.item_count == 5
    assert {f.name for f in release.files.all()} == {
        "wsc.jsonl",
        "wsc_switchable.jsonl",
        "wsc_associative.jsonl",
        "wsc_non_associative.jsonl",
        "README.md",
        "manifest.json",
    }


def test_build_task_is_idempotent(curator, django_capture_on_commit_callbacks):
    from releases.tasks import release_build_task

    make_schemas(3)
    release = create_release(django_capture_on_commit_callbacks, user=curator)
    built_at = release.built_at
    assert release_build_task.delay(release_id=release.pk).get() == BuildStatus.DONE
    assert Release.objects.get(pk=release.pk).built_at == built_at  # nothing rebuilt
    assert release_build_task.delay(release_id=10**9).get() == "gone"


def test_approve_needs_built_files_and_publish_needs_approval(curator):
    make_schemas(2)
    release = services.release_create(
        name="wsc", dataset="wsc", version="1.0.0", user=curator
    )  # build not run
    with pytest.raises(ReleaseStateError, match="approve once they are built"):
        services.release_approve(release=release, user=curator)
    with pytest.raises(ReleaseStateError, match="approve it before publishing"):
        services.release_publish(release=release, user=curator)
    services.release_build(release_id=release.pk)
    approved = services.release_approve(release=release, user=curator)
    assert approved.status == ReleaseStatus.APPROVED and approved.approved_by == curator
    with pytest.raises(ReleaseStateError, match="only a draft"):
        services.release_approve(release=release, user=curator)


def test_changelog_of_a_draft_can_change_and_the_card_follows(curator, django_capture_on_commit_callbacks):
    make_schemas(2)
    release = create_release(django_capture_on_commit_callbacks, user=curator, changelog="old words")
    with django_capture_on_commit_callbacks(execute=True):
        services.release_changelog_update(release=release, changelog="new words", user=curator)
    card = (services.release_folder(release) / "README.md").read_text(encoding="utf-8")
    assert "new words" in card and "old words" not in card
    services.release_approve(release=release, user=curator)
    with pytest.raises(Exception, match="only a draft"):
        services.release_changelog_update(release=release, changelog="later", user=curator)


def test_a_draft_can_be_deleted_with_its_files(curator, django_capture_on_commit_callbacks):
    make_schemas(2)
    release = create_release(django_capture_on_commit_callbacks, user=curator)
    folder = services.release_folder(release)
    assert folder.exists()
    services.release_delete(release=release, user=curator)
    assert not Release.objects.exists() and not ReleaseItem.objects.exists()
    assert not folder.exists()


def test_comve_release_writes_semeval_csvs_with_quoting(curator, django_capture_on_commit_callbacks):
    make_comve(3)
    release = create_release(
        django_capture_on_commit_callbacks, user=curator, name="comve", dataset="comve", split="test"
    )
    folder = services.release_folder(release)
    assert (folder / "subtaskA_data.csv").read_text(encoding="utf-8").splitlines()[0] == "id,sent0,sent1"
    assert (folder / "subtaskA_answers.csv").read_text(encoding="utf-8").splitlines() == [
        "100,0",
        "101,0",
        "102,0",
    ]
    b_row = (folder / "subtaskB_data.csv").read_text(encoding="utf-8").splitlines()[1]
    assert b_row.endswith('"An elephant cannot eat a fridge, ""really""."')
    c_answer = (folder / "subtaskC_answers.csv").read_text(encoding="utf-8").splitlines()[0]
    assert c_answer == '100,Elephants are too big for fridges.,"A fridge is small, an elephant, large"'
    record = json.loads((folder / "comve_b.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert record == {
        "answer": "A",
        "false_sent": "He put an elephant 0 into the fridge.",
        "id": "100",
        "option_a": "An elephant is much bigger than a fridge.",
        "option_b": "Elephants are usually gray.",
        "option_c": 'An elephant cannot eat a fridge, "really".',
    }
    manifest = release.manifest
    assert manifest["split"] == "test"
    assert {f["name"]: f["items"] for f in manifest["files"]}["comve_c.jsonl"] == 3


def test_card_declares_a_hugging_face_config_per_non_empty_jsonl(curator, django_capture_on_commit_callbacks):
    make_schemas(3)
    release = create_release(django_capture_on_commit_callbacks, user=curator)
    card = (services.release_folder(release) / "README.md").read_text(encoding="utf-8")
    header = card.split("---")[1]
    assert "- config_name: wsc\n" in header and "path: wsc.jsonl" in header
    assert "config_name: wsc_switchable" in header
    assert "## Licence" in card and "## Citation" in card and "No agreement figures" in card


def test_a_second_build_while_one_is_running_leaves_it_to_the_first(curator):
    make_schemas(2)
    release = services.release_create(name="wsc", dataset="wsc", version="1.0.0", user=curator)
    alive = {"lease_owner": "host:1:live", "heartbeat_at": timezone.now()}
    Release.objects.filter(pk=release.pk).update(build_status=BuildStatus.RUNNING, build_progress=30, **alive)
    for force in (False, True):  # a live worker's build is never taken from it
        again = services.release_build(release_id=release.pk, force=force)
        assert (again.build_status, again.build_progress, again.lease_owner) == (
            BuildStatus.RUNNING,
            30,
            "host:1:live",
        )
    assert not services.release_folder(release).exists()


def test_a_build_whose_worker_was_lost_is_taken_over_and_its_temp_folder_removed(curator, settings):
    make_schemas(2)
    release = services.release_create(name="wsc", dataset="wsc", version="1.0.0", user=curator)
    lost_at = timezone.now() - timedelta(seconds=settings.WINNOW_JOB_STALE_AFTER + 5)
    Release.objects.filter(pk=release.pk).update(
        build_status=BuildStatus.RUNNING, lease_owner="host:1:dead", heartbeat_at=lost_at, attempts=1
    )
    left = services.release_folder(release).parent / f".{release.version}.build-0123abcd"
    left.mkdir(parents=True)
    (left / "wsc.jsonl").write_text("half written")
    (left / "wsc.jsonl").chmod(0o444)
    built = services.release_build(release_id=release.pk)
    assert built.build_status == BuildStatus.DONE and built.attempts == 2 and built.lease_owner == ""
    assert (
        "the worker was lost" in built.job_events[-1]["text"] and "attempt 2" in built.job_events[-1]["text"]
    )
    assert not left.exists()
    assert sorted(p.name for p in left.parent.iterdir()) == [release.version]


def test_senmaking_release_defaults_to_the_pilot_split_and_declares_only_non_empty_configs(
    curator, django_capture_on_commit_callbacks
):
    make_comve(2, split="pilot", dataset="senmaking", has_c=False)
    make_comve(1, split="test")  # ComVE items are not part of a Sen-Making release
    release = create_release(
        django_capture_on_commit_callbacks, user=curator, name="senmaking", dataset="senmaking"
    )
    assert (release.split, release.item_count) == ("pilot", 2)
    counts = {f.name: f.items for f in release.files.all()}
    # a file without records is not shipped: comve_c has 0 records, so no file
    assert (
        counts["comve_a.jsonl"] == 2 and counts["comve_b.jsonl"] == 2 and counts.get("comve_c.jsonl", 0) == 0
    )
    assert "comve_c.jsonl" not in counts and "subtaskC_data.csv" not in counts
    card = (services.release_folder(release) / "README.md").read_text(encoding="utf-8")
    header = card.split("---")[1]
    assert "config_name: comve_a" in header and "config_name: comve_c" not in header
    assert "split: pilot" in header


def test_a_broker_that_cannot_take_the_build_leaves_a_note_instead_of_failing(
    curator, django_capture_on_commit_callbacks, monkeypatch
):
    from releases.tasks import release_build_task

    def broker_down(**kwargs):
        raise OSError("No such file or directory: 'var/celery/queue'")

    monkeypatch.setattr(release_build_task, "delay", broker_down)
    make_schemas(2)
    release = create_release(django_capture_on_commit_callbacks, user=curator)
    release.refresh_from_db()
    assert release.build_status == BuildStatus.FAILED  # never left "queued" for ever
    assert "could not be queued" in release.build_error and "release_build" in release.build_error
    assert "broker (" in release.build_error
    assert services.release_build(release_id=release.pk).build_status == BuildStatus.DONE


def test_a_build_lost_on_every_attempt_fails_with_the_reason_and_the_sweep_removes_its_temp_folder(
    client, curator, settings
):
    from core.jobs import jobs_sweep

    make_schemas(2)
    release = services.release_create(name="wsc", dataset="wsc", version="1.0.0", user=curator)
    lost_at = timezone.now() - timedelta(seconds=settings.WINNOW_JOB_STALE_AFTER + 5)
    Release.objects.filter(pk=release.pk).update(
        build_status=BuildStatus.RUNNING,
        lease_owner="host:1:dead",
        heartbeat_at=lost_at,
        attempts=settings.WINNOW_JOB_MAX_ATTEMPTS,
    )
    left = services.release_folder(release).parent / f".{release.version}.build-0123abcd"
    left.mkdir(parents=True)
    assert jobs_sweep() == [
        f"release build {release.pk}: failed (the worker was lost (last heartbeat "
        f"{timezone.localtime(lost_at).strftime('%Y-%m-%d %H:%M:%S %Z')}); failed after 3 attempts)"
    ]
    release.refresh_from_db()
    assert release.build_status == BuildStatus.FAILED and "failed after 3 attempts" in release.build_error
    assert not left.exists()
    client.force_login(curator)
    html = client.get(
        reverse("releases:release-detail", args=[release.name, release.version])
    ).content.decode()
    assert "The build failed: the worker was lost" in html and "Started 3 times" in html

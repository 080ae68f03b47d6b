"""seed_demo: demo accounts and demo data, safe to run again."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import CommandError, call_command

from core.roles import user_roles
from datasets.models import ComVEItem, Reason, Schema
from releases.exports import verify_folder
from releases.models import Release, ReleaseStatus
from releases.services import release_folder

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def state() -> tuple:
    User = get_user_model()
    return (
        sorted(User.objects.values_list("username", "is_staff", "is_superuser")),
        list(Schema.objects.order_by("id").values_list()),
        list(Reason.objects.order_by("id").values_list()),
        list(ComVEItem.objects.order_by("id").values_list()),
    )


def test_seed_demo_creates_accounts_with_roles_and_known_passwords():
    seed()
    for name in ("admin", "curator", *(f"annotator{i}" for i in range(1, 6)), "researcher"):
        assert authenticate(username=name, password=name) is not None, name
    User = get_user_model()
    assert User.objects.get(username="admin").is_superuser
    curator = User.objects.get(username="curator")
    assert curator.is_staff and not curator.is_superuser
    assert user_roles(curator) == {"curator"}
    assert user_roles(User.objects.get(username="annotator2")) == {"annotator"}
    assert user_roles(User.objects.get(username="researcher")) == {"researcher"}
    assert curator.has_perm("datasets.change_schema") and curator.has_perm("datasets.view_comveitem")


def test_seed_demo_loads_demo_data_through_the_importer():
    seed()
    schemas = Schema.objects.filter(collection="demo")
    assert schemas.count() == 6
    assert schemas.filter(twin__isnull=False).count() == 6  # three twin pairs
    assert set(Reason.objects.values_list("origin", flat=True)) == {"human", "reverse", "generated"}
    assert set(Reason.objects.values_list("label", flat=True)) == {"positive", "acceptable", "negative"}
    assert schemas.filter(switchable=True).count() == 2 and schemas.filter(associative=True).count() == 1
    assert (
        ComVEItem.objects.filter(dataset="demo", split="trial", has_a=True, has_b=True, has_c=True).count()
        == 5
    )
    assert not Schema.objects.filter(import_batch__isnull=True).exists()


def test_seed_demo_twice_changes_nothing():
    seed()
    before = state()
    out = seed()
    assert state() == before
    assert "account curator: exists" in out
    assert "schemas: 0 created, 0 updated, 6 unchanged" in out


def test_curator_can_use_the_admin_after_seeding(client):
    seed()
    client.login(username="curator", password="curator")
    assert client.get("/admin/datasets/schema/").status_code == 200
    client.login(username="annotator1", password="annotator1")
    assert client.get("/admin/datasets/schema/").status_code == 302


def test_seed_demo_refuses_to_run_in_production(settings):
    settings.WINNOW_PRODUCTION = True
    with pytest.raises(CommandError):
        seed()
    assert get_user_model().objects.count() == 0


def release_demo() -> str:
    out = StringIO()
    call_command("release_demo", stdout=out)
    return out.getvalue()


def test_release_demo_publishes_the_demo_schemas_and_reasons_once(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    seed()
    out = release_demo()
    releases = {r.name: r for r in Release.objects.all()}
    assert set(releases) == {"demo-wsc", "demo-winowhy"}, out
    assert releases["demo-wsc"].item_count == 6
    assert releases["demo-winowhy"].item_count == Reason.objects.filter(schema__collection="demo").count()
    for release in releases.values():
        assert release.status == ReleaseStatus.PUBLISHED and release.version == "1.0.0"
        assert release.published_by.username == "curator"
        assert verify_folder(manifest=release.manifest, folder=release_folder(release)) == []
    manifests = {r.name: r.manifest for r in Release.objects.all()}
    again = release_demo()
    assert "exists (published); left as it is" in again
    assert {r.name: r.manifest for r in Release.objects.all()} == manifests
    assert Release.objects.count() == 2


def test_release_demo_publishes_when_the_server_asks_for_a_second_approver(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WINNOW_RELEASE_SECOND_APPROVER = True
    seed()
    release_demo()
    releases = list(Release.objects.all())
    assert len(releases) == 2
    for release in releases:
        assert release.status == ReleaseStatus.PUBLISHED
        assert release.created_by.username == "curator" and release.approved_by is None  # the system


def test_release_demo_without_the_demo_data_says_to_seed_first():
    with pytest.raises(CommandError, match="seed_demo"):
        release_demo()
    assert not Release.objects.exists()


def test_the_demo_campaigns_can_finish_with_the_demo_annotators():
    """Every demo campaign asks at most as many judgments per item as there are demo
    annotators, and the largest (WinoWhy's five plausibility votes) completes."""
    from annotation.models import Campaign
    from annotation.selectors import campaign_progress
    from core.roles import Role
    from tests.annotation.answering import answer_all

    seed()
    call_command("annotation_demo", stdout=StringIO())
    annotators = list(get_user_model().objects.filter(groups__name=Role.ANNOTATOR.value).order_by("username"))
    assert len(annotators) == 5
    campaigns = list(Campaign.objects.all())
    assert campaigns and max(c.judgments_per_item for c in campaigns) == len(annotators)
    plausibility = Campaign.objects.get(name="demo-plausibility")
    answer_all(plausibility, annotators, lambda item, i: {"answer": "plausible" if i < 4 else "implausible"})
    progress = campaign_progress(campaign=plausibility)
    assert progress["complete"] == progress["n"] > 0 and progress["percent"] == 100

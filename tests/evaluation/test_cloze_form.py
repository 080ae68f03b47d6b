"""The cloze form: a published ComVE release and a registry model, chosen from lists (issue 15)."""

import pytest
from django.urls import reverse

from evaluation.lm.modeling import smollm2_path
from evaluation.models import ClozeRun, ClozeRunStatus
from tests.releases.factories import make_comve, make_schemas, published_release

pytestmark = pytest.mark.django_db
URL = "/cloze/"


@pytest.fixture
def releases(settings, tmp_path, models_folder, curator, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WINNOW_MODELS_DIR = models_folder
    settings.WINNOW_UPLOAD_DIR = tmp_path / "uploads"
    make_comve(3)
    make_schemas(2)
    published_release(
        django_capture_on_commit_callbacks, user=curator, name="comve", dataset="comve", split="test"
    )
    published_release(django_capture_on_commit_callbacks, user=curator, name="wsc-mini")
    return "comve@1.0.0"


def test_the_cloze_form_offers_published_comve_releases_and_registry_models(client, researcher, releases):
    client.force_login(researcher)
    html = client.get(reverse("cloze:run-list")).content.decode()
    assert '<select name="release"' in html and '<option value="comve@1.0.0">' in html
    assert "wsc-mini@1.0.0" not in html  # a WSC release has no ComVE pairs
    assert '<option value="cloze-bert">cloze-bert (masked LM, ' in html
    assert '<option value="SmolLM2-135M-Instruct.Q4_1">' in html
    assert str(smollm2_path()) not in html and "--model" not in html


def test_a_path_or_an_unknown_choice_is_refused_in_the_forms_words_and_nothing_is_queued(
    client, researcher, releases, models_folder
):
    client.force_login(researcher)
    for release, model in [
        ("comve@1.0.0", str(models_folder / "cloze-bert")),
        ("comve@1.0.0", "/etc/passwd"),
        (str(models_folder), "cloze-bert"),
        ("wsc-mini@1.0.0", "cloze-bert"),
    ]:
        response = client.post(URL, {"release": release, "model": model, "k": 3, "pairs": 2, "limit": 1})
        assert response.status_code == 400
        html = response.content.decode()
        assert "Choose a model from the list." in html or "Choose a published release from the list." in html
        assert str(models_folder) not in html and "/etc/passwd" not in html
    response = client.post(
        URL, {"release": "comve@1.0.0", "model": "cloze-bert", "k": 3, "start_token": "eos"}
    )
    assert b"cloze-bert is a masked LM: a start token is for causal LMs." in response.content
    assert not ClozeRun.objects.exists()


def test_a_researcher_queues_a_cloze_run_that_records_the_registry_name_and_the_hash(
    client, researcher, releases, models_folder, django_capture_on_commit_callbacks
):
    from evaluation.lm.modeling import model_sha256

    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            URL, {"release": "comve@1.0.0", "model": "cloze-bert", "k": 3, "pairs": 2, "limit": 1}
        )
    run = ClozeRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("cloze:run-detail", args=[run.pk])
    assert run.status == ClozeRunStatus.DONE, run.error  # eager Celery in the tests
    assert run.created_by == researcher and run.model_name == "cloze-bert"
    assert run.results["model"] == "cloze-bert"
    assert run.results["model_sha256"] == model_sha256(models_folder / "cloze-bert")
    assert run.results["confidence"]["pairs"] == 2
    page = client.get(reverse("cloze:run-detail", args=[run.pk])).content.decode()
    assert "cloze-bert (masked)" in page and str(models_folder) not in page and run.out_dir not in page

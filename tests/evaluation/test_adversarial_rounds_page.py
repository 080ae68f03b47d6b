"""The curators' rounds page (issue 27): it names the round's models from the server's
registry, with the SHA-256 ``manage.py evaluate`` records, checks their kind against the
method, and starts the round's pipeline; bad input is refused with the field named and
nothing written; other roles are refused."""

import json

import pytest
from django.urls import reverse

from annotation.errors import PipelineError
from annotation.models import AdversarialRound, Pipeline, PipelineKind, ValidationRule
from evaluation.adversarial.rounds.services import round_start
from evaluation.lm.modeling import model_sha256
from tests.annotation.factories import adversarial_writing_tasks

pytestmark = pytest.mark.django_db
URL = reverse("adversarial-rounds:round-list")


@pytest.fixture(autouse=True)
def _writing_tasks(monkeypatch):
    adversarial_writing_tasks(monkeypatch)


@pytest.fixture
def registry(tmp_path, settings):
    """A models folder with a causal and a masked LM (their configs and a file each: the
    registry reads metadata only, and the SHA-256 covers the folder's files)."""
    for name, arch in (("tiny-causal", "GPT2LMHeadModel"), ("tiny-bert", "BertForMaskedLM")):
        folder = tmp_path / "models" / name
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps({"architectures": [arch]}))
        (folder / "weights.bin").write_bytes(name.encode() * 100)
    settings.WINNOW_MODELS_DIR = tmp_path / "models"
    return tmp_path / "models"


def _post(client, **fields):
    data = {
        "kind": PipelineKind.ADVERSARIAL_WINOGRAD,
        "collection": "fool-me",
        "models": ["tiny-causal"],
        "method": "",
        "rule": ValidationRule.UNANIMOUS,
        "k": "",
        "share_unfooled": "0.2",
        "slots": "4",
        **fields,
    }
    return client.post(URL, data)


@pytest.mark.parametrize("role", ["annotator", "researcher"])
def test_only_curators_start_rounds(client, request, role):
    client.force_login(request.getfixturevalue(role))
    assert client.get(URL).status_code == 403
    assert client.post(URL, {}).status_code == 403


def test_a_curator_starts_a_round_with_registry_models_and_their_sha256(client, curator, registry):
    client.force_login(curator)
    page = client.get(URL + "?collection=fool-me").content.decode()
    assert "tiny-causal" in page and "tiny-bert" in page and 'value="fool-me"' in page
    started = _post(client)
    made = AdversarialRound.objects.get()
    assert started.status_code == 302 and started.url == reverse(
        "annotation:pipeline-detail", args=[made.pipeline.name]
    )
    assert made.number == 1 and made.method == "partial" and made.share_unfooled == pytest.approx(0.2)
    assert made.models_in_loop == [{"name": "tiny-causal", "sha256": model_sha256(registry / "tiny-causal")}]
    again = _post(client, rule=ValidationRule.ANLI)
    assert again.status_code == 302
    assert list(AdversarialRound.objects.values_list("number", "rule")) == [(1, "unanimous"), (2, "anli")]
    listing = client.get(URL).content.decode()
    assert 'data-round="2"' in listing and "fool-me-round-2" in listing


@pytest.mark.parametrize(
    ("fields", "refusal"),
    [
        (
            {"models": ["tiny-bert"]},
            "models: tiny-bert is a masked LM; the method partial scores with a causal LM",
        ),
        (
            {"kind": PipelineKind.ADVERSARIAL_COMVE, "method": "partial"},
            "method: partial does not score this kind",
        ),
        ({"rule": ValidationRule.ANLI, "k": "3"}, "k: ANLI&#x27;s rule takes 2 answers"),
        ({"models": ["ghost"]}, "Select a valid choice. ghost is not one of the available choices."),
    ],
)
def test_bad_input_is_refused_on_the_page_with_the_field_named_and_nothing_written(
    client, curator, registry, fields, refusal
):
    client.force_login(curator)
    refused = _post(client, **fields)
    assert refused.status_code == 400 and refusal in refused.content.decode()
    assert (Pipeline.objects.count(), AdversarialRound.objects.count()) == (0, 0)


def test_the_service_refuses_a_model_the_registry_does_not_hold(curator, registry):
    with pytest.raises(PipelineError, match="models: 'ghost' is not a model of this server's registry"):
        round_start(
            curator=curator,
            kind=PipelineKind.ADVERSARIAL_WINOGRAD,
            collection="c",
            model_names=["ghost"],
            method="partial",
            slots=2,
        )
    assert AdversarialRound.objects.count() == 0


def test_a_comve_round_scores_by_the_papers_perplexity_rule(curator, registry):
    made = round_start(
        curator=curator,
        kind=PipelineKind.ADVERSARIAL_COMVE,
        collection="pairs",
        model_names=["tiny-bert"],
        method="pll",
        slots=2,
    )
    assert made.method == "pll" and made.pipeline.kind == PipelineKind.ADVERSARIAL_COMVE
    with pytest.raises(PipelineError, match="models: tiny-causal is a causal LM; the method pll"):
        round_start(
            curator=curator,
            kind=PipelineKind.ADVERSARIAL_COMVE,
            collection="pairs",
            model_names=["tiny-causal"],
            method="pll",
            slots=2,
        )
    default = round_start(
        curator=curator,
        kind=PipelineKind.ADVERSARIAL_COMVE,
        collection="pairs",
        model_names=["tiny-causal"],
        method="",
        slots=2,
    )
    assert (default.method, default.number) == ("full", 2)

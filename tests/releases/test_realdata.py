"""End to end on the real data: import, create, approve, publish, export, load with HF."""

import csv
import hashlib
import json
from pathlib import Path

import pytest

from releases import services
from releases.models import Release, ReleaseStatus
from tests.datasets.realdata import import_real_data
from tests.releases.hf import hf_load

pytestmark = [pytest.mark.django_db, pytest.mark.realdata, pytest.mark.slow]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def published(data_dir, curator, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    import_real_data(data_dir)
    releases = {}
    for name, dataset, split in (
        ("wsc", "wsc", ""),
        ("winowhy", "winowhy", ""),
        ("comve-test", "comve", "test"),
    ):
        with django_capture_on_commit_callbacks(execute=True):
            release = services.release_create(
                name=name,
                dataset=dataset,
                split=split,
                version="1.0.0",
                changelog="First release.",
                user=curator,
            )
        services.release_approve(release=release, user=curator)
        releases[name] = services.release_publish(release=release, user=curator)
    return releases


def _folder(release: Release) -> Path:
    return services.release_folder(release)


def test_real_data_releases_have_the_papers_counts(published):
    wsc = _folder(published["wsc"])
    schemas = _lines(wsc / "wsc.jsonl")
    assert len(schemas) == 273
    assert sum(1 for s in schemas if s["switchable"]) == 131
    assert sum(1 for s in schemas if s["associative"]) == 37
    assert len(_lines(wsc / "wsc_switchable.jsonl")) == 131
    assert len(_lines(wsc / "wsc_associative.jsonl")) == 37
    assert len(_lines(wsc / "wsc_non_associative.jsonl")) == 273 - 37
    first = schemas[0]
    assert (
        first["sentence"]
        == "The city councilmen refused the demonstrators a permit because they feared violence."
    )
    assert first["candidates"] == ["The city councilmen", "The demonstrators"]
    assert first["answer"] == "A"
    assert (
        first["switched"]
        == "The demonstrators refused the city councilmen a permit because they feared violence."
    )
    assert (first["switched_text_before"], first["switched_pronoun"], first["switched_text_after"]) == (
        "The demonstrators refused the city councilmen a permit because",
        "they",
        "feared violence.",
    )
    kinds: dict[str, int] = {}
    for schema in schemas:
        for kind in schema["knowledge_types"]:
            kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds == {
        "Property": 32,
        "Object": 82,
        "Eventuality": 88,
        "Spatial": 64,
        "Quantity": 20,
        "Others": 48,
    }
    assert sum(1 for s in schemas if s["twin"] is not None) >= 2 * 130

    reasons = _lines(_folder(published["winowhy"]) / "winowhy.jsonl")
    assert len(reasons) == 4095
    assert sum(1 for r in reasons if r["label"] == "positive") == 1270
    assert sum(1 for r in reasons if r["label"] == "negative") == 1595
    assert all(r["score"] >= 0.8 for r in reasons if r["label"] == "positive")
    assert {r["origin"] for r in reasons} == {"human", "reverse", "generated"}
    # every reason carries its question's knowledge types (15 reasons per question)
    types_of = {s["id"]: s["knowledge_types"] for s in schemas}
    assert all(r["knowledge_types"] == types_of[r["schema_id"]] for r in reasons)
    assert sum(1 for r in reasons if "Object" in r["knowledge_types"]) == 15 * 82

    comve = _folder(published["comve-test"])
    for subtask in "abc":
        assert len(_lines(comve / f"comve_{subtask}.jsonl")) == 1000
    for subtask in "ABC":
        with (comve / f"subtask{subtask}_data.csv").open(encoding="utf-8", newline="") as handle:
            assert len(list(csv.reader(handle))) == 1001  # header + 1,000 rows
        with (comve / f"subtask{subtask}_answers.csv").open(encoding="utf-8", newline="") as handle:
            assert len(list(csv.reader(handle))) == 1000  # no header, as the official files


def test_semeval_answer_files_match_the_official_gold_answers(published, data_dir):
    comve = _folder(published["comve-test"])
    for subtask in "AB":
        ours = (comve / f"subtask{subtask}_answers.csv").read_bytes()
        official = (data_dir / "comve" / "test" / f"subtask{subtask}_gold_answers.csv").read_bytes()
        assert ours == official


def test_manifest_sha256_match_the_files_and_the_sources(published, data_dir):
    for release in published.values():
        folder = _folder(release)
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        assert manifest == release.manifest
        assert manifest["version"] == "1.0.0"
        assert manifest["item_count"] == release.item_count
        names = {f["name"] for f in manifest["files"]}
        assert names | {"manifest.json"} == {p.name for p in folder.iterdir()}
        for entry in manifest["files"]:
            data = (folder / entry["name"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == entry["sha256"]
            assert len(data) == entry["size"]
            assert (folder / entry["name"]).stat().st_mode & 0o222 == 0  # read-only on disk
        assert manifest["sources"], "source import checksums are listed"
    winowhy_sha = hashlib.sha256((data_dir / "winowhy" / "winowhy.json").read_bytes()).hexdigest()
    assert winowhy_sha in {s["sha256"] for s in published["wsc"].manifest["sources"]}


def test_a_rebuild_is_byte_identical(published, tmp_path):
    for name, release in published.items():
        out = tmp_path / "rebuild" / name
        services.release_export(release=release, out_dir=out)
        original = _folder(release)
        for path in sorted(original.iterdir()):
            assert (out / path.name).read_bytes() == path.read_bytes(), path.name
        assert Release.objects.get(pk=release.pk).status == ReleaseStatus.PUBLISHED


def test_hugging_face_datasets_loads_every_config_with_the_same_rows(published, tmp_path):
    cases = [
        ("wsc", "wsc"),
        ("wsc", "wsc_switchable"),
        ("wsc", "wsc_associative"),
        ("wsc", "wsc_non_associative"),
        ("winowhy", "winowhy"),
        ("comve-test", "comve_a"),
        ("comve-test", "comve_b"),
        ("comve-test", "comve_c"),
    ]
    for release_name, config in cases:
        folder = _folder(published[release_name])
        rows = hf_load(folder, config, workdir=tmp_path / "hf")
        assert rows == _lines(folder / f"{config}.jsonl"), config


def test_comve_release_ships_the_source_files_byte_for_byte(published, data_dir, tmp_path):
    """Release texts are the sources' bytes (whitespace is normalised only to compare), each
    subtask keeping its own file's text where B and C disagree (item 1698)."""
    comve, source = _folder(published["comve-test"]), data_dir / "comve" / "test"
    for ours, official in (
        ("subtaskA_data.csv", "subtaskA_test_data.csv"),
        ("subtaskB_data.csv", "subtaskB_test_data.csv"),
        ("subtaskC_data.csv", "subtaskC_test_data.csv"),
        ("subtaskC_answers.csv", "subtaskC_gold_answers.csv"),
    ):
        assert (comve / ours).read_bytes() == (source / official).read_bytes(), ours
    # the JSONL files carry the same strings, stray spaces included
    with (source / "subtaskA_test_data.csv").open(encoding="utf-8", newline="") as handle:
        cells = {row["id"]: (row["sent0"], row["sent1"]) for row in csv.DictReader(handle)}
    irregular = [i for i, pair in cells.items() if any(" ".join(s.split()) != s for s in pair)]
    assert irregular  # the test split has statements with stray whitespace
    a = {r["id"]: (r["sent0"], r["sent1"]) for r in _lines(comve / "comve_a.jsonl")}
    assert all(a[i] == cells[i] for i in irregular)
    b = {r["id"]: r["false_sent"] for r in _lines(comve / "comve_b.jsonl")}
    c = {r["id"]: r["false_sent"] for r in _lines(comve / "comve_c.jsonl")}
    assert (b["1698"], c["1698"]) == ("he was swimming in Hawaii", "he was swimming to Hawaii")
    assert [i for i in c if c[i] != b[i]] == ["1698"]
    card = (comve / "README.md").read_text(encoding="utf-8")
    assert "## Source differences" in card and "`1698`" in card
    assert "source_difference" not in card  # not among the counts


def test_copying_the_false_statement_on_the_release_gives_the_official_bleu(published, tmp_path):
    from evaluation.services import evaluation_run, evaluation_run_create

    run = evaluation_run(
        run=evaluation_run_create(release="comve-test@1.0.0", method="first", out_dir=str(tmp_path / "o"))
    )
    # taskC_scorer.py @ ce9430a on the official subtaskC_test_data.csv printed "BLEU score: 17.2340."
    assert run.metrics["c"]["n"] == 1000
    assert f"{run.metrics['c']['bleu'] * 100:.4f}" == "17.2340"
    assert run.metrics["c"]["bleu"] == pytest.approx(0.17233992235000792, abs=1e-15)


def test_winowhy_release_ships_the_reasons_as_written(published, data_dir):
    source = json.loads((data_dir / "winowhy" / "winowhy.json").read_text(encoding="utf-8"))
    written = {
        f"{q}.{p}": reason[0]
        for q, question in enumerate(source)
        for p, reason in enumerate(question["reasons"])
    }
    shipped = {r["id"]: r["text"] for r in _lines(_folder(published["winowhy"]) / "winowhy.jsonl")}
    assert shipped == written
    assert sum(1 for text in shipped.values() if text.startswith(" ")) > 1000  # GPT-2's, as written

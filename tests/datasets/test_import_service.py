"""dataset_import on small files written for the tests: idempotency and updates."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets.importers.twins import TwinCandidate, find_twins
from datasets.importers.winowhy import plausibility_label
from datasets.models import ComVEItem, ImportBatch, Reason, Schema
from datasets.services import dataset_import
from tests.datasets import sources

pytestmark = pytest.mark.django_db


def test_second_run_of_the_same_file_creates_nothing_and_says_unchanged(tmp_path: Path):
    path = sources.write_winowhy(tmp_path)
    first = dataset_import(format="winowhy", paths=[path])
    second = dataset_import(format="winowhy", paths=[path])
    assert (first.created, first.unchanged) == (4 + 12, 0)
    assert (second.created, second.updated, second.unchanged) == (0, 0, 16)
    assert Schema.objects.count() == 4 and Reason.objects.count() == 12
    assert ImportBatch.objects.count() == 2
    # items keep the batch that wrote them
    assert set(Schema.objects.values_list("import_batch", flat=True)) == {first.batch.pk}


def test_changed_row_is_updated_in_place(tmp_path: Path):
    dataset_import(format="winowhy", paths=[sources.write_winowhy(tmp_path)])
    rows = sources.winowhy_rows()
    rows[0]["reasons"][1][2] = 0.8
    rows[0]["reasons"][1][3] = "Valid"
    result = dataset_import(format="winowhy", paths=[sources.write_winowhy(tmp_path, rows)])
    assert result.counts["reasons"] == {"created": 0, "updated": 1, "unchanged": 11}
    reason = Reason.objects.get(schema__external_id="0", position=1)
    assert (reason.label, reason.plausibility, reason.import_batch_id) == ("positive", 0.8, result.batch.pk)
    # the other items did not change, but they now come from the new version of the file
    assert set(Reason.objects.values_list("file_checksum", flat=True)) == {result.batch.files[0]["sha256"]}
    assert result.summary["provenance_refreshed"] == 4 + 11


def test_twins_are_linked_both_ways(tmp_path: Path):
    result = dataset_import(format="winowhy", paths=[sources.write_winowhy(tmp_path)])
    assert result.summary["twin_pairs"] == 2
    a, b = Schema.objects.get(external_id="0"), Schema.objects.get(external_id="1")
    assert a.twin_id == b.pk and b.twin_id == a.pk


def test_twin_pairing_prefers_most_pairs_then_shared_text():
    def q(key: str, answer: str, before: str, cands=("Ann", "Bo")) -> TwinCandidate:
        return TwinCandidate(key=key, answer=answer, candidates=cands, text_before=before, text_after="x")

    # a triple: 1-2 share the text before the pronoun, so they are the pair
    triple = [q("0", "A", "even though"), q("1", "B", "because"), q("2", "A", "because")]
    assert find_twins(triple) == [("1", "2")]
    # same answers are never twins; no shared candidate, never twins
    assert find_twins([q("0", "A", "t"), q("1", "A", "t")]) == []
    assert find_twins([q("0", "A", "t", ("Ann", "Bo")), q("1", "B", "t", ("Cy", "Di"))]) == []
    # one shared candidate is enough (the special word is the other candidate)
    assert find_twins([q("0", "A", "t", ("Minnow", "Duck")), q("1", "B", "t2", ("Shark", "Duck"))]) == [
        ("0", "1")
    ]


@pytest.mark.parametrize(
    ("score", "label"),
    [
        (1.0, "positive"),
        (0.8, "positive"),
        (0.6, "acceptable"),
        (0.4, "acceptable"),
        (0.2, "negative"),
        (0.0, "negative"),
    ],
)
def test_plausibility_label_follows_winowhy_thresholds(score: float, label: str):
    assert plausibility_label(score) == label


def test_knowledge_types_are_kept_when_no_categories_are_given(tmp_path: Path):
    questions = sources.write_winowhy(tmp_path)
    dataset_import(format="winowhy", paths=[questions, sources.write_categories(tmp_path)])
    assert Schema.objects.get(external_id="2").knowledge_types == ["Eventuality"]
    dataset_import(format="winowhy", paths=[questions])
    assert Schema.objects.get(external_id="0").knowledge_types == ["Property"]


def test_files_are_told_apart_by_content_not_name(tmp_path: Path):
    # the categories file under the questions' name and the other way round
    questions = sources.write_json(tmp_path / "cat_ref.json", sources.winowhy_rows())
    categories = sources.write_json(tmp_path / "winowhy.json", {"Spatial": [1]})
    result = dataset_import(format="winowhy", paths=[categories, questions])
    assert result.counts["schemas"]["created"] == 4
    assert Schema.objects.get(external_id="1").knowledge_types == ["Spatial"]


def test_trichelair_sets_labels_and_switched_text(tmp_path: Path):
    dataset_import(format="winowhy", paths=[sources.write_winowhy(tmp_path)])
    result = dataset_import(format="trichelair", paths=[sources.write_trichelair(tmp_path / "t")])
    assert result.counts["schemas"] == {"created": 0, "updated": 4, "unchanged": 0}
    s0 = Schema.objects.get(external_id="0")
    assert s0.switchable is True and s0.associative is False
    assert s0.switched_text == "The shelf would not fit on the kettle because [it] was too tall."
    again = dataset_import(format="trichelair", paths=[sources.write_trichelair(tmp_path / "t")])
    assert again.counts["schemas"] == {"created": 0, "updated": 0, "unchanged": 4}


def test_trichelair_accepts_one_label_file_alone(tmp_path: Path):
    dataset_import(format="winowhy", paths=[sources.write_winowhy(tmp_path)])
    folder = sources.write_trichelair(tmp_path / "t")
    result = dataset_import(format="trichelair", paths=[folder / "WSC_associative_label.json"])
    assert result.summary["associative"] == 1
    assert Schema.objects.filter(associative__isnull=False).count() == 4
    assert Schema.objects.filter(switchable__isnull=False).count() == 0


def test_trichelair_reports_rows_that_disagree_with_their_schema(tmp_path: Path):
    dataset_import(format="winowhy", paths=[sources.write_winowhy(tmp_path)])
    switched, associative = sources.trichelair_rows()
    switched[2]["correct_answer"] = "Omar"  # schema 2's answer is B (Omar): agrees
    switched[3]["correct_answer"] = "Omar"  # schema 3's answer is A (Mia): disagrees
    result = dataset_import(
        format="trichelair", paths=[sources.write_trichelair(tmp_path / "t", switched, associative)]
    )
    assert [w for w in result.warnings if "correct_answer" in w] == [
        "WSC_switched_label.json row 4 field 'correct_answer': 'Omar' is not schema 3's answer 'Mia'"
    ]


def test_comve_import_joins_subtasks_and_is_idempotent(tmp_path: Path):
    folder = sources.write_comve(tmp_path / "dev")
    first = dataset_import(format="comve", paths=[folder])
    assert first.summary["split"] == "dev" and first.created == 3
    item = ComVEItem.objects.get(external_id="12")
    assert (item.false_index, item.false_statement, item.correct_option) == (
        1,
        "The baker put the bread in the bathtub.",
        "C",
    )
    assert item.references == ["Reference one for 12.", "Reference two for 12."]
    second = dataset_import(format="comve", paths=[folder])
    assert (second.created, second.updated, second.unchanged) == (0, 0, 3)


def test_comve_answers_may_come_in_any_order(tmp_path: Path):
    files = sources.comve_files()
    lines = files["subtaskA_gold_answers.csv"].splitlines()
    files["subtaskA_gold_answers.csv"] = "\n".join(reversed(lines)) + "\n"
    dataset_import(format="comve", paths=[sources.write_comve(tmp_path / "dev", files)])
    assert ComVEItem.objects.get(external_id="10").false_index == 0


def test_import_records_who_and_which_files(tmp_path: Path, curator):
    result = dataset_import(format="senmaking", paths=[sources.write_senmaking(tmp_path)], user=curator)
    batch = ImportBatch.objects.get(pk=result.batch.pk)
    assert batch.created_by == curator
    assert batch.files[0]["name"] == "dataset.jsonl" and len(batch.files[0]["sha256"]) == 64
    assert (batch.created, batch.unchanged) == (3, 0)


def test_twins_are_relinked_when_a_new_version_of_the_file_pairs_differently(tmp_path: Path):
    def rows(answers: list[str]) -> list[dict]:
        out = sources.winowhy_rows()[:2] * 2  # four questions on the same two candidates
        out = [dict(r, text=dict(r["text"], txt2=f"{r['text']['txt2']} ({i})")) for i, r in enumerate(out)]
        for r, a in zip(out, answers, strict=True):
            r["correctAnswer"] = a
        return out

    dataset_import(format="winowhy", paths=[sources.write_winowhy(tmp_path, rows(["A", "B", "A", "B"]))])
    twins = dict(Schema.objects.values_list("external_id", "twin__external_id"))
    assert twins == {"0": "1", "1": "0", "2": "3", "3": "2"}
    result = dataset_import(
        format="winowhy", paths=[sources.write_winowhy(tmp_path, rows(["A", "A", "B", "A"]))]
    )
    twins = dict(Schema.objects.values_list("external_id", "twin__external_id"))
    assert result.summary["twin_pairs"] == 1
    assert sum(1 for t in twins.values() if t) == 2
    assert all(twins[t] == e for e, t in twins.items() if t)  # both ways
    assert twins["0"] is None


@pytest.mark.django_db(transaction=True)
def test_import_racing_another_import_fails_cleanly_and_writes_nothing(tmp_path: Path, monkeypatch):
    from datasets.services import DatasetImportError
    from datasets.services import comve as services

    folder = sources.write_comve(tmp_path / "dev")
    dataset_import(format="comve", paths=[folder])
    # as if another import committed the same items after this one looked for them
    monkeypatch.setattr(services, "_existing_comve_items", lambda dataset, split, collection="": {})
    with pytest.raises(DatasetImportError, match="another import of the same items ran at the same time"):
        dataset_import(format="comve", paths=[folder])
    assert ComVEItem.objects.count() == 3
    assert ImportBatch.objects.count() == 1

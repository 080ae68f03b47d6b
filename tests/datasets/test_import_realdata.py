"""The real public data sets give the counts their papers and README state."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from datasets.models import ComVEItem, ImportBatch, Reason, Schema
from datasets.selectors import dataset_summary
from datasets.services import dataset_import

pytestmark = [pytest.mark.django_db, pytest.mark.realdata]


def import_winowhy(data_dir: Path):
    return dataset_import(
        format="winowhy",
        paths=[data_dir / "winowhy" / "winowhy.json"],
        options={"categories": data_dir / "winowhy" / "cat_ref.json"},
    )


def test_winowhy_gives_273_schemas_4095_reasons_and_the_paper_labels(data_dir: Path):
    result = import_winowhy(data_dir)
    assert Schema.objects.filter(collection="wsc273").count() == 273
    assert Reason.objects.count() == 4095
    assert result.counts == {
        "schemas": {"created": 273, "updated": 0, "unchanged": 0},
        "reasons": {"created": 4095, "updated": 0, "unchanged": 0},
    }
    labels = Counter(Reason.objects.values_list("label", flat=True))
    assert labels == {"positive": 1270, "negative": 1595, "acceptable": 1230}
    assert Counter(Reason.objects.values_list("origin", flat=True)) == {
        "human": 1365,
        "generated": 1365,
        "reverse": 1365,
    }
    # source labels are kept beside the computed ones and agree with them
    assert set(Reason.objects.filter(label="positive").values_list("source_label", flat=True)) == {"Valid"}
    assert set(Reason.objects.filter(label="acceptable").values_list("source_label", flat=True)) == {
        "Undecided"
    }
    # "A." in the source becomes A; nothing else is accepted
    assert set(Schema.objects.values_list("answer", flat=True)) == {"A", "B"}
    first = Schema.objects.get(external_id="0")
    assert (first.pronoun, first.candidate_a, first.answer) == ("they", "The city councilmen", "A")


def test_winowhy_knowledge_types_match_the_paper(data_dir: Path):
    import_winowhy(data_dir)
    kinds = Counter(k for types in Schema.objects.values_list("knowledge_types", flat=True) for k in types)
    assert kinds == {
        "Property": 32,
        "Object": 82,
        "Eventuality": 88,
        "Spatial": 64,
        "Quantity": 20,
        "Others": 48,
    }


def test_winowhy_links_136_twin_pairs_both_ways(data_dir: Path):
    result = import_winowhy(data_dir)
    assert result.summary["twin_pairs"] == 136
    assert Schema.objects.filter(twin__isnull=False).count() == 272
    by_id = {s.external_id: s for s in Schema.objects.select_related("twin")}
    for schema in by_id.values():
        if schema.twin:
            assert schema.twin.twin_id == schema.pk
            assert schema.twin.answer != schema.answer
    assert by_id["0"].twin and by_id["253"].twin and by_id["172"].twin is not None
    assert by_id["0"].twin.external_id == "1"
    # the George/Eric triple: the two questions sharing the text before the pronoun are twins
    assert by_id["253"].twin.external_id == "254"
    assert by_id["252"].twin is None
    # a twin pair whose special word is a candidate
    assert by_id["172"].twin.external_id == "173"


def test_every_item_keeps_its_provenance(data_dir: Path):
    import_winowhy(data_dir)
    dataset_import(format="comve", paths=[data_dir / "comve" / "dev"])
    schema = Schema.objects.get(external_id="17")
    assert (schema.source_file, schema.source_row) == ("winowhy.json", 18)
    assert len(schema.file_checksum) == 64 and schema.import_batch_id
    assert not Schema.objects.filter(file_checksum="").exists()
    assert not Reason.objects.filter(import_batch__isnull=True).exists()
    item = ComVEItem.objects.get(split="dev", external_id="392")
    assert (item.source_file, item.source_row) == ("subtaskA_dev_data.csv", 2)
    batch = ImportBatch.objects.get(format="comve")
    assert {f["name"] for f in batch.files} == {
        "subtaskA_dev_data.csv",
        "subtaskA_gold_answers.csv",
        "subtaskB_dev_data.csv",
        "subtaskB_gold_answers.csv",
        "subtaskC_dev_data.csv",
        "subtaskC_gold_answers.csv",
    }


def test_trichelair_labels_131_switchable_and_37_associative_matched_by_text(data_dir: Path):
    import_winowhy(data_dir)
    result = dataset_import(format="trichelair", paths=[data_dir / "wsc_switched"])
    assert result.summary["matched"] == 273
    assert Schema.objects.filter(switchable=True).count() == 131
    assert Schema.objects.filter(associative=True).count() == 37
    assert not Schema.objects.filter(switchable__isnull=True).exists()
    first = Schema.objects.get(external_id="0")
    assert first.switched_text.startswith("The demonstrators refused the city councilmen")
    # row 92 of the switched file carries the wrong sentence; the associative file's matches
    assert any("row 92 field 'sentence'" in w for w in result.warnings)
    # rows that disagree with the schema they matched are reported, not silently taken
    assert any("row 171 field 'answer0'/'answer1': 'Kamchatka'" in w for w in result.warnings)


def test_trichelair_matches_by_text_not_by_position(data_dir: Path, tmp_path: Path):
    import json

    import_winowhy(data_dir)
    folder = tmp_path / "shuffled"
    folder.mkdir()
    for name in ("WSC_switched_label.json", "WSC_associative_label.json"):
        rows = json.loads((data_dir / "wsc_switched" / name).read_text())
        rows.reverse()
        for row in rows:
            row["index"] = 1000 - row["index"]  # indexes that mean nothing for positions
        (folder / name).write_text(json.dumps(rows))
    dataset_import(format="trichelair", paths=[folder])
    assert Schema.objects.filter(switchable=True).count() == 131
    assert Schema.objects.get(external_id="0").switched_text.startswith("The demonstrators refused")


@pytest.mark.parametrize(
    ("split", "count"), [("train", 10000), ("dev", 997), ("test", 1000), ("trial", 2021)]
)
def test_comve_split_counts_with_all_three_subtasks(data_dir: Path, split: str, count: int):
    result = dataset_import(format="comve", paths=[data_dir / "comve" / split])
    assert result.created == count
    items = ComVEItem.objects.filter(dataset="comve", split=split)
    assert items.count() == count
    assert items.filter(has_a=True, has_b=True, has_c=True).count() == count
    assert not items.filter(false_index__isnull=True).exists()
    assert not items.filter(correct_option="").exists()
    assert not items.filter(references=[]).exists()


def test_comve_train_first_item_is_joined_across_files(data_dir: Path):
    dataset_import(format="comve", paths=[data_dir / "comve" / "train"])
    item = ComVEItem.objects.get(split="train", external_id="0")
    assert item.statement_0 == "He poured orange juice on his cereal."
    assert item.false_index == 0
    assert item.false_statement == item.statement_0
    assert item.correct_option == "B"
    assert item.option_b == "Orange juice doesn't taste good on cereal."
    assert len(item.references) == 3


def test_senmaking_gives_2021_pilot_items(data_dir: Path):
    result = dataset_import(format="senmaking", paths=[data_dir / "senmaking" / "dataset.jsonl"])
    assert result.created == 2021
    assert ComVEItem.objects.filter(dataset="senmaking", split="pilot").count() == 2021
    item = ComVEItem.objects.get(dataset="senmaking", external_id="1")
    assert (item.false_index, item.correct_option) == (0, "A")


def test_second_import_of_every_format_creates_nothing_and_reports_unchanged(data_dir: Path):
    runs = [
        (
            "winowhy",
            [data_dir / "winowhy" / "winowhy.json"],
            {"categories": data_dir / "winowhy" / "cat_ref.json"},
        ),
        ("trichelair", [data_dir / "wsc_switched"], {}),
        ("comve", [data_dir / "comve" / "dev"], {}),
        ("senmaking", [data_dir / "senmaking"], {}),
    ]
    for fmt, paths, options in runs:
        dataset_import(format=fmt, paths=paths, options=options)
    before = (Schema.objects.count(), Reason.objects.count(), ComVEItem.objects.count())
    snapshot = list(Schema.objects.order_by("id").values_list())
    for fmt, paths, options in runs:
        again = dataset_import(format=fmt, paths=paths, options=options)
        assert again.created == 0 and again.updated == 0, fmt
        assert again.unchanged > 0
    assert (Schema.objects.count(), Reason.objects.count(), ComVEItem.objects.count()) == before
    assert list(Schema.objects.order_by("id").values_list()) == snapshot


def test_summary_selector_reports_the_real_counts(data_dir: Path):
    import_winowhy(data_dir)
    dataset_import(format="trichelair", paths=[data_dir / "wsc_switched"])
    dataset_import(format="comve", paths=[data_dir / "comve" / "test"])
    summary = dataset_summary()
    wsc = summary["schemas"]["wsc273"]
    assert wsc["schemas"] == 273
    assert wsc["answers"]["A"] + wsc["answers"]["B"] == 273
    assert wsc["twins"] == {"schemas_with_twin": 272, "pairs": 136}
    assert wsc["switchable"]["yes"] == 131 and wsc["associative"]["yes"] == 37
    assert wsc["reasons"]["by_label"] == {"positive": 1270, "acceptable": 1230, "negative": 1595}
    assert wsc["knowledge_types"]["Eventuality"] == 88
    assert summary["comve"]["comve"]["test"] == {
        "items": 1000,
        "subtask_a": 1000,
        "subtask_b": 1000,
        "subtask_c": 1000,
        "needs_rewrite": 0,
    }

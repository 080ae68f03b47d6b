"""A curator's own items: Winograd schemas, reasons and ComVE items from JSON Lines or CSV
(issue 13, "Your own items"): the template files import, every problem is listed with its
row and field, nothing is written on a problem or in a preview, a second import creates
nothing, and the items stay in their own collection, apart from the public sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from datasets.importers.custom import parse_schemas
from datasets.models import ComVEItem, ImportBatch, Reason, Schema
from datasets.services import DatasetImportError, dataset_import
from releases import services as release_services
from releases.models import ReleaseItem

pytestmark = pytest.mark.django_db
TEMPLATES = Path(settings.BASE_DIR) / "static" / "import-templates"
URL = "/datasets/import/"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def own(format: str, path: Path, collection: str = "mine", **options: object):
    return dataset_import(format=format, paths=[path], options={"collection": collection, **options})


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_the_template_files_import_and_a_second_import_creates_nothing(suffix):
    result = own("schemas", TEMPLATES / f"schemas.{suffix}")
    assert result.counts == {"schemas": {"created": 3, "updated": 0, "unchanged": 0}}
    kettle = Schema.objects.get(collection="mine", external_id="kettle-1")
    assert (kettle.text_before, kettle.pronoun, kettle.text_after) == (
        "The kettle would not fit on the shelf because",
        "it",
        "was too tall.",
    )
    assert (kettle.candidate_a, kettle.candidate_b, kettle.answer) == ("the kettle", "the shelf", "A")
    assert kettle.twin is not None and kettle.twin.external_id == "kettle-2"
    assert kettle.twin.twin_id == kettle.pk
    assert Schema.objects.get(external_id="lamp-1").twin is None
    assert kettle.source_file == f"schemas.{suffix}" and kettle.source_row == 1

    reasons = own("reasons", TEMPLATES / f"reasons.{suffix}")
    assert reasons.counts == {"reasons": {"created": 3, "updated": 0, "unchanged": 0}}
    rows = list(Reason.objects.filter(schema=kettle).order_by("position"))
    assert [(r.position, r.origin, r.plausibility, r.label, r.knowledge_type) for r in rows] == [
        (0, "human", 0.8, "positive", "Property"),  # the label from the score, by WinoWhy's rule
        (1, "reverse", None, "", ""),
    ]
    assert "reverse 1" in reasons.highlights()[0] and "generated 1" in reasons.highlights()[0]

    items = own("comve-items", TEMPLATES / f"comve-items.{suffix}", split="dev")
    assert items.counts == {"items": {"created": 2, "updated": 0, "unchanged": 0}}
    k2 = ComVEItem.objects.get(collection="mine", external_id="k2")
    assert (k2.dataset, k2.split, k2.false_index, k2.correct_option) == ("comve", "dev", 1, "B")
    assert k2.false_statement == "She wore a hat on her cloud."  # the statement at false_index
    assert k2.references == ["Nobody has a cloud of their own."]
    assert (k2.has_a, k2.has_b, k2.has_c) == (True, True, True)

    for fmt, name, kind in [
        ("schemas", "schemas", "schemas"),
        ("reasons", "reasons", "reasons"),
        ("comve-items", "comve-items", "items"),
    ]:
        again = own(fmt, TEMPLATES / f"{name}.{suffix}", split="dev")
        assert again.created == again.updated == 0 and again.counts[kind]["unchanged"] > 0
    assert Reason.objects.count() == 3 and ComVEItem.objects.count() == 2


def test_csv_and_jsonl_templates_say_the_same():
    from datasets.importers.custom import parse_comve_items, parse_reasons

    for parse, name, rows in [
        (parse_schemas, "schemas", "schemas"),
        (parse_reasons, "reasons", "reasons"),
        (parse_comve_items, "comve-items", "items"),
    ]:
        a = getattr(parse([TEMPLATES / f"{name}.csv"], {}), rows)
        b = getattr(parse([TEMPLATES / f"{name}.jsonl"], {}), rows)
        strip = [{k: v for k, v in vars(r).items() if k != "provenance"} for r in a]
        assert strip == [{k: v for k, v in vars(r).items() if k != "provenance"} for r in b], name


def test_every_problem_is_listed_with_its_row_and_field_and_nothing_is_written(tmp_path):
    path = write(
        tmp_path,
        "mine.csv",
        "id,sentence,candidate_a,candidate_b,answer,twin\n"
        "s1,The cat chased the dog because [it] was angry.,the cat,the dog,A,s9\n"
        "s2,No pronoun marked here.,Bob,Tom,B,\n"
        "s1,[He] thanked [him].,Bob,Bob,C,\n"
        "s4,The cup is on the table because [it] is flat.,the cup,the table,the table,\n",
    )
    with pytest.raises(DatasetImportError) as caught:
        own("schemas", path)
    found = {(p.row, p.field) for p in caught.value.problems}
    assert found == {
        (1, "twin"),  # names s9, not in the file
        (2, "sentence"),  # no [pronoun]
        (3, "id"),  # s1 again
        (3, "sentence"),  # two marked words
        (3, "candidate_b"),  # the same candidate twice
        (3, "answer"),  # C
    }
    assert all(p.file == "mine.csv" for p in caught.value.problems)
    assert caught.value.message.startswith("mine.csv: 6 problems found; the first: mine.csv row ")
    assert Schema.objects.count() == 0 and ImportBatch.objects.count() == 0


def test_answer_may_name_a_candidate_and_twins_must_agree(tmp_path):
    ok = write(
        tmp_path,
        "ok.jsonl",
        json.dumps(
            {
                "id": "1",
                "sentence": "Jo paid Al because [he] sold the car.",
                "candidates": ["Jo", "Al"],
                "answer": "al",
                "twin": "2",
            }
        )
        + "\n"
        + json.dumps(
            {
                "id": "2",
                "sentence": "Jo paid Al because [he] bought the car.",
                "candidates": ["Jo", "Al"],
                "answer": "Jo",
            }
        )
        + "\n",
    )
    data = parse_schemas([ok], {})
    assert [(s.external_id, s.answer, s.twin_external_id) for s in data.schemas] == [
        ("1", "B", "2"),
        ("2", "A", "1"),
    ]
    bad = write(
        tmp_path,
        "bad.jsonl",
        "".join(
            json.dumps(
                {
                    "id": i,
                    "sentence": f"Jo met Al and [he] {i}.",
                    "candidate_a": "Jo",
                    "candidate_b": "Al",
                    "answer": "A",
                    "twin": t,
                }
            )
            + "\n"
            for i, t in [("1", "2"), ("2", "3"), ("3", "")]
        ),
    )
    with pytest.raises(DatasetImportError) as caught:
        parse_schemas([bad], {})
    assert any("whose own twin is '3'" in p.reason for p in caught.value.problems)


@pytest.mark.parametrize("collection", ["", "wsc273", "has space", "x" * 21])
def test_own_items_need_their_own_collection(collection):
    with pytest.raises(DatasetImportError) as caught:
        own("schemas", TEMPLATES / "schemas.csv", collection=collection)
    assert caught.value.field == "collection"
    assert Schema.objects.count() == 0


def test_a_collection_holding_public_items_is_refused(tmp_path):
    from tests.datasets import sources

    winowhy = sources.write_winowhy(tmp_path)
    dataset_import(format="winowhy", paths=[winowhy], options={"collection": "pub"})
    with pytest.raises(DatasetImportError, match="holds a public data set"):
        own("schemas", TEMPLATES / "schemas.csv", collection="pub")


def test_reasons_need_their_schemas(tmp_path):
    with pytest.raises(DatasetImportError) as caught:
        own("reasons", TEMPLATES / "reasons.csv")
    assert "no schema 'kettle-1' in collection 'mine'" in caught.value.message
    assert (caught.value.row, caught.value.field) == (1, "schema")
    assert "(1 more ids are missing too)" in caught.value.message
    assert Reason.objects.count() == 0 and ImportBatch.objects.count() == 0


def test_reason_fields_are_checked(tmp_path):
    own("schemas", TEMPLATES / "schemas.csv")
    path = write(
        tmp_path,
        "r.csv",
        "schema,text,origin,plausibility,label,knowledge_type\n"
        "kettle-1,a reason,robot,1.5,great,Colour\n"
        "kettle-1,,human,,,\n",
    )
    with pytest.raises(DatasetImportError) as caught:
        own("reasons", path)
    assert {(p.row, p.field) for p in caught.value.problems} == {
        (1, "origin"),
        (1, "plausibility"),
        (1, "label"),
        (1, "knowledge_type"),
        (2, "text"),
    }


def test_comve_items_need_a_whole_subtask(tmp_path):
    path = write(
        tmp_path,
        "c.csv",
        "id,sent0,sent1,false_index,option_a,correct_option,ref1\n1,A,B,2,,,\n2,,,,why,A,\n3,,,,,,\n",
    )
    with pytest.raises(DatasetImportError) as caught:
        own("comve-items", path)
    assert {(p.row, p.field) for p in caught.value.problems} == {
        (1, "false_index"),
        (2, "option_b"),
        (2, "option_c"),
        (2, "false_sent"),
        (3, None),
    }


def test_preview_counts_against_the_database_and_writes_nothing():
    own("schemas", TEMPLATES / "schemas.csv")
    result = own("reasons", TEMPLATES / "reasons.csv", dry_run=True)
    assert result.dry_run and result.counts == {"reasons": {"created": 3, "updated": 0, "unchanged": 0}}
    assert [row["schema"] for row in result.sample] == ["kettle-1", "kettle-1", "lamp-1"]
    assert Reason.objects.count() == 0 and ImportBatch.objects.count() == 1


def test_own_comve_items_stay_out_of_the_public_release_and_make_their_own(curator, tmp_path):
    from tests.datasets import sources

    own("comve-items", TEMPLATES / "comve-items.csv", split="dev")
    public = dataset_import(format="comve", paths=[sources.write_comve(tmp_path)], options={})
    assert public.created > 0
    plain = release_services.release_create(
        name="pub", dataset="comve", split="dev", version="1.0.0", user=curator
    )
    mine = release_services.release_create(
        name="mine", dataset="comve", split="dev", version="1.0.0", collection="mine", user=curator
    )
    keys = set(ReleaseItem.objects.filter(release=mine).values_list("key", flat=True))
    assert keys == {"comve/mine/dev:k1", "comve/mine/dev:k2"}
    public_keys = set(ReleaseItem.objects.filter(release=plain).values_list("key", flat=True))
    assert len(public_keys) == 3 and all(k.startswith("comve/dev:") for k in public_keys)
    payload = ReleaseItem.objects.get(release=mine, key="comve/mine/dev:k1").payload
    assert payload["collection"] == "mine" and payload["false_sent"] == "He put the fridge in the milk."


def upload(name: str, path: Path) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, path.read_bytes(), content_type="text/plain")


def test_the_page_links_the_templates_previews_and_lists_every_problem(client, curator, tmp_path):
    client.force_login(curator)
    page = client.get(URL).content.decode()
    for name in ("schemas", "reasons", "comve-items"):
        for suffix in ("csv", "jsonl"):
            assert f"import-templates/{name}.{suffix}" in page
            assert client.get(f"/static/import-templates/{name}.{suffix}").status_code == 200
    form = {"format": "schemas", "collection": "mine", "action": "preview"}
    response = client.post(URL, {**form, "uploads": [upload("schemas.csv", TEMPLATES / "schemas.csv")]})
    text = response.content.decode()
    assert response.status_code == 200 and "Preview: nothing was written." in text
    assert "<td>schemas</td><td>3</td><td>0</td><td>0</td>" in text
    assert "The kettle would not fit on the shelf because [it] was too tall." in text
    assert Schema.objects.count() == 0
    response = client.post(
        URL, {**form, "action": "import", "uploads": [upload("schemas.csv", TEMPLATES / "schemas.csv")]}
    )
    assert "<strong>Imported</strong>" in response.content.decode() and Schema.objects.count() == 3
    bad = write(tmp_path, "bad.csv", "schema,text\nkettle-1,\nnope,a reason\n")
    response = client.post(
        URL, {"format": "reasons", "collection": "mine", "uploads": [upload("bad.csv", bad)]}
    )
    text = response.content.decode()
    assert response.status_code == 400 and "Nothing was imported." in text
    assert "1 problem in bad.csv" in text and "<td>2</td><td>text</td><td>missing</td>" in text
    response = client.post(
        URL, {"format": "schemas", "uploads": [upload("schemas.csv", TEMPLATES / "schemas.csv")]}
    )
    assert response.status_code == 400 and "give your items a collection name" in response.content.decode()


def test_a_releases_wsc_jsonl_lines_import_as_schemas_with_the_extra_fields_named(tmp_path):
    line = {
        "id": "7",
        "collection": "wsc273",
        "text_before": "The man lifted the boy onto his shoulders because",
        "pronoun": "he",
        "text_after": "was so strong.",
        "sentence": "The man lifted the boy onto his shoulders because he was so strong.",
        "candidates": ["The man", "the boy"],
        "answer": "A",
        "twin": None,
        "switchable": None,
    }
    path = write(tmp_path, "wsc.jsonl", json.dumps(line) + "\n")
    result = own("schemas", path)
    schema = Schema.objects.get(collection="mine", external_id="7")
    assert (schema.text_before, schema.pronoun, schema.candidate_b) == (line["text_before"], "he", "the boy")
    assert result.warnings == ["wsc.jsonl: fields not read: collection, switchable"]


def test_own_schemas_are_released_only_under_their_collection(curator, tmp_path):
    from tests.datasets import sources

    dataset_import(format="winowhy", paths=[sources.write_winowhy(tmp_path)], options={"collection": "pub"})
    own("schemas", TEMPLATES / "schemas.csv")
    own("reasons", TEMPLATES / "reasons.csv")
    public = release_services.release_create(name="pub", dataset="wsc", version="1.0.0", user=curator)
    keys = set(ReleaseItem.objects.filter(release=public).values_list("key", flat=True))
    assert keys and all(k.startswith("pub:") for k in keys)
    reasons = release_services.release_create(name="pubr", dataset="winowhy", version="1.0.0", user=curator)
    assert not ReleaseItem.objects.filter(release=reasons, key__startswith="mine:").exists()
    mine = release_services.release_create(
        name="mine", dataset="wsc", version="1.0.0", collection="mine", user=curator
    )
    assert set(ReleaseItem.objects.filter(release=mine).values_list("key", flat=True)) == {
        "mine:kettle-1",
        "mine:kettle-2",
        "mine:lamp-1",
    }
    from releases.selectors import release_collections, release_sources

    own("comve-items", TEMPLATES / "comve-items.csv", collection="mycomve", split="dev")
    assert release_collections() == ["mine", "mycomve", "pub"]
    assert {
        "dataset": "comve",
        "label": "ComVE (SemEval-2020 Task 4)",
        "collection": "mycomve",
        "split": "dev",
        "items": 2,
    } in release_sources()

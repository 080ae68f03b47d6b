"""Releases of an adversarial collection (issue 27): its items carry their round, the models
they fooled, the votes and the tries; the card states the protocol; the adversarial option
builds ANLI's splits from the validated items only; Hugging Face `datasets` loads them."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections import Counter
from typing import Any

import pytest
from django.urls import reverse

from releases import services
from releases.errors import ReleaseValidationError
from releases.models import ReleaseItem
from releases.shapes.adversarial import anli_splits
from tests.evaluation.adversarial_factories import make_item, make_round, make_writer
from tests.releases.factories import create_release, published_release
from tests.releases.hf import hf_load


@pytest.fixture
def written(db):
    """Two Winograd rounds of the collection "adv": 6 validated fooling items, 2 validated
    items that fooled nobody, a rejected, a pending and a flagged one, a retracted one (no
    rows), and an item written in another collection."""
    first, second = make_round("adv", 1, ("smollm2",)), make_round("adv", 2, ("smollm2", "big"))
    alice, bob = make_writer("alice"), make_writer("bob")
    votes = {"correct": 3, "incorrect": 0, "flagged": 0}
    items = {}
    for n in range(4):
        items[f"f1-{n}"] = make_item(
            first, alice, fooled=("smollm2",), tries=n + 1, validation="validated", votes=votes
        )
    for n in range(2):
        items[f"f2-{n}"] = make_item(
            second, bob, fooled=("big",), tries=2, validation="validated", votes=votes
        )
    for n in range(2):
        items[f"n-{n}"] = make_item(second, bob, validation="validated", votes=votes)
    items["rejected"] = make_item(
        second, bob, fooled=("smollm2", "big"), validation="rejected", votes={"correct": 1, "incorrect": 2}
    )
    items["pending"] = make_item(
        first, alice, fooled=("smollm2",), validation="pending", votes={"correct": 1}
    )
    items["flagged"] = make_item(
        first, alice, fooled=("smollm2",), validation="flagged", votes={"flagged": 2}
    )
    items["retracted"] = make_item(first, alice, status="retracted", tries=5)
    make_item(make_round("elsewhere", 1), alice, fooled=("smollm2",), validation="validated")
    return items


def _payloads(release):
    return [item.payload for item in ReleaseItem.objects.filter(release=release).order_by("position")]


def test_every_row_of_an_adversarial_item_carries_its_round_models_votes_and_tries(
    written, curator, django_capture_on_commit_callbacks
):
    release = create_release(django_capture_on_commit_callbacks, user=curator, name="adv", collection="adv")
    payloads = _payloads(release)
    assert len(payloads) == 2 * 11  # every kept item's twin pair; the retracted one made no rows
    by_id = {p["id"]: p for p in payloads}
    first = written["f1-2"]
    for schema in (first.schema, first.twin):
        row = by_id[schema.external_id]
        assert (row["round"], row["models_fooled"], row["verdict"], row["tries"]) == (
            1,
            ["smollm2"],
            "one",
            3,
        )
        assert (
            row["votes"] == {"correct": 3, "incorrect": 0, "flagged": 0} and row["validation"] == "validated"
        )
        assert "adversarial_split" not in row
    assert by_id[written["rejected"].schema.external_id]["votes"] == {
        "correct": 1,
        "incorrect": 2,
        "flagged": 0,
    }
    assert by_id[written["n-0"].schema.external_id]["models_fooled"] == []
    card = (services.release_folder(release) / "README.md").read_text(encoding="utf-8")
    assert "## Adversarial protocol" in card and "**Collection adv**" in card
    assert "WSC273" not in card and "Trichelair" not in card  # its own words, not the public set's
    assert f"| 2 | smollm2 (`{'a' * 64}`); big (`{'c' * 64}`) | partial | K matching answers" in card
    assert "`models_fooled` (the round's models it fooled)" in card and "nie2020adversarial" in card


def test_schemas_that_no_adversarial_item_made_carry_none_of_its_fields(
    written, curator, django_capture_on_commit_callbacks
):
    from tests.releases.factories import make_schemas

    make_schemas(2, collection="adv")
    release = create_release(django_capture_on_commit_callbacks, user=curator, name="adv", collection="adv")
    plain = [p for p in _payloads(release) if p["source"] == "test"]
    assert len(plain) == 2 and not any("round" in p or "votes" in p for p in plain)


def test_the_adversarial_option_builds_anli_splits_from_validated_items_only(
    written, curator, django_capture_on_commit_callbacks
):
    option = {"seed": 7, "dev": 2, "test": 2}
    release = create_release(
        django_capture_on_commit_callbacks, user=curator, name="adv", collection="adv", adversarial=option
    )
    payloads = _payloads(release)
    assert {p["validation"] for p in payloads} == {"validated"}  # no rejected, pending, flagged
    assert len(payloads) == 2 * 8
    splits = Counter(p["adversarial_split"] for p in payloads)
    assert splits == {"train": 8, "dev": 4, "test": 4}
    assert all(p["models_fooled"] for p in payloads if p["adversarial_split"] != "train")
    pairs: dict[str, set[str]] = {}
    for p in payloads:  # a twin pair is never split
        pairs.setdefault(p["id"].rsplit("-", 1)[0], set()).add(p["adversarial_split"])
    assert all(len(s) == 1 for s in pairs.values())
    assert release.selection["adversarial"]["sizes"] == {"train": 8, "dev": 4, "test": 4}
    again = create_release(
        django_capture_on_commit_callbacks,
        user=curator,
        name="adv",
        version="1.0.1",
        collection="adv",
        adversarial=option,
    )
    assert [p["adversarial_split"] for p in _payloads(again)] == [p["adversarial_split"] for p in payloads]
    folder = services.release_folder(release)
    names = sorted(p.name for p in folder.glob("*.jsonl"))
    assert names == ["wsc.jsonl", "wsc_dev.jsonl", "wsc_test.jsonl", "wsc_train.jsonl"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "- config_name: wsc_splits\n  data_files:\n  - split: train\n    path: wsc_train.jsonl" in card
    assert "Seed 7; asked dev 2 and test 2 items. Rows per split: train 8, dev 4, test 4" in card


def test_the_splits_are_seeded_and_draw_dev_and_test_only_from_fooling_items():
    items = [(pk, pk % 3 == 0) for pk in range(1, 31)]
    a = anli_splits(items, seed=1, dev=3, test=4)
    assert a == anli_splits(list(reversed(items)), seed=1, dev=3, test=4)
    assert Counter(a.values()) == {"train": 23, "dev": 3, "test": 4}
    assert all(pk % 3 == 0 for pk, split in a.items() if split != "train")
    assert a != anli_splits(items, seed=2, dev=3, test=4)


def test_the_option_is_refused_with_the_field_named_and_nothing_written(written, curator):
    cases: list[tuple[str, dict[str, Any], str, str]] = [
        ("adv", {"dev": 4, "test": 3}, "adversarial_test", "6 validated fooling"),
        ("kitchen", {}, "adversarial", "has none"),
        ("adv", {"seed": "x"}, "adversarial_seed", "whole number"),
        ("adv", {"dev": -1}, "adversarial_dev", "between 0"),
    ]
    for collection, option, field, words in cases:
        with pytest.raises(ReleaseValidationError, match=words) as refused:
            services.release_create(
                name="adv",
                dataset="wsc",
                version="1.0.0",
                user=curator,
                collection=collection,
                adversarial=option,
            )
        assert refused.value.field == field
    with pytest.raises(ReleaseValidationError, match="wsc and comve"):
        services.release_create(
            name="adv", dataset="winowhy", version="1.0.0", user=curator, adversarial={}, collection="adv"
        )
    assert not services.Release.objects.exists()


def test_the_form_previews_and_creates_an_adversarial_release(
    client, curator, written, django_capture_on_commit_callbacks
):
    client.force_login(curator)
    fields = {
        "name": "adv",
        "dataset": "wsc",
        "collection": "adv",
        "version": "1.0.0",
        "adversarial": "on",
        "adversarial_seed": "3",
        "adversarial_dev": "1",
        "adversarial_test": "1",
    }
    preview = client.post(reverse("releases:release-create"), {**fields, "step": "preview"})
    assert preview.status_code == 200
    previewed = re.search(r'name="previewed" value="([^"]*)"', preview.content.decode())
    assert previewed is not None
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(
            reverse("releases:release-create"), {**fields, "step": "create", "previewed": previewed.group(1)}
        )
    assert created.status_code == 302
    release = services.Release.objects.get(name="adv")
    assert release.selection["adversarial"]["sizes"] == {"train": 12, "dev": 2, "test": 2}
    too_many = client.post(
        reverse("releases:release-create"),
        {**fields, "version": "1.0.1", "adversarial_test": "9", "step": "preview"},
    )
    assert too_many.status_code == 400 and "validated fooling items" in too_many.content.decode()


def test_hugging_face_datasets_loads_the_zip_with_its_splits(
    written, client, researcher, curator, django_capture_on_commit_callbacks, tmp_path
):
    release = published_release(
        django_capture_on_commit_callbacks,
        user=curator,
        name="adv",
        collection="adv",
        adversarial={"seed": 7, "dev": 2, "test": 2},
    )
    client.force_login(researcher)
    response = client.get(reverse("releases:release-bundle", args=[release.name, release.version]))
    zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).extractall(tmp_path / "unzipped")
    folder = tmp_path / "unzipped" / "adv-1.0.0"
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"^- config_name: (\S+)$", card, flags=re.MULTILINE) == ["wsc", "wsc_splits"]
    rows = hf_load(folder, "wsc", workdir=tmp_path / "hf")
    assert (
        len(rows) == 16
        and rows[0]["round"] in (1, 2)
        and set(rows[0]["votes"]) == {"correct", "incorrect", "flagged"}
    )
    for split in ("train", "dev", "test"):
        lines = [json.loads(line) for line in (folder / f"wsc_{split}.jsonl").open(encoding="utf-8")]
        loaded = hf_load(folder, "wsc_splits", workdir=tmp_path / "hf", split=split)
        assert [r["id"] for r in loaded] == [line["id"] for line in lines]
        assert {r["adversarial_split"] for r in loaded} == {split}
        assert all(r["models_fooled"] for r in loaded) or split == "train"


@pytest.fixture
def comve_written(db):
    round_ = make_round("adv-comve", 1, ("smollm2",), comve=True)
    writer = make_writer("carol")
    votes = {"correct": 3}
    for _ in range(3):
        make_item(round_, writer, fooled=("smollm2",), validation="validated", votes=votes)
    make_item(round_, writer, validation="validated", votes=votes)
    make_item(round_, writer, fooled=("smollm2",), validation="rejected", votes={"incorrect": 2})
    return round_


def test_a_comve_release_carries_the_fields_in_subtask_a_and_loads_with_its_splits(
    comve_written, curator, django_capture_on_commit_callbacks, tmp_path
):
    release = create_release(
        django_capture_on_commit_callbacks,
        user=curator,
        name="adv-comve",
        dataset="comve",
        split="pilot",
        collection="adv-comve",
        adversarial={"seed": 1, "dev": 1, "test": 1},
    )
    assert release.item_count == 4
    folder = services.release_folder(release)
    records = [json.loads(line) for line in (folder / "comve_a.jsonl").open(encoding="utf-8")]
    assert {r["round"] for r in records} == {1} and Counter(r["adversarial_split"] for r in records) == {
        "train": 2,
        "dev": 1,
        "test": 1,
    }
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "perplexity" in card and "- config_name: comve_a_splits" in card
    loaded = hf_load(folder, "comve_a_splits", workdir=tmp_path / "hf", split="test")
    assert len(loaded) == 1 and loaded[0]["models_fooled"] == ["smollm2"]


def test_a_release_of_the_public_sets_leaves_the_written_schemas_out(
    written, curator, django_capture_on_commit_callbacks
):
    from tests.releases.factories import make_schemas

    make_schemas(4)  # the public WSC273 collection
    release = create_release(django_capture_on_commit_callbacks, user=curator, name="wsc")
    assert {p["collection"] for p in _payloads(release)} == {"wsc273"} and release.item_count == 4


def test_the_card_gives_the_agreement_of_the_validation_campaign_that_judged_the_written_items(
    written, curator, django_capture_on_commit_callbacks
):
    from annotation.models import Task
    from annotation.services import campaign_create

    ids = [written[key].pk for key in ("f1-0", "f1-1", "n-0")]
    campaign_create(
        name="adv-round-1-validate", task=Task.ADVERSARIAL_VALIDATION, items="adversarial", ids=ids
    )
    release = create_release(django_capture_on_commit_callbacks, user=curator, name="adv", collection="adv")
    card = (services.release_folder(release) / "README.md").read_text(encoding="utf-8")
    assert "Campaign `adv-round-1-validate` (" in card  # its items are the written items, not the rows
    assert "No agreement figures in Winnow for this release" not in card

"""The adversarial figures (issue 27): per writer, round, model and collection, computed by
the pure frames from the rows, on the page (tables, charts, CSV and JSON) and in the API,
with the study-link writers' cost from the payment records."""

from __future__ import annotations

import csv
import io
import math

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import AdversarialItem, AdversarialScore
from evaluation.adversarial.figures import frames, selectors
from tests.evaluation.adversarial_factories import make_item, make_participant, make_round, make_writer


def _record(item, round_, writer, status, verdict, fooled, models, tries, seconds, validation, paid=False):
    return {
        "item": item,
        "round": round_,
        "writer": writer,
        "study_link": paid,
        "status": status,
        "verdict": verdict,
        "fooled": fooled,
        "models": models,
        "tries": tries,
        "seconds": seconds,
        "validation": validation,
    }


R1, R2 = ["smollm2"], ["smollm2", "big"]
RECORDS = [
    _record(1, 1, "alice", "kept", "one", ["smollm2"], R1, 3, 100.0, "validated"),
    _record(2, 1, "alice", "kept", "none", [], R1, 2, 50.0, "not_sent"),
    _record(3, 1, "alice", "retracted", "", [], R1, 4, 30.0, "not_sent"),
    _record(4, 2, "bob", "kept", "one", ["big"], R2, 1, 40.0, "validated", paid=True),
    _record(5, 2, "bob", "kept", "both", ["smollm2", "big"], R2, 2, 80.0, "rejected", paid=True),
    _record(6, 2, "bob", "kept", "one", ["smollm2"], R2, 1, 20.0, "validated", paid=True),
    _record(7, 2, "bob", "writing", "", [], R2, 1, None, "not_sent", paid=True),
]
PAY = {"bob": 4.0}  # reward 2.00 + bonus 1.00 + 2 validated fooling items at 0.50


def _row(frame, level, key):
    (row,) = frame[frame[level] == key].to_dict("records")
    return row


def test_the_collection_figures_follow_their_definitions():
    collection = _row(
        frames.figures_by(frames.items_frame(RECORDS), "collection", pay=PAY, collection="adv"),
        "collection",
        "adv",
    )
    assert (collection["items"], collection["kept"], collection["retracted"]) == (
        6,
        5,
        1,
    )  # the one being written counts nowhere
    assert (
        collection["fooling"],
        collection["validated_fooling"],
        collection["decided"],
        collection["rejected"],
    ) == (4, 3, 4, 1)
    assert collection["model_error_rate"] == pytest.approx(4 / 5)
    assert collection["validated_model_error_rate"] == pytest.approx(3 / 5)
    assert collection["tries_per_fooling_item"] == pytest.approx(13 / 4)
    assert collection["retraction_rate"] == pytest.approx(1 / 6)
    assert collection["rejection_rate"] == pytest.approx(1 / 4)
    assert collection["median_seconds_per_validated_fooling_item"] == 40.0
    assert collection["pay"] == 4.0 and collection["study_link_validated_fooling"] == 2
    assert collection["cost_per_validated_fooling_item"] == pytest.approx(2.0)


def test_per_writer_an_account_has_no_cost_and_a_study_link_writer_their_pay_per_validated_fooling_item():
    by_writer = frames.figures_by(frames.items_frame(RECORDS), "writer", pay=PAY)
    alice, bob = _row(by_writer, "writer", "alice"), _row(by_writer, "writer", "bob")
    assert (alice["model_error_rate"], alice["validated_model_error_rate"]) == (0.5, 0.5)
    assert alice["tries_per_fooling_item"] == 9.0 and alice["retraction_rate"] == pytest.approx(1 / 3)
    assert alice["rejection_rate"] == 0.0 and alice["median_seconds_per_validated_fooling_item"] == 100.0
    assert math.isnan(alice["cost_per_validated_fooling_item"]) and math.isnan(alice["pay"])
    assert bob["model_error_rate"] == 1.0 and bob["validated_model_error_rate"] == pytest.approx(2 / 3)
    assert bob["tries_per_fooling_item"] == pytest.approx(4 / 3) and bob["rejection_rate"] == pytest.approx(
        1 / 3
    )
    assert bob["median_seconds_per_validated_fooling_item"] == 30.0
    assert bob["cost_per_validated_fooling_item"] == 2.0
    by_round = frames.figures_by(frames.items_frame(RECORDS), "round", pay=PAY)
    assert _row(by_round, "round", 1)["model_error_rate"] == 0.5 and _row(by_round, "round", 2)["kept"] == 3


def test_per_model_fooling_is_that_models_and_the_kept_items_those_of_its_rounds():
    by_model = frames.figures_by(frames.items_frame(RECORDS), "model", pay=PAY)
    assert list(by_model["model"]) == ["big", "smollm2"]
    small, big = _row(by_model, "model", "smollm2"), _row(by_model, "model", "big")
    assert (small["kept"], small["fooling"], small["validated_fooling"]) == (5, 3, 2)
    assert small["model_error_rate"] == pytest.approx(3 / 5) and small[
        "validated_model_error_rate"
    ] == pytest.approx(2 / 5)
    assert small["tries_per_fooling_item"] == pytest.approx(13 / 3)
    assert small["median_seconds_per_validated_fooling_item"] == 60.0
    assert (big["kept"], big["fooling"], big["validated_fooling"]) == (3, 2, 1)
    assert big["model_error_rate"] == pytest.approx(2 / 3) and big["tries_per_fooling_item"] == 2.0
    assert math.isnan(big["cost_per_validated_fooling_item"])  # pay is not per model


def test_a_figure_without_a_denominator_is_missing_not_zero():
    nothing = frames.figures_by(frames.items_frame([RECORDS[2]]), "collection", collection="adv")
    row = nothing.to_dict("records")[0]
    assert row["retraction_rate"] == 1.0
    for name in (
        "model_error_rate",
        "validated_model_error_rate",
        "tries_per_fooling_item",
        "rejection_rate",
    ):
        assert math.isnan(row[name])
    empty = frames.all_figures([], collection="adv")
    assert empty["writer"].empty and empty["collection"]["kept"].tolist() == [0]
    with pytest.raises(ValueError, match="unknown level"):
        frames.figures_by(frames.items_frame(RECORDS), "annotator")


# --------------------------------------------------------------------------- from the rows


@pytest.fixture
def collection(db):
    """The records above as rows: alice an account, bob a study-link participant paid a
    reward of 2.00, a curator's bonus of 1.00 and 0.50 per validated fooling item."""
    first, second = make_round("adv", 1, ("smollm2",)), make_round("adv", 2, ("smollm2", "big"))
    alice = make_writer("alice")
    bob = make_participant("bob", reward="2.00", fooling_bonus="0.50", bonus="1.00")
    make_item(first, alice, fooled=("smollm2",), tries=3, seconds=100, validation="validated")
    make_item(first, alice, tries=2, seconds=50)
    make_item(first, alice, status="retracted", tries=4, seconds=30)
    make_item(second, bob.user, fooled=("big",), tries=1, seconds=40, validation="validated")
    make_item(second, bob.user, fooled=("smollm2", "big"), tries=2, seconds=80, validation="rejected")
    make_item(second, bob.user, fooled=("smollm2",), tries=1, seconds=20, validation="validated")
    make_item(second, bob.user, status="writing", tries=1, seconds=None)
    make_round("other", 1)  # another collection's round counts nowhere here
    # round 2's big re-scores round 1's kept items: fooled by the validated one only
    for item in AdversarialItem.objects.filter(round=first, status="kept"):
        verdict = "one" if item.validation == "validated" else "none"
        AdversarialScore.objects.create(
            item=item,
            round=second,
            model="big",
            sha256="c" * 64,
            method="partial",
            result={},
            verdict=verdict,
        )
    return "adv"


def test_the_rows_give_the_same_figures_as_the_records(collection):
    assert selectors.writer_pay(collection=collection) == PAY
    tables = selectors.collection_figures(collection=collection)
    row = tables["collection"].to_dict("records")[0]
    assert (row["kept"], row["fooling"], row["validated_fooling"], row["tries"]) == (5, 4, 3, 13)
    assert row["cost_per_validated_fooling_item"] == pytest.approx(2.0)
    assert _row(tables["model"], "model", "big")["model_error_rate"] == pytest.approx(2 / 3)
    assert _row(tables["writer"], "writer", "bob")["study_link_writers"] == 1
    assert [c["collection"] for c in selectors.adversarial_collections()] == ["adv", "other"]
    (rescored,) = tables["rescore"].to_dict("records")
    assert (rescored["model"], rescored["written_in"], rescored["rescored_in"]) == ("big", 1, 2)
    assert (rescored["rescored"], rescored["fooling"], rescored["validated_fooling"]) == (2, 1, 1)
    assert rescored["model_error_rate"] == 0.5 and rescored["validated_model_error_rate"] == 0.5


def test_a_rejected_participant_is_not_paid_the_reward(collection):
    from annotation.models import Participant

    Participant.objects.filter(external_id="PID-bob").update(decision="reject")
    assert selectors.writer_pay(collection=collection) == {"bob": 2.0}


def test_curators_and_researchers_see_the_page_with_charts_and_downloads(
    client, curator, researcher, collection
):
    for user in (curator, researcher):
        client.force_login(user)
        page = client.get(reverse("adversarial-figures:detail", args=[collection]))
        assert page.status_code == 200
        html = page.content.decode()
        for level in ("collection", "round", "model", "writer", "rescore"):
            assert f'id="figures-{level}"' in html
        assert 'data-chart="rates-model"' in html and "80.0%" in html  # the collection's model error rate
        # the rates come right after what a row is about, before the counts (on screen at 1366 px)
        assert html.index("<th>writer</th><th>model error rate</th>") < html.index(
            "<th>items</th>", html.index("figures-writer")
        )
        index = client.get(reverse("adversarial-figures:index"))
        assert reverse("adversarial-figures:detail", args=[collection]) in index.content.decode()
    csv_text = client.get(
        reverse("adversarial-figures:table", args=[collection, "writer", "csv"])
    ).content.decode()
    rows = {r["writer"]: r for r in csv.DictReader(io.StringIO(csv_text))}
    assert (
        rows["bob"]["cost_per_validated_fooling_item"] == "2.0"
        and rows["alice"]["cost_per_validated_fooling_item"] == ""
    )
    body = client.get(reverse("adversarial-figures:table", args=[collection, "round", "json"])).json()
    assert body["collection"] == collection and [r["round"] for r in body["rows"]] == [1, 2]
    assert body["rows"][0]["validated_model_error_rate"] == 0.5
    assert (
        client.get(reverse("adversarial-figures:table", args=[collection, "nothing", "csv"])).status_code
        == 404
    )
    assert (
        client.get(reverse("adversarial-figures:table", args=[collection, "writer", "xlsx"])).status_code
        == 404
    )
    assert client.get(reverse("adversarial-figures:detail", args=["no-rounds"])).status_code == 404


def test_annotators_and_participants_are_refused_the_page_and_the_api(client, annotator, collection):
    from annotation.models import Participant

    bob = Participant.objects.get(external_id="PID-bob").user
    for user in (annotator, bob):
        client.force_login(user)
        assert client.get(reverse("adversarial-figures:detail", args=[collection])).status_code == 403
        assert client.get(reverse("adversarial-figures:index")).status_code == 403
        api = APIClient()
        api.force_authenticate(user)
        assert (
            api.get(reverse("evaluation-api:adversarial-figures-detail", args=[collection])).status_code
            == 403
        )
    client.logout()
    assert client.get(reverse("adversarial-figures:detail", args=[collection])).status_code == 302


def test_the_api_gives_every_level_with_nulls_for_missing_figures(researcher, collection):
    api = APIClient()
    api.force_authenticate(researcher)
    listing = api.get(reverse("evaluation-api:adversarial-figures-list")).json()
    assert listing[0] == {"collection": "adv", "rounds": 2, "items": 7, "latest": 2}
    body = api.get(reverse("evaluation-api:adversarial-figures-detail", args=[collection])).json()
    assert [r["number"] for r in body["rounds"]] == [1, 2]
    assert body["rounds"][1]["models_in_loop"][1]["name"] == "big"
    assert set(body["figures"]) == {"writer", "round", "model", "collection", "rescore"}
    assert body["figures"]["rescore"][0]["model_error_rate"] == 0.5
    alice = next(r for r in body["figures"]["writer"] if r["writer"] == "alice")
    assert alice["cost_per_validated_fooling_item"] is None and alice["model_error_rate"] == 0.5
    assert api.get(reverse("evaluation-api:adversarial-figures-detail", args=["nope"])).status_code == 404

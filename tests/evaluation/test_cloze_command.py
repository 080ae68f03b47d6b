"""manage.py cloze end to end with tiny models, the recorded run, and the run pages."""

import csv
import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils.html import escape

from core.jsonl import read_jsonl
from evaluation.cloze.services import ClozeError, ClozeSettings, cloze_run
from evaluation.models import ClozeRun, ClozeRunStatus
from tests.evaluation.cloze_models import CORPUS, build_causal, build_masked
from tests.releases.factories import make_comve, published_release

PAIRS = [
    ("0", "He poured orange juice on his cereal.", "He poured milk on his cereal.", 0),
    ("1", "He drinks apple.", "He drinks milk.", 0),
    ("2", "A niece is a person.", "A giraffe is a person.", 1),
    ("3", "I like to ride my chocolate", "I like to ride my bike", 0),
    ("4", "The fish swam in the ocean.", "The fish swam in the desert.", 1),
]


@pytest.fixture(scope="module")
def masked_path(tmp_path_factory):
    return build_masked(tmp_path_factory.mktemp("masked"))


@pytest.fixture(scope="module")
def causal_path(tmp_path_factory):
    return build_causal(tmp_path_factory.mktemp("causal"))


@pytest.fixture
def split(tmp_path):
    """A ComVE split folder in the SemEval layout."""
    folder = tmp_path / "train"
    folder.mkdir()
    rows = "".join(f'{i},"{a}","{b}"\n' for i, a, b, _ in PAIRS)
    (folder / "subtaskA_data_all.csv").write_text("id,sent0,sent1\n" + rows)
    (folder / "subtaskA_answers_all.csv").write_text("".join(f"{i},{f}\n" for i, _, _, f in PAIRS))
    return folder


@pytest.fixture
def glove_file(tmp_path):
    rng = np.random.default_rng(1)
    words = sorted({w.lower() for line in CORPUS for w in line.replace(".", " ").split()})
    path = tmp_path / "vectors.txt"
    path.write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in rng.normal(size=8))}\n" for w in words))
    return path


def _read_jsonl(path):
    return [row for _, row in read_jsonl(path)]


def _cloze(split, model, out, **options):
    """Run the command with k = 3 and return its results.json."""
    call_command("cloze", release=str(split), model=str(model), k=3, out=str(out), verbosity=0, **options)
    return json.loads((out / "results.json").read_text())


@pytest.mark.django_db
def test_cloze_command_writes_results_and_records_the_run_with_a_masked_model(
    masked_path, split, glove_file, tmp_path
):
    out = tmp_path / "out"
    stdout = StringIO()
    call_command(
        "cloze",
        release=str(split),
        model=str(masked_path),
        embeddings=str(glove_file),
        limit=6,
        pairs=5,
        k=4,
        out=str(out),
        stdout=stdout,
        verbosity=0,
    )
    results = json.loads((out / "results.json").read_text())
    dispersion = _read_jsonl(out / "dispersion.jsonl")
    confidence = _read_jsonl(out / "confidence.jsonl")
    assert [r["id"] for r in dispersion] == ["0/0", "0/1", "1/0", "1/1", "2/0", "2/1"]
    assert [r["sensible"] for r in dispersion[:2]] == [False, True]
    assert len(confidence) == 5
    assert results["model_kind"] == "masked"
    assert results["method"].startswith("masked LM")
    assert results["embeddings"].startswith("glove:vectors.txt")
    d = results["dispersion"]
    scored = [r for r in dispersion if r["accuracy_weighted"] is not None]
    assert d["statements"] == 6 and d["scored"] == len(scored)
    assert d["mean"]["accuracy_weighted"] == pytest.approx(
        np.mean([r["accuracy_weighted"] for r in scored]), abs=1e-5
    )
    if len(scored) >= 3:
        expected = np.corrcoef(
            [r["accuracy_uniform"] for r in scored], [r["precision_uniform"] for r in scored]
        )[0, 1]
        assert d["pearson_accuracy_precision_uniform"] == pytest.approx(expected, abs=1e-5)
    c = results["confidence"]
    encoded = [r for r in confidence if r["encoded"]]
    assert c["pairs"] == 5 and c["encoded"] == len(encoded)
    assert c["correct"] == sum(r["correct"] for r in encoded)
    run = ClozeRun.objects.get()
    assert run.status == ClozeRunStatus.DONE
    assert run.results["dispersion"]["scored"] == d["scored"]
    assert run.settings["k"] == 4 and run.settings["limit"] == 6
    assert f"cloze run #{run.pk}" in stdout.getvalue()


@pytest.mark.django_db
def test_cloze_command_with_a_causal_model_says_it_re_ranked_proposals(causal_path, split, tmp_path):
    out = tmp_path / "out"
    call_command(
        "cloze",
        release=str(split),
        model=str(causal_path),
        limit=2,
        pairs=2,
        k=3,
        propose=6,
        out=str(out),
        verbosity=0,
    )
    results = json.loads((out / "results.json").read_text())
    assert results["model_kind"] == "causal"
    assert "re-ranked by the probability of the whole sentence" in results["method"]
    assert results["embeddings"] == "model input embeddings (mean over sub-tokens)"
    assert results["start_token_id"] is not None
    assert len(_read_jsonl(out / "dispersion.jsonl")) == 2


@pytest.mark.django_db
def test_the_causal_start_token_is_chosen_recorded_and_kept_apart_in_a_combine(
    causal_path, split, tmp_path, client, researcher
):
    def run(out, **options):
        return _cloze(split, causal_path, tmp_path / out, limit=2, pairs=0, propose=6, **options)

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(causal_path)
    bos, eos = run("bos"), run("eos", start_token="eos", offset=2)
    assert bos["start_token_id"] == tokenizer.bos_token_id and bos["start_token"] == tokenizer.bos_token
    assert eos["start_token_id"] == tokenizer.eos_token_id and eos["start_token"] == tokenizer.eos_token
    assert bos["start_token_id"] != eos["start_token_id"]
    client.force_login(researcher)
    page = client.get(reverse("cloze:run-detail", args=[eos["run"]])).content.decode()
    assert f"<code>{escape(tokenizer.eos_token)}</code> (id {tokenizer.eos_token_id})" in page
    with pytest.raises(CommandError, match="start_token_id differs"):
        call_command("cloze", combine=[str(tmp_path / "bos"), str(tmp_path / "eos")], out=str(tmp_path / "c"))
    with pytest.raises(CommandError, match="start token 'nowhere' is not a token of this tokenizer"):
        run("bad", start_token="nowhere")
    assert not (tmp_path / "bad" / "results.json").exists()


@pytest.mark.django_db
def test_cloze_reads_a_release_folder_with_comve_a_jsonl(masked_path, tmp_path):
    release = tmp_path / "release"
    release.mkdir()
    (release / "comve_a.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "sent0": a, "sent1": b, "false_index": f}) + "\n" for i, a, b, f in PAIRS
        )
    )
    run = cloze_run(
        release=str(release),
        model_path=str(masked_path),
        out_dir=tmp_path / "out",
        settings=ClozeSettings(k=3, limit=2, pairs=None),
    )
    assert run.results["confidence"]["pairs"] == 5
    assert run.results["source"].endswith("release")


@pytest.mark.django_db
def test_cloze_runs_on_a_published_release_by_name_and_version(
    masked_path, tmp_path, settings, curator, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_comve(3)
    published_release(
        django_capture_on_commit_callbacks, user=curator, name="comve", dataset="comve", split="test"
    )
    folder = tmp_path / "media" / "releases" / "comve" / "1.0.0"
    run = cloze_run(
        release="comve@1.0.0",
        model_path=str(masked_path),
        out_dir=tmp_path / "out",
        settings=ClozeSettings(k=3, limit=1, pairs=2),
    )
    assert run.release == "comve@1.0.0"
    assert run.results["source"] == str(folder)
    assert run.results["confidence"]["pairs"] == 2


@pytest.mark.django_db
def test_cloze_refuses_a_release_that_is_not_published(masked_path, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    with pytest.raises(ClozeError, match="no published release comve@9.9.9"):
        cloze_run(
            release="comve@9.9.9",
            model_path=str(masked_path),
            out_dir=tmp_path / "out",
            settings=ClozeSettings(k=3, limit=1, pairs=2),
        )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": "/nonexistent/model"}, "no such file or folder"),
        ({"release": "comve@1.0"}, "no published release comve@1.0"),
        ({"embeddings": "BAD"}, "line 1: not a number"),
        ({"k": 1}, "k must be at least 2"),
    ],
)
def test_cloze_command_refuses_bad_input_and_writes_nothing(masked_path, split, tmp_path, options, message):
    bad_vectors = tmp_path / "bad.txt"
    bad_vectors.write_text("milk 0.1 zero\n")
    out = tmp_path / "out"
    arguments = {"release": str(split), "model": str(masked_path), "out": str(out), "verbosity": 0, **options}
    if arguments.get("embeddings") == "BAD":
        arguments["embeddings"] = str(bad_vectors)
    with pytest.raises(CommandError, match=message):
        call_command("cloze", **arguments)
    assert not out.exists()
    assert not ClozeRun.objects.exists()


@pytest.mark.django_db
def test_a_bad_split_folder_names_the_row(masked_path, split, tmp_path):
    (split / "subtaskA_answers_all.csv").write_text("0,0\n1,x\n")
    with pytest.raises(ClozeError, match=r"subtaskA_answers_all.csv, row 2, answer: .*0 or 1"):
        cloze_run(release=str(split), model_path=str(masked_path), out_dir=tmp_path / "out")


@pytest.fixture
def finished_run(masked_path, split, tmp_path, db):
    return cloze_run(
        release=str(split),
        model_path=str(masked_path),
        out_dir=tmp_path / "out",
        settings=ClozeSettings(k=4, limit=10, pairs=5),
    )


def test_researcher_sees_the_run_with_its_violin_plot_and_tables(client, researcher, finished_run):
    client.force_login(researcher)
    listing = client.get(reverse("cloze:run-list"))
    assert listing.status_code == 200
    assert reverse("cloze:run-detail", args=[finished_run.pk]) in listing.content.decode()
    page = client.get(reverse("cloze:run-detail", args=[finished_run.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert html.count("<svg xmlns") == 2 and html.count("<path") >= 4
    assert "0.390" in html and "0.906" in html and "63 of 83" in html
    assert "He poured orange juice on his cereal." in html or "He drinks apple." in html
    assert f"{finished_run.results['dispersion']['pearson_accuracy_precision_weighted']:.4f}" in html
    assert "<strong>paper</strong>: Qasemi et al. as written" in html
    # the paper's Tables 1-2 beside this run's scores of the same sentences
    assert 'id="paper-table-1"' in html and "Grandma knits with thread." in html
    assert "<td>17.9%</td>" in html  # 0.179 shown as the paper prints it
    assert "They, People, Women, Men, Children" in html and "0.548" in html


def test_every_table_of_the_run_page_downloads_as_csv_and_json(client, researcher, finished_run):
    """The page's tables are frames of evaluation.cloze.tables; each downloads with the same cells."""
    client.force_login(researcher)
    html = client.get(reverse("cloze:run-detail", args=[finished_run.pk])).content.decode()
    dispersion = finished_run.results["dispersion"]
    for table in ("correlations", "scores", "best", "worst", "paper_table_1", "paper_table_2", "confidence"):
        for fmt in ("csv", "json"):
            url = reverse("cloze:run-table", args=[finished_run.pk, table, fmt])
            assert url in html
            response = client.get(url)
            assert response.status_code == 200
            assert f'filename="cloze-{finished_run.pk}-{table}.{fmt}"' in response["Content-Disposition"]
    scores = list(
        csv.DictReader(
            StringIO(
                client.get(
                    reverse("cloze:run-table", args=[finished_run.pk, "scores", "csv"])
                ).content.decode()
            )
        )
    )
    assert [r["score"] for r in scores] == [
        "accuracy_uniform",
        "accuracy_weighted",
        "precision_uniform",
        "precision_weighted",
    ]
    assert float(scores[1]["mean"]) == dispersion["mean"]["accuracy_weighted"]
    assert f"{dispersion['mean']['accuracy_weighted']:.4f}" in html
    best = json.loads(client.get(reverse("cloze:run-table", args=[finished_run.pk, "best", "json"])).content)
    assert [r["text"] for r in best["rows"]] == [r["text"] for r in dispersion["best"]]
    assert best["rows"][0]["masked"] == dispersion["best"][0]["masked"]
    confidence = json.loads(
        client.get(reverse("cloze:run-table", args=[finished_run.pk, "confidence", "json"])).content
    )
    by_figure = {r["figure"]: r["value"] for r in confidence["rows"]}
    assert by_figure["pairs"] == finished_run.results["confidence"]["pairs"]
    assert by_figure["correct"] == finished_run.results["confidence"]["correct"]
    assert client.get(reverse("cloze:run-table", args=[finished_run.pk, "pies", "csv"])).status_code == 404
    assert client.get(reverse("cloze:run-table", args=[finished_run.pk, "scores", "xml"])).status_code == 404


def test_statements_are_escaped_on_the_run_page(client, researcher, finished_run):
    results = finished_run.results
    results["dispersion"]["best"][0]["text"] = "<script>alert(1)</script>"
    finished_run.results = results
    finished_run.save()
    client.force_login(researcher)
    html = client.get(reverse("cloze:run-detail", args=[finished_run.pk])).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize("role", ["annotator", "curator", "nobody"])
def test_other_roles_may_not_see_cloze_runs(client, request, role, finished_run):
    client.force_login(request.getfixturevalue(role))
    assert client.get(reverse("cloze:run-list")).status_code == 403
    assert client.get(reverse("cloze:run-detail", args=[finished_run.pk])).status_code == 403
    assert client.get(reverse("cloze:run-table", args=[finished_run.pk, "scores", "csv"])).status_code == 403


def test_anonymous_users_are_sent_to_login(client, finished_run):
    response = client.get(reverse("cloze:run-detail", args=[finished_run.pk]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.django_db
def test_an_unknown_run_is_not_found(client, researcher):
    client.force_login(researcher)
    assert client.get(reverse("cloze:run-detail", args=[999])).status_code == 404


@pytest.mark.django_db
def test_a_run_split_with_offset_and_combined_equals_one_run(masked_path, split, tmp_path):
    def run(out, **options):
        return _cloze(split, masked_path, tmp_path / out, **options)

    whole = run("whole", limit=6, pairs=3)
    run("a", limit=4, pairs=3)
    part_b = run("b", offset=3, limit=3, pairs=0)  # overlaps statement 3 with part a
    assert [r["id"] for r in _read_jsonl(tmp_path / "b" / "dispersion.jsonl")] == ["1/1", "2/0", "2/1"]
    assert part_b["settings"]["offset"] == 3
    call_command(
        "cloze", combine=[str(tmp_path / "a"), str(tmp_path / "b")], out=str(tmp_path / "c"), verbosity=0
    )
    combined = json.loads((tmp_path / "c" / "results.json").read_text())
    assert _read_jsonl(tmp_path / "c" / "dispersion.jsonl") == _read_jsonl(
        tmp_path / "whole" / "dispersion.jsonl"
    )
    for key in (
        "mean",
        "pearson_accuracy_precision_uniform",
        "pearson_accuracy_precision_weighted",
        "statements",
    ):
        assert combined["dispersion"][key] == whole["dispersion"][key]
    assert combined["confidence"]["correct"] == whole["confidence"]["correct"]
    assert combined["combined_from"] == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert ClozeRun.objects.filter(pk=combined["run"], status=ClozeRunStatus.DONE).exists()
    # statements 0-3 and 3-5 asked for: six, all done (the overlap is not counted twice)
    assert combined["dispersion"]["requested"] == 6 and combined["confidence"]["requested"] == 3
    assert combined["interrupted"] is False

    # part a as if it had been asked for 0-5 and stopped after 4: finished by part b
    # (3-5), not by a part that did only statement 5
    results_a = json.loads((tmp_path / "a" / "results.json").read_text())
    results_a["dispersion"].update(requested=6, interrupted=True)
    results_a["interrupted"] = True
    results_a["paper_examples"] = None  # an interrupted part computes no paper examples
    (tmp_path / "a" / "results.json").write_text(json.dumps(results_a))
    run("b5", offset=5, limit=1, pairs=0)
    for other, interrupted, requested in (("b", False, 6), ("b5", True, 6)):
        call_command(
            "cloze",
            combine=[str(tmp_path / "a"), str(tmp_path / other)],
            out=str(tmp_path / f"c-{other}"),
            verbosity=0,
        )
        combined = json.loads((tmp_path / f"c-{other}" / "results.json").read_text())
        assert combined["interrupted"] is interrupted, other
        # the paper's examples come from the part that computed them
        other_results = json.loads((tmp_path / other / "results.json").read_text())
        assert combined["paper_examples"] == other_results["paper_examples"] is not None
        assert combined["dispersion"]["interrupted"] is interrupted
        assert combined["dispersion"]["requested"] == requested


@pytest.mark.django_db
def test_runs_of_different_settings_are_not_combined(masked_path, split, tmp_path):
    for out, k in (("a", 3), ("b", 4)):
        call_command(
            "cloze",
            release=str(split),
            model=str(masked_path),
            k=k,
            limit=1,
            pairs=0,
            out=str(tmp_path / out),
            verbosity=0,
        )
    with pytest.raises(CommandError, match="setting k differs"):
        call_command(
            "cloze", combine=[str(tmp_path / "a"), str(tmp_path / "b")], out=str(tmp_path / "c"), verbosity=0
        )
    assert not (tmp_path / "c").exists()


@pytest.mark.django_db
def test_a_model_given_by_a_relative_path_is_recorded_resolved_and_combines(
    masked_path, split, tmp_path, monkeypatch
):
    monkeypatch.chdir(masked_path.parent)
    for out, model in (("a", masked_path.name), ("b", str(masked_path))):
        call_command(
            "cloze",
            release=str(split),
            model=model,
            k=3,
            limit=1 if out == "a" else 2,
            offset=0 if out == "a" else 1,
            pairs=0,
            out=str(tmp_path / out),
            verbosity=0,
        )
    recorded = json.loads((tmp_path / "a" / "results.json").read_text())["model"]
    assert recorded == str(masked_path.resolve())
    call_command(
        "cloze", combine=[str(tmp_path / "a"), str(tmp_path / "b")], out=str(tmp_path / "c"), verbosity=0
    )
    assert len(_read_jsonl(tmp_path / "c" / "dispersion.jsonl")) == 3


@pytest.mark.django_db
def test_runs_use_the_papers_equations_by_default_and_name_them(masked_path, split, tmp_path):
    paper = _cloze(split, masked_path, tmp_path / "paper", limit=4, pairs=5)
    other = _cloze(split, masked_path, tmp_path / "other", limit=4, pairs=5, equations="renormalised")
    assert paper["equations"]["name"] == "paper" and paper["settings"]["equations"] == "paper"
    assert other["equations"]["name"] == "renormalised"
    first = _read_jsonl(tmp_path / "paper" / "dispersion.jsonl")[0]["masked"][0]
    # equation 1 as written: sum of p_i cos(r_i, w), from the record's own replacements
    assert first["accuracy_weighted"] == pytest.approx(
        sum(x["prob"] * x["cos"] for x in first["replacements"]), abs=1e-5
    )
    same = _read_jsonl(tmp_path / "other" / "dispersion.jsonl")[0]["masked"][0]
    total = sum(x["prob"] for x in same["replacements"])
    assert same["accuracy_weighted"] == pytest.approx(
        sum(x["prob"] * x["cos"] for x in same["replacements"]) / total, abs=1e-5
    )
    with pytest.raises(CommandError, match="setting equations differs"):
        call_command(
            "cloze",
            combine=[str(tmp_path / "paper"), str(tmp_path / "other")],
            out=str(tmp_path / "c"),
            verbosity=0,
        )


@pytest.mark.django_db
def test_a_rescore_with_other_equations_equals_a_run_with_them(masked_path, split, glove_file, tmp_path):
    common = {"limit": 6, "pairs": 5, "embeddings": str(glove_file)}
    _cloze(split, masked_path, tmp_path / "paper", **common)
    direct = _cloze(split, masked_path, tmp_path / "direct", equations="renormalised", **common)
    call_command(
        "cloze",
        rescore=str(tmp_path / "paper"),
        equations="renormalised",
        embeddings=str(glove_file),
        out=str(tmp_path / "rescored"),
        verbosity=0,
    )
    rescored = json.loads((tmp_path / "rescored" / "results.json").read_text())
    assert rescored["equations"]["name"] == "renormalised"
    assert rescored["rescored_from"]["equations"] == "paper"
    for key in ("pearson_accuracy_precision_uniform", "pearson_accuracy_precision_weighted"):
        assert rescored["dispersion"][key] == pytest.approx(direct["dispersion"][key], abs=1e-4)
    for name, value in direct["dispersion"]["mean"].items():
        assert rescored["dispersion"]["mean"][name] == pytest.approx(value, abs=1e-4)
    assert rescored["confidence"]["correct"] == direct["confidence"]["correct"]
    assert rescored["confidence"]["confidence_predicted_right"] == pytest.approx(
        direct["confidence"]["confidence_predicted_right"], abs=1e-4
    )
    assert rescored["paper_examples"]["table_1"][5]["text"].startswith("A passport")
    assert ClozeRun.objects.filter(pk=rescored["run"], status=ClozeRunStatus.DONE).exists()
    # re-scored with its own equations, a run gives its own figures back (from 6-decimal probabilities)
    call_command(
        "cloze",
        rescore=str(tmp_path / "paper"),
        embeddings=str(glove_file),
        out=str(tmp_path / "same"),
        verbosity=0,
    )
    same = json.loads((tmp_path / "same" / "results.json").read_text())
    original = json.loads((tmp_path / "paper" / "results.json").read_text())
    for name, value in original["dispersion"]["mean"].items():
        assert same["dispersion"]["mean"][name] == pytest.approx(value, abs=1e-5)
    assert same["confidence"]["correct"] == original["confidence"]["correct"]
    pairs = zip(
        _read_jsonl(tmp_path / "same" / "confidence.jsonl"),
        _read_jsonl(tmp_path / "paper" / "confidence.jsonl"),
        strict=True,
    )
    for again, first in pairs:
        assert again.get("candidates") == first.get("candidates")  # same words, probabilities, clusters
        assert again.get("correct") == first.get("correct")
        assert again.get("confidence", []) == pytest.approx(first.get("confidence", []), abs=1e-5)
    # the run's own vectors are required: a GloVe run cannot be re-scored without its file
    with pytest.raises(CommandError, match="give that file with --embeddings"):
        call_command("cloze", rescore=str(tmp_path / "paper"), out=str(tmp_path / "x"), verbosity=0)
    assert not (tmp_path / "x").exists()


@pytest.mark.django_db
def test_the_papers_table_1_and_2_sentences_are_scored_beside_the_papers_figures(
    masked_path, split, tmp_path
):
    from evaluation.cloze.experiments import PAPER_TABLE_1

    results = _cloze(split, masked_path, tmp_path / "out", limit=1, pairs=0)
    examples = results["paper_examples"]
    assert [row["text"] for row in examples["table_1"]] == [text for text, _ in PAPER_TABLE_1]
    assert examples["table_1"][1]["paper_score"] == 0.179
    leopards = examples["records"][1]
    assert examples["table_1"][1]["accuracy_weighted"] == leopards["accuracy_weighted"]
    assert [row["word"] for row in examples["table_2"]] == [m["word"] for m in leopards["masked"]]
    assert {"Leopards", "spots", "bodies"} >= {
        row["word"] for row in examples["table_2"] if row["paper_score"]
    }
    skipped = _cloze(split, masked_path, tmp_path / "none", limit=1, pairs=0, no_paper_examples=True)
    assert skipped["paper_examples"] is None

"""The service with a real (tiny, random) causal LM built in the test: scores flow into metrics."""

import json
import math
import re

import pytest
from django.urls import reverse

from evaluation import release_data
from evaluation.models import EvaluationRun, RunStatus
from evaluation.services import EvaluationError, evaluation_run, evaluation_run_create
from tests.evaluation.factories import (
    COMVE_A,
    COMVE_B,
    WINOWHY_ROWS,
    WSC_ROWS,
    write_comve_release,
    write_winowhy_release,
    write_wsc_release,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def tiny_causal(tmp_path_factory):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    text = json.dumps([WSC_ROWS, WINOWHY_ROWS, COMVE_A, COMVE_B]) + " refers to because"
    words = sorted(set(re.findall(r"\w+|[^\w\s]", text)))
    vocab = {w: i for i, w in enumerate(["<unk>", "<s>", "</s>", *words])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=1,
        eos_token_id=2,
    )
    folder = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def _lines(run):
    return [json.loads(line) for line in run.predictions_file.read_text().splitlines()]


@pytest.mark.parametrize("method", ["full", "partial"])
def test_wsc_with_a_tiny_causal_lm_predicts_the_higher_scoring_candidate(tmp_path, tiny_causal, method):
    release = write_wsc_release(tmp_path / "r")
    run = evaluation_run(
        run=evaluation_run_create(release=str(release), method=method, model_path=str(tiny_causal))
    )
    assert run.status == RunStatus.DONE
    assert run.model_identity["kind"] == "causal" and run.model_identity["start_token"] == "<s>"
    lines = _lines(run)
    assert len(lines) == 6
    for line in lines:
        assert all(s < 0 for s in line["scores"])  # log-probabilities
        assert line["prediction"] == (1 if line["scores"][1] > line["scores"][0] else 0)
        assert line["correct"] == (line["prediction"] == line["gold"])
    assert run.metrics["all"]["correct"] == sum(x["correct"] for x in lines if x["variant"] == "original")
    originals = {x["id"]: x["prediction"] for x in lines if x["variant"] == "original"}
    changed = sum(1 for x in lines if x["variant"] == "switched" and x["prediction"] != originals[x["id"]])
    assert run.metrics["switchable"]["changed"] == changed
    assert run.progress_done == run.progress_total == 4  # schemas, not their 6 sentences


def test_winowhy_with_a_tiny_causal_lm_thresholds_its_scores(tmp_path, tiny_causal):
    release = write_winowhy_release(tmp_path / "r")
    run = evaluation_run(
        run=evaluation_run_create(release=str(release), method="full", model_path=str(tiny_causal))
    )
    lines = _lines(run)
    threshold = run.metrics["best_threshold"]["threshold"]
    assert len(lines) == 6
    for line in lines:
        expected = "positive" if threshold is not None and line["scores"][0] >= threshold else "negative"
        assert line["prediction"] == expected
    assert run.metrics["best_threshold"]["correct"] == sum(x["correct"] for x in lines)
    assert run.metrics["best_threshold"]["correct"] >= run.metrics["majority_baseline"]["correct"]


def _reference_log_probability(model_folder):
    """(log P(text | start token), tokens) computed here with transformers alone, for checking."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_folder)
    model = AutoModelForCausalLM.from_pretrained(model_folder).eval()
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id

    def score(text):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([[start, *ids]])).logits[0, :-1]
        logp = torch.log_softmax(logits.double(), dim=-1)
        return float(sum(logp[i, t] for i, t in enumerate(ids))), len(ids)

    return score


def test_comve_with_a_tiny_causal_lm_scores_a_and_b_and_says_why_c_is_not_scored(
    tmp_path, tiny_causal, client, researcher
):
    release = write_comve_release(tmp_path / "r")
    run = evaluation_run(
        run=evaluation_run_create(release=str(release), method="full", model_path=str(tiny_causal))
    )
    lines = _lines(run)
    comve = release_data.read_comve(release_data.open_release_folder(release))
    items = {x.id: x for x in comve.b}
    statements = {x.id: x.statements for x in comve.a}
    reference = _reference_log_probability(tiny_causal)
    for line in (x for x in lines if x["variant"] == "a"):
        # the papers' rule, the headline: the statement with the higher perplexity is against sense
        expected = [math.exp(-lp / n) for lp, n in map(reference, statements[line["id"]])]
        assert line["perplexities"] == pytest.approx(expected, rel=1e-4)
        assert line["prediction"] == ("0" if expected[0] >= expected[1] else "1")
        # the total log-probability's rule beside it: the less likely statement
        assert line["prediction_by_rule"]["total"] == ("0" if line["scores"][0] < line["scores"][1] else "1")
    for line in (x for x in lines if x["variant"] == "b"):
        # '"<false statement>" is against common sense because <reason>', the lowest perplexity
        sentences = [
            f'"{items[line["id"]].false_sent}" is against common sense because {o}'
            for o in items[line["id"]].options
        ]
        expected = [math.exp(-lp / n) for lp, n in map(reference, sentences)]
        assert line["perplexities"] == pytest.approx(expected, rel=1e-4)
        assert line["prediction"] == "ABC"[expected.index(min(expected))]
        # the reason alone after the statement, beside it: the most likely reason
        assert line["prediction_by_rule"]["continuation"] == "ABC"[line["scores"].index(max(line["scores"]))]
    assert run.metrics["a"]["n"] == 3 and run.metrics["b"]["n"] == 2
    assert run.metrics["a"]["rule"] == run.metrics["b"]["rule"] == "perplexity"
    for task, rules in (
        ("a", ("perplexity", "total", "per_character")),
        ("b", ("perplexity", "continuation", "continuation_per_character")),
    ):
        task_lines = [x for x in lines if x["variant"] == task]
        assert set(run.metrics[task]["rules"]) == set(rules)  # JSONB keeps no key order
        for rule in rules:
            assert run.metrics[task]["rules"][rule]["correct"] == sum(
                x["prediction_by_rule"][rule] == x["gold"] for x in task_lines
            )
        assert run.metrics[task]["correct"] == run.metrics[task]["rules"]["perplexity"]["correct"]
    for line in (x for x in lines if x["variant"] == "b"):  # per character: lm-eval's acc_norm
        per_char = [s / len(o) for s, o in zip(line["scores"], items[line["id"]].options, strict=True)]
        assert line["prediction_norm"] == "ABC"[per_char.index(max(per_char))]
    for task in ("a", "b"):
        norm = run.metrics[task]["length_normalised"]
        task_lines = [x for x in lines if x["variant"] == task]
        assert norm["correct"] == sum(x["prediction_norm"] == x["gold"] for x in task_lines)
        assert norm["n"] == len(task_lines)
    client.force_login(researcher)
    page = client.get(reverse("evaluation:run-detail", args=[run.pk])).content.decode()
    norm_b = run.metrics["b"]["length_normalised"]
    # every rule beside the headline, the per-character one (lm-eval's acc_norm) among them
    assert "Subtask B accuracy by perplexity (as Wang et al. 2019 and the task proposal score)" in page
    assert f"continuation per character {norm_b['accuracy']:.4f}" in page
    assert run.metrics["c"]["computed"] is False and "generated explanations" in run.metrics["c"]["reason"]
    assert run.predictions_file is not None
    assert (tmp_path / "r").exists() and (run.predictions_file.parent / "subtaskB_answers.csv").exists()


def test_masked_lm_method_on_a_causal_model_fails_the_run_with_the_reason(tmp_path, tiny_causal):
    run = evaluation_run_create(
        release=str(write_wsc_release(tmp_path / "r")), method="pll", model_path=str(tiny_causal)
    )
    with pytest.raises(EvaluationError, match="needs a masked language model"):
        evaluation_run(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED


def test_mean_hidden_states_ignore_padding_and_the_start_token(tiny_causal):
    import torch

    from evaluation.lm.features import mean_hidden_states
    from evaluation.lm.modeling import load_model

    loaded = load_model(tiny_causal)
    short, long = "the trophy", "the trophy doesn't fit into the brown suitcase"
    batched = mean_hidden_states(loaded, [long, short], batch_size=2)
    alone = mean_hidden_states(loaded, [short], batch_size=1)
    assert batched.shape == (2, 16)
    assert batched[1] == pytest.approx(alone[0], abs=1e-5)
    ids = torch.tensor([[loaded.start_token_id, *loaded.encode(short)]])
    with torch.inference_mode():
        hidden = loaded.model(input_ids=ids, output_hidden_states=True).hidden_states[-1][0, 1:]
    assert alone[0] == pytest.approx(hidden.mean(0).numpy(), abs=1e-5)


def test_winowhy_cross_validation_runs_on_model_features_by_question_and_by_reason(tmp_path, tiny_causal):
    from tests.evaluation.factories import _write

    rows = []
    for q in range(6):
        for k, base in enumerate(WINOWHY_ROWS):
            rows.append({**base, "id": f"{q}.{k}", "schema_id": str(q), "knowledge_types": ["Object"]})
    release = _write(tmp_path / "r", "winowhy-six", "1.0.0", "winowhy", {"winowhy.jsonl": rows})
    run = evaluation_run(
        run=evaluation_run_create(release=str(release), method="full", model_path=str(tiny_causal))
    )
    cv = run.metrics["cross_validation"]
    assert cv["computed"] is True
    assert "feed-forward" in cv["classifier"] and "logistic" in cv["logistic"]["classifier"]
    for result in (cv, cv["logistic"]):
        for split in ("by_question", "by_reason"):
            assert result[split]["n"] == 36 and len(result[split]["fold_accuracies"]) == 5
            assert 0.0 <= result[split]["accuracy"] <= 1.0
    assert cv["by_question"]["classifier"] == "feedforward"
    assert cv["logistic"]["by_reason"]["classifier"] == "logistic"


@pytest.fixture(scope="module")
def tiny_masked_folder(tmp_path_factory):
    from tests.evaluation.tiny_models import build_tiny_masked  # the model side's builder

    return build_tiny_masked(tmp_path_factory.mktemp("tiny-bert"))


def test_masked_lm_pseudo_log_likelihood_runs_through_wsc_winowhy_and_comve(tmp_path, tiny_masked_folder):
    wsc = evaluation_run(
        run=evaluation_run_create(
            release=str(write_wsc_release(tmp_path / "wsc")), method="pll", model_path=str(tiny_masked_folder)
        )
    )
    assert wsc.model_identity["kind"] == "masked"
    for line in _lines(wsc):
        assert line["prediction"] == (1 if line["scores"][1] > line["scores"][0] else 0)
    why = evaluation_run(
        run=evaluation_run_create(
            release=str(write_winowhy_release(tmp_path / "why")),
            method="pll",
            model_path=str(tiny_masked_folder),
        )
    )
    assert why.metrics["best_threshold"]["n"] == 6
    comve = evaluation_run(
        run=evaluation_run_create(
            release=str(write_comve_release(tmp_path / "comve")),
            method="pll",
            model_path=str(tiny_masked_folder),
        )
    )
    assert comve.metrics["a"]["n"] == 3 and comve.metrics["b"]["n"] == 2


def test_comve_c_explanations_generated_by_a_causal_lm_are_scored_with_bleu(tmp_path, tiny_causal):
    import csv

    run = evaluation_run(
        run=evaluation_run_create(
            release=str(write_comve_release(tmp_path / "r")),
            method="full",
            model_path=str(tiny_causal),
            generate_explanations=True,
        )
    )
    c = run.metrics["c"]
    assert c["computed"] is True and c["n"] == 2 and "greedy generation" in c["explanations"]
    assert run.predictions_file is not None
    rows = list(csv.reader((run.predictions_file.parent / "subtaskC_answers.csv").open(newline="")))
    assert [r[0] for r in rows] == ["1175", "452"]
    assert all("\n" not in r[1] for r in rows)
    assert c["translation_length"] == sum(len(r[1].split()) for r in rows)
    assert run.progress_done == run.progress_total == 3 + 2 + 2


def test_generated_text_is_cut_to_its_first_sentence_on_one_line():
    from evaluation.lm.generation import tidy_explanation

    assert tidy_explanation(" beds are heavy. And parks\nare big") == "beds are heavy."
    assert tidy_explanation("a\nb") == "a"
    assert tidy_explanation("  no   end  ") == "no end"


def test_the_thread_count_asked_for_is_used_and_recorded(tmp_path, tiny_causal):
    import torch

    before = torch.get_num_threads()
    release = write_wsc_release(tmp_path / "r")
    try:
        run = evaluation_run(
            run=evaluation_run_create(
                release=str(release), method="full", model_path=str(tiny_causal), threads=1
            )
        )
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    assert run.status == RunStatus.DONE
    assert run.settings["threads"] == 1 and run.model_identity["threads"] == 1
    with pytest.raises(EvaluationError, match="threads must be at least 1"):
        evaluation_run_create(release=str(release), method="full", model_path=str(tiny_causal), threads=0)


def test_the_start_token_asked_for_conditions_the_scores_and_is_recorded(tmp_path, tiny_causal):
    release = write_wsc_release(tmp_path / "r")

    def run(start_token):
        return evaluation_run(
            run=evaluation_run_create(
                release=str(release), method="full", model_path=str(tiny_causal), start_token=start_token
            )
        )

    default, eos, by_id, by_text = run(None), run("eos"), run("2"), run("</s>")
    assert (
        default.model_identity["start_token"] == "<s>"
        and default.model_identity["start_token_source"] == "bos"
    )
    assert eos.model_identity["start_token"] == "</s>" and eos.model_identity["start_token_source"] == "eos"
    assert eos.settings["start_token"] == "eos" and by_id.settings["start_token"] == 2
    assert by_id.model_identity["start_token_id"] == 2 and by_id.model_identity["start_token_source"] == "id"
    scores = {
        name: [line["scores"] for line in _lines(r)]
        for name, r in (("bos", default), ("eos", eos), ("id", by_id), ("text", by_text))
    }
    assert (
        by_text.model_identity["start_token_id"] == 2
        and by_text.model_identity["start_token_source"] == "token"
    )
    assert scores["eos"] == scores["id"] == scores["text"]  # the same token, asked for three ways
    assert scores["eos"] != scores["bos"]  # another context gives other log-probabilities
    with pytest.raises(EvaluationError, match="start token 'nowhere' is not a token of this tokenizer"):
        run("nowhere")  # known only when the model loads: the run fails with the reason
    failed = EvaluationRun.objects.order_by("-pk").first()
    assert failed is not None and failed.status == RunStatus.FAILED
    with pytest.raises(EvaluationError, match="start token must be bos, eos, a token id or a token's text"):
        run("two words")
    with pytest.raises(EvaluationError, match="a start token applies to a model's methods"):
        evaluation_run_create(release=str(release), method="majority", start_token="eos")


def test_a_run_normalized_as_lm_eval_records_it_and_scores_alike(tmp_path, tiny_causal):
    """`--normalization lm-eval` reaches the model (its settings, kept as the run's model
    identity) and gives the exact normalization's scores to float32 rounding on a tiny
    vocabulary; an unknown normalization is refused before anything is stored."""
    release = write_wsc_release(tmp_path / "r")
    runs = {
        name: evaluation_run(
            run=evaluation_run_create(
                release=str(release),
                method="partial",
                model_path=str(tiny_causal),
                normalization=name,
                out_dir=str(tmp_path / name),
            )
        )
        for name in ("exact", "lm-eval")
    }
    assert runs["lm-eval"].settings["normalization"] == "lm-eval"
    assert "normalization" not in runs["exact"].settings
    assert {n: r.model_identity["normalization"] for n, r in runs.items()} == {
        "exact": "exact",
        "lm-eval": "lm-eval",
    }
    for a, b in zip(_lines(runs["exact"]), _lines(runs["lm-eval"]), strict=True):
        assert a["scores"] == pytest.approx(b["scores"], abs=1e-5)
        assert a["prediction"] == b["prediction"]
    before = EvaluationRun.objects.count()
    with pytest.raises(EvaluationError, match="normalization 'softmax': one of exact, lm-eval"):
        evaluation_run_create(
            release=str(release), method="partial", model_path=str(tiny_causal), normalization="softmax"
        )
    with pytest.raises(EvaluationError, match="the lm-eval normalization applies to a causal LM's methods"):
        evaluation_run_create(release=str(release), method="majority", normalization="lm-eval")
    assert EvaluationRun.objects.count() == before

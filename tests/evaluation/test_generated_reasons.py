"""Candidate reasons written by a causal LM, as WinoWhy's `generated` ones (issue 13,
"Model-generated candidates"): the prompt of Zhang et al. (section 3.1, Table 2), the k
best of a beam search, empty and duplicate outputs dropped and counted, the rest stored as
reasons of origin `generated` whose batch names the model and the decoding."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from datasets.models import ImportBatch, Reason
from datasets.services import generated_reasons_add
from evaluation.lm.generation import generate_reasons, keep_reasons, reason_prompt
from tests.evaluation.tiny_models import build_tiny_causal
from tests.releases.factories import make_schemas


def test_the_prompt_is_winowhys():
    # Zhang et al. 2020, Table 2's caption
    assert (
        reason_prompt("Bob paid for Charlie's college education. He is very grateful.", "He", "Charlie")
        == "Bob paid for Charlie's college education. He is very grateful. The 'He' refers to Charlie because"
    )


def test_empty_and_duplicate_outputs_are_dropped_and_counted():
    kept, empty, duplicate = keep_reasons(
        [" he was grateful.", "He was grateful", "", " ...", "he owes Bob. And more", "Bob paid."],
        existing=["Bob paid"],
    )
    assert kept == ["he was grateful.", "he owes Bob."]  # cut at the first sentence end
    assert (empty, duplicate) == (2, 2)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from evaluation.lm.modeling import load_model

    return load_model(build_tiny_causal(tmp_path_factory.mktemp("gen") / "tiny"))


def test_beam_search_gives_k_outputs_per_prompt_the_same_each_time(tiny):
    prompts = [reason_prompt("The cat sat on the mat because it was tired.", "it", "the cat"), "A dog ran"]
    first = generate_reasons(tiny, prompts, k=3, num_beams=4, max_new_tokens=6, batch_size=2)
    assert [len(o) for o in first] == [3, 3]
    alone = generate_reasons(tiny, prompts[:1], k=3, num_beams=4, max_new_tokens=6)
    assert alone[0] == first[0]  # batching and padding change nothing
    assert generate_reasons(tiny, prompts, k=3, num_beams=4, max_new_tokens=6) == first
    with pytest.raises(ValueError, match="between 1 and the number of beams"):
        generate_reasons(tiny, prompts, k=5, num_beams=4)


@pytest.mark.django_db
def test_stored_reasons_are_generated_numbered_after_the_last_and_never_twice(curator):
    schemas = make_schemas(2, collection="mine")
    Reason.objects.create(
        schema=schemas[0],
        position=4,
        text="it is big",
        origin="human",
        source_file="f",
        source_row=1,
        file_checksum="x",
    )
    model = {"name": "tiny", "sha256": "ab" * 32}
    settings = {"k": 2, "num_beams": 5, "decoding": "beam search"}
    stored = generated_reasons_add(
        collection="mine",
        reasons={"0": ["it is big", "it is large."], "1": ["x."]},
        model=model,
        settings=settings,
        user=curator,
    )
    assert stored.created == 2 and stored.per_schema == {"0": 1, "1": 1}
    new = Reason.objects.get(schema=schemas[0], text="it is large.")
    assert (new.origin, new.position, new.source_file, new.source_row) == ("generated", 5, "tiny", 2)
    batch = ImportBatch.objects.get(format="generated")
    assert batch.options["model"] == model and batch.options["num_beams"] == 5 and batch.created_by == curator
    again = generated_reasons_add(
        collection="mine", reasons={"0": ["it is large."], "1": ["x."]}, model=model, settings=settings
    )
    assert again.created == 0 and Reason.objects.count() == 3


@pytest.mark.django_db
def test_the_command_generates_and_stores_for_a_registry_model(settings, tmp_path):
    folder = tmp_path / "models"
    build_tiny_causal(folder / "tiny-causal")
    settings.WINNOW_MODELS_DIR = folder
    make_schemas(3, collection="mine")
    from io import StringIO

    def generate(*extra: str) -> str:
        out = StringIO()
        args = ["--collection", "mine", "--model", "tiny-causal", "--k", "2", "--max-new-tokens", "5"]
        call_command("generate_reasons", *args, *extra, stdout=out, stderr=StringIO())
        return out.getvalue()

    said = generate("--dry-run")
    assert "3 questions, 6 outputs" in said and "dry run: nothing stored" in said
    assert Reason.objects.count() == 0
    said = generate()
    kept = int(said.split(" kept")[0].rsplit(" ", 1)[1])
    assert Reason.objects.filter(origin="generated").count() == kept
    batch = ImportBatch.objects.get(format="generated")
    assert batch.options["model"]["name"] == "tiny-causal" and len(batch.options["model"]["sha256"]) == 64
    with pytest.raises(CommandError, match="no model 'nope' in the registry"):
        call_command("generate_reasons", "--collection", "mine", "--model", "nope")


def test_the_docs_quote_the_stored_run():
    import json
    import re

    from django.conf import settings

    root = settings.BASE_DIR
    stored = json.loads((root / "docs/generated-reasons/smollm2-wsc273.json").read_text(encoding="utf-8"))
    text = (root / "docs/pipelines.md").read_text(encoding="utf-8")
    for name, texts in [
        ("table-2", stored["table_2"]),
        ("first-question", stored["questions_detail"][0]["kept"]),
    ]:
        block = re.search(
            rf"<!-- generated-reasons:{name} -->\n(.*?)\n<!-- /generated-reasons:{name} -->", text, re.S
        )
        assert block is not None, name
        assert block.group(1).splitlines() == [f"- {t}" for t in texts], name
    assert stored["questions"] == len(stored["questions_detail"]) == 273
    outputs, empty, duplicate = stored["outputs"], stored["empty"], stored["duplicate"]
    assert outputs == sum(len(q["outputs"]) for q in stored["questions_detail"])
    assert outputs - empty - duplicate == sum(len(q["kept"]) for q in stored["questions_detail"])
    said = " ".join(text.split())
    for figure in (
        f"in {stored['seconds']} s",
        f"loaded in {stored['load_seconds']} s",
        f"took {stored['reference_seconds']} s for {stored['reference_questions']} questions",
        f"Of the {outputs:,} outputs, {empty} were empty and {duplicate} duplicates ({duplicate / outputs:.1%})",
        f"so {outputs - empty - duplicate:,} candidate reasons",
    ):
        assert figure in said, figure


def _reasons_one_call_each(loaded, prompts, *, k, num_beams, max_new_tokens):
    """The reference: each prompt alone, no padding, ``generate`` given the stop strings
    and the tokenizer itself (it builds its stop-string criterion at every call), as
    ``generate_reasons`` did before it built that criterion once."""
    import torch

    from evaluation.lm.generation import tidy_explanation

    pad = loaded.tokenizer.pad_token_id
    pad = pad if pad is not None else loaded.tokenizer.eos_token_id
    out = []
    with torch.inference_mode():
        for prompt in prompts:
            ids = torch.tensor([[loaded.start_token_id, *loaded.encode(prompt)]])
            generated = loaded.model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=max_new_tokens,
                num_return_sequences=k,
                pad_token_id=pad,
                do_sample=False,
                num_beams=num_beams,
                stop_strings=[".", "\n"],
                tokenizer=loaded.tokenizer,
            )
            texts = loaded.tokenizer.batch_decode(generated[:, ids.shape[1] :], skip_special_tokens=True)
            out.append([tidy_explanation(t) for t in texts])
    return out


def test_batches_of_any_size_give_what_one_generate_call_a_prompt_gives(tiny):
    # the stop-string criterion built once and shared, batches of 1, 3 and 16 prompts with
    # left padding: the same texts as a plain `generate(stop_strings=...)` call per prompt
    prompts = [
        reason_prompt(sentence, pronoun, answer)
        for sentence, pronoun, answer in [
            ("The cat sat on the mat because it was tired.", "it", "the cat"),
            ("The trophy does not fit in the suitcase because it is too big.", "it", "the trophy"),
            ("Bob paid for Charlie's college education. He is very grateful.", "He", "Charlie"),
            ("The city councilmen refused the demonstrators a permit because they feared violence.", "they", "the councilmen"),
            ("Joan made sure to thank Susan for all the help she had given.", "she", "Susan"),
            ("A dog ran.", "it", "the dog"),
        ]
    ]  # fmt: skip
    reference = _reasons_one_call_each(tiny, prompts, k=3, num_beams=4, max_new_tokens=12)
    stopped = [t for texts in reference for t in texts]
    assert any(t.endswith(".") for t in stopped)  # some beams did end at a stop string
    for batch_size in (1, 3, 16):
        assert (
            generate_reasons(tiny, prompts, k=3, num_beams=4, max_new_tokens=12, batch_size=batch_size)
            == reference
        )

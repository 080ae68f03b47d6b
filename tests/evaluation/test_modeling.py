"""load_model: local Hugging Face folders (causal and masked) and GGUF files, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from evaluation.lm.modeling import ModelLoadError, load_model, tokenizer_adding_start_token


def test_a_causal_folder_loads_with_its_start_token_recorded(tiny_causal) -> None:
    assert tiny_causal.kind == "causal"
    settings = tiny_causal.settings
    assert settings["format"] == "hf"
    assert settings["architecture"] == "LlamaForCausalLM"
    assert settings["start_token"] == "<s>" and settings["start_token_source"] == "bos"
    assert settings["start_token_id"] == tiny_causal.tokenizer.convert_tokens_to_ids("<s>")
    assert settings["tokenizer_adds_start_token"] is False
    assert settings["dtype"] == "float32" and settings["threads"] == 1
    assert len(settings["sha256"]) == 64
    assert json.loads(json.dumps(settings)) == settings
    assert not tiny_causal.model.training


def test_a_masked_folder_loads_as_a_masked_lm(tiny_masked) -> None:
    assert tiny_masked.kind == "masked"
    assert tiny_masked.start_token_id is None
    assert tiny_masked.settings["architecture"] == "BertForMaskedLM"
    assert tiny_masked.settings["tokenizer_adds_start_token"] is True  # [CLS]


def test_start_token_can_be_chosen_and_threads_are_set(tiny_causal_path: Path) -> None:
    loaded = load_model(tiny_causal_path, threads=1, start_token="eos")
    assert loaded.settings["start_token"] == "<|endoftext|>"
    loaded = load_model(tiny_causal_path, threads=2, start_token=2)
    assert loaded.start_token_id == 2 and loaded.settings["start_token_source"] == "id"
    assert torch.get_num_threads() == 2
    torch.set_num_threads(1)
    with pytest.raises(ModelLoadError, match="not in the vocabulary"):
        load_model(tiny_causal_path, threads=1, start_token=10**6)


def test_the_same_folder_gives_the_same_fingerprint(tiny_causal_path: Path, tiny_causal) -> None:
    again = load_model(tiny_causal_path, threads=1)
    assert again.settings["sha256"] == tiny_causal.settings["sha256"]


def test_a_missing_path_is_refused_by_name(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(
        ModelLoadError, match=r"no-such-model: no such file or folder \(models are loaded from local"
    ):
        load_model(missing)


def test_a_file_that_is_not_gguf_is_refused_whatever_its_name(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"not a model at all")
    with pytest.raises(ModelLoadError, match="not a GGUF file"):
        load_model(fake)


def test_a_folder_without_config_is_refused(tmp_path: Path) -> None:
    (tmp_path / "weights.bin").write_bytes(b"\0" * 10)
    with pytest.raises(ModelLoadError, match=r"not a Hugging Face model folder \(no config.json\)"):
        load_model(tmp_path)


def test_a_folder_of_an_unknown_kind_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["Nothing"], "model_type": "nothing"}))
    with pytest.raises(ModelLoadError, match=str(tmp_path)):
        load_model(tmp_path)


def test_the_hflm_tokenizer_copy_adds_the_start_token(tiny_causal) -> None:
    tok = tokenizer_adding_start_token(tiny_causal)
    text = "The fish ate the worm."
    assert tok.encode(text) == [tiny_causal.start_token_id, *tiny_causal.encode(text)]
    assert tok.encode(text, add_special_tokens=False) == tiny_causal.encode(text)
    assert tiny_causal.tokenizer.encode(text) == tiny_causal.encode(text)  # the original is untouched

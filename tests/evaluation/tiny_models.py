"""Tiny random language models built in the test, saved to a temporary folder.

Builders (plain functions, usable from any test or helper):
    build_tiny_causal(folder, arch="llama"|"gpt2", seed=0) -> Path
    build_tiny_masked(folder, seed=0) -> Path
Fixtures (session scoped; import them into a test module, or into a conftest.py):
    tiny_causal_path, tiny_gpt2_path, tiny_masked_path     -> Path of the saved folder
    tiny_causal, tiny_gpt2, tiny_masked                    -> evaluation.lm.modeling.LoadedModel

The tokenizers are real ones trained on a few sentences (byte-level BPE for the causal
models, as GPT-2 and SmolLM2 use; WordPiece for the masked model, as BERT), so words
split into several tokens and spaces attach to the following word.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

SENTENCES = [
    "The city councilmen refused the demonstrators a permit because they feared violence.",
    "The city councilmen refused the demonstrators a permit because they advocated violence.",
    "The trophy doesn't fit into the brown suitcase because it is too large.",
    "The trophy doesn't fit into the brown suitcase because it is too small.",
    "Joan made sure to thank Susan for all the help she had given.",
    "Paul tried to call George on the phone, but he wasn't successful.",
    "The man couldn't lift his son because he was so weak.",
    "There is a gap in the wall. You can see the garden through it.",
    "Adam can't leave work here until Bob arrives to replace him.",
    "The sack of potatoes had been placed below the bag of flour, so it had to be moved first.",
    "Jim comforted Kevin because he was so upset.",
    "The fish ate the worm. It was tasty.",
]


def _train_bpe(special: list[str], vocab_size: int = 400, sentences: list[str] | None = None):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator((sentences or SENTENCES) * 3, trainer=trainer)
    return tok


def build_tiny_causal(
    folder: Path,
    *,
    arch: str = "llama",
    seed: int = 0,
    sentences: list[str] | None = None,
    hidden_size: int = 32,
    spread: float | None = 0.3,
) -> Path:
    """A 2-layer random causal LM with a byte-level BPE tokenizer trained on ``sentences``
    (default SENTENCES).

    llama: BOS "<s>" (id 1) that the tokenizer does not add itself, like SmolLM2's;
    gpt2: only "<|endoftext|>" (id 0) as EOS and no BOS, so the start token falls back to EOS.
    ``spread``: the standard deviation the weight matrices are drawn with (None keeps the
    library's initialisation).
    """
    from transformers import (
        GPT2Config,
        GPT2LMHeadModel,
        LlamaConfig,
        LlamaForCausalLM,
        PretrainedConfig,
        PreTrainedModel,
        PreTrainedTokenizerFast,
    )

    config: PretrainedConfig
    model: PreTrainedModel
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    if arch == "llama":
        raw = _train_bpe(["<|endoftext|>", "<s>", "<pad>"], sentences=sentences)
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=raw, bos_token="<s>", eos_token="<|endoftext|>", pad_token="<pad>"
        )
        config = LlamaConfig(
            vocab_size=raw.get_vocab_size(),
            hidden_size=hidden_size,
            intermediate_size=2 * hidden_size,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=128,
            bos_token_id=1,
            eos_token_id=0,
            pad_token_id=2,
            tie_word_embeddings=False,
        )
        model = LlamaForCausalLM(config)
    elif arch == "gpt2":
        raw = _train_bpe(["<|endoftext|>"], sentences=sentences)
        tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|endoftext|>")
        config = GPT2Config(
            vocab_size=raw.get_vocab_size(),
            n_embd=hidden_size,
            n_layer=2,
            n_head=4,
            n_positions=128,
            bos_token_id=0,
            eos_token_id=0,
        )
        model = GPT2LMHeadModel(config)
    else:
        raise ValueError(f"unknown architecture {arch!r}")
    # Larger random weights than the default init, so the distributions are far from
    # uniform and differences between candidates are visible.
    if spread is not None:
        with torch.no_grad():
            for p in model.parameters():
                if p.dim() > 1:
                    p.normal_(0.0, spread)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_tiny_masked(folder: Path, *, seed: int = 0) -> Path:
    """A 2-layer random BERT masked LM with a trained WordPiece tokenizer ([CLS] x [SEP])."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    raw = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    raw.normalizer = normalizers.BertNormalizer(lowercase=True)
    raw.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    raw.train_from_iterator(
        SENTENCES * 3,
        trainer=trainers.WordPieceTrainer(vocab_size=200, special_tokens=special, show_progress=False),
    )
    raw.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", raw.token_to_id("[CLS]")), ("[SEP]", raw.token_to_id("[SEP]"))],
    )
    from tokenizers import decoders

    raw.decoder = decoders.WordPiece()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    config = BertConfig(
        vocab_size=raw.get_vocab_size(),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=128,
        pad_token_id=0,
    )
    model = BertForMaskedLM(config)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.3)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_causal_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_causal(tmp_path_factory.mktemp("tiny-llama"), arch="llama")


@pytest.fixture(scope="session")
def tiny_gpt2_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_causal(tmp_path_factory.mktemp("tiny-gpt2"), arch="gpt2")


@pytest.fixture(scope="session")
def tiny_masked_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_masked(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def tiny_causal(tiny_causal_path: Path):
    from evaluation.lm.modeling import load_model

    return load_model(tiny_causal_path, threads=1)


@pytest.fixture(scope="session")
def tiny_gpt2(tiny_gpt2_path: Path):
    from evaluation.lm.modeling import load_model

    return load_model(tiny_gpt2_path, threads=1)


@pytest.fixture(scope="session")
def tiny_masked(tiny_masked_path: Path):
    from evaluation.lm.modeling import load_model

    return load_model(tiny_masked_path, threads=1)

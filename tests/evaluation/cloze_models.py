"""Tiny random masked and causal models for the cloze tests, built in a temp folder.

The masked model has a word-level vocabulary (whole words, as the cloze replacements
need); the causal one is tiny_models.py's, trained on this corpus.
"""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "He poured milk on his cereal.",
    "He poured orange juice on his cereal.",
    "He drinks milk.",
    "He drinks apple.",
    "A niece is a person.",
    "A giraffe is a person.",
    "I like to ride my bike",
    "I like to ride my chocolate",
    "The fish swam in the ocean.",
    "The fish swam in the desert.",
    "She drank water and tea with bread and cheese in the garden at home.",
]


def _words() -> list[str]:
    import re

    words: set[str] = set()
    for line in CORPUS:
        words.update(re.findall(r"[A-Za-z]+|[^\sA-Za-z]", line))
    return sorted(words)


def build_masked(folder: Path, seed: int = 0) -> Path:
    """A 2-layer BERT masked LM with a word-level tokenizer over CORPUS."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {w: i for i, w in enumerate(specials + _words())}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()]
    )
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        pad_token_id=0,
    )
    model = BertForMaskedLM(config)
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def build_causal(folder: Path, seed: int = 0) -> Path:
    """A 2-layer Llama causal LM with a byte-level BPE tokenizer trained on CORPUS (words
    start with a space, as SmolLM2's); the builder of tiny_models.py with this corpus."""
    from tests.evaluation.tiny_models import build_tiny_causal

    return build_tiny_causal(folder, seed=seed, sentences=CORPUS, hidden_size=16, spread=None)

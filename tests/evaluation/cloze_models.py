"""Tiny random masked and causal models for the cloze tests, built in a temp folder.

(The evaluation issue ships tests/evaluation/tiny_models.py; these few lines stay here
until the branches are merged.)
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
    """A 2-layer Llama causal LM with a byte-level BPE tokenizer (words start with a space, as SmolLM2's)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>", "<s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(CORPUS * 5, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="<|endoftext|>")
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
        bos_token_id=1,
        eos_token_id=0,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder

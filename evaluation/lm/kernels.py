"""Native fused kernels (kernels.cpp) for the lean Llama forward and the output layer. No Django.

    from evaluation.lm import kernels
    kernels.build()          # compile for this machine, once (about a minute), into kernel_dir()
    native = kernels.get()   # the loaded module, or None: the torch operations run instead

Seven float32 passes that torch runs as two or more operations each: the RMS norm, the
rotary positions of the queries and keys, the SiLU-gated product, the attention of a
packed prefix-tree row over each query's own path (`tree_attention`; torch: a gather of
the keys and SDPA over pieces of the row), one vocabulary block of the output layer's
streaming log-sum-exp, each target's entry and argmax test in lm-eval's normalised rows
(`target_rank`), and lm-eval's normalization at the targets alone, its sum added in
torch's order (`lm_eval_targets`) (docs/scoring.md, "Exactness and speed", points 7 and
8). They compute the same functions as the torch path, to float32 rounding (the order of
a row's additions and glibc's vector `expf` instead of torch's differ), on torch's own
thread pool. And MKL's packed matrix products, from torch's own MKL (`pack_weight`,
`packed_mm`; `packed_available()` is false with a torch that has none): the same numbers
as torch's products from a few hundred rows, without repacking the weight at every call
(point 8; evaluation/lm/scorers/prepacked.py keeps the packed weights).

The module is compiled with g++ for this machine's CPU (`-march=native`) by torch's
extension builder (which needs `ninja`, the Python headers and g++), into
``kernel_dir()/<key>/``, where the key is a hash of the source, the flags, the torch and
Python versions and the CPU's model and flags: a new torch, a changed source or another
CPU gets a build of its own, and a folder shared between machines never hands one a
module built for another. `get` never compiles: a run must not wait a minute for a
compiler, so a machine builds the kernels once at set-up (`manage.py models
--build-kernels`, run by `./winnow up` and `./winnow test`) and every process then loads
the built module in milliseconds. Where none is built, or `configure(mode="off")` /
WINNOW_NATIVE_KERNELS=off, the torch operations run: the same numbers to float32 rounding,
a few percent slower. A run records which path it took (`status`, in the model settings).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import platform
import sys
import threading
import time
from pathlib import Path
from typing import Any

from core.errors import WinnowError

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("kernels.cpp")
#: Compiler flags: no -ffast-math (it would change every operation's rounding and, linked
#: into a shared library by gcc 12, flush the whole process's subnormal numbers to zero).
CFLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fopenmp")
#: glibc's vector math library, for the vector `expf`.
LDFLAGS = ("-lmvec",)
MODES = ("auto", "off")
#: A build's lock file older than this was left by a build that was killed.
STALE_LOCK_SECONDS = 600
NATIVE, TORCH = "native", "torch"


class KernelBuildError(WinnowError, RuntimeError):
    """The native kernels could not be compiled or loaded; the message says why."""


_lock = threading.Lock()
_config: dict[str, Any] = {"dir": None, "mode": None}
_module: Any = None
_failed: set[str] = set()  # module files that could not be loaded (the log says why)


_UNSET: Any = object()


def configure(directory: str | Path | None = _UNSET, mode: str | None = _UNSET) -> None:
    """Where the built kernels live (None: WINNOW_KERNEL_DIR, else var/kernels of this
    checkout) and whether they are used (``auto``: when built for this machine; ``off``:
    never; None: WINNOW_NATIVE_KERNELS, else ``auto``). What is not given stays. A new
    folder forgets the module loaded from the old one."""
    global _module
    if mode is not _UNSET:
        if mode is not None and mode not in MODES:
            raise ValueError(f"kernel mode {mode!r}: one of {', '.join(MODES)} expected")
        _config["mode"] = mode
    if directory is not _UNSET:
        with _lock:
            _config["dir"] = Path(directory) if directory else None
            _module = None
            _failed.clear()


def mode() -> str:
    chosen = _config["mode"] or os.environ.get("WINNOW_NATIVE_KERNELS", "auto") or "auto"
    if chosen not in MODES:
        raise ValueError(f"WINNOW_NATIVE_KERNELS={chosen!r}: one of {', '.join(MODES)} expected")
    return chosen


def kernel_dir() -> Path:
    configured = _config["dir"] or os.environ.get("WINNOW_KERNEL_DIR")
    return Path(configured) if configured else Path(__file__).resolve().parents[2] / "var" / "kernels"


@functools.cache
def _cpu() -> str:
    """The CPU's model name and feature flags (what -march=native compiles for)."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    wanted = [line for line in info.splitlines() if line.startswith(("model name", "flags", "Features"))]
    return "\n".join(sorted(set(wanted))) or platform.machine()


def cpu_name() -> str:
    """The processor's model name as the kernel reports it (from `_cpu`), or what
    `platform` says where it reports none."""
    for line in _cpu().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def key() -> str:
    """The build's identity: source, flags, torch and Python versions, CPU (worked out once
    a process for each set of them: `get` asks at every forward call while none is built)."""
    return _key(CFLAGS + LDFLAGS, _cpu())


@functools.cache
def _key(flags: tuple[str, ...], cpu: str) -> str:
    import torch

    digest = hashlib.sha256()
    for part in (SOURCE.read_bytes(), " ".join(flags).encode(), torch.__version__.encode()):
        digest.update(part)
        digest.update(b"\0")
    digest.update(f"{sys.version}\0{cpu}".encode())
    return digest.hexdigest()[:16]


def _name(build_key: str) -> str:
    return f"winnow_kernels_{build_key}"


def module_path(directory: Path | None = None) -> Path:
    """The built module's file for this machine (it may not exist yet)."""
    build_key = key()
    return (directory or kernel_dir()) / build_key / f"{_name(build_key)}.so"


def build(directory: str | Path | None = None, *, verbose: bool = False) -> Path:
    """Compile the kernels for this machine (nothing to do when already built) and load them.

    Returns the module's file; raises KernelBuildError with the compiler's complaint when
    g++, ninja or the Python headers are missing or the compilation fails."""
    global _module
    import torch  # noqa: F401  (the extension builder needs it imported)
    from torch.utils import cpp_extension

    root = Path(directory) if directory else kernel_dir()
    default = root == kernel_dir()
    built = module_path(root)
    folder = built.parent
    if default and built.is_file() and get() is not None:
        return built  # built before (the key names the source, so it is this one)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KernelBuildError(f"native kernels: cannot create {folder}: {exc}") from exc
    # torch's builder waits for as long as its lock file exists: one left by a build that
    # was killed would make every later build wait for ever
    lock = folder / "lock"
    with contextlib.suppress(OSError):
        if time.time() - lock.stat().st_mtime > STALE_LOCK_SECONDS:
            log.warning("native kernels: removing %s, left by a build that did not finish", lock)
            lock.unlink()
    _ninja_on_path()
    try:
        module = cpp_extension.load(
            built.stem,
            sources=[str(SOURCE)],
            extra_cflags=list(CFLAGS),
            extra_ldflags=list(LDFLAGS),
            build_directory=str(folder),
            verbose=verbose,
        )
    except (RuntimeError, OSError, ImportError) as exc:
        detail = str(exc).strip().splitlines()
        tail = "\n".join(detail[-12:])
        raise KernelBuildError(
            f"native kernels: could not build {SOURCE.name} in {folder} (needs g++, ninja and "
            f"Python's headers; the torch operations run instead):\n{tail}"
        ) from exc
    with _lock:
        if default:
            _module = module
        _failed.clear()
    return built


def _ninja_on_path() -> None:
    """torch's extension builder runs ``ninja`` from PATH: put the pinned one of the
    ``ninja`` package (requirements.txt) first, which is not on PATH when the virtual
    environment's Python is run without activating it (as ./winnow does)."""
    try:
        import ninja
    except ImportError:
        return  # the builder's own message says that ninja is missing
    folder = str(getattr(ninja, "BIN_DIR", ""))
    path = os.environ.get("PATH", "")
    if folder and path.split(os.pathsep)[:1] != [folder]:
        os.environ["PATH"] = folder + os.pathsep + path if path else folder


def get() -> Any:
    """The loaded kernels, or None (not built for this machine, or switched off): callers
    then run the torch operations. Never compiles."""
    global _module
    if _module is not None:
        return _module if mode() == "auto" else None
    if mode() == "off":
        return None
    path = module_path()
    if not path.is_file() or str(path) in _failed:
        return None
    with _lock:
        if _module is None:
            try:
                import torch  # noqa: F401  (the module links against it)

                loader = importlib.machinery.ExtensionFileLoader(path.stem, str(path))
                spec = importlib.util.spec_from_file_location(path.stem, str(path), loader=loader)
                if spec is None:
                    raise ImportError(f"no module spec for {path}")
                module = importlib.util.module_from_spec(spec)
                loader.exec_module(module)
            except (ImportError, OSError) as exc:
                _failed.add(str(path))
                log.warning(
                    "native kernels at %s could not be loaded (%s); the torch operations run", path, exc
                )
                return None
            _module = module
    return _module


def status() -> str:
    """``native`` when `get` gives the kernels, else ``torch``: what a run records."""
    return NATIVE if get() is not None else TORCH

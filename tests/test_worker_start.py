"""A worker of the model queues imports the model libraries when it starts (issue 31: a
new worker's first run within 15 s), and only such a worker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from config import celery as celery_config
from evaluation.lm import modeling

REPO = Path(__file__).resolve().parents[1]


def _worker(queues: dict[str, int], consume_from: dict[str, int] | None) -> SimpleNamespace:
    class Queues(dict):
        pass

    selected = Queues(queues)
    selected.consume_from = consume_from  # type: ignore[attr-defined]
    return SimpleNamespace(app=SimpleNamespace(amqp=SimpleNamespace(queues=selected)))


ALL = {"default": 1, "models": 1, "verdicts": 1}


@pytest.fixture
def imports_made(monkeypatch) -> list[int]:
    """The calls of import_model_libraries (recorded, not made)."""
    calls: list[int] = []

    def record() -> float:
        calls.append(1)
        return 0.0

    monkeypatch.setattr(modeling, "import_model_libraries", record)
    return calls


@pytest.mark.parametrize(
    ("consume_from", "imports"),
    [
        ({"default": 1}, False),
        ({"default": 1, "models": 1}, True),
        ({"verdicts": 1}, True),
        (None, True),  # no -Q: the worker serves every queue
    ],
)
def test_only_a_worker_of_a_model_queue_imports_the_model_libraries(
    consume_from, imports, imports_made, settings
) -> None:
    settings.WINNOW_IMPORT_MODEL_LIBRARIES = True
    celery_config._import_model_libraries(sender=_worker(ALL, consume_from))
    assert imports_made == ([1] if imports else [])


def test_the_setting_turns_the_import_off(imports_made, settings) -> None:
    settings.WINNOW_IMPORT_MODEL_LIBRARIES = False
    celery_config._import_model_libraries(sender=_worker(ALL, {"models": 1}))
    assert imports_made == []


def test_import_model_libraries_imports_them_in_a_new_process() -> None:
    code = (
        "import sys\n"
        "from evaluation.lm.modeling import MODEL_LIBRARIES, import_model_libraries\n"
        "before = [n for n in MODEL_LIBRARIES if n in sys.modules]\n"
        "seconds = import_model_libraries()\n"
        "after = [n for n in MODEL_LIBRARIES if n not in sys.modules]\n"
        "print(before, after, seconds > 0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300, check=True
    )
    assert done.stdout.split("\n")[-2] == "[] [] True", done.stdout + done.stderr
    assert "transformers.models.llama.modeling_llama" in modeling.MODEL_LIBRARIES

"""Whatever bytes a file holds, a parser either reads it or raises DatasetImportError:
never another exception (which would reach the curator as a server error)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datasets.importers import PARSERS, DatasetImportError
from tests.datasets import sources

FRAGMENTS = [
    sources.comve_files()["subtaskA_dev_data.csv"],
    sources.comve_files()["subtaskB_gold_answers.csv"],
    sources.comve_files()["subtaskC_gold_answers.csv"],
    sources.jsonl_text(sources.senmaking_rows()),
    __import__("json").dumps(sources.winowhy_rows()),
    __import__("json").dumps(sources.trichelair_rows()[0]),
]


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A real-looking file, cut, spliced with random bytes, or pure noise."""
    base = draw(st.sampled_from(FRAGMENTS)).encode()
    kind = draw(st.sampled_from(["cut", "splice", "noise"]))
    if kind == "cut":
        return base[: draw(st.integers(0, len(base)))]
    if kind == "splice":
        at = draw(st.integers(0, len(base)))
        return base[:at] + draw(st.binary(max_size=20)) + base[at:]
    return draw(st.binary(max_size=200))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=damaged(), fmt=st.sampled_from(sorted(PARSERS)))
def test_parsers_raise_only_dataset_import_errors(content: bytes, fmt: str):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "subtaskA_dev_data.csv"
        path.write_bytes(content)
        try:
            PARSERS[fmt]([path], {"split": "dev"} if fmt == "comve" else {})
        except DatasetImportError as error:
            assert error.message  # a message a person can read

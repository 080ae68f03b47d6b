"""Shared pieces of the audit tests: a models folder with a tiny causal LM, and small
releases of each data set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from datasets.models import ComVEItem, Schema
from releases.models import Release
from tests.evaluation.tiny_models import build_tiny_causal
from tests.releases.factories import make_reasons, published_release

AFLITE_SMALL = {"m": 8, "t": 6, "k": 4, "tau": 0.6, "target_n": 12}


@pytest.fixture(scope="session")
def audit_models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("audit-models")
    build_tiny_causal(folder / "tiny-causal")
    return folder


@pytest.fixture
def audit_registry(settings: Any, audit_models_dir: Path) -> Path:
    settings.WINNOW_MODELS_DIR = audit_models_dir
    return audit_models_dir


WORDS = (
    "trophy",
    "suitcase",
    "kettle",
    "lamp",
    "table",
    "chair",
    "river",
    "boat",
    "cloud",
    "stone",
    "bread",
    "knife",
)


def make_wsc(n: int = 24, collection: str = "wsc-audit") -> list[Schema]:
    """``n`` schemas in twin pairs, with varied words and an associative label on a few."""
    schemas = []
    for i in range(n):
        a, b = WORDS[i % len(WORDS)], WORDS[(i * 5 + 3) % len(WORDS)]
        schemas.append(
            Schema.objects.create(
                collection=collection,
                external_id=f"s{i}",
                text_before=f"The {a} did not fit in the {b} {i} because",
                pronoun="it",
                text_after="was too big." if i % 2 == 0 else "was too small.",
                candidate_a=f"the {a}",
                candidate_b=f"the {b}",
                answer="A" if i % 2 == 0 else "B",
                source="test",
                associative=i % 4 == 0,
                source_file="test/wsc.json",
                source_row=i + 1,
                file_checksum="0" * 64,
            )
        )
    for x, y in zip(schemas[::2], schemas[1::2], strict=False):
        x.twin, y.twin = y, x
        x.save()
        y.save()
    return schemas


def make_comve_items(n: int = 40, split: str = "train") -> list[ComVEItem]:
    items = []
    for i in range(n):
        a, b = WORDS[i % len(WORDS)], WORDS[(i * 7 + 1) % len(WORDS)]
        false = i % 2
        sents = [f"He put a {a} {i} into the {b}.", f"He ate the {b} {i} with a {a}."]
        items.append(
            ComVEItem.objects.create(
                dataset="comve",
                split=split,
                external_id=str(1000 + i),
                statement_0=sents[0],
                statement_1=sents[1],
                false_index=false,
                false_statement=sents[false],
                option_a="A is bigger.",
                option_b="B is grey.",
                option_c="C cannot eat.",
                correct_option="A",
                references=["It does not fit."],
                has_a=True,
                has_b=True,
                has_c=True,
                source_file="test/comve.csv",
                source_row=i + 1,
                file_checksum="2" * 64,
            )
        )
    return items


def wsc_release(captured: Any, curator: Any, n: int = 24, name: str = "wsc-audit") -> Release:
    make_wsc(n)
    return published_release(captured, user=curator, name=name, dataset="wsc", collection="wsc-audit")


def comve_release(captured: Any, curator: Any, n: int = 40, name: str = "comve-audit") -> Release:
    make_comve_items(n)
    return published_release(captured, user=curator, name=name, dataset="comve", split="train")


def winowhy_release(captured: Any, curator: Any, name: str = "winowhy-audit") -> Release:
    schemas = make_wsc(24, collection="ww-audit")
    make_reasons(schemas, per_schema=3)
    return published_release(captured, user=curator, name=name, dataset="winowhy", collection="ww-audit")

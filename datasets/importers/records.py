"""Plain records the parsers produce and the import service writes (no Django imports)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Origin:
    """Provenance of one record: file name, 1-based row, SHA-256 of the file."""

    source_file: str
    source_row: int
    file_checksum: str


@dataclass
class ReasonRecord:
    position: int
    text: str
    origin: str  # human | reverse | generated
    plausibility: float
    label: str  # positive | acceptable | negative
    source_label: str
    provenance: Origin


@dataclass
class SchemaRecord:
    external_id: str
    text_before: str
    pronoun: str
    text_after: str
    candidate_a: str
    candidate_b: str
    answer: str  # A | B
    source: str
    provenance: Origin
    reasons: list[ReasonRecord] = field(default_factory=list)
    twin_external_id: str | None = None
    knowledge_types: list[str] | None = None  # None: not given, leave as is


@dataclass
class WinoWhyData:
    schemas: list[SchemaRecord]
    twin_pairs: list[tuple[str, str]]
    categories_given: bool
    files: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


@dataclass
class ReasonRowRecord:
    """A reason of one's own for a schema already in the collection (matched by its id)."""

    schema_external_id: str
    text: str
    origin: str
    plausibility: float | None
    label: str
    knowledge_type: str
    provenance: Origin


@dataclass
class ReasonRowsData:
    reasons: list[ReasonRowRecord]
    files: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


@dataclass
class TrichelairRecord:
    index: int
    before: str
    pronoun: str
    after: str
    alternative: tuple[str, str, str] | None  # the other file's sentence, when it differs
    switched_text: str | None
    switchable: bool | None
    associative: bool | None
    file: str  # where the row is, for messages
    row: int
    candidates: tuple[str, str] | None = None  # answer0, answer1 when given
    correct: str | None = None  # correct_answer when given


@dataclass
class TrichelairData:
    rows: list[TrichelairRecord]
    files: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


@dataclass
class ComVERecord:
    external_id: str
    provenance: Origin
    statement_0: str = ""
    statement_1: str = ""
    false_index: int | None = None
    false_statement: str = ""
    false_statement_c: str = ""  # subtask C's own FalseSent, only where it differs from B's
    option_a: str = ""
    option_b: str = ""
    option_c: str = ""
    correct_option: str = ""
    references: list[str] = field(default_factory=list)
    has_a: bool = False
    has_b: bool = False
    has_c: bool = False


@dataclass
class ComVEData:
    dataset: str
    split: str
    items: list[ComVERecord]
    files: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)
    collection: str = ""  # "" for the public sets; a curator's own items have a name

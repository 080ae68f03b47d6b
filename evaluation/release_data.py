"""Read an exported release folder into the scorers' and metrics' types.

This is the ONE place that knows the release files' field names (the releases side's
``docs/formats.md``: ``manifest.json`` and ``wsc.jsonl``, ``winowhy.jsonl``,
``comve_a.jsonl``, ``comve_b.jsonl``, ``comve_c.jsonl``). Pure Python, no Django.

Bad input raises ``ReleaseDataError`` naming the file, the row (1-based line) and the
field. Files listed in the manifest are checked against its SHA-256 before reading.
"""

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import WinnowError
from core.jsonl import JsonLinesError, read_jsonl
from evaluation.lm.scorers.types import WscItem, WscText

DATASET_FILES = {
    "wsc": ("wsc.jsonl",),
    "winowhy": ("winowhy.jsonl",),
    "comve": ("comve_a.jsonl", "comve_b.jsonl", "comve_c.jsonl"),
}
# Release data set names that read as one of the kinds above.
DATASET_ALIASES = {"senmaking": "comve"}
_BRACKETED = re.compile(r"^(?P<before>[^\[\]]*)\[(?P<pronoun>[^\[\]]+)\](?P<after>[^\[\]]*)$", re.DOTALL)


class ReleaseDataError(WinnowError, ValueError):
    """A release folder or file that cannot be read; the message says where and why."""

    status = 400


@dataclass(frozen=True)
class ReleaseFolder:
    path: Path
    name: str
    version: str
    dataset: str  # wsc | winowhy | comve
    manifest: dict[str, Any]

    @property
    def identity(self) -> dict[str, Any]:
        """What a run stores about the release: name, version, data set, files and checksums."""
        files = self.manifest.get("files") or [
            {"name": n, "sha256": _sha256(self.path / n)}
            for n in DATASET_FILES[self.dataset]
            if (self.path / n).is_file()
        ]
        return {
            "name": self.name,
            "version": self.version,
            "dataset": self.dataset,
            "path": str(self.path),
            "files": [{"name": f["name"], "sha256": f.get("sha256")} for f in files],
        }


@dataclass(frozen=True)
class Written:
    """What an adversarial release says of an item written with models in the loop: its
    round, whether it fooled a model of its round and its ANLI split (``written`` None on the
    items of other releases)."""

    round: int
    fooling: bool
    split: str | None


@dataclass(frozen=True)
class WscRow:
    item: WscItem
    switchable: bool | None
    associative: bool | None
    knowledge_types: tuple[str, ...]
    written: Written | None = None


def model_text(text: str) -> str:
    """A release text as a model reads it: runs of whitespace collapsed and the ends stripped.

    Releases ship the source's texts byte for byte (a GPT-2 reason starts with a space, a
    ComVE cell may hold two spaces); models are given them normalised, as the importers
    stored them before 23 Nov 2026, so that scores do not depend on stray whitespace.
    Subtask C's false statements and references stay as shipped: BLEU is computed on them.
    """
    return " ".join(text.split())


@dataclass(frozen=True)
class ReasonRow:
    """A WinoWhy reason with the question it explains.

    ``positive``: True (positive), False (negative), None (acceptable / unlabelled; not
    used by the metrics, which follow the paper's 2,865 positive + negative reasons).
    """

    id: str
    question_id: str
    sentence: str
    pronoun: str
    answer_text: str
    text: str
    positive: bool | None
    knowledge_types: tuple[str, ...]

    @property
    def context(self) -> str:
        """The question and its answer in the reason-writing template (WinoWhy 2.1)."""
        return f"{self.sentence} '{self.pronoun}' refers to {self.answer_text} because"

    @property
    def continuation(self) -> str:
        return " " + model_text(self.text)


@dataclass(frozen=True)
class ComveA:
    id: str
    statements: tuple[str, str]
    answer: int  # index of the statement against common sense
    written: Written | None = None


@dataclass(frozen=True)
class ComveB:
    id: str
    false_sent: str
    options: tuple[str, str, str]
    answer: str  # "A" | "B" | "C"


@dataclass(frozen=True)
class ComveC:
    id: str
    false_sent: str
    references: tuple[str, ...]


@dataclass
class ComveData:
    a: list[ComveA] = field(default_factory=list)
    b: list[ComveB] = field(default_factory=list)
    c: list[ComveC] = field(default_factory=list)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def open_release_folder(path: str | Path) -> ReleaseFolder:
    """A folder of exported release files; name, version and data set from manifest.json.

    Without a manifest the data set is told from the files present and the folder name
    is used as name (version "unversioned").
    """
    folder = Path(path)
    if not folder.is_dir():
        raise ReleaseDataError(f"{folder}: not a folder of release files")
    manifest: dict[str, Any] = {}
    manifest_path = folder / "manifest.json"
    if manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ReleaseDataError(f"{manifest_path}: not JSON ({exc})") from exc
        if not isinstance(manifest, dict):
            raise ReleaseDataError(f"{manifest_path}: expected a JSON object")
    dataset = str(manifest.get("dataset") or "")
    dataset = DATASET_ALIASES.get(dataset, dataset)
    if not dataset:
        present = [
            kind for kind, names in DATASET_FILES.items() if any((folder / n).is_file() for n in names)
        ]
        if len(present) != 1:
            raise ReleaseDataError(
                f"{folder}: cannot tell the data set (no manifest.json; files of {present or 'none'} found)"
            )
        dataset = present[0]
    if dataset not in DATASET_FILES:
        raise ReleaseDataError(f"{manifest_path}, field 'dataset': unknown data set {dataset!r}")
    for entry in manifest.get("files", []):
        name = entry.get("name", "")
        if name in DATASET_FILES[dataset] and (folder / name).is_file():
            if entry.get("sha256") and _sha256(folder / name) != entry["sha256"]:
                raise ReleaseDataError(f"{folder / name}: bytes do not match the manifest's SHA-256")
    return ReleaseFolder(
        path=folder,
        name=str(manifest.get("name") or folder.name),
        version=str(manifest.get("version") or "unversioned"),
        dataset=dataset,
        manifest=manifest,
    )


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise ReleaseDataError(f"{path}: missing")
    try:
        yield from read_jsonl(path, name=path.name, objects=True)
    except JsonLinesError as exc:
        raise ReleaseDataError(str(exc)) from exc


def _get(row: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...] = str) -> Any:
    if key not in row or row[key] is None:
        raise ReleaseDataError(f"{where}, field {key!r}: missing")
    value = row[key]
    if not isinstance(value, kind):
        raise ReleaseDataError(f"{where}, field {key!r}: expected {kind}, got {value!r}")
    return value


def _answer_index(value: Any, where: str, field_name: str = "answer") -> int:
    if isinstance(value, bool):
        raise ReleaseDataError(f"{where}, field {field_name!r}: {value!r} is not A/B or 0/1")
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str) and value.strip().upper() in ("A", "B", "0", "1"):
        v = value.strip().upper()
        return {"A": 0, "B": 1, "0": 0, "1": 1}[v]
    raise ReleaseDataError(f"{where}, field {field_name!r}: {value!r} is not A/B or 0/1")


def _optional_bool(row: dict[str, Any], key: str, where: str) -> bool | None:
    value = row.get(key)
    if value is None or isinstance(value, bool):
        return value
    if value in (0, 1):
        return bool(value)
    raise ReleaseDataError(f"{where}, field {key!r}: expected true, false or null, got {value!r}")


def _written(row: dict[str, Any], where: str) -> Written | None:
    """An adversarial item's ``round``, ``models_fooled`` and ``adversarial_split`` (None
    when the row has no ``round``: not written with models in the loop)."""
    if row.get("round") is None:
        return None
    number = row["round"]
    if isinstance(number, bool) or not isinstance(number, int):
        raise ReleaseDataError(f"{where}, field 'round': expected a whole number, got {number!r}")
    fooled = row.get("models_fooled") or []
    if not isinstance(fooled, list) or not all(isinstance(m, str) for m in fooled):
        raise ReleaseDataError(f"{where}, field 'models_fooled': expected a list of model names")
    split = row.get("adversarial_split")
    if split is not None and split not in ("train", "dev", "test"):
        raise ReleaseDataError(f"{where}, field 'adversarial_split': {split!r} is not train, dev or test")
    return Written(round=number, fooling=bool(fooled), split=split)


def _types(row: dict[str, Any], where: str) -> tuple[str, ...]:
    value = row.get("knowledge_types")
    if value is None:
        single = row.get("knowledge_type")
        return (single,) if isinstance(single, str) and single else ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ReleaseDataError(f"{where}, field 'knowledge_types': expected a list of strings")
    return tuple(sorted(set(value)))


def split_switched(text: str, pronoun: str, where: str) -> WscText:
    """The switched sentence split at its pronoun: ``[pronoun]`` in brackets (Trichelair's
    files), else the first whole-word occurrence of the original pronoun."""
    match = _BRACKETED.match(text)
    if match:
        return WscText(match["before"].strip(), match["pronoun"].strip(), match["after"].strip())
    word = re.search(rf"(?<![\w']){re.escape(pronoun)}(?![\w'])", text, flags=re.IGNORECASE)
    if word is None:
        raise ReleaseDataError(f"{where}, field 'switched': cannot find the pronoun {pronoun!r} in {text!r}")
    return WscText(text[: word.start()].strip(), word.group(0), text[word.end() :].strip())


def _switched(row: dict[str, Any], text: str, pronoun: str, where: str) -> WscText:
    """The release's ``switched_text_before/_pronoun/_after`` when present, else ``switched`` split."""
    parts = [row.get(f"switched_{k}") for k in ("text_before", "pronoun", "text_after")]
    s_before, s_pronoun, s_after = parts
    if isinstance(s_before, str) and isinstance(s_pronoun, str) and isinstance(s_after, str) and s_pronoun:
        return WscText(s_before.strip(), s_pronoun.strip(), s_after.strip())
    return split_switched(text, pronoun, where)


def read_wsc(folder: ReleaseFolder, *, limit: int | None = None) -> list[WscRow]:
    path = folder.path / "wsc.jsonl"
    out: list[WscRow] = []
    for number, row in _rows(path):
        where = f"{path.name}, row {number}"
        candidates = _get(row, "candidates", where, list)
        if len(candidates) != 2 or not all(isinstance(c, str) and c.strip() for c in candidates):
            raise ReleaseDataError(f"{where}, field 'candidates': expected two non-empty strings")
        pronoun = _get(row, "pronoun", where)
        switchable = _optional_bool(row, "switchable", where)
        switched_text = row.get("switched") or ""
        if not isinstance(switched_text, str):
            raise ReleaseDataError(f"{where}, field 'switched': expected a string")
        if switchable and not switched_text.strip():
            raise ReleaseDataError(f"{where}, field 'switched': switchable but no switched sentence")
        item = WscItem(
            id=str(_get(row, "id", where, (str, int))),
            text_before=_get(row, "text_before", where),
            pronoun=pronoun,
            text_after=_get(row, "text_after", where),
            candidates=(candidates[0], candidates[1]),
            answer=_answer_index(row.get("answer"), where),
            # Only switchable items are scored switched (Trichelair et al.): the switch of
            # an unswitchable item does not keep its sense.
            switched=_switched(row, switched_text, pronoun, where) if switchable else None,
        )
        out.append(
            WscRow(
                item=item,
                switchable=switchable,
                associative=_optional_bool(row, "associative", where),
                knowledge_types=_types(row, where),
                written=_written(row, where),
            )
        )
        if limit is not None and len(out) >= limit:
            break
    if not out:
        raise ReleaseDataError(f"{path}: no items")
    return out


LABELS = {"positive": True, "negative": False, "acceptable": None, "": None}


def read_winowhy(folder: ReleaseFolder, *, limit: int | None = None) -> list[ReasonRow]:
    path = folder.path / "winowhy.jsonl"
    out: list[ReasonRow] = []
    for number, row in _rows(path):
        where = f"{path.name}, row {number}"
        label = row.get("label") or ""
        if label not in LABELS:
            raise ReleaseDataError(
                f"{where}, field 'label': {label!r} is not positive, acceptable or negative"
            )
        candidates = _get(row, "candidates", where, list)
        answer = _answer_index(row.get("answer"), where)
        if len(candidates) != 2:
            raise ReleaseDataError(f"{where}, field 'candidates': expected two candidates")
        out.append(
            ReasonRow(
                id=str(_get(row, "id", where, (str, int))),
                question_id=str(_get(row, "schema_id", where, (str, int))),
                sentence=_get(row, "sentence", where),
                pronoun=_get(row, "pronoun", where),
                answer_text=str(candidates[answer]),
                text=_get(row, "text", where),
                positive=LABELS[label],
                knowledge_types=_types(row, where),
            )
        )
        if limit is not None and len(out) >= limit:
            break
    if not out:
        raise ReleaseDataError(f"{path}: no reasons")
    return out


def read_comve(folder: ReleaseFolder, *, limit: int | None = None) -> ComveData:
    data = ComveData()
    for name in DATASET_FILES["comve"]:
        path = folder.path / name
        if not path.is_file():
            continue
        for number, row in _rows(path):
            where = f"{name}, row {number}"
            item_id = str(_get(row, "id", where, (str, int)))
            if name == "comve_a.jsonl":
                data.a.append(
                    ComveA(
                        item_id,
                        (model_text(_get(row, "sent0", where)), model_text(_get(row, "sent1", where))),
                        _answer_index(row.get("answer"), where),
                        _written(row, where),
                    )
                )
            elif name == "comve_b.jsonl":
                answer = str(_get(row, "answer", where, str)).strip().upper()
                if answer not in ("A", "B", "C"):
                    raise ReleaseDataError(f"{where}, field 'answer': {row['answer']!r} is not A, B or C")
                a, b, c = (model_text(_get(row, f"option_{x}", where)) for x in "abc")
                options = (a, b, c)
                data.b.append(ComveB(item_id, model_text(_get(row, "false_sent", where)), options, answer))
            else:
                refs = _get(row, "references", where, list)
                if not any(isinstance(r, str) and r.strip() for r in refs):
                    raise ReleaseDataError(f"{where}, field 'references': no reference sentence")
                data.c.append(ComveC(item_id, _get(row, "false_sent", where), tuple(str(r) for r in refs)))
            if limit is not None and len(getattr(data, name[6])) >= limit:
                break
    if not (data.a or data.b or data.c):
        raise ReleaseDataError(f"{folder.path}: no comve_a/b/c.jsonl items")
    return data

"""Release files from frozen item payloads (pure: no Django imports).

Streaming: payloads arrive one at a time (the caller iterates the database with
``.iterator(chunk_size=...)``) and each record is written as soon as it is read, so memory
does not grow with the number of items. Deterministic: sorted JSON keys, the items'
frozen order, fixed CSV dialect, no timestamps -- the same release gives the same bytes.
"""

import csv
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from releases.card import ADVERSARIAL_FIELDS, SOURCE_DIFFERENCE, SPLIT_FIELD, hf_configs, render_card
from releases.dataset import Dataset

MANIFEST_FORMAT = "winnow-release/1"
PROGRESS_EVERY = 1000

#: An adversarial release built with ANLI's splits: the lines of each split in a file of its own.
ADVERSARIAL_SPLITS = ("train", "dev", "test")
WSC_FILES = (
    "wsc.jsonl",
    "wsc_switchable.jsonl",
    "wsc_associative.jsonl",
    "wsc_non_associative.jsonl",
    *(f"wsc_{split}.jsonl" for split in ADVERSARIAL_SPLITS),
)
WINOWHY_FILES = ("winowhy.jsonl",)
COMVE_FILES = (
    "comve_a.jsonl",
    "comve_b.jsonl",
    "comve_c.jsonl",
    *(f"comve_a_{split}.jsonl" for split in ADVERSARIAL_SPLITS),
    "subtaskA_data.csv",
    "subtaskA_answers.csv",
    "subtaskB_data.csv",
    "subtaskB_answers.csv",
    "subtaskC_data.csv",
    "subtaskC_answers.csv",
)
DATA_FILES = {"wsc": WSC_FILES, "winowhy": WINOWHY_FILES, "comve": COMVE_FILES, "senmaking": COMVE_FILES}


def jsonl_configs(file_names: Iterable[str]) -> list[str]:
    """The Hugging Face configs of a release's files, in the card's order: one per JSONL file
    (its stem), but an adversarial release's split files (``wsc_train.jsonl``, ...) are the
    splits of one config (``wsc_splits``); its data files are those with records."""
    return [config for config, _ in hf_configs(file_names)]


@dataclass
class BuiltFile:
    name: str
    size: int
    sha256: str
    items: int


def canonical_json(record: dict[str, Any]) -> str:
    """One line of JSON: sorted keys, UTF-8 text (no \\u escapes), no trailing spaces."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def payload_digest(payload: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def file_sha256(path: Path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


class _HashingFile:
    """A text sink that writes UTF-8 bytes and hashes them as they go.

    Lines are gathered into blocks of about 64 KB and encoded, hashed and written per block:
    the same bytes as line by line, far fewer calls; memory stays bounded by the block.
    """

    BLOCK = 1 << 16

    def __init__(self, path: Path) -> None:
        self.name = path.name
        self._handle = path.open("wb")
        self._sha = hashlib.sha256()
        self._pending: list[str] = []
        self._pending_chars = 0
        self.size = 0
        self.items = 0

    def write(self, text: str) -> int:
        self._pending.append(text)
        self._pending_chars += len(text)
        if self._pending_chars >= self.BLOCK:
            self._flush()
        return len(text)

    def _flush(self) -> None:
        if not self._pending:
            return
        data = "".join(self._pending).encode("utf-8")
        self._pending.clear()
        self._pending_chars = 0
        self._handle.write(data)
        self._sha.update(data)
        self.size += len(data)

    def close(self) -> BuiltFile:
        self._flush()
        self._handle.close()
        return BuiltFile(name=self.name, size=self.size, sha256=self._sha.hexdigest(), items=self.items)


class _Sinks:
    def __init__(self, out_dir: Path, names: Iterable[str]) -> None:
        self.files = {name: _HashingFile(out_dir / name) for name in names}
        self.csv = {
            name: csv.writer(sink, lineterminator="\n")
            for name, sink in self.files.items()
            if name.endswith(".csv")
        }

    def line(self, name: str, record: dict[str, Any]) -> None:
        self.text(name, canonical_json(record) + "\n")

    def text(self, name: str, line: str) -> None:
        sink = self.files[name]
        sink.write(line)
        sink.items += 1

    def row(self, name: str, values: list[Any], *, header: bool = False) -> None:
        self.csv[name].writerow(values)
        if not header:
            self.files[name].items += 1

    def close(self) -> list[BuiltFile]:
        return [sink.close() for sink in self.files.values()]


# --- per-data-set record shapes (documented in docs/formats.md) ---


def wsc_record(payload: dict[str, Any]) -> dict[str, Any]:
    return payload  # the frozen payload is the record (fields in docs/formats.md)


def winowhy_record(payload: dict[str, Any]) -> dict[str, Any]:
    return payload


def comve_a_record(p: dict[str, Any]) -> dict[str, Any]:
    # an adversarial item's fields (round, models fooled, votes...) where it has them
    written = {k: p[k] for k in (*ADVERSARIAL_FIELDS, SPLIT_FIELD) if k in p}
    return {"id": p["id"], "sent0": p["sent0"], "sent1": p["sent1"], "answer": p["false_index"], **written}


def comve_b_record(p: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": p["id"],
        "false_sent": p["false_sent"],
        "option_a": p["option_a"],
        "option_b": p["option_b"],
        "option_c": p["option_c"],
        "answer": p["correct_option"],
    }


def comve_c_false_sent(p: dict[str, Any]) -> str:
    """Subtask C's false statement: its own file's where that differs from subtask B's."""
    return str(p.get("false_sent_c") or p["false_sent"])


def comve_c_record(p: dict[str, Any]) -> dict[str, Any]:
    return {"id": p["id"], "false_sent": comve_c_false_sent(p), "references": list(p["references"])}


_SWITCHABLE = {value: f"switchable={value}" for value in (True, False, None)}
_ASSOCIATIVE = {value: f"associative={value}" for value in (True, False, None)}


def _write_wsc(sinks: _Sinks, payload: dict[str, Any], stats: Counter) -> None:
    record = wsc_record(payload)
    line = canonical_json(record) + "\n"  # encoded once, written to every file it belongs to
    sinks.text("wsc.jsonl", line)
    if record.get("switchable") is True:
        sinks.text("wsc_switchable.jsonl", line)
    if record.get("associative") is True:
        sinks.text("wsc_associative.jsonl", line)
    elif record.get("associative") is False:
        sinks.text("wsc_non_associative.jsonl", line)
    if record.get(SPLIT_FIELD) in ADVERSARIAL_SPLITS:
        sinks.text(f"wsc_{record[SPLIT_FIELD]}.jsonl", line)
    _adversarial_stats(record, stats)
    stats[_SWITCHABLE[record.get("switchable")]] += 1
    stats[_ASSOCIATIVE[record.get("associative")]] += 1
    for kind in record.get("knowledge_types") or []:
        stats["knowledge_type=" + kind] += 1


def _adversarial_stats(record: dict[str, Any], stats: Counter) -> None:
    """Counts of an adversarial item's round and split (other items add none)."""
    if "round" in record:
        stats[f"round={record['round']}"] += 1
    if record.get(SPLIT_FIELD):
        stats[f"{SPLIT_FIELD}={record[SPLIT_FIELD]}"] += 1


def _write_winowhy(sinks: _Sinks, payload: dict[str, Any], stats: Counter) -> None:
    record = winowhy_record(payload)
    sinks.line("winowhy.jsonl", record)
    stats[f"label={record.get('label') or 'unlabelled'}"] += 1
    stats[f"origin={record.get('origin')}"] += 1


def _write_comve(sinks: _Sinks, payload: dict[str, Any], stats: Counter) -> None:
    if payload.get("has_a"):
        record = comve_a_record(payload)
        sinks.line("comve_a.jsonl", record)
        if record.get(SPLIT_FIELD) in ADVERSARIAL_SPLITS:
            sinks.line(f"comve_a_{record[SPLIT_FIELD]}.jsonl", record)
        _adversarial_stats(record, stats)
        sinks.row("subtaskA_data.csv", [payload["id"], payload["sent0"], payload["sent1"]])
        sinks.row("subtaskA_answers.csv", [payload["id"], payload["false_index"]])
    if payload.get("has_b"):
        sinks.line("comve_b.jsonl", comve_b_record(payload))
        sinks.row(
            "subtaskB_data.csv",
            [
                payload["id"],
                payload["false_sent"],
                payload["option_a"],
                payload["option_b"],
                payload["option_c"],
            ],
        )
        sinks.row("subtaskB_answers.csv", [payload["id"], payload["correct_option"]])
    if payload.get("has_c"):
        sinks.line("comve_c.jsonl", comve_c_record(payload))
        sinks.row("subtaskC_data.csv", [payload["id"], comve_c_false_sent(payload)])
        if payload.get("false_sent_c") and payload.get("has_b"):
            stats[SOURCE_DIFFERENCE + payload["id"]] += 1
        sinks.row("subtaskC_answers.csv", [payload["id"], *payload["references"]])


WRITERS: dict[str, Callable[[_Sinks, dict[str, Any], Counter], None]] = {
    "wsc": _write_wsc,
    "winowhy": _write_winowhy,
    "comve": _write_comve,
    "senmaking": _write_comve,
}


def write_data_files(
    *,
    dataset: str,
    payloads: Iterable[dict[str, Any]],
    out_dir: Path,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[BuiltFile], dict[str, int]]:
    """Write the data set's data files from ``payloads`` in order; (files, label counts).
    Files that received no record are removed and not returned."""
    if dataset not in WRITERS:
        raise ValueError(f"unknown data set {dataset!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    sinks = _Sinks(out_dir, DATA_FILES[dataset])
    try:
        # Official SemEval layout: data files have a header row, answer files have none.
        if Dataset(dataset).is_comve:
            sinks.row("subtaskA_data.csv", ["id", "sent0", "sent1"], header=True)
            sinks.row("subtaskB_data.csv", ["id", "FalseSent", "OptionA", "OptionB", "OptionC"], header=True)
            sinks.row("subtaskC_data.csv", ["id", "FalseSent"], header=True)
        writer = WRITERS[dataset]
        stats: Counter = Counter()
        done = 0
        for payload in payloads:
            writer(sinks, payload, stats)
            done += 1
            if progress is not None and done % PROGRESS_EVERY == 0:
                progress(done)
        stats["items"] = done
    finally:
        files = sinks.close()
    # A file without records is not shipped: the card declares a config for every JSONL file
    # of the release, and a reader never meets an empty (or header-only) file.
    for empty in (f for f in files if f.items == 0):
        (out_dir / empty.name).unlink()
    files = [f for f in files if f.items > 0]
    return sorted(files, key=lambda f: f.name), dict(sorted(stats.items()))


def _write_text(path: Path, text: str) -> BuiltFile:
    data = text.encode("utf-8")
    path.write_bytes(data)
    return BuiltFile(name=path.name, size=len(data), sha256=hashlib.sha256(data).hexdigest(), items=0)


def manifest_dict(*, meta: dict[str, Any], files: list[BuiltFile]) -> dict[str, Any]:
    return {
        "format": MANIFEST_FORMAT,
        "name": meta["name"],
        "version": meta["version"],
        "dataset": meta["dataset"],
        "split": meta.get("split") or "",
        "item_count": meta["item_count"],
        "previous_version": meta.get("previous_version") or None,
        "diff_counts": (meta.get("diff") or {}).get("counts", {}),
        "sources": meta.get("sources", []),
        "files": [asdict(f) for f in sorted(files, key=lambda f: f.name)],
    }


def build_release_folder(
    *,
    meta: dict[str, Any],
    payloads: Iterable[dict[str, Any]],
    out_dir: Path,
    progress: Callable[[int], None] | None = None,
) -> list[BuiltFile]:
    """All files of a release into ``out_dir``: data files, README.md card, manifest.json.

    ``meta``: name, version, dataset, split, item_count, changelog, previous_version,
    diff, sources, agreement_summary (all JSON values, no timestamps).
    """
    data_files, stats = write_data_files(
        dataset=meta["dataset"], payloads=payloads, out_dir=out_dir, progress=progress
    )
    card = render_card(meta=meta, files=data_files, stats=stats)
    files = [*data_files, _write_text(out_dir / "README.md", card)]
    manifest = manifest_dict(meta=meta, files=files)
    manifest_file = _write_text(
        out_dir / "manifest.json", json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    )
    return sorted([*files, manifest_file], key=lambda f: f.name)


def verify_folder(*, manifest: dict[str, Any], folder: Path) -> list[str]:
    """Problems of ``folder`` against ``manifest`` (empty list: every file matches)."""
    problems = []
    for entry in manifest.get("files", []):
        path = folder / entry["name"]
        if not path.is_file():
            problems.append(f"{entry['name']}: missing")
            continue
        if path.stat().st_size != entry["size"] or file_sha256(path) != entry["sha256"]:
            problems.append(f"{entry['name']}: bytes do not match the manifest's SHA-256")
    return problems

"""The pure export module: deterministic bytes, streaming input, manifest verification."""

import json
from pathlib import Path

from releases.exports import build_release_folder, verify_folder

META = {
    "name": "wsc",
    "version": "1.2.3",
    "dataset": "wsc",
    "split": "",
    "item_count": 0,
    "changelog": "c",
    "previous_version": None,
    "diff": {},
    "sources": [{"file": "a.json", "sha256": "f" * 64}],
    "agreement_summary": {
        "campaigns": {
            "switch": {
                "task_label": "Switchability",
                "items_judged": 10,
                "judgments": 30,
                "annotators": 3,
                "figures": {
                    "fleiss_kappa": {"value": 0.61234, "ci_low": 0.5, "ci_high": 0.7, "undefined": None},
                    "krippendorff_alpha": {"value": None, "undefined": "one category only"},
                },
            }
        }
    },
}


def payloads(n: int):
    for i in range(n):  # a generator: the builder never needs the whole list
        yield {
            "id": str(i),
            "sentence": f'Ünïcode {i} "quoted"',
            "switchable": i % 2 == 0,
            "associative": None if i % 5 == 0 else i % 3 == 0,
            "knowledge_types": ["Object"],
            "answer": "A",
        }


def test_building_twice_gives_byte_identical_files(tmp_path: Path):
    a = build_release_folder(meta={**META, "item_count": 50}, payloads=payloads(50), out_dir=tmp_path / "a")
    b = build_release_folder(meta={**META, "item_count": 50}, payloads=payloads(50), out_dir=tmp_path / "b")
    assert a == b
    for file in a:
        assert (tmp_path / "a" / file.name).read_bytes() == (tmp_path / "b" / file.name).read_bytes()


def test_jsonl_lines_have_sorted_keys_and_utf8_and_subsets_follow_labels(tmp_path: Path):
    files = build_release_folder(meta={**META, "item_count": 10}, payloads=payloads(10), out_dir=tmp_path)
    counts = {f.name: f.items for f in files}
    assert counts["wsc.jsonl"] == 10
    assert counts["wsc_switchable.jsonl"] == 5
    assert counts["wsc_associative.jsonl"] == 3  # 3, 6, 9 (0 is unknown)
    assert counts["wsc_non_associative.jsonl"] == 5  # unknown (None) is in neither subset
    line = (tmp_path / "wsc.jsonl").read_text(encoding="utf-8").splitlines()[1]
    assert line.index('"answer"') < line.index('"associative"') < line.index('"id"')
    assert "Ünïcode" in line
    card = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "Campaign `switch` (Switchability; items judged 10, judgments 30, annotators 3)" in card
    assert "| Fleiss' kappa | 0.6123 | 0.5000 – 0.7000 |" in card
    assert "| Krippendorff's alpha | no value (one category only) |  |" in card


def test_progress_is_reported_while_streaming(tmp_path: Path):
    seen: list[int] = []
    build_release_folder(
        meta={**META, "item_count": 2500}, payloads=payloads(2500), out_dir=tmp_path, progress=seen.append
    )
    assert seen == [1000, 2000]


def test_verify_folder_names_missing_and_changed_files(tmp_path: Path):
    build_release_folder(meta={**META, "item_count": 3}, payloads=payloads(3), out_dir=tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert verify_folder(manifest=manifest, folder=tmp_path) == []
    (tmp_path / "wsc.jsonl").write_text("changed\n", encoding="utf-8")
    (tmp_path / "README.md").unlink()
    assert verify_folder(manifest=manifest, folder=tmp_path) == [
        "README.md: missing",
        "wsc.jsonl: bytes do not match the manifest's SHA-256",
    ]


def test_switched_sentence_is_given_plain_and_cut_around_its_bracketed_pronoun():
    from releases.snapshot import switched_parts

    assert switched_parts("The demonstrators refused the councilmen because [they] feared violence.") == (
        "The demonstrators refused the councilmen because they feared violence.",
        "The demonstrators refused the councilmen because",
        "they",
        "feared violence.",
    )
    assert switched_parts("Sam's drawing was hung just above [Tina's].") == (
        "Sam's drawing was hung just above Tina's.",
        "Sam's drawing was hung just above",
        "Tina's",
        ".",
    )
    assert switched_parts("") == ("", "", "", "")
    assert switched_parts("no brackets here") == ("no brackets here", "", "", "")


def test_export_memory_does_not_grow_with_the_number_of_items(tmp_path: Path):
    import tracemalloc

    def peak(n: int) -> int:
        tracemalloc.start()
        try:
            build_release_folder(
                meta={**META, "item_count": n}, payloads=payloads(n), out_dir=tmp_path / str(n)
            )
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(1_000), peak(20_000)
    print(f"tracemalloc peak: 1,000 items {small} B, 20,000 items {large} B")
    assert large < small * 1.5 + 64 * 1024, (small, large)  # 20 times the items, about the same memory

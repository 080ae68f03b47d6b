"""Steps the browser tests share, each done with the links and buttons of the pages: publish
a release from its page, download it in one file and load every config its card names
with Hugging Face `datasets`, start a run and see its results without a click."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import zipfile
from pathlib import Path
from typing import Any

from django.db import connection

from evaluation import views as evaluation_views
from evaluation.tasks import evaluation_run_task
from tests.releases.hf import hf_load


def publish(page, name: str, version: str) -> None:
    """On the release's page: approve, then publish through the confirmation page."""
    page.wait_for_url(f"**/releases/{name}/{version}/")
    page.click(f"#release-actions button:has-text('Approve {name} {version}')")
    page.click(f"#release-actions a:has-text('Publish {name} {version}')")
    page.click(f"button:has-text('Yes, publish {name} {version}')")
    page.wait_for_url(f"**/releases/{name}/{version}/")
    assert page.locator(".messages").inner_text().startswith(f"Published {name} {version}")


def download(page, work: Path) -> Path:
    """From a published release's page: the one-file download (its SHA-256 as the page
    says), unzipped as the page's snippet does; the release's folder."""
    checksum = page.locator("#download code.checksum").inner_text()
    snippet = page.locator("#load-snippet").inner_text()
    with page.expect_download() as info:
        page.click("#download a.button")
    zipped = info.value
    assert f"unzip {zipped.suggested_filename}" in snippet
    work.mkdir(parents=True, exist_ok=True)
    archive = work / zipped.suggested_filename
    zipped.save_as(archive)
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == checksum
    with zipfile.ZipFile(archive) as opened:
        assert [i.filename for i in opened.infolist() if i.file_size == 0] == []  # no empty file
        opened.extractall(work)  # what `unzip` does
    return work / archive.stem


def every_config_loads(folder: Path, work: Path) -> dict[str, list[dict[str, Any]]]:
    """The configs the folder's card names are exactly its JSONL files, and each one loads
    with ``load_dataset(folder, config)`` to the rows of its file; {config: rows}."""
    card = (folder / "README.md").read_text(encoding="utf-8")
    configs = re.findall(r"^- config_name: (\S+)$", card, flags=re.MULTILINE)
    assert configs and sorted(configs) == sorted(p.stem for p in folder.glob("*.jsonl"))
    loaded = {}
    for config in configs:
        rows = hf_load(f"./{folder.name}", config, workdir=work)
        shipped = [json.loads(line) for line in (folder / f"{config}.jsonl").open(encoding="utf-8")]
        assert rows and [r["id"] for r in rows] == [s["id"] for s in shipped], config
        loaded[config] = rows
    return loaded


def run_shows_its_results_without_a_click(page, monkeypatch, *, release: str, method: str) -> None:
    """Start a run from the evaluation page (the worker a thread held back until the page
    shows the queued run); the run page shows its results when it finishes, no click."""
    workers: list[threading.Thread] = []
    go = threading.Event()

    def work(run_id: int) -> None:
        try:
            go.wait(timeout=60)  # the page is showing the queued run first
            evaluation_run_task(run_id=run_id)
        finally:
            connection.close()

    def enqueue(*, run_id: int) -> bool:
        worker = threading.Thread(target=work, args=(run_id,))
        worker.start()
        workers.append(worker)
        return True

    monkeypatch.setattr(evaluation_views, "evaluation_run_enqueue", enqueue)
    page.goto("/evaluation/")
    page.select_option("select[name=release]", release)
    page.select_option("select[name=method]", method)
    page.fill("input[name=name]", "baseline")
    page.click("form.run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/evaluation/runs/\d+/$"))
    assert page.locator("table#run-model").count() == 0  # queued: no results yet
    go.set()
    page.locator("table#run-model").wait_for(timeout=120_000)  # no click
    assert page.locator("#run-progress").inner_text().startswith("Done")
    for worker in workers:
        worker.join(timeout=120)

"""Steps the browser tests share, each done with the links and buttons of the pages: answer
a campaign by keyboard as annotators, confirm a pipeline's stage, publish a release from
its page, download it in one file and load every config its card names with Hugging Face
`datasets`, start a run and see its results without a click."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import zipfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection

from core.roles import Role
from evaluation import views as evaluation_views
from evaluation.tasks import evaluation_run_task
from tests.releases.hf import hf_load

TEMPLATE = Path(settings.BASE_DIR) / "static" / "import-templates" / "schemas.csv"


def keyword(sentence: str) -> str:
    """What decides each template question: "tall" (kettle-1), "low" (kettle-2), "two" (lamp-1)."""
    return next(word for word in ("tall", "low", "two") if word in sentence)


def annotators(n: int) -> list:
    group, _ = Group.objects.get_or_create(name=Role.ANNOTATOR.value)
    users = []
    for i in range(n):
        user = get_user_model().objects.create_user(username=f"writer{i}", password=f"pw-writer{i}")
        user.groups.add(group)
        users.append(user)
    return users


def work(page, campaign: str, answer) -> int:
    """Answer every item the campaign gives, by keyboard only: Enter starts, ``answer``
    (page -> keys, or text to type) answers, Enter submits; the progress counter says
    when the next item is in."""
    page.goto(f"/annotation/campaigns/{campaign}/")
    page.keyboard.press("Enter")  # Start (the focused button)
    done = 0
    while True:
        page.wait_for_selector("#annotate-form, #done, #refused")
        page.wait_for_function(
            "() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-added, .htmx-swapping')"
        )
        if page.locator("#annotate-form").count() == 0:
            return done
        kind, value = answer(page)
        if kind == "type":
            page.locator("#text").focus()
            page.keyboard.type(value)
        else:
            page.keyboard.press(value)
        page.keyboard.press("Enter")
        done += 1
        try:
            # the next item is in, and htmx has processed it (settled: its form posts by htmx)
            page.wait_for_function(
                "n => ((document.querySelector('#progress-text') || {}).textContent?.startsWith(n + ' done')"
                " || document.querySelector('#done'))"
                " && !document.querySelector('.htmx-request, .htmx-settling, .htmx-added, .htmx-swapping')",
                arg=done,
            )
        except Exception as exc:  # say what the page showed instead of the next item
            shown = page.locator("main").inner_text() if page.locator("main").count() else page.content()
            raise AssertionError(
                f"{campaign}: answer {done} not taken; the page ({page.url}) shows:\n{shown}"
            ) from exc


def write(i):
    def answer(page):
        return "type", f"the {keyword(page.inner_text('blockquote.sentence'))} one, says writer {i}"

    return answer


def validate(page):
    reason = page.inner_text("#reason")
    return "key", "y" if ("writer 0" in reason or "writer 1" in reason) else "n"


def vote(page):
    # a human reason names its own question's word; a reverse one the twin's; generated: neither
    reason = page.inner_text("#reason")
    right = "writer" in reason and keyword(page.inner_text("blockquote.sentence")) in reason
    return "key", "y" if right else "n"


def label(page):
    return "key", "2" if "two" in page.inner_text("blockquote.sentence") else "1"  # Object / Property


def confirm(page, expect: str, pipeline: str = "kettles") -> None:
    """Confirm the pipeline's current stage from its page; the message ``expect`` follows."""
    page.goto(f"/annotation/pipelines/{pipeline}/")
    page.wait_for_selector("#confirm")
    page.click("#confirm")
    page.wait_for_selector(f".messages >> text={expect}")


def publish(page, name: str, version: str) -> None:
    """On the release's page: approve, then publish through the confirmation page."""
    page.wait_for_url(f"**/releases/{name}/{version}/")
    page.click(f"#release-actions button:has-text('Approve {name} {version}')")
    page.click(f"#release-actions a:has-text('Publish {name} {version}')")
    page.click(f"button:has-text('Yes, publish {name} {version}')")
    page.wait_for_url(f"**/releases/{name}/{version}/")
    assert page.locator(".messages").inner_text().startswith(f"Published {name} {version}")


def download(page, into: Path) -> Path:
    """From a published release's page: the one-file download (its SHA-256 as the page
    says), unzipped as the page's snippet does; the release's folder."""
    checksum = page.locator("#download code.checksum").inner_text()
    snippet = page.locator("#load-snippet").inner_text()
    with page.expect_download() as info:
        page.click("#download a.button")
    zipped = info.value
    assert f"unzip {zipped.suggested_filename}" in snippet
    into.mkdir(parents=True, exist_ok=True)
    archive = into / zipped.suggested_filename
    zipped.save_as(archive)
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == checksum
    with zipfile.ZipFile(archive) as opened:
        assert [i.filename for i in opened.infolist() if i.file_size == 0] == []  # no empty file
        opened.extractall(into)  # what `unzip` does
    return into / archive.stem


def every_config_loads(folder: Path, into: Path) -> dict[str, list[dict[str, Any]]]:
    """The configs the folder's card names are exactly its JSONL files, and each one loads
    with ``load_dataset(folder, config)`` to the rows of its file; {config: rows}."""
    card = (folder / "README.md").read_text(encoding="utf-8")
    configs = re.findall(r"^- config_name: (\S+)$", card, flags=re.MULTILINE)
    assert configs and sorted(configs) == sorted(p.stem for p in folder.glob("*.jsonl"))
    loaded = {}
    for config in configs:
        rows = hf_load(f"./{folder.name}", config, workdir=into)
        shipped = [json.loads(line) for line in (folder / f"{config}.jsonl").open(encoding="utf-8")]
        assert rows and [r["id"] for r in rows] == [s["id"] for s in shipped], config
        loaded[config] = rows
    return loaded


def run_shows_its_results_without_a_click(page, monkeypatch, *, release: str, method: str) -> None:
    """Start a run from the evaluation page (the worker a thread held back until the page
    shows the queued run); the run page shows its results when it finishes, no click."""
    workers: list[threading.Thread] = []
    go = threading.Event()

    def run_it(run_id: int) -> None:
        try:
            go.wait(timeout=60)  # the page is showing the queued run first
            evaluation_run_task(run_id=run_id)
        finally:
            connection.close()

    def enqueue(*, run_id: int) -> bool:
        worker = threading.Thread(target=run_it, args=(run_id,))
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

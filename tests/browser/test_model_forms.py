"""The evaluation and cloze forms in a real browser, on a desktop and a phone: models and
releases chosen from lists, a refused upload and a bad choice said beside their fields,
nothing wider than the window. WINNOW_SCREENSHOTS=DIR keeps the screenshots."""

import os
from pathlib import Path

import pytest

from tests.evaluation.tiny_models import build_tiny_masked

pytestmark = pytest.mark.django_db(transaction=True)

VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def setup(settings, tmp_path):
    """A models folder with a tiny masked LM. No published release: the live server's test
    database is flushed after each test, which a published release refuses by design; the
    errors looked at here do not depend on the release."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WINNOW_MODELS_DIR = tmp_path / "models"
    settings.WINNOW_UPLOAD_DIR = tmp_path / "uploads"
    settings.WINNOW_MAX_UPLOAD_MB = 1
    build_tiny_masked(tmp_path / "models" / "tiny-bert")
    return tmp_path


def _shoot(page, name: str) -> None:
    folder = os.environ.get("WINNOW_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def _submit_without_a_release(page) -> None:
    """The browser itself refuses to send the form without a release (the list is
    required); a client that sends it anyway gets every field's refusal from the server."""
    page.evaluate("document.querySelector('select[name=release]').removeAttribute('required')")
    page.click("form.run-form button[type=submit]")
    page.locator("form.run-form .errorlist", has_text="Choose a published release.").wait_for()


def _open_form(page, login, user, url: str, device: str) -> None:
    """Sign in on the device's screen, open the form; it fits and lists the registry's models."""
    page.set_viewport_size(VIEWPORTS[device])
    login(page, user)
    page.goto(url)
    _fits(page, VIEWPORTS[device]["width"])
    assert page.locator("select[name=model] option", has_text="tiny-bert (masked LM").count() == 1
    _shoot(page, f"{url.strip('/')}-form-{device}")


def _fits(page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("device", list(VIEWPORTS))
def test_the_evaluation_form_in_a_browser_refuses_a_big_upload_and_a_model_of_the_wrong_kind(
    page, login, researcher, setup, device
):
    _open_form(page, login, researcher, "/evaluation/", device)

    big = setup / "predictions.csv"
    big.write_bytes(b"id,prediction\n" + b"x,0\n" * 300_000)
    page.select_option("select[name=method]", "predictions")
    page.set_input_files("input[name=predictions]", str(big))
    _submit_without_a_release(page)
    error = page.locator(
        "form.run-form .errorlist", has_text="predictions.csv is larger than the upload limit"
    )
    error.wait_for()
    assert str(setup) not in page.content()
    _fits(page, VIEWPORTS[device]["width"])
    _shoot(page, f"evaluation-refused-upload-{device}")

    page.select_option("select[name=method]", "full")
    page.select_option("select[name=model]", "tiny-bert")
    _submit_without_a_release(page)
    page.locator(".errorlist", has_text="tiny-bert is a masked LM").wait_for()
    _shoot(page, f"evaluation-bad-choice-{device}")


@pytest.mark.parametrize("device", list(VIEWPORTS))
def test_the_cloze_form_in_a_browser_offers_lists_and_says_what_is_wrong(
    page, login, researcher, setup, device
):
    _open_form(page, login, researcher, "/cloze/", device)

    page.select_option("select[name=model]", "tiny-bert")
    page.fill("input[name=start_token]", "eos")
    _submit_without_a_release(page)
    page.locator(".errorlist", has_text="a start token is for causal LMs").wait_for()
    _fits(page, VIEWPORTS[device]["width"])
    _shoot(page, f"cloze-bad-choice-{device}")

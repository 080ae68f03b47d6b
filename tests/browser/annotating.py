"""The annotator page driven by keyboard in headless Chromium, as the browser tests of the
annotator and of crowd participants use it."""

from typing import Any


def item_in_hand(page: Any) -> int:
    """The id of the assignment the page's form answers."""
    return int(page.locator("#annotate-form input[name=assignment]").get_attribute("value"))


def press_on_page(page: Any, *keys: str) -> None:
    """Press ``keys`` with the page focused, not a field (the answer keys: y, n, s, p)."""
    page.locator("#item").click(position={"x": 2, "y": 2})
    for key in keys:
        page.keyboard.press(key)


def next_item(page: Any, before: int) -> None:
    """Wait until the form answers another assignment than ``before`` (or is gone)."""
    page.wait_for_function(
        "prev => { const el = document.querySelector('#annotate-form input[name=assignment]');"
        " return !el || el.value !== prev; }",
        arg=str(before),
    )

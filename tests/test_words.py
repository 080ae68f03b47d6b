"""The newcomer's words: figures and labels in plain words with their number format, docs
linked as pages rather than named as repository files, rows counted as a spreadsheet
counts them."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from core.docs import doc_html, doc_pages
from core.words import no_value, number, words
from releases.card import count_name

pytestmark = pytest.mark.django_db


def test_code_names_read_as_words_and_numbers_have_a_sensible_precision():
    assert words("fleiss_kappa") == "Fleiss' kappa"
    assert words("items_pairable") == "Items with two or more judgments"
    assert words("gold_accuracy") == "Accuracy on gold items"
    assert no_value("no judgment on a gold item") == "no value (no judgment on a gold item)"
    assert number(-41.59367561340332) == "-41.6" and number(0.61234) == "0.612" and number(3.0) == "3"
    assert count_name("switchable=None") == "switchable: not labelled"
    assert count_name("associative=True") == "associative: yes" and count_name("items") == "items"


def test_every_docs_page_is_served_and_links_between_pages_are_addresses(client, curator):
    client.force_login(curator)
    assert {"formats", "releases", "pipelines", "crowd", "analysis"} <= set(doc_pages())
    for page in doc_pages():
        assert client.get(reverse("doc", args=[page])).status_code == 200, page
    html = doc_html("See [the formats](formats.md#importing-your-own-items) and [code](../core/x.py).")
    assert f'href="{reverse("doc", args=["formats"])}#importing-your-own-items"' in html
    assert "x.py" not in html and "code" in html  # a link into the source tree keeps its text
    page = client.get(reverse("doc", args=["formats"])).content.decode()
    assert 'id="importing-your-own-items"' in page
    assert client.get(reverse("doc", args=["no-such-page"])).status_code == 404


def test_no_page_names_a_docs_file_where_a_link_belongs():
    templates = Path(settings.BASE_DIR) / "templates"
    named = [
        f"{path.relative_to(templates)}: {match.group(0)}"
        for path in templates.rglob("*.html")
        for match in re.finditer(r"docs/[a-z-]+\.md", path.read_text(encoding="utf-8"))
    ]
    assert named == []


def _command_help(name: str) -> str:
    """What ``manage.py NAME --help`` prints: the description and every option's help."""
    from django.core.management import get_commands, load_command_class

    parser = load_command_class(get_commands()[name], name).create_parser("manage.py", name)
    return parser.format_help()


def test_command_help_names_the_docs_page_the_app_serves_not_a_file(client, curator, monkeypatch):
    """A --help that sends to the docs says "see the docs page /docs/NAME/#anchor", and the
    page and its heading exist."""
    from django.core.management import get_commands

    monkeypatch.setenv("COLUMNS", "2000")  # argparse wraps at the terminal's width (and at hyphens)
    client.force_login(curator)
    named: list[str] = []
    pages: set[str] = set()
    for name, app in sorted(get_commands().items()):
        if app.startswith("django.") or app in ("rest_framework", "django_extensions"):
            continue
        text = " ".join(_command_help(name).split())
        named += [f"{name}: {m}" for m in re.findall(r"docs/[a-z-]+\.md", text)]
        for page, anchor in re.findall(r"/docs/([a-z0-9-]+)/(#[-\w]+)?", text):
            assert (
                f"see the docs page /docs/{page}/" in text.lower()
                or f"on the docs page /docs/{page}/" in text
            )
            pages.add(page + anchor)
    assert named == []
    assert {"filtering", "operations#backups", "releases#label-sources"} <= pages
    for entry in pages:
        page, _, anchor = entry.partition("#")
        html = client.get(reverse("doc", args=[page])).content.decode()
        assert not anchor or f'id="{anchor}"' in html, entry


def test_a_csv_error_counts_rows_as_a_spreadsheet_shows_them(tmp_path, curator):
    from datasets.services import DatasetImportError, dataset_import

    path = tmp_path / "mine.csv"
    path.write_text(
        "id,sentence,candidate_a,candidate_b,answer\n"
        "a1,The cup fell because [it] was slippery.,the cup,the table,A\n"
        "a2,The cup fell because [it] was slippery.,the cup,the table,Z\n",
        encoding="utf-8",
    )
    with pytest.raises(DatasetImportError) as caught:
        dataset_import(format="schemas", paths=[path], options={"collection": "mine"}, user=curator)
    problem = caught.value.problems[0]
    assert problem.row == 2 and problem.sheet_row == 3  # the header is the spreadsheet's row 1
    assert "mine.csv row 3 field 'answer'" in caught.value.message

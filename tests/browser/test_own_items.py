"""A curator brings in their own Winograd schemas in the browser (issue 13, "Your own
items"): downloads the template, previews it (nothing written), imports it, sees every
problem of a bad file in a table, and is told when the session has ended."""

import re
from pathlib import Path

import pytest
from django.conf import settings

from datasets.models import ImportBatch, Schema

pytestmark = pytest.mark.django_db(transaction=True)
TEMPLATES = Path(settings.BASE_DIR) / "static" / "import-templates"


def test_a_curator_previews_imports_and_fixes_their_own_schemas(page, login, curator, tmp_path):
    login(page, curator)
    page.goto("/datasets/import/")
    page.click("summary:has-text('Template files')")
    with page.expect_download() as download:
        page.click("a:has-text('schemas.csv')")
    template = tmp_path / "schemas.csv"
    download.value.save_as(template)
    assert template.read_bytes() == (TEMPLATES / "schemas.csv").read_bytes()

    page.select_option("#id_format", "schemas")
    page.fill("#id_collection", "mine")
    page.set_input_files("#id_uploads", str(template))
    page.click("button[value=preview]")
    page.wait_for_selector("text=Preview: nothing was written.")
    assert "The kettle would not fit on the shelf because [it] was too tall." in page.inner_text(
        "table.sample"
    )
    assert Schema.objects.count() == 0 and ImportBatch.objects.count() == 0

    page.click("button[value=import]")
    page.wait_for_selector("#import-result >> text=Imported")
    assert set(Schema.objects.filter(collection="mine").values_list("external_id", flat=True)) == {
        "kettle-1",
        "kettle-2",
        "lamp-1",
    }

    bad = tmp_path / "bad.csv"
    bad.write_text(
        "id,sentence,candidate_a,candidate_b,answer\nx,No pronoun.,A,B,A\ny,[It] fell.,the cup,the cup,B\n"
    )
    page.set_input_files("#id_uploads", str(bad))
    page.click("button[value=import]")
    page.wait_for_selector("text=2 problems in bad.csv")
    rows = page.locator("table.problems tbody tr").all_inner_texts()
    # rows as a spreadsheet numbers them: the header is row 1
    assert [r.split("\t")[:2] for r in rows] == [["2", "sentence"], ["3", "candidate_b"]]
    assert Schema.objects.filter(collection="mine").count() == 3

    # The session ends (the sign-in cookie is gone): the whole page goes to the sign-in page,
    # which returns to the import page (no sign-in page nested in the result, no silence).
    context = page.context
    kept = [c for c in context.cookies() if c["name"] != "sessionid"]
    context.clear_cookies()
    context.add_cookies(kept)
    page.click("button[value=preview]")
    page.wait_for_url(re.compile(r"/accounts/login/\?next=(%2F|/)datasets(%2F|/)import(%2F|/)"))
    assert page.locator("input[name=username]").is_visible()

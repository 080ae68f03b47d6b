"""The curator's upload page at /datasets/import/."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from datasets.models import ComVEItem, ImportBatch, Reason, Schema
from tests.datasets import sources

pytestmark = pytest.mark.django_db
URL = "/datasets/import/"


def upload(name: str, text: str | bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(
        name, text.encode() if isinstance(text, str) else text, content_type="text/plain"
    )


def comve_uploads() -> list[SimpleUploadedFile]:
    return [upload(name, text) for name, text in sources.comve_files().items()]


def test_anonymous_users_are_sent_to_login(client):
    response = client.get(URL)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.parametrize("role", ["annotator", "researcher", "nobody"])
def test_only_curators_may_import(client, request, role, tmp_path):
    client.force_login(request.getfixturevalue(role))
    assert client.get(URL).status_code == 403
    response = client.post(URL, {"format": "comve", "uploads": comve_uploads()})
    assert response.status_code == 403
    assert ComVEItem.objects.count() == 0 and ImportBatch.objects.count() == 0


def test_curator_sees_the_form(client, curator):
    client.force_login(curator)
    response = client.get(URL)
    assert response.status_code == 200
    assert b'name="uploads"' in response.content and b"multiple" in response.content


def test_curator_uploads_a_comve_split_and_sees_what_was_created(client, curator):
    client.force_login(curator)
    response = client.post(URL, {"format": "comve", "uploads": comve_uploads()})
    assert response.status_code == 200
    assert ComVEItem.objects.filter(split="dev").count() == 3  # the split came from the original names
    text = response.content.decode()
    assert "<td>items</td><td>3</td><td>0</td><td>0</td>" in text
    assert "comve/dev: 3 items (subtask A 3, B 3, C 3)" in text
    batch = ImportBatch.objects.get()
    assert batch.created_by == curator
    assert {f["name"] for f in batch.files} == set(sources.comve_files())
    assert all("path" not in f for f in batch.files)  # temporary paths are not recorded
    # the same files again: nothing created, all unchanged
    response = client.post(URL, {"format": "comve", "uploads": comve_uploads()})
    assert "<td>items</td><td>0</td><td>0</td><td>3</td>" in response.content.decode()
    assert ComVEItem.objects.count() == 3


def test_curator_uploads_winowhy_with_categories(client, curator):
    client.force_login(curator)
    rows = sources.winowhy_rows()
    questions = upload("winowhy.json", __import__("json").dumps(rows))
    categories = upload("cat_ref.json", '{"Spatial": [0, 1], "Causal": []}')
    response = client.post(URL, {"format": "winowhy", "uploads": [questions, categories]})
    assert response.status_code == 200
    assert Schema.objects.count() == 4 and Reason.objects.count() == 12
    assert Schema.objects.get(external_id="0").knowledge_types == ["Spatial"]


def test_trichelair_upload_into_a_named_collection(client, curator):
    client.force_login(curator)
    import json

    rows = sources.winowhy_rows()
    response = client.post(
        URL, {"format": "winowhy", "collection": "demo", "uploads": [upload("w.json", json.dumps(rows))]}
    )
    assert response.status_code == 200
    switched, associative = sources.trichelair_rows()
    files = [upload("s.json", json.dumps(switched)), upload("a.json", json.dumps(associative))]
    response = client.post(URL, {"format": "trichelair", "collection": "demo", "uploads": files})
    assert response.status_code == 200
    assert "matched 4 rows to schemas by text: 2 switchable, 1 associative" in response.content.decode()
    assert Schema.objects.filter(collection="demo", switchable=True).count() == 2


def test_bad_file_shows_the_precise_error_and_writes_nothing(client, curator):
    client.force_login(curator)
    files = sources.comve_files()
    files["subtaskB_gold_answers.csv"] = files["subtaskB_gold_answers.csv"].replace("12,C", "12,E")
    response = client.post(URL, {"format": "comve", "uploads": [upload(n, t) for n, t in files.items()]})
    assert response.status_code == 400
    text = response.content.decode()
    assert "Nothing was imported" in text
    assert (
        "subtaskB_gold_answers.csv row 3 field &#x27;answer&#x27;: unknown answer key &#x27;E&#x27;" in text
    )
    assert ComVEItem.objects.count() == 0 and ImportBatch.objects.count() == 0


def test_non_utf8_upload_is_refused_with_its_row(client, curator):
    client.force_login(curator)
    path_bytes = (
        sources.jsonl_text(sources.senmaking_rows()).encode().replace(b"Option B of 11.", b"Option \xfe")
    )
    response = client.post(URL, {"format": "senmaking", "uploads": [upload("dataset.jsonl", path_bytes)]})
    assert response.status_code == 400
    assert "dataset.jsonl row 2" in response.content.decode() and "not UTF-8" in response.content.decode()
    assert ComVEItem.objects.count() == 0


def test_error_text_from_a_file_is_escaped(client, curator):
    client.force_login(curator)
    rows = sources.winowhy_rows(["<script>alert(1)</script>", "A", "B", "A"])
    response = client.post(
        URL, {"format": "winowhy", "uploads": [upload("winowhy.json", __import__("json").dumps(rows))]}
    )
    assert response.status_code == 400
    assert b"<script>alert(1)</script>" not in response.content
    assert b"&lt;script&gt;" in response.content


def test_htmx_request_gets_only_the_result_fragment(client, curator):
    client.force_login(curator)
    response = client.post(URL, {"format": "comve", "uploads": comve_uploads()}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert b"<html" not in response.content and b"import-result" in response.content


def test_htmx_request_with_a_bad_file_gets_the_error_fragment(client, curator):
    client.force_login(curator)
    files = sources.comve_files()
    files["subtaskA_dev_data.csv"] = ""
    response = client.post(
        URL, {"format": "comve", "uploads": [upload(n, t) for n, t in files.items()]}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200  # htmx swaps only 2xx
    assert b"<html" not in response.content
    assert b"subtaskA_dev_data.csv row 1: file is empty" in response.content
    assert ComVEItem.objects.count() == 0


def test_post_without_fields_shows_form_errors(client, curator):
    client.force_login(curator)
    response = client.post(URL, {})
    assert response.status_code == 400
    assert b"This field is required" in response.content


def test_too_many_files_for_a_format_is_a_form_error(client, curator):
    client.force_login(curator)
    response = client.post(URL, {"format": "senmaking", "uploads": comve_uploads()[:2]})
    assert response.status_code == 400
    assert b"senmaking takes at most 1 file" in response.content
    assert ImportBatch.objects.count() == 0


def test_an_import_over_the_upload_limit_is_refused_with_the_file_name_and_the_limit_and_writes_nothing(
    client, curator, settings, tmp_path
):
    """Issue 16, item 6: the limit holds while the request is read; the file over it is
    dropped (its temporary file too) and the page names it and the limit."""
    settings.WINNOW_MAX_UPLOAD_MB = 1
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    files = sources.comve_files()
    name = next(n for n in files if n.startswith("subtaskA_dev_data"))
    header, *rows = files[name].splitlines(keepends=True)
    files[name] = header + "".join(rows) * (2 * 1024 * 1024 // len("".join(rows)) + 1)
    assert len(files[name]) > 2 * 1024 * 1024
    client.force_login(curator)
    response = client.post(URL, {"format": "comve", "uploads": [upload(n, t) for n, t in files.items()]})
    assert response.status_code == 413
    assert f"{name} is larger than the upload limit of 1 MB" in response.content.decode()
    assert b"Nothing was imported." in response.content
    assert ComVEItem.objects.count() == 0 and ImportBatch.objects.count() == 0
    assert list((tmp_path / "tmp").iterdir()) == []  # the part received was not kept
    # under the limit, the same page imports as before
    settings.WINNOW_MAX_UPLOAD_MB = 20
    response = client.post(URL, {"format": "comve", "uploads": comve_uploads()})
    assert response.status_code == 200 and ComVEItem.objects.count() == 3

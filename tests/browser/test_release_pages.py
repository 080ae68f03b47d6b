"""A curator creates a release (with its preview), a second curator approves it (the
server asks for one), and the first publishes it: all on Winnow's own pages, never the
admin (issue 15)."""

import pytest

from releases.models import Release, ReleaseStatus
from tests.releases.factories import make_curator, make_schemas

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_curator_creates_a_second_curator_approves_and_the_first_publishes_without_the_admin(
    published_releases_removed_afterwards, page, new_page, login, curator, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WINNOW_RELEASE_SECOND_APPROVER = True
    make_schemas(4)
    second = make_curator("cleo")
    visited: list[str] = []
    page.on("request", lambda request: visited.append(request.url))

    login(page, curator)
    page.click("#home-curator a:has-text('Create, approve and publish releases')")
    page.fill("input[name=name]", "wsc273")
    page.select_option("select[name=dataset]", "wsc")
    page.fill("input[name=version]", "1.0")
    page.click("button[value=preview]")
    assert "is not a semantic version" in page.locator(".field.has-error").inner_text()
    page.fill("input[name=version]", "1.0.0")
    page.fill("textarea[name=changelog]", "First release of the four schemas")
    page.click("button[value=preview]")
    preview = page.locator("#preview").inner_text()
    assert "It would freeze 4 items" in preview and "First version: all 4 items are new." in preview
    assert not Release.objects.exists()  # the preview writes nothing

    page.click("button[value=create]")
    page.wait_for_url("**/releases/wsc273/1.0.0/")
    assert "Created the draft wsc273 1.0.0: 4 items frozen" in page.locator(".messages").inner_text()
    steps = page.locator("#release-actions").inner_text()
    assert "another curator must approve it" in steps
    assert page.locator("#release-actions button").count() == 0  # no Approve for its creator

    other = login(new_page(), second)
    other.goto("/releases/wsc273/1.0.0/")
    other.click("#release-actions button:has-text('Approve wsc273 1.0.0')")
    assert (
        other.locator(".messages").inner_text() == "Approved wsc273 1.0.0: 4 items; it can now be published."
    )

    page.reload()
    page.click("#release-actions a:has-text('Publish wsc273 1.0.0')")
    assert "Publishing is final" in page.locator(".final").inner_text()
    page.click("button:has-text('Yes, publish wsc273 1.0.0')")
    page.wait_for_url("**/releases/wsc273/1.0.0/")
    assert page.locator(".messages").inner_text() == "Published wsc273 1.0.0: 4 items, files checked."
    assert page.locator("#release-actions").count() == 0  # nothing left to do
    release = Release.objects.get()
    assert release.status == ReleaseStatus.PUBLISHED
    assert (release.created_by, release.approved_by, release.published_by) == (curator, second, curator)
    assert not [url for url in visited if "/admin/" in url]

"""The home page and the top bar: each role sees the links to its own pages and not
the others', and every link it sees opens."""

import re

import pytest
from django.urls import reverse

from annotation.services import assignment_next, campaign_create, judgment_submit
from tests.datasets.factories import SchemaFactory

pytestmark = pytest.mark.django_db

IMPORT = reverse("datasets:import")
CAMPAIGNS = reverse("annotation:campaign-list")
NEW_CAMPAIGN = reverse("annotation:campaign-create")
AGREEMENT = reverse("agreement:index")
RELEASES = reverse("releases:release-list")
RELEASE_PAGES = reverse("releases:release-create")
ADMIN = reverse("admin:index")
API_DOCS = reverse("api-docs")
EVALUATION = reverse("evaluation:run-list")

CURATOR_ONLY = {IMPORT, NEW_CAMPAIGN, AGREEMENT, RELEASE_PAGES, ADMIN}


def _hrefs(html: str, section: str | None = None) -> set[str]:
    if section is not None:
        match = re.search(rf'<section id="{section}">(.*?)</section>', html, re.S)
        html = match.group(1) if match else ""
    return set(re.findall(r'href="([^"]+)"', html))


def _home(client, user) -> str:
    client.force_login(user)
    response = client.get(reverse("home"))
    assert response.status_code == 200
    return response.content.decode()


def test_annotator_sees_campaigns_and_own_progress_and_no_curator_links(client, annotator, annotator2):
    SchemaFactory.create_batch(3)
    campaign = campaign_create(name="sw", task="switchability", items="schemas", k=2)
    lease = assignment_next(campaign=campaign, annotator=annotator)
    judgment_submit(annotator=annotator, assignment=lease, answer="switchable")
    html = _home(client, annotator)
    section = re.search(r'<section id="home-annotator">(.*?)</section>', html, re.S)
    assert section is not None
    row = re.search(r"<tr>\s*<td>sw</td>.*?</tr>", section.group(1), re.S)
    assert row is not None
    cells = re.findall(r"<td>(.*?)</td>", row.group(0), re.S)
    assert cells[2] == "1"  # done by this annotator
    assert cells[3] == "2"  # still open to them
    assert reverse("annotation:campaign-annotate", args=["sw"]) in _hrefs(html)
    assert CAMPAIGNS in _hrefs(html)
    assert not (CURATOR_ONLY & _hrefs(html))
    assert 'id="home-curator"' not in html and 'id="home-researcher"' not in html
    # another annotator's work is not theirs
    assert "<td>1</td>" not in _home(client, annotator2)


def test_curator_sees_import_campaigns_agreement_releases_and_admin(client, curator):
    html = _home(client, curator)
    assert {IMPORT, CAMPAIGNS, NEW_CAMPAIGN, AGREEMENT, RELEASES, EVALUATION, RELEASE_PAGES, ADMIN} <= _hrefs(
        html, "home-curator"
    )
    assert 'id="home-annotator"' not in html and 'id="home-researcher"' not in html


def test_researcher_sees_releases_and_api_docs_only(client, researcher):
    html = _home(client, researcher)
    assert {RELEASES, EVALUATION, API_DOCS} <= _hrefs(html, "home-researcher")
    hrefs = _hrefs(html)
    assert not (CURATOR_ONLY & hrefs)
    assert CAMPAIGNS not in hrefs
    assert 'id="home-annotator"' not in html and 'id="home-curator"' not in html


def test_account_without_role_is_told_so_and_gets_no_page_links(client, nobody):
    html = _home(client, nobody)
    assert "no role yet" in html
    assert not ((CURATOR_ONLY | {CAMPAIGNS, RELEASES, API_DOCS}) & _hrefs(html))


@pytest.mark.parametrize("role", ["annotator", "curator", "researcher", "nobody"])
def test_every_page_link_a_role_sees_on_home_opens_for_it(client, request, role):
    user = request.getfixturevalue(role)
    if role == "annotator":
        SchemaFactory.create()
        campaign_create(name="sw", task="switchability", items="schemas", k=1)
    if role == "curator":
        user.is_staff = True
        user.save()
        from core.roles import curator_admin_access_grant

        curator_admin_access_grant(users=[user])
    html = _home(client, user)
    links = {h for h in _hrefs(html) if h.startswith("/") and not h.startswith("/static/")}
    assert links
    for href in links:
        assert client.get(href).status_code == 200, href


@pytest.mark.parametrize(
    ("role", "shown", "hidden"),
    [
        ("annotator", {CAMPAIGNS, RELEASES}, {IMPORT, AGREEMENT, ADMIN, API_DOCS, EVALUATION}),
        ("curator", {CAMPAIGNS, IMPORT, AGREEMENT, RELEASES, ADMIN, API_DOCS, EVALUATION}, set()),
        ("researcher", {RELEASES, API_DOCS, EVALUATION}, {CAMPAIGNS, IMPORT, AGREEMENT, ADMIN}),
        ("nobody", set(), {CAMPAIGNS, IMPORT, AGREEMENT, ADMIN, RELEASES, API_DOCS, EVALUATION}),
    ],
)
def test_top_bar_shows_each_role_its_pages(client, request, role, shown, hidden):
    html = _home(client, request.getfixturevalue(role))
    nav = re.search(r"<nav>(.*?)</nav>", html, re.S)
    assert nav is not None
    hrefs = _hrefs(nav.group(0))
    assert shown <= hrefs
    assert not (hidden & hrefs)


def test_admin_is_branded_winnow_and_leads_back_to_the_site(client, admin_user):
    client.force_login(admin_user)
    html = client.get(ADMIN).content.decode()
    assert "Winnow administration" in html
    assert "Django administration" not in html
    assert 'href="/"' in html  # "View site"

"""Issue 15's polish list: favicon, messages in the content column, the CSRF failure page,
cloze linked for researchers, 404 for an unknown leaderboard."""

import re

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_favicon_is_linked_from_every_page_and_favicon_ico_redirects_to_it(client):
    page = client.get(reverse("login"))
    link = re.search(r'<link rel="icon" href="([^"]+)"', page.content.decode())
    assert link is not None and link.group(1).endswith("favicon.svg")
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == link.group(1)


def test_flash_messages_sit_inside_the_content_column(rf, curator):
    from django.contrib import messages
    from django.contrib.messages.storage.cookie import CookieStorage
    from django.template.loader import render_to_string

    request = rf.get("/")
    request.user = curator
    request._messages = CookieStorage(request)
    messages.success(request, "Saved the thing.")
    html = render_to_string("error.html", {"title": "Any page"}, request=request)
    main = html[html.index("<main>") : html.index("</main>")]
    assert '<ul class="messages" role="status"><li class="success">Saved the thing.</li></ul>' in main


def test_a_csrf_failure_gets_a_page_in_winnows_layout_with_a_way_back(curator):
    strict = Client(enforce_csrf_checks=True)
    response = strict.post(reverse("login"), {"username": "x", "password": "y"})
    assert response.status_code == 403
    html = response.content.decode()
    assert "This form has expired" in html and "nothing was saved" in html
    assert 'class="topbar"' in html  # the site's layout, not Django's plain page
    assert reverse("login") in html  # signed out: a way to log in again
    strict.force_login(curator)
    html = strict.post(reverse("datasets:import"), {}).content.decode()
    assert "This form has expired" in html and "Back to the home page" in html


def test_researchers_find_the_cloze_pages_from_the_nav_home_and_the_run_list(client, researcher, curator):
    client.force_login(researcher)
    cloze = reverse("cloze:run-list")
    home = client.get(reverse("home")).content.decode()
    assert home.count(f'href="{cloze}"') == 2  # the top bar and the research tiles
    assert f'href="{cloze}"' in client.get(reverse("evaluation:run-list")).content.decode()
    assert client.get(cloze).status_code == 200
    client.force_login(curator)  # the cloze pages are for researchers: not offered to others
    assert f'href="{cloze}"' not in client.get(reverse("home")).content.decode()


def test_an_unknown_leaderboard_is_a_404_page(client, researcher):
    client.force_login(researcher)
    response = client.get(reverse("evaluation:leaderboard", args=["no-such-release", "9.9.9"]))
    assert response.status_code == 404
    assert "no-such-release@9.9.9" in response.content.decode()


def test_uploaded_predictions_are_named_by_their_file_not_predictions_predictions():
    from evaluation.analysis.frames import run_label
    from evaluation.models import EvaluationRun

    upload = {"run": 4, "method": "predictions", "settings": {"predictions_name": "team-x.jsonl"}}
    assert run_label(upload) == "#4 team-x.jsonl (predictions)"
    assert run_label({"run": 5, "method": "predictions", "settings": {}}) == "#5 predictions"
    assert run_label({"run": 6, "method": "majority"}) == "#6 majority"
    assert run_label({"run": 7, "method": "full", "model_name": "SmolLM2-135M-Instruct.Q4_1"}) == (
        "#7 SmolLM2-135M-Instruct.Q4_1 (full)"
    )
    run = EvaluationRun(method="predictions", settings={"predictions_name": "team-x.jsonl"})
    assert run.model_label == "team-x.jsonl"

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation import selectors as annotation_selectors
from annotation.tasks_registry import task_spec
from core.roles import user_is_annotator


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The start page: links to what the user's roles allow; an annotator also sees the
    campaigns open to them, each with their own progress."""
    context: dict[str, Any] = {}
    if user_is_annotator(request.user):
        context["my_campaigns"] = [
            {
                "campaign": campaign,
                "title": task_spec(campaign.task).title,
                "mine": annotation_selectors.my_progress(campaign=campaign, annotator=request.user),
            }
            for campaign in annotation_selectors.campaign_list(user=request.user).filter(
                status="active", imported=False
            )
        ]
    return render(request, "home.html", context)

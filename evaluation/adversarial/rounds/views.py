"""The curator's rounds page: every round of adversarial writing by collection, with its
models and its pipeline, and the form that starts the next one."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotation.errors import AnnotationError
from annotation.permissions import user_can_curate
from annotation.pipelines.rounds import adversarial_rounds
from core.roles import role_required
from evaluation import selectors
from evaluation.adversarial.rounds.forms import RoundStartForm
from evaluation.adversarial.rounds.services import round_start

CURATORS_ONLY = "Rounds of adversarial writing are started by curators."


@role_required(user_can_curate, CURATORS_ONLY)
def round_list(request: HttpRequest) -> HttpResponse:
    collection = request.GET.get("collection", "")
    registry = selectors.model_list()
    initial = {"collection": collection} if collection else {}
    form = RoundStartForm(request.POST or None, registry=registry, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            started = round_start(curator=request.user, **form.service_kwargs())
        except AnnotationError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(
                request,
                f"Round {started.number} of {started.pipeline.collection} started: its writing campaign is open.",
            )
            return redirect("annotation:pipeline-detail", name=started.pipeline.name)
    return render(
        request,
        "evaluation/adversarial_rounds/round_list.html",
        {"rounds": list(adversarial_rounds()), "form": form, "registry": registry, "collection": collection},
        status=400 if request.method == "POST" else 200,
    )

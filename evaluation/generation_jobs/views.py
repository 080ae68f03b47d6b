"""Generation job pages: start one (reasons of a collection, or a run's explanations
judged), follow its progress (htmx poll; a reload without JavaScript), read what it made."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from core.roles import role_required, user_is_curator
from core.web import enqueue_after_commit
from evaluation import selectors
from evaluation.generation_jobs.forms import ExplanationsStartForm, ReasonsStartForm
from evaluation.generation_jobs.services import (
    GenerationError,
    generation_explanations_create,
    generation_reasons_create,
    schema_collections,
)
from evaluation.models import GenerationJob
from evaluation.tasks import generation_job_enqueue

CURATORS_ONLY = "Generation jobs are for curators."


def _queued(request: HttpRequest, job: GenerationJob) -> HttpResponse:
    enqueue_after_commit(request, f"Generation #{job.pk}", lambda: generation_job_enqueue(job_id=job.pk))
    return redirect("evaluation:generation-detail", job_id=job.pk)


@role_required(user_is_curator, CURATORS_ONLY)
def generation_create(request: HttpRequest) -> HttpResponse:
    """Start a job. A POST with ``run`` asks for the run's explanations to be judged (the
    run page's form); any other asks a model for candidate reasons (``?collection=NAME``
    preselects the collection)."""
    posted = request.method == "POST"
    reasons_form = ReasonsStartForm(
        request.POST if posted and "run" not in request.POST else None,
        initial={"collection": request.GET.get("collection", "")},
        collections=schema_collections(),
        models=selectors.model_list(),
    )
    explanations_form = None
    if posted and "run" in request.POST:
        explanations_form = ExplanationsStartForm(request.POST)
        if explanations_form.is_valid():
            data = explanations_form.cleaned_data
            run = selectors.run_get(user=request.user, run_id=data["run"])
            try:
                job = generation_explanations_create(run=run, k=data["k"], created_by=request.user)
            except GenerationError as exc:
                explanations_form.add_refusal(exc)
            else:
                return _queued(request, job)
    elif posted and reasons_form.is_valid():
        try:
            job = generation_reasons_create(**reasons_form.cleaned_data, created_by=request.user)
        except GenerationError as exc:
            reasons_form.add_refusal(exc)
        else:
            return _queued(request, job)
    context = {
        "form": reasons_form,
        "explanations_form": explanations_form,
        "jobs": selectors.generation_job_list(user=request.user)[:50],
    }
    return render(request, "evaluation/generation_create.html", context, status=400 if posted else 200)


#: The settings of a job as its page names them.
SETTING_LABELS = {
    "k": "reasons per question (k)",
    "num_beams": "beams",
    "max_new_tokens": "max new tokens",
    "seed": "seed (torch.manual_seed)",
    "decoding": "decoding",
    "prompt": "prompt",
    "limit": "only the first N questions",
    "judgments_per_item": "judgments per explanation (K)",
    "task": "annotation task",
}


@role_required(user_is_curator, CURATORS_ONLY)
def generation_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = selectors.generation_job_get(user=request.user, job_id=job_id)
    settings = [
        (SETTING_LABELS.get(key, key.replace("_", " ")), value) for key, value in job.settings.items()
    ]
    context = {"job": job, "active": job.active, "settings": settings}
    if getattr(request, "htmx", False):
        return render(request, "evaluation/generation_detail.html#progress", context | {"fragment": True})
    return render(request, "evaluation/generation_detail.html", context)

"""Reads of cloze runs, narrowed to what the user may see (out of reach is a 404)."""

from django.db.models import QuerySet
from django.http import Http404

from core.roles import Actor
from evaluation.cloze.permissions import user_can_view_cloze_runs
from evaluation.models import ClozeRun


def cloze_run_list(*, user: Actor) -> QuerySet[ClozeRun]:
    if not user_can_view_cloze_runs(user=user):
        return ClozeRun.objects.none()
    return ClozeRun.objects.all()


def cloze_run_get(*, user: Actor, pk: int) -> ClozeRun:
    try:
        return cloze_run_list(user=user).get(pk=pk)
    except ClozeRun.DoesNotExist as exc:
        raise Http404("no such cloze run") from exc

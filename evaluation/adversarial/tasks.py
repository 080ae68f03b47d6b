"""Celery task of adversarial writing. Its name starts ``evaluation.tasks.`` so that
CELERY_TASK_ROUTES sends it to the ``models`` queue; ``evaluation.tasks`` imports this
module so the workers register it."""

from celery import shared_task

from annotation.models import AdversarialTry
from evaluation.adversarial.services import adversarial_try_score


@shared_task(name="evaluation.tasks.adversarial_try_task", acks_late=True, reject_on_worker_lost=True)
def adversarial_try_task(*, try_id: int) -> str:
    """Score a writer's try with its round's models. Safe to run twice: a try scored (or
    failed) already is left alone."""
    attempt = AdversarialTry.objects.filter(pk=try_id).only("status").first()
    if attempt is None:
        return "gone"
    done = adversarial_try_score(try_id=try_id)
    return str(done.status) if done is not None else "gone"

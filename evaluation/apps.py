from dataclasses import replace

from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        from django.conf import settings

        from core.jobs import job_kind_register
        from evaluation.audit.services import AUDIT_JOB, CHUNK_JOB
        from evaluation.audit.tasks import audit_analyse_enqueue, audit_chunk_enqueue
        from evaluation.cloze.services import CLOZE_RUN_JOB
        from evaluation.generation_jobs.services import GENERATION_JOB
        from evaluation.lm import kernels, model_cache
        from evaluation.runs.progress import EVALUATION_RUN_JOB
        from evaluation.tasks import evaluation_run_enqueue, generation_job_enqueue

        # the sweep (core.jobs) queues a run whose worker was lost again; a cloze run,
        # started by a command, is marked failed
        job_kind_register(replace(EVALUATION_RUN_JOB, requeue=lambda pk: evaluation_run_enqueue(run_id=pk)))
        job_kind_register(CLOZE_RUN_JOB)
        job_kind_register(replace(GENERATION_JOB, requeue=lambda pk: generation_job_enqueue(job_id=pk)))
        job_kind_register(replace(CHUNK_JOB, requeue=lambda pk: audit_chunk_enqueue(chunk_id=pk)))
        job_kind_register(replace(AUDIT_JOB, requeue=lambda pk: audit_analyse_enqueue(audit_id=pk)))
        model_cache.configure(
            budget_mb=settings.WINNOW_MODEL_CACHE_MB, convert_dir=settings.WINNOW_MODEL_CACHE_DIR
        )
        kernels.configure(settings.WINNOW_KERNEL_DIR, settings.WINNOW_NATIVE_KERNELS)

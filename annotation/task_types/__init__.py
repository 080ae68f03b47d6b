"""The annotation tasks: one class per task, grouped by family, and their registry.

- ``winograd``: switchability, associativity (Trichelair et al.);
- ``winowhy``: reason writing, reason plausibility, knowledge type (WinoWhy);
- ``comve``: ComVE writing, check, rewrite, and the plausibility of a model's explanations;
- ``adversarial``: Winograd twin pairs and ComVE pairs written with models in the loop.
- ``validation``: validation of items written with models in the loop (adversarial rounds).

Each class holds its spec (answers, K, instructions: ``annotation.answers.TaskSpec``), its
template (``templates/annotation/tasks/<task>.html``) and its hooks (``base.TaskType``).
Adding a task: a value of ``annotation.models.Task``, one class in its family's module,
listed in :data:`TASK_TYPES`, and one template; ``tests/annotation/test_task_types.py``
fails until all of them are there.
"""

from __future__ import annotations

from typing import Any

from annotation.answers import AnswerError, TaskSpec
from annotation.answers import answer_clean as _spec_answer_clean
from annotation.task_types.adversarial import AdversarialComVETask, AdversarialWinogradTask
from annotation.task_types.base import (
    AggregatedItem,
    AggregateFinish,
    ContextLine,
    DataItem,
    ItemAggregate,
    TaskType,
    schema_context,
)
from annotation.task_types.comve import (
    ComVECheckTask,
    ComVERewriteTask,
    ComVEWritingTask,
    ExplanationPlausibilityTask,
    comve_has_options,
)
from annotation.task_types.validation import AdversarialValidationTask
from annotation.task_types.winograd import AssociativityTask, SwitchabilityTask
from annotation.task_types.winowhy import KnowledgeTypeTask, ReasonPlausibilityTask, ReasonWritingTask

__all__ = [
    "TASKS",
    "TASK_TYPES",
    "AggregateFinish",
    "AggregatedItem",
    "ContextLine",
    "DataItem",
    "ItemAggregate",
    "TaskType",
    "answer_clean",
    "answer_key",
    "comve_has_options",
    "schema_context",
    "task_spec",
    "task_type",
]

#: Every task's definition, by name (a value of ``annotation.models.Task``).
TASK_TYPES: dict[str, TaskType] = {
    t.name: t
    for t in (
        SwitchabilityTask(),
        AssociativityTask(),
        ReasonWritingTask(),
        ReasonPlausibilityTask(),
        KnowledgeTypeTask(),
        ComVEWritingTask(),
        ComVECheckTask(),
        ComVERewriteTask(),
        ExplanationPlausibilityTask(),
        AdversarialWinogradTask(),
        AdversarialComVETask(),
        AdversarialValidationTask(),
    )
}
#: Every task's spec, by name: what the tasks' classes hold.
TASKS: dict[str, TaskSpec] = {name: t.spec for name, t in TASK_TYPES.items()}


def task_type(name: str) -> TaskType:
    """The definition of the task ``name``; AnswerError (naming the tasks) when unknown."""
    try:
        return TASK_TYPES[name]
    except KeyError:
        raise AnswerError(f"task: unknown task {name!r}; one of {', '.join(TASK_TYPES)}") from None


def task_spec(name: str) -> TaskSpec:
    """The spec of the task ``name``; AnswerError (naming the tasks) when unknown."""
    return task_type(name).spec


def answer_clean(
    task: str,
    *,
    answer: str = "",
    text: str = "",
    payload: dict[str, Any] | None = None,
    has_options: bool = True,
) -> tuple[str, str, dict[str, Any]]:
    """Validate and normalise an answer for ``task``: (answer, text, payload).

    Raises AnswerError naming the field and the reason (the task too, when unknown)."""
    return _spec_answer_clean(
        task_spec(task), answer=answer, text=text, payload=payload, has_options=has_options
    )


def answer_key(task: str, answer: str, payload: dict[str, Any]) -> str:
    """The canonical string compared with a gold answer ("1:B" for ComVE check); see
    :meth:`annotation.answers.TaskSpec.answer_key`."""
    definition = TASK_TYPES.get(task)
    return definition.spec.answer_key(answer, payload) if definition is not None else answer

"""Campaigns for tests: a campaign of any task over items made for it, and the judgments of
K annotators on it (through the services, as the pages write them)."""

from collections.abc import Callable
from typing import Any

import factory
from django.contrib.auth import get_user_model

from annotation.models import (
    AdversarialItem,
    AdversarialRound,
    AdversarialStatus,
    Campaign,
    CampaignItem,
    Pipeline,
    PipelineKind,
    Task,
    ValidationRule,
    Verdict,
)
from annotation.services import campaign_create
from annotation.task_types import task_spec
from datasets.models import Explanation
from tests.annotation.answering import annotators, answer_all
from tests.datasets.factories import ComVEItemFactory, ReasonFactory, SchemaFactory


class CampaignFactory(factory.django.DjangoModelFactory[Campaign]):
    """A campaign row as it is (no items: :func:`campaign_for` selects items as a curator does)."""

    class Meta:
        model = Campaign

    name = factory.Sequence(lambda n: f"campaign-{n}")
    task = Task.SWITCHABILITY
    judgments_per_item = 3


class CampaignItemFactory(factory.django.DjangoModelFactory[CampaignItem]):
    class Meta:
        model = CampaignItem

    campaign = factory.SubFactory(CampaignFactory)
    schema = factory.SubFactory(SchemaFactory)


def _explanation() -> Explanation:
    return Explanation.objects.create(
        comve_item=ComVEItemFactory.create(),
        text="an elephant is much bigger than a fridge.",
        run_id=1,
        model_name="tiny",
    )


#: A twin pair as a writer keeps it (WinoGrande's form; docs/adversarial.md).
TWINS = {
    "sentence": "The trophy doesn't fit into the suitcase because [it] is too large.",
    "twin": "The trophy doesn't fit into the suitcase because [it] is too small.",
    "candidate_a": "the trophy",
    "candidate_b": "the suitcase",
    "answer": "A",
    "twin_answer": "B",
}
#: A ComVE pair as a writer keeps it.
COMVE_PAIR = {
    "statement_0": "He put a turkey into the fridge.",
    "statement_1": "He put an elephant into the fridge.",
    "false_index": 1,
}


def adversarial_round(
    *,
    kind: str = PipelineKind.ADVERSARIAL_WINOGRAD,
    collection: str = "adversarial",
    number: int | None = None,
    rule: str = ValidationRule.UNANIMOUS,
    share_unfooled: float = 0.0,
) -> AdversarialRound:
    """A round (and its pipeline row, with no stages) of ``collection``, numbered after its last."""
    number = number or AdversarialRound.objects.filter(pipeline__collection=collection).count() + 1
    pipeline = Pipeline.objects.create(name=f"{collection}-round-{number}", kind=kind, collection=collection)
    return AdversarialRound.objects.create(
        pipeline=pipeline,
        number=number,
        models_in_loop=[{"name": "SmolLM2-135M-Instruct.Q4_1", "sha256": "0" * 64}],
        method="partial",
        rule=rule,
        share_unfooled=share_unfooled,
    )


def adversarial_item(
    *,
    round: AdversarialRound | None = None,
    writer: Any = None,
    status: str = AdversarialStatus.KEPT,
    fooled: bool = True,
    content: dict[str, Any] | None = None,
) -> AdversarialItem:
    """A written item as the writing stage leaves it (kept, or retracted, or being written)."""
    round = round or adversarial_round()
    if writer is None:
        n = AdversarialItem.objects.count()
        writer = get_user_model().objects.create_user(username=f"writer-{round.pk}-{n}", password="pw")
    if content is None:
        content = dict(COMVE_PAIR if round.pipeline.kind == PipelineKind.ADVERSARIAL_COMVE else TWINS)
    return AdversarialItem.objects.create(
        round=round,
        writer=writer,
        status=status,
        content=content,
        verdict=Verdict.ONE if fooled else Verdict.NONE,
        fooled=["SmolLM2-135M-Instruct.Q4_1"] if fooled else [],
        tries=2 if fooled else 1,
    )


#: One new data-set row of each kind a task works on.
ITEM_MAKERS: dict[str, Callable[[], Any]] = {
    "schemas": SchemaFactory.create,
    "reasons": ReasonFactory.create,
    "comve": ComVEItemFactory.create,
    "explanations": _explanation,
    "adversarial": adversarial_item,
}


def campaign_for(
    task: str, *, name: str | None = None, items: int = 1, k: int | None = None, **options: Any
) -> Campaign:
    """A campaign of ``task`` (``campaign_create``, the curator's service) over ``items``
    new rows of the first kind the task works on (writing slots for ComVE writing), with
    the task's K unless ``k`` is given."""
    kind = task_spec(task).item_kinds[0]
    name = name or f"{task.replace('_', '-')}-campaign"
    if kind == "slots":
        return campaign_create(name=name, task=task, items=kind, slots=items, k=k, **options)
    ids = [ITEM_MAKERS[kind]().pk for _ in range(items)]
    return campaign_create(name=name, task=task, items=kind, ids=ids, k=k, **options)


#: A valid answer to each task (keyword arguments of ``judgment_submit``).
COMVE_WRITTEN = {
    "statement_0": "He drank a glass of milk.",
    "statement_1": "He drank a glass of stones.",
    "false_index": "1",
    "option_a": "Stones cannot be drunk.",
    "option_b": "Milk is white.",
    "option_c": "Glasses are made of glass.",
    "correct_option": "A",
    "references": ["Nobody drinks stones.", "Stones are solid.", "A stone is not a drink."],
}
ANSWERS: dict[str, dict[str, Any]] = {
    Task.SWITCHABILITY: {"answer": "switchable"},
    Task.ASSOCIATIVITY: {"answer": "not_associative"},
    Task.REASON_WRITING: {"text": "a big thing does not fit into a smaller one"},
    Task.REASON_PLAUSIBILITY: {"answer": "plausible"},
    Task.KNOWLEDGE_TYPE: {"answer": "Property"},
    Task.COMVE_WRITING: {"payload": COMVE_WRITTEN},
    Task.COMVE_CHECK: {"answer": "1", "payload": {"option": "A"}},
    Task.COMVE_REWRITE: {"payload": COMVE_WRITTEN},
    Task.EXPLANATION_PLAUSIBILITY: {"answer": "plausible"},
    # a valid answer of adversarial writing, which only its own page records (the item kept or
    # retracted through evaluation.adversarial); the annotate page's form is refused
    Task.ADVERSARIAL_WINOGRAD: {"answer": "retracted"},
    Task.ADVERSARIAL_COMVE: {"answer": "retracted"},
    Task.ADVERSARIAL_VALIDATION: {"answer": "correct"},
}


def judgments_for(
    campaign: Campaign,
    k: int | None = None,
    *,
    answer: Callable[[Any, int], dict[str, Any]] | None = None,
    prefix: str = "judge",
) -> list[Any]:
    """``k`` new annotators (the campaign's K without it) each answer every item they are
    given: ``answer(item, annotator's index)``, by default a valid answer of the task
    (:data:`ANSWERS`). Returns the annotators."""
    people = annotators(campaign.judgments_per_item if k is None else k, prefix)
    answer_all(campaign, people, answer or (lambda item, i: ANSWERS[campaign.task]))
    return people


def form_fields(task: str) -> dict[str, str]:
    """:data:`ANSWERS` of ``task`` as the annotate page's form posts it."""
    answer = ANSWERS[task]
    fields = {name: str(value) for name, value in answer.items() if name != "payload"}
    for name, value in answer.get("payload", {}).items():
        if name == "references":
            fields.update({f"reference_{n}": ref for n, ref in enumerate(value, 1)})
        else:
            fields[name] = str(value)
    return fields


def adversarial_writing_tasks(monkeypatch: Any) -> None:
    """The two writing tasks of adversarial rounds (issue 27) are another branch's classes
    (``annotation.task_types.adversarial``). Until they are registered, a writing-slot task
    with K = 1 stands in under their names, so that a round's writing campaign can be
    created; once they are there this does nothing and the tests run on the real ones."""
    from annotation.answers import TaskSpec
    from annotation.task_types import TASK_TYPES, TASKS
    from annotation.task_types.comve import ComVEWritingTask

    for task in (Task.ADVERSARIAL_WINOGRAD, Task.ADVERSARIAL_COMVE):
        if task in TASK_TYPES:
            continue
        stand_in = type(
            f"StandIn{task.name.title()}",
            (ComVEWritingTask,),
            {"name": task, "spec": TaskSpec(task, str(task.label), ("slots",), 1, writes_comve=True)},
        )()
        monkeypatch.setitem(TASK_TYPES, task, stand_in)
        monkeypatch.setitem(TASKS, task, stand_in.spec)

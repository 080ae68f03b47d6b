"""Adversarial rounds, items and tries made directly as rows (issue 27), for the figures,
the crowd bonus, the releases and evaluate: the writer's and the validators' pages that
make them in use are other tests' concern."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User

from annotation.models import (
    AdversarialItem,
    AdversarialRound,
    AdversarialTry,
    Campaign,
    Participant,
    Pipeline,
    PipelineKind,
    StudyLink,
    Task,
    TryStatus,
)
from datasets.models import ComVEItem, ComVESplit, Schema

#: The writing campaign's task: a writing task (one slot per item, K = 1) that every branch
#: registers; the adversarial writing task's class comes with the writer's side.
WRITING_TASK = Task.COMVE_WRITING
SHA = {"smollm2": "a" * 64, "tiny": "b" * 64, "big": "c" * 64}


def make_round(
    collection: str = "adv",
    number: int = 1,
    models: tuple[str, ...] = ("smollm2",),
    *,
    comve: bool = False,
    rule: str = "unanimous",
) -> AdversarialRound:
    kind = PipelineKind.ADVERSARIAL_COMVE if comve else PipelineKind.ADVERSARIAL_WINOGRAD
    pipeline = Pipeline.objects.create(name=f"{collection}-round-{number}", kind=kind, collection=collection)
    return AdversarialRound.objects.create(
        pipeline=pipeline,
        number=number,
        models_in_loop=[{"name": m, "sha256": SHA.get(m, "d" * 64)} for m in models],
        method="partial",
        rule=rule,
    )


def make_writer(name: str) -> User:
    return User.objects.create_user(username=name, password="pw-" + name)


def make_participant(
    name: str,
    *,
    reward: str | None = None,
    fooling_bonus: str = "0",
    bonus: str = "0",
    decision: str = "approve",
    link: StudyLink | None = None,
) -> Participant:
    """A study-link participant (their account named ``name``) of a writing campaign."""
    if link is None:
        campaign = Campaign.objects.create(name=f"write-{name}", task=WRITING_TASK, judgments_per_item=1)
        link = StudyLink.objects.create(
            campaign=campaign,
            platform="prolific",
            consent="ok",
            completion_code="DONE1",
            reward=None if reward is None else Decimal(reward),
            fooling_bonus=Decimal(fooling_bonus),
        )
    user = make_writer(name)
    return Participant.objects.create(
        link=link, external_id=f"PID-{name}", user=user, decision=decision, bonus=Decimal(bonus)
    )


def _verdicts(models: list[str], fooled: list[str], answers: tuple[str, str]) -> dict[str, Any]:
    out = {}
    for name in models:
        wrong = name in fooled
        twins = [
            {
                "choice": ("B" if right == "A" else "A") if wrong and index == 0 else right,
                "right": right,
                "scores": [-1.0, -1.5],
                "margin": -0.5 if wrong and index == 0 else 0.5,
                "fooled": wrong and index == 0,
            }
            for index, right in enumerate(answers)
        ]
        out[name] = {
            "sha256": SHA.get(name, "d" * 64),
            "method": "partial",
            "twins": twins,
            "verdict": "one" if wrong else "none",
        }
    return out


def make_item(
    round_: AdversarialRound,
    writer: User,
    *,
    status: str = "kept",
    fooled: tuple[str, ...] = (),
    tries: int = 1,
    seconds: float | None = 60.0,
    validation: str = "not_sent",
    votes: dict[str, int] | None = None,
    key: str = "",
) -> AdversarialItem:
    """An item of ``round_`` by ``writer``: ``tries`` tries (the last one kept, when kept),
    and, kept, the rows it made (a twin pair of schemas in the round's collection, or a
    ComVE item for a ComVE round)."""
    collection = round_.pipeline.collection
    models = [m["name"] for m in round_.models_in_loop]
    fooled_list = [m for m in models if m in fooled]
    verdict = ("one" if fooled_list else "none") if status == "kept" else ""
    item = AdversarialItem.objects.create(
        round=round_,
        writer=writer,
        status=status,
        verdict=verdict,
        fooled=fooled_list if status == "kept" else [],
        tries=tries,
        seconds=seconds,
        validation=validation,
        votes=votes or {},
    )
    key = key or f"r{round_.number}-{item.pk}"
    content = {
        "sentence": f"The trophy {key} does not fit in the suitcase because [it] is too big.",
        "twin": f"The trophy {key} does not fit in the suitcase because [it] is too small.",
        "candidate_a": "the trophy",
        "candidate_b": "the suitcase",
        "answer": "A",
        "twin_answer": "B",
    }
    for number in range(1, tries + 1):
        AdversarialTry.objects.create(
            item=item,
            number=number,
            content=content,
            status=TryStatus.SCORED,
            verdicts=_verdicts(models, fooled_list if number == tries else [], ("A", "B")),
            verdict=verdict if number == tries else "none",
        )
    if status != "kept":
        return item
    item.content = content
    if round_.pipeline.kind == PipelineKind.ADVERSARIAL_COMVE:
        item.comve_item = ComVEItem.objects.create(
            dataset="comve",
            collection=collection,
            split=ComVESplit.PILOT,
            external_id=key,
            statement_0=f"He put {key} in the fridge.",
            statement_1=f"He put the fridge in {key}.",
            false_index=1,
            has_a=True,
            source_file=f"campaign:{collection}",
            source_row=1,
            file_checksum="e" * 64,
        )
    else:
        schema = Schema.objects.create(
            collection=collection,
            external_id=f"{key}-1",
            text_before=f"The trophy {key} does not fit in the suitcase because",
            pronoun="it",
            text_after="is too big.",
            candidate_a="the trophy",
            candidate_b="the suitcase",
            answer="A",
            source="adversarial",
            source_file=f"campaign:{collection}",
            source_row=1,
            file_checksum="e" * 64,
        )
        twin = Schema.objects.create(
            collection=collection,
            external_id=f"{key}-2",
            text_before=f"The trophy {key} does not fit in the suitcase because",
            pronoun="it",
            text_after="is too small.",
            candidate_a="the trophy",
            candidate_b="the suitcase",
            answer="B",
            source="adversarial",
            source_file=f"campaign:{collection}",
            source_row=2,
            file_checksum="e" * 64,
            twin=schema,
        )
        schema.twin = twin
        schema.save()
        item.schema, item.twin = schema, twin
    item.save()
    return item

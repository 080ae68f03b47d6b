"""Small synthetic items and releases for the release tests."""

from typing import Any

from django.contrib.auth.models import Group, User

from core.roles import Role
from datasets.models import ComVEItem, Reason, Schema
from releases import services
from releases.models import Release


def make_schemas(n: int = 4, collection: str = "wsc273") -> list[Schema]:
    schemas = [
        Schema.objects.create(
            collection=collection,
            external_id=str(i),
            text_before=f"The trophy {i} does not fit in the suitcase because",
            pronoun="it",
            text_after="is too big.",
            candidate_a="the trophy",
            candidate_b="the suitcase",
            answer="A" if i % 2 == 0 else "B",
            source="test",
            switched_text=f"The suitcase {i} does not fit in the trophy because [it] is too big.",
            switchable=i % 2 == 0,
            associative=i % 3 == 0,
            knowledge_types=["Property"] if i % 2 else ["Object", "Spatial"],
            source_file="test/wsc.json",
            source_row=i + 1,
            file_checksum="0" * 64,
        )
        for i in range(n)
    ]
    for a, b in zip(schemas[::2], schemas[1::2], strict=False):
        a.twin, b.twin = b, a
        a.save()
        b.save()
    return schemas


def make_reasons(schemas: list[Schema], per_schema: int = 3) -> list[Reason]:
    labels = ["positive", "acceptable", "negative"]
    scores = [1.0, 0.6, 0.0]
    return [
        Reason.objects.create(
            schema=schema,
            position=p,
            text=f"reason {p} for {schema.external_id} <b>crowd text</b>",
            origin=["human", "reverse", "generated"][p % 3],
            plausibility=scores[p % 3],
            label=labels[p % 3],
            source_file="test/winowhy.json",
            source_row=p + 1,
            file_checksum="1" * 64,
        )
        for schema in schemas
        for p in range(per_schema)
    ]


def make_comve(
    n: int = 3, split: str = "test", dataset: str = "comve", has_c: bool = True
) -> list[ComVEItem]:
    return [
        ComVEItem.objects.create(
            dataset=dataset,
            split=split,
            external_id=str(100 + i),
            statement_0=f"He put an elephant {i} into the fridge.",
            statement_1=f"He put a turkey {i} into the fridge.",
            false_index=0,
            false_statement=f"He put an elephant {i} into the fridge.",
            option_a="An elephant is much bigger than a fridge.",
            option_b="Elephants are usually gray.",
            option_c='An elephant cannot eat a fridge, "really".',
            correct_option="A",
            references=["Elephants are too big for fridges.", "A fridge is small, an elephant, large"],
            has_a=True,
            has_b=True,
            has_c=has_c,
            source_file="test/comve.csv",
            source_row=i + 1,
            file_checksum="2" * 64,
        )
        for i in range(n)
    ]


def create_release(
    captured: Any, *, user: Any, name: str = "wsc", dataset: str = "wsc", version: str = "1.0.0", **kw: Any
) -> Release:
    """release_create with its after-commit build run (``captured`` is django_capture_on_commit_callbacks)."""
    with captured(execute=True):
        release = services.release_create(name=name, dataset=dataset, version=version, user=user, **kw)
    release.refresh_from_db()
    return release


def published_release(captured: Any, *, user: Any, **kw: Any) -> Release:
    release = create_release(captured, user=user, **kw)
    services.release_approve(release=release, user=user)
    return services.release_publish(release=release, user=user)


def make_curator(username: str = "cleo") -> Any:
    """Another curator (password "pw-<username>", as the role fixtures of tests/conftest.py)."""
    user = User.objects.create_user(username=username, password=f"pw-{username}")
    user.groups.add(Group.objects.get_or_create(name=Role.CURATOR.value)[0])
    return user

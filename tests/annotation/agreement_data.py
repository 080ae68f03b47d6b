"""Test data for the agreement tests: WinoWhy schemas and reasons, small campaigns.

``winowhy_reasons`` uses the data set importer (``datasets.services.dataset_import``) when the
branch has it, else writes Schema and Reason rows straight from the JSON (same keys as the
importer: collection wsc273, external_id = question index, position = index in its list).
"""

import hashlib
import json
from pathlib import Path
from typing import Any

from annotation.models import Campaign, CampaignItem, Judgment
from datasets.models import Reason, ReasonOrigin, Schema

ORIGINS = {"human": ReasonOrigin.HUMAN, "gpt": ReasonOrigin.GENERATED, "reverse": ReasonOrigin.REVERSE}
CAT_REF_NAMES = {"Temporal": "Eventuality"}


def _label(score: float) -> str:
    votes = round(score * 5)
    return "positive" if votes >= 4 else "negative" if votes <= 1 else "acceptable"


def winowhy_reasons(data_dir: Path, *, questions: int | None = None) -> int:
    """Schema and Reason rows for the first ``questions`` WinoWhy questions (all by default)."""
    path = data_dir / "winowhy" / "winowhy.json"
    cat_ref = data_dir / "winowhy" / "cat_ref.json"
    if questions is None:
        try:
            from datasets.services import dataset_import  # type: ignore[attr-defined]
        except ImportError:
            pass
        else:
            dataset_import(format="winowhy", paths=[path], options={"categories": cat_ref})
            return Reason.objects.count()
    raw = path.read_bytes()
    checksum = hashlib.sha256(raw).hexdigest()
    data = json.loads(raw)[: questions or None]
    types: dict[int, list[str]] = {}
    for name, indexes in json.loads(cat_ref.read_text(encoding="utf-8")).items():
        for index in indexes:
            types.setdefault(index, []).append(CAT_REF_NAMES.get(name, name))
    provenance = {"source_file": path.name, "file_checksum": checksum}
    schemas = Schema.objects.bulk_create(
        [
            Schema(
                collection="wsc273",
                external_id=str(i),
                text_before=q["text"]["txt1"],
                pronoun=q["text"]["pron"],
                text_after=q["text"]["txt2"],
                candidate_a=q["answers"][0],
                candidate_b=q["answers"][1],
                answer=q["correctAnswer"].strip(" .")[:1],
                source=q.get("source", ""),
                knowledge_types=sorted(types.get(i, [])),
                source_row=i + 1,
                **provenance,
            )
            for i, q in enumerate(data)
        ]
    )
    Reason.objects.bulk_create(
        [
            Reason(
                schema=schema,
                position=p,
                text=r[0].strip(),
                origin=ORIGINS[r[1]],
                plausibility=r[2],
                label=_label(r[2]),
                source_label=r[3],
                source_row=i + 1,
                **provenance,
            )
            for i, (schema, q) in enumerate(zip(schemas, data, strict=True))
            for p, r in enumerate(q["reasons"])
        ]
    )
    return Reason.objects.count()


def campaign_with_votes(
    django_user_model: Any, name: str, task: str, votes: list[list[str]], **campaign: Any
) -> Campaign:
    """A campaign whose item i got the answers votes[i] from annotators vote-rater-1.. in order."""
    c = Campaign.objects.create(name=name, task=task, judgments_per_item=max(map(len, votes)), **campaign)
    width = max(map(len, votes))
    users = [
        django_user_model.objects.get_or_create(username=f"{name}-rater-{r + 1}")[0] for r in range(width)
    ]
    for answers in votes:
        item = CampaignItem.objects.create(campaign=c, judgment_count=len(answers))
        Judgment.objects.bulk_create(
            [Judgment(campaign_item=item, annotator=users[r], answer=a) for r, a in enumerate(answers)]
        )
    return c

"""Test data for the agreement tests: WinoWhy schemas and reasons, small campaigns.

``winowhy_reasons`` imports them with the data set importer (``datasets.services.dataset_import``).
"""

import json
import tempfile
from pathlib import Path
from typing import Any

from annotation.models import Campaign, CampaignItem, Judgment
from datasets.models import Reason
from datasets.services import dataset_import


def winowhy_reasons(data_dir: Path, *, questions: int | None = None) -> int:
    """Schema and Reason rows for the first ``questions`` WinoWhy questions (all by default),
    imported through the data set importer (a subset goes through a truncated copy)."""
    path = data_dir / "winowhy" / "winowhy.json"
    cat_ref = data_dir / "winowhy" / "cat_ref.json"
    if questions is None:
        dataset_import(format="winowhy", paths=[path], options={"categories": cat_ref})
        return Reason.objects.count()
    with tempfile.TemporaryDirectory() as tmp:
        subset = Path(tmp) / "winowhy.json"
        subset.write_text(json.dumps(json.loads(path.read_bytes())[:questions]), encoding="utf-8")
        types = {
            name: [i for i in indexes if i < questions]
            for name, indexes in json.loads(cat_ref.read_text(encoding="utf-8")).items()
        }
        subset_types = Path(tmp) / "cat_ref.json"
        subset_types.write_text(json.dumps(types), encoding="utf-8")
        dataset_import(format="winowhy", paths=[subset], options={"categories": subset_types})
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

"""Writes of the datasets app, one module per sub-domain.

Callers import from here (``from datasets.services import dataset_import``); the modules
behind are an arrangement of this package, not an interface:

- ``imports``: ``dataset_import``, the one way files enter Winnow, with the writers of each
  family (``winograd``, ``comve``, ``reasons``) and what they share (``rows``);
- ``collections``: what a curator says of an own collection, for its release cards
  (``collection_describe``);
- ``reasons``: also a language model's generated reasons (``generated_reasons_add``);
- ``campaign_rows``: rows a campaign creates (written reasons, written or rewritten ComVE
  items, written twin pairs), recorded with their provenance like an import (``CampaignRows``).
"""

from datasets.importers.base import DatasetImportError, ImportError_
from datasets.services.campaign_rows import (
    CampaignRows,
    NewComVEItem,
    NewReason,
    NewTwinPair,
    RewrittenComVEItem,
    SourceJudgment,
    TwinQuestion,
    WrittenRow,
    campaign_source_file,
    comve_item_values,
    reasons_copy,
)
from datasets.services.collections import CARD_FIELDS as COLLECTION_CARD_FIELDS
from datasets.services.collections import collection_describe
from datasets.services.imports import ImportResult, dataset_import
from datasets.services.reasons import GeneratedReasons, generated_reasons_add

__all__ = [
    "COLLECTION_CARD_FIELDS",
    "CampaignRows",
    "DatasetImportError",
    "GeneratedReasons",
    "ImportError_",
    "ImportResult",
    "NewComVEItem",
    "NewReason",
    "NewTwinPair",
    "RewrittenComVEItem",
    "SourceJudgment",
    "TwinQuestion",
    "WrittenRow",
    "campaign_source_file",
    "collection_describe",
    "comve_item_values",
    "dataset_import",
    "generated_reasons_add",
    "reasons_copy",
]

"""Parsers of the public data-set formats and of a curator's own items into plain records (no Django imports).

One module per format; :mod:`datasets.services` writes what they return.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from datasets.importers.base import DatasetImportError, ImportError_
from datasets.importers.comve import parse_comve
from datasets.importers.custom import parse_comve_items, parse_reasons, parse_schemas
from datasets.importers.records import ComVEData, ReasonRowsData, TrichelairData, WinoWhyData
from datasets.importers.senmaking import parse_senmaking
from datasets.importers.trichelair import parse_trichelair
from datasets.importers.winowhy import parse_winowhy

Parser = Callable[[list[Path], dict[str, Any]], WinoWhyData | TrichelairData | ComVEData | ReasonRowsData]

PARSERS: dict[str, Parser] = {
    "winowhy": parse_winowhy,
    "trichelair": parse_trichelair,
    "comve": parse_comve,
    "senmaking": parse_senmaking,
    "schemas": parse_schemas,
    "reasons": parse_reasons,
    "comve-items": parse_comve_items,
}

__all__ = ["PARSERS", "DatasetImportError", "ImportError_"]

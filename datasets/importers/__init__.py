"""Parsers of the public data-set formats into plain records (no Django imports).

One module per format; :mod:`datasets.services` writes what they return.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from datasets.importers.base import DatasetImportError, ImportError_
from datasets.importers.comve import parse_comve
from datasets.importers.records import ComVEData, TrichelairData, WinoWhyData
from datasets.importers.senmaking import parse_senmaking
from datasets.importers.trichelair import parse_trichelair
from datasets.importers.winowhy import parse_winowhy

Parser = Callable[[list[Path], dict[str, Any]], WinoWhyData | TrichelairData | ComVEData]

PARSERS: dict[str, Parser] = {
    "winowhy": parse_winowhy,
    "trichelair": parse_trichelair,
    "comve": parse_comve,
    "senmaking": parse_senmaking,
}

__all__ = ["PARSERS", "DatasetImportError", "ImportError_"]

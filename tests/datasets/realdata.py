"""Rows from the real data sets for the release tests, through the importers."""

from pathlib import Path

from datasets.services import dataset_import


def import_real_data(data_dir: Path) -> str:
    """Import WinoWhy, the Trichelair labels and ComVE test; says which loader it used."""
    dataset_import(
        format="winowhy",
        paths=[data_dir / "winowhy" / "winowhy.json"],
        options={"categories": data_dir / "winowhy" / "cat_ref.json"},
    )
    dataset_import(format="trichelair", paths=[data_dir / "wsc_switched"])
    dataset_import(format="comve", paths=[data_dir / "comve" / "test"])
    return "datasets.services.dataset_import"

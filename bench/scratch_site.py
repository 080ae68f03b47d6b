"""What the benches that set up a scratch site share: where the real data is, and the
environment of a site in a folder (its own SQLite database, var and media folders),
for the `manage.py` commands and workers they start."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """WINNOW_DATA_DIR, by default ../shared/data beside the checkout."""
    return Path(os.environ.get("WINNOW_DATA_DIR") or ROOT.parent / "shared" / "data").resolve()


def site_env(site: Path, **extra: str) -> dict[str, str]:
    """This process's environment for a site in ``site`` (no REDIS_URL: the embedded
    setup unless ``extra`` names a broker), plus ``extra``."""
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        WINNOW_VAR_DIR=str(site / "var"),
        WINNOW_MEDIA_ROOT=str(site / "media"),
        DATABASE_URL=f"sqlite:///{site / 'bench.sqlite3'}",
        WINNOW_DATA_DIR=str(data_dir()),
        PYTHONPATH=str(ROOT),
        TQDM_DISABLE="1",
    )
    env.pop("REDIS_URL", None)
    env.update(extra)
    return env

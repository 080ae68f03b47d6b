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


def kernel_dir() -> Path:
    """Where this checkout's native kernels are built (`manage.py models --build-kernels`,
    which `./winnow up` runs): WINNOW_KERNEL_DIR, else the kernels folder of WINNOW_VAR_DIR
    or of the checkout's var folder, as config/settings.py says."""
    configured = os.environ.get("WINNOW_KERNEL_DIR")
    if configured:
        return Path(configured)
    return Path(os.environ.get("WINNOW_VAR_DIR") or ROOT / "var") / "kernels"


def site_env(site: Path, **extra: str) -> dict[str, str]:
    """This process's environment for a site in ``site`` (no REDIS_URL: the embedded
    setup unless ``extra`` names a broker), plus ``extra``. The site's var folder is its
    own, but its native kernels are the checkout's (`kernel_dir`): a server set up by
    `./winnow up` has them built, and a scratch site must not measure a server without."""
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        WINNOW_KERNEL_DIR=str(kernel_dir()),
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

"""Loading a release folder with Hugging Face `datasets`, as a reader would: in a
subprocess run from a folder outside the project (Winnow's Django app `datasets` shadows
the Hugging Face package on the project's sys.path), offline."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

HF_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from datasets import load_dataset  # the Hugging Face library: cwd is not the project
    folder, config, split = sys.argv[1], sys.argv[2], sys.argv[3]
    ds = load_dataset(folder, config, split=split)
    print(json.dumps([dict(row) for row in ds], sort_keys=True))
    """
)


def hf_load(folder: Path | str, config: str, *, workdir: Path, split: str = "test") -> list[dict[str, Any]]:
    """The rows ``load_dataset(folder, config, split=split)`` gives, run from ``workdir``."""
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "load.py"
    script.write_text(HF_SCRIPT, encoding="utf-8")
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(workdir / "hf-home"),
        "PYTHONPATH": "",
    }
    result = subprocess.run(
        [sys.executable, str(script), str(folder), config, split],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows: list[dict[str, Any]] = json.loads(result.stdout.strip().splitlines()[-1])
    return rows

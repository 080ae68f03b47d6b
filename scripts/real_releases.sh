#!/usr/bin/env bash
# Import the public data sets and publish the releases the README's model figures use.
#
#   scripts/real_releases.sh [DATA_DIR]        (default: WINNOW_DATA_DIR or ../shared/data)
#
# Works on the database the settings point at (DATABASE_URL, else var/winnow.sqlite3).
# Imports are idempotent; a release that exists already is left as it is (a published
# release never changes), so the script can be run again. Publishes:
#   wsc273@1.0.0       the 273 schemas with Trichelair et al.'s labels (dataset wsc)
#   winowhy@1.0.0      the 4,095 WinoWhy reasons with their votes (dataset winowhy)
#   comve-test@1.0.0   ComVE test split (1,000 items)
#   comve-train@1.0.0  ComVE training split (10,000 items; the cloze analysis uses it)
#   senmaking@1.0.0    the Sen-Making pilot set of Wang et al. 2019 (2,021 items, their Table 1)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
DATA=${1:-${WINNOW_DATA_DIR:-../shared/data}}
[ -d "$DATA/winowhy" ] || { echo "no data in $DATA (see ../shared/data/README.md)" >&2; exit 2; }

$PY manage.py migrate --noinput -v 0
$PY manage.py import_dataset winowhy "$DATA/winowhy/winowhy.json" --categories "$DATA/winowhy/cat_ref.json"
$PY manage.py import_dataset trichelair "$DATA/wsc_switched"
for split in train test; do
  $PY manage.py import_dataset comve "$DATA/comve/$split"
done
$PY manage.py import_dataset senmaking "$DATA/senmaking/dataset.jsonl"

release() {  # NAME DATASET [release_create options]
  local name=$1 dataset=$2; shift 2
  if $PY manage.py shell -c "
import sys
from releases.models import Release
sys.exit(0 if Release.objects.filter(name='$name', version='1.0.0').exists() else 1)" >/dev/null 2>&1; then
    echo "$name@1.0.0 exists; left as it is"
    return
  fi
  $PY manage.py release_create "$name" --dataset "$dataset" --version 1.0.0 --build-now \
    --changelog "Built from ../shared/data by scripts/real_releases.sh" "$@"
  $PY manage.py release_approve "$name@1.0.0"
  $PY manage.py release_publish "$name@1.0.0"
}
release wsc273 wsc --collection wsc273
release winowhy winowhy --collection wsc273
release comve-test comve --split test
release comve-train comve --split train
release senmaking senmaking
$PY manage.py dataset_summary

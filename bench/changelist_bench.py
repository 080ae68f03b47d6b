"""How long the admin changelists take with 100,000 ComVE items and 100,000 reasons.

    python bench/changelist_bench.py          # fresh SQLite in a temp folder

Prints the time and number of queries of each changelist page (first page, a filtered
page and a search), so the "fast with 100,000 items" claim has a figure beside it.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    n = int(os.environ.get("ROWS", "100000"))
    with tempfile.TemporaryDirectory(prefix="winnow-admin-bench-") as tmp:
        os.environ["WINNOW_VAR_DIR"] = tmp
        os.environ.pop("DATABASE_URL", None)
        sys.path.insert(0, str(ROOT))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        from django.contrib.auth import get_user_model
        from django.core.management import call_command
        from django.db import connection
        from django.test import Client
        from django.test.utils import CaptureQueriesContext

        from datasets.models import ComVEItem, Reason, Schema

        call_command("migrate", verbosity=0)
        start = time.perf_counter()
        ComVEItem.objects.bulk_create(
            (
                ComVEItem(
                    split=("train", "dev", "test")[i % 3],
                    external_id=str(i),
                    statement_0=f"Statement zero number {i}.",
                    statement_1=f"Statement one number {i}.",
                    false_index=i % 2,
                    correct_option="ABC"[i % 3],
                    has_a=True,
                    has_b=True,
                    source_file="bench.csv",
                    source_row=i + 1,
                    file_checksum="0" * 64,
                )
                for i in range(n)
            ),
            batch_size=5000,
        )
        schemas = Schema.objects.bulk_create(
            Schema(
                collection="bench",
                external_id=str(i),
                text_before=f"Sentence {i} before",
                pronoun="it",
                text_after="after.",
                candidate_a="one",
                candidate_b="two",
                answer="AB"[i % 2],
                source_file="bench.json",
                source_row=i + 1,
                file_checksum="0" * 64,
            )
            for i in range(n // 15)
        )
        Reason.objects.bulk_create(
            (
                Reason(
                    schema=schemas[i // 15],
                    position=i % 15,
                    text=f"reason {i}",
                    origin=("human", "reverse", "generated")[i % 3],
                    plausibility=(i % 6) / 5,
                    label=("negative", "acceptable", "positive")[i % 3],
                    source_file="bench.json",
                    source_row=i // 15 + 1,
                    file_checksum="0" * 64,
                )
                for i in range(len(schemas) * 15)
            ),
            batch_size=5000,
        )
        print(
            f"created {n:,} ComVE items, {len(schemas):,} schemas, {len(schemas) * 15:,} reasons "
            f"in {time.perf_counter() - start:.1f} s"
        )
        admin = get_user_model().objects.create_superuser("bench", password="bench-password")
        client = Client()
        client.force_login(admin)
        for url in (
            "/admin/datasets/comveitem/",
            "/admin/datasets/comveitem/?split__exact=dev&has_b__exact=1",
            "/admin/datasets/comveitem/?q=number+4242",
            "/admin/datasets/reason/",
            "/admin/datasets/reason/?label__exact=positive&origin__exact=human",
            "/admin/datasets/schema/",
        ):
            client.get(url)  # warm up templates
            with CaptureQueriesContext(connection) as ctx:
                start = time.perf_counter()
                response = client.get(url)
                seconds = time.perf_counter() - start
            assert response.status_code == 200, url
            print(f"{url:70s} {seconds * 1000:7.0f} ms  {len(ctx.captured_queries):3d} queries")


if __name__ == "__main__":
    main()

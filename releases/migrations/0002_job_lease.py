"""A build's lease (core.jobs): owner, heartbeat, attempts and what happened.

On SQLite, adding a JSON column rebuilds the release table, which the published-release
guard triggers (datasets 0004) refer to: they are dropped first and created again after.
"""

import importlib

from django.db import migrations, models

_guards = importlib.import_module("datasets.migrations.0004_release_published_guards")


def _sqlite_only(statements):  # type: ignore[no-untyped-def]
    def run(apps, schema_editor):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            for statement in statements():
                schema_editor.execute(statement)

    return run


DROP = migrations.RunPython(_sqlite_only(_guards._sqlite_backward), _sqlite_only(_guards._sqlite_forward))
CREATE = migrations.RunPython(_sqlite_only(_guards._sqlite_forward), _sqlite_only(_guards._sqlite_backward))


class Migration(migrations.Migration):

    dependencies = [
        ('releases', '0001_initial'),
    ]

    operations = [
        DROP,
        migrations.AddField(
            model_name='release',
            name='attempts',
            field=models.PositiveSmallIntegerField(default=0, help_text='How many times a worker started it'),
        ),
        migrations.AddField(
            model_name='release',
            name='heartbeat_at',
            field=models.DateTimeField(blank=True, help_text='Last sign of life of that worker', null=True),
        ),
        migrations.AddField(
            model_name='release',
            name='job_events',
            field=models.JSONField(blank=True, default=list, help_text='What happened: lost workers, restarts'),
        ),
        migrations.AddField(
            model_name='release',
            name='lease_owner',
            field=models.CharField(blank=True, help_text='host:pid:token of the worker running it', max_length=120),
        ),
        CREATE,
    ]

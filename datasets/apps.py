from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_role_groups(**kwargs: Any) -> None:
    from django.contrib.auth.models import Group

    from config.roles import Role

    for role in Role:
        Group.objects.get_or_create(name=role.value)


class DatasetsConfig(AppConfig):
    name = "datasets"
    verbose_name = "Data sets and releases"

    def ready(self) -> None:
        post_migrate.connect(_ensure_role_groups, sender=self)

from typing import Any

from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.db.models.signals import m2m_changed, post_migrate, pre_delete


def _ensure_role_groups(*, using: str = "default", **kwargs: Any) -> None:
    from django.contrib.auth.models import Group

    from core.roles import Role

    for role in Role:  # on the database migrate ran on (the owner's alias, when set)
        Group.objects.using(using).get_or_create(name=role.value)


def _groups_changed(*, action: str, instance: Any, reverse: bool, pk_set: Any, **kwargs: Any) -> None:
    """A user's groups changed (either side of the relation): forget their cached roles."""
    from core.roles import roles_forget

    if action not in ("post_add", "post_remove", "pre_clear"):
        return
    if not reverse:  # user.groups.add/remove/clear
        roles_forget([instance.pk])
    elif action == "pre_clear":  # group.user_set.clear(): the members before they go
        roles_forget(list(instance.user_set.values_list("pk", flat=True)))
    else:  # group.user_set.add/remove
        roles_forget(pk_set or [])


def _group_deleted(*, instance: Any, **kwargs: Any) -> None:
    from core.roles import roles_forget

    roles_forget(list(instance.user_set.values_list("pk", flat=True)))


def _login_failed(*, credentials: dict[str, Any], request: Any = None, **kwargs: Any) -> None:
    from core.auth import client_address, login_failure_record

    login_failure_record(username=str(credentials.get("username") or ""), address=client_address(request))


def _logged_in(*, user: Any, **kwargs: Any) -> None:
    from core.auth import client_address, login_success_record

    login_success_record(username=user.get_username(), address=client_address(kwargs.get("request")))


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Winnow core"
    curator_admin = True  # curators lift sign-in lockouts (core.roles.curator_admin_access_grant)

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.contrib.auth.models import Group

        User = get_user_model()  # noqa: N806
        post_migrate.connect(_ensure_role_groups, sender=self)
        m2m_changed.connect(_groups_changed, sender=User.groups.through, dispatch_uid="winnow-roles")
        pre_delete.connect(_group_deleted, sender=Group, dispatch_uid="winnow-roles-group")
        user_login_failed.connect(_login_failed, dispatch_uid="winnow-login-throttle")
        user_logged_in.connect(_logged_in, dispatch_uid="winnow-login-throttle")

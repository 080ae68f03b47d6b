from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.auth import login_lockout_lift
from core.models import LoginThrottle


@admin.register(LoginThrottle)
class LoginThrottleAdmin(admin.ModelAdmin):
    """Failed sign-ins and lockouts; curators and admins lift a lockout here."""

    list_display = ("kind", "key", "failures", "window_started", "locked_until", "last_address")
    list_filter = ("kind",)
    search_fields = ("key", "last_address")
    readonly_fields = ("kind", "key", "failures", "window_started", "locked_until", "last_address")
    actions = ["lift"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Lift the lockout (sign-ins allowed again at once)", permissions=["change"])
    def lift(self, request: HttpRequest, queryset: QuerySet[LoginThrottle]) -> None:
        lifted = login_lockout_lift(throttles=queryset)
        messages.success(request, f"{lifted} lockout{'s' if lifted != 1 else ''} lifted.")

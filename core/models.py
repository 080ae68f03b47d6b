"""The core app's one table: failed sign-ins counted per account and per client address,
and the lockouts they lead to (issue 16: login throttling). Also lets Django send the app
post_migrate, which creates the role groups."""

from django.db import models


class ThrottleKind(models.TextChoices):
    ACCOUNT = "account", "account"
    ADDRESS = "address", "client address"


class LoginThrottle(models.Model):
    """Failed sign-ins of one account (by the user name typed) or one client address within
    the current window, and until when further attempts are refused. Deleting the row, or
    the admin's "lift" action, lets it sign in again at once."""

    kind = models.CharField(max_length=10, choices=ThrottleKind.choices)
    key = models.CharField(max_length=150, help_text="The user name typed, lower-cased, or the address")
    failures = models.PositiveIntegerField(default=0)
    window_started = models.DateTimeField()
    locked_until = models.DateTimeField(null=True, blank=True)
    last_address = models.CharField(max_length=64, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "key"], name="loginthrottle_unique_key")]
        ordering = ["-locked_until", "kind", "key"]
        verbose_name = "sign-in throttle"

    def __str__(self) -> str:
        return f"{self.kind} {self.key}: {self.failures} failures"

"""The core app's one table: failed sign-ins counted per account and per client address,
and the lockouts they lead to (issue 16: login throttling). Also lets Django send the app
post_migrate, which creates the role groups."""

from django.db import models


class ThrottleKind(models.TextChoices):
    ACCOUNT_ADDRESS = "pair", "account from one address"
    ACCOUNT = "account", "account (slowed down, never locked)"
    ADDRESS = "address", "client address"


class LoginThrottle(models.Model):
    """Failed sign-ins of one account from one client address, of one address, or of one
    account from all addresses (by the user name typed) within the current window, and until
    when further attempts are refused (core.auth). Deleting the row, or
    the admin's "lift" action, lets it sign in again at once."""

    kind = models.CharField(max_length=10, choices=ThrottleKind.choices)
    key = models.CharField(
        max_length=220, help_text="The user name typed, lower-cased, the address, or both as name|address"
    )
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


class JobLease(models.Model):
    """The fields of a long job's lease (core.jobs): who runs it, when it last showed it
    is alive, how many times it was started, and what happened to it."""

    lease_owner = models.CharField(
        max_length=120, blank=True, help_text="host:pid:token of the worker running it"
    )
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life of that worker")
    attempts = models.PositiveSmallIntegerField(default=0, help_text="How many times a worker started it")
    job_events = models.JSONField(default=list, blank=True, help_text="What happened: lost workers, restarts")

    class Meta:
        abstract = True

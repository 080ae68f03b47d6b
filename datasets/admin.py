"""Datasets admin."""

from datasets import admin_releases  # noqa: E402,F401  releases admin (issue 5)

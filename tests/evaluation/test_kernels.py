"""The native kernels (evaluation/lm/kernels.cpp) against the torch operations they replace.

They are built once per machine (`manage.py models --build-kernels`, which `./winnow test`
runs first); the `native` fixture builds them when needed. Where they cannot be built (no
g++), these tests skip, except in CI (WINNOW_REQUIRE_SERVICES=1), where that fails
(the fixture is in conftest.py: test_prepacked.py takes it too).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from evaluation.lm import kernels
from evaluation.lm.scorers import fast_llama, output_layer
from evaluation.lm.scorers.causal import loglikelihood
from tests.evaluation.test_prefix_tree import REQUESTS, alone


@contextmanager
def torch_operations():
    """The torch operations inside the block (as WINNOW_NATIVE_KERNELS=off)."""
    before = kernels._config["mode"]
    kernels.configure(mode="off")
    try:
        yield
    finally:
        kernels.configure(mode=before)


def test_rms_norm_is_transformers_norm(native) -> None:
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    torch.manual_seed(0)
    norm = LlamaRMSNorm(37, eps=1e-5)
    with torch.no_grad():
        norm.weight.copy_(torch.randn(37))
    x = torch.randn(53, 37) * 3
    wide = torch.zeros(53, 50)  # rows with a stride larger than their width
    out = wide[:, 5:42]
    native.rms_norm(x, norm.weight.detach(), 1e-5, out)
    torch.testing.assert_close(out, norm(x).detach(), rtol=2e-6, atol=2e-6)
    assert wide[:, :5].abs().sum() == 0 and wide[:, 42:].abs().sum() == 0  # nothing beside its rows


def test_rotary_is_transformers_rotary(native) -> None:
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    torch.manual_seed(0)
    n, heads, kv, d = 29, 4, 2, 8
    qkv = torch.randn(n, (heads + 2 * kv) * d)  # queries, keys, values
    angle = torch.randn(n, d // 2)
    cos, sin = torch.cat([angle.cos()] * 2, dim=-1), torch.cat([angle.sin()] * 2, dim=-1)
    out = torch.empty(n, heads + kv, d)
    native.rotary(qkv, heads + kv, cos, sin, out)
    q = qkv[:, : heads * d].view(1, n, heads, d).transpose(1, 2)
    k = qkv[:, heads * d : (heads + kv) * d].view(1, n, kv, d).transpose(1, 2)
    q_ref, k_ref = apply_rotary_pos_emb(q, k, cos[None], sin[None])
    torch.testing.assert_close(out[:, :heads], q_ref[0].transpose(0, 1), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(out[:, heads:], k_ref[0].transpose(0, 1), rtol=1e-6, atol=1e-6)


def test_swiglu_is_silu_times_up_in_place(native) -> None:
    torch.manual_seed(0)
    inter = 45
    gate_up = torch.randn(33, 2 * inter) * 6
    gate_up[0, :3] = torch.tensor([-100.0, 100.0, 0.0])  # exp's far ends
    expected = F.silu(gate_up[:, :inter]) * gate_up[:, inter:]
    up = gate_up[:, inter:].clone()
    native.swiglu(gate_up, inter)
    torch.testing.assert_close(gate_up[:, :inter], expected, rtol=2e-6, atol=1e-6)
    assert torch.equal(gate_up[:, inter:], up)


def test_block_lse_is_the_streaming_log_sum_exp(native) -> None:
    """Three blocks through the kernel give each row's log-sum-exp, maximum and block maxima."""
    torch.manual_seed(0)
    logits = torch.randn(21, 3 * 67) * 8
    top, total = torch.full((21,), float("-inf")), torch.zeros(21)
    block_top, new_top = torch.empty(21), torch.empty(21)
    for b in range(3):
        block = logits[:, b * 67 : (b + 1) * 67]  # rows with a stride larger than their width
        kept = block.clone()
        native.block_lse(block, top, total, block_top, new_top)
        assert torch.equal(block, kept)  # read only
        assert torch.equal(block_top, block.amax(dim=1))
        assert torch.equal(new_top, torch.maximum(top, block_top))
        top, new_top = new_top, top
    assert torch.equal(top, logits.amax(dim=1))
    torch.testing.assert_close(
        (top + total.log()).double(), torch.logsumexp(logits.double(), dim=1), rtol=0, atol=2e-6
    )


def _tree_row(seed: int, sequences: int, length: int, vocabulary: int) -> torch.Tensor:
    """`end` of one packed row holding the prefix tree of random sequences over a small
    vocabulary (so that they share prefixes), in depth-first order: `ancestor_intervals`."""
    from evaluation.lm.scorers.prefix_tree import PrefixTree, ancestor_intervals

    generator = torch.Generator().manual_seed(seed)
    inputs = [
        tuple(
            torch.randint(
                0,
                vocabulary,
                (int(torch.randint(1, length + 1, (1,), generator=generator)),),
                generator=generator,
            ).tolist()
        )
        for _ in range(sequences)
    ]
    tree = PrefixTree(inputs)
    return torch.tensor(ancestor_intervals(tree, list(tree.order)))


@pytest.mark.parametrize(("heads", "kv", "d", "threads"), [(4, 2, 16, 1), (9, 3, 64, 2), (2, 2, 32, 2)])
def test_tree_attention_is_masked_attention_over_each_path(native, heads, kv, d, threads) -> None:
    """Each query over its ancestors and itself (j <= i < end[j]), the grouped heads as
    SDPA takes them, against SDPA with the whole mask in float64 (as close as SDPA's own
    float32); with 2 threads each thread starts in the middle of a path (the ancestors of
    its first query)."""
    end = _tree_row(seed=d, sequences=40, length=30, vocabulary=3)
    n = len(end)
    assert n > 100 and int((end - torch.arange(n)).max()) > 1  # shared prefixes: a real tree
    torch.manual_seed(0)
    qkv = torch.randn(n, (heads + 2 * kv) * d) * 2
    qk = qkv[:, : (heads + kv) * d].contiguous().view(n, heads + kv, d)
    v = qkv[:, (heads + kv) * d :].view(n, kv, d)  # rows with a stride larger than their width
    out = torch.full((n, heads * d), float("nan"))
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        native.tree_attention(qk, heads, v, end, d**-0.5, out)
    finally:
        torch.set_num_threads(before)
    index = torch.arange(n)
    allowed = (index[None, :] <= index[:, None]) & (index[:, None] < end[None, :])
    q, k, vv = (t.transpose(0, 1)[None].double() for t in (qk[:, :heads], qk[:, heads:], v))
    exact = F.scaled_dot_product_attention(q, k, vv, attn_mask=allowed, scale=d**-0.5, enable_gqa=True)
    sdpa = F.scaled_dot_product_attention(
        q.float(), k.float(), vv.float(), attn_mask=allowed, scale=d**-0.5, enable_gqa=True
    )
    exact, sdpa = (t[0].transpose(0, 1).reshape(n, heads * d) for t in (exact, sdpa))
    # float32 rounding only: no further from the exact values than twice SDPA's own float32
    assert float((out.double() - exact).abs().max()) <= max(
        2 * float((sdpa.double() - exact).abs().max()), 1e-6
    )


def test_tree_attention_refuses_a_row_that_is_not_a_tree(native) -> None:
    qk, v, out = torch.randn(4, 3, 16), torch.randn(4, 1, 16), torch.empty(4, 32)
    with pytest.raises(RuntimeError, match="do not nest at 2"):
        native.tree_attention(qk, 2, v, torch.tensor([3, 3, 4, 4]), 0.25, out)
    with pytest.raises(RuntimeError, match=r"end\[1\] = 1 is not in \(1, 4\]"):
        native.tree_attention(qk, 2, v, torch.tensor([4, 1, 4, 4]), 0.25, out)
    with pytest.raises(RuntimeError, match=r"head size 8 \(16, 32, 64 or 128 expected\)"):
        native.tree_attention(
            torch.randn(4, 3, 8),
            2,
            torch.randn(4, 1, 8),
            torch.tensor([4, 4, 4, 4]),
            0.25,
            torch.empty(4, 16),
        )
    for d in fast_llama.TREE_HEAD_SIZES:  # the sizes the forward sends it
        native.tree_attention(
            torch.randn(4, 3, d),
            2,
            torch.randn(4, 1, d),
            torch.tensor([4, 4, 4, 4]),
            0.25,
            torch.empty(4, 2 * d),
        )


def test_target_rank_is_the_entry_and_torch_argmax(native) -> None:
    """Ties decided as torch's argmax does (its first maximum), wherever they fall."""
    torch.manual_seed(0)
    rows = torch.randn(6, 1500)
    rows[1, 700] = rows[1, 1400] = 9.0  # the target is the first of two maxima
    rows[2, 3] = rows[2, 1200] = 9.0  # the target is the second: not greedy
    rows[3, 1499] = 9.0  # the last entry
    rows[4, 0] = 9.0  # the first
    row = torch.tensor([0, 0, 1, 1, 2, 2, 3, 4, 5])
    target = torch.tensor([int(rows[0].argmax()), 5, 700, 1400, 3, 1200, 1499, 0, 17])
    value, greedy = torch.empty(9), torch.zeros(9, dtype=torch.bool)
    native.target_rank(rows, row, target, value, greedy)
    assert torch.equal(value, rows[row, target])
    assert torch.equal(greedy, rows[row].argmax(dim=1) == target)
    assert greedy.tolist() == [True, False, True, False, True, False, True, True, False]
    with pytest.raises(RuntimeError, match="target 0 .row 6, entry 1. is outside the rows"):
        native.target_rank(rows, torch.tensor([6]), torch.tensor([1]), value[:1], greedy[:1])


@pytest.mark.parametrize("lanes", ["torch's", None])
def test_the_lm_eval_normalization_is_the_same_on_both_paths(native, lanes, monkeypatch) -> None:
    """The same greedy flags, targets sharing rows included, and the same log-probabilities:
    bit for bit through `target_rank` (both take torch's log_softmax's entry), to a unit or
    two in the last place through `lm_eval_targets` (glibc's exp and log, not torch's)."""
    if lanes is None:
        monkeypatch.setattr(output_layer, "torch_lanes", lambda: None)
    torch.manual_seed(0)
    linear = torch.nn.Linear(16, 300, bias=False)
    hidden = torch.randn(40, 16) * 4
    owner = torch.cat([torch.arange(40), torch.randint(0, 40, (20,))])
    logits = hidden @ linear.weight.detach().t()
    targets = torch.cat([logits.argmax(dim=1), torch.randint(0, 300, (20,))])  # greedy and not
    head = output_layer.OutputLayer(linear, None, None, "lm-eval")
    with torch.inference_mode():
        fused = output_layer._score_rows(head, hidden, targets, owner)
        with torch_operations():
            plain = output_layer._score_rows(head, hidden, targets, owner)
    if lanes is None:
        assert torch.equal(fused[0], plain[0])
    else:
        torch.testing.assert_close(fused[0], plain[0], rtol=0, atol=4 * torch.finfo(torch.float32).eps * 16)
    assert torch.equal(fused[1], plain[1]) and bool(fused[1][:40].all())


@pytest.mark.parametrize("vocabulary", [49152, 49157, 40, 7])
def test_lm_eval_targets_adds_in_torch_order(native, vocabulary: int) -> None:
    """Against torch's own log_softmax and argmax: each target's entry to two units in the
    last place (at SmolLM2's 49,152 entries, half the rows' sums or more to the bit), and
    far closer with torch's vector width than with the other (the order of additions
    is what makes lm-eval's numbers); ties decided as argmax does (its first maximum)."""
    lanes = output_layer.torch_lanes()
    if lanes is None:
        pytest.skip(f"torch's vector width on {torch.backends.cpu.get_cpu_capability()} is not known here")
    torch.manual_seed(vocabulary)
    rows = torch.randn(48, vocabulary) * 4
    rows[1, 3] = rows[1, 5] = 30.0  # a tie: the first is greedy, the second not
    rows[2, 4] = 30.0
    rows[2, 6] = torch.nextafter(torch.tensor(30.0), torch.tensor(0.0))  # normalised, ties 4's
    row = torch.cat([torch.arange(48), torch.tensor([1, 1, 2, 2]), torch.randint(0, 48, (100,))])
    target = torch.cat([rows.argmax(dim=1), torch.tensor([3, 5, 4, 6]), torch.randint(0, vocabulary, (100,))])
    reference = torch.log_softmax(rows, dim=-1)
    expected_value, expected_greedy = reference[row, target], reference.argmax(dim=1)[row] == target

    def run(width: int) -> tuple[torch.Tensor, torch.Tensor]:
        value, greedy = torch.empty(len(row)), torch.empty(len(row), dtype=torch.bool)
        native.lm_eval_targets(rows, row, target, width, value, greedy)
        return value, greedy

    value, greedy = run(lanes)
    ulp = torch.finfo(torch.float32).eps * expected_value.abs().clamp(min=1)
    assert bool(((value - expected_value).abs() <= 2 * ulp).all())
    assert torch.equal(greedy, expected_greedy)
    assert greedy[48:52].tolist() == [True, False, True, False]
    if vocabulary > 1000:
        other, _ = run(24 - lanes)  # 8 where torch's is 16, and the other way
        assert (other - expected_value).abs().mean() > 4 * (value - expected_value).abs().mean()
    with pytest.raises(RuntimeError, match="lanes must be 8 or 16"):
        native.lm_eval_targets(rows, row, target, 4, *run(lanes))


def test_a_kernel_refuses_what_it_cannot_take(native) -> None:
    with pytest.raises(RuntimeError, match="float32 expected"):
        native.rms_norm(torch.randn(3, 4).double(), torch.ones(4), 1e-5, torch.empty(3, 4))
    with pytest.raises(RuntimeError, match="last dimension must be contiguous"):
        native.swiglu(torch.randn(8, 4).t(), 4)
    with pytest.raises(RuntimeError, match="2 x inter"):
        native.swiglu(torch.randn(3, 10), 4)


def test_scores_are_the_same_on_both_paths(native, tiny_causal) -> None:
    """Whole requests: the native path's scores are the torch path's to float32 rounding,
    and both are each request's numbers scored alone by transformers' forward."""
    assert fast_llama.supports(tiny_causal.model.model)
    assert kernels.status() == kernels.NATIVE
    got = loglikelihood(tiny_causal, REQUESTS, batch_size=64)
    with torch_operations():
        assert kernels.status() == kernels.TORCH
        torch_path_scores = loglikelihood(tiny_causal, REQUESTS, batch_size=64)
    reference = alone(tiny_causal, REQUESTS)
    for req, (a, ga), (b, gb), (c, gc) in zip(REQUESTS, got, torch_path_scores, reference, strict=True):
        assert a == pytest.approx(b, abs=1e-5), req  # float32 rounding of scores of size 50
        assert a == pytest.approx(c, abs=1e-5), req
        assert ga == gb == gc, req


def test_the_output_layer_is_the_same_on_both_paths(native) -> None:
    torch.manual_seed(0)
    linear = torch.nn.Linear(16, 300, bias=False)
    hidden = torch.randn(40, 16) * 4
    targets = torch.randint(0, 300, (40,))
    head = output_layer.OutputLayer(linear, None, None)
    with torch.inference_mode():
        fused = output_layer._score_rows(head, hidden, targets)
        with torch_operations():
            plain = output_layer._score_rows(head, hidden, targets)
    torch.testing.assert_close(fused[0], plain[0], rtol=1e-6, atol=1e-6)
    assert torch.equal(fused[1], plain[1])
    exact = torch.log_softmax(hidden.double() @ linear.weight.detach().double().t(), dim=1)
    torch.testing.assert_close(fused[0], exact[torch.arange(40), targets], rtol=0, atol=5e-6)


def test_switched_off_nothing_is_loaded_and_runs_record_it(native, tiny_causal_path) -> None:
    from evaluation.lm.modeling import load_model

    assert load_model(tiny_causal_path, threads=1).settings["kernels"] == "native"
    with torch_operations():
        assert kernels.get() is None
        assert load_model(tiny_causal_path, threads=1).settings["kernels"] == "torch"
    assert kernels.get() is native


def test_another_cpu_or_source_gets_a_build_of_its_own(monkeypatch) -> None:
    here = kernels.key()
    monkeypatch.setattr(kernels, "_cpu", lambda: "model name : another\nflags : sse2")
    assert kernels.key() != here
    monkeypatch.undo()
    monkeypatch.setattr(kernels, "CFLAGS", (*kernels.CFLAGS, "-DANOTHER"))
    assert kernels.key() != here


def test_a_failed_build_says_why_and_loads_nothing(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    monkeypatch.setattr(kernels, "CFLAGS", (*kernels.CFLAGS, "-DFAILED_BUILD_TEST"))  # a key never built
    # a lock file left by a killed build, which torch's builder would wait on for ever
    lock = tmp_path / "kernels" / kernels.key() / "lock"
    lock.parent.mkdir(parents=True)
    lock.touch()
    os.utime(lock, (0, 0))
    with pytest.raises(kernels.KernelBuildError, match="could not build kernels.cpp") as failed:
        kernels.build(tmp_path / "kernels")
    assert not lock.exists()
    assert "g++, ninja and Python's headers" in str(failed.value)
    assert not list((tmp_path / "kernels").glob("*/*.so"))


def test_an_unknown_mode_is_refused(monkeypatch) -> None:
    with pytest.raises(ValueError, match="one of auto, off"):
        kernels.configure(mode="fast")
    monkeypatch.setenv("WINNOW_NATIVE_KERNELS", "on")
    monkeypatch.setattr(kernels, "_config", {"dir": None, "mode": None})
    with pytest.raises(ValueError, match="WINNOW_NATIVE_KERNELS='on'"):
        kernels.mode()


def test_the_build_command_says_where_the_kernels_are(native) -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("models", "--build-kernels", stdout=out)
    assert f"native kernels in use: {kernels.module_path()}" in out.getvalue()


def test_the_pinned_ninja_goes_first_on_path(monkeypatch) -> None:
    """./winnow runs the virtual environment's Python without activating it: the build
    still finds the ninja of requirements.txt, not only a system one."""
    import shutil

    import ninja

    monkeypatch.setenv("PATH", "/nowhere")
    kernels._ninja_on_path()
    assert shutil.which("ninja") == str(Path(ninja.BIN_DIR) / "ninja")
    kernels._ninja_on_path()  # once only
    assert os.environ["PATH"].count(str(ninja.BIN_DIR)) == 1

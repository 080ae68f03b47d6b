"""The prefix tree of causal scoring: each distinct prefix runs once, and every request gets
the log-likelihood it has scored alone."""

from __future__ import annotations

import pytest
import torch

from evaluation.lm.scorers import causal, fast_llama, output_layer
from evaluation.lm.scorers.causal import encode_pair, loglikelihood, loglikelihood_tokens
from evaluation.lm.scorers.prefix_tree import PrefixTree, ancestor_intervals, plan_chunks

SHARED = "The city councilmen refused the demonstrators a permit because"
# shared prefixes of different lengths, a request that is a prefix of another, the same
# sentence split at different points, a sentence asked twice, one sharing nothing
REQUESTS = [
    (SHARED, " they feared violence."),
    (SHARED, " they advocated violence."),
    (SHARED, " they"),
    (SHARED + " they", " feared"),
    ("", SHARED + " they feared violence."),
    ("", SHARED + " they feared violence."),
    ("The city", " councilmen refused the demonstrators a permit because they feared violence."),
    ("The city councilmen", " refused"),
    ("The trophy doesn't fit into the brown suitcase because", " it is too large."),
    ("The trophy doesn't fit into the brown suitcase because", " it is too small."),
    ("The trophy", " doesn't fit"),
    ("", "The"),
    ("Jim comforted Kevin because", " he was so upset."),
    ("The fish ate the worm.", " It was tasty."),
]


def alone(model, requests):
    """Each request scored by itself: one sequence, no sharing, no padding."""
    return [loglikelihood(model, [r], batch_size=1, share_prefixes=False)[0] for r in requests]


def test_the_tree_has_one_node_per_distinct_prefix() -> None:
    inputs = [(1, 2, 3, 4), (1, 2, 5), (1, 2, 3), (1, 2, 3, 4), (6,), (1,)]
    tree = PrefixTree(inputs)
    distinct = {s[: j + 1] for s in inputs for j in range(len(s))}
    assert len(tree) == len(distinct) == 6
    for seq, path in zip(inputs, tree.path, strict=True):
        assert [tree.token[n] for n in path] == list(seq)
        assert [tree.depth[n] for n in path] == list(range(len(seq)))
        assert all(tree.parent[b] == a for a, b in zip(path, path[1:], strict=False))
    assert tree.path[0] == tree.path[3]  # the same input twice is one path
    assert tree.path[2] == tree.path[0][:3]  # an input that is a prefix of another
    assert tree.terminal[5] == tree.path[0][0]
    assert tree.size[tree.path[0][0]] == 5 and tree.ends[tree.path[0][0]] == 5
    # depth-first order: a subtree is contiguous after its root
    for n in range(len(tree)):
        sub = tree.order[tree.pre[n] : tree.pre[n] + tree.size[n]]
        assert sub[0] == n
        for m in sub[1:]:
            p = m
            while p != n and p >= 0:
                p = tree.parent[p]
            assert p == n


@pytest.mark.parametrize(
    ("max_sequences", "max_tokens"), [(1, 1000), (2, 1000), (3, 4), (100, 2), (100, 1000)]
)
def test_chunks_cover_the_tree_closed_under_ancestors_within_their_limits(
    max_sequences: int, max_tokens: int
) -> None:
    inputs = [(1, 2, 3, 4), (1, 2, 5), (1, 2, 3), (1, 2, 3, 4, 9, 9), (6,), (1,), (1, 7, 8), (6, 6, 6)]
    tree = PrefixTree(inputs)
    chunks = plan_chunks(tree, max_sequences, max_tokens)
    assert set().union(*chunks) == set(range(len(tree)))
    for chunk in chunks:
        assert [tree.pre[n] for n in chunk] == sorted(tree.pre[n] for n in chunk)
        assert all(tree.parent[n] in chunk for n in chunk if tree.parent[n] >= 0)
        end = ancestor_intervals(tree, chunk)
        for i, node in enumerate(chunk):
            chain = set()
            p = node
            while p >= 0:
                chain.add(p)
                p = tree.parent[p]
            for j, other in enumerate(chunk):
                assert (j <= i < end[j]) == (other in chain)
    # a chunk holds more than the limits only when one subtree that cannot be split does
    for chunk in chunks:
        if len(chunk) > max_tokens:
            assert len([n for n in chunk if not tree.children[n]]) == 1
    # every input's whole path lies in some chunk
    for path in tree.path:
        assert any(set(path) <= set(chunk) for chunk in chunks)


@pytest.mark.parametrize("fixture", ["tiny_causal", "tiny_gpt2"])
@pytest.mark.parametrize("batch_size", [1, 2, 3, 5, len(REQUESTS), 64])
def test_prefix_tree_gives_each_request_its_numbers_alone(
    fixture: str, batch_size: int, request: pytest.FixtureRequest
) -> None:
    model = request.getfixturevalue(fixture)
    assert causal._can_pack(model)
    reference = alone(model, REQUESTS)
    got = loglikelihood(model, REQUESTS, batch_size=batch_size)
    for req, (a, ga), (b, gb) in zip(REQUESTS, got, reference, strict=True):
        assert a == pytest.approx(b, abs=1e-5), req
        assert ga == gb, req


@pytest.mark.parametrize("max_tokens", [1, 3, 7, 20])
def test_subtrees_split_across_calls_give_the_same_numbers(
    tiny_causal, max_tokens: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks smaller than a shared prefix: the prefix runs as an ancestor in several calls."""
    reference = alone(tiny_causal, REQUESTS)
    calls: list[int] = []
    original = causal._run_chunk_packed

    def spy(members, chunk, *args):
        calls.append(len(chunk))
        return original(members, chunk, *args)

    monkeypatch.setattr(causal, "CHUNK_MAX_TOKENS", max_tokens)
    monkeypatch.setattr(causal, "_run_chunk_packed", spy)
    got = loglikelihood(tiny_causal, REQUESTS, batch_size=32)
    assert len(calls) > 1
    for req, (a, ga), (b, gb) in zip(REQUESTS, got, reference, strict=True):
        assert a == pytest.approx(b, abs=1e-5), req
        assert ga == gb, req


@pytest.mark.parametrize("rows", [1, 2, 5, 16])
def test_attention_in_pieces_gives_the_same_numbers(
    tiny_causal, rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lean forward's attention cut into pieces of a few queries (each with its first
    node's ancestors as extra keys) gives every request its numbers alone (the pieces run
    even where the native kernels, whose attention goes over each query's path, are built)."""
    assert fast_llama.supports(tiny_causal.model.model)
    reference = alone(tiny_causal, REQUESTS)
    monkeypatch.setattr(fast_llama, "PIECE_ROWS", rows)
    monkeypatch.setattr(fast_llama, "TREE_HEAD_SIZES", ())
    got = loglikelihood(tiny_causal, REQUESTS, batch_size=64)
    for req, (a, ga), (b, gb) in zip(REQUESTS, got, reference, strict=True):
        assert a == pytest.approx(b, abs=1e-5), req
        assert ga == gb, req


def test_the_lean_forward_sees_parameters_replaced_after_its_first_run(tiny_causal_path) -> None:
    """A parameter replaced by a new object after the first forward (not copied into):
    the lean forward's views are made again and the scores follow the new weights."""
    from evaluation.lm.modeling import load_model

    model = load_model(tiny_causal_path, threads=1)
    base = model.model.model
    before = loglikelihood(model, REQUESTS, batch_size=32)
    layer = base.layers[-1]
    with torch.no_grad():
        torch.manual_seed(1)
        for module in (layer.self_attn.k_proj, layer.mlp.up_proj, layer.mlp.down_proj):
            module.weight = torch.nn.Parameter(torch.randn_like(module.weight), requires_grad=False)
        layer.input_layernorm.weight = torch.nn.Parameter(
            layer.input_layernorm.weight * 2, requires_grad=False
        )
    reference = alone(model, REQUESTS)  # padded batches: transformers' own forward
    got = loglikelihood(model, REQUESTS, batch_size=32)
    assert any(abs(a - b) > 1e-3 for (a, _), (b, _) in zip(got, before, strict=True))
    for req, (a, ga), (b, gb) in zip(REQUESTS, got, reference, strict=True):
        assert a == pytest.approx(b, abs=1e-4), req  # weights of size 1: scores of size 50
        assert ga == gb, req


@pytest.mark.parametrize("fixture", ["tiny_causal", "tiny_gpt2"])
def test_packed_hidden_at_wanted_nodes_equals_those_rows_of_the_whole(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    """Asked for some nodes (in any order, one twice), the packed forward gives exactly
    their rows of the whole chunk's states: the lean forward runs its last layer's output
    projection and MLP at those rows alone, transformers' forward (tiny_gpt2) indexes."""
    model = request.getfixturevalue(fixture)
    base, _ = output_layer.output_layer(model)
    inputs = [tuple(a + b) for a, b in (encode_pair(model, c, x) for c, x in REQUESTS)]
    tree = PrefixTree(inputs)
    chunk = plan_chunks(tree, 64, 10_000)[0]
    wanted = [chunk[-1], chunk[3], chunk[0], chunk[7], chunk[3]]
    with torch.inference_mode():
        whole, row_of = causal.packed_hidden(base, tree, chunk)
        some, some_row_of = causal.packed_hidden(base, tree, chunk, wanted=wanted)
    assert some.shape == (len(wanted), whole.shape[1])
    for node in wanted:
        assert torch.allclose(some[some_row_of[node]], whole[row_of[node]], atol=1e-6), node


@pytest.mark.parametrize("rows", [1, 3, 4, 7, 100])
def test_attention_pieces_see_exactly_the_ancestors(tiny_causal, rows: int) -> None:
    """Piece by piece, query i sees key j exactly when j is i's ancestor or i itself, and
    every ancestor of a piece's query is among the piece's keys."""
    inputs = [tuple(a + b) for a, b in (encode_pair(tiny_causal, c, x) for c, x in REQUESTS)]
    tree = PrefixTree(inputs)
    chunk = plan_chunks(tree, 64, 10_000)[0]
    end = ancestor_intervals(tree, chunk)
    n = len(chunk)
    length, key_index, mask = fast_llama.attention_pieces(torch.tensor(end), rows)
    assert key_index.shape[0] * length >= n > (key_index.shape[0] - 1) * length
    seen: dict[int, set[int]] = {}
    for p in range(key_index.shape[0]):
        for qi in range(length):
            i = p * length + qi
            keys = {int(key_index[p, k]) for k in range(key_index.shape[1]) if mask[p, 0, qi, k]}
            if i < n:
                seen[i] = keys
            else:
                assert keys == {int(key_index[p, 0])}  # padding: one key, dropped after
    assert set(seen) == set(range(n))
    for i in range(n):
        assert seen[i] == {j for j in range(i + 1) if i < end[j]}, i


def test_each_distinct_prefix_runs_once(tiny_causal, monkeypatch: pytest.MonkeyPatch) -> None:
    positions: list[int] = []
    original = causal._run_chunk_packed

    def spy(members, chunk, *args):
        positions.append(len(chunk))
        return original(members, chunk, *args)

    monkeypatch.setattr(causal, "_run_chunk_packed", spy)
    loglikelihood(tiny_causal, REQUESTS, batch_size=64)
    inputs = set()
    for context, continuation in REQUESTS:
        ctx, cont = encode_pair(tiny_causal, context, continuation)
        seq = ctx + cont
        inputs |= {tuple(seq[: j + 1]) for j in range(len(seq) - 1)}
    assert positions == [len(inputs)]  # one call, every distinct prefix once


def test_token_requests_share_the_tree_and_keep_their_split_points(tiny_causal) -> None:
    ctx, cont = encode_pair(tiny_causal, SHARED, " they feared violence.")
    whole = ctx + cont
    pairs = [(whole[:k], whole[k:]) for k in range(1, len(whole))] + [(ctx, cont[:1]), (ctx, cont[:2])]
    got = loglikelihood_tokens(tiny_causal, pairs, batch_size=4)
    ref = [loglikelihood_tokens(tiny_causal, [p], batch_size=1, share_prefixes=False)[0] for p in pairs]
    for (a, ga), (b, gb) in zip(got, ref, strict=True):
        assert a == pytest.approx(b, abs=1e-5)
        assert ga == gb

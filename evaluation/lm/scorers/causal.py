"""Causal LM log-likelihoods with lm-evaluation-harness's contract, computed faster.

`loglikelihood(model, [(context, continuation), ...]) -> [(logprob, is_greedy), ...]`

Tokenisation is lm-evaluation-harness's (TemplateLM._encode_pair / loglikelihood): trailing
spaces of the context move to the continuation; context+continuation is encoded as one
string and split after the context's tokens; an empty context becomes the start token.
Here every sequence additionally starts with the model's start token (see modeling.py),
which is what HFLM does when the tokenizer itself adds one.

Where the time goes and what is saved (docs/scoring.md, "Exactness and speed"):
1. every distinct prefix runs once: the requests' sequences form a prefix tree
   (prefix_tree.py; identical sequences are one path whatever their split point, the two
   candidates of a Winograd schema share the text before the pronoun, twins share more);
2. no padding: the tree is cut into chunks of whole subtrees, each one packed row with a
   mask letting a node see its ancestors only and its depth as its position; Llama-type
   models run a lean forward on it (fast_llama.py); models whose attention takes no ready
   mask run padded batches whose parts after a shared prefix use its key/value cache;
3. the output layer runs once at each node whose next token is scored, in vocabulary
   blocks; the log-softmax is never materialised (`_score_rows`); torch.inference_mode.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch

from evaluation.lm.modeling import LoadedModel
from evaluation.lm.scorers import fast_llama, prepacked
from evaluation.lm.scorers.output_layer import _score_rows, output_layer
from evaluation.lm.scorers.prefix_tree import PrefixTree, ancestor_intervals, plan_chunks, scored_in
from evaluation.lm.scorers.types import Progress, ScoringError

#: Sequences are grouped under a common prefix only when it is at least this long.
MIN_SHARED_PREFIX = 4
#: Attention implementations that take a ready 4D mask (see `packed_hidden`).
PACKABLE_ATTENTION = ("sdpa", "eager")
#: What one more forward call costs, in padded token positions: the suffixes of a batch
#: are split into calls of similar length when the padding saved is worth more.
SUFFIX_CALL_COST = 8
#: Positions of one packed forward call at most. Its attention runs in pieces
#: (fast_llama.attention_pieces), so a chunk of this size costs little more attention than
#: a small one, and its matrix products run at the machine's large-product rate.
CHUNK_MAX_TOKENS = 1024


def _split_by_length(lengths: Sequence[int], call_cost: int) -> list[tuple[int, int]]:
    """Cut sorted lengths into runs [lo, hi) minimising padded positions + call_cost per run.

    Each run is padded to its longest (last) member; dynamic programming over cut points.
    """
    n = len(lengths)
    best = [0] + [0] * n
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        best[j], cut[j] = min((best[i] + lengths[j - 1] * (j - i) + call_cost, i) for i in range(j))
    runs: list[tuple[int, int]] = []
    j = n
    while j > 0:
        runs.append((cut[j], j))
        j = cut[j]
    return runs[::-1]


def _split(context: str, continuation: str) -> tuple[str, str]:
    """lm-eval's split: the context's trailing spaces move to the continuation."""
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces:
        return context[:-n_spaces], context[-n_spaces:] + continuation
    return context, continuation


def encode_pair(
    model: LoadedModel, context: str, continuation: str, encode: Callable[[str], list[int]] | None = None
) -> tuple[list[int], list[int]]:
    """(context tokens with the start token, continuation tokens), as lm-eval splits them;
    ``encode`` is the tokenizer (default ``model.encode``; `encode_pairs` passes a batch's)."""
    if model.start_token_id is None:
        raise ScoringError("this model has no start token; log-likelihoods need a causal LM")
    encode = encode or model.encode
    start = [model.start_token_id]
    if context == "":
        cont = encode(continuation)
        if cont and cont[0] == model.start_token_id:  # lm-eval: the text already starts with it
            return cont[:1], cont[1:]
        return start, cont
    context, continuation = _split(context, continuation)
    whole = encode(context + continuation)
    ctx = encode(context)
    return start + ctx, whole[len(ctx) :]


def encode_pairs(
    model: LoadedModel, requests: Sequence[tuple[str, str]]
) -> list[tuple[list[int], list[int]]]:
    """`encode_pair` of each request, every distinct text tokenized in one batch call."""
    texts: dict[str, None] = {}
    for context, continuation in requests:
        if context == "":
            texts[continuation] = None
        else:
            context, continuation = _split(context, continuation)
            texts[context + continuation] = texts[context] = None
    tokens = dict(zip(texts, model.encode_many(list(texts)), strict=True))
    return [encode_pair(model, c, x, tokens.__getitem__) for c, x in requests]


@dataclass
class _Group:
    prefix_len: int  # input positions [0, prefix_len) run once for all members
    members: list[int]  # indices into the unique sequences


def _lcp(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    n = min(len(a), len(b), limit)
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _group_by_prefix(inputs: list[tuple[int, ...]], min_shared: int) -> list[_Group]:
    """Greedy grouping of lexicographically sorted inputs; a member joins when it pays.

    A group of n members sharing p positions saves (n - 1) * p positions of compute.
    """
    order = sorted(range(len(inputs)), key=lambda i: inputs[i])
    groups: list[_Group] = []
    for i in order:
        if groups:
            g = groups[-1]
            head = inputs[g.members[0]]
            new_p = _lcp(head, inputs[i], g.prefix_len)
            n = len(g.members)
            if new_p >= min_shared and n * new_p >= (n - 1) * g.prefix_len:
                g.prefix_len = new_p
                g.members.append(i)
                continue
        groups.append(_Group(prefix_len=len(inputs[i]), members=[i]))
    return groups


def _pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        if r:
            ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
            mask[i, : len(r)] = 1
    return ids, mask


def loglikelihood(
    model: LoadedModel,
    requests: Sequence[tuple[str, str]],
    *,
    batch_size: int = 32,
    share_prefixes: bool = True,
    progress: Progress | None = None,
) -> list[tuple[float, bool]]:
    """log P(continuation | context) in nats and whether it is the greedy continuation.

    batch_size: sequences a padded batch (models whose attention takes no ready mask, and
    ``share_prefixes=False``); packed rows are bounded by positions (`packed_chunks`)."""
    if model.kind != "causal":
        raise ScoringError("log-likelihoods need a causal language model")
    encoded = []
    for n, ((_, continuation), (ctx, cont)) in enumerate(
        zip(requests, encode_pairs(model, requests), strict=True)
    ):
        if not cont:
            raise ScoringError(f"request {n}: the continuation {continuation!r} has no tokens")
        if len(ctx) + len(cont) - 1 > model.max_length:
            raise ScoringError(
                f"request {n}: {len(ctx) + len(cont)} tokens, more than the model's {model.max_length} positions"
            )
        encoded.append((ctx, cont))
    return loglikelihood_tokens(
        model, encoded, batch_size=batch_size, share_prefixes=share_prefixes, progress=progress
    )


def loglikelihood_tokens(
    model: LoadedModel,
    encoded: Sequence[tuple[list[int], list[int]]],
    *,
    batch_size: int = 32,
    share_prefixes: bool = True,
    progress: Progress | None = None,
) -> list[tuple[float, bool]]:
    """The token-level core of `loglikelihood`: (context ids, continuation ids) pairs."""
    total = len(encoded)
    if total == 0:
        if progress is not None:
            progress(0, 0)
        return []

    # 1. unique full sequences; each needs the positions from its earliest scored token on.
    seq_index: dict[tuple[int, ...], int] = {}
    seqs: list[tuple[int, ...]] = []
    need_from: list[int] = []  # first input position whose next token is scored
    requests_of: list[int] = []
    req_seq: list[int] = []
    for ctx, cont in encoded:
        seq = tuple(ctx + cont)
        k = seq_index.get(seq)
        if k is None:
            k = seq_index[seq] = len(seqs)
            seqs.append(seq)
            need_from.append(len(ctx) - 1)
            requests_of.append(0)
        need_from[k] = min(need_from[k], len(ctx) - 1)
        requests_of[k] += 1
        req_seq.append(k)
    inputs = [s[:-1] for s in seqs]

    # token_lp[k][j]: log P(seqs[k][j + 1] | seqs[k][: j + 1]) for the needed positions j.
    token_lp: list[dict[int, float]] = [{} for _ in seqs]
    token_greedy: list[dict[int, bool]] = [{} for _ in seqs]

    base, head = output_layer(model)
    batch_size = max(1, batch_size)
    # lm-eval's normalization reproduces its numbers: torch's products too (prepacked.py)
    with prepacked.torch_numbers(head.normalization == "lm-eval"):
        if share_prefixes and _can_pack(model):
            _run_tree(
                inputs, seqs, need_from, requests_of, base, head, token_lp, token_greedy, progress, total
            )
        else:
            _run_groups(
                model,
                inputs,
                seqs,
                need_from,
                requests_of,
                base,
                head,
                batch_size,
                share_prefixes,
                token_lp,
                token_greedy,
                progress,
                total,
            )

    out: list[tuple[float, bool]] = []
    for (ctx, cont), k in zip(encoded, req_seq, strict=True):
        positions = range(len(ctx) - 1, len(ctx) + len(cont) - 1)
        out.append(
            (
                float(sum(token_lp[k][j] for j in positions)),
                all(token_greedy[k][j] for j in positions),
            )
        )
    return out


def _run_groups(
    model: LoadedModel,
    inputs: list[tuple[int, ...]],
    seqs: list[tuple[int, ...]],
    need_from: list[int],
    requests_of: list[int],
    base,
    head,
    batch_size: int,
    share_prefixes: bool,
    token_lp: list[dict[int, float]],
    token_greedy: list[dict[int, bool]],
    progress: Progress | None,
    total: int,
) -> None:
    """Padded batches (models whose attention takes no ready 4D mask, or no sharing):
    groups of sequences under one shared prefix; the rest runs on its key/value cache."""
    # 2. groups that share a prefix (or one group per sequence).
    if share_prefixes:
        groups = _group_by_prefix(inputs, MIN_SHARED_PREFIX)
    else:
        groups = [_Group(prefix_len=len(inp), members=[i]) for i, inp in enumerate(inputs)]
    groups.sort(key=lambda g: (g.prefix_len, max(len(inputs[m]) for m in g.members)))

    pad_id = model.tokenizer.pad_token_id
    if pad_id is None:
        pad_id = model.start_token_id or 0

    # 3. chunks of groups with at most batch_size member sequences.
    chunks: list[list[_Group]] = []
    current: list[_Group] = []
    members = 0
    for g in groups:
        if current and members + len(g.members) > batch_size:
            chunks.append(current)
            current, members = [], 0
        current.append(g)
        members += len(g.members)
    if current:
        chunks.append(current)

    done = 0
    with torch.inference_mode():
        for chunk in chunks:
            _run_chunk(chunk, inputs, seqs, need_from, base, head, pad_id, token_lp, token_greedy)
            done += sum(requests_of[m] for g in chunk for m in g.members)
            if progress is not None:
                progress(done, total)


def packable(hf_model) -> bool:
    """Whether a transformers model takes a ready 4D attention mask and explicit positions,
    which packing needs (transformers passes a 4D mask through for eager and SDPA attention)."""
    implementation = getattr(getattr(hf_model, "config", None), "_attn_implementation", None)
    return implementation in PACKABLE_ATTENTION


def _can_pack(model: LoadedModel) -> bool:
    """`packable` for a loaded model (the scorer's switch between packed and padded rows)."""
    return packable(model.model)


def _run_tree(
    inputs: list[tuple[int, ...]],
    seqs: list[tuple[int, ...]],
    need_from: list[int],
    requests_of: list[int],
    base,
    head,
    token_lp: list[dict[int, float]],
    token_greedy: list[dict[int, bool]],
    progress: Progress | None,
    total: int,
) -> None:
    """Every distinct prefix runs once: the prefix tree of the inputs, cut into chunks of
    whole subtrees (`packed_chunks`: at most CHUNK_MAX_TOKENS positions), each chunk
    one packed row (`_run_chunk_packed`). A sequence is scored in the first chunk holding
    its last input token, which holds its whole path; each (state, target) pair goes
    through the output layer once."""
    tree = PrefixTree(inputs)
    chunks = packed_chunks(tree)
    done_rows: dict[tuple[int, int], tuple[float, bool]] = {}
    done = 0
    with torch.inference_mode():
        for chunk, members in zip(chunks, scored_in(tree, chunks), strict=True):
            _run_chunk_packed(members, chunk, tree, seqs, need_from, base, head, done_rows)
            for k in members:
                path = tree.path[k]
                for j in range(need_from[k], len(inputs[k])):
                    token_lp[k][j], token_greedy[k][j] = done_rows[(path[j], seqs[k][j + 1])]
            done += sum(requests_of[k] for k in members)
            if progress is not None:
                progress(done, total)


def packed_chunks(tree: PrefixTree) -> list[list[int]]:
    """The packed forward calls of a prefix tree: chunks of whole subtrees of at most
    CHUNK_MAX_TOKENS positions. The number of sequences is not limited (batch_size bounds
    padded batches, where a sequence's padding is what memory grows with; a packed row
    has none)."""
    return plan_chunks(tree, max(1, len(tree)), CHUNK_MAX_TOKENS)


def _run_chunk_packed(
    members: list[int],
    chunk: list[int],
    tree: PrefixTree,
    seqs: list[tuple[int, ...]],
    need_from: list[int],
    base,
    head,
    done_rows: dict[tuple[int, int], tuple[float, bool]],
) -> None:
    """The (node, next token) pairs the chunk's sequences score, into ``done_rows``."""
    pairs = (
        (tree.path[k][j], seqs[k][j + 1]) for k in members for j in range(need_from[k], len(tree.path[k]))
    )
    score_chunk(base, head, tree, chunk, pairs, done_rows)


def score_chunk(
    base,
    head,
    tree: PrefixTree,
    chunk: list[int],
    pairs: Iterable[tuple[int, int]],
    done_rows: dict[tuple[int, int], tuple[float, bool]],
) -> None:
    """(log-probability, is-greedy) of each (node, next token) pair of the chunk not in
    ``done_rows`` yet, into it: one packed forward call (`packed_hidden`) asked only for the
    pairs' nodes, then the output layer once a node; nothing runs if every pair is done."""
    keys = new_pairs(pairs, done_rows)
    if keys:
        hidden, row_of = packed_hidden(
            base, tree, chunk, wanted=list(dict.fromkeys(node for node, _ in keys))
        )
        score_pairs(head, hidden, row_of, keys, done_rows)


def packed_hidden(
    base, tree: PrefixTree, chunk: list[int], wanted: Sequence[int] | None = None
) -> tuple[torch.Tensor, dict[int, int]]:
    """The last hidden states of one forward call over one row holding the chunk's
    prefix-tree nodes in depth-first order, without padding, and each node's row in them:
    [n, H] for every node of the chunk, or with ``wanted`` (nodes of the chunk) for those
    nodes only, in that order (the lean forward then runs the last layer's output
    projection and MLP at them alone). The mask lets a node see its ancestors and itself
    only, and its position is its depth, so each node's state is the one it has in its
    sequences alone."""
    n = len(chunk)
    row_of = {node: i for i, node in enumerate(chunk)}
    end = torch.tensor(ancestor_intervals(tree, chunk))
    tokens = torch.tensor([tree.token[node] for node in chunk])
    positions = torch.tensor([tree.depth[node] for node in chunk])
    rows = None if wanted is None else torch.tensor([row_of[node] for node in wanted], dtype=torch.long)
    if wanted is not None:
        row_of = {node: i for i, node in enumerate(wanted)}
    if fast_llama.supports(base):
        return fast_llama.hidden_states(base, tokens, positions, end, rows), row_of
    index = torch.arange(n)
    allowed = (index[None, :] <= index[:, None]) & (index[:, None] < end[None, :])
    dtype = next(base.parameters()).dtype
    mask = torch.zeros((1, 1, n, n), dtype=dtype)
    mask.masked_fill_(~allowed[None, None], torch.finfo(dtype).min)
    hidden = base(
        input_ids=tokens[None], attention_mask=mask, position_ids=positions[None], use_cache=False
    ).last_hidden_state[0]
    return (hidden if rows is None else hidden[rows]), row_of


def new_pairs(
    pairs: Iterable[tuple[int, int]], done_rows: dict[tuple[int, int], tuple[float, bool]]
) -> list[tuple[int, int]]:
    """The (node, next token) pairs not in ``done_rows`` yet, each once, in order."""
    return list(dict.fromkeys(key for key in pairs if key not in done_rows))


def score_pairs(
    head,
    hidden: torch.Tensor,
    row_of: dict[int, int],
    keys: list[tuple[int, int]],
    done_rows: dict[tuple[int, int], tuple[float, bool]],
) -> None:
    """(log-probability, is-greedy) of each (node, next token) pair of ``keys`` (new and
    distinct: `new_pairs`), into ``done_rows``: the output layer runs once a node, at its
    row of ``hidden``."""
    if not keys:
        return
    rows, owner = torch.unique(torch.tensor([row_of[node] for node, _ in keys]), return_inverse=True)
    targets = torch.tensor([t for _, t in keys], dtype=torch.long)
    # a node with several next tokens goes through the output layer once
    logprobs, greedy = _score_rows(head, hidden if len(rows) == len(hidden) else hidden[rows], targets, owner)
    for key, lp, g in zip(keys, logprobs.tolist(), greedy.tolist(), strict=True):
        done_rows[key] = (lp, g)


def _run_chunk(
    chunk: list[_Group],
    inputs: list[tuple[int, ...]],
    seqs: list[tuple[int, ...]],
    need_from: list[int],
    base,
    head,
    pad_id: int,
    token_lp: list[dict[int, float]],
    token_greedy: list[dict[int, bool]],
) -> None:
    prefixes = [inputs[g.members[0]][: g.prefix_len] for g in chunk]
    ids, mask = _pad(prefixes, pad_id)
    has_suffix = any(len(inputs[m]) > g.prefix_len for g in chunk for m in g.members)
    out = base(input_ids=ids, attention_mask=mask, use_cache=has_suffix)
    hidden = out.last_hidden_state  # [G, Lp, H]

    rows: list[torch.Tensor] = []
    targets: list[int] = []
    owners: list[tuple[int, int, int]] = []  # (sequence, position, row)

    # Positions inside the shared prefix: hidden states are shared by the group's members,
    # and so are the targets except at the last prefix position; each (state, target)
    # pair goes through the output layer once.
    prefix_keys: dict[tuple[int, int, int], int] = {}
    for gi, g in enumerate(chunk):
        for m in g.members:
            for j in range(need_from[m], min(g.prefix_len, len(inputs[m]))):
                key = (gi, j, seqs[m][j + 1])
                row = prefix_keys.get(key)
                if row is None:
                    row = prefix_keys[key] = len(targets)
                    targets.append(key[2])
                owners.append((m, j, row))
    if prefix_keys:
        gi_t = torch.tensor([k[0] for k in prefix_keys])
        j_t = torch.tensor([k[1] for k in prefix_keys])
        rows.append(hidden[gi_t, j_t])

    if has_suffix:
        suffix_members = [
            (gi, m) for gi, g in enumerate(chunk) for m in g.members if len(inputs[m]) > g.prefix_len
        ]
        suffix_members.sort(key=lambda gm: len(inputs[gm[1]]) - chunk[gm[0]].prefix_len)
        lengths = [len(inputs[m]) - chunk[gi].prefix_len for gi, m in suffix_members]
        cache = out.past_key_values
        pieces = _split_by_length(lengths, SUFFIX_CALL_COST)
        for n_piece, (lo, hi) in enumerate(pieces):
            piece = suffix_members[lo:hi]
            # batch_select_indices works in place: every piece but the last takes a copy.
            piece_cache = cache if n_piece == len(pieces) - 1 else copy.deepcopy(cache)
            select = torch.tensor([gi for gi, _ in piece])
            piece_cache.batch_select_indices(select)
            suffixes = [inputs[m][chunk[gi].prefix_len :] for gi, m in piece]
            s_ids, s_mask = _pad(suffixes, pad_id)
            full_mask = torch.cat([mask[select], s_mask], dim=1)
            starts = torch.tensor([chunk[gi].prefix_len for gi, _ in piece]).unsqueeze(1)
            position_ids = starts + torch.arange(s_ids.shape[1]).unsqueeze(0)
            s_hidden = base(
                input_ids=s_ids,
                attention_mask=full_mask,
                position_ids=position_ids,
                past_key_values=piece_cache,
                use_cache=True,
            ).last_hidden_state  # [M, Ls, H]
            suffix_rows: list[tuple[int, int]] = []
            for si, (gi, m) in enumerate(piece):
                p = chunk[gi].prefix_len
                for j in range(max(need_from[m], p), len(inputs[m])):
                    suffix_rows.append((si, j - p))
                    owners.append((m, j, len(targets)))
                    targets.append(seqs[m][j + 1])
            if suffix_rows:
                si_t = torch.tensor([r[0] for r in suffix_rows])
                j_t = torch.tensor([r[1] for r in suffix_rows])
                rows.append(s_hidden[si_t, j_t])

    if not rows:
        return
    _store(head, torch.cat(rows), targets, owners, token_lp, token_greedy)


def _store(
    head,
    hidden: torch.Tensor,
    targets: list[int],
    owners: list[tuple[int, int, int]],
    token_lp: list[dict[int, float]],
    token_greedy: list[dict[int, bool]],
) -> None:
    """Score the rows of hidden states against their targets and give each (sequence,
    position) owner its row's log-probability and greedy flag."""
    logprobs, greedy = _score_rows(head, hidden, torch.tensor(targets, dtype=torch.long))
    lp_list, greedy_list = logprobs.tolist(), greedy.tolist()
    for m, j, row in owners:
        token_lp[m][j] = lp_list[row]
        token_greedy[m][j] = greedy_list[row]

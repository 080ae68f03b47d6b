"""Replacement proposals for a gap in a statement, from a masked or a causal model.

A *gap* is ``(left, right)``: the text before and after the masked word. The answer is
a list of whole-word candidates with probabilities, best first.

- Masked LM: ``left + [MASK] + right``; the vocabulary distribution at the mask,
  restricted to whole-word tokens, top-k (probabilities as the model gives them).
- Causal LM: the next-token distribution after ``left`` proposes the top-N whole-word
  tokens; each is put in the gap and the whole sentence is scored (sum of token
  log-probabilities after an explicit start token; the left context's share is the same
  for every candidate, so it is computed once and shared through the key/value cache);
  candidates are re-ranked by that score and their probabilities are the softmax of the
  sentence log-probabilities over the N proposals; top-k kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.lm import model_cache
from evaluation.lm.modeling import ModelLoadError

MASKED = "masked"
CAUSAL = "causal"


@dataclass
class Candidate:
    word: str
    prob: float
    logprob: float | None = None  # causal: log P(word + right context | left context)


@dataclass
class ClozeModel:
    model: Any
    tokenizer: Any
    kind: str
    start_token_id: int | None = None
    start_token: str | None = None  # its text, as recorded in the results
    name: str = ""
    sha256: str = ""  # the model files' hash, as load_model records it
    loaded_from: str = ""  # "file", "converted copy" or "memory" (evaluation.lm.model_cache)
    # Causal re-ranking through the left context's key/value cache (False: score every
    # whole sentence from scratch; same ranking, kept as the reference for tests and bench).
    share_prefix: bool = True
    # Causal: all the gaps of a `fill` call at once (one forward pass for their left
    # contexts, one for every proposal's continuation). False: one gap at a time (the
    # path before, kept as the reference for tests and the bench; same replacements).
    batch_gaps: bool = True
    # Causal, with batch_gaps: the two passes as packed prefix trees (no padding; the
    # scorer's packed forward) where the model's attention takes a ready mask. False: the
    # padded batches over the left contexts' key/value cache (same replacements).
    pack_gaps: bool = True
    # when a list: the batched path appends (left ids, [continuation ids]) for every gap
    # (bench/cloze_bench.py counts the work of the compute bound from them)
    trace: list[tuple[list[int], list[list[int]]]] | None = field(default=None, repr=False)
    _vocab: list[tuple[str, bool, bool]] = field(default_factory=list, repr=False)
    _space_marked: bool | None = field(default=None, repr=False)
    _allowed_cache: dict[bool, Any] = field(default_factory=dict, repr=False)

    @property
    def space_marked(self) -> bool:
        """Does the tokeniser mark word starts with a space (BPE/SentencePiece) rather than ``##``?"""
        if self._space_marked is None:
            self._space_marked = any(flag for _, flag, ok in self.vocab if ok)
        return self._space_marked

    @property
    def vocab(self) -> list[tuple[str, bool, bool]]:
        """Per token id: (word, starts with a space, is a whole alphabetic word)."""
        if not self._vocab:
            special = set(self.tokenizer.all_special_ids)
            tokens = self.tokenizer.convert_ids_to_tokens(list(range(len(self.tokenizer))))
            for i, token in enumerate(tokens):
                text = self.tokenizer.decode([i]) if token is not None else ""
                word = text.strip()
                ok = (
                    i not in special
                    and token is not None
                    and not token.startswith("##")
                    and word.isalpha()
                    and word.isascii()
                )
                self._vocab.append((word, text.startswith(" "), ok))
        return self._vocab

    def method(self, propose_n: int) -> str:
        if self.kind == MASKED:
            return "masked LM: top-k whole-word tokens at the mask"
        return (
            f"causal LM: top-{propose_n} whole-word next tokens after the left context, "
            "re-ranked by the probability of the whole sentence"
        )

    def fill(self, gaps: list[tuple[str, str]], *, k: int, propose_n: int = 30) -> list[list[Candidate]]:
        """Top-k candidates for each gap."""
        if not gaps:
            return []
        if self.kind == MASKED:
            return self._fill_masked(gaps, k)
        return self._fill_causal(gaps, k, propose_n)

    # -- masked -------------------------------------------------------------------------
    def _allowed(self, needs_space: bool) -> Any:
        """Mask of the token ids that can be a candidate word (computed once per case)."""
        import torch

        if needs_space not in self._allowed_cache:
            marked = self.space_marked
            flags = [ok and (not marked or space == needs_space) for _, space, ok in self.vocab]
            self._allowed_cache[needs_space] = torch.tensor(flags, dtype=torch.bool)
        return self._allowed_cache[needs_space]

    def _fill_masked(self, gaps: list[tuple[str, str]], k: int) -> list[list[Candidate]]:
        import torch

        mask = self.tokenizer.mask_token
        if mask is None:
            raise ModelLoadError(f"{self.name}: a masked LM needs a tokenizer with a mask token")
        texts = [left + mask + right for left, right in gaps]
        batch = self.tokenizer(texts, return_tensors="pt", padding=True)
        with torch.no_grad():
            logits = self.model(**batch).logits
        result = []
        for row, (left, _right) in enumerate(gaps):
            positions = (batch["input_ids"][row] == self.tokenizer.mask_token_id).nonzero()
            probs = torch.softmax(logits[row, int(positions[0, 0])].float(), dim=-1)
            allowed = self._allowed(needs_space=bool(left) and left[-1].isspace())
            probs = torch.where(allowed[: probs.shape[0]], probs, torch.zeros_like(probs))
            top = torch.topk(probs, k=min(k, int(allowed.sum())))
            result.append(
                [
                    Candidate(self.vocab[int(i)][0], float(p))
                    for p, i in zip(top.values, top.indices, strict=True)
                    if float(p) > 0
                ]
            )
        return result

    # -- causal -------------------------------------------------------------------------
    def _ids(self, text: str) -> list[int]:
        ids: list[int] = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return ([self.start_token_id] if self.start_token_id is not None else []) + ids

    def _pad(self, sequences: list[list[int]]) -> tuple[Any, Any]:
        import torch

        width = max(len(s) for s in sequences)
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.start_token_id if self.start_token_id is not None else 0
        ids = torch.full((len(sequences), width), int(pad), dtype=torch.long)
        attention = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, seq in enumerate(sequences):
            ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            attention[row, : len(seq)] = 1
        return ids, attention

    def _hidden(self, ids: Any, attention: Any) -> Any:
        """Last hidden states (the LM head is applied only where a log-probability is needed)."""
        import torch

        with torch.no_grad():
            out = self.model(
                input_ids=ids, attention_mask=attention, output_hidden_states=True, logits_to_keep=1
            )
        return out.hidden_states[-1]

    def _logits(self, hidden: Any) -> Any:
        """The model's output layer with its logit scale and soft-capping (`output_layer.OutputLayer`,
        as the packed path and the model's own forward apply them), in float32."""
        import torch

        from evaluation.lm.scorers.output_layer import model_output_layer

        with torch.no_grad():
            return model_output_layer(self.model)[1](hidden).float()

    def sentence_logprobs(self, texts: list[str], *, skip_shared_prefix: bool = False) -> list[float]:
        """Sum of the log-probabilities of the tokens after the start token.

        With ``skip_shared_prefix`` the tokens that every text shares at its start are
        not counted: that is the same constant for every text, so rankings and the
        softmax over the texts are unchanged, and the LM head runs on fewer positions.
        """
        import torch

        sequences = [self._ids(t) for t in texts]
        start = 1
        if skip_shared_prefix and len(sequences) > 1:
            shortest = min(len(s) for s in sequences)
            while start < shortest - 1 and len({s[start] for s in sequences}) == 1:
                start += 1
        ids, attention = self._pad(sequences)
        hidden = self._hidden(ids, attention)[:, start - 1 : -1]
        logp = torch.log_softmax(self._logits(hidden), dim=-1).gather(-1, ids[:, start:, None])[..., 0]
        return [float(logp[row, : len(seq) - start].sum()) for row, seq in enumerate(sequences)]

    def continuation_logprobs(self, left: str, continuations: list[str]) -> tuple[Any, list[float]]:
        """Next-token log-probabilities after ``left`` and ``log P(continuation | left)`` of each text.

        The left context (after the start token) is run once and its key/value cache is
        shared by every continuation. ``log P(left + continuation)`` differs from these by
        ``log P(left)``, the same for every continuation, so the ranking and the softmax
        over the continuations are those of the whole sentences.
        """
        import torch

        left_ids = self._ids(left)
        with torch.no_grad():
            out = self.model(input_ids=torch.tensor([left_ids]), use_cache=True, logits_to_keep=1)
        next_logp = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        if not continuations:
            return next_logp, []
        conts = [self.tokenizer(text, add_special_tokens=False)["input_ids"] for text in continuations]
        if any(not c for c in conts):
            raise ValueError("empty continuation")
        cache = out.past_key_values
        cache.batch_repeat_interleave(len(conts))
        ids, attention = self._pad(conts)
        attention = torch.cat([torch.ones((len(conts), len(left_ids)), dtype=torch.long), attention], dim=1)
        with torch.no_grad():
            later = self.model(
                input_ids=ids,
                attention_mask=attention,
                past_key_values=cache,
                use_cache=True,
                output_hidden_states=True,
                logits_to_keep=1,
            )
        hidden = later.hidden_states[-1][:, :-1]
        logp = torch.log_softmax(self._logits(hidden), dim=-1).gather(-1, ids[:, 1:, None])[..., 0]
        scores = [
            float(next_logp[c[0]]) + float(logp[row, : len(c) - 1].sum()) for row, c in enumerate(conts)
        ]
        return next_logp, scores

    def _fill_causal(self, gaps: list[tuple[str, str]], k: int, propose_n: int) -> list[list[Candidate]]:

        if self.start_token_id is None:
            raise ModelLoadError(f"{self.name}: a causal LM needs a start token (BOS or EOS)")
        if self.batch_gaps and self.share_prefix and self.pack_gaps and self._can_pack():
            return self._fill_causal_packed(gaps, k, propose_n)
        if self.batch_gaps and self.share_prefix:
            result: list[list[Candidate]] = []
            for start in range(0, len(gaps), GAPS_A_PASS):
                result += self._fill_causal_batched(gaps[start : start + GAPS_A_PASS], k, propose_n)
            return result
        result = []
        for left, right in gaps:
            stem = left.rstrip()
            needs_space = bool(stem)
            next_logp, _ = self.continuation_logprobs(stem, [])
            words = self._proposals(stem, next_logp, propose_n)
            joiner = " " if needs_space else ""
            if self.share_prefix:
                _, raw = self.continuation_logprobs(stem, [joiner + w + right for w in words])
            else:
                raw = self.sentence_logprobs([stem + joiner + w + right for w in words])
            result.append(_ranked(words, raw, k))
        return result

    def _proposals(self, stem: str, next_logp: Any, propose_n: int) -> list[str]:
        """The top-``propose_n`` whole words after ``stem`` by the next-token log-probabilities."""
        import torch

        allowed = self._allowed(needs_space=bool(stem))
        next_logp = torch.where(allowed[: next_logp.shape[0]], next_logp, torch.full_like(next_logp, -1e9))
        top = torch.topk(next_logp, k=min(propose_n, int(allowed.sum())))
        return [self.vocab[int(i)][0] for i in top.indices]

    def _fill_causal_batched(
        self, gaps: list[tuple[str, str]], k: int, propose_n: int
    ) -> list[list[Candidate]]:
        """What :meth:`_fill_causal` gives gap by gap, for all ``gaps`` in two forward passes.

        1. The left contexts (start token + stem), right-padded in one batch: the
           next-token distribution at each one's last token proposes its words, and the
           key/value cache is kept (a padded position is masked for every later query).
        2. Every (gap, word) continuation, right-padded in one batch over the cache rows of
           its gap (positions numbered on from its own left context): the log-probability
           of each continuation token after the left context; the output layer only at
           the real positions, a slice of rows at a time.
        """
        import torch

        lefts = [self._ids(left.rstrip()) for left, _ in gaps]
        ids, attention = self._pad(lefts)
        with torch.no_grad():
            out = self.model(
                input_ids=ids, attention_mask=attention, use_cache=True, output_hidden_states=True
            )
        rows = torch.arange(len(lefts))
        last = torch.tensor([len(seq) - 1 for seq in lefts])
        next_logps = torch.log_softmax(self._logits(out.hidden_states[-1][rows, last]), dim=-1)

        words, conts, owner = self._continuations(gaps, lefts, next_logps, propose_n)
        index = torch.tensor(owner)
        cache = out.past_key_values
        cache.reorder_cache(index)  # the left context's rows, one per continuation
        cont_ids, cont_mask = self._pad(conts)
        width = cont_ids.shape[1]
        positions = last[index, None] + 1 + torch.arange(width)[None, :]
        with torch.no_grad():
            later = self.model(
                input_ids=cont_ids,
                attention_mask=torch.cat([attention[index], cont_mask], dim=1),
                position_ids=positions,
                past_key_values=cache,
                use_cache=True,
                output_hidden_states=True,
                logits_to_keep=1,
            )
        hidden = later.hidden_states[-1]
        # (row, position) of every continuation token after the first: its log-probability
        # is read from the position before it
        where = [(r, j) for r, c in enumerate(conts) for j in range(len(c) - 1)]
        token_logp = torch.zeros(len(where))
        for s in range(0, len(where), HEAD_ROWS_A_SLICE):
            part = where[s : s + HEAD_ROWS_A_SLICE]
            r_idx = torch.tensor([r for r, _ in part], dtype=torch.long)
            j_idx = torch.tensor([j for _, j in part], dtype=torch.long)
            logp = torch.log_softmax(self._logits(hidden[r_idx, j_idx]), dim=-1)
            token_logp[s : s + len(part)] = logp.gather(-1, cont_ids[r_idx, j_idx + 1, None])[:, 0]
        sums = torch.zeros(len(conts), dtype=torch.float64)
        sums.index_add_(0, torch.tensor([r for r, _ in where], dtype=torch.long), token_logp.double())
        result = []
        row = 0
        for g, gap_words in enumerate(words):
            raw = [
                float(next_logps[g][conts[row + j][0]]) + float(sums[row + j]) for j in range(len(gap_words))
            ]
            row += len(gap_words)
            result.append(_ranked(gap_words, raw, k))
        return result

    def _continuations(
        self, gaps: list[tuple[str, str]], lefts: list[list[int]], next_logps: Any, propose_n: int
    ) -> tuple[list[list[str]], list[list[int]], list[int]]:
        """Both batched paths' proposals and what follows each: (the words proposed at each
        gap from its next-token log-probabilities, the token ids of every (gap, word)
        continuation, word + right context, and the gap of each); traced when asked."""
        words: list[list[str]] = []
        conts: list[list[int]] = []
        owner: list[int] = []
        for g, (left, right) in enumerate(gaps):
            stem = left.rstrip()
            words.append(self._proposals(stem, next_logps[g], propose_n))
            joiner = " " if stem else ""
            for w in words[-1]:
                cont = self.tokenizer(joiner + w + right, add_special_tokens=False)["input_ids"]
                if not cont:
                    raise ValueError("empty continuation")
                conts.append(cont)
                owner.append(g)
        if self.trace is not None:
            for g, left_ids in enumerate(lefts):
                self.trace.append((left_ids, [c for c, o in zip(conts, owner, strict=True) if o == g]))
        return words, conts, owner

    def _can_pack(self) -> bool:
        from evaluation.lm.scorers.causal import packable

        base = getattr(self.model, getattr(self.model, "base_model_prefix", ""), None)
        return base is not None and packable(self.model)

    def _fill_causal_packed(
        self, gaps: list[tuple[str, str]], k: int, propose_n: int
    ) -> list[list[Candidate]]:
        """What :meth:`_fill_causal` gives gap by gap, from two packed prefix trees.

        1. The left contexts (start token + stem) as one prefix tree (a statement's left
           contexts are prefixes of one another, so it is the longest of them): one packed
           forward call (``causal.packed_hidden``, the scorer's), the output layer at each
           left context's last token only; its next-token distribution proposes the words.
        2. Every (gap, word) sequence, left context + word + right context, as one prefix
           tree: each distinct prefix is computed once, without padding, in packed rows
           of at most ``CLOZE_CHUNK_TOKENS`` nodes (``prefix_tree.plan_chunks``); the
           output layer runs once at each (node, next continuation token) pair
           (``causal.score_chunk``). The left contexts run again there, a few tokens
           against the continuations' hundreds.
        """
        import torch

        from evaluation.lm.scorers.causal import packed_hidden, score_chunk
        from evaluation.lm.scorers.output_layer import model_output_layer
        from evaluation.lm.scorers.prefix_tree import PrefixTree, plan_chunks, scored_in

        base, head = model_output_layer(self.model)
        lefts = [self._ids(left.rstrip()) for left, _ in gaps]
        next_logps: list[Any] = [None] * len(gaps)
        with torch.inference_mode():
            tree = PrefixTree(lefts)
            chunks = plan_chunks(tree, len(lefts), CLOZE_CHUNK_TOKENS)
            for chunk, members in zip(chunks, scored_in(tree, chunks), strict=True):
                ends = list(dict.fromkeys(tree.terminal[g] for g in members))
                hidden, row_of = packed_hidden(base, tree, chunk, wanted=ends)
                rows = torch.tensor([row_of[tree.terminal[g]] for g in members])
                logps = torch.log_softmax(head(hidden[rows]).float(), dim=-1)
                for g, logp in zip(members, logps, strict=True):
                    next_logps[g] = logp

            words, conts, owner = self._continuations(gaps, lefts, next_logps, propose_n)
            seqs = [lefts[g] + cont for cont, g in zip(conts, owner, strict=True)]
            tree = PrefixTree(seqs)
            chunks = plan_chunks(tree, len(seqs), CLOZE_CHUNK_TOKENS)
            done: dict[tuple[int, int], tuple[float, bool]] = {}
            for chunk, members in zip(chunks, scored_in(tree, chunks), strict=True):
                pairs = (
                    (tree.path[s][j], seqs[s][j + 1])
                    for s in members
                    for j in range(len(lefts[owner[s]]), len(seqs[s]) - 1)
                )
                score_chunk(base, head, tree, chunk, pairs, done)
        raw: list[list[float]] = [[] for _ in gaps]
        for s, seq in enumerate(seqs):
            g = owner[s]
            start = len(lefts[g])
            path = tree.path[s]
            total = float(next_logps[g][seq[start]])
            total += sum(done[(path[j], seq[j + 1])][0] for j in range(start, len(seq) - 1))
            raw[g].append(total)
        return [_ranked(gap_words, scores, k) for gap_words, scores in zip(words, raw, strict=True)]


def _ranked(words: list[str], raw: list[float], k: int) -> list[Candidate]:
    """The ``k`` best proposals by their sentence log-probabilities ``raw``, each with its
    probability among the proposals (a softmax over them)."""
    import torch

    scores = torch.tensor(raw, dtype=torch.float64)
    probs = torch.softmax(scores, dim=0)
    order = torch.argsort(scores, descending=True)[:k]
    return [Candidate(words[int(i)], float(probs[int(i)]), float(scores[int(i)])) for i in order]


# the batched causal path: gaps a forward pass, output-layer rows at a time (49,152 x 4
# bytes each for SmolLM2: 512 rows are 100 MB)
GAPS_A_PASS = 16
HEAD_ROWS_A_SLICE = 512
# the packed path: prefix-tree nodes a forward call at most
CLOZE_CHUNK_TOKENS = 1024


def load_cloze_model(
    path: str | Path, *, kind: str | None = None, start_token: str | int | None = None
) -> ClozeModel:
    """A local Hugging Face folder or a GGUF file, loaded by ``evaluation.lm.modeling.load_model``
    (the loader every scorer uses: offline only, GGUF told by its magic bytes, the kind from
    the configuration, the causal start token chosen and recorded there). ``kind`` checks
    the detected kind instead of trusting it blindly. Through the worker's model cache
    (evaluation.lm.model_cache), as evaluation runs: ``loaded_from`` says where it came from."""
    loaded = model_cache.load(path, start_token=start_token)
    if kind is not None and kind != loaded.kind:
        raise ModelLoadError(f"{path}: this is a {loaded.kind} language model, not a {kind} one")
    return ClozeModel(
        model=loaded.model,
        tokenizer=loaded.tokenizer,
        kind=loaded.kind,
        start_token_id=loaded.start_token_id,
        start_token=loaded.settings.get("start_token"),
        name=str(path),
        sha256=str(loaded.settings.get("sha256") or ""),
        loaded_from=str(loaded.settings.get("loaded_from") or ""),
    )

"""The prefix tree (trie) of token sequences, and its cut into forward calls.

Every distinct prefix of the inputs is one node: the two candidates of a Winograd question
share the tokens before the pronoun, the two questions of a twin share more, and a
partial and a full request for the same sentence are the same path. A node's hidden state
depends only on its path from the root (its ancestors), so computing each node once, with
a mask that lets it see exactly its ancestors and the position it has in its own
sequence (its depth), gives every sequence the states it has alone.

`PrefixTree(inputs)` builds the tree; `plan_chunks(tree, max_sequences, max_tokens)` cuts
it into chunks of whole subtrees. A chunk holds its subtrees and their ancestors (a path
shared by two chunks runs in both, a few tokens); its nodes are listed in depth-first
order, so a node's descendants inside the chunk follow it contiguously and the attention
mask is an interval test (`ancestor_intervals`). No Django, no model: plain lists.
"""

from __future__ import annotations

from collections.abc import Sequence


class PrefixTree:
    """Nodes of the distinct prefixes of ``inputs`` (token id sequences).

    ``token[n]``, ``parent[n]`` (-1 for a first token), ``depth[n]`` (its position in its
    sequences, 0 for the first token), ``path[i][j]`` (the node of ``inputs[i][: j + 1]``),
    ``terminal[i]`` (the node of the whole input i), ``pre[n]`` (depth-first order) and
    ``size[n]`` (nodes in its subtree, itself included); ``order`` lists the nodes in
    depth-first order, so the subtree of n is ``order[pre[n] : pre[n] + size[n]]``.
    ``ends[n]`` counts the inputs that end in n's subtree.
    """

    def __init__(self, inputs: Sequence[Sequence[int]]) -> None:
        self.token: list[int] = []
        self.parent: list[int] = []
        self.depth: list[int] = []
        self.children: list[dict[int, int]] = []
        roots: dict[int, int] = {}
        self.path: list[list[int]] = []
        for seq in inputs:
            nodes: list[int] = []
            level = roots
            parent = -1
            for tok in seq:
                node = level.get(tok)
                if node is None:
                    node = level[tok] = len(self.token)
                    self.token.append(tok)
                    self.parent.append(parent)
                    self.depth.append(len(nodes))
                    self.children.append({})
                nodes.append(node)
                parent = node
                level = self.children[node]
            self.path.append(nodes)
        self.roots = list(roots.values())
        self.terminal = [p[-1] if p else -1 for p in self.path]

        n = len(self.token)
        self.ends = [0] * n
        for t in self.terminal:
            if t >= 0:
                self.ends[t] += 1
        self.pre = [0] * n
        self.size = [1] * n
        self.order: list[int] = []
        stack = list(reversed(self.roots))
        while stack:
            node = stack.pop()
            self.pre[node] = len(self.order)
            self.order.append(node)
            stack.extend(reversed(list(self.children[node].values())))
        for node in reversed(self.order):  # children come after their parent
            p = self.parent[node]
            if p >= 0:
                self.size[p] += self.size[node]
                self.ends[p] += self.ends[node]

    def __len__(self) -> int:
        return len(self.token)


def plan_chunks(tree: PrefixTree, max_sequences: int, max_tokens: int) -> list[list[int]]:
    """Chunks of nodes (each in depth-first order, closed under ancestors) covering the tree.

    Units are the largest subtrees holding at most ``max_sequences`` input ends and
    ``max_tokens`` nodes (a node too big is split into its children's subtrees; it then
    runs with each chunk below it, as an ancestor). Consecutive units, in depth-first order,
    share a chunk while its nodes, ancestors included, stay within both limits.
    """
    max_sequences = max(1, max_sequences)
    max_tokens = max(1, max_tokens)
    units: list[int] = []
    stack = list(reversed(tree.roots))
    while stack:
        node = stack.pop()
        if (tree.ends[node] <= max_sequences and tree.size[node] <= max_tokens) or not tree.children[node]:
            units.append(node)
        else:
            stack.extend(reversed(list(tree.children[node].values())))

    chunks: list[list[int]] = []
    members: set[int] = set()
    current: list[int] = []
    sequences = 0
    for unit in units:
        above: list[int] = []
        p = tree.parent[unit]
        while p >= 0 and p not in members:
            above.append(p)
            p = tree.parent[p]
        grow = len(above) + tree.size[unit]
        if current and (len(members) + grow > max_tokens or sequences + tree.ends[unit] > max_sequences):
            chunks.append(sorted(members, key=tree.pre.__getitem__))
            members, current, sequences = set(), [], 0
            above = []
            p = tree.parent[unit]
            while p >= 0:
                above.append(p)
                p = tree.parent[p]
        members.update(above)
        start = tree.pre[unit]
        members.update(tree.order[start : start + tree.size[unit]])
        current.append(unit)
        sequences += tree.ends[unit]
    if current:
        chunks.append(sorted(members, key=tree.pre.__getitem__))
    return chunks


def scored_in(tree: PrefixTree, chunks: Sequence[Sequence[int]]) -> list[list[int]]:
    """For each chunk of `plan_chunks`, the sequences it scores: a sequence is scored in
    the first chunk holding its last node, which holds its whole path."""
    first_chunk: dict[int, int] = {}
    for c, chunk in enumerate(chunks):
        for node in chunk:
            first_chunk.setdefault(node, c)
    members: list[list[int]] = [[] for _ in chunks]
    for k, terminal in enumerate(tree.terminal):
        members[first_chunk[terminal]].append(k)
    return members


def ancestor_intervals(tree: PrefixTree, chunk: Sequence[int]) -> list[int]:
    """For each node of a chunk (in depth-first order), the index after its last
    descendant in the chunk: node j is an ancestor of node i (or i itself) exactly when
    ``j <= i < end[j]``."""
    from bisect import bisect_left

    pres = [tree.pre[n] for n in chunk]
    return [bisect_left(pres, tree.pre[n] + tree.size[n]) for n in chunk]

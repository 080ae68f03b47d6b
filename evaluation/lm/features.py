"""Frozen model features for the supervised WinoWhy setting (no Django).

``mean_hidden_states``: the mean of the last layer's hidden states over a text's tokens
(after the start token for causal LMs), one row per text. Texts are batched by length
with padding masked out, under ``torch.inference_mode``; only the base model runs (no
output layer over the vocabulary).
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt


def mean_hidden_states(
    loaded: Any,
    texts: Sequence[str],
    *,
    batch_size: int = 32,
    progress: Callable[[int, int], None] | None = None,
) -> npt.NDArray[np.float32]:
    import torch

    encoded: list[list[int]] = []
    for text in texts:
        ids = loaded.encode(text)
        if loaded.start_token_id is not None:
            ids = [loaded.start_token_id, *ids]
        encoded.append(ids[: loaded.max_length])
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
    out: npt.NDArray[np.float32] | None = None
    pad = loaded.tokenizer.pad_token_id if loaded.tokenizer.pad_token_id is not None else 0
    # The base model's last hidden state is the LM's last hidden state (the same tensor,
    # checked for Llama, GPT-2 and BERT); the base alone skips the vocabulary projection.
    base = getattr(loaded.model, loaded.model.base_model_prefix, None)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            width = max(len(encoded[i]) for i in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):
                ids[row, : len(encoded[i])] = torch.tensor(encoded[i])
                mask[row, : len(encoded[i])] = 1
            if base is not None:
                hidden = base(input_ids=ids, attention_mask=mask).last_hidden_state
            else:
                hidden = loaded.model(
                    input_ids=ids, attention_mask=mask, output_hidden_states=True
                ).hidden_states[-1]
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            if loaded.start_token_id is not None:
                weights[:, 0] = 0  # the start token is the same for every text
            means = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)
            if out is None:
                out = np.zeros((len(texts), means.shape[-1]), dtype=np.float32)
            out[batch] = means.float().numpy()
            if progress is not None:
                progress(min(start + batch_size, len(order)), len(order))
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)

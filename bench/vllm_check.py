"""GPU check of the vllm backend against the hf backend: the same items in each mode, agreement and speed.

Run on a machine with a CUDA GPU and vLLM (``pip install 'ancientbench[vllm]'``), offline, with a local model
folder (a real model, or ``bench/.cache/<preset>`` that ``bench/run.py`` builds)::

    python bench/vllm_check.py --model /models/Qwen2.5-0.5B-Instruct --limit 20 --out /tmp/vllm-check
    python bench/vllm_check.py --model bench/.cache/bench-qwen2-20m --modes letter ppl --dtype float32

For each mode it scores ``--limit`` items of every task (``--shots``) with ``--backend hf`` and ``--backend
vllm`` and prints, per mode: items, prediction agreement, largest log-probability difference (letter and
ppl), extraction-failure rates (generate) and seconds per backend; the JSON goes to ``<out>/vllm_check.json``.
Exit status 1 when letter-mode agreement is below ``--min-agreement`` (bf16 kernels differ slightly between
the two engines; float32 should agree on every item).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="local model folder")
    p.add_argument("--modes", nargs="+", default=["letter", "ppl", "generate"])
    p.add_argument("--shots", type=int, default=5)
    p.add_argument("--limit", type=int, default=20, help="items per task (default 20)")
    p.add_argument("--tasks", nargs="+", default=None)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--min-agreement", type=float, default=0.95)
    p.add_argument("--out", default="bench/results")
    args = p.parse_args(argv)

    from ancientbench.evaluation import evaluate_model

    report = {"model": args.model, "dtype": args.dtype, "shots": args.shots, "limit": args.limit, "modes": {}}
    ok = True
    for mode in args.modes:
        runs = {}
        for backend in ("hf", "vllm"):
            t0 = time.perf_counter()
            res = evaluate_model(args.model, backend=backend, mode=mode, shots=args.shots, tasks=args.tasks,
                                 limit=args.limit, dtype=args.dtype, device="cuda" if backend == "hf" else "auto",
                                 max_new_tokens=args.max_new_tokens, progress=False, batch_size="auto")[args.shots]
            runs[backend] = (res, time.perf_counter() - t0)
        a, b = runs["hf"][0]["predictions"], runs["vllm"][0]["predictions"]
        agree = sum(x["pred"] == y["pred"] for x, y in zip(a, b)) / len(a)
        key = {"letter": "logprobs", "ppl": "option_logprobs"}.get(mode)
        diff = max((abs(u - v) for x, y in zip(a, b) if key and x.get(key) and y.get(key)
                    for u, v in zip(x[key], y[key])), default=None)
        row = {"items": len(a), "agreement": agree, "max_abs_diff": diff,
               "seconds": {k: round(v[1], 2) for k, v in runs.items()},
               "average": {k: v[0]["average"] for k, v in runs.items()}}
        if mode == "generate":
            row["extraction_failures"] = {k: sum(t.get("extraction_failures", 0) for t in v[0]["tasks"].values())
                                          for k, v in runs.items()}
        report["modes"][mode] = row
        print(f"{mode:9s} items {len(a)}  agreement {agree:.3f}  max |diff| {diff}  seconds {row['seconds']}")
        if mode == "letter" and agree < args.min_agreement:
            ok = False
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "vllm_check.json").write_text(json.dumps(report, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

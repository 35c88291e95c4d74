"""AncientBench serving benchmark: the ``openai`` backend with N requests in flight vs one at a time, same
questions, same server, identical predictions required.

Run from a fresh clone (after ``scripts/install.sh``)::

    .venv/bin/python bench/serving.py                                   # transformers serve, tiny-random, CPU
    .venv/bin/python bench/serving.py --questions 100 --concurrency 1 4 16 --continuous-batching
    .venv/bin/python bench/serving.py --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct \\
        --mode generate --concurrency 1 8 32 64                         # a server you started (vLLM, SGLang ...)
    .venv/bin/python bench/serving.py --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B --mode letter

Without ``--base-url`` it starts ``transformers serve`` on 127.0.0.1 (a free port, offline) with ``--model``
(default: the built-in ``tiny-random`` folder; ``--continuous-batching`` passes that flag to the server) and
stops it at the end. Workload: the first ``--questions`` test items spread evenly over the tasks of the bundled
dataset, 0-shot, ``--mode generate`` (``transformers serve`` returns no log-probabilities) with
``--max-new-tokens`` (default 16). Each concurrency runs once into a fresh output folder (``--repeat`` for
more; the table shows the best), after one untimed warm-up request. Reported: questions/second end to end
(``evaluate_model`` from question loading to the results file), the ratio to concurrency 1, and whether the
predictions (and, in generate mode, the raw answers) equal the sequential run's.

Results go to ``bench/results/serving-<timestamp>.json`` (ignored by git) and a table is printed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_transformers_serve(model: str, log: Path, continuous_batching: bool) -> tuple[subprocess.Popen, str]:
    port = free_port()
    exe = Path(sys.executable).with_name("transformers")
    cmd = [str(exe) if exe.exists() else "transformers", "serve", model, "--host", "127.0.0.1", "--port", str(port),
           "--device", "cpu" if not _has_gpu() else "auto"]
    if continuous_batching:
        cmd.append("--continuous-batching")
    proc = subprocess.Popen(cmd, stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                            env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"transformers serve exited ({proc.returncode}); log: {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    raise SystemExit(f"transformers serve did not answer within 300 s; log: {log}")


def _has_gpu() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


def question_file(n: int, folder: Path) -> Path:
    """The first test items of every task with data, ``n`` in all, as one JSONL question file."""
    from ancientbench.dataset import load_questions

    qs = load_questions(None, None, shots=[0])
    tasks = [t for t in qs.items if qs.items[t]]
    per = [n // len(tasks) + (1 if i < n % len(tasks) else 0) for i in range(len(tasks))]
    path = folder / "questions.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for t, k in zip(tasks, per):
            for item in qs.items[t][:k]:
                f.write(json.dumps(item, ensure_ascii=False) + "\n")
    return path


def one_run(args, base_url: str, data: Path, concurrency: int, out: Path) -> dict:
    from ancientbench.backends.base import BackendConfig
    from ancientbench.evaluation import evaluate_model

    config = BackendConfig(model=args.model, base_url=base_url, concurrency=concurrency, timeout=args.timeout,
                           api_key_env=args.api_key_env)
    t0 = time.perf_counter()
    res = evaluate_model(args.model, shots=[0], data=data, output_dir=out, backend="openai", mode=args.mode,
                         max_new_tokens=args.max_new_tokens, log_samples=True, progress=False, backend_config=config)
    seconds = time.perf_counter() - t0
    records = [json.loads(line) for line in Path(res[0]["predictions_file"]).read_text(encoding="utf-8").splitlines()]
    return {"seconds": seconds, "n": len(records),
            "preds": {r["id"]: (r["pred"], r.get("response")) for r in records}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-url", default=None, help="an OpenAI-compatible server already running (default: start transformers serve)")
    p.add_argument("--model", default=None, help="served model name (default: the tiny-random folder)")
    p.add_argument("--api-key-env", default=None, help="variable holding the key (default OPENAI_API_KEY; none needed locally)")
    p.add_argument("--mode", choices=["generate", "letter", "ppl"], default="generate",
                   help="letter and ppl need a server that returns log-probabilities (vLLM, SGLang)")
    p.add_argument("--max-new-tokens", type=int, default=16)
    p.add_argument("--questions", type=int, default=60, help="test questions, spread evenly over the tasks (default 60)")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8], help="requests in flight (default 1 4 8)")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--continuous-batching", action="store_true", help="start transformers serve with continuous batching")
    args = p.parse_args(argv)
    if 1 not in args.concurrency:
        args.concurrency = [1, *args.concurrency]

    work = Path(tempfile.mkdtemp(prefix="ancientbench-serving-"))
    proc = None
    if args.model is None:
        from ancientbench.tiny import tiny_random_path

        args.model = str(tiny_random_path())
    base_url = args.base_url
    if base_url is None:
        proc, base_url = start_transformers_serve(args.model, work / "serve.log", args.continuous_batching)
    try:
        data = question_file(args.questions, work)
        import openai

        client = openai.OpenAI(base_url=base_url, api_key=os.environ.get(args.api_key_env or "OPENAI_API_KEY") or "EMPTY")
        client.chat.completions.create(model=args.model, messages=[{"role": "user", "content": "答"}], max_tokens=1)
        runs: dict[int, list[dict]] = {c: [] for c in args.concurrency}
        for rep in range(args.repeat):
            for c in (args.concurrency if rep % 2 == 0 else args.concurrency[::-1]):
                runs[c].append(one_run(args, base_url, data, c, work / f"c{c}-r{rep}"))
                print(f"concurrency {c:>3}, repetition {rep + 1}: {runs[c][-1]['seconds']:.2f} s", file=sys.stderr)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    ref = min(runs[1], key=lambda r: r["seconds"])
    rows, table = [], [["concurrency", "questions", "best s", "q/s", "vs 1", "same predictions"]]
    for c in args.concurrency:
        best = min(runs[c], key=lambda r: r["seconds"])
        same = all(r["preds"] == ref["preds"] for r in runs[c])
        row = {"concurrency": c, "questions": best["n"], "seconds_best": round(best["seconds"], 3),
               "seconds_all": [round(r["seconds"], 3) for r in runs[c]], "qps": round(best["n"] / best["seconds"], 2),
               "speedup_vs_sequential": round(ref["seconds"] / best["seconds"], 2), "identical_predictions": same}
        rows.append(row)
        table.append([str(c), str(row["questions"]), f"{row['seconds_best']:.2f}", f"{row['qps']:.2f}",
                      f"{row['speedup_vs_sequential']:.2f}x", "yes" if same else "NO"])
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        print("  ".join(x.rjust(w) for x, w in zip(r, widths)))
    out = {"created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "server": "transformers serve"
           if proc is not None else base_url, "continuous_batching": args.continuous_batching, "model": args.model,
           "mode": args.mode, "max_new_tokens": args.max_new_tokens, "cpu_count": os.cpu_count(),
           "loadavg": os.getloadavg(), "platform": platform.platform(), "rows": rows}
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"serving-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(f"\nwrote {path}")
    return 0 if all(r["identical_predictions"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

"""AncientBench speed benchmark: ancientbench vs lm-evaluation-harness vs a plain loop, same questions, one run.

Run from a fresh clone (after ``scripts/install.sh``)::

    .venv/bin/python bench/run.py                       # default workload (below), CPU, fp32
    .venv/bin/python bench/run.py --questions 100 --shots 0
    .venv/bin/python bench/run.py --model bench-qwen2-0.5b --device cuda --dtype bfloat16 --batch-size 32
    .venv/bin/python bench/run.py --model Qwen/Qwen2.5-7B --device cuda --dtype bfloat16 --batch-size auto

Default workload: a ~20M-parameter random-weight Qwen2 (hidden 384, 6 layers, GQA 6/2 heads, tied
embeddings) built offline with :mod:`ancientbench.tiny` and the offline ``tiny-random`` tokenizer (CJK BPE,
21,647 tokens), cached in ``bench/.cache/``; 500 test questions spread evenly over every task that has
test and dev files in the bundled dataset; 0-shot and 5-shot; CPU, float32.

Runners (each in its own fresh Python process, so peak memory and timings are its own; the model is loaded
before the clock starts):

- ``ancientbench``: ``ancientbench.evaluate_model`` on the loaded model (question loading, prompts,
  tokenisation, shared-prefix KV reuse, last-position LM head, results) - the prefix cache on.
- ``lm-eval``: lm-evaluation-harness 0.4.x, ``lm_eval.simple_evaluate`` in-process with model type ``hf``
  loading the same folder, on the tasks ``ancientbench export-lm-eval`` writes (same prompt text, bare
  letters, first k dev rows as shots), ``log_samples=True`` for per-item predictions. Its task loading
  (``TaskManager`` over the exported folder only) is inside the clock.
- ``plain``: one forward per question over the full prompt, full logits (the LM head over every position),
  batch 1, no cache: the naive baseline.
- ``ancientbench@<ref>`` (with ``--baseline-code DIR``): the ``ancientbench`` runner importing the package from
  another checkout (e.g. ``git worktree add --detach ../v1 242d0c3``, data 1.0.0) on the same questions, so a change
  of the engine is measured against the code before it in the same run (ratio ``ancientbench/ancientbench@<ref>``).

Reported per runner and number of shots: questions/second end to end (everything after model loading) and
for the scoring step alone; peak memory (CPU: the process's peak RSS from ``resource.getrusage``, and its
growth over the RSS after loading; GPU: ``torch.cuda.max_memory_allocated`` after a reset at load); the
model FLOPs actually computed and the achieved FLOP/s against the measured throughput of a large
``torch.matmul`` in the same dtype on the same threads; agreement of per-item predictions with ancientbench
(and the largest log-probability difference). How FLOPs are counted (forward hooks on the decoder and the
LM head, so the count is what each runner really ran, padding included)::

    2 * (decoder matmul parameters) * (token positions through the decoder)
  + 2 * (LM head parameters)        * (positions the LM head ran on)
  + 4 * layers * (heads * head_dim)  * (query x key pairs attended, full rectangle per forward)

With ``--repeat N`` the runners run N times, interleaved and in alternating order; the table shows the best
repetition (other processes on a shared machine only slow a run down), the JSON also the median and every
repetition's time and load average. Timings on a shared machine are noisy: run when ``uptime`` is low.

Results go to ``bench/results/<timestamp>.json`` (ignored by git) and a table is printed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
CACHE_DIR = BENCH_DIR / ".cache"
RESULTS_DIR = BENCH_DIR / "results"
RUNNERS = ("ancientbench", "lm-eval", "plain")
DEFAULT_MODEL = "bench-qwen2-20m"
# Random-weight Qwen2 presets built offline with the tiny-random tokenizer (21,647 tokens, tied embeddings).
PRESETS = {
    # ~20M parameters: the default CPU workload
    "bench-qwen2-20m": dict(hidden_size=384, intermediate_size=1280, num_hidden_layers=6, num_attention_heads=6,
                            num_key_value_heads=2, max_position_embeddings=4096),
    # Qwen2.5-0.5B's decoder (24 layers, hidden 896, GQA 14/2, MLP 4864; ~0.36B non-embedding) with the small
    # vocabulary: ~0.38B parameters, the GPU workload (--device cuda --dtype bfloat16)
    "bench-qwen2-0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                             num_key_value_heads=2, max_position_embeddings=4096),
}
MODEL_VERSION = "1"  # bump when a preset changes

if str(REPO_ROOT) not in sys.path:  # run from a clone without an editable install
    sys.path.insert(0, str(REPO_ROOT))


# ------------------------------------------------------------------------------------------- workload


def preset_model_path(name: str = DEFAULT_MODEL) -> Path:
    """Build (once) a random Qwen2 preset with the offline tiny-random tokenizer, in ``bench/.cache``."""
    from ancientbench.tiny import build_tiny, tiny_random_path

    target = CACHE_DIR / f"{name}-v{MODEL_VERSION}"
    if (target / "config.json").is_file():
        return target
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_random_path()))
    tmp = Path(tempfile.mkdtemp(prefix=".model-", dir=_mkdir(CACHE_DIR)))
    build_tiny(tmp, "qwen2", tokenizer=tok, seed=0, **PRESETS[name])
    tmp.rename(target)
    return target


def _mkdir(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


def build_question_set(n: int, tasks: list[str] | None) -> tuple[Path, dict[str, int]]:
    """A dataset folder with ``n`` test items spread evenly over the tasks (evenly spaced rows of each test
    file) and each task's dev file, so both harnesses read exactly the same questions and exemplars."""
    from ancientbench import DATASET_PATH
    from ancientbench.schema import load_split, split_file, write_jsonl
    from ancientbench.tasks import TASK_NAMES

    data = Path(DATASET_PATH)
    present = [t for t in (tasks or TASK_NAMES)
               if split_file(data, t, "test").is_file() and split_file(data, t, "dev").is_file()]
    if not present:
        raise SystemExit(f"no task has both test and dev files under {data / 'data'}")
    share = {t: n // len(present) + (1 if i < n % len(present) else 0) for i, t in enumerate(present)}
    chosen: dict[str, list[dict]] = {}
    for t in present:
        rows = load_split(data, t, "test")
        k = min(share[t], len(rows))
        chosen[t] = [rows[(i * len(rows)) // k] for i in range(k)] if k else []
    key = f"{n}-" + "-".join(f"{t}{len(v)}" for t, v in chosen.items())
    folder = CACHE_DIR / "questions" / key
    for t, rows in chosen.items():
        write_jsonl(folder / "data" / t / "test.jsonl", rows)
        write_jsonl(folder / "data" / t / "dev.jsonl", load_split(data, t, "dev"))
    return folder, {t: len(v) for t, v in chosen.items() if v}


# ------------------------------------------------------------------------------------------ measuring


def rss_mib() -> float:
    """The current resident set size (Linux /proc; 0 where unavailable)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB on Linux


class FlopCounter:
    """Counts what a causal LM really computes, via hooks on its decoder stack and its LM head."""

    def __init__(self, model):
        cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        self.layers = int(cfg.num_hidden_layers)
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        self.attn_width = int(cfg.num_attention_heads * head_dim)
        head = model.get_output_embeddings()
        embed = model.get_input_embeddings()
        self.head_params = int(head.weight.numel())
        seen = {id(embed.weight), id(head.weight)}
        self.body_params = int(sum(p.numel() for p in model.parameters() if id(p) not in seen))
        self.total_params = int(sum(p.numel() for p in model.parameters()))
        self.body_tokens = 0
        self.head_rows = 0
        self.attn_pairs = 0
        self.forwards = 0
        decoder = model.get_decoder() if hasattr(model, "get_decoder") else model.base_model
        self.handles = [
            decoder.register_forward_pre_hook(self._pre, with_kwargs=True),
            head.register_forward_hook(self._head),
        ]

    def _pre(self, module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is None:
            ids = kwargs["inputs_embeds"][..., 0]
        b, q = ids.shape[0], ids.shape[-1]
        mask = kwargs.get("attention_mask")
        if mask is not None and mask.dim() == 2:
            kv = mask.shape[-1]
        else:
            past = kwargs.get("past_key_values")
            kv = q + (past.get_seq_length() if past is not None and hasattr(past, "get_seq_length") else 0)
        self.forwards += 1
        self.body_tokens += b * q
        self.attn_pairs += b * q * kv

    def _head(self, module, inputs, output):
        self.head_rows += inputs[0].shape[:-1].numel()

    def summary(self) -> dict:
        flops = (2 * self.body_params * self.body_tokens + 2 * self.head_params * self.head_rows
                 + 4 * self.layers * self.attn_width * self.attn_pairs)
        return {"forwards": self.forwards, "decoder_token_positions": self.body_tokens,
                "lm_head_positions": self.head_rows, "attention_pairs": self.attn_pairs, "flops": flops,
                "params_total": self.total_params, "params_decoder_matmul": self.body_params,
                "params_lm_head": self.head_params}


def matmul_throughput(device: str, dtype_name: str, threads: int, reps: int = 7) -> dict:
    """Best-of-N FLOP/s of a large square torch.matmul in the dtype, on the device and threads used."""
    import torch

    torch.set_num_threads(threads)
    dtype = getattr(torch, dtype_name)
    n = 8192 if device.startswith("cuda") else 2048
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    torch.matmul(a, b)
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.matmul(a, b)
        sync()
        times.append(time.perf_counter() - t0)
    best = min(times)
    return {"n": n, "dtype": dtype_name, "device": device, "threads": threads,
            "flops_per_s_best": 2 * n**3 / best, "flops_per_s_median": 2 * n**3 / statistics.median(times)}


# --------------------------------------------------------------------------------------------- worker


def _load(spec):
    import torch

    from ancientbench.models import load_model

    torch.set_num_threads(spec["threads"])
    loaded = load_model(spec["model"], device=spec["device"], dtype=spec["dtype"])
    return loaded


def _reset_gpu(device: str):
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def _gpu_peak(device: str) -> float | None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() / 2**20
    return None


def run_ancientbench(spec) -> dict:
    import ancientbench
    from ancientbench.evaluation import evaluate_model

    loaded = _load(spec)
    counter = FlopCounter(loaded.model)
    device = str(next(loaded.model.parameters()).device)
    code = str(Path(ancientbench.__file__).resolve().parent)
    if spec.get("code") and not Path(code).is_relative_to(Path(spec["code"]).resolve()):
        raise SystemExit(f"baseline runner imported ancientbench from {code}, not from {spec['code']}")
    rss0 = rss_mib()
    _reset_gpu(device)
    t0 = time.perf_counter()
    res = evaluate_model(loaded.model, loaded.tokenizer, shots=spec["shots"], data=spec["data"],
                         batch_size=spec["batch_size"], progress=False)[spec["shots"]]
    seconds = time.perf_counter() - t0
    preds = {r["id"]: (r["pred"], r["logprobs"]) for r in res["predictions"]}
    return {"seconds": seconds, "core_seconds": res["timing"]["seconds"], "preds": preds, "rss_after_load_mib": rss0,
            "gpu_peak_mib": _gpu_peak(device), "counts": counter.summary(), "device": device,
            "batch_size": res["setting"]["batch_size"], "prefix_cache": res["setting"]["prefix_cache"], "code": code}


def run_lm_eval(spec) -> dict:
    import lm_eval
    import torch
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from ancientbench.publish.lm_eval_export import export

    torch.set_num_threads(spec["threads"])
    tasks_dir = Path(spec["workdir"]) / "lm_eval_tasks"
    written = export(tasks_dir, data=spec["data"])
    tasks = sorted(n for n in written if not n.startswith("_"))
    device = spec["device"]
    lm = HFLM(pretrained=spec["model"], device=device, dtype=spec["dtype"], batch_size=spec["lm_eval_batch_size"])
    counter = FlopCounter(lm.model)
    core = [0.0]
    inner = lm.loglikelihood

    def timed(*a, **k):
        t = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            core[0] += time.perf_counter() - t

    lm.loglikelihood = timed
    rss0 = rss_mib()
    _reset_gpu(device)
    t0 = time.perf_counter()
    tm = TaskManager(include_path=str(tasks_dir), include_defaults=False)
    out = lm_eval.simple_evaluate(model=lm, tasks=tasks, num_fewshot=spec["shots"], task_manager=tm,
                                  log_samples=True, verbosity="ERROR")
    seconds = time.perf_counter() - t0
    preds = {}
    for name, samples in out["samples"].items():
        for s in samples:
            lls = [float(r[0]) for r in s["filtered_resps"]]
            best = max(range(4), key=lambda j: (lls[j], -j))  # numpy argmax: the first maximum
            preds[s["doc"]["id"]] = ("ABCD"[best], lls)
    return {"seconds": seconds, "core_seconds": core[0], "preds": preds, "rss_after_load_mib": rss0,
            "gpu_peak_mib": _gpu_peak(device), "counts": counter.summary(), "device": str(lm.device),
            "batch_size": spec["lm_eval_batch_size"]}


def run_plain(spec) -> dict:
    import torch

    from ancientbench.dataset import load_questions
    from ancientbench.prompts import prompt_text

    loaded = _load(spec)
    model, tok = loaded.model, loaded.tokenizer
    counter = FlopCounter(model)
    device = str(next(model.parameters()).device)
    rss0 = rss_mib()
    _reset_gpu(device)
    t0 = time.perf_counter()
    qs = load_questions(None, spec["data"], shots=[spec["shots"]])
    preds = {}
    letter_index = None
    with torch.inference_mode():
        for task, items in qs.items.items():
            shots = qs.exemplars.get(task, [])[: spec["shots"]]
            for item in items:
                text = prompt_text(task, item, shots)
                ids = tok(text)["input_ids"]
                if letter_index is None:  # each letter must be exactly one new token after the prompt
                    letter_index = []
                    for letter in "ABCD":
                        ext = tok(text + letter)["input_ids"]
                        if len(ext) != len(ids) + 1 or ext[: len(ids)] != ids:
                            raise SystemExit(f"plain loop: letter {letter!r} is not one new token after the prompt")
                        letter_index.append(ext[-1])
                logits = model(torch.tensor([ids], device=device)).logits  # full logits, every position
                row = logits[0, -1].float().log_softmax(-1)[letter_index].tolist()
                best = max(range(4), key=lambda j: (row[j], -j))
                preds[item["id"]] = ("ABCD"[best], row)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "core_seconds": seconds, "preds": preds, "rss_after_load_mib": rss0,
            "gpu_peak_mib": _gpu_peak(device), "counts": counter.summary(), "device": device, "batch_size": 1}


WORKERS = {"ancientbench": run_ancientbench, "lm-eval": run_lm_eval, "plain": run_plain}


def worker_main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    # the matmul limit under the conditions this runner meets (load on a shared machine changes it)
    ref = matmul_throughput(spec["device"], spec["dtype"], spec["threads"], reps=3)
    out = WORKERS[spec["runner"]](spec)
    out["matmul_flops_per_s"] = ref["flops_per_s_best"]
    out["peak_rss_mib"] = peak_rss_mib()
    out["threads"] = spec["threads"]
    Path(spec["result"]).write_text(json.dumps(out))
    return 0


# ---------------------------------------------------------------------------------------------- main


def run_worker(spec: dict, workdir: Path, env: dict) -> dict:
    tag = f"{spec['runner']}-{spec['shots']}-{spec['rep']}"
    spec = {**spec, "result": str(workdir / f"{tag}.json"), "workdir": str(workdir / tag)}
    spec_path = workdir / f"{tag}.spec.json"
    spec_path.write_text(json.dumps(spec))
    load0 = os.getloadavg()[0]
    if spec.get("code"):  # the baseline runner: the other checkout's package first on the path
        env = {**env, "PYTHONPATH": os.pathsep.join([spec["code"], env.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", str(spec_path)], env=env,
                          cwd=str(REPO_ROOT), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-6000:])
        raise SystemExit(f"runner {spec['runner']} ({spec['shots']}-shot) failed with exit code {proc.returncode}")
    out = json.loads(Path(spec["result"]).read_text())
    out["loadavg_before"] = load0
    out["loadavg_after"] = os.getloadavg()[0]
    return out


def agreement(ref: dict, other: dict) -> dict:
    ids = sorted(set(ref) | set(other))
    common = [i for i in ids if i in ref and i in other]
    same = sum(1 for i in common if ref[i][0] == other[i][0])
    diff = max((abs(a - b) for i in common for a, b in zip(ref[i][1] or [], other[i][1] or [])), default=None)
    return {"items": len(ids), "compared": len(common), "identical": same,
            "rate": same / len(ids) if ids else None, "max_abs_logprob_diff": diff,
            "differing_ids": [i for i in common if ref[i][0] != other[i][0]][:20],
            "missing_ids": [i for i in ids if i not in ref or i not in other][:20]}


def fmt_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.rjust(w) if k else cell.ljust(w) for k, (cell, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None,
                   help=f"Hub id, local folder, or a random preset built offline: {', '.join(PRESETS)} "
                        f"(default {DEFAULT_MODEL})")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:1, npu:0, ...")
    p.add_argument("--dtype", default="float32", help="float32 (default), bfloat16, float16")
    p.add_argument("--questions", type=int, default=500, help="test questions, spread evenly over the tasks (default 500)")
    p.add_argument("--tasks", nargs="+", default=None, help="tasks to draw from (default: every task with test and dev data)")
    p.add_argument("--shots", nargs="+", type=int, default=[0, 5], help="numbers of shots (default 0 5)")
    p.add_argument("--runners", nargs="+", choices=RUNNERS, default=list(RUNNERS), help="which runners (default all)")
    p.add_argument("--batch-size", default="8", help="ancientbench batch size, or 'auto' (default 8, as ancientbench eval)")
    p.add_argument("--lm-eval-batch-size", default=None, help="lm-eval batch size (default: --batch-size; 'auto' allowed)")
    p.add_argument("--threads", type=int, default=None, help="torch threads in every runner (default: CPU count)")
    p.add_argument("--repeat", type=int, default=1,
                   help="run each runner this many times, interleaved (order alternating); report the best")
    p.add_argument("--baseline-code", default=None, metavar="DIR",
                   help="also run the ancientbench runner with the package of another checkout (e.g. a worktree "
                        "of commit 242d0c3, data 1.0.0), on the same questions; prints the ratio to it")
    p.add_argument("--output", default=str(RESULTS_DIR), help="folder for <timestamp>.json (default bench/results)")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker_main(args.worker)

    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    model = args.model or DEFAULT_MODEL
    if model in PRESETS:
        model = str(preset_model_path(model))
    if Path(model).is_dir():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    threads = args.threads or os.cpu_count() or 1
    batch_size = args.batch_size if args.batch_size == "auto" else int(args.batch_size)
    lm_bs = args.lm_eval_batch_size or args.batch_size
    lm_bs = lm_bs if lm_bs == "auto" else int(lm_bs)
    runners = list(args.runners)
    baseline = None
    if args.baseline_code:
        code = Path(args.baseline_code).resolve()
        if not (code / "ancientbench" / "__init__.py").is_file():
            raise SystemExit(f"--baseline-code {code}: no ancientbench package there")
        ref = subprocess.run(["git", "-C", str(code), "describe", "--tags", "--always"], capture_output=True, text=True)
        baseline = f"ancientbench@{ref.stdout.strip() or code.name}"
        runners.append(baseline)
    data, per_task = build_question_set(args.questions, args.tasks)
    n_questions = sum(per_task.values())
    print(f"model {model}\nquestions {n_questions} ({', '.join(f'{t} {n}' for t, n in per_task.items())})\n"
          f"device {args.device}, dtype {args.dtype}, threads {threads}, batch size {batch_size} (lm-eval {lm_bs}); "
          f"CPU {cpu_name()} x{os.cpu_count()}, load average {os.getloadavg()[0]:.2f}", flush=True)
    peak = matmul_throughput(args.device, args.dtype, threads)
    print(f"matmul {peak['n']}x{peak['n']} {args.dtype}: {peak['flops_per_s_best'] / 1e9:.1f} GFLOP/s best, "
          f"{peak['flops_per_s_median'] / 1e9:.1f} median", flush=True)

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    runs: dict[int, dict[str, list[dict]]] = {k: {r: [] for r in runners} for k in args.shots}
    with tempfile.TemporaryDirectory(prefix="ancientbench-bench-") as tmp:
        for k in args.shots:
            for rep in range(args.repeat):
                # alternate the order, so a load that drifts during a repetition does not favour one runner
                for runner in (runners if rep % 2 == 0 else list(reversed(runners))):
                    spec = {"runner": "ancientbench" if runner == baseline else runner,
                            "code": str(Path(args.baseline_code).resolve()) if runner == baseline else None, "shots": k, "rep": rep, "model": model, "device": args.device,
                            "dtype": args.dtype, "data": str(data), "batch_size": batch_size,
                            "lm_eval_batch_size": lm_bs, "threads": threads}
                    out = run_worker(spec, Path(tmp), env)
                    runs[k][runner].append(out)
                    print(f"  {k}-shot {runner:20s} rep {rep + 1}: {len(out['preds']) / out['seconds']:7.2f} q/s "
                          f"({out['seconds']:.1f} s, load {out['loadavg_before']:.2f}->{out['loadavg_after']:.2f})",
                          flush=True)

    report = {"created": _dt.datetime.now().isoformat(timespec="seconds"), "model": model, "device": args.device,
              "dtype": args.dtype, "threads": threads, "questions": n_questions, "per_task": per_task,
              "data": str(data), "batch_size": batch_size, "lm_eval_batch_size": lm_bs, "repeat": args.repeat,
              "baseline": {"runner": baseline, "code": str(Path(args.baseline_code).resolve())} if baseline else None,
              "machine": {"cpu": cpu_name(), "cpu_count": os.cpu_count(), "platform": platform.platform(),
                          "loadavg_start": os.getloadavg()},
              "matmul": peak, "settings": {}}
    from ancientbench.evaluation import package_versions

    report["packages"] = package_versions()
    try:
        from importlib import metadata

        report["packages"]["lm_eval"] = metadata.version("lm_eval")
    except Exception:  # lm-eval not installed: its runner failed above already
        pass
    head = ["shots", "runner", "q/s", "scoring q/s", "seconds", "peak MiB", "+MiB", "tokens run", "GFLOP",
            "GFLOP/s", "% matmul", "% mm here", "same preds"]
    rows = [head]
    for k in args.shots:
        setting = {}
        ref = runs[k].get("ancientbench", [None])[0]
        for runner in runners:
            reps = runs[k][runner]
            n = len(reps[0]["preds"])
            # best of the repetitions: other processes on a shared machine only ever slow a run down
            secs = min(r["seconds"] for r in reps)
            core = min(r["core_seconds"] for r in reps)
            c = reps[0]["counts"]
            mem = reps[0]["gpu_peak_mib"] if reps[0]["gpu_peak_mib"] is not None else max(r["peak_rss_mib"] for r in reps)
            grow = None if reps[0]["gpu_peak_mib"] is not None else max(r["peak_rss_mib"] - r["rss_after_load_mib"] for r in reps)
            flops_s = c["flops"] / core
            agree = agreement(ref["preds"], reps[0]["preds"]) if ref else None
            setting[runner] = {
                "questions_per_second": n / secs, "scoring_questions_per_second": n / core,
                "questions_per_second_median": n / statistics.median(r["seconds"] for r in reps),
                "seconds": [r["seconds"] for r in reps], "scoring_seconds": [r["core_seconds"] for r in reps],
                "peak_memory_mib": mem, "memory_kind": "gpu max_memory_allocated" if grow is None else "cpu peak RSS",
                "rss_growth_mib": grow, "counts": c, "flops_per_second": flops_s,
                "matmul_fraction": flops_s / peak["flops_per_s_best"],
                "matmul_fraction_in_runner": flops_s / max(r["matmul_flops_per_s"] for r in reps), "agreement_with_ancientbench": agree,
                "batch_size": reps[0]["batch_size"], "device": reps[0]["device"],
                "loadavg": [(r["loadavg_before"], r["loadavg_after"]) for r in reps],
            }
            rows.append([str(k), runner, f"{n / secs:.2f}", f"{n / core:.2f}", f"{secs:.1f}", f"{mem:.0f}",
                         "-" if grow is None else f"{grow:.0f}", f"{c['decoder_token_positions']:,}",
                         f"{c['flops'] / 1e9:.1f}", f"{flops_s / 1e9:.2f}",
                         f"{100 * flops_s / peak['flops_per_s_best']:.1f}",
                         f"{100 * flops_s / max(r['matmul_flops_per_s'] for r in reps):.1f}",
                         "-" if agree is None else f"{agree['identical']}/{agree['items']}"])
        ratios = {}
        pairs = [("ancientbench", o) for o in ("lm-eval", "plain", baseline) if o]
        pairs += [(baseline, o) for o in ("lm-eval", "plain")] if baseline else []
        for mine, other in pairs:
            if mine in setting and other in setting:
                a, b = setting[mine], setting[other]
                ratios[f"{mine}/{other}"] = a["questions_per_second"] / b["questions_per_second"]
                ratios[f"{mine}/{other} (scoring only)"] = (a["scoring_questions_per_second"]
                                                            / b["scoring_questions_per_second"])
        setting["ratios"] = ratios
        report["settings"][str(k)] = setting
    print()
    print(fmt_table(rows))
    print()
    for k in args.shots:
        for name, v in report["settings"][str(k)]["ratios"].items():
            print(f"{k}-shot {name}: {v:.2f}x")
        for runner, s in report["settings"][str(k)].items():
            a = s.get("agreement_with_ancientbench") if isinstance(s, dict) else None
            if a and runner != "ancientbench":
                print(f"{k}-shot agreement ancientbench vs {runner}: {a['identical']}/{a['items']} identical predictions, "
                      f"max |logprob diff| {a['max_abs_logprob_diff']:.2e}")
    print("\nFLOPs = 2*decoder matmul params*decoder positions + 2*LM-head params*LM-head positions "
          "+ 4*layers*attn width*query-key pairs (padding included); GFLOP/s over the scoring step; "
          "'% matmul': of the matmul measured at the start, '% mm here': of the matmul measured in that runner's "
          "process just before it ran.")
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    report["machine"]["loadavg_end"] = os.getloadavg()
    path.write_text(json.dumps(report, indent=1, ensure_ascii=False))
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

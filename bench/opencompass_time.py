"""Wall time of AncientBench in OpenCompass against ``ancientbench eval``, same items, one run each, side by side.

    .venv/bin/python bench/opencompass_time.py [--model FOLDER] [--tasks radical cloze] [--items 20]

Both commands as a user types them (each a fresh process, model loading and start-up inside the clock),
on the first ``--items`` test items of each task, 0- and 5-shot, letter form, on CPU in float32:

- ``ancientbench eval --model M --data SUBSET --tasks ... --shots 0 5 --dtype float32 --device cpu``
- ``PYTHONPATH=OC opencompass --config-dir OC --datasets ancientbench_ppl_0shot ancientbench_ppl_5shot
  --summarizer ancientbench --hf-type base --hf-path M --hf-num-gpus 0 --model-kwargs torch_dtype=float32``
  (OpenCompass in ``.harnesses/opencompass``; its default batch size)

Prints both times, the ratio and how many items' letters agree. The default model is the shipped
``ancientbench-mini``, copied with the tokenizer class name transformers 4 reads (docs/harnesses.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ancientbench import DATASET_PATH  # noqa: E402
from ancientbench.publish import opencompass_export  # noqa: E402
from ancientbench.schema import load_split, write_jsonl  # noqa: E402

OC_BIN = ROOT / ".harnesses" / "opencompass" / "bin"


def oc_readable(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    cfg_path = dst / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    if cfg.get("tokenizer_class") == "TokenizersBackend":
        cfg.update(tokenizer_class="PreTrainedTokenizerFast", model_input_names=["input_ids", "attention_mask"])
    cfg_path.write_text(json.dumps(cfg, ensure_ascii=False), encoding="utf-8")
    return dst


def timed(cmd: list[str], cwd: Path, env: dict | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)  # OpenCompass writes .cache/ in cwd
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return took


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=str(ROOT / "ancientbench" / "mini" / "ancientbench-mini"))
    p.add_argument("--tasks", nargs="+", default=["radical", "cloze"])
    p.add_argument("--items", type=int, default=20)
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="oc-time-"))
    data = work / "data"
    for t in args.tasks:
        write_jsonl(data / "data" / t / "test.jsonl", load_split(DATASET_PATH, t, "test")[: args.items])
        write_jsonl(data / "data" / t / "dev.jsonl", load_split(DATASET_PATH, t, "dev"))
    model = oc_readable(Path(args.model), work / "model")
    opencompass_export.export(work / "oc", data=data)
    ours_cmd = [str(ROOT / ".venv" / "bin" / "ancientbench"), "eval", "--model", str(model), "--data", str(data),
                "--tasks", *args.tasks, "--shots", "0", "5", "--dtype", "float32", "--device", "cpu",
                "--output", str(work / "ours"), "--no-progress"]
    oc_cmd = [str(OC_BIN / "opencompass"), "--config-dir", str(work / "oc"), "--datasets", "ancientbench_ppl_0shot",
              "ancientbench_ppl_5shot", "--summarizer", "ancientbench", "--hf-type", "base", "--hf-path", str(model),
              "--hf-num-gpus", "0", "--model-kwargs", "torch_dtype=float32", "-w", str(work / "ocrun")]
    env = {**os.environ, "PYTHONPATH": str(work / "oc"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    t_ours = timed(ours_cmd, work)
    t_oc = timed(oc_cmd, work, env)
    agree = total = 0
    for shots in (0, 5):
        mine = {r["id"]: r["pred"] for r in map(json.loads, next((work / "ours").rglob(f"predictions_{shots}shot.jsonl")).open())}
        for t in args.tasks:
            (pred_file,) = (work / "ocrun").rglob(f"predictions/*/{opencompass_export.dataset_abbr(t, 'ppl', shots)}.json")
            preds = json.loads(pred_file.read_text(encoding="utf-8"))
            for i, item in enumerate(load_split(data, t, "test")):
                agree += preds[str(i)]["prediction"] == mine[item["id"]]
                total += 1
    print(f"items: {total} ({len(args.tasks)} tasks x {args.items} x 0/5-shot), model {Path(args.model).name}")
    print(f"ancientbench eval: {t_ours:.1f} s   opencompass: {t_oc:.1f} s   ratio opencompass/ancientbench: {t_oc / t_ours:.2f}")
    print(f"same letter: {agree}/{total}")
    shutil.rmtree(work)
    return 0 if agree == total else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""``ancientbench eval --backend openai`` end to end against local servers on 127.0.0.1:

- generate mode through a real ``transformers serve`` process, including a run interrupted with Ctrl-C
  (SIGINT) that a rerun completes with exactly the records of an uninterrupted run;
- letter mode through the logprob stub (tests/serving_support.py: real response shapes, numbers from the same
  tiny model in process), agreeing with the in-process ``hf`` backend item by item, 0- and 5-shot;
- missing letters (a short top list) recorded per item and counted in the results;
- letter mode through ``transformers serve`` (no logprobs) is one clear error line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("openai", reason="the openai backend needs the [serve] extra (pip install 'ancientbench[serve]')")

from serving_support import HoldingProxy, StubServer, TransformersServe, model_scorer  # noqa: E402
from support import FIXTURE_CHARS, REPO_ROOT, read_jsonl  # noqa: E402

from ancientbench.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    from ancientbench.tiny import build_tiny

    return build_tiny(tmp_path_factory.mktemp("tiny-e2e"), "qwen2", corpus=FIXTURE_CHARS, vocab_size=1200, seed=0)


@pytest.fixture(scope="module")
def served(tiny_folder, tmp_path_factory):
    with TransformersServe(tiny_folder, tmp_path_factory.mktemp("serve") / "serve.log") as server:
        yield server


def _records(folder: Path, shots: int = 0) -> list[dict]:
    return read_jsonl(folder / f"predictions_{shots}shot.jsonl")


def _only_dir(out: Path) -> Path:
    [d] = [p for p in out.iterdir() if p.is_dir()]
    return d


def test_generate_end_to_end_with_interrupted_run_resumed(served, fixture_data, tmp_path):
    common = ["eval", "--backend", "openai", "--base-url", served.base_url, "--model", served.model,
              "--mode", "generate", "--max-new-tokens", "12", "--data", str(fixture_data), "--shots", "0",
              "--log-samples", "--no-progress"]
    t0 = time.perf_counter()
    assert main(common + ["--output", str(tmp_path / "full"), "--concurrency", "4"]) == 0
    seconds_full = time.perf_counter() - t0
    full_dir = _only_dir(tmp_path / "full")
    assert full_dir.name == f"{Path(served.model).name}-openai-generate"
    full = _records(full_dir)
    assert len(full) == 35 and all("response" in r and "prompt" in r for r in full)
    results = json.loads((full_dir / "results_0shot.json").read_text())
    assert results["setting"]["backend"] == "openai" and results["setting"]["mode"] == "generate"
    assert all("extraction_failure_rate" in t for t in results["tasks"].values())

    # the same run, one request at a time, interrupted with Ctrl-C while the server holds its 4th request (a proxy
    # answers 3 and holds the rest: the interrupt lands at a known point, never after the run has finished); the
    # rerun goes through the same proxy (the server's URL is part of the setting), now answering everything
    out = tmp_path / "interrupted"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    with HoldingProxy(served.base_url, answer=3) as proxy:
        args = [a if a != served.base_url else proxy.base_url for a in common]
        # Ctrl-C's handler set explicitly: a suite started in the background (`cmd &`) hands its children SIGINT
        # ignored, and Python then installs no handler, so the interrupt would be lost and the run would finish
        cli = "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); from ancientbench.cli import main; sys.exit(main())"
        proc = subprocess.Popen([sys.executable, "-c", cli, *args, "--output", str(out), "--concurrency", "1"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proxy.held.wait(timeout=120), "the run never reached its 4th request"
        proc.send_signal(signal.SIGINT)
        # the run awaits its request in flight (what was paid for is kept): let held requests through, one
        # at a time, until it has stopped; a request it starts before the interrupt lands is held again
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            proxy.release_held()
            time.sleep(0.1)
        _, err = proc.communicate(timeout=10)
        assert proc.returncode == 130, err
        assert "run the same command again to resume" in err
        preds = out / full_dir.name / "predictions_0shot.jsonl"
        kept = read_jsonl(preds)
        assert 3 <= len(kept) < 35

        proxy.open()
        before = proxy.answered
        t0 = time.perf_counter()
        assert main(args + ["--output", str(out), "--concurrency", "4"]) == 0
        print(f"\ngenerate, 35 items: full run {seconds_full:.1f} s; resumed run {time.perf_counter() - t0:.1f} s "
              f"after {len(kept)} kept")
        assert proxy.answered - before == 35 - len(kept)  # only what the interrupted run had not written is asked again
    assert not list((out / full_dir.name).glob("*superseded*"))  # resumed, not set aside as another setting
    resumed = _records(out / full_dir.name)
    strip = lambda rs: [{k: v for k, v in r.items() if k != "seconds"} for r in rs]  # noqa: E731
    assert strip(resumed) == strip(full)
    again = json.loads((out / full_dir.name / "results_0shot.json").read_text())
    assert (again["tasks"], again["average"]) == (results["tasks"], results["average"])


def test_letter_mode_over_the_api_agrees_with_hf_in_process(tiny_folder, fixture_data, tmp_path):
    with StubServer(str(tiny_folder), model_scorer(tiny_folder)) as server:
        rc = main(["eval", "--backend", "openai", "--base-url", server.base_url, "--model", str(tiny_folder),
                   "--backend-option", "top_logprobs=2000", "--data", str(fixture_data), "--shots", "0", "5",
                   "--output", str(tmp_path / "api"), "--no-progress"])
        assert rc == 0
    assert main(["eval", "--model", str(tiny_folder), "--data", str(fixture_data), "--shots", "0", "5",
                 "--device", "cpu", "--dtype", "float32", "--output", str(tmp_path / "hf"), "--no-progress"]) == 0
    api_dir, hf_dir = _only_dir(tmp_path / "api"), _only_dir(tmp_path / "hf")
    assert api_dir.name.endswith("-openai") and not hf_dir.name.endswith("-openai")
    for shots in (0, 5):
        api, hf = _records(api_dir, shots), _records(hf_dir, shots)
        assert [r["id"] for r in api] == [r["id"] for r in hf] and len(api) == 35
        assert [r["pred"] for r in api] == [r["pred"] for r in hf]
        for a, h in zip(api, hf):
            assert a["logprobs"] == pytest.approx(h["logprobs"], abs=1e-4)
            assert "missing_letters" not in a
        ra = json.loads((api_dir / f"results_{shots}shot.json").read_text())
        rh = json.loads((hf_dir / f"results_{shots}shot.json").read_text())
        assert ra["average"] == rh["average"]


def test_context_fitting_with_a_local_tokenizer_matches_hf(tiny_folder, fixture_data, tmp_path):
    """With --tokenizer the openai backend counts prompt tokens as the server will, so a short --max-length
    drops the same exemplars as the hf backend does and the predictions stay equal."""
    limit = ["--max-length", "160", "--data", str(fixture_data), "--shots", "5", "--no-progress"]
    with StubServer(str(tiny_folder), model_scorer(tiny_folder)) as server:
        assert main(["eval", "--backend", "openai", "--base-url", server.base_url, "--model", str(tiny_folder),
                     "--tokenizer", str(tiny_folder), "--backend-option", "top_logprobs=2000",
                     "--output", str(tmp_path / "api"), *limit]) == 0
    assert main(["eval", "--model", str(tiny_folder), "--device", "cpu", "--dtype", "float32",
                 "--output", str(tmp_path / "hf"), *limit]) == 0
    api, hf = _records(_only_dir(tmp_path / "api"), 5), _records(_only_dir(tmp_path / "hf"), 5)
    assert [r["shots_used"] for r in api] == [r["shots_used"] for r in hf]
    assert min(r["shots_used"] for r in hf) < 5  # the limit did drop exemplars
    assert [(r["pred"], r.get("error_type")) for r in api] == [(r["pred"], r.get("error_type")) for r in hf]


def test_letters_missing_from_a_short_top_list_are_recorded(tiny_folder, fixture_data, tmp_path):
    """With the top 50 of a 1,200-token vocabulary every item lists some letters but not all (measured ranks
    of A-D here: best 14-43, worst 449-582). Missing ones are null and named per item; the prediction is the
    best listed letter, which is the model's own argmax over A-D (every missing letter ranks below the list),
    so predictions still equal the in-process hf backend's. With a top 2 no letter is listed: no answer,
    counted wrong, never a guess."""
    def run(k: int, out: Path) -> Path:
        with StubServer(str(tiny_folder), model_scorer(tiny_folder)) as server:
            assert main(["eval", "--backend", "openai", "--base-url", server.base_url, "--model", str(tiny_folder),
                         "--backend-option", f"top_logprobs={k}", "--data", str(fixture_data), "--shots", "0",
                         "--output", str(out), "--no-progress"]) == 0
        return _only_dir(out)

    folder = run(50, tmp_path / "top50")
    records = _records(folder)
    assert all(r.get("missing_letters") for r in records)
    for r in records:
        assert all(r["logprobs"]["ABCD".index(x)] is None for x in r["missing_letters"])
        assert r["pred"] is not None and r["pred"] not in r["missing_letters"]
    results = json.loads((folder / "results_0shot.json").read_text())
    assert sum(t.get("missing_letter_items", 0) for t in results["tasks"].values()) == len(records)
    assert main(["eval", "--model", str(tiny_folder), "--data", str(fixture_data), "--shots", "0", "--device", "cpu",
                 "--dtype", "float32", "--output", str(tmp_path / "hf"), "--no-progress"]) == 0
    assert [r["pred"] for r in records] == [r["pred"] for r in _records(_only_dir(tmp_path / "hf"))]

    records = _records(run(2, tmp_path / "top2"))
    assert all(r["pred"] is None and r["error_type"] == "missing_letters" for r in records)


def test_ppl_mode_over_the_api_agrees_with_hf_in_process(tiny_folder, fixture_data, tmp_path):
    """Option likelihoods from echoed prompt log-probabilities (as vLLM answers lm-eval's local-completions)
    equal the hf backend's: same predictions by both decisions, sums within 1e-4, same token counts."""
    with StubServer(str(tiny_folder), model_scorer(tiny_folder)) as server:
        assert main(["eval", "--backend", "openai", "--base-url", server.base_url, "--model", str(tiny_folder),
                     "--mode", "ppl", "--data", str(fixture_data), "--shots", "0", "5",
                     "--output", str(tmp_path / "api"), "--no-progress"]) == 0
        assert all(b.get("echo") and isinstance(b["prompt"], list) and len(b["prompt"]) == 4
                   for b in server.requests)
    assert main(["eval", "--model", str(tiny_folder), "--mode", "ppl", "--data", str(fixture_data), "--shots", "0",
                 "5", "--device", "cpu", "--dtype", "float32", "--output", str(tmp_path / "hf"), "--no-progress"]) == 0
    api_dir, hf_dir = _only_dir(tmp_path / "api"), _only_dir(tmp_path / "hf")
    for shots in (0, 5):
        api, hf = _records(api_dir, shots), _records(hf_dir, shots)
        assert len(api) == 35 and not any(r.get("error") for r in api)
        assert [(r["pred"], r["pred_sum"]) for r in api] == [(r["pred"], r["pred_sum"]) for r in hf]
        for a, h in zip(api, hf):
            assert a["option_logprobs"] == pytest.approx(h["option_logprobs"], abs=1e-4)
            assert a["option_tokens"] == h["option_tokens"]


def test_letter_mode_through_a_server_without_logprobs_is_one_error(served, fixture_data, tmp_path, capsys):
    rc = main(["eval", "--backend", "openai", "--base-url", served.base_url, "--model", served.model,
               "--data", str(fixture_data), "--shots", "0", "--limit", "1", "--output", str(tmp_path), "--no-progress"])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error:") and "no log-probabilities" in err[-1] and "--mode generate" in err[-1]

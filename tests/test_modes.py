"""Scoring modes (ppl, generate), the answer extractor, the backend registry and the setting's fingerprint."""

import json
import shutil

import pytest
import torch
from support import logged_warning, read_jsonl

from ancientbench import cli
from ancientbench.backends import (
    Backend,
    BackendError,
    GenerateResult,
    LetterResult,
    UnsupportedModeError,
    get_backend,
    register_backend,
)
from ancientbench.backends.hf import HFBackend
from ancientbench.evaluation import Settings, evaluate_model, score_task
from ancientbench.evaluation.extract import extract_letter
from ancientbench.prompts import build_mode_prompt, chat_wrap, prompt_text, template_info
from ancientbench.tasks import LETTERS

TASKS = ["radical", "cloze"]


def backend(lm, **kw):
    return HFBackend(lm.model, lm.tokenizer, batch_size=kw.pop("batch_size", 4), **kw)


# ------------------------------------------------------------------------------------------------- ppl


def reference_loglik(model, tok, context, continuation):
    """Textbook: one sequence, no padding, full logits; the continuation's tokens are those after the context's."""
    ctx = tok(context)["input_ids"]
    whole = tok(context + continuation)["input_ids"]
    assert whole[: len(ctx)] == ctx
    with torch.no_grad():
        logp = model(torch.tensor([whole])).logits[0].float().log_softmax(-1)
    return sum(float(logp[k - 1, whole[k]]) for k in range(len(ctx), len(whole))), len(whole) - len(ctx)


def test_ppl_sums_the_options_tokens_and_normalises_per_character(tiny_qwen2, fixture_items):
    test, dev = fixture_items["cloze"]
    s = Settings(mode="ppl", shots=2)
    got = score_task(backend(tiny_qwen2), s, "cloze", test, dev).records
    one = score_task(backend(tiny_qwen2, batch_size=1), s, "cloze", test, dev).records
    for r, r1, it in zip(got, one, test):
        context = build_mode_prompt("ppl", "cloze", it, dev[:2]).text
        assert context.endswith("答案是：") and dev[0][dev[0]["answer"]] + "\n\n" in context  # exemplar answers are texts
        for j, x in enumerate(LETTERS):
            ref, n = reference_loglik(tiny_qwen2.model, tiny_qwen2.tokenizer, context, it[x])
            assert abs(r["option_logprobs"][j] - ref) < 1e-4 and r["option_tokens"][j] == n
            assert abs(r["option_logprobs_norm"][j] - ref / len(it[x])) < 1e-4
        best = max(range(4), key=lambda j: (r["option_logprobs_norm"][j], -j))
        assert r["pred"] == LETTERS[best]
        assert r["pred_sum"] == LETTERS[max(range(4), key=lambda j: (r["option_logprobs"][j], -j))]
        assert r1["pred"] == r["pred"] and max(abs(a - b) for a, b in zip(r1["option_logprobs"], r["option_logprobs"])) < 1e-4


def test_ppl_results_record_both_decisions(tiny_qwen2, fixture_data, tmp_path):
    res = evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=fixture_data, tasks=TASKS, shots=1, mode="ppl",
                         output_dir=tmp_path, progress=False)[1]
    assert res["prompt"] == template_info("ppl") and res["prompt"]["template_version"].endswith("+ppl-1")
    assert res["setting"]["mode"] == "ppl" and "ppl_decision" in res["setting"]
    preds = read_jsonl(res["predictions_file"])
    for t in TASKS:
        mine = [p for p in preds if p["task"] == t]
        assert res["tasks"][t]["accuracy_sum"] == sum(p["pred_sum"] == p["gold"] for p in mine) / len(mine)
        assert res["tasks"][t]["accuracy"] == sum(p["pred"] == p["gold"] for p in mine) / len(mine)
    assert "-ppl" in res["predictions_file"]


# -------------------------------------------------------------------------------------------- generate


def test_generate_is_greedy_and_batch_independent(tiny_qwen2, fixture_items):
    test, dev = fixture_items["radical"]
    s = Settings(mode="generate", shots=1, max_new_tokens=6)
    got = score_task(backend(tiny_qwen2), s, "radical", test, dev, log_samples=True).records
    tok, model = tiny_qwen2.tokenizer, tiny_qwen2.model
    for r, it in zip(got, test):
        text = chat_wrap(tok, build_mode_prompt("generate", "radical", it, dev[:1])).text
        ids = tok(text, add_special_tokens=False)["input_ids"]
        out = model.generate(torch.tensor([ids]), max_new_tokens=6, do_sample=False, pad_token_id=tok.pad_token_id)
        new = out[0, len(ids):].tolist()
        if tok.eos_token_id in new:
            new = new[: new.index(tok.eos_token_id)]
        assert r["response"] == tok.decode(new, skip_special_tokens=True)
        assert r["prompt"] == prompt_text("radical", it, dev[:1])
        letter, rule = extract_letter(r["response"], it)
        assert r["pred"] == letter and (r.get("extraction_failed") is True) == (letter is None)


class Scripted(Backend):
    """A stub backend answering from a script: tests the evaluation layer without a model."""

    name = "scripted"
    modes = ("letter", "generate")
    answers: dict = {}

    @classmethod
    def load(cls, config):
        return cls()

    def info(self):
        return {"name_or_path": "scripted-model"}

    def fingerprint(self):
        return {"name_or_path": "scripted-model"}

    def letter_logprobs(self, requests, on_done=None):
        out = [LetterResult([-1.0, None, -0.5, None]) if i % 2 else LetterResult([None] * 4) for i in range(len(requests))]
        if on_done:
            on_done(list(range(len(out))), out)
        return out

    def generate(self, requests, on_done=None):
        out = []
        for r in requests:
            key = r.name.split("'")[1]
            out.append(GenerateResult(self.answers.get(key)) if key in self.answers else GenerateResult(None, error="HTTP 500"))
        for i in reversed(range(len(out))):  # any order, one by one, like a concurrent client
            if on_done:
                on_done([i], [out[i]])
        return out


def test_unparseable_answers_count_wrong_and_are_reported(fixture_data, fixture_items, tmp_path):
    register_backend("scripted", Scripted)
    test, _ = fixture_items["cloze"]
    gold = {it["id"]: it["answer"] for it in test}
    ids = [it["id"] for it in test]
    Scripted.answers = {ids[0]: f"<think>答案是{'A' if gold[ids[0]] != 'A' else 'B'}</think>答案是{gold[ids[0]]}",
                        ids[1]: "我不确定", ids[2]: "A或B", ids[3]: f"({gold[ids[3]]})",
                        ids[4]: test[4][gold[ids[4]]], ids[5]: "<think>还在想"}
    res = evaluate_model("scripted-model", backend="scripted", mode="generate", data=fixture_data, tasks=["cloze"],
                         shots=0, output_dir=tmp_path, progress=False, log_samples=True)[0]
    preds = {p["id"]: p for p in read_jsonl(res["predictions_file"])}
    assert [preds[i]["pred"] for i in ids[:6]] == [gold[ids[0]], None, None, gold[ids[3]], gold[ids[4]], None]
    assert [preds[i].get("extracted_by") for i in ids[:6]] == ["cue", None, None, "letter", "option_text", None]
    row = res["tasks"]["cloze"]
    assert row["extraction_failures"] == 3 and row["extraction_failure_rate"] == pytest.approx(3 / 6)
    assert row["item_errors"] == [ids[6]] and preds[ids[6]]["error"] == "HTTP 500" and not row["too_long_items"]
    assert row["correct"] == 3 and res["setting"]["chat"] is True  # generate is always a chat turn
    assert preds[ids[1]]["response"] == "我不确定" and "scripted-model-scripted-generate" in res["predictions_file"]


def test_letters_missing_from_a_backend_are_handled_explicitly(fixture_data):
    register_backend("scripted", Scripted)
    res = evaluate_model("scripted-model", backend="scripted", data=fixture_data, tasks=["cloze"], shots=0,
                         progress=False)[0]
    recs = res["predictions"]
    for i, r in enumerate(recs):
        if i % 2:  # A and C seen: C has the larger log-probability
            assert r["pred"] == "C" and r["missing_letters"] == ["B", "D"] and "error" not in r
        else:
            assert r["pred"] is None and r["error_type"] == "missing_letters"
    assert res["tasks"]["cloze"]["missing_letter_items"] == len(recs)
    with pytest.raises(UnsupportedModeError, match="does not support --mode ppl"):
        evaluate_model("scripted-model", backend="scripted", mode="ppl", data=fixture_data, tasks=["cloze"], shots=0,
                       progress=False)


def test_generate_context_fitting_counts_the_answer_budget(tiny_qwen2, fixture_items):
    test, dev = fixture_items["cloze"]
    from ancientbench.backends import Prompt

    be = backend(tiny_qwen2)

    lengths = be.count_tokens([Prompt(*build_mode_prompt("generate", "cloze", it), chat=True) for it in test])
    be.max_length = max(lengths) + 3  # every question fits alone, none with 4 new tokens for the longest
    recs = score_task(be, Settings(mode="generate", shots=0, max_new_tokens=4), "cloze", test, dev).records
    longest = {test[i]["id"] for i, x in enumerate(lengths) if x + 4 > be.max_length}
    assert longest and {r["id"] for r in recs if r.get("error_type") == "context_length"} == longest


# ------------------------------------------------------------------------------------------- extractor


@pytest.mark.parametrize("text,expected", [
    ("答案是B", ("B", "cue")), ("答案：C", ("C", "cue")), ("答案为 (D)。", ("D", "cue")),
    ("正确答案是（A）", ("A", "cue")), ("选B", ("B", "cue")), ("The answer is B.", ("B", "cue")),
    ("答案是A。不对，答案是C", ("C", "cue")), ("答案：Ｄ", ("D", "cue")),
    ("B", ("B", "letter")), ("(B)", ("B", "letter")), ("B. 其", ("B", "letter")), ("**C**", ("C", "letter")),
    ("其", ("B", "option_text")), ("答案：其。", ("B", "option_text")),
    ("<think>答案是A</think>\n答案是B", ("B", "cue")), ("嗯</think>D", ("D", "letter")),
    ("<think>答案是A", (None, None)), ("我不知道", (None, None)), ("A或B", (None, None)), ("BC", (None, None)),
    ("", (None, None)), (None, (None, None)),
])
def test_extractor(text, expected):
    assert extract_letter(text, {"A": "之", "B": "其", "C": "於", "D": "乎"}) == expected


# ------------------------------------------------------------------------------------- registry and CLI


def test_registry_and_help_list_backends_and_modes(capsys):
    assert get_backend("hf") is HFBackend and get_backend("tiny-random").name == "tiny-random"
    with pytest.raises(BackendError, match="unknown backend 'nope'; choose one of hf, tiny-random"):
        get_backend("nope")
    assert cli.main(["eval", "--model", "x", "--backend", "nope", "--output", "/nonexistent"]) == 2
    assert "unknown backend 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["eval", "--help"])
    out = capsys.readouterr().out
    for word in ("backends:", "hf", "tiny-random", "openai", "vllm", "modes:", "letter", "ppl", "generate",
                 "--log-samples", "--max-new-tokens"):
        assert word in out


def test_the_registry_refuses_collisions_and_non_backends(monkeypatch):
    from ancientbench.backends import base

    monkeypatch.setattr(base, "BACKENDS", dict(base.BACKENDS))
    monkeypatch.setattr(base, "_loaded", dict(base._loaded))
    register_backend("scripted", Scripted)
    register_backend("scripted", Scripted)  # the same target again changes nothing
    with pytest.raises(BackendError, match="'hf' is taken by ancientbench.backends.hf:HFBackend; pass replace=True"):
        register_backend("hf", Scripted)
    assert get_backend("hf") is HFBackend
    register_backend("scripted", "ancientbench.backends.hf:HFBackend", replace=True)
    assert get_backend("scripted") is HFBackend
    for bad in (dict, "no-colon", object()):
        with pytest.raises(BackendError, match="not a Backend subclass|not 'module:Class'"):
            register_backend("bad", bad)
    register_backend("points-at-a-function", "ancientbench.backends.base:register_backend")
    with pytest.raises(BackendError, match="is not a Backend subclass"):
        get_backend("points-at-a-function")


def test_log_samples_adds_the_prompt_in_letter_mode(tiny_qwen2, fixture_data, fixture_items):
    res = evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=fixture_data, tasks=["cloze"], shots=2,
                         log_samples=True, progress=False)[2]
    test, dev = fixture_items["cloze"]
    assert [r["prompt"] for r in res["predictions"]] == [prompt_text("cloze", it, dev[:2]) for it in test]
    plain = evaluate_model(tiny_qwen2.model, tiny_qwen2.tokenizer, data=fixture_data, tasks=["cloze"], shots=2,
                           progress=False)[2]
    assert "prompt" not in plain["predictions"][0]
    assert [r["pred"] for r in plain["predictions"]] == [r["pred"] for r in res["predictions"]]


# ------------------------------------------------------------------------------------------ fingerprint


def test_resume_covers_mode_and_the_tokenizer_files(tiny_qwen2, fixture_data, tmp_path, caplog):
    folder = tmp_path / "model"
    shutil.copytree(tiny_qwen2.info["name_or_path"], folder)
    kw = dict(data=fixture_data, tasks=["cloze"], shots=0, limit=2, output_dir=tmp_path / "out", progress=False,
              device="cpu", dtype="float32")
    letter = evaluate_model(str(folder), **kw)[0]
    ppl = evaluate_model(str(folder), mode="ppl", **kw)[0]
    assert letter["predictions_file"] != ppl["predictions_file"]  # modes never share files
    meta = json.loads(open(letter["predictions_file"].replace(".jsonl", ".meta.json")).read())["fingerprint"]
    assert meta["backend"] == "hf" and meta["mode"] == "letter" and meta["tokenizer_sha256"]
    config = folder / "tokenizer_config.json"
    cfg = json.loads(config.read_text())
    cfg["chat_template"] = (cfg.get("chat_template") or "") + "{# changed #}"
    config.write_text(json.dumps(cfg))
    with logged_warning(caplog, "tokenizer_sha256"):  # never reused: scored again
        assert evaluate_model(str(folder), **kw)[0]["timing"]["items_scored"] == 2
    (folder / "generation_config.json").write_text("{}")
    assert evaluate_model(str(folder), overwrite=True, **kw)[0]["timing"]["items_scored"] == 2


def test_cli_runs_ppl_and_generate_on_the_smoke_model(fixture_data, tmp_path, capsys):
    base = ["eval", "--model", "tiny-random", "--data", str(fixture_data), "--tasks", "cloze", "--limit", "2",
            "--shots", "0", "--output", str(tmp_path), "--no-progress"]
    assert cli.main([*base, "--mode", "ppl"]) == 0
    assert cli.main([*base, "--mode", "generate", "--max-new-tokens", "3", "--log-samples"]) == 0
    out = capsys.readouterr().out
    assert "ppl" in out and "generate" in out
    ppl = json.loads((tmp_path / "tiny-random-ppl" / "results_0shot.json").read_text())
    gen = json.loads((tmp_path / "tiny-random-generate" / "results_0shot.json").read_text())
    assert ppl["setting"]["mode"] == "ppl" and ppl["model"]["smoke_model"] is True
    assert gen["setting"]["max_new_tokens"] == 3 and gen["tasks"]["cloze"]["total"] == 2
    assert all("response" in r and "prompt" in r for r in read_jsonl(gen["predictions_file"]))


class Flaky(Scripted):
    """Answers one request at a time and is killed after ``budget`` answers (a paid-for API call is never lost)."""

    name = "flaky"
    budget = 10**9
    asked: list = []

    def generate(self, requests, on_done=None):
        out = []
        for i, r in enumerate(requests):
            if Flaky.budget == 0:
                raise KeyboardInterrupt
            Flaky.budget -= 1
            Flaky.asked.append(r.name)
            out.append(GenerateResult("答案是A"))
            on_done([i], [out[-1]])
        return out


def test_generate_resumes_after_an_interruption_without_asking_twice(fixture_data, tmp_path, caplog):
    register_backend("flaky", Flaky)
    kw = dict(backend="flaky", mode="generate", data=fixture_data, tasks=["cloze", "radical"], shots=0,
              output_dir=tmp_path, progress=False)
    Flaky.budget, Flaky.asked = 9, []
    with pytest.raises(KeyboardInterrupt):
        evaluate_model("scripted-model", **kw)
    first = list(Flaky.asked)
    Flaky.budget = 10**9
    res = evaluate_model("scripted-model", **kw)[0]
    assert len(first) == 9 and len(Flaky.asked) == 14 and len(set(Flaky.asked)) == 14  # 14 items, each asked once
    assert res["timing"]["items_resumed"] == 9 and res["timing"]["items_scored"] == 5
    assert all(r["pred"] == "A" for r in read_jsonl(res["predictions_file"]))
    with logged_warning(caplog, "max_new_tokens"):  # another answer budget is another setting
        assert evaluate_model("scripted-model", max_new_tokens=7, **kw)[0]["timing"]["items_resumed"] == 0


def test_backend_capabilities_live_on_the_class(monkeypatch):
    """The results family and in-process batching are read from the backend class (no list of names elsewhere):
    a backend registered at run time in hf's family shares its folders and resume fingerprint."""
    from ancientbench.backends import base

    class Twin(Scripted):
        name = "twin"
        family = "hf"
        batches_in_process = True

    monkeypatch.setitem(base.BACKENDS, "twin", "tests:Twin")
    monkeypatch.setitem(base._loaded, "twin", Twin)
    monkeypatch.setitem(base.BACKENDS, "scripted", "tests:Scripted")
    monkeypatch.setitem(base._loaded, "scripted", Scripted)
    assert Settings(backend="twin").output_name("m") == "m" and Settings(backend="twin").fingerprint({})["backend"] == "hf"
    assert Settings(backend="tiny-random").fingerprint({})["backend"] == "hf"
    assert Settings(backend="scripted").output_name("m") == "m-scripted"
    assert Settings(backend="openai", mode="ppl").output_name("m") == "m-openai-ppl"
    assert base.non_default_backend("twin") is None and base.non_default_backend("scripted") == "scripted"
    assert base.results_family("not-registered-here") == "not-registered-here"
    assert HFBackend.batches_in_process and not base.get_backend("openai").batches_in_process

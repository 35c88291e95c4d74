"""Each backend declares its options once (a typed config class) and its capabilities; the eval command's option groups,
the suite schema and the refusal of options a backend would ignore are derived from those declarations (issue 37,
points 2 and 3), and the evaluation code names no backend."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Annotated, Optional

import pytest
import yaml

from ancientbench.backends import base
from ancientbench.backends.base import Backend, backend_config, backend_for, get_backend, register_backend
from ancientbench.backends.hf import HFConfig
from ancientbench.backends.openai import OpenAIConfig
from ancientbench.backends.options import BackendConfig, Flag, OptionError, config_options, make_config
from ancientbench.cli import main

PACKAGE = Path(__file__).resolve().parents[1] / "ancientbench"


class WidgetConfig(BackendConfig):
    widgets: Annotated[Optional[int], Flag("--widgets", "how many widgets (test backend)", argparse={"type": int})] = None


class WidgetBackend(Backend):
    name = "widget"
    modes = ("letter",)
    config_class = WidgetConfig

    @classmethod
    def load(cls, config):
        raise AssertionError("never loaded here")

    def info(self):
        return {"name_or_path": "w"}

    def fingerprint(self):
        return {}


@pytest.fixture
def widget():
    """A plugin backend with an option of its own, registered for this test only."""
    register_backend("widget", WidgetBackend, help="a test backend")
    yield WidgetBackend
    for table in (base.BACKENDS, base.BACKEND_HELP, base._loaded):  # the registry as it was
        table.pop("widget", None)


def test_a_typed_config_refuses_an_unknown_key_naming_key_and_backend():
    with pytest.raises(OptionError, match=r"backend 'openai' has no option 'bogus'"):
        make_config(OpenAIConfig, "openai", {"model": "m", "bogus": 1})
    with pytest.raises(OptionError, match=r"base_url: not used by backend hf"):
        backend_config("hf", "m", {"base_url": "http://127.0.0.1:1/v1"})
    with pytest.raises(OptionError, match=r"--timeout must be a positive number of seconds, got nan \(backend 'openai'\)"):
        backend_config("openai", "m", {"timeout": float("nan")})
    with pytest.raises(Exception, match="Extra inputs are not permitted"):
        HFConfig(model="m", concurrency=2)  # pydantic's own refusal, extra="forbid"
    cfg = backend_config("openai", "m", {"options": [("top_logprobs", "5")], "timeout": 3})
    assert isinstance(cfg, OpenAIConfig) and cfg.options == {"top_logprobs": "5"} and cfg.timeout == 3.0


def test_load_backend_refuses_another_backends_config():
    with pytest.raises(OptionError, match="opened with a OpenAIConfig, not a HFConfig"):
        base.load_backend("openai", HFConfig(model="m"))


def test_each_backend_declares_only_what_it_reads():
    """The in-process placement options are the hf family's; vLLM places and batches itself."""
    fields = {n: set(config_options(get_backend(n).config_class)) for n in base.BACKENDS}
    assert {"device", "batch_size", "prefix_cache"} <= fields["hf"] and fields["hf"] == fields["tiny-random"]
    assert not {"device", "batch_size", "base_url"} & fields["vllm"] and "options" in fields["vllm"]
    assert {"base_url", "timeout", "options"} <= fields["openai"] and "device" not in fields["openai"]
    assert backend_for("hf", "tiny-random") == "tiny-random" and backend_for("hf", "org/m") == "hf"


def test_the_cli_groups_and_refusal_come_from_the_declarations(widget, capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    out = capsys.readouterr().out
    assert "options of backend widget:" in out and "--widgets WIDGETS" in out
    assert main(["eval", "--model", "m", "--widgets", "3", "--output", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--widgets: not used by --backend hf (--widgets for --backend widget)" in err
    # a server flag on the hf backend: the same derived check
    assert main(["eval", "--model", "m", "--concurrency", "2", "--output", str(tmp_path)]) == 2
    assert "--concurrency: not used by --backend hf (--concurrency for --backend openai)" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # refused before anything was written


def test_the_suite_schema_comes_from_the_declarations(widget, tmp_path):
    from ancientbench.evaluation.command import backend_options
    from ancientbench.suites import SuiteError, entry_keys, load_suite

    keys = set(entry_keys())
    assert {opt.suite_key for opt, _ in backend_options().values()} <= keys and "widgets" in keys
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"models": [{"model": "m", "backend": "widget", "widgets": 2}]}))
    cells = load_suite(path).cells
    assert cells and all(c.backend == "widget" and c.options["widgets"] == 2 for c in cells)
    path.write_text(yaml.safe_dump({"models": [{"model": "m", "backend": "widget", "widgets": "two"}]}))
    with pytest.raises(SuiteError, match=r"models\[1\], key 'widgets'"):
        load_suite(path)
    path.write_text(yaml.safe_dump({"models": [{"model": "m", "widgets": 2}]}))
    with pytest.raises(SuiteError, match=r"models\[1\]: widgets: not used by backend hf \(widgets for backend widget\)"):
        load_suite(path)


def test_evaluate_model_takes_options_once(tmp_path):
    from ancientbench.evaluation import evaluate_model

    with pytest.raises(Exception, match="give backend options in backend_config or as keywords, not both"):
        evaluate_model("m", backend_config=HFConfig(model="m"), batch_size=4, output_dir=tmp_path)
    with pytest.raises(OptionError, match="device: not used by backend openai"):
        evaluate_model("m", backend="openai", device="cpu")


# --------------------------------------------------------------------------------------- the code itself


def _help_strings(tree: ast.AST) -> set[int]:
    """ids of string constants that are user-facing help: docstrings, ``help=`` arguments, *_HELP tables."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
        if isinstance(node, ast.keyword) and node.arg == "help":
            out |= {id(n) for n in ast.walk(node.value)}
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.endswith("HELP") for t in node.targets):
            out |= {id(n) for n in ast.walk(node.value)}
    return out


# the smoke model's own name (its folder and card), which the tiny-random backend serves
NAME_ALLOWED = {("tiny.py", "TINY_RANDOM_NAME")}
# user-facing words that name the smoke model, not a backend: (file, text)
TEXT_ALLOWED = {("reports/ladder_record.py", "tiny-random")}  # a column header of the ladder's table


def test_no_backend_name_outside_the_backends_package():
    names = set(base.BACKENDS)
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "backends":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        helps = _help_strings(tree)
        allowed = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Assign)
                   for t in n.targets if isinstance(t, ast.Name) and (str(rel), t.id) in NAME_ALLOWED}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
                    and id(node) not in helps and id(node) not in allowed
                    and (str(rel), node.value) not in TEXT_ALLOWED):
                found.append(f"{rel}:{node.lineno}: {node.value!r}")
    assert not found, "backend names outside ancientbench/backends/ (use capability attributes):\n" + "\n".join(found)


def test_the_suite_keys_in_the_docs_are_the_declared_ones():
    from ancientbench.evaluation.command import backend_options

    text = (PACKAGE.parent / "docs" / "backends.md").read_text(encoding="utf-8")
    missing = [opt.suite_key for opt, _ in backend_options().values() if f"`{opt.suite_key}`" not in text]
    assert not missing, f"docs/backends.md does not list the suite keys {missing}"

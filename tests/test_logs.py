"""Logging: the library logs through per-module loggers and configures nothing; the CLI configures the
``ancientbench`` logger once per command, with --verbose/--quiet (ancientbench/logs.py)."""

from __future__ import annotations

import logging
import re
import subprocess
import sys

from support import REPO_ROOT

from ancientbench import cli, logs


def _own_handlers() -> list[logging.Handler]:
    return [h for h in logging.getLogger(logs.ROOT).handlers if h.get_name() == logs.HANDLER_NAME]


def test_configure_twice_keeps_one_handler_and_follows_stderr(capsys):
    logs.configure(0)
    logs.configure(0)
    assert len(_own_handlers()) == 1
    logging.getLogger("ancientbench.some.module").info("a notice")
    logging.getLogger("ancientbench.some.module").debug("a detail")
    assert capsys.readouterr().err == "a notice\n"
    logs.configure(-1)
    logging.getLogger("ancientbench.x").info("hidden")
    logging.getLogger("ancientbench.x").warning("shown")
    assert capsys.readouterr().err == "shown\n"
    logs.configure(1)
    logging.getLogger("ancientbench.x").debug("a detail")
    assert capsys.readouterr().err == "a detail\n"


def test_every_subcommand_takes_verbose_and_quiet():
    for command in cli.COMMANDS:
        parser = cli.build_parser(command)
        sub = next(a for a in parser._actions if a.dest == "command").choices[command]
        flags = {s for a in sub._actions for s in a.option_strings}
        assert {"-v", "--verbose", "-q", "--quiet"} <= flags, command


def test_importing_the_library_configures_no_logging():
    code = ("import logging, ancientbench, ancientbench.evaluation, ancientbench.builders.radical\n"
            "print(len(logging.getLogger('ancientbench').handlers), len(logging.getLogger().handlers))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    assert out.stdout.split() == ["0", "0"], out.stderr[-2000:]


def test_only_logs_py_sets_up_logging():
    """Handlers, levels and basicConfig are the CLI's business (through logs.configure), never a module's."""
    pattern = re.compile(r"basicConfig|addHandler|\.setLevel\(")
    found = [f"{p.relative_to(REPO_ROOT)}:{n}" for p in sorted((REPO_ROOT / "ancientbench").rglob("*.py"))
             if p.name != "logs.py" for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert not found, found

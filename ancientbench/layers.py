"""The package's layer table: which layer each module belongs to. A module imports only from its own layer or the
layers below it (module-level and function-level imports alike); ``tests/test_architecture.py`` checks every import
against this table and ``docs/architecture.md`` shows it (``python -m ancientbench.publish.copies`` renders it)."""

from __future__ import annotations

# (layer, what it holds, the modules: a name ending in "/" is a subpackage, every module under it)
LAYERS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (0, "folders, errors, file writing, shared argument types, logging, what counts as a Han character",
     ("paths", "errors", "fileio", "argtypes", "logs", "layers", "han")),
    (1, "task facts, item schema, prompts, score arithmetic, the dataset loader; the registry adapters; the package's "
        "own __init__ (it re-exports task facts)",
     ("__init__", "tasks", "schema", "prompts", "aggregate", "table", "dataset", "letters", "sources/")),
    (2, "builders and the validity checks over the sources; backends (requests in, results out)",
     ("builders/", "quality/", "backends/", "models", "tiny")),
    (3, "evaluation: prompts fitted to a model, modes, predictions, resume, results",
     ("evaluation/",)),
    (4, "reports read results files", ("reports/", "scoring")),
    (5, "jobs built from the layers below", ("suites", "finetune/", "human/", "mini/", "publish/")),
    (6, "the command line", ("cli", "__main__")),
)


def layer_of(module: str) -> int:
    """The layer of ``ancientbench.x.y`` (or ``x.y``); a module the table does not name is an error."""
    name = module.removeprefix("ancientbench").lstrip(".") or "__init__"
    for layer, _, members in LAYERS:
        for member in members:
            if name == member or (member.endswith("/") and (name + ".").startswith(member.replace("/", "."))):
                return layer
    raise KeyError(f"{module} is in no layer of ancientbench/layers.py: add it to LAYERS")


def render() -> str:
    """The table as docs/architecture.md shows it (between its ``layers:begin``/``layers:end`` markers)."""
    rows = ["| layer | modules | what it holds |", "|---|---|---|"]
    for layer, what, members in reversed(LAYERS):
        rows.append(f"| {layer} | {' '.join(f'`{m}`' for m in members)} | {what} |")
    return "\n".join(rows)


if __name__ == "__main__":  # python -m ancientbench.layers: print the table for the docs
    print(render())

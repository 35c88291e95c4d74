"""The report's PNG figures: the competency radar, the per-task bars (with a CJK font when one is installed)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ..tasks import COMPETENCIES, COMPETENCY_DISPLAY, TASK_BY_NAME, TASK_NAMES
from .results import Result, figure


def plot_labels_cjk() -> str | None:
    """Make a CJK-capable font available to matplotlib and return its family name, or None if none exists.

    matplotlib caches its font list, so a font installed after the cache was built (e.g. Debian
    fonts-wqy-microhei from scripts/install.sh) is added from the system font folders by file name.
    """
    from matplotlib import font_manager as fm  # lazy: matplotlib takes a second to import; only the plots need it

    known = ("WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Noto Sans CJK", "Noto Serif CJK", "Source Han", "Droid Sans Fallback", "AR PL", "SimHei", "Microsoft YaHei", "PingFang", "Hiragino Sans GB")

    def find() -> str | None:
        for f in fm.fontManager.ttflist:
            if f.name.startswith(known):
                return f.name
        return None

    name = find()
    if name:
        return name
    hints = ("wqy", "notosanscjk", "notoserifcjk", "noto-cjk", "sourcehan", "droidsansfallback", "uming", "ukai")
    for path in fm.findSystemFonts():
        if any(h in path.lower().replace("_", "").replace(" ", "") for h in hints):
            try:
                fm.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # an unreadable font file: skip it, try the next
                continue
    return find()


def _setup_matplotlib():
    import matplotlib  # lazy: matplotlib takes a second to import; only the plots need it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: matplotlib takes a second to import; only the plots need it

    cjk = plot_labels_cjk()
    if cjk:
        plt.rcParams["font.family"] = ["DejaVu Sans", cjk]  # Latin glyphs from DejaVu, CJK falls back to cjk
    return plt, cjk


def _label(zh: str, en: str, cjk: str | None, sep: str = "\n") -> str:
    return f"{zh}{sep}{en}" if cjk else en


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":")
CHANCE_STYLE = dict(color="tab:red", linestyle=(0, (4, 2)), linewidth=1.6)  # off the gridlines, so it stays visible


def _identical_to(rows: list[Result], key) -> dict[int, str]:
    """Row index -> label of an earlier row with exactly the same plotted values (their lines would coincide)."""
    seen: dict[tuple, str] = {}
    same: dict[int, str] = {}
    for i, r in enumerate(rows):
        values = key(r)
        if values in seen:
            same[i] = seen[values]
        else:
            seen[values] = r.label
    return same


def radar_figure(rows: list[Result], title: str):
    """The competency radar: one closed line per result, the human dashed black, chance as a red ring at 25%."""
    import numpy as np  # lazy: numpy costs start-up time; only the figures need it

    plt, cjk = _setup_matplotlib()
    n = len(COMPETENCIES)
    angles = np.linspace(0, 2 * np.pi, n, endpoint=False).tolist()
    fig = plt.figure(figsize=(8.5, 6), layout="constrained")
    ax = fig.add_subplot(111, polar=True)
    ax.set_theta_offset(np.pi / 2)
    ax.set_theta_direction(-1)
    ax.set_xticks(angles)
    ax.set_xticklabels([_label(*COMPETENCY_DISPLAY[c], cjk) for c in COMPETENCIES], fontsize=11)
    ax.set_ylim(0, 100)
    ax.set_yticks([20, 40, 60, 80, 100])  # no gridline at 25: the chance ring must not hide on one
    ax.set_yticklabels(["20", "40", "60", "80", "100"], fontsize=8, color="0.4")
    ring = np.linspace(0, 2 * np.pi, 200)
    ax.plot(ring, [25] * len(ring), label="chance (25%)", zorder=1, **CHANCE_STYLE)
    same = _identical_to(rows, lambda r: tuple(r.figures["competencies"].get(c) for c in COMPETENCIES))
    for i, r in enumerate(rows):
        vals = [100 * r.figures["competencies"].get(c, float("nan")) for c in COMPETENCIES]
        if r.is_human:
            style = dict(color="black", linestyle="--", linewidth=2, marker="o")
        elif i in same:  # a line that coincides with an earlier one: dashed with open markers, so both show
            style = dict(linewidth=2.2, marker=MARKERS[i % len(MARKERS)], markersize=8, markerfacecolor="none", linestyle=(0, (3, 3)))
        else:
            style = dict(linewidth=1.8, marker=MARKERS[i % len(MARKERS)], markersize=4, linestyle=LINESTYLES[(i // len(MARKERS)) % len(LINESTYLES)])
        label = r.label + (f" (= {same[i]})" if i in same else "")
        line = ax.plot(angles + angles[:1], vals + vals[:1], label=label, zorder=3, **style)[0]
        if not r.is_human:
            ax.fill(angles + angles[:1], vals + vals[:1], alpha=0.08, color=line.get_color())
    ax.set_title(title, pad=22)
    fig.legend(loc="outside right upper", fontsize=8, frameon=False)
    return fig


def radar_plot(rows: list[Result], path: Path, title: str) -> None:
    import matplotlib.pyplot as plt  # lazy: matplotlib takes a second to import; only the plots need it

    fig = radar_figure(rows, title)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def task_bar_figure(rows: list[Result], title: str):
    """Per-task accuracy bars with 95% bootstrap intervals, one bar per result, chance as a red line."""
    import numpy as np  # lazy: numpy costs start-up time; only the figures need it

    plt, cjk = _setup_matplotlib()
    tasks = [t for t in TASK_NAMES if any(t in r.figures["tasks"] for r in rows)]
    x = np.arange(len(tasks))
    width = 0.8 / max(1, len(rows))
    fig, ax = plt.subplots(figsize=(max(9, 1.3 * len(tasks) + 3.5), 5.4), layout="constrained")
    for j, r in enumerate(rows):
        vals, lo, hi = [], [], []
        for t in tasks:
            v, ci = figure(r, "task", t)
            vals.append(100 * v if v is not None else np.nan)
            lo.append(100 * (v - ci[0]) if ci else 0)
            hi.append(100 * (ci[1] - v) if ci else 0)
        kw = dict(color="0.25", hatch="//", edgecolor="white") if r.is_human else {}
        ax.bar(x - 0.4 + width * (j + 0.5), vals, width, yerr=[lo, hi], capsize=2, error_kw=dict(elinewidth=0.8, ecolor="0.3"), label=r.label, **kw)
    ax.axhline(25, label="chance (25%)", **CHANCE_STYLE)
    ax.set_xticks(x)
    ax.set_xticklabels([_label(TASK_BY_NAME[t].display_zh, textwrap.fill(TASK_BY_NAME[t].display_en, 13), cjk) for t in tasks], fontsize=9)
    ax.set_ylabel("accuracy (%), 95% bootstrap interval")
    ax.set_ylim(0, 103)
    ax.set_yticks([0, 20, 40, 60, 80, 100])
    ax.set_xlim(-0.6, len(tasks) - 0.4)
    ax.set_title(title)
    fig.legend(loc="outside right upper", fontsize=8, frameon=False)
    return fig


def task_bar_plot(rows: list[Result], path: Path, title: str) -> None:
    import matplotlib.pyplot as plt  # lazy: matplotlib takes a second to import; only the plots need it

    fig = task_bar_figure(rows, title)
    fig.savefig(path, dpi=130)
    plt.close(fig)

"""Plots of the benchmark figures: URLs/s and peak RSS per tool, one panel per task.

    bench/out/alt-venv/bin/python bench/plot.py FIGURES.json OUT_DIR

Run by bench/suites/run.py --alternatives with the alt venv's python, where matplotlib is
installed (never the project's venv). FIGURES.json: {"title": ..., "tasks": [{"task": ...,
"rows": [{"tool": ..., "rate": URLs/s, "rss_mb": MB, "ours": bool}, ...]}]}. Writes
OUT_DIR/bench-throughput.png and OUT_DIR/bench-memory.png. Imports nothing of the product.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
import matplotlib.ticker

OURS, BASELINE, OTHER = "#2b6cb0", "#4a5568", "#a0aec0"


def color(row: dict[str, Any]) -> str:
    if str(row["tool"]).startswith("bare"):
        return BASELINE  # the limit for Python here, not a tool anyone would run
    return OURS if row.get("ours") else OTHER


def panel_plot(figures: dict[str, Any], key: str, label: str, dest: Path) -> None:
    tasks = figures["tasks"]
    heights = [max(1.6, 0.45 * len(t["rows"]) + 0.9) for t in tasks]
    fig, axes = plt.subplots(
        len(tasks),
        1,
        figsize=(9, sum(heights)),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for ax, task in zip(axes[:, 0], tasks, strict=True):
        rows = list(reversed(task["rows"]))
        values = [float(r[key]) for r in rows]
        colors = [color(r) for r in rows]
        bars = ax.barh([r["tool"] for r in rows], values, color=colors)
        top = max(values) if values else 1.0
        for bar, value in zip(bars, values, strict=True):
            ax.text(
                bar.get_width() + top * 0.01,
                bar.get_y() + bar.get_height() / 2,
                f"{value:,.0f}" if key == "rate" else f"{value:,.1f}",
                va="center",
                fontsize=8,
            )
        ax.set_xlim(0, top * 1.18)
        ax.set_title(task["task"], fontsize=10, loc="left")
        ax.tick_params(axis="y", labelsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.xaxis.set_major_formatter(matplotlib.ticker.StrMethodFormatter("{x:,.0f}"))
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel(label)
    fig.suptitle(
        f"{figures['title']}: {label}\n"
        "blue: sitemap-audit, dark grey: bare Python loop (the limit), light grey: alternatives",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(dest, dpi=110)
    plt.close(fig)


def main() -> int:
    figures = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    panel_plot(figures, "rate", "URLs per second (higher is better)", out / "bench-throughput.png")
    panel_plot(figures, "rss_mb", "peak RSS, MB (lower is better)", out / "bench-memory.png")
    print(json.dumps({"written": ["bench-throughput.png", "bench-memory.png"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

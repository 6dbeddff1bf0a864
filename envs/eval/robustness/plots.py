"""Plots of a robustness report (:func:`realgap.envs.eval.robustness.sweep.build_report`): matplotlib, Agg backend, PNG
files.

- ``<factor>.png``: success rate (Wilson 95 % band) and mean time up (± 95 % CI) against the factor's value, one line
  per policy, the nominal value marked, and each policy's success under the task's own draws (dotted);
- ``heatmap_<x>_<y>.png``: success rate over the two-factor grid, one panel per policy, each cell annotated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: no display on a training box
import matplotlib.pyplot as plt  # noqa: E402


def _num(value: float | None) -> float:
    """A report number as a float (``None``, strict JSON's NaN, becomes NaN)."""
    return math.nan if value is None else float(value)


def _positions(values: list[float | None], nominal: float | None) -> tuple[list[float], float, bool]:
    """Where to draw each value and the nominal one: ``inf`` (an ideal stage; ``None`` in strict JSON) one step past
    the largest finite value, so that it is drawn and labelled. Also whether any value was ``inf``."""
    vs = [math.inf if v is None else float(v) for v in (*values, nominal)]
    finite = sorted({v for v in vs if math.isfinite(v)})
    step = (finite[-1] - finite[0]) / (len(finite) - 1) if len(finite) > 1 else 1.0
    at_inf = finite[-1] + step if finite else 0.0
    pos = [v if math.isfinite(v) else at_inf for v in vs]
    return pos[:-1], pos[-1], any(not math.isfinite(v) for v in vs)


def _tick(value: float | None) -> str:
    """A swept value as a tick label (``None``: ``inf`` written as strict JSON's null, an ideal stage)."""
    return f"{math.inf if value is None else value:g}"


def _label(name: str, factor: Mapping[str, Any]) -> str:
    return f"{name} [{factor['unit']}]" if factor.get("unit") else name


def plot_factor(
    name: str,
    factor: Mapping[str, Any],
    path: Path,
    metric_name: str = "success",
    reference: Mapping[str, Any] | None = None,
) -> Path:
    """Success rate and time up against one factor's values, per policy.

    Args:
        name: Factor name.
        factor: The factor's entry of the report's ``factors``.
        path: PNG file to write.
        metric_name: What success means for the task (axis label).
        reference: The report's ``reference`` (per policy, under the task's own draws): dotted lines.
    """
    fig, (ax_rate, ax_time) = plt.subplots(1, 2, figsize=(10, 3.8))
    values = next(iter(factor["policies"].values()))
    x, nominal_at, has_inf = _positions([r["value"] for r in values], factor["nominal"])
    for label, rows in factor["policies"].items():
        rate = [_num(r["success_rate"]) for r in rows]
        lo = [_num(r["success_ci95"][0]) for r in rows]
        hi = [_num(r["success_ci95"][1]) for r in rows]
        line = ax_rate.plot(x, rate, marker="o", label=label)[0]
        ax_rate.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2)
        if reference and label in reference:
            ax_rate.axhline(
                _num(reference[label]["success_rate"]),
                color=line.get_color(),
                linestyle=":",
                linewidth=1,
                label=f"{label}: task's own draws",
            )
        mean = [_num(r["time_up_s"]["mean"]) for r in rows]
        ci = [0.0 if math.isnan(_num(r["time_up_s"]["ci95"])) else r["time_up_s"]["ci95"] for r in rows]
        ax_time.errorbar(x, mean, yerr=ci, marker="o", capsize=3, color=line.get_color(), label=label)
    for ax in (ax_rate, ax_time):
        ax.axvline(nominal_at, color="grey", linestyle="--", linewidth=1, label="nominal")
        if has_inf:  # ticks at the swept values, "inf" among them
            ax.set_xticks(x, [_tick(r["value"]) for r in values])
        ax.set_xlabel(_label(name, factor))
        ax.grid(alpha=0.3)
    episodes = factor["policies"][next(iter(factor["policies"]))][0]["episodes"]
    ax_rate.set_ylabel(f"{metric_name} rate (95 % Wilson band)")
    ax_rate.set_ylim(-0.03, 1.03)
    ax_time.set_ylabel("mean time up [s] (± 95 % CI)")
    ax_rate.legend(fontsize=8)
    fig.suptitle(f"{name}: {factor['description']} ({episodes} episodes per point)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_heatmap(
    heatmap: Mapping[str, Any], factors: Mapping[str, Any], path: Path, metric_name: str = "success"
) -> Path:
    """Success rate over the two-factor grid, one panel per policy."""
    labels = list(heatmap["policies"])
    fig, axes = plt.subplots(1, len(labels), figsize=(4.6 * len(labels) + 0.8, 4.0), squeeze=False)
    xs, ys = heatmap["x_values"], heatmap["y_values"]
    image = None
    for ax, label in zip(axes[0], labels, strict=True):
        rate = [[_num(v) for v in row] for row in heatmap["policies"][label]["success_rate"]]
        image = ax.imshow(rate, origin="lower", vmin=0.0, vmax=1.0, cmap="RdYlGn", aspect="auto")
        for i, row in enumerate(rate):
            for j, value in enumerate(row):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(xs)), [_tick(v) for v in xs])
        ax.set_yticks(range(len(ys)), [_tick(v) for v in ys])
        ax.set_xlabel(_label(heatmap["x"], factors[heatmap["x"]]))
        ax.set_ylabel(_label(heatmap["y"], factors[heatmap["y"]]))
        ax.set_title(label, fontsize=9)
    fig.colorbar(image, ax=axes[0].tolist(), label=f"{metric_name} rate")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_plots(report: Mapping[str, Any], out_dir: str | Path, metric_name: str = "success") -> list[Path]:
    """Every plot of ``report`` into ``out_dir``; returns the files written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    reference = report.get("reference")
    paths = [plot_factor(name, f, out / f"{name}.png", metric_name, reference) for name, f in report["factors"].items()]
    heatmap = report.get("heatmap")
    if heatmap:
        path = out / f"heatmap_{heatmap['x']}_{heatmap['y']}.png"
        paths.append(plot_heatmap(heatmap, report["factors"], path, metric_name))
    return paths

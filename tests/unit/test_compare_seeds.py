"""The comparison's seed-level section, read from the committed comparison (files only, no simulator)."""

import json
from pathlib import Path

import pytest

from realgap.envs.eval.compare import seeds as compare_seeds
from realgap.envs.eval.compare import table as compare

pytestmark = pytest.mark.unit

FOLDER = Path(__file__).resolve().parents[2] / "docs" / "results" / "compare_actions"


@pytest.fixture(scope="module")
def committed():
    settings = json.loads((FOLDER / "comparison.json").read_text())["settings"]
    results = compare.load_comparison(FOLDER, settings)
    return results, compare.table_rows(results)


def test_metrics_hold_one_value_per_seed(committed):
    results, rows = committed
    m = compare_seeds.metrics(results, rows)
    seeds = {}
    for r in results:
        seeds.setdefault(r.space, []).append(r.seed)
    for metric in ("play_success", "steps_to_0.4", "steps_to_0.8"):
        assert {space: len(v) for space, v in m[metric].items()} == {s: len(v) for s, v in seeds.items()}
    # the per-seed Play success is the table's own number
    assert m["play_success"]["joint_vel"] == [r["success_rate"] for r in rows if r["action_space"] == "joint_vel"]


def test_markdown_ranks_only_separated_pairs(committed):
    results, rows = committed
    text = compare_seeds.markdown(results, rows)
    # 0/64 against 62/64 separates even with two seeds; 97 % against 91 % with two seeds does not
    assert "joint_vel ahead of joint_pos by" in text
    assert "joint_vel and ee_pose_delta tied" in text
    # a seed that never got there is counted, not dropped: the joint position interfaces never reached 40 % in 200
    # iterations, and their rows say so with their own seed count
    n_pos = sum(r.space == "joint_pos" for r in results)
    assert f"| `joint_pos` | {n_pos} | 1.23 M (1.23 M to 1.23 M) (0/{n_pos} reached) |" in text


def test_plot_bands_writes_a_png(committed, tmp_path):
    results, _ = committed
    path = compare_seeds.plot_bands(results, tmp_path / "bands.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_glance_table_has_one_row_per_space_and_ranks_only_separated_pairs(committed):
    results, rows = committed
    lines = compare_seeds.glance(results, rows)
    spaces = list(dict.fromkeys(r.space for r in results))
    body = {line.split("|")[1].strip().strip("`"): line for line in lines[2:]}
    assert list(body) == spaces and len(lines) == len(spaces) + 2
    ahead = body["joint_vel"].rsplit("|", 2)[1]
    assert "`joint_pos`" in ahead and "`ee_pose_delta`" not in ahead  # 62/64 vs 0/64 separates; 97 % vs 91 % ties
    assert body["joint_pos"].rsplit("|", 2)[1].strip() == "none"  # never lifted: ahead of nothing
    cells = body["joint_vel"].split("|")[3:-2]
    assert len(cells) == 5 and "reached" in cells[1]  # Play, steps to 40 % and 80 %, two sweeps


def test_the_results_page_shows_the_committed_comparisons_table(committed):
    # the page's seed-level table is the one the committed runs give: a sitting joined without updating the page fails
    results, rows = committed
    page = (FOLDER.parent / "action_spaces.md").read_text()
    for line in compare_seeds.glance(results, rows):
        assert line in page, f"docs/results/action_spaces.md lacks: {line[:80]}"

"""The shared flags: each declared once (``--policy`` included), with one help, required / repeatable / another
default only where a script asks, and no script declaring its own copy."""

import argparse
import ast
from pathlib import Path

import pytest

from realgap.envs.deploy.flags import POLICY_FLAG, add_policy_flag
from realgap.envs.run.cli import UsageError, add_shared_flag, parser, shared_flags

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]
OWN_POLICY_FLAG_ALLOWED = {"envs/deploy/flags.py"}
"""Where ``add_argument("--policy", ...)`` may appear: its one declaration (every deploy-side command line, the DDS
simulator's included, calls :func:`add_policy_flag`)."""


def test_policy_is_one_flag_with_one_help_whatever_the_script_asks():
    p = parser(None, shared_flags("policy", required=("policy",)))
    assert p.parse_args(["--policy", "a"]).policy == "a"
    with pytest.raises(UsageError, match="--policy"):
        p.parse_args([])
    many = parser(None, shared_flags("policy", repeatable=("policy",)))
    assert many.parse_args(["--policy", "a", "--policy", "b"]).policy == ["a", "b"]
    assert many.parse_args([]).policy == []
    other = parser(None, shared_flags("policy", policy="configs/policies/balance_g1"))
    assert other.parse_args([]).policy == "configs/policies/balance_g1"
    helps = {a.help.split(" (")[0] for q in (p, many, other) for a in q._actions if "--policy" in a.option_strings}
    assert helps == {POLICY_FLAG["help"].split(" (")[0]}


def test_shared_flag_goes_into_a_group_and_a_deploy_parser():
    p = argparse.ArgumentParser()
    add_shared_flag(p.add_mutually_exclusive_group(required=True), "policy")
    assert p.parse_args(["--policy", "x"]).policy == "x"
    deploy = argparse.ArgumentParser()
    add_policy_flag(deploy, required=True)
    with pytest.raises(SystemExit):
        deploy.parse_args([])


def test_a_flag_not_named_is_refused():
    with pytest.raises(KeyError, match="policy"):
        shared_flags("task", required=("policy",))


def test_no_script_or_module_declares_its_own_policy_flag():
    own = []
    for path in sorted([*(REPO / "scripts").glob("*.py"), *(REPO / "envs").rglob("*.py")]):
        rel = str(path.relative_to(REPO))
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"
                and any(isinstance(a, ast.Constant) and a.value == "--policy" for a in node.args)
                and rel not in OWN_POLICY_FLAG_ALLOWED
            ):
                own.append(f"{rel}:{node.lineno}")
    assert own == [], "use shared_flags('policy', ...) / add_shared_flag, or add_policy_flag on the deploy side"

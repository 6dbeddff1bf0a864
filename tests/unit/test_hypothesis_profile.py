"""Property tests are derandomized where CI is set (the same examples on every run) and keep their example database
locally (tests/conftest.py)."""

import pytest
from conftest import hypothesis_profile
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("environ", "profile"),
    [
        ({}, "dev"),
        ({"CI": "true"}, "ci"),
        ({"CI": "1"}, "ci"),
        ({"CI": "false"}, "dev"),
        ({"CI": ""}, "dev"),
        ({"CI": "true", "HYPOTHESIS_PROFILE": "dev"}, "dev"),  # an explicit choice wins
        ({"HYPOTHESIS_PROFILE": "ci"}, "ci"),  # reproduce the CI run locally
    ],
)
def test_profile_follows_the_ci_variable(environ, profile):
    assert hypothesis_profile(environ) == profile


def test_ci_profile_is_derandomized_without_a_database_and_dev_keeps_the_default_one():
    ci, dev = settings.get_profile("ci"), settings.get_profile("dev")
    assert ci.derandomize and ci.database is None and ci.print_blob
    assert not dev.derandomize and isinstance(dev.database, ExampleDatabase) and dev.print_blob


def _draws(profile: str) -> list[int]:
    seen: list[int] = []

    @settings(settings.get_profile(profile), max_examples=20, database=None)  # no writes to the local database
    @given(st.integers(0, 10**9))
    def record(x: int) -> None:
        seen.append(x)

    record()
    return seen


def test_derandomized_runs_draw_the_same_examples():
    assert _draws("ci") == _draws("ci")
    assert _draws("dev") != _draws("dev")  # random locally: 20 draws from 10^9 values never repeat by chance


def test_this_run_loaded_the_profile_its_environment_asks_for(request):
    if request.config.getoption("hypothesis_profile", None):  # pytest --hypothesis-profile NAME chose explicitly
        pytest.skip("profile chosen with --hypothesis-profile")
    assert settings.get_current_profile_name() == hypothesis_profile()
    assert settings.default.derandomize == (hypothesis_profile() == "ci")

"""The rules' examples and our data scripts under real torch (needs the `test` extra): each
invalid example really fails the way its rule says, its fixed source really trains, and each
valid look-alike trains."""

import json
import os
import subprocess
import sys
import tempfile

import pytest
from helpers import strip_markers
from test_data_scripts import runtime_cases

from gradaudit.analysis.rules import RULES

pytestmark = [pytest.mark.runtime, pytest.mark.slow]
HARNESS = os.path.join(os.path.dirname(__file__), "runtime", "harness.py")


def _cases():
    cases = []
    for rule in RULES:
        for i, ex in enumerate(rule.invalid):
            if ex.runtime:
                cases.append(
                    {"id": f"{rule.code}-invalid-{i}", "source": strip_markers(ex.source)[0], "expect": ex.runtime}
                )
            if ex.fixed is not None and ex.fixed_runtime:
                cases.append({"id": f"{rule.code}-fixed-{i}", "source": ex.fixed, "expect": ex.fixed_runtime})
        for i, ex in enumerate(rule.valid):
            if ex.runtime:
                cases.append(
                    {"id": f"{rule.code}-valid-{i}", "source": strip_markers(ex.source)[0], "expect": ex.runtime}
                )
    return cases + runtime_cases()


CASES = _cases()


@pytest.fixture(scope="module")
def results():
    try:
        import torch  # noqa: F401
    except ImportError:
        pytest.skip("torch is not installed (pip install -e '.[test]')")
    with tempfile.TemporaryDirectory() as tmp:
        cases_path, results_path = os.path.join(tmp, "cases.json"), os.path.join(tmp, "results.json")
        with open(cases_path, "w") as fh:
            json.dump(CASES, fh)
        subprocess.run([sys.executable, HARNESS, cases_path, results_path], check=True, timeout=900, cwd=tmp)
        with open(results_path) as fh:
            return json.load(fh)


def test_examples_declare_runtime():
    for rule in RULES:
        for ex in rule.invalid + rule.valid:
            assert ex.runtime, f"{rule.code}: an example without a runtime expectation"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_runtime(case, results):
    r = results[case["id"]]
    assert r["ok"], f"{case['id']} expected {case['expect']!r}: {r['why']}"

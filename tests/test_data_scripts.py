"""Realistic scripts of our own, beyond the rules' examples: buggy ones report exactly their
marked anchors, look-alikes report nothing (tests/data/bugs, tests/data/valid)."""
import glob
import os

import pytest

from helpers import analyze, found, strip_markers

HERE = os.path.join(os.path.dirname(__file__), "data")
BUGS = sorted(glob.glob(os.path.join(HERE, "bugs", "*.py")))
VALID = sorted(glob.glob(os.path.join(HERE, "valid", "*.py")))


def runtime_header(path):
    with open(path) as fh:
        first = fh.readline()
    return first.split("# runtime:", 1)[1].strip() if first.startswith("# runtime:") else None


@pytest.mark.parametrize("path", BUGS, ids=os.path.basename)
def test_bug_script(path):
    with open(path) as fh:
        source, expected = strip_markers(fh.read())
    assert expected, "a bug script without its markers"
    result = analyze(source, path="train.py")
    assert result.error is None
    assert found(result) == expected
    assert all(f.confidence == "confirmed" for f in result.findings)


@pytest.mark.parametrize("path", VALID, ids=os.path.basename)
def test_valid_script(path):
    with open(path) as fh:
        source, expected = strip_markers(fh.read())
    assert expected == []
    result = analyze(source, path="train.py")
    assert result.error is None
    assert found(result) == []


def runtime_cases():
    cases = []
    for path in BUGS + VALID:
        expect = runtime_header(path)
        if expect and not expect.startswith("skip"):
            with open(path) as fh:
                cases.append({"id": "data-" + os.path.basename(path), "source": strip_markers(fh.read())[0],
                              "expect": expect})
    return cases

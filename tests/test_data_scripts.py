"""Realistic scripts of our own, beyond the rules' examples: buggy ones report exactly their
marked anchors, look-alikes report nothing (tests/data/bugs, tests/data/valid, and project folders under
tests/data/projects)."""

import glob
import os

import pytest
from helpers import analyze, found, strip_markers

from gradaudit.analysis.check.engine import Analyzer

HERE = os.path.join(os.path.dirname(__file__), "data")
BUGS = sorted(glob.glob(os.path.join(HERE, "bugs", "*.py")))
VALID = sorted(glob.glob(os.path.join(HERE, "valid", "*.py")))


def runtime_header(path):
    with open(path) as fh:
        first = fh.readline()
    return first.split("# runtime:", 1)[1].strip() if first.startswith("# runtime:") else None


def expected_confidence(source):
    """`confirmed` unless the header says `# confidence: suspicious` (a hazard the data decides,
    such as a log of a probability that underflows only for some inputs)."""
    for line in source.splitlines()[:3]:
        if line.startswith("# confidence:"):
            return line.split(":", 1)[1].strip()
    return "confirmed"


@pytest.mark.parametrize("path", BUGS, ids=os.path.basename)
def test_bug_script(path):
    with open(path) as fh:
        source, expected = strip_markers(fh.read())
    assert expected, "a bug script without its markers"
    result = analyze(source, path="train.py")
    assert result.error is None
    assert found(result) == expected
    level = expected_confidence(source)
    assert all(f.confidence == level for f in result.findings)


@pytest.mark.parametrize("path", VALID, ids=os.path.basename)
def test_valid_script(path):
    with open(path) as fh:
        source, expected = strip_markers(fh.read())
    assert expected == []
    result = analyze(source, path="train.py")
    assert result.error is None
    assert found(result) == []


# small project folders (a model module, helpers, train.py): the engine follows the imports of
# train.py; the ones whose train.py opens with a `# runtime:` header carry markers in any module
PROJECTS = sorted(
    d for d in glob.glob(os.path.join(HERE, "projects", "*")) if runtime_header(os.path.join(d, "train.py")) is not None
)


@pytest.mark.parametrize("root", PROJECTS, ids=os.path.basename)
def test_project(root):
    expected = []
    for path in sorted(glob.glob(os.path.join(root, "*.py"))):
        with open(path) as fh:
            expected += [(os.path.basename(path), line, code) for line, code in strip_markers(fh.read())[1]]
    result = Analyzer().analyze_file(os.path.join(root, "train.py"))
    assert result.error is None
    assert sorted((os.path.basename(f.span.path), f.span.line, f.code) for f in result.findings) == sorted(expected)
    assert all(f.confidence == "confirmed" for f in result.findings)


def runtime_cases():
    cases = []
    for path in BUGS + VALID:
        expect = runtime_header(path)
        if expect and not expect.startswith("skip"):
            with open(path) as fh:
                cases.append(
                    {"id": "data-" + os.path.basename(path), "source": strip_markers(fh.read())[0], "expect": expect}
                )
    return cases

"""Real-code regression test: pinned PyPI packages that ship training code, under `gradaudit check`.

Fails on a crash, on a confirmed finding that is not in reviewed.txt, and on a confirmed finding
reviewed as a false alarm. Suspicious findings are counted, not fatal. Downloads go to the cache of
realcode.py (benchmarks/.cache); offline, the test is skipped, except in CI (CI=true) or with
GRADAUDIT_REALCODE_REQUIRE=1, where it fails. See realcode.py for the list's format and --update.
"""

from __future__ import annotations

import os
import re
import sys
import warnings

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realcode


def _required() -> bool:
    return any(
        os.environ.get(v, "").lower() not in ("", "0", "false", "no") for v in ("CI", "GRADAUDIT_REALCODE_REQUIRE")
    )


@pytest.fixture(scope="module")
def realcode_run(pytestconfig):
    packages = realcode.load_sources()
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")

    def log(msg):
        if reporter is not None and pytestconfig.getoption("verbose") > 0:
            with pytestconfig.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
                reporter.write_line(msg)

    try:
        runs, reviews = realcode.run_all(packages, log=log)
    except realcode.FetchError as exc:
        msg = (
            f"the pinned packages of tests/realcode/sources.toml could not be downloaded into "
            f"{realcode.cache_dir()}: {exc}"
        )
        if _required():
            pytest.fail(msg + "\n(CI=true or GRADAUDIT_REALCODE_REQUIRE is set: the real-code test must run)")
        pytest.skip("real-code test skipped (offline?): " + msg)
    # the coverage table: with -v as the run goes; otherwise only in a failure's message (written
    # under -q it broke the line of progress dots in two)
    for line in realcode.summary_lines(runs, reviews):
        log(line)
    return runs, reviews


def coverage(run) -> str:
    """The coverage table of the run, for a failure's message."""
    return "\n\nreal code covered:\n" + "\n".join(realcode.summary_lines(*run))


@pytest.mark.slow
@pytest.mark.realcode
def test_no_crash_on_real_code(realcode_run):
    runs, _ = realcode_run
    crashed = [f"{r.source}:\n{r.crashes}" for r in runs if r.crashes]
    assert not crashed, "gradaudit crashed on real code:\n" + "\n".join(crashed) + coverage(realcode_run)
    assert sum(r.files for r in runs) > 1000, "the real-code set shrank: did an unpack go wrong?" + coverage(
        realcode_run
    )


@pytest.mark.slow
@pytest.mark.realcode
def test_confirmed_findings_are_reviewed(realcode_run):
    runs, reviews = realcode_run
    problems = [p for p in realcode.failures(reviews, []) if "not in" in p.split("\n", 1)[0]]
    assert not problems, problems[0] + coverage(realcode_run)


# False alarms the engine still raises on the pinned packages, by the reduction their entries name: open
# work for the engine (each reduction is a strict xfail in tests/test_realcode_reductions.py). They are
# printed, not fatal; once fixed, the name must leave this set (the test says so).
KNOWN_FALSE: set = set()


def _reduction(entry) -> str | None:
    m = re.search(r"\(reduction: ([\w.]+)\)", entry.reason)
    return m.group(1) if m else None


@pytest.mark.slow
@pytest.mark.realcode
def test_no_confirmed_finding_reviewed_false(realcode_run):
    _, reviews = realcode_run
    false = [e for rv in reviews for _, e in rv.false_confirmed]
    known = [e for e in false if _reduction(e) in KNOWN_FALSE]
    if known:  # in pytest's warnings summary, at the end
        warnings.warn(
            f"real code: {len(known)} confirmed false alarm(s) still open: "
            + ", ".join(sorted({_reduction(e) for e in known})),
            stacklevel=1,
        )
    new = [e.format() for e in false if e not in known]
    assert not new, (
        "confirmed findings reviewed as false alarms (confirmed means proven):\n"
        + "\n".join(new)
        + coverage(realcode_run)
    )
    fixed = KNOWN_FALSE - {_reduction(e) for e in known}
    assert not fixed, f"no longer raised on the pinned packages: remove {sorted(fixed)} from KNOWN_FALSE"


# ---------------------------------------------------------------- the list and the machinery (fast)


def test_sources_are_pinned():
    packages = realcode.load_sources()
    assert len(packages) >= 10
    for p in packages:
        assert p.version and all(c.isdigit() or c == "." for c in p.version), p
    assert len({p.name for p in packages}) == len(packages)


def test_reviewed_list_parses_and_names_pinned_sources():
    entries = realcode.load_reviewed()
    pinned = {p.label for p in realcode.load_sources()}
    for e in entries.values():
        # a pinned package at its pinned version, or a folder named folder@commit (benchmarks only)
        assert e.source in pinned or "@" in e.source, (
            f"{e.format()}\n  {e.source} is not a pinned version of sources.toml: re-review after a bump"
        )


def _finding(path="pkg/train.py", line=10, code="GA101", confidence="confirmed", message="m"):
    return {"path": path, "line": line, "code": code, "confidence": confidence, "message": message}


def test_review_sorts_findings_by_verdict():
    entries = {
        e.key: e
        for e in (
            realcode.Entry("pkg==1.0", "pkg/train.py", 10, "GA101", "confirmed", False, "a target network"),
            realcode.Entry("pkg==1.0", "pkg/train.py", 20, "GA109", "suspicious", True, "plain list"),
            realcode.Entry("pkg==1.0", "pkg/old.py", 5, "GA103", "confirmed", True, "moved away"),
            realcode.Entry("other==2.0", "o.py", 1, "GA101", "confirmed", True, "another source"),
        )
    }
    findings = [
        _finding(),
        _finding(),  # two columns of one line: one entry covers both
        _finding(line=20, code="GA109", confidence="suspicious"),
        _finding(line=30, code="GA110"),
        _finding(line=40, code="GA111", confidence="suspicious"),
    ]
    rv = realcode.review("pkg==1.0", findings, entries)
    assert [(f["line"], e.verdict) for f, e in rv.reviewed] == [(10, False), (20, True)]
    assert [f["line"] for f in rv.unreviewed] == [30, 40]
    assert [f["line"] for f in rv.unreviewed_confirmed] == [30]
    assert [e.path for e in rv.gone] == ["pkg/old.py"]
    assert [e.line for _, e in rv.false_confirmed] == [10]
    assert rv.counts() == {
        "confirmed": {"true": 0, "false": 1, "unreviewed": 1},
        "suspicious": {"true": 1, "false": 0, "unreviewed": 1},
    }
    problems = realcode.failures([rv], [])
    assert len(problems) == 2
    assert "pkg==1.0 | pkg/train.py:30 | GA110 | confirmed | ?" in problems[0]
    assert "reviewed as false alarms" in problems[1] and "a target network" in problems[1]


def test_suspicious_and_true_findings_do_not_fail():
    entries = {
        e.key: e
        for e in (
            realcode.Entry("pkg==1.0", "a.py", 3, "GA108", "confirmed", True, "head replaced after the optimizer"),
        )
    }
    rv = realcode.review(
        "pkg==1.0", [_finding("a.py", 3, "GA108"), _finding("b.py", 1, "GA303", "suspicious")], entries
    )
    assert realcode.failures([rv], []) == []


def test_a_crash_fails():
    run = realcode.CheckRun("pkg==1.0", "/nowhere", 1, 1, 0.0, 0.0, (), "Traceback ...", ())
    assert realcode.failures([realcode.review("pkg==1.0", [], {})], [run])[0].startswith("pkg==1.0: gradaudit crashed")


def test_entries_round_trip_and_bad_lines_are_rejected():
    e = realcode.Entry(
        "stable-baselines3==2.9.2",
        "sb3/ppo/ppo.py",
        210,
        "GA101",
        "confirmed",
        False,
        "the advantage is a constant: value | policy share nothing",
    )
    assert realcode.parse_entry(e.format()) == e
    for bad in (
        "pkg==1 | a.py:3 | GA101 | confirmed | ? | TODO",  # no verdict yet
        "pkg==1 | a.py:3 | GA101 | confirmed | maybe | hmm",
        "pkg==1 | a.py | GA101 | confirmed | true | no line",
        "pkg==1 | a.py:3 | X1 | confirmed | true | not a code",
        "pkg==1 | a.py:3 | GA101 | likely | true | bad confidence",
        "pkg==1 | a.py:3 | GA101 | confirmed | true | ",
        "pkg==1 | a.py:3 | GA101",
    ):
        with pytest.raises(realcode.ListError):
            realcode.parse_entry(bad, "x")


def test_proposal_is_a_list_line_once_judged(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text("import torch\nloss = model(x).detach().sum()\n")
    text = realcode.proposal("pkg==1.0", _finding("pkg/train.py", 2, "GA101", message="cuts"), str(tmp_path))
    comment, line = text.rsplit("\n", 1)
    assert "GA101 confirmed: cuts" in comment and "loss = model(x).detach().sum()" in comment
    judged = line.replace("| ? | TODO", "| false | an EMA copy")
    assert realcode.parse_entry(judged).key == ("pkg==1.0", "pkg/train.py", 2, "GA101")


def test_file_subsets_use_path_globs():
    p = realcode.Package("t", "1", ("**", "!t/models/*/**", "t/models/*.py", "t/models/bert/*"))
    assert realcode.keeps(p, "t/trainer.py")
    assert realcode.keeps(p, "t/models/__init__.py")
    assert realcode.keeps(p, "t/models/bert/modeling_bert.py")
    assert not realcode.keeps(p, "t/models/gpt2/modeling_gpt2.py")
    assert realcode.keeps(realcode.Package("u", "1"), "anything/at/all.py")


def test_gone_entries_say_what_their_absence_means():
    fixed = realcode.Entry("pkg==1.0", "a.py", 3, "GA104", "confirmed", False, "floats")
    lost = realcode.Entry("pkg==1.0", "b.py", 7, "GA109", "suspicious", True, "plain list")
    text = "\n".join(realcode.gone_report([fixed, lost]))
    assert "false alarm(s) not reported this time" in text and fixed.format() in text
    assert "real defect(s) no longer reported" in text and lost.format() in text
    assert text.index(fixed.format()) < text.index("real defect(s)") < text.index(lost.format())
    assert realcode.gone_report([]) == []


def test_quiet_runs_print_nothing_between_the_dots(tmp_path):
    """Issue 23: `pytest -q` printed the coverage table in the middle of the progress dots. Run
    with a stand-in for the downloads, the fixture prints nothing under -q; with -v it logs."""
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    (tmp_path / "test_stand_in.py").write_text(
        "import realcode\n"
        "from test_realcode import realcode_run  # noqa: F401\n\n"
        "realcode.load_sources = lambda: []\n"
        "realcode.run_all = lambda packages, log=None: ([], [])\n"
        "realcode.summary_lines = lambda runs, reviews: ['COVERAGE TABLE']\n\n\n"
        "def test_one(realcode_run):\n    assert realcode_run == ([], [])\n\n\n"
        "def test_two():\n    pass\n"
    )
    # no third-party plugins: the stand-in needs none, and they make up most of a start
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([here, os.path.dirname(here)]), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"
    )

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args, "test_stand_in.py"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        ).stdout

    quiet = run("-q")
    assert "COVERAGE TABLE" not in quiet and quiet.splitlines()[0].startswith("..")
    assert "COVERAGE TABLE" in run("-v")

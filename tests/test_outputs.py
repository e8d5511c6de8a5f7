"""`gradaudit check --format json | sarif | github`: the output contract of rules.md, SARIF 2.1.0
validated against the official OASIS schema, GitHub workflow-command annotations."""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest
from clitools import ALL_CODES, example, run_cli, run_main, write, write_example

from gradaudit.analysis.model.findings import Edit, Finding, Fix, Related
from gradaudit.analysis.model.model import Span
from gradaudit.analysis.output import github as github_out
from gradaudit.analysis.rules import BY_CODE, RULES

SCHEMA_PATH = Path(__file__).parent / "data" / "sarif" / "sarif-schema-2.1.0.json"
BROKEN = "import torch\n\ndef f(:\n    pass\n"

FINDING_KEYS = {
    "code",
    "name",
    "family",
    "confidence",
    "path",
    "line",
    "column",
    "end_line",
    "end_column",
    "message",
    "params",
    "related",
    "fix",
    "premises",
}
RELATED_KEYS = {"path", "line", "column", "message"}


def all_examples(folder: Path) -> dict:
    """Every invalid example of every rule in `folder`: {file name: (source, expected, Example)}."""
    out = {}
    for rule in RULES:
        for i in range(len(rule.invalid)):
            name = f"{rule.code.lower()}_{i}.py"
            source, expected, ex = example(rule.code, i)
            write(folder / name, source)
            out[name] = (source, expected, ex)
    return out


def check_json(args, cwd, capsys, monkeypatch):
    code, out, err = run_main(["check", "--format", "json", "-j", "1", *args], cwd, capsys, monkeypatch)
    return code, json.loads(out), err


# ------------------------------------------------------------------ json


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """Every invalid example in one folder, and its report in each format (each run once)."""
    folder = tmp_path_factory.mktemp("examples")
    files = all_examples(folder)
    cache = {}

    def report(fmt):
        if fmt not in cache:
            r = run_cli("check", "--format", fmt, ".", cwd=folder)
            assert r.returncode == 1, r.stderr
            cache[fmt] = r.stdout
        return cache[fmt]

    return SimpleNamespace(folder=folder, files=files, report=report)


@pytest.fixture(scope="module")
def examples_json(examples):
    return examples.folder, examples.files, json.loads(examples.report("json"))


def test_json_contract_keys(examples_json):
    _, files, report = examples_json
    # rules.md's contract, plus what could not be done ("errors"), analyses cut short ("incomplete")
    # and the environments whose libraries were read
    assert set(report) == {"version", "findings", "errors", "incomplete", "environments", "coverage"}
    assert report["errors"] == [] and report["incomplete"] == []
    assert report["version"] == 1
    assert report["findings"], "no findings at all"
    for f in report["findings"]:
        assert set(f) == FINDING_KEYS
        rule = BY_CODE[f["code"]]
        assert (f["name"], f["family"]) == (rule.name, rule.family)
        assert f["confidence"] in ("confirmed", "suspicious")
        assert isinstance(f["message"], str) and f["message"]
        assert isinstance(f["params"], list) and all(isinstance(p, str) for p in f["params"])
        assert all(isinstance(f[k], int) for k in ("line", "column", "end_line", "end_column"))
        for r in f["related"]:
            assert set(r) == RELATED_KEYS
            assert all(isinstance(r[k], int) for k in ("line", "column"))
        # every finding says what it rests on; a confirmed one rests on nothing unseen
        assert f["premises"], f
        for p in f["premises"]:
            assert {"premise", "holds"} <= set(p) <= {"premise", "holds", "unseen", "path", "line", "column"}
            assert isinstance(p["premise"], str) and p["premise"] and isinstance(p["holds"], bool)
            assert p["holds"] or "unseen" in p
        if f["confidence"] == "confirmed":
            assert all(p["holds"] for p in f["premises"]), f
        if f["fix"] is not None:
            assert set(f["fix"]) == {"message", "applicability", "edits"}
            assert f["fix"]["applicability"] in ("safe", "unsafe")
            for e in f["fix"]["edits"]:
                assert set(e) == {"line", "column", "end_line", "end_column", "content"}
    assert any(f["related"] for f in report["findings"])
    assert any(f["fix"] for f in report["findings"])


def test_json_lines_are_the_marked_anchors(examples_json):
    _, files, report = examples_json
    got = sorted((f["path"], f["line"], f["code"]) for f in report["findings"])
    want = sorted((name, line, code) for name, (_, expected, _) in files.items() for line, code in expected)
    assert got == want


def _char_at(source: str, line: int, column: int) -> str:
    text = source.split("\n")[line - 1]
    assert 1 <= column <= len(text) + 1, (line, column, text)
    return text[column - 1 : column]


def test_json_positions_are_one_based(examples_json):
    _, files, report = examples_json
    for f in report["findings"]:
        source = files[f["path"]][0]
        # a 1-based column points at the first character of the anchor, never at indentation
        assert _char_at(source, f["line"], f["column"]).strip(), f
        assert (f["end_line"], f["end_column"]) > (f["line"], f["column"])
        end_text = source.split("\n")[f["end_line"] - 1]
        assert 1 <= f["end_column"] <= len(end_text) + 1
        for r in f["related"]:
            assert r["path"] == f["path"]
            assert _char_at(files[r["path"]][0], r["line"], r["column"]).strip(), r


def test_json_known_anchor(tmp_path, capsys, monkeypatch):
    write_example(tmp_path / "train.py", "GA101")
    code, report, _ = check_json(["train.py"], tmp_path, capsys, monkeypatch)
    assert code == 1
    [f] = report["findings"]
    # line 12 is `    feats = encoder(x).detach()`: the anchor is `encoder(x).detach()`, 0-based 12..31
    assert (f["line"], f["column"], f["end_line"], f["end_column"]) == (12, 13, 12, 32)
    line = example("GA101")[0].splitlines()[11]
    assert line[f["column"] - 1 : f["end_column"] - 1] == "encoder(x).detach()"
    assert sorted(f["params"]) == ["encoder.0.bias", "encoder.0.weight"]
    backward = [r for r in f["related"] if "backward" in r["message"]]
    assert [(r["line"], r["column"]) for r in backward] == [(15, 5)]  # `    loss.backward()`
    assert f["fix"]["edits"] == [{"line": 12, "column": 13, "end_line": 12, "end_column": 32, "content": "encoder(x)"}]


def apply_json_edits(source: str, edits: list) -> str:
    """What an editor would do with the contract's edits: 1-based lines and columns, exclusive end."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for text in lines:
        starts.append(starts[-1] + len(text))

    def offset(line, column):
        if line > len(lines):
            assert column == 1
            return len(source)
        return starts[line - 1] + column - 1

    out = source
    for e in sorted(edits, key=lambda e: (e["line"], e["column"]), reverse=True):
        out = out[: offset(e["line"], e["column"])] + e["content"] + out[offset(e["end_line"], e["end_column"]) :]
    return out


def test_json_fix_edits_reproduce_the_fixed_examples(examples_json):
    _, files, report = examples_json
    checked = 0
    for name, (source, _, ex) in files.items():
        if ex.fixed is None:
            continue
        code = name[:5].upper()
        edits = [e for f in report["findings"] if f["path"] == name and f["code"] == code for e in f["fix"]["edits"]]
        assert apply_json_edits(source, edits) == ex.fixed, name
        checked += 1
    assert checked >= 20


def test_json_path_as_given(tmp_path, capsys, monkeypatch):
    write_example(tmp_path / "sub" / "train.py", "GA101")
    for arg, shown in (
        ("sub/train.py", "sub/train.py"),
        ("sub", "sub/train.py"),
        ("./sub/", "sub/train.py"),
        (str(tmp_path / "sub" / "train.py"), str(tmp_path / "sub" / "train.py")),
    ):
        code, report, _ = check_json([arg], tmp_path, capsys, monkeypatch)
        [f] = report["findings"]
        assert f["path"] == shown, arg
        assert {r["path"] for r in f["related"]} == {shown}
    # and from inside the folder
    code, report, _ = check_json(["train.py"], tmp_path / "sub", capsys, monkeypatch)
    assert report["findings"][0]["path"] == "train.py"


def test_json_empty(tmp_path):
    write(tmp_path / "ok.py", "import torch\nx = torch.ones(2)\n")
    r = run_cli("check", "--format", "json", "ok.py", cwd=tmp_path)
    assert r.returncode == 0
    out = json.loads(r.stdout)
    (env,) = out.pop("environments")
    # no training step in it: nothing understood, nothing missed
    assert out.pop("coverage") == {"steps": 0, "understood": 0, "training_steps": []}
    assert out == {"version": 1, "findings": [], "errors": [], "incomplete": []}
    assert env["libraries"] == ["torch"] and env["missing"] == []


def test_json_stdout_stays_json_with_a_parse_error(tmp_path):
    write(tmp_path / "broken.py", BROKEN)
    write_example(tmp_path / "train.py", "GA101")
    r = run_cli("check", "--format", "json", ".", cwd=tmp_path)
    report = json.loads(r.stdout)
    assert [f["code"] for f in report["findings"]] == ["GA101"]
    assert "broken.py:3:" in r.stderr


# ------------------------------------------------------------------ sarif


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _sarif(args, cwd):
    r = run_cli("check", "--format", "sarif", *args, cwd=cwd)
    return r, json.loads(r.stdout)


def test_sarif_schema_rejects_broken_logs(sarif_validator):
    """The validator is real: it rejects what SARIF forbids."""
    good = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": []}]}
    sarif_validator.validate(good)
    for bad in (
        {"runs": []},
        {"version": "2.0.0", "runs": []},
        {"version": "2.1.0", "runs": [{"results": []}]},
        {
            "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "level": "fatal"}]}],
        },
        {
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {"driver": {"name": "x"}},
                    "results": [
                        {"message": {"text": "m"}, "locations": [{"physicalLocation": {"region": {"startLine": 0}}}]}
                    ],
                }
            ],
        },
    ):
        with pytest.raises(jsonschema.ValidationError):
            sarif_validator.validate(bad)


def test_sarif_with_findings_validates(examples, sarif_validator):
    log = json.loads(examples.report("sarif"))
    sarif_validator.validate(log)
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    results = run["results"]
    assert results
    assert any(res.get("relatedLocations") for res in results), "no related locations to validate"
    assert any(res.get("fixes") for res in results), "no fixes to validate"
    rules = run["tool"]["driver"]["rules"]
    assert [d["id"] for d in rules] == ALL_CODES
    for res in results:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in ("error", "warning")


def test_sarif_regions_match_json(examples):
    log = json.loads(examples.report("sarif"))
    report = json.loads(examples.report("json"))
    sarif_pos = sorted(
        (
            res["ruleId"],
            loc["physicalLocation"]["artifactLocation"]["uri"],
            loc["physicalLocation"]["region"]["startLine"],
            loc["physicalLocation"]["region"]["startColumn"],
            loc["physicalLocation"]["region"]["endLine"],
            loc["physicalLocation"]["region"]["endColumn"],
        )
        for res in log["runs"][0]["results"]
        for loc in res["locations"]
    )
    json_pos = sorted(
        (f["code"], f["path"], f["line"], f["column"], f["end_line"], f["end_column"]) for f in report["findings"]
    )
    assert sarif_pos == json_pos


def test_sarif_empty_validates(tmp_path, sarif_validator):
    write(tmp_path / "ok.py", "import torch\nx = torch.ones(2)\n")
    r, log = _sarif(["ok.py"], tmp_path)
    assert r.returncode == 0
    sarif_validator.validate(log)
    assert log["runs"][0]["results"] == []
    assert len(log["runs"][0]["tool"]["driver"]["rules"]) == len(RULES)


def test_sarif_with_parse_error_validates(tmp_path, sarif_validator):
    write(tmp_path / "broken.py", BROKEN)
    write_example(tmp_path / "train.py", "GA102")
    r, log = _sarif(["."], tmp_path)
    sarif_validator.validate(log)
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == 1
    assert notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.py"
    assert notes[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_sarif_uri_is_percent_encoded(tmp_path):
    write_example(tmp_path / "my dir" / "train.py", "GA101")
    _, log = _sarif(["my dir"], tmp_path)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "my%20dir/train.py"
    assert urllib.parse.unquote(uri) == "my dir/train.py"


# ------------------------------------------------------------------ github

ANNOTATION = re.compile(r"^::(?P<level>error|warning) (?P<props>[^:]*)::(?P<data>.*)$")


def _unescape(s: str) -> str:
    return s.replace("%2C", ",").replace("%3A", ":").replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


def _parse_annotation(line: str):
    m = ANNOTATION.match(line)
    assert m, line
    props = dict(p.split("=", 1) for p in m["props"].split(","))
    return m["level"], {k: _unescape(v) for k, v in props.items()}, _unescape(m["data"])


def test_github_annotation(tmp_path, capsys, monkeypatch):
    write_example(tmp_path / "train.py", "GA101")
    code, out, _ = run_main(["check", "--format", "github", "train.py"], tmp_path, capsys, monkeypatch)
    assert code == 1
    [line] = out.splitlines()
    assert line.startswith(
        "::error file=train.py,line=12,col=13,endLine=12,endColumn=32,"
        "title=GA101 detach-cuts-loss::GA101 [confirmed] `.detach()` cuts gradient"
    )


def test_github_escapes_special_characters_in_the_path(tmp_path):
    folder = "we,ird:dir%x"
    write_example(tmp_path / folder / "train.py", "GA101")
    r = run_cli("check", "--format", "github", folder, cwd=tmp_path)
    assert r.returncode == 1
    [line] = r.stdout.splitlines()
    assert line.startswith("::error file=we%2Cird%3Adir%25x/train.py,line=12,col=13,endLine=12,endColumn=32,")
    level, props, data = _parse_annotation(line)
    assert props["file"] == f"{folder}/train.py"
    assert set(props) == {"file", "line", "col", "endLine", "endColumn", "title"}


def test_github_render_escaping():
    span = Span("a,b:c%d.py", 3, 4, 3, 10)
    f = Finding(
        "GA101",
        "detach-cuts-loss",
        "graph-break",
        "suspicious",
        span,
        "50% of\nthe\rgrad: a, b",
        params=("w",),
        related=(Related(span, "x"),),
        fix=Fix("m", "safe", (Edit(span, ""),)),
    )
    out = github_out.render([f], [], 1)
    assert out == (
        "::warning file=a%2Cb%3Ac%25d.py,line=3,col=5,endLine=3,endColumn=11,"
        "title=GA101 detach-cuts-loss::GA101 [suspicious] 50%25 of%0Athe%0Dgrad: a, b\n"
    )
    level, props, data = _parse_annotation(out.rstrip("\n"))
    assert level == "warning"
    assert props["file"] == "a,b:c%d.py"
    assert data == "GA101 [suspicious] 50% of\nthe\rgrad: a, b"


def test_github_one_line_per_finding(examples):
    report = json.loads(examples.report("json"))
    lines = examples.report("github").splitlines()
    assert len(lines) == len(report["findings"])
    for line, f in zip(lines, report["findings"]):
        level, props, data = _parse_annotation(line)
        assert level == ("error" if f["confidence"] == "confirmed" else "warning")
        assert (
            props["file"],
            int(props["line"]),
            int(props["col"]),
            int(props["endLine"]),
            int(props["endColumn"]),
        ) == (f["path"], f["line"], f["column"], f["end_line"], f["end_column"])
        assert props["title"] == f"{f['code']} {f['name']}"
        assert data == f"{f['code']} [{f['confidence']}] {f['message']}"


def test_github_parse_error(tmp_path):
    write(tmp_path / "broken.py", BROKEN)
    r = run_cli("check", "--format", "github", "broken.py", cwd=tmp_path)
    [line] = r.stdout.splitlines()
    level, props, data = _parse_annotation(line)
    assert level == "error" and props["file"] == "broken.py" and props["line"] == "3"
    assert data.startswith("could not parse")


def test_github_empty(tmp_path):
    write(tmp_path / "ok.py", "x = 1\n")
    r = run_cli("check", "--format", "github", "ok.py", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == ""

"""`[tool.gradaudit]` in pyproject.toml: select, ignore, per-file-ignores, exclude; where it is
found, what an unknown key does, --isolated and --config."""

from __future__ import annotations

import pytest
from clitools import codes_in, finding_lines, run_cli, run_main, write, write_example

from gradaudit.analysis.check.config import Config, ConfigError, config_from_table, load_config, read_config


def make_project(root, config: str):
    """proj/ with a few buggy files and `config` as its pyproject.toml."""
    proj = root / "proj"
    write_example(proj / "top.py", "GA101")
    write_example(proj / "pkg" / "a.py", "GA101")
    write_example(proj / "pkg" / "c.py", "GA102")
    write_example(proj / "pkg" / "sub" / "b.py", "GA101")
    write_example(proj / "pkg" / "sub" / "model_gen.py", "GA109")
    write_example(proj / "gen" / "g.py", "GA101")
    write_example(proj / "pkg" / "legacy_old.py", "GA104")
    write(proj / "pyproject.toml", "[project]\nname = 'proj'\nversion = '0'\n\n" + config)
    return proj


def found(stdout):
    return sorted((p, c) for p, _, _, c, _ in finding_lines(stdout))


EVERYTHING = [
    ("proj/gen/g.py", "GA101"),
    ("proj/pkg/a.py", "GA101"),
    ("proj/pkg/c.py", "GA102"),
    ("proj/pkg/legacy_old.py", "GA104"),
    ("proj/pkg/sub/b.py", "GA101"),
    ("proj/pkg/sub/model_gen.py", "GA109"),
    ("proj/top.py", "GA101"),
]


def test_without_tool_table_everything_is_reported(tmp_path):
    make_project(tmp_path, "")
    r = run_cli("check", "proj", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert found(r.stdout) == EVERYTHING


def test_config_is_picked_up_from_the_checked_folder_not_the_cwd(tmp_path):
    make_project(tmp_path, '[tool.gradaudit]\nignore = ["GA101"]\n')
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "pyproject.toml", '[tool.gradaudit]\nselect = ["GA109"]\n')  # must not apply
    r = run_cli("check", tmp_path / "proj", cwd=elsewhere)
    assert r.returncode == 1, r.stderr
    assert codes_in(r.stdout) == {"GA102", "GA104", "GA109"}


def test_config_found_walking_up_from_a_checked_file(tmp_path, capsys, monkeypatch):
    make_project(tmp_path, '[tool.gradaudit]\nignore = ["detach-cuts-loss"]\n')
    code, out, _ = run_main(["check", "proj/pkg/sub/b.py", "proj/pkg/c.py"], tmp_path, capsys, monkeypatch)
    assert code == 1
    assert found(out) == [("proj/pkg/c.py", "GA102")]


@pytest.mark.parametrize(
    "table, expected",
    [
        ('select = ["GA101"]', {"GA101"}),
        ('select = ["no-grad-loss", "GA109"]', {"GA102", "GA109"}),
        ('select = ["GA10"]', {"GA101", "GA102", "GA104", "GA109"}),
        ('ignore = ["GA101", "unregistered-parameters"]', {"GA102", "GA104"}),
        ('select = ["GA101"]\nextend-select = ["GA102"]', {"GA101", "GA102"}),
        ('select = ["GA101, GA102"]', {"GA101", "GA102"}),
    ],
)
def test_select_and_ignore_in_config(tmp_path, capsys, monkeypatch, table, expected):
    make_project(tmp_path, f"[tool.gradaudit]\n{table}\n")
    code, out, _ = run_main(["check", "proj"], tmp_path, capsys, monkeypatch)
    assert codes_in(out) == expected


@pytest.mark.parametrize(
    "key, expected", [("select", {"GA104"}), ("ignore", {"GA101", "GA102", "GA109"}), ("extend-select", None)]
)
def test_string_instead_of_list_is_one_item(tmp_path, key, expected):
    make_project(tmp_path, f'[tool.gradaudit]\n{key} = "GA104"\n')
    r = run_cli("check", "proj", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr == "", r.stderr
    assert codes_in(r.stdout) == (expected or {"GA101", "GA102", "GA104", "GA109"})


def test_exclude_as_a_string_excludes_that_glob_only(tmp_path):
    """Issue 14: `exclude = "legacy/**"` checked 0 files and exited 0 (each character was a glob)."""
    proj = make_project(tmp_path, '[tool.gradaudit]\nexclude = "gen/**"\n')
    r = run_cli("check", "proj", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert found(r.stdout) == [f for f in EVERYTHING if f[0] != "proj/gen/g.py"]
    assert "in 6 files checked." in r.stdout
    # the same in a per-file-ignores table: a string is one selector
    write(proj / "pyproject.toml", '[tool.gradaudit.per-file-ignores]\n"gen/*.py" = "GA101"\n')
    r = run_cli("check", "proj", cwd=tmp_path)
    assert found(r.stdout) == [f for f in EVERYTHING if f[0] != "proj/gen/g.py"]


@pytest.mark.parametrize(
    "line, key, said",
    [
        ("select = true", "select", "got true (a boolean)"),
        ("select = 5", "select", "got 5 (a number)"),
        ("exclude = 5", "exclude", "got 5 (a number)"),
        ('ignore = ["GA101", 3]', "ignore", "item 2 is 3 (a number)"),
        ("per-file-ignores = 1", "per-file-ignores", "got 1 (a number)"),
        ('severity = { GA101 = "loud" }', "severity", "'GA101': expected one of error, warning, information, hint"),
        ('severity = { GA9 = "hint" }', "severity", "'GA9' is no rule code"),
        ('respect-gitignore = "no"', "respect-gitignore", 'got "no" (a string)'),
        ('select = ["GA9"]', "select", "no rule matches 'GA9'"),
    ],
)
def test_wrong_types_are_one_clear_line_and_exit_2(tmp_path, line, key, said):
    """Issue 14: `select = true` printed a traceback and exited 1 ("findings")."""
    proj = make_project(tmp_path, f"[tool.gradaudit]\n{line}\n")
    r = run_cli("check", "proj", cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert finding_lines(r.stdout) == []
    err = r.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(f"gradaudit: {proj / 'pyproject.toml'}: [tool.gradaudit] {key}: "), err
    assert said in err


def test_every_problem_is_reported_at_once(tmp_path):
    make_project(tmp_path, '[tool.gradaudit]\nselect = 1\nexclude = 2\ncolour = "red"\n')
    r = run_cli("check", "proj", cwd=tmp_path)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert [ln.split("[tool.gradaudit] ")[1].split(":")[0] for ln in lines] == ["select", "exclude", "colour"]


def test_per_file_ignores_and_exclude(tmp_path):
    make_project(
        tmp_path,
        """[tool.gradaudit]
exclude = ["gen", "pkg/legacy_*.py"]

[tool.gradaudit.per-file-ignores]
"pkg/sub/*.py" = ["detach-cuts-loss"]
"*_gen.py" = ["GA1"]
"top.py" = ["GA101"]
""",
    )
    r = run_cli("check", "proj", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert found(r.stdout) == [("proj/pkg/a.py", "GA101"), ("proj/pkg/c.py", "GA102")]
    assert "in 5 files checked." in r.stdout  # gen/g.py and pkg/legacy_old.py excluded


def test_per_file_ignores_only_the_listed_rules(tmp_path, capsys, monkeypatch):
    make_project(tmp_path, '[tool.gradaudit.per-file-ignores]\n"pkg/*.py" = ["GA102"]\n')
    code, out, _ = run_main(["check", "proj"], tmp_path, capsys, monkeypatch)
    assert found(out) == [f for f in EVERYTHING if f != ("proj/pkg/c.py", "GA102")]


def test_per_file_ignores_relative_to_the_config_folder(tmp_path):
    """Globs are relative to the folder of pyproject.toml, wherever the check runs from."""
    make_project(tmp_path, '[tool.gradaudit.per-file-ignores]\n"pkg/a.py" = ["GA101"]\n')
    r = run_cli("check", ".", cwd=tmp_path / "proj" / "pkg")
    assert ("a.py", "GA101") not in found(r.stdout)
    assert ("c.py", "GA102") in found(r.stdout)


def test_double_star_matches_zero_folders(tmp_path, capsys, monkeypatch):
    make_project(tmp_path, '[tool.gradaudit.per-file-ignores]\n"pkg/**/*.py" = ["GA1"]\n"**/top.py" = ["GA1"]\n')
    code, out, _ = run_main(["check", "proj"], tmp_path, capsys, monkeypatch)
    assert found(out) == [("proj/gen/g.py", "GA101")]


def test_explicit_file_is_checked_even_if_excluded(tmp_path, capsys, monkeypatch):
    make_project(tmp_path, '[tool.gradaudit]\nexclude = ["gen"]\n')
    code, out, _ = run_main(["check", "proj/gen/g.py"], tmp_path, capsys, monkeypatch)
    assert found(out) == [("proj/gen/g.py", "GA101")]


def test_cli_select_overrides_and_ignore_extends_config(tmp_path, capsys, monkeypatch):
    make_project(tmp_path, '[tool.gradaudit]\nselect = ["GA101"]\nignore = ["GA104"]\n')
    code, out, _ = run_main(["check", "--select", "GA102,GA104", "proj"], tmp_path, capsys, monkeypatch)
    assert codes_in(out) == {"GA102"}  # GA104 stays ignored by the config
    code, out, _ = run_main(["check", "--ignore", "GA101", "proj"], tmp_path, capsys, monkeypatch)
    assert codes_in(out) == set() and code == 0


def test_unknown_key_is_a_clear_error(tmp_path):
    proj = make_project(tmp_path, '[tool.gradaudit]\nselect = ["GA101"]\nignroe = ["GA102"]\n')
    r = run_cli("check", "proj", cwd=tmp_path)
    assert r.returncode == 2
    assert finding_lines(r.stdout) == []
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert "ignroe" in err and str(proj / "pyproject.toml") in err and "unknown" in err
    assert "Traceback" not in err


def test_invalid_toml_is_a_clear_error(tmp_path):
    make_project(tmp_path, "[tool.gradaudit]\nselect = [GA101\n")
    r = run_cli("check", "proj", cwd=tmp_path)
    assert r.returncode == 2
    assert "pyproject.toml" in r.stderr and "Traceback" not in r.stderr


def test_isolated_ignores_the_config(tmp_path, capsys, monkeypatch):
    make_project(
        tmp_path,
        '[tool.gradaudit]\nselect = ["GA102"]\nexclude = ["gen"]\n'
        '[tool.gradaudit.per-file-ignores]\n"top.py" = ["GA101"]\n',
    )
    code, out, _ = run_main(["check", "--isolated", "proj"], tmp_path, capsys, monkeypatch)
    assert code == 1
    assert found(out) == EVERYTHING


def test_isolated_ignores_a_broken_config(tmp_path):
    make_project(tmp_path, "[tool.gradaudit]\nbogus = 1\n")
    assert run_cli("check", "proj", cwd=tmp_path).returncode == 2
    r = run_cli("check", "--isolated", "proj", cwd=tmp_path)
    assert r.returncode == 1
    assert found(r.stdout) == EVERYTHING


def test_explicit_config_file(tmp_path, capsys, monkeypatch):
    make_project(tmp_path, '[tool.gradaudit]\nselect = ["GA102"]\n')
    write(tmp_path / "ci" / "gradaudit.toml", '[tool.gradaudit]\nselect = ["GA109"]\n')
    code, out, _ = run_main(["check", "--config", "ci/gradaudit.toml", "proj"], tmp_path, capsys, monkeypatch)
    assert codes_in(out) == {"GA109"}


# ------------------------------------------------------------------ the config module itself


def test_config_from_table_normalizes():
    cfg = config_from_table(
        {"select": ["ga1", "Detach-Cuts-Loss"], "ignore": ["GA105, GA106"], "per-file-ignores": {"tests/*": "GA101"}},
        "/root",
    )
    assert cfg.select == ("GA1", "detach-cuts-loss")
    assert cfg.ignore == ("GA105", "GA106")
    assert cfg.per_file_ignores == (("tests/*", ("GA101",)),)
    assert cfg.enabled("GA101", "detach-cuts-loss") and cfg.enabled("GA110", "inplace-saved-tensor")
    assert not cfg.enabled("GA105", "numpy-roundtrip")


def test_config_errors():
    with pytest.raises(ConfigError, match="colour"):
        config_from_table({"colour": True}, "/root", source="x/pyproject.toml")
    with pytest.raises(ConfigError, match="per-file-ignores"):
        config_from_table({"per-file-ignores": ["tests/*"]}, "/root")


def test_read_config_keeps_the_good_keys_and_defaults_the_bad(tmp_path):
    # what the language server uses: a wrong key is reported and takes its default, the rest applies
    write(tmp_path / "pyproject.toml", '[tool.gradaudit]\nselect = true\nignore = "GA101"\nbogus = 1\n')
    cfg, problems = read_config(str(tmp_path))
    assert cfg.select == () and cfg.ignore == ("GA101",)
    assert [p.key for p in problems] == ["select", "bogus"]
    assert all(p.source == str(tmp_path / "pyproject.toml") for p in problems)


def test_load_config_without_pyproject(tmp_path):
    cfg = load_config(str(tmp_path))
    assert cfg == Config(root=str(tmp_path))
    assert cfg.enabled("GA101", "detach-cuts-loss")


# ---------------------------------------------------------------- "did you mean" (issue 23, item 7c)


@pytest.mark.parametrize(
    "line, said",
    [
        (
            'selct = ["GA1"]',
            "selct: unknown key; did you mean `select`? (the keys are: call-depth, exclude, extend-select,",
        ),
        ('per-file-ignore = { "a.py" = ["GA101"] }', "per-file-ignore: unknown key; did you mean `per-file-ignores`?"),
        ('ignore = ["GA1O1"]', "ignore: no rule matches 'GA1O1' (did you mean `GA101`?) (see `gradaudit rules`)"),
        (
            'select = ["detach-cut-loss", "GA999"]',
            "select: no rule matches 'detach-cut-loss' (did you mean `detach-cuts-loss`?), 'GA999' (see",
        ),
        (
            'severity = { suspicous = "hint" }',
            "severity: 'suspicous' is no rule code, prefix, name, family or confidence (did you mean `suspicious`?)",
        ),
        # several codes as close as each other: no guess
        ('ignore = ["GA120"]', "ignore: no rule matches 'GA120' (see `gradaudit rules`)"),
        ("colour = 1", "colour: unknown key (the keys are:"),
    ],
)
def test_configuration_typos_get_a_did_you_mean(tmp_path, line, said):
    proj = make_project(tmp_path, f"[tool.gradaudit]\n{line}\n")
    r = run_cli("check", "proj", cwd=tmp_path)
    assert r.returncode == 2
    (err,) = r.stderr.strip().splitlines()
    assert err.startswith(f"gradaudit: {proj / 'pyproject.toml'}: [tool.gradaudit] {said}"), err


def test_command_line_typos_get_a_did_you_mean(tmp_path, capsys, monkeypatch):
    make_project(tmp_path, "")
    code, out, err = run_main(["check", "proj", "--select", "GA10l,detach-cuts-los"], tmp_path, capsys, monkeypatch)
    assert code == 2 and err == (
        "gradaudit: no rule matches 'GA10L' (did you mean `GA101`?), 'detach-cuts-los' (did you mean "
        "`detach-cuts-loss`?) (see `gradaudit rules`)\n"
    )
    code, out, err = run_main(["rule", "zero-grad-before-stp"], tmp_path, capsys, monkeypatch)
    assert code == 2 and "unknown rule 'zero-grad-before-stp' (did you mean `zero-grad-before-step`?)" in err


def test_editor_settings_typos_get_a_did_you_mean():
    from gradaudit.server.settings import Settings

    _, problems = Settings.from_client({"gradaudit": {"debounse": 10, "ignore": ["GA1O2"]}})
    assert sorted(str(p) for p in problems) == [
        "client settings: gradaudit debounse: unknown key; did you mean `debounce`? (the keys are: callDepth, "
        "codeLens, debounce, docsUrl, extraPaths, functionBudget, ignore, importBudget, initBudget, interpreter, "
        "loopReserve, memoryBudget, moduleInitBudget, scriptBudget, select, severity, statementBudget, timeBudget)",
        "client settings: gradaudit ignore: no rule matches 'GA1O2' (did you mean `GA102`?) (see `gradaudit rules`)",
    ]

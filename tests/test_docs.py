"""README.md and docs/: generated parts match the rules and the configuration schema, every link
resolves inside the repository, every command parses (or runs), every snippet is valid, and no
rule is promised that does not exist (issue 14)."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import replace

import pytest

from gradaudit.analysis.app import cli, docgen
from gradaudit.analysis.check.gitignore import GitIgnore
from gradaudit.analysis.rules import BY_CODE, RULES

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tracked_markdown() -> list:
    """The repository's Markdown files: what .gitignore does not ignore (a clone or a tarball)."""
    ignore = GitIgnore(ROOT)
    out = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and not ignore.ignored(os.path.join(dirpath, d), True))
        out += [
            os.path.relpath(os.path.join(dirpath, f), ROOT)
            for f in filenames
            if f.endswith(".md") and not ignore.ignored(os.path.join(dirpath, f), False)
        ]
    return sorted(out)


def user_docs() -> list:
    """What a user reads: the README, docs/, and the extension's README."""
    return ["README.md", "vscode-extension/README.md"] + [p for p in tracked_markdown() if p.startswith("docs/")]


def read(rel) -> str:
    with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
        return fh.read()


FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.S | re.M)


def blocks(rel, lang=None):
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(read(rel)) if lang is None or m.group(1) == lang]


def prose(text) -> str:
    return FENCE.sub("", text)


# ------------------------------------------------------------------ generated docs


def test_docs_match_the_rules_and_the_schema():
    stale = docgen.drift()
    assert stale == [], f"out of date: {stale}; run `{docgen.COMMAND}`"


def test_drift_is_caught_and_regeneration_fixes_it(tmp_path):
    for rel in ("README.md", "docs/configuration.md", "vscode-extension/README.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(read(rel))
    (tmp_path / "docs" / "rules").mkdir()
    assert set(docgen.drift(str(tmp_path))) == set(docgen.pages())  # no pages yet
    docgen.write(str(tmp_path))
    assert docgen.drift(str(tmp_path)) == []
    page = tmp_path / "docs" / "rules" / "GA101.md"
    page.write_text(page.read_text().replace("## Why is this bad?", "## Why"))
    (tmp_path / "docs" / "rules" / "GA999.md").write_text("# a rule that no longer exists\n")
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text().replace("| [GA110]", "| [GA11O]"))
    assert docgen.drift(str(tmp_path)) == ["README.md", "docs/rules/GA101.md", "docs/rules/GA999.md"]
    assert docgen.main(["--check", "--root", str(tmp_path)]) == 1
    assert docgen.main(["--root", str(tmp_path)]) == 0
    assert docgen.drift(str(tmp_path)) == [] and not (tmp_path / "docs" / "rules" / "GA999.md").exists()


def test_generator_takes_any_number_of_rules(tmp_path, monkeypatch):
    # rules to come get pages and index rows, grouped by family (codes no rule has yet)
    base = BY_CODE["GA101"]
    families = ["graph-break", "lifecycle", "backward", "numerical"]
    more = [
        replace(
            base,
            code=f"GA9{i:02d}",
            name=f"rule-ga9{i:02d}",
            family=families[i % 4],
            summary=f"summary of GA9{i:02d}",
            fix_available=False,
        )
        for i in range(1, 40)
    ]
    monkeypatch.setattr(docgen, "RULES", tuple(RULES) + tuple(more))
    for rel in ("README.md", "docs/configuration.md", "vscode-extension/README.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(read(rel))
    docgen.write(str(tmp_path))
    pages = sorted(p.name for p in (tmp_path / "docs" / "rules").iterdir())
    assert pages == sorted([f"{r.code}.md" for r in RULES] + [f"{r.code}.md" for r in more] + ["README.md"])
    index = (tmp_path / "docs" / "rules" / "README.md").read_text()
    headings = re.findall(r"^## (.*)$", index, re.M)
    assert headings == [docgen.FAMILY_TITLES[f] for f in families]
    assert f"gradaudit has {len(RULES) + len(more)} rules" in index
    assert "| [GA939](GA939.md) | `rule-ga939` | summary of GA939 | no |" in index
    readme = (tmp_path / "README.md").read_text()
    assert "| [GA905](docs/rules/GA905.md) | rule-ga905 | summary of GA905 |" in readme
    assert "| GA905 | rule-ga905 | summary of GA905 |" in (tmp_path / "vscode-extension" / "README.md").read_text()
    assert docgen.drift(str(tmp_path)) == []


def test_rule_page_is_the_rule_documentation():
    page = read("docs/rules/GA102.md")
    doc = BY_CODE["GA102"].documentation()
    assert f"# {doc.splitlines()[0]}" in page
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert section in page
    assert BY_CODE["GA102"].use_instead.strip() in page


# ------------------------------------------------------------------ links

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(rel) -> set:
    return {slug(h) for h in re.findall(r"^#{1,6} (.*)$", prose(read(rel)), re.M)}


@pytest.mark.parametrize("rel", tracked_markdown())
def test_every_link_resolves_inside_the_repository(rel):
    for target in LINK.findall(prose(read(rel))):
        if target.startswith(("http://", "https://", "mailto:")):
            assert not (rel == "README.md" or rel.startswith("docs/")), f"{rel}: links outside the repository: {target}"
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(ROOT, os.path.dirname(rel), path)) if path else os.path.join(ROOT, rel)
        assert full.startswith(ROOT + os.sep), f"{rel}: {target} leaves the repository"
        assert os.path.exists(full), f"{rel}: {target} does not exist"
        if anchor:
            assert anchor in anchors(os.path.relpath(full, ROOT)), f"{rel}: no heading #{anchor} in {path or rel}"


@pytest.mark.parametrize("rel", user_docs())
def test_nothing_points_outside_the_repository(rel):
    text = read(rel)
    assert "../shared" not in text and "shared/spec" not in text and "shared/corpus" not in text
    assert not re.search(r"pip install gradaudit\b(?!-)", text), "gradaudit is on no package index"


@pytest.mark.parametrize("rel", user_docs())
def test_every_rule_mentioned_exists(rel):
    """The extension's README promised a rule that did not exist (issue 14)."""
    codes = set(re.findall(r"\bGA\d{3}\b", read(rel)))
    assert codes <= set(BY_CODE), f"{rel} mentions {sorted(codes - set(BY_CODE))}"
    for prefix in set(re.findall(r"\b(GA\d{1,2})\b", read(rel))):
        assert any(c.startswith(prefix) for c in BY_CODE), f"{rel}: the prefix {prefix} matches no rule"


def test_the_extension_manifest_names_only_existing_rules():
    # its severity setting's example was a prefix with no rules (GA4)
    text = read("vscode-extension/package.json")
    assert set(re.findall(r"\bGA\d{3}\b", text)) <= set(BY_CODE)
    for prefix in set(re.findall(r"\b(GA\d{1,2})\b", text)):
        assert any(c.startswith(prefix) for c in BY_CODE), f"package.json: the prefix {prefix} matches no rule"
    assert "pip install gradaudit" not in text


def test_every_check_option_is_documented():
    # --extend-select was undocumented
    parser = cli._parser()
    subs = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices
    documented = read("README.md") + read("docs/configuration.md")
    for action in subs["check"]._actions:
        for opt in action.option_strings:
            if opt.startswith("--") and opt != "--help":
                assert opt in documented, f"`gradaudit check {opt}` is in neither README.md nor docs/configuration.md"


def test_the_extension_readme_has_no_relative_links():
    # the .vsix carries it alone: a link into the repository would be broken (vsce refuses them)
    assert [t for t in LINK.findall(prose(read("vscode-extension/README.md"))) if not t.startswith("#")] == []


def test_the_extension_promises_only_existing_rules():
    # it promised `zero_grad()` between `backward()` and `step()`, a lifecycle rule not implemented
    text = read("vscode-extension/README.md")
    if not any(r.family == "lifecycle" for r in RULES):
        assert "zero_grad()` between" not in text
    intro = prose(text).split("## Requirements")[0]
    generated = re.search(r"<!-- begin generated: rules -->\n(.*?)<!-- end generated: rules -->", intro, re.S)
    assert generated and generated.group(1) == docgen.readme_rules(None) + "\n"


# ------------------------------------------------------------------ commands

MARKERS = {
    line.split(":")[0].strip()
    for line in tomllib.loads(read("pyproject.toml"))["tool"]["pytest"]["ini_options"]["markers"]
}


def _commands(rel):
    """(cwd-relative command lines) of the sh/console blocks of a file."""
    out = []
    for lang, body in blocks(rel):
        if lang == "sh":
            lines = [ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        elif lang == "console":
            lines = [ln[2:] for ln in body.splitlines() if ln.startswith("$ ")]
        else:
            continue
        out.extend(lines)
    return out


def _strip_comment(line: str) -> str:
    lex = shlex.shlex(line, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = "#"
    return " ".join(shlex.quote(t) if t not in ("&&", "||", ";", "|") else t for t in lex)


def _simple_commands(line):
    words = shlex.split(_strip_comment(line))
    cmd = []
    for w in words:
        if w in ("&&", "||", ";", "|"):
            yield cmd
            cmd = []
        else:
            cmd.append(w)
    if cmd:
        yield cmd


def _check_gradaudit(args, cwd):
    try:
        ns = cli._parser().parse_args(args)
    except SystemExit as exc:
        raise AssertionError(f"`gradaudit {' '.join(args)}` does not parse") from exc
    if ns.command == "check":
        for p in ns.paths:
            assert os.path.exists(os.path.join(cwd, p)), f"`gradaudit {' '.join(args)}`: no {p}"
    if ns.command == "rule":
        assert ns.rule.upper() in BY_CODE or ns.rule in {r.name for r in RULES}


def _check_python(args, cwd):
    if args[:2] == ["-m", "venv"]:
        return
    if args[:2] == ["-m", "pytest"]:
        rest = args[2:]
        for i, a in enumerate(rest):
            if a == "-m":
                names = set(re.findall(r"[a-z_]+", rest[i + 1])) - {"not", "and", "or"}
                assert names <= MARKERS, f"pytest markers {names - MARKERS} are not registered"
            elif not a.startswith("-") and (i == 0 or rest[i - 1] != "-m"):
                assert os.path.exists(os.path.join(cwd, a.split("::")[0])), a
        return
    if args[:2] == ["-m", "gradaudit.analysis.app.docgen"]:
        assert docgen.main(["--check"]) == 0
        return
    if args[:2] == ["-m", "gradaudit.analysis.ops.generate"]:
        # regenerating needs torch and takes a while: test_ops_runtime.py runs it
        from gradaudit.analysis.ops import generate

        generate.parser().parse_args(args[2:])
        return
    if args[:2] == ["-m", "gradaudit.server"] or args[:2] == ["-m", "gradaudit.analysis.app.cli"]:
        _check_gradaudit(args[2:] if args[1] != "gradaudit.server" else ["server", *args[2:]], cwd)
        return
    script = os.path.join(cwd, args[0])
    assert args[0].endswith(".py") and os.path.exists(script), f"python {' '.join(args)}"
    r = subprocess.run([sys.executable, script, "--help"], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{args[0]} --help: {r.stderr[-2000:]}"


def _check_pip(args, cwd):
    sub, rest = args[0], args[1:]
    assert sub in ("install", "wheel"), f"pip {sub}"
    targets = [a for a in rest if not a.startswith("-") and a not in ("dist",)]
    for t in targets:
        path, _, extras = t.partition("[")
        assert os.path.exists(os.path.join(cwd, path)), f"pip {' '.join(args)}: no {path}"
        if extras:
            declared = tomllib.loads(read("pyproject.toml"))["project"]["optional-dependencies"]
            assert extras.rstrip("]") in declared


def check_command(words, cwd):
    prog, args = words[0], words[1:]
    while "=" in prog and not prog.startswith(("-", ".", "/")):  # FOO=bar cmd
        prog, args = args[0], args[1:]
    name = os.path.basename(prog)
    if name == "cd":
        new = os.path.normpath(os.path.join(cwd, args[0]))
        assert os.path.isdir(new), f"cd {args[0]}"
        return new
    if name == "gradaudit":
        _check_gradaudit(args, cwd)
    elif name in ("python", "python3"):
        _check_python(args, cwd)
    elif name in ("pip", "pip3"):
        _check_pip(args, cwd)
    elif name == "npm":
        with open(os.path.join(cwd, "package.json")) as fh:
            scripts = json.load(fh)["scripts"]
        assert args[0] in ("ci", "install", "test", "run"), f"npm {args[0]}"
        if args[0] in ("test", "run"):
            assert (args[1] if args[0] == "run" else "test") in scripts
    elif name == "pre-commit":
        r = subprocess.run([sys.executable, "-m", "pre_commit", args[0], "--help"], capture_output=True, text=True)
        assert r.returncode == 0, f"pre-commit {args[0]}: {r.stderr}"
    elif name == "ls":
        pass
    elif name == "bash":
        assert os.path.exists(os.path.join(cwd, args[0]))
    else:
        raise AssertionError(f"a command this test does not know: {' '.join(words)} (teach check_command)")
    return cwd


@pytest.mark.parametrize("rel", user_docs())
def test_every_command_parses(rel):
    # commands run from the repository's root, except in a sub-project's own README
    start = ROOT if rel.startswith("docs/") else os.path.join(ROOT, os.path.dirname(rel))
    for line in _commands(rel):
        cwd = start
        for words in _simple_commands(line):
            cwd = check_command(words, cwd)


def test_the_synopsis_lists_real_options():
    # the `text` blocks that show gradaudit's command line name only options it has
    parser = cli._parser()
    subs = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices
    for rel in user_docs():
        for _lang, body in blocks(rel, "text"):
            if not body.startswith("gradaudit "):
                continue
            # an option belongs to the subcommand of the last `gradaudit SUB` line above it
            sub = "check"
            for line in body.splitlines():
                m = re.match(r"gradaudit ([a-z]+)", line)
                if m and m.group(1) in subs:
                    sub = m.group(1)
                options = set(subs[sub]._option_string_actions)
                for opt in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", line):
                    assert opt in options, f"{rel}: `{opt}` is no option of gradaudit {sub}"


# ------------------------------------------------------------------ snippets


@pytest.mark.parametrize("rel", user_docs())
def test_snippets_are_valid(rel):
    import yaml

    from gradaudit.analysis.check.config import table_config
    from gradaudit.server.settings import Settings

    for lang, body in blocks(rel):
        if lang == "toml":
            data = tomllib.loads(body)
            if "tool" in data:
                _, problems = table_config(data["tool"]["gradaudit"], ROOT)
                assert problems == [], f"{rel}: {[str(p) for p in problems]}"
        elif lang == "json":
            data = json.loads(body)
            settings = data.get("gradaudit") if "gradaudit" in data else None
            for client in (data.get("clients") or {}).values():
                settings = client.get("initializationOptions")
            if settings is not None:
                _, problems = Settings.from_client(settings)
                assert problems == [], f"{rel}: {[str(p) for p in problems]}"
        elif lang == "yaml":
            yaml.safe_load(body)
        elif lang == "python":
            ast.parse(body)
        elif lang == "elisp":
            assert body.count("(") == body.count(")"), f"{rel}: unbalanced parentheses"


def test_the_ci_workflow_runs_gradaudit_with_github_annotations():
    import yaml

    [workflow] = [yaml.safe_load(body) for lang, body in blocks("docs/ci.md", "yaml") if "jobs:" in body]
    runs = [s["run"] for job in workflow["jobs"].values() for s in job["steps"] if "run" in s]
    [check] = [r for r in runs if r.startswith("gradaudit ")]
    args = shlex.split(check)[1:]
    assert cli._parser().parse_args(args).format == "github"


def test_the_pre_commit_hook_definition():
    import yaml

    [hook] = yaml.safe_load(read(".pre-commit-hooks.yaml"))
    assert hook["id"] == "gradaudit" and hook["language"] == "python" and hook["types"] == ["python"]
    entry = shlex.split(hook["entry"])
    assert entry[0] == "gradaudit" and cli._parser().parse_args(entry[1:] + ["x.py"]).command == "check"

"""`.gitignore` rules, as git reads them, for what `gradaudit check` walks (as ruff respects them).

The rules of a folder's `.gitignore` apply below that folder; deeper files and later lines win;
`!pattern` re-includes; `pattern/` names folders only; a pattern with a `/` before its end is
anchored to its folder, one without matches a name at any depth. `.git/info/exclude` applies
from the repository's root. Global excludes (core.excludesFile) are not read.
"""

from __future__ import annotations

import os
import re

from ..source.prebuilt import dataclass


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern
    negated: bool
    dir_only: bool


def _translate(glob: str) -> str:
    out, i, n = [], 0, len(glob)
    while i < n:
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and glob[j] in "!^":
                j += 1
            if j < n and glob[j] == "]":
                j += 1
            while j < n and glob[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
                i += 1
                continue
            body = glob[i + 1 : j]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def parse(text: str) -> tuple:
    """The patterns of one .gitignore file, in order."""
    out = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        # trailing spaces are ignored unless escaped
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        negated = line.startswith("!")
        if negated or line.startswith(("\\!", "\\#")):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        regex = re.compile(("" if anchored else "(?:.*/)?") + body + r"\Z", re.DOTALL)
        out.append(Pattern(regex, negated, dir_only))
    return tuple(out)


def _read(path: str) -> tuple:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return parse(fh.read())
    except OSError:
        return ()


def git_root(start: str) -> str | None:
    d = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


class GitIgnore:
    """The rules in force while walking below `top`: those of `top` and the folders above it up to
    the git repository's root, and of each folder the walk enters."""

    def __init__(self, top: str):
        self.top = os.path.abspath(top)
        self._rules: dict = {}  # folder -> ((base folder, patterns), ...) in force inside it
        root = git_root(self.top)
        chain = []
        if root is not None:
            git = os.path.join(root, ".git")
            if os.path.isdir(git):
                chain.append((root, _read(os.path.join(git, "info", "exclude"))))
            folders = []
            d = os.path.dirname(self.top)
            while root is not None and len(d) >= len(root) and d.startswith(root):
                folders.append(d)
                if d == root:
                    break
                d = os.path.dirname(d)
            for folder in reversed(folders):
                chain.append((folder, _read(os.path.join(folder, ".gitignore"))))
        self._above = tuple((b, p) for b, p in chain if p)

    def rules(self, folder: str) -> tuple:
        """The rules in force for entries of `folder` (a folder at or below top)."""
        folder = os.path.abspath(folder)
        got = self._rules.get(folder)
        if got is None and (folder == self.top or not folder.startswith(self.top + os.sep)):
            return self._above if folder != self.top else self._top_rules()
        if got is None:
            parent = self.rules(os.path.dirname(folder))
            own = _read(os.path.join(folder, ".gitignore"))
            got = parent + ((folder, own),) if own else parent
            self._rules[folder] = got
        return got

    def _top_rules(self) -> tuple:
        got = self._rules.get(self.top)
        if got is None:
            own = _read(os.path.join(self.top, ".gitignore"))
            got = self._above + ((self.top, own),) if own else self._above
            self._rules[self.top] = got
        return got

    def ignored(self, path: str, is_dir: bool) -> bool:
        path = os.path.abspath(path)
        result = False
        for base, patterns in self.rules(os.path.dirname(path)):
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            for p in patterns:
                if p.dir_only and not is_dir:
                    continue
                if p.regex.match(rel):
                    result = not p.negated
        return result

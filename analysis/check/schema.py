"""Configuration keys and their validation, in one place for `[tool.gradaudit]` (the CLI and the
language server) and the editor's settings (the language server).

`validate` returns the normalised values of the keys that are right and one `Problem` per key that
is not: the CLI stops on any problem (exit 2), the server shows each once and uses the key's
default. A string where a list is expected is a one-item list.
"""

from __future__ import annotations

from ..source.prebuilt import dataclass

SEVERITIES = ("error", "warning", "information", "hint")
CONFIDENCES = ("confirmed", "suspicious")

# what a kind of value is, as the message (and the configuration reference) says it
KINDS = {
    "selectors": "a list of rule codes, prefixes or names (`GA101`, `GA1`, `detach-cuts-loss`); "
    "a string is one item, commas separate items",
    "strings": "a list of strings; a string is one item",
    "bool": "`true` or `false`",
    "count": "a whole number >= 0",
    "seconds": "a number of seconds > 0",
    "template": "a string; `{code}` in it becomes the rule's code",
    "path": "a path (an interpreter, or the folder of an environment); relative to the folder of pyproject.toml",
    "selector-table": "a table: glob = list of rule codes, prefixes or names",
    "severity-table": "a table: rule code, prefix, name, family or confidence = "
    "`error`, `warning`, `information` or `hint`",
}


@dataclass(frozen=True)
class Key:
    name: str  # as the user writes it: 'per-file-ignores', 'codeLens'
    kind: str  # one of KINDS
    default: object
    doc: str
    example: str = ""  # a value as written in the file, for the reference


@dataclass(frozen=True)
class Problem:
    source: str  # the file, or 'client settings'
    section: str  # '[tool.gradaudit]', 'gradaudit'
    key: str
    message: str
    kind: str = "invalid"  # 'invalid' (the key takes its default), 'unknown' (ignored), 'unreadable' (all defaults)

    def __str__(self) -> str:
        where = " ".join(part for part in (self.section, self.key) if part)
        return f"{self.source}: {where}: {self.message}" if where else f"{self.source}: {self.message}"

    @property
    def consequence(self) -> str:
        """What the language server does about it."""
        return {"unknown": "ignored", "unreadable": "using the defaults"}.get(self.kind, "using the default for it")


class _Bad(Exception):
    pass


def _shown(value) -> str:
    kind = (
        "a boolean"
        if isinstance(value, bool)
        else "a number"
        if isinstance(value, (int, float))
        else "a string"
        if isinstance(value, str)
        else "a list"
        if isinstance(value, (list, tuple))
        else "a table"
        if isinstance(value, dict)
        else type(value).__name__
    )
    try:
        import json  # only to show a wrong value

        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({kind})"


def _list_of_strings(value, what) -> list:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise _Bad(f"expected {what}, got {_shown(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _Bad(f"expected {what}, but item {i + 1} is {_shown(item)}")
    return list(value)


def normalize_selectors(items) -> tuple:
    """`["ga1", "GA102, Detach-Cuts-Loss"]` -> ('GA1', 'GA102', 'detach-cuts-loss')."""
    out = []
    for item in items:
        for part in str(item).split(","):
            part = part.strip()
            if part:
                out.append(part.upper() if part[:2].upper() == "GA" or part.upper() == "ALL" else part.lower())
    return tuple(out)


def selector_matches(selector: str, code: str, name: str) -> bool:
    if selector == "ALL":
        return True
    if selector.startswith("GA"):
        return code.startswith(selector)
    return selector == name


def unknown_selectors(selectors) -> list:
    """Selectors that match no rule: a typo silently selecting nothing is worse than an error."""
    if not selectors:
        return []  # nothing to look up: the rules are not loaded for it
    from ..rules import RULES

    return [s for s in selectors if s != "ALL" and not any(selector_matches(s, r.code, r.name) for r in RULES)]


_LOOKALIKE_DIGITS = str.maketrans({"l": "1", "L": "1", "I": "1", "i": "1", "|": "1", "O": "0", "o": "0"})


def did_you_mean(word: str, choices) -> str:
    """'`per-file-ignores`' for 'per-file-ignore': the one closest of `choices`, or '' when none is
    close or several are as close (`GA120`: GA102? GA110? GA209?). A rule code typed with a letter
    for a digit (`GA1O1`, `GA10l`) is that code."""
    word, choices = str(word), list(choices)
    if word[:2].upper() == "GA":
        word = "GA" + word[2:].translate(_LOOKALIKE_DIGITS)
        if word in choices:
            return f"`{word}`"
        cutoff = 0.75
    else:
        word, cutoff = word.lower(), 0.6
    import difflib  # only for a typo

    scored = sorted(((difflib.SequenceMatcher(None, word, c.lower()).ratio(), c) for c in choices), reverse=True)
    if not scored or scored[0][0] < cutoff or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return ""
    return f"`{scored[0][1]}`"


def rule_choices(selector: str = "") -> list:
    """What a selector may be: rule codes (for one that looks like a code), else rule names."""
    from ..rules import RULES

    if selector.upper().startswith("GA"):
        return [r.code for r in RULES]
    return [r.name for r in RULES]


def no_rule_matches(selectors) -> str:
    """'no rule matches 'GA10l' (did you mean `GA101`?) (see `gradaudit rules`)'."""
    parts = []
    for s in selectors:
        near = did_you_mean(s, rule_choices(s))
        parts.append(f"{s!r} (did you mean {near}?)" if near else repr(s))
    return f"no rule matches {', '.join(parts)} (see `gradaudit rules`)"


def _selectors(value) -> tuple:
    sels = normalize_selectors(_list_of_strings(value, KINDS["selectors"].split(";")[0]))
    bad = unknown_selectors(sels)
    if bad:
        raise _Bad(no_rule_matches(bad))
    return sels


def _severity_key(key: str) -> str:
    from ..rules import RULES

    families = {r.family for r in RULES}
    k = key.strip()
    low = k.lower()
    if low in CONFIDENCES or low in families:
        return low
    fam, _, conf = low.partition(".")
    if fam in families and conf in CONFIDENCES:
        return low
    [sel] = normalize_selectors([k]) or [""]
    if sel and not unknown_selectors([sel]) and sel != "ALL":
        return sel
    near = did_you_mean(k, rule_choices(k) + sorted(families) + list(CONFIDENCES))
    raise _Bad(
        f"{key!r} is no rule code, prefix, name, family or confidence" + (f" (did you mean {near}?)" if near else "")
    )


def _check(kind: str, value):
    if kind == "selectors":
        return _selectors(value)
    if kind == "strings":
        return tuple(_list_of_strings(value, "a list of strings"))
    if kind == "bool":
        if not isinstance(value, bool):
            raise _Bad(f"expected true or false, got {_shown(value)}")
        return value
    if kind == "count":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != int(value):
            raise _Bad(f"expected a whole number >= 0, got {_shown(value)}")
        return int(value)
    if kind == "seconds":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise _Bad(f"expected a number of seconds > 0, got {_shown(value)}")
        return float(value)
    if kind == "path":
        if not isinstance(value, str):
            raise _Bad(f"expected a path, got {_shown(value)}")
        return value
    if kind == "template":
        if not isinstance(value, str):
            raise _Bad(f"expected a string, got {_shown(value)}")
        try:
            value.format(code="GA101")
        except (KeyError, IndexError, ValueError) as exc:
            raise _Bad(f"{value!r} is not a template with only {{code}} in braces ({exc})") from None
        return value
    if kind == "selector-table":
        if not isinstance(value, dict):
            raise _Bad(f"expected a table of glob = [rules], got {_shown(value)}")
        out = []
        for glob, sels in value.items():
            try:
                out.append((str(glob), _selectors(sels)))
            except _Bad as exc:
                raise _Bad(f"{glob!r}: {exc}") from None
        return tuple(out)
    if kind == "severity-table":
        if not isinstance(value, dict):
            raise _Bad(f"expected a table of rule = severity, got {_shown(value)}")
        table: dict[str, str] = {}
        for k, v in value.items():
            key = _severity_key(str(k))
            if not isinstance(v, str) or v.lower() not in SEVERITIES:
                raise _Bad(f"{k!r}: expected one of {', '.join(SEVERITIES)}, got {_shown(v)}")
            table[key] = v.lower()
        return table
    raise ValueError(f"unknown kind {kind}")


def validate(table, keys, source: str, section: str) -> tuple[dict, list]:
    """(values by key name, problems): unknown keys and wrong values are problems, left out of values."""
    known = {k.name: k for k in keys}
    if not isinstance(table, dict):
        return {}, [Problem(source, section, "", f"expected a table of settings, got {_shown(table)}", "unreadable")]
    values, problems = {}, []
    for name, value in table.items():
        key = known.get(name)
        if key is None:
            near = did_you_mean(name, known)
            keys = ", ".join(sorted(known))
            problems.append(
                Problem(
                    source,
                    section,
                    str(name),
                    f"unknown key; did you mean {near}? (the keys are: {keys})"
                    if near
                    else f"unknown key (the keys are: {keys})",
                    "unknown",
                )
            )
            continue
        try:
            values[name] = _check(key.kind, value)
        except _Bad as exc:
            problems.append(Problem(source, section, name, str(exc)))
    return values, problems

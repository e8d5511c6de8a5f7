"""SARIF 2.1.0: one run, the rule catalog as the driver's rules, one result per finding."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from .. import __version__
from ..rules import RULES
from ..source.notebook import IDENTITY, Locator
from .coverage import coverage_json, headline, step_message

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _region(w) -> dict:
    return {
        "startLine": w.line,
        "startColumn": w.col + 1,
        "endLine": w.end_line,
        "endColumn": w.end_col + 1,
    }


def _uri(path: str) -> str:
    return urllib.parse.quote(path.replace("\\", "/"))


def _location(w, message=None) -> dict:
    """In a notebook the region is the cell's lines; the cell is named in the location's properties
    (SARIF has no notion of cells) and as a logical location."""
    loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": _uri(w.path)}, "region": _region(w)}}
    if w.cell is not None:
        loc["logicalLocations"] = [{"name": f"cell {w.cell.number}", "kind": "notebookCell"}]
        loc["properties"] = {"notebookCell": w.cell_json()}
    if message:
        loc["message"] = {"text": message}
    return loc


def render(findings, errors, files_checked: int, locator: Locator = IDENTITY, libraries=(), coverage=(), **_) -> str:
    index = {r.code: i for i, r in enumerate(RULES)}
    rules = [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": " ".join(r.what.split())},
            "help": {"text": r.documentation(), "markdown": r.documentation()},
            "properties": {"family": r.family},
            "defaultConfiguration": {"level": "error"},
        }
        for r in RULES
    ]
    results = []
    for f in findings:
        result = {
            "ruleId": f.code,
            "ruleIndex": index.get(f.code, 0),
            "level": "error" if f.confidence == "confirmed" else "warning",
            "message": {"text": f.message},
            "locations": [_location(locator.span(f.span))],
            "properties": {"confidence": f.confidence, "params": list(f.params)},
        }
        if f.related:
            result["relatedLocations"] = [
                dict(_location(locator.span(r.span), r.message), id=i) for i, r in enumerate(f.related)
            ]
        if f.fix is not None and f.fix.edits:
            changes: dict[str, list] = {}
            for e in f.fix.edits:
                w = locator.span(e.span)
                replacement = {"deletedRegion": _region(w), "insertedContent": {"text": e.content}}
                if w.cell is not None:
                    replacement["properties"] = {"notebookCell": w.cell_json()}
                changes.setdefault(e.span.path, []).append(replacement)
            result["fixes"] = [
                {
                    "description": {"text": f.fix.message},
                    "artifactChanges": [
                        {"artifactLocation": {"uri": _uri(p)}, "replacements": reps} for p, reps in changes.items()
                    ],
                }
            ]
        results.append(result)
    notifications: list[dict] = []
    for e in errors:
        note: dict[str, Any] = {
            "level": "error" if e.is_error else "warning",
            "message": {"text": f"could not parse: {e.message}" if e.kind == "parse" else e.message},
            "descriptor": {"id": f"gradaudit/{e.kind}"},
        }
        location: dict[str, Any] = {"artifactLocation": {"uri": _uri(e.path)}}
        if e.line:
            location["region"] = {"startLine": e.line, "startColumn": max(1, e.col)}
        if e.cell is not None:
            location["properties"] = {"notebookCell": {"index": e.cell.index, "id": e.cell.id or None}}
        note["locations"] = [{"physicalLocation": location}]
        notifications.append(note)
    # training steps not understood: no verdict was made on them (model/coverage.py)
    for r in coverage:
        if r.understood:
            continue
        w = locator.span(r.span)
        notifications.append(
            {
                "level": "note",
                "message": {"text": step_message(r)},
                "descriptor": {"id": "gradaudit/not-understood"},
                "locations": [_location(w)],
            }
        )
    if coverage and not all(r.understood for r in coverage):
        notifications.append(
            {"level": "note", "message": {"text": headline(coverage) + "."}, "descriptor": {"id": "gradaudit/coverage"}}
        )
    failed = any(e.kind in ("internal", "read", "missing", "write") for e in errors)
    run = {
        # no helpUri / informationUri: gradaudit has no website; each rule's page is in `help`
        "tool": {"driver": {"name": "gradaudit", "version": __version__, "rules": rules}},
        "results": results,
        "columnKind": "unicodeCodePoints",
        # whose installed libraries were read, and the imported ones not found there; the training
        # steps found, understood or not
        "properties": {"environments": [u.to_json() for u in libraries], "coverage": coverage_json(coverage, locator)},
    }
    if notifications:
        run["invocations"] = [{"executionSuccessful": not failed, "toolExecutionNotifications": notifications}]
    else:
        run["invocations"] = [{"executionSuccessful": True}]
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"

"""The "Generate gradient-flow test" code action on a `backward()`: the test `gradaudit probe PATH
--emit` writes, for that training step, next to the script (test_gradflow_<script>.py)."""

from __future__ import annotations

import os
from typing import TypedDict

from lsprotocol import types

from gradaudit.analysis.report import gradflow
from gradaudit.analysis.report.collect import Source
from gradaudit.analysis.report.summary import unique_steps

from .convert import path_of, uri_of
from .documents import Analysis

KIND = "source.gradaudit.gradflowTest"
COMMAND = "gradaudit.generateGradflowTest"
TITLE = "Generate gradient-flow test"


class Written(TypedDict, total=False):
    """What the command answers: the test written (`path`, `uri`, `tests`), or `error`."""

    path: str
    uri: str
    tests: int
    error: str


def _plans(analysis: Analysis | None, uri: str, line: int | None) -> list[gradflow.ProbePlan]:
    """The plans of this document's training steps (only the one at `line` when given)."""
    result = analysis.result if analysis is not None else None
    if analysis is None or result is None or result.model is None:
        return []
    path = os.path.normpath(path_of(uri))
    files = {result.path: Source(result.path, analysis.text)}
    out: list[gradflow.ProbePlan] = []
    for step in unique_steps(result.model):
        if os.path.normpath(os.path.abspath(step.span.path)) != path:
            continue
        if line is not None and not (step.span.line <= line <= step.span.end_line):
            continue
        out.append(gradflow.plan_step(result.model, step, result.path, files))
    return out


def code_actions(analysis: Analysis | None, uri: str, first_line: int, last_line: int) -> list[types.CodeAction]:
    """One action per located training step whose backward() the range touches (1-based lines)."""
    actions = []
    for plan in _plans(analysis, uri, None):
        if plan.locatable and plan.line <= last_line and first_line <= plan.end_line:
            actions.append(
                types.CodeAction(
                    title=f"{TITLE} for `{plan.loss}.backward()`",
                    kind=KIND,
                    command=types.Command(title=TITLE, command=COMMAND, arguments=[uri, plan.line]),
                )
            )
    return actions


def write_test(analysis: Analysis | None, uri: str, line: int) -> Written:
    """Write the test for the step at `line`; {'path', 'tests'} or {'error'}."""
    plans = [p for p in _plans(analysis, uri, line) if p.locatable]
    if not plans:
        return {"error": f"no training step the engine located at line {line}"}
    script = path_of(uri)
    target = os.path.join(os.path.dirname(script), f"test_gradflow_{os.path.splitext(os.path.basename(script))[0]}.py")
    text = gradflow.emit(plans, target, os.path.basename(script))
    try:
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        return {"error": f"cannot write {target}: {exc.strerror or exc}"}
    return {"path": target, "uri": uri_of(target), "tests": len(plans)}

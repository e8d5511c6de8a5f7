"""The audit as data: `gradaudit audit --format json` (schema: docs/audit-report.schema.json)."""

from __future__ import annotations

import json

from .. import __version__
from ..output.coverage import coverage_json, reason_json
from . import graph as G
from .collect import Audit

VERSION = 1


def _step(g: G.StepGraph) -> dict:
    return {
        "id": g.id,
        "path": g.path,
        "line": g.line,
        "function": g.function,
        "loss": g.loss,
        "loss_line": g.loss_line or None,
        "loss_path": g.loss_path or None,
        "loss_text": g.loss_text,
        "inputs": list(g.inputs),
        "source": g.source,
        "modules": [
            {
                "name": m.name,
                "params": m.params,
                "params_at_least": m.at_least,
                "reached": m.reached,
                "cut": [{"detail": c.detail, "path": c.path, "line": c.line, "valid": c.valid or None} for c in m.cut],
                "frozen": m.frozen,
                "partly_frozen": m.partly_frozen,
                "optimized_by": list(m.optimized),
                "held_by_other": list(m.held_elsewhere),
                "not_optimized": m.not_optimized,
                "note": m.note,
            }
            for m in g.modules
        ],
        "optimizers": [
            {
                "name": o.name,
                "type": o.type,
                "path": o.path,
                "line": o.line,
                "stepped": o.stepped,
                "groups": [{"options": opts, "holds": held, "frozen": frozen} for opts, held, frozen in o.groups],
            }
            for o in g.optimizers
        ],
        "events": [
            {"kind": e.kind, "path": e.path, "line": e.line, "target": e.target, "guarded": e.guarded} for e in g.events
        ],
        "order": g.order(),
        "accumulation": g.accumulation or None,
        "unknown": g.unknown,
        "understood": g.understood,
        "reasons": [reason_json(r) for r in g.coverage.reasons] if g.coverage is not None else [],
        "text": G.text(g),
        "mermaid": G.mermaid(g),
    }


def data(a: Audit) -> dict:
    confirmed = sum(1 for e in a.entries if e.finding.confidence == "confirmed")
    findings = []
    for rank, e in enumerate(a.entries, 1):
        d = e.finding.to_json()
        d.update(
            rank=rank,
            severity=e.severity,
            classification=e.classification,
            function=e.function,
            why_not_lookalike=e.why,
            correction=e.correction,
            step=e.step or None,
            runtime_check=None
            if e.runtime is None
            else {
                "check": e.runtime.check,
                "observes": e.runtime.observes,
                "data_dependent": e.runtime.data_dependent,
                "problems": list(e.runtime.problems),
            },
            **a.cell_of(e.finding.span.path, e.finding.span.line),
            evidence=[
                {
                    "label": x.label,
                    "path": x.path,
                    "line": x.line,
                    "lines": [{"line": n, "text": t} for n, t in x.lines],
                }
                for x in e.evidence
            ],
        )
        findings.append(d)
    checks = []
    for c in a.checks:
        p = c.plan
        checks.append(
            {
                "step": c.step,
                "locatable": p.locatable,
                "mode": p.mode,
                "reason": p.reason or None,
                "into": list(p.into),
                "updates": list(p.updates),
                "optimizers": list(p.optimizers),
                "asserts": p.assertions() if p.locatable else [],
                "test": c.test or None,
                "assumptions": list(c.assumptions),
                "findings": list(c.findings),
            }
        )
    return {
        "version": VERSION,
        "kind": "gradaudit-audit",
        "gradaudit": __version__,
        "paths": list(a.paths),
        "files_checked": a.files_checked,
        "summary": {
            "steps": len(a.graphs),
            "findings": len(a.entries),
            "confirmed": confirmed,
            "suspicious": len(a.entries) - confirmed,
            "corrections": len(a.corrections),
            "look_alikes": len(a.lookalikes),
            "clean": a.clean,
            "found": len(a.coverage),
            "understood": sum(1 for r in a.coverage if r.understood),
        },
        "steps": [_step(g) | a.cell_of(g.path, g.line) for g in a.graphs],
        "findings": findings,
        "corrections": [
            {
                "index": c.index,
                "code": c.code,
                "path": c.path,
                "line": c.line,
                "message": c.message,
                "applicability": c.applicability,
                "parses": c.parses,
                "diff": c.diff or None,
            }
            | a.cell_of(c.path, c.line)
            for c in a.corrections
        ],
        "verification": {"statement": a.no_defect, "partial": a.partial, "checks": checks},
        "look_alikes": [
            {"kind": la.kind, "path": la.path, "line": la.line, "code": la.code, "judgement": la.judgement}
            | a.cell_of(la.path, la.line)
            for la in a.lookalikes
        ],
        "errors": [p.to_json() for p in a.errors],
        "incomplete": [p.to_json() for p in a.incomplete],
        "environments": [u.to_json() for u in a.libraries],
        "coverage": coverage_json(a.coverage, a.locator),
    }


def render(a: Audit) -> str:
    return json.dumps(data(a), indent=2) + "\n"

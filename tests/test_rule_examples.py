"""Every rule's embedded examples: invalid ones report at their marked anchors and fix to the
stated source; valid look-alikes report nothing (Fixit style, collected automatically)."""

import pytest
from helpers import analyze, found, strip_markers

from gradaudit.analysis.rules import RULES
from gradaudit.analysis.rules.fixes import apply_edits

INVALID = [pytest.param(rule, ex, id=f"{rule.code}-invalid-{i}") for rule in RULES for i, ex in enumerate(rule.invalid)]
VALID = [pytest.param(rule, ex, id=f"{rule.code}-valid-{i}") for rule in RULES for i, ex in enumerate(rule.valid)]


def test_every_rule_has_examples():
    for rule in RULES:
        assert rule.invalid, f"{rule.code} has no invalid example"
        assert rule.valid, f"{rule.code} has no valid look-alike"
        for ex in rule.invalid:
            _, expected = strip_markers(ex.source)
            assert any(code == rule.code for _, code in expected), f"{rule.code}: an example without its marker"


@pytest.mark.parametrize("rule, example", INVALID)
def test_invalid_example(rule, example):
    source, expected = strip_markers(example.source)
    result = analyze(source)
    assert result.error is None
    assert found(result) == expected
    for f in result.findings:
        assert f.confidence in ("confirmed", "suspicious")
        assert f.message and f.name == next(r.name for r in RULES if r.code == f.code)
    if example.fixed is not None:
        mine = [f for f in result.findings if f.code == rule.code]
        assert all(f.fix is not None and f.fix.edits for f in mine), "a finding without its fix"
        edits = [e for f in mine for e in f.fix.edits]
        fixed = apply_edits(source, edits)
        assert fixed == example.fixed
        after = analyze(fixed)
        assert [f for f in after.findings if f.code == rule.code] == []
    elif rule.fix_available:
        pass  # some anchors have no mechanical fix; the finding then carries fix=None


@pytest.mark.parametrize("rule, example", VALID)
def test_valid_example(rule, example):
    source, expected = strip_markers(example.source)
    assert expected == []
    result = analyze(source)
    assert result.error is None
    assert found(result) == []

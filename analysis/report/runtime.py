"""Which runtime check of the probe shows a finding, or why none does.

The probe of a step (section 4) asserts what correct wiring means for the step, not the findings
one by one; each rule says (its `runtime` field) which of those assertions fails when the defect
happens for real, so that the report claims no runtime proof where a gradient-flow probe cannot
give one.
"""

from __future__ import annotations

from ..rules import BY_CODE
from ..rules.base import CHECKS, PROBLEMS, RuntimeCheck

__all__ = ["CHECKS", "PROBLEMS", "RuntimeCheck", "runtime_check"]


def runtime_check(f) -> RuntimeCheck:
    """The probe check that shows finding `f` at runtime."""
    rule = BY_CODE.get(f.code)
    return rule.runtime if rule is not None else RuntimeCheck(None, "no runtime check is known for this rule")

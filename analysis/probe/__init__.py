"""gradaudit.probe: check gradient flow in real training steps (needs the project's own torch).

    from gradaudit.probe import probe

    with probe(model, optimizer) as p:
        for x, y in batches:
            train_step(x, y)
    p.report()
    p.assert_flows(into=model, updates=optimizer, finite=True)

`run_script` runs a training script under a probe for a few steps (what the tests written by
`gradaudit probe PATH --emit test_gradflow.py` do). Importing this package does not import
torch; using it does, with a clear message when torch is missing.
"""

from ._torch import TorchMissing, require_torch
from .batch import batch_for, first_layer
from .recorder import Probe, StopTraining, probe
from .records import GradFlowError
from .script import ScriptRun, run_script

__all__ = [
    "GradFlowError",
    "Probe",
    "ScriptRun",
    "StopTraining",
    "TorchMissing",
    "batch_for",
    "first_layer",
    "probe",
    "require_torch",
    "run_script",
]

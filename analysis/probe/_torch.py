"""torch is the user's: imported when a probe runs, never when gradaudit is imported."""

from __future__ import annotations


class TorchMissing(ImportError):
    pass


def require_torch():
    try:
        import torch
    except ImportError as exc:
        raise TorchMissing(
            "gradaudit.probe runs your training step under PyTorch, and torch is not installed in this "
            f"environment ({exc}). torch is your project's dependency, not gradaudit's: install it the way "
            "your project does (for example `pip install torch`), then run again."
        ) from exc
    return torch

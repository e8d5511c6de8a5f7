"""A fake installed library in a throwaway environment, for the library-model tests.

`fakevision` mimics how real model libraries are laid out: a lazily loading package that
declares its names under `if TYPE_CHECKING:` with star imports, a model class with a head its
forward uses and an auxiliary one it does not, a factory annotated with the class it returns, a
`reset_classifier` that puts a new head in place, and a config object that is not a module.
"""

from __future__ import annotations

import os
import textwrap

FILES = {
    "fakevision/__init__.py": """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from .models import *
            from .configs import VisionConfig
        else:
            import sys
            sys.modules[__name__] = object()   # a lazy module: nothing here is read by the engine
    """,
    "fakevision/models/__init__.py": """
        from .blocks import *
        from .tiny import *
    """,
    "fakevision/models/blocks.py": """
        import torch.nn as nn

        __all__ = ["Block"]


        class Block(nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.conv = nn.Conv2d(channels, channels, 3, padding=1)
                self.bn = nn.BatchNorm2d(channels)

            def forward(self, x):
                return self.bn(self.conv(x)).relu() + x
    """,
    "fakevision/models/tiny.py": """
        import torch.nn as nn

        from .blocks import Block

        __all__ = ["TinyNet", "tiny_net", "build"]


        class TinyNet(nn.Module):
            def __init__(self, num_classes=10, depth=2):
                super().__init__()
                self.stem = nn.Conv2d(3, 8, 3, padding=1)
                self.blocks = nn.Sequential(*[Block(8) for _ in range(depth)])
                self.pool = nn.AdaptiveAvgPool2d(1)
                self.fc = nn.Linear(8, num_classes)
                self.aux = nn.Linear(8, 2)   # an auxiliary head the forward does not use

            def forward(self, x):
                x = self.pool(self.blocks(self.stem(x))).flatten(1)
                return self.fc(x)

            def reset_classifier(self, num_classes):
                self.fc = nn.Linear(8, num_classes)

            def get_classifier(self):
                return self.fc


        def tiny_net(pretrained=False, **kwargs) -> TinyNet:
            return TinyNet(**kwargs)


        def build(name, **kwargs):
            return tiny_net(**kwargs)
    """,
    "fakevision/configs.py": """
        class VisionConfig:
            def __init__(self, num_classes=10):
                self.num_classes = num_classes
    """,
}


# the environment's interpreter: gradaudit reads environments and never starts one
TRAP_PYTHON = "#!/bin/sh\necho 'gradaudit started the analysed environment interpreter' >&2\nexit 99\n"


def make_env(root, files=FILES, version="3.11", name="env") -> str:
    """A virtualenv-shaped folder with `files` in its site-packages and a `bin/python` that fails
    if started; returns the folder."""
    env = os.path.join(str(root), name)
    site = os.path.join(env, "lib", f"python{version}", "site-packages")
    os.makedirs(site, exist_ok=True)
    os.makedirs(os.path.join(env, "bin"), exist_ok=True)
    with open(os.path.join(env, "bin", "python"), "w") as fh:
        fh.write(TRAP_PYTHON)
    os.chmod(os.path.join(env, "bin", "python"), 0o755)
    with open(os.path.join(env, "pyvenv.cfg"), "w") as fh:
        fh.write("home = /usr/bin\ninclude-system-site-packages = false\n")
    for rel, text in files.items():
        path = os.path.join(site, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(textwrap.dedent(text).lstrip())
    return env


def analyzer(env: str, cache_dir=None, config=None):
    from gradaudit.analysis.check.config import Config
    from gradaudit.analysis.check.engine import Analyzer
    from gradaudit.analysis.libraries.environment import find_env
    from gradaudit.analysis.libraries.models import LibraryModels
    from gradaudit.analysis.libraries.summary_cache import SummaryCache

    libs = LibraryModels(find_env(env), SummaryCache(cache_dir, enabled=cache_dir is not None))
    return Analyzer(config or Config(), libraries=libs)

"""Models picked from a registry by a name in the configuration (libraries/registries.py):
`META_ARCH_REGISTRY.get(cfg.arch)(cfg)`, `MODELS.build(cfg)`, the registry a library object filled
by class decorators in the project's modules."""

from __future__ import annotations

import os
import textwrap

from gradaudit.analysis.check.engine import Analyzer

BUILD = """
from fvcore.common.registry import Registry

REG = Registry("ARCH")


def build_model(cfg):
    return REG.get(cfg.name)(cfg)


def build_from(cfg):
    return REG.build(cfg)
"""

MODULES = """
import torch.nn as nn

from .build import REG


@REG.register()
class A(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x).pow(2).mean()
"""

SECOND = """

@REG.register()
class B(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x).abs().mean()
"""

NOT_MODULES = """
from .build import REG


@REG.register()
class Squares:
    def __init__(self, cfg):
        self.items = [float(i * i) for i in range(8)]


@REG.register()
class Cubes:
    def __init__(self, cfg):
        self.items = [float(i**3) for i in range(8)]
"""

OWN_REGISTRY = """
class Registry:
    \"\"\"A copy of fvcore's, kept in the project (maskrcnn-benchmark, pysot and many more do).\"\"\"

    def __init__(self, name):
        self._name = name
        self._obj_map = {}

    def _do_register(self, name, obj):
        assert name not in self._obj_map, name
        self._obj_map[name] = obj

    def register(self, obj=None):
        if obj is None:

            def deco(func_or_class):
                self._do_register(func_or_class.__name__, func_or_class)
                return func_or_class

            return deco
        self._do_register(obj.__name__, obj)

    def get(self, name):
        ret = self._obj_map.get(name)
        if ret is None:
            raise KeyError(f"No object named '{name}' found in '{self._name}' registry!")
        return ret


REG = Registry("ARCH")


def build_model(cfg):
    return REG.get(cfg.name)(cfg)
"""

TRAIN = """
import torch

from pkg.build import {builder}


def main(cfg):
    model = {builder}(cfg)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in cfg.loader:
        loss = model(x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(None)
"""


def _project(tmp_path, modules: str, builder="build_model", build=BUILD):
    (tmp_path / ".git").mkdir()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "build.py").write_text(build)
    (pkg / "nets.py").write_text(textwrap.dedent(modules))
    train = tmp_path / "train.py"
    train.write_text(TRAIN.format(builder=builder))
    result = Analyzer().analyze_file(os.fspath(train))
    assert result.error is None
    return result


def _step(result):
    (step,) = result.model.steps
    return step


def test_several_module_classes_make_a_module_of_unseen_parameters(tmp_path):
    step = _step(_project(tmp_path, MODULES + SECOND))
    assert not step.not_understood
    assert step.reached and all(p.opaque for p in step.reached)
    assert {p for o in step.optimizers for g in o.groups for p in g.params} >= step.reached


def test_build_of_the_configuration_is_the_same(tmp_path):
    step = _step(_project(tmp_path, MODULES + SECOND, builder="build_from"))
    assert not step.not_understood


def test_one_class_registered_is_that_class(tmp_path):
    step = _step(_project(tmp_path, MODULES))
    assert not step.not_understood
    assert step.reached and not any(p.opaque for p in step.reached)


def test_a_registry_of_other_classes_says_nothing(tmp_path):
    result = _project(tmp_path, NOT_MODULES)
    assert not result.findings
    assert _step(result).not_understood


def test_a_registry_class_of_the_project(tmp_path):
    step = _step(_project(tmp_path, MODULES + SECOND, build=OWN_REGISTRY))
    assert not step.not_understood
    assert step.reached and all(p.opaque for p in step.reached)


def test_the_index_follows_the_files_between_programs(tmp_path):
    # a Program (a check run, an edit in the editor) reads the package's files once: a class
    # registered in a new file is found by the next Program, not by a stale index
    from gradaudit.analysis.source.program import Program

    result = _project(tmp_path, "X = 1\n")
    assert _step(result).not_understood
    (tmp_path / "pkg" / "extra.py").write_text(textwrap.dedent(MODULES))
    os.utime(tmp_path / "pkg", ns=(1, 10**18))  # a later mtime even on a coarse clock
    train = os.fspath(tmp_path / "train.py")
    analyzer = Analyzer()
    program = analyzer.attach(Program([os.fspath(tmp_path)]))
    step = _step(analyzer.analyze_file(train, program))
    assert not step.not_understood
    # the same Program asked again does not look at the files again: the same classes
    again = _step(analyzer.analyze_file(train, program))
    assert not again.not_understood

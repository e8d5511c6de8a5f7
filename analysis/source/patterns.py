"""Regular expressions compiled when first used.

`re.compile` runs the regex compiler (Python code): a module-level pattern costs start-up time
whether or not the command uses it. Those on paths most runs never take (notebook syntax, parse
error recovery) are these instead; a hot pattern stays a plain `re.compile`.
"""

from __future__ import annotations

import re


class Lazy:
    """Stands for `re.compile(pattern, flags)`: the pattern is compiled at its first use."""

    __slots__ = ("_flags", "_pattern", "_rx")

    def __init__(self, pattern: str, flags: int = 0):
        self._pattern = pattern
        self._flags = flags
        self._rx: re.Pattern | None = None

    def compiled(self) -> re.Pattern:
        if self._rx is None:
            self._rx = re.compile(self._pattern, self._flags)
        return self._rx

    def match(self, *args):
        return self.compiled().match(*args)

    def search(self, *args):
        return self.compiled().search(*args)

    def fullmatch(self, *args):
        return self.compiled().fullmatch(*args)

    def finditer(self, *args):
        return self.compiled().finditer(*args)

    def findall(self, *args):
        return self.compiled().findall(*args)

    def sub(self, *args):
        return self.compiled().sub(*args)

    def split(self, *args):
        return self.compiled().split(*args)

"""Giving memory back to the system after a big document.

Freed memory stays with the process unless the allocator returns it: glibc keeps large freed
blocks in its heap once it has raised its mmap threshold (after a 20 MB text was freed, the next
one is allocated on the heap, and stays there when freed). After a big document closes, the
server collects and asks glibc to trim; elsewhere this does nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys

_trim = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _trim = getattr(_libc, "malloc_trim", None)
    except OSError:
        _trim = None


def give_back() -> None:
    gc.collect()
    if _trim is not None:
        _trim(0)

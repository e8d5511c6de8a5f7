"""Giving memory back to the system after a big document.

Freed memory stays with the process unless the allocator returns it: glibc keeps large freed
blocks in its heap once it has raised its mmap threshold (after a 20 MB text was freed, the next
one is allocated on the heap, and stays there when freed, pinned by whatever small object lands
above it). So the server fixes the threshold at start-up: every block of 128 KiB or more (a
document's text, a message, a job for a worker) is mapped on its own and unmapped when freed. After
a big document closes, the server also collects and asks glibc to trim. Elsewhere this does nothing.
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


M_MMAP_THRESHOLD = -3  # mallopt's parameter (malloc.h)
MMAP_THRESHOLD = 128 * 1024


def bound_heap() -> None:
    """Large blocks outside the heap, always: setting the threshold turns off glibc's raising it."""
    mallopt = getattr(_libc, "mallopt", None) if _trim is not None else None
    if mallopt is not None:
        mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def give_back() -> None:
    gc.collect()
    if _trim is not None:
        _trim(0)

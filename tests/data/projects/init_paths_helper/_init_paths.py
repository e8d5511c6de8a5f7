"""Puts lib/ on sys.path, as the scripts of many research repositories do (`import _init_paths`
first, then `from models.net import Net`)."""
import os.path as osp
import sys


def add_path(path):
    if path not in sys.path:
        sys.path.insert(0, path)


this_dir = osp.dirname(__file__)
lib_path = osp.join(this_dir, "lib")
add_path(lib_path)

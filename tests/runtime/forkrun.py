"""Run Python scripts as `python SCRIPT` would, each in a forked child of one process that
imported torch once: importing torch takes seconds, most of what running a small script costs.

Usage: python forkrun.py JOBS.json RESULTS.json, where JOBS is a list of {"id", "script", "cwd"}
(or "code" instead of "script", as `python -c CODE`) and RESULTS maps each id to
{"returncode", "stdout", "stderr"}; from a test, run_scripts(jobs) does that in a subprocess.

Each child gets what a fresh interpreter would give the script: its own folder first on sys.path
(the current folder for code), argv, `__name__ == "__main__"`, the working folder, its own
stdout and stderr (at the file descriptors, so that what C code prints is kept too), the exit
status Python would give (1 and the traceback for an uncaught exception) and its atexit functions.
What differs: torch is already imported, and the children run one after the other.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

TIMEOUT = 300.0  # seconds one script may run


def run_scripts(jobs: list, env: dict | None = None) -> dict:
    """Run the jobs (see above) in one subprocess of this interpreter; their results by id."""
    with tempfile.TemporaryDirectory(prefix="forkrun-") as tmp:
        jobs_path, results_path = os.path.join(tmp, "jobs.json"), os.path.join(tmp, "results.json")
        with open(jobs_path, "w") as fh:
            json.dump(jobs, fh)
        p = subprocess.run(
            [sys.executable, __file__, jobs_path, results_path],
            capture_output=True,
            text=True,
            env=env,
            timeout=TIMEOUT * len(jobs) + 120,
        )
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
        with open(results_path) as fh:
            return json.load(fh)


def _child(job: dict, out_fd: int, err_fd: int) -> int:
    import atexit
    import runpy
    import traceback

    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    os.chdir(job["cwd"])
    code = 0
    try:
        if "script" in job:
            script = os.path.abspath(job["script"])
            sys.argv = [script]
            sys.path[0] = os.path.dirname(script)
            runpy.run_path(script, run_name="__main__")
        else:
            sys.argv = ["-c"]
            sys.path[0] = ""
            exec(compile(job["code"], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return code


def run(job: dict) -> dict:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(job, out.fileno(), err.fileno())
            finally:
                os._exit(code)
        deadline = time.monotonic() + TIMEOUT
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
                break
            time.sleep(0.01)
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read().decode("utf-8", "replace"))
    return {"returncode": os.waitstatus_to_exitcode(status), "stdout": texts[0], "stderr": texts[1]}


def main(jobs_path: str, results_path: str):
    import torch  # noqa: F401  (once, for every child)

    with open(jobs_path) as fh:
        jobs = json.load(fh)
    results = {job["id"]: run(job) for job in jobs}
    with open(results_path, "w") as fh:
        json.dump(results, fh)


if __name__ == "__main__":
    main(*sys.argv[1:3])

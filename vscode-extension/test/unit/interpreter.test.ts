import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import {
    bundledEnv, chooseInterpreter, cliCommand, parseProbe, Probe, PROBE_SCRIPT, quote, resolveServer,
} from "../../src/interpreter";
import { ExtensionSettings, readSettings } from "../../src/settings";

const settings = (values: Record<string, unknown> = {}): ExtensionSettings =>
    readSettings({ get: <T>(key: string) => values[key] as T | undefined });
const probe = (over: Partial<Probe> = {}): Probe => ({ version: [3, 11], installed: true, executable: "/env/bin/python", ...over });

test("interpreter: the setting wins over the Python extension, which wins over python3", () => {
    assert.deepEqual(chooseInterpreter(settings({ interpreter: ["/a/python", "-X", "utf8"] }), ["/b/python"]),
        { command: ["/a/python", "-X", "utf8"], source: "gradaudit.interpreter" });
    assert.deepEqual(chooseInterpreter(settings(), ["/b/python"]), { command: ["/b/python"], source: "python extension" });
    assert.deepEqual(chooseInterpreter(settings(), undefined), { command: ["python3"], source: "python3 on PATH" });
    assert.deepEqual(chooseInterpreter(settings(), [""]), { command: ["python3"], source: "python3 on PATH" });
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

test("fromEnvironment without gradaudit installed: one message with the install command", () => {
    const r = resolveServer(settings({ importStrategy: "fromEnvironment" }), { command: ["/my env/bin/python"], source: "gradaudit.interpreter" },
        probe({ installed: false, executable: "/my env/bin/python" }), "/ext/bundled/libs");
    assert.equal(r.ok, false);
    if (!r.ok) {
        assert.equal(r.reason, "not-installed");
        assert.equal(r.installCommand, "'/my env/bin/python' -m pip install gradaudit");
        assert.match(r.message, /not installed in `\/my env\/bin\/python`/);
    }
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
        { command: "py", args: ["-X", "utf8", "-m", "gradaudit.analysis.cli"] });
});

test("quote leaves plain paths alone and quotes the rest for a POSIX shell", () => {
    assert.equal(quote("/usr/bin/python3"), "/usr/bin/python3");
    assert.equal(quote("/a b/it's"), "'/a b/it'\\''s'");
});

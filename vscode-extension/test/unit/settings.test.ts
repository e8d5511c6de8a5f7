import { strict as assert } from "node:assert";
import { test } from "node:test";
import { needsRestart, readSettings, serverSettings, substitute } from "../../src/settings";

const source = (values: Record<string, unknown>) => ({ get: <T>(key: string) => values[key] as T | undefined });

test("defaults when nothing is set", () => {
    const s = readSettings(source({}));
    assert.deepEqual(s, {
        importStrategy: "useBundled", interpreter: [], path: [], select: [], ignore: [], severity: {},
        codeLens: true, debounce: 150, extraPaths: [], docsUrl: "", timeBudget: 10, memoryBudget: 1536, budgets: {},
    });
});

test("server settings carry exactly the keys server/settings.py reads", () => {
    const s = readSettings(source({
        select: ["GA1", "GA2"], ignore: "GA105, GA106", severity: { suspicious: "Hint", GA101: "warning" },
        codeLens: false, debounce: 0, extraPaths: ["${workspaceFolder}/src"], importStrategy: "fromEnvironment",
        docsUrl: "https://example.org/{code}", timeBudget: 2.5, memoryBudget: 512, statementBudget: 30000,
        callDepth: 0,
    }), "/ws");
    assert.deepEqual(serverSettings(s), {
        select: ["GA1", "GA2"], ignore: ["GA105", "GA106"], severity: { suspicious: "hint", GA101: "warning" },
        codeLens: false, debounce: 0, extraPaths: ["/ws/src"], docsUrl: "https://example.org/{code}",
        timeBudget: 2.5, memoryBudget: 512, statementBudget: 30000, callDepth: 0,
    });
    assert.equal(s.importStrategy, "fromEnvironment");
});

test("wrong types fall back to defaults instead of reaching the server", () => {
    const s = readSettings(source({
        debounce: -5, codeLens: "yes", severity: { GA101: "fatal", GA102: "error" }, select: 7, importStrategy: "sideways",
        timeBudget: 0, memoryBudget: "lots", scriptBudget: -1, loopReserve: "many",
    }));
    assert.deepEqual(s.budgets, {});  // unset: the project's budgets apply
    assert.equal(s.debounce, 150);
    assert.equal(s.timeBudget, 10);
    assert.equal(s.memoryBudget, 1536);
    assert.equal(s.codeLens, true);
    assert.deepEqual(s.severity, { GA102: "error" });
    assert.deepEqual(s.select, []);
    assert.equal(s.importStrategy, "useBundled");
});

test("fractional debounce is rounded; blank entries dropped", () => {
    const s = readSettings(source({ debounce: 99.6, ignore: ["", " GA101 ", 3] }));
    assert.equal(s.debounce, 100);
    assert.deepEqual(s.ignore, ["GA101"]);
});

test("${workspaceFolder} and ~ in interpreter paths", () => {
    assert.equal(substitute("${workspaceFolder}/.venv/bin/python", "/p"), "/p/.venv/bin/python");
    assert.equal(substitute("~/envs/py/bin/python", undefined, "/home/u"), "/home/u/envs/py/bin/python");
    assert.equal(substitute("a~b", undefined, "/home/u"), "a~b");
    const s = readSettings(source({ interpreter: ["${workspaceFolder}/.venv/bin/python"] }), "/proj");
    assert.deepEqual(s.interpreter, ["/proj/.venv/bin/python"]);
});

test("only interpreter, path and import strategy need a new server process", () => {
    const base = readSettings(source({}));
    assert.equal(needsRestart(base, readSettings(source({ select: ["GA1"], debounce: 10, codeLens: false }))), false);
    assert.equal(needsRestart(base, readSettings(source({ interpreter: ["/usr/bin/python3"] }))), true);
    assert.equal(needsRestart(base, readSettings(source({ path: ["/x/gradaudit"] }))), true);
    assert.equal(needsRestart(base, readSettings(source({ importStrategy: "fromEnvironment" }))), true);
});

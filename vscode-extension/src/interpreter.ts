// Which command starts the language server. Pure decisions, with the slow parts (the Python
// extension's API, probing an interpreter) passed in, so the unit tests cover every branch.

import type { ExtensionSettings } from "./settings";

export interface ServerCommand {
    command: string;
    args: string[];
    /** Where the command came from, for the output channel and the status bar. */
    source: "gradaudit.path" | "gradaudit.interpreter" | "python extension" | "python3 on PATH" | "python on PATH";
    /** Set for useBundled: the folder of bundled libraries to put first on PYTHONPATH. */
    bundledLibs?: string;
}

export interface InterpreterChoice {
    command: string[];
    source: ServerCommand["source"];
}

/** The interpreter: the setting, else the Python extension's selection, else `python3` (`python`
 * on Windows, where `python3` is often only the Store's installer stub). */
export function chooseInterpreter(settings: ExtensionSettings, fromPythonExtension: string[] | undefined,
    platform: string = process.platform): InterpreterChoice {
    if (settings.interpreter.length > 0) {
        return { command: settings.interpreter, source: "gradaudit.interpreter" };
    }
    if (fromPythonExtension && fromPythonExtension.length > 0 && fromPythonExtension[0]) {
        return { command: fromPythonExtension, source: "python extension" };
    }
    return platform === "win32" ? { command: ["python"], source: "python on PATH" } : { command: ["python3"], source: "python3 on PATH" };
}

/** What one run of PROBE_SCRIPT reports about an interpreter. */
export interface Probe {
    version: [number, number];
    /** `gradaudit.server` importable from the environment (fromEnvironment). */
    installed: boolean;
    executable: string;
}

// Cheap: find_spec locates the package without importing pygls (about 1.5 s).
export const PROBE_SCRIPT = [
    "import importlib.util, json, sys",
    "try:",
    "    ok = importlib.util.find_spec('gradaudit.server') is not None",
    "except Exception:",
    "    ok = False",
    "print(json.dumps({'version': list(sys.version_info[:2]), 'installed': ok, 'executable': sys.executable}))",
].join("\n");

export function parseProbe(stdout: string): Probe | undefined {
    const line = stdout.trim().split(/\r?\n/).pop() ?? "";
    try {
        const data = JSON.parse(line);
        if (Array.isArray(data.version) && data.version.length === 2) {
            return { version: [Number(data.version[0]), Number(data.version[1])], installed: Boolean(data.installed), executable: String(data.executable ?? "") };
        }
    } catch {
        // not JSON: the caller reports the raw output
    }
    return undefined;
}

export const MIN_PYTHON: [number, number] = [3, 10];

/** `python -m gradaudit.server --check`: imports what the server needs without starting it and
 * prints one JSON line: {"ok": true, "version": ..., "python": ...} or {"ok": false, "error": ...}. */
export const CHECK_ARGS = ["-m", "gradaudit.server", "--check"];

/** What running CHECK_ARGS with the bundled libraries first on PYTHONPATH found. */
export interface BundleCheck { ok: boolean; error?: string }

export function parseBundleCheck(stdout: string, stderr: string = ""): BundleCheck {
    const line = stdout.trim().split(/\r?\n/).pop() ?? "";
    try {
        const data = JSON.parse(line);
        if (typeof data.ok === "boolean") {
            return data.ok ? { ok: true } : { ok: false, error: String(data.error ?? "unknown error") };
        }
    } catch {
        // not JSON: the interpreter failed before the check ran
    }
    const last = (stderr.trim().split(/\r?\n/).pop() ?? "").trim();
    return { ok: false, error: last || line || "the check printed nothing" };
}

export type Resolution =
    | { ok: true; server: ServerCommand; notice?: string }
    | { ok: false; reason: "no-python" | "old-python" | "not-installed" | "bundle-failed"; message: string; useBundled?: boolean };

/**
 * The server command for settings, an interpreter and what probing it found.
 * `bundledLibs` is the extension's own copy of gradaudit and its dependencies, if it ships one;
 * `bundle` what checking that copy with this interpreter found (undefined: not checked).
 */
export function resolveServer(
    settings: ExtensionSettings,
    interpreter: InterpreterChoice,
    probe: Probe | undefined,
    bundledLibs: string | undefined,
    bundle?: BundleCheck,
): Resolution {
    if (settings.path.length > 0) {
        return { ok: true, server: { command: settings.path[0], args: [...settings.path.slice(1), "server"], source: "gradaudit.path" } };
    }
    const [exe, ...pre] = interpreter.command;
    const shown = interpreter.command.join(" ");
    if (probe === undefined) {
        return {
            ok: false, reason: "no-python",
            message: `gradaudit could not run the Python interpreter \`${shown}\` (from ${interpreter.source}). Select an interpreter with Python >= ${MIN_PYTHON.join(".")}, or set gradaudit.interpreter.`,
        };
    }
    const version = probe.version.join(".");
    if (probe.version[0] < MIN_PYTHON[0] || (probe.version[0] === MIN_PYTHON[0] && probe.version[1] < MIN_PYTHON[1])) {
        return {
            ok: false, reason: "old-python",
            message: `gradaudit needs Python >= ${MIN_PYTHON.join(".")}; \`${shown}\` is Python ${version}. Select a newer interpreter, or set gradaudit.interpreter.`,
        };
    }
    const environment: ServerCommand = { command: exe, args: [...pre, "-m", "gradaudit.server"], source: interpreter.source };
    if (settings.importStrategy === "useBundled" && bundledLibs !== undefined) {
        if (bundle === undefined || bundle.ok) {
            return { ok: true, server: { ...environment, bundledLibs } };
        }
        const why = `The gradaudit bundled with the extension does not run with \`${shown}\` (Python ${version}): ${bundle.error}.`;
        if (probe.installed) {
            return { ok: true, server: environment, notice: `${why} Using the gradaudit installed in that interpreter instead.` };
        }
        return {
            ok: false, reason: "bundle-failed",
            message: `${why} Select another interpreter (CPython 3.10 to 3.13), or install gradaudit into this one from a clone or a wheel of gradaudit (\`${quote(probe.executable || exe)} -m pip install PATH\`).`,
        };
    }
    if (!probe.installed) {
        return {
            ok: false, reason: "not-installed",
            message: `gradaudit is not installed in \`${shown}\` (from ${interpreter.source}). Use the copy bundled with the extension (gradaudit.importStrategy: useBundled), or install gradaudit into that interpreter from a clone or a wheel of gradaudit (\`${quote(probe.executable || exe)} -m pip install PATH\`).`,
            useBundled: bundledLibs !== undefined,
        };
    }
    return { ok: true, server: environment };
}

/** Shell quoting for a command shown to the user to copy. */
export function quote(arg: string): string {
    return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** PYTHONPATH with the bundled libraries first, keeping the user's entries after them. */
export function bundledEnv(env: NodeJS.ProcessEnv, bundledLibs: string | undefined, delimiter: string): NodeJS.ProcessEnv {
    if (!bundledLibs) {
        return env;
    }
    const existing = env.PYTHONPATH ? delimiter + env.PYTHONPATH : "";
    // the user's site-packages may hold an older gradaudit: the bundled copy must win
    return { ...env, PYTHONPATH: bundledLibs + existing, PYTHONNOUSERSITE: "1" };
}

/** The command line tool (`gradaudit check`, `gradaudit audit`) run the same way as the server. */
export function cliCommand(server: ServerCommand): { command: string; args: string[] } {
    if (server.source === "gradaudit.path") {
        return { command: server.command, args: server.args.slice(0, -1) };
    }
    const m = server.args.lastIndexOf("-m");
    return { command: server.command, args: [...server.args.slice(0, m), "-m", "gradaudit.analysis.app.cli"] };
}

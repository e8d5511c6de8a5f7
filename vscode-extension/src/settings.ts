// The extension's settings, read once per change, and what of them goes to the server.
// Pure: no `vscode` import, so the unit tests run in plain Node.

export type ImportStrategy = "useBundled" | "fromEnvironment";
export type Severity = "error" | "warning" | "information" | "hint";

export interface ExtensionSettings {
    importStrategy: ImportStrategy;
    interpreter: string[];
    path: string[];
    select: string[];
    ignore: string[];
    severity: Record<string, Severity>;
    codeLens: boolean;
    debounce: number;
    extraPaths: string[];
    docsUrl: string;
    timeBudget: number;
    memoryBudget: number;
    /** The engine's statement budgets the user set (`statementBudget`...); unset ones are the project's. */
    budgets: Record<string, number>;
}

/** The engine's budgets as settings (analysis/check/budgets.py): sent only when set, so that the
 * project's `[tool.gradaudit]` budgets apply otherwise. */
export const BUDGETS: readonly string[] = [
    "statementBudget", "scriptBudget", "functionBudget", "initBudget", "moduleInitBudget", "loopReserve",
    "importBudget", "callDepth",
];

/** What the server reads (server/settings.py `Settings.from_client`), under the key `gradaudit`. */
export type ServerSettings = Pick<ExtensionSettings, "select" | "ignore" | "severity" | "codeLens" | "debounce" | "extraPaths" | "docsUrl" | "timeBudget" | "memoryBudget"> & Record<string, unknown>;

const SEVERITIES: ReadonlySet<string> = new Set(["error", "warning", "information", "hint"]);

/** Anything with a `get(key)`, like a `vscode.WorkspaceConfiguration`. */
export interface ConfigSource {
    get<T>(key: string): T | undefined;
}

function strings(value: unknown): string[] {
    if (typeof value === "string") {
        return value.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
    }
    if (Array.isArray(value)) {
        return value.filter((s): s is string => typeof s === "string").map((s) => s.trim()).filter((s) => s.length > 0);
    }
    return [];
}

/** Read the `gradaudit.*` settings, tolerating wrong types the way the server does (fall back to defaults). */
export function readSettings(config: ConfigSource, workspaceFolder?: string): ExtensionSettings {
    const strategy = config.get<string>("importStrategy");
    const severity: Record<string, Severity> = {};
    const rawSeverity = config.get<Record<string, unknown>>("severity");
    if (rawSeverity && typeof rawSeverity === "object" && !Array.isArray(rawSeverity)) {
        for (const [key, value] of Object.entries(rawSeverity)) {
            const v = String(value).toLowerCase();
            if (SEVERITIES.has(v)) {
                severity[key] = v as Severity;
            }
        }
    }
    const debounce = config.get<number>("debounce");
    const codeLens = config.get<boolean>("codeLens");
    const docsUrl = config.get<string>("docsUrl");
    const timeBudget = config.get<number>("timeBudget");
    const memoryBudget = config.get<number>("memoryBudget");
    const budgets: Record<string, number> = {};
    for (const name of BUDGETS) {
        const value = config.get<number>(name);
        if (typeof value === "number" && Number.isFinite(value) && value >= 0) {
            budgets[name] = Math.round(value);
        }
    }
    return {
        importStrategy: strategy === "fromEnvironment" ? "fromEnvironment" : "useBundled",
        interpreter: strings(config.get("interpreter")).map((s) => substitute(s, workspaceFolder)),
        path: strings(config.get("path")).map((s) => substitute(s, workspaceFolder)),
        select: strings(config.get("select")),
        ignore: strings(config.get("ignore")),
        severity,
        codeLens: typeof codeLens === "boolean" ? codeLens : true,
        debounce: typeof debounce === "number" && Number.isFinite(debounce) && debounce >= 0 ? Math.round(debounce) : 150,
        extraPaths: strings(config.get("extraPaths")).map((s) => substitute(s, workspaceFolder)),
        docsUrl: typeof docsUrl === "string" ? docsUrl : "",
        timeBudget: typeof timeBudget === "number" && Number.isFinite(timeBudget) && timeBudget > 0 ? timeBudget : 10,
        memoryBudget: typeof memoryBudget === "number" && Number.isFinite(memoryBudget) && memoryBudget > 0
            ? Math.round(memoryBudget) : 1536,
        budgets,
    };
}

/** `${workspaceFolder}` and `~` in paths, as users write them in settings.json. */
export function substitute(value: string, workspaceFolder?: string, home: string = process.env.HOME ?? ""): string {
    let out = value;
    if (workspaceFolder !== undefined) {
        out = out.split("${workspaceFolder}").join(workspaceFolder);
    }
    if (home && (out === "~" || out.startsWith("~/"))) {
        out = home + out.slice(1);
    }
    return out;
}

export function serverSettings(s: ExtensionSettings): ServerSettings {
    return {
        select: s.select,
        ignore: s.ignore,
        severity: s.severity,
        codeLens: s.codeLens,
        debounce: s.debounce,
        extraPaths: s.extraPaths,
        docsUrl: s.docsUrl,
        timeBudget: s.timeBudget,
        memoryBudget: s.memoryBudget,
        ...s.budgets,
    };
}

/** Settings whose change needs a new server process (the others are sent to the running one). */
export function needsRestart(before: ExtensionSettings, after: ExtensionSettings): boolean {
    return before.importStrategy !== after.importStrategy
        || before.interpreter.join("\0") !== after.interpreter.join("\0")
        || before.path.join("\0") !== after.path.join("\0");
}

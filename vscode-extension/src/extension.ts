// The VS Code client: finds an interpreter, starts `gradaudit server` over stdio, maps settings,
// and adds the commands, the status bar item and the graph view. All analysis is in the server.
import { execFile } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import {
    CloseAction, DidChangeConfigurationNotification, ErrorAction, ExecuteCommandRequest,
    LanguageClient, LanguageClientOptions, RevealOutputChannelOn, ServerOptions, State, TransportKind,
} from "vscode-languageclient/node";
import { UNPACK_SCRIPT, unpackBundle } from "./bundle";
import { cellPlaces, graphHtml, InCell, TrainingGraph } from "./graph";
import {
    BundleCheck, bundledEnv, CHECK_ARGS, chooseInterpreter, cliCommand, parseBundleCheck, parseProbe, Probe, PROBE_SCRIPT,
    resolveServer, ServerCommand,
} from "./interpreter";
import { onInterpreterChange, selectedInterpreter } from "./python";
import { RestartBudget } from "./restarts";
import { ExtensionSettings, needsRestart, readSettings, serverSettings } from "./settings";

const SERVER_GRAPH_COMMAND = "gradaudit.showTrainingGraph";
// Python files, and the Python cells of notebooks (synced as notebook documents: the server
// analyses a notebook's cells as one program and answers in each cell)
const PYTHON_SELECTOR = [
    { scheme: "file", language: "python" },
    { scheme: "untitled", language: "python" },
    { scheme: "vscode-notebook-cell", language: "python" },
];

type Status = "starting" | "running" | "stopped" | "error";

class Gradaudit implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private server: ServerCommand | undefined;
    private settings: ExtensionSettings;
    private readonly restarts = new RestartBudget();
    private readonly notified = new Set<string>();
    private readonly panels = new Map<string, vscode.WebviewPanel>();
    /** For each notebook's graph panel: the cell of each line the view can reveal. */
    private readonly cells = new Map<string, Map<number, InCell>>();
    private readonly disposables: vscode.Disposable[] = [];
    private pending: Promise<void> = Promise.resolve();
    readonly output: vscode.LogOutputChannel;
    private readonly status: vscode.StatusBarItem;

    constructor(private readonly context: vscode.ExtensionContext) {
        this.output = vscode.window.createOutputChannel("gradaudit", { log: true });
        this.status = vscode.window.createStatusBarItem("gradaudit.status", vscode.StatusBarAlignment.Right, 100);
        this.status.name = "gradaudit";
        this.status.command = "gradaudit.showOutput";
        this.settings = this.readSettings();
    }

    dispose(): void {
        this.disposables.forEach((d) => d.dispose());
        this.panels.forEach((p) => p.dispose());
        this.status.dispose();
        this.output.dispose();
    }

    private folder(): vscode.WorkspaceFolder | undefined {
        const doc = vscode.window.activeTextEditor?.document;
        return (doc && vscode.workspace.getWorkspaceFolder(doc.uri)) ?? vscode.workspace.workspaceFolders?.[0];
    }

    private readSettings(): ExtensionSettings {
        const folder = this.folder();
        return readSettings(vscode.workspace.getConfiguration("gradaudit", folder?.uri), folder?.uri.fsPath);
    }

    /** The bundled gradaudit's folder, unpacked by `python` on first use (bundle.ts); undefined
     * if the extension ships none or it cannot be unpacked (said in the output). */
    private async bundledLibs(python: string[]): Promise<string | undefined> {
        const unzip = async (archive: string, destination: string) => {
            const { err, stdout, stderr } = await this.run(python, ["-c", UNPACK_SCRIPT, archive, destination]);
            if (err) {
                throw new Error(`${err.message}${stderr ? `\n${stderr}` : ""}`);
            }
            return stdout;
        };
        try {
            return await unpackBundle(this.context.extensionPath, this.context.globalStorageUri.fsPath, unzip);
        } catch (e) {
            this.output.warn(`could not unpack the bundled gradaudit with ${python.join(" ")}: ${e instanceof Error ? e.message : String(e)}`);
            return undefined;
        }
    }

    private setStatus(state: Status, detail: string): void {
        const icon = { starting: "$(loading~spin)", running: "$(pass)", stopped: "$(circle-slash)", error: "$(error)" }[state];
        this.status.text = `${icon} gradaudit`;
        this.status.tooltip = `gradaudit: ${detail}\nClick to show the output.`;
        this.status.backgroundColor = state === "error" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
        this.status.accessibilityInformation = { label: `gradaudit ${state}: ${detail}` };
        this.status.show();
    }

    /** One notification per distinct problem until the user restarts or changes settings. */
    private async notifyOnce(key: string, message: string, level: "error" | "warning" = "error", useBundled = false): Promise<void> {
        if (this.notified.has(key)) {
            return;
        }
        this.notified.add(key);
        const actions = useBundled ? ["Use the Bundled gradaudit", "Show Output"] : ["Show Output"];
        const show = level === "error" ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
        const choice = await show(message, ...actions);
        if (choice === "Use the Bundled gradaudit") {
            await vscode.workspace.getConfiguration("gradaudit").update("importStrategy", "useBundled", vscode.ConfigurationTarget.Global);
        } else if (choice === "Show Output") {
            this.output.show(true);
        }
    }

    private run(command: string[], args: string[], env?: NodeJS.ProcessEnv): Promise<{ err: Error | null; stdout: string; stderr: string }> {
        const [exe, ...pre] = command;
        return new Promise((resolve) => {
            execFile(exe, [...pre, ...args], { timeout: 30_000, env }, (err, stdout, stderr) => resolve({ err, stdout, stderr }));
        });
    }

    private async probe(command: string[]): Promise<Probe | undefined> {
        const { err, stdout, stderr } = await this.run(command, ["-c", PROBE_SCRIPT]);
        if (err) {
            this.output.warn(`could not run ${command.join(" ")}: ${err.message}${stderr ? `\n${stderr}` : ""}`);
            return undefined;
        }
        return parseProbe(stdout);
    }

    /** Whether the bundled gradaudit imports with this interpreter (a check, not a server start). */
    private async checkBundle(command: string[], libs: string): Promise<BundleCheck> {
        const { stdout, stderr } = await this.run(command, CHECK_ARGS, bundledEnv(process.env, libs, path.delimiter));
        const check = parseBundleCheck(stdout, stderr);
        if (!check.ok) {
            this.output.warn(`the bundled gradaudit does not run with ${command.join(" ")}: ${check.error}${stderr ? `\n${stderr}` : ""}`);
        }
        return check;
    }

    /** Serialised: a restart asked for while starting waits for that start. */
    private queue(task: () => Promise<void>): Promise<void> {
        this.pending = this.pending.then(task, task).catch((e) => this.output.error(String(e)));
        return this.pending;
    }

    start(): Promise<void> {
        return this.queue(() => this.doStart());
    }

    restart(reason: string): Promise<void> {
        return this.queue(async () => {
            this.output.info(`restarting the server: ${reason}`);
            await this.doStop();
            this.notified.clear();
            this.restarts.reset();
            await this.doStart();
        });
    }

    stop(): Promise<void> {
        return this.queue(() => this.doStop());
    }

    private async doStart(): Promise<void> {
        this.settings = this.readSettings();
        this.setStatus("starting", "starting the server");
        const folder = this.folder();
        const interpreter = chooseInterpreter(this.settings, this.settings.path.length ? undefined : await selectedInterpreter(folder?.uri));
        const viaPython = this.settings.path.length === 0;
        const bundled = viaPython ? await this.bundledLibs(interpreter.command) : undefined;
        const checkBundle = viaPython && bundled !== undefined && this.settings.importStrategy === "useBundled";
        const [probe, bundle] = await Promise.all([
            viaPython ? this.probe(interpreter.command) : Promise.resolve(undefined),
            checkBundle ? this.checkBundle(interpreter.command, bundled!) : Promise.resolve(undefined),
        ]);
        const resolution = resolveServer(this.settings, interpreter, probe, bundled, bundle);
        if (!resolution.ok) {
            this.output.error(resolution.message);
            this.setStatus("error", resolution.message);
            void this.notifyOnce(resolution.reason, resolution.message, "error", resolution.useBundled);
            return;
        }
        if (resolution.notice) {
            this.output.warn(resolution.notice);
            void this.notifyOnce("bundle-fallback", resolution.notice, "warning");
        }
        const server = resolution.server;
        this.server = server;
        const how = server.bundledLibs ? "bundled gradaudit" : "gradaudit from the environment";
        this.output.info(`server: ${server.command} ${server.args.join(" ")} (${server.source}; ${how})`);

        const serverOptions: ServerOptions = {
            command: server.command,
            args: server.args,
            transport: TransportKind.stdio,
            options: { cwd: folder?.uri.fsPath, env: bundledEnv(process.env, server.bundledLibs, path.delimiter) },
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: PYTHON_SELECTOR,
            outputChannel: this.output,
            traceOutputChannel: this.output,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            diagnosticCollectionName: "gradaudit",
            // interpreter: the environment whose installed libraries (transformers, timm...) are analysed
            initializationOptions: { gradaudit: serverSettings(this.settings), interpreter: interpreter.command[0] },
            synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.py") },
            errorHandler: {
                error: () => ({ action: ErrorAction.Continue }),
                closed: () => {
                    if (this.restarts.allow(Date.now())) {
                        this.output.warn("the server stopped; starting it again");
                        return { action: CloseAction.Restart };
                    }
                    const message = "The gradaudit server stopped 4 times in 3 minutes and will not be started again. See the output, then run 'gradaudit: Restart Server'.";
                    this.setStatus("error", "the server keeps stopping");
                    void this.notifyOnce("crash-loop", message);
                    return { action: CloseAction.DoNotRestart, handled: true };
                },
            },
            middleware: {
                // the code lens above each backward() runs the server's graph command: draw its result
                executeCommand: async (command, args, next) => {
                    const result = await next(command, args);
                    if (command === SERVER_GRAPH_COMMAND && result && typeof result === "object") {
                        this.showGraphPanel(result as TrainingGraph);
                    }
                    return result;
                },
            },
        };
        const client = new LanguageClient("gradaudit", "gradaudit", serverOptions, clientOptions);
        client.onDidChangeState((e) => {
            if (e.newState === State.Running) {
                this.setStatus("running", `running (${server.source}: ${server.command}; ${how})`);
            } else if (e.newState === State.Starting) {
                this.setStatus("starting", "starting the server");
            } else if (this.client === client) {
                this.setStatus("stopped", "the server is not running");
            }
        });
        this.client = client;
        try {
            await client.start();
        } catch (e) {
            const message = `The gradaudit server did not start: ${e instanceof Error ? e.message : String(e)}`;
            this.output.error(message);
            this.setStatus("error", message);
            void this.notifyOnce("start-failed", message);
        }
    }

    private async doStop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        if (client) {
            try {
                await client.stop(5000);
            } catch (e) {
                this.output.warn(`stopping the server: ${String(e)}`);
            }
        }
        this.setStatus("stopped", "the server is not running");
    }

    /** Settings changed: a new interpreter needs a new process; the rest goes to the running server. */
    async configurationChanged(): Promise<void> {
        const before = this.settings;
        const after = this.readSettings();
        if (needsRestart(before, after) || this.client === undefined || !this.client.isRunning()) {
            await this.restart("settings changed");
            return;
        }
        this.settings = after;
        await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: { gradaudit: serverSettings(after) } });
        this.output.info("settings sent to the server");
    }

    // ---------------------------------------------------------------- training-step graph

    async showGraph(uri?: vscode.Uri): Promise<void> {
        // a notebook's cell (or the notebook editor itself): the notebook's graph
        const target = uri ?? vscode.window.activeNotebookEditor?.notebook.uri ?? vscode.window.activeTextEditor?.document.uri;
        if (!target) {
            void vscode.window.showInformationMessage("gradaudit: open a Python file to see its training-step graph.");
            return;
        }
        const graph = await this.requestGraph(target.toString());
        if (graph) {
            this.showGraphPanel(graph);
        }
    }

    private async requestGraph(uri: string): Promise<TrainingGraph | undefined> {
        if (!this.client || !this.client.isRunning()) {
            void vscode.window.showWarningMessage("gradaudit: the server is not running; see 'gradaudit: Show Output'.");
            return undefined;
        }
        const result = await this.client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_GRAPH_COMMAND, arguments: [uri] });
        return result && typeof result === "object" ? (result as TrainingGraph) : undefined;
    }

    /** Draw a graph in its panel; `reveal` brings the panel to the front (not when only refreshing). */
    private showGraphPanel(graph: TrainingGraph, reveal = true): void {
        const uri = graph.uri;
        if (!uri) {
            return;
        }
        const name = path.basename(vscode.Uri.parse(uri).path);
        let panel = this.panels.get(uri);
        if (!panel) {
            panel = vscode.window.createWebviewPanel("gradaudit.graph", `Training-Step Graph: ${name}`,
                { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, { enableScripts: true, localResourceRoots: [] });
            this.panels.set(uri, panel);
            const created = panel;
            created.onDidDispose(() => {
                this.panels.delete(uri);
                this.cells.delete(uri);
            });
            created.webview.onDidReceiveMessage(async (msg) => {
                if (msg && msg.type === "reveal" && Number.isInteger(msg.line) && msg.line > 0) {
                    // in a notebook the line is one of the cells analysed as one source: show its cell
                    const inCell = this.cells.get(uri)?.get(msg.line);
                    const target = inCell?.cellUri ? vscode.Uri.parse(inCell.cellUri) : vscode.Uri.parse(uri);
                    const doc = await vscode.workspace.openTextDocument(target);
                    const pos = new vscode.Position((inCell?.cellLine ?? msg.line) - 1, 0);
                    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, selection: new vscode.Range(pos, pos) });
                }
            });
        } else if (reveal) {
            panel.reveal(undefined, true);
        }
        this.cells.set(uri, cellPlaces(graph));
        panel.webview.html = graphHtml(graph, { nonce: nonce(), cspSource: panel.webview.cspSource, title: `Training steps of ${name}` });
    }

    /** Keep open graph views current: redraw when the document's diagnostics change. */
    refreshGraphs(uris: readonly vscode.Uri[]): void {
        // a notebook's diagnostics change in its cells: its graph is the notebook's
        const keys = new Set(uris.map((uri) => notebookOf(uri)?.uri.toString() ?? uri.toString()));
        for (const key of keys) {
            if (this.panels.has(key)) {
                void this.requestGraph(key).then((g) => g && this.panels.has(key) && this.showGraphPanel(g, false));
            }
        }
    }

    // ---------------------------------------------------------------- audit

    async auditWorkspace(): Promise<void> {
        const folder = this.folder();
        if (!folder) {
            void vscode.window.showInformationMessage("gradaudit: open a folder to audit.");
            return;
        }
        if (!this.server) {
            void vscode.window.showWarningMessage("gradaudit: the server could not be started; see 'gradaudit: Show Output'.");
            return;
        }
        const cli = cliCommand(this.server);
        const env = bundledEnv(process.env, this.server.bundledLibs, path.delimiter);
        const run = (args: string[]) => new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
            execFile(cli.command, [...cli.args, ...args], { env, cwd: folder.uri.fsPath, maxBuffer: 64 * 1024 * 1024 },
                (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 2) : 0, stdout, stderr }));
        });
        // the report lands in the extension's storage (not in the user's project) and opens in the
        // Markdown preview, whose preview script draws its Mermaid graphs
        const dir = this.context.storageUri ?? this.context.globalStorageUri;
        await vscode.workspace.fs.createDirectory(dir);
        const report = vscode.Uri.joinPath(dir, `audit-${folder.name.replace(/[^\w.-]+/g, "_")}.md`);
        fs.rmSync(report.fsPath, { force: true });
        await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `gradaudit: auditing ${folder.name}` }, async () => {
            const audit = await run(["audit", ".", "-o", report.fsPath, "--format", "md"]);
            if (!fs.existsSync(report.fsPath)) {
                const missing = /invalid choice: 'audit'/.test(audit.stderr);
                const message = missing
                    ? "This gradaudit has no 'audit' command: update the gradaudit in the selected interpreter, or use the bundled one (gradaudit.importStrategy: useBundled)."
                    : "gradaudit audit failed; see 'gradaudit: Show Output'.";
                this.output.error(`gradaudit audit (exit ${audit.code}):\n${audit.stderr}`);
                void vscode.window.showErrorMessage(message);
                return;
            }
            if (audit.stderr.trim()) {
                (audit.code === 2 ? this.output.warn : this.output.info).call(this.output, audit.stderr.trim());
            }
            await vscode.commands.executeCommand("markdown.showPreview", report);
        });
    }
}

/** The open notebook holding a cell document (none for a file's document). */
function notebookOf(uri: vscode.Uri): vscode.NotebookDocument | undefined {
    if (uri.scheme !== "vscode-notebook-cell") {
        return undefined;
    }
    const key = uri.toString();
    return vscode.workspace.notebookDocuments.find((nb) => nb.getCells().some((c) => c.document.uri.toString() === key));
}

function nonce(): string {
    const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let out = "";
    for (let i = 0; i < 32; i++) {
        out += chars.charAt(Math.floor(Math.random() * chars.length));
    }
    return out;
}

let extension: Gradaudit | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const ext = new Gradaudit(context);
    extension = ext;
    context.subscriptions.push(
        ext,
        vscode.commands.registerCommand("gradaudit.restart", () => ext.restart("asked by the user")),
        vscode.commands.registerCommand("gradaudit.showGraph", (uri?: vscode.Uri) => ext.showGraph(uri instanceof vscode.Uri ? uri : undefined)),
        vscode.commands.registerCommand("gradaudit.auditWorkspace", () => ext.auditWorkspace()),
        vscode.commands.registerCommand("gradaudit.showOutput", () => ext.output.show()),
        vscode.workspace.onDidChangeConfiguration((e) => {
            if (e.affectsConfiguration("gradaudit")) {
                void ext.configurationChanged();
            }
        }),
        vscode.languages.onDidChangeDiagnostics((e) => ext.refreshGraphs(e.uris)),
    );
    const pythonListener = await onInterpreterChange(() => {
        if (!readSettings(vscode.workspace.getConfiguration("gradaudit")).interpreter.length) {
            void ext.restart("the Python extension's interpreter changed");
        }
    });
    if (pythonListener) {
        context.subscriptions.push(pythonListener);
    }
    await ext.start();
}

export async function deactivate(): Promise<void> {
    await extension?.stop();
}

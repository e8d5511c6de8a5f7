// The interpreter selected in the Python extension (ms-python.python), through its public API.
import * as vscode from "vscode";

interface EnvironmentPath { id: string; path: string }
interface ResolvedEnvironment { executable: { uri?: vscode.Uri } }
interface PythonApi {
    environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
        resolveEnvironment(env: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
        onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
    };
    settings?: {
        getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
    };
}

const PYTHON_EXTENSION = "ms-python.python";

async function api(): Promise<PythonApi | undefined> {
    const ext = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION);
    if (!ext) {
        return undefined;
    }
    try {
        return ext.isActive ? ext.exports : await ext.activate();
    } catch {
        return undefined;
    }
}

/** The selected interpreter as a command (`[path]`), or undefined without the Python extension. */
export async function selectedInterpreter(resource?: vscode.Uri): Promise<string[] | undefined> {
    const py = await api();
    if (!py) {
        return undefined;
    }
    try {
        if (py.environments) {
            const env = await py.environments.resolveEnvironment(py.environments.getActiveEnvironmentPath(resource));
            const path = env?.executable.uri?.fsPath;
            if (path) {
                return [path];
            }
        }
        const exec = py.settings?.getExecutionDetails(resource).execCommand;
        return exec && exec.length ? exec : undefined;
    } catch {
        return undefined;
    }
}

/** Called when the user selects another interpreter in the Python extension. */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
    const py = await api();
    return py?.environments?.onDidChangeActiveEnvironmentPath(() => listener());
}

/** The interpreter selected in the Python extension (ms-python.python), when it is installed. */
import * as vscode from 'vscode';
import { errorText } from './pages';

const PYTHON_EXTENSION_ID = 'ms-python.python';
const PYTHON_EXTENSION_TIMEOUT_MS = 10000;

/** The part of the Python extension's API that gives the selected interpreter. */
interface PythonExtensionApi {
  ready?: Promise<void>;
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(
      environment: { path: string } | string,
    ): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
  settings?: { getExecutionDetails(resource?: vscode.Uri): { execCommand?: string[] } | undefined };
}

function withTimeout<T>(promise: PromiseLike<T>, ms: number): Promise<T | undefined> {
  return Promise.race([
    Promise.resolve(promise),
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms)),
  ]);
}

/** The interpreter selected in the Python extension for the workspace, when that extension is installed. */
export async function pythonExtensionInterpreter(log: vscode.LogOutputChannel): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!extension) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await withTimeout(extension.activate(), PYTHON_EXTENSION_TIMEOUT_MS);
    if (api?.ready) {
      await withTimeout(api.ready, PYTHON_EXTENSION_TIMEOUT_MS);
    }
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    const active = api?.environments?.getActiveEnvironmentPath(resource);
    if (active) {
      const resolved = await withTimeout(api!.environments!.resolveEnvironment(active), PYTHON_EXTENSION_TIMEOUT_MS);
      const executable = resolved?.executable?.uri?.fsPath;
      if (executable) {
        return executable;
      }
    }
    const command = api?.settings?.getExecutionDetails(resource)?.execCommand;
    return command && command.length === 1 ? command[0] : undefined;
  } catch (error) {
    log.warn(`The Python extension did not give its interpreter: ${errorText(error)}`);
    return undefined;
  }
}

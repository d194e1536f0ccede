/**
 * The language client for a found server: how it is started, which documents it gets, the
 * settings it is answered with, and the server's save code action routed to the extension.
 */
import * as vscode from 'vscode';
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
  type ConfigurationParams,
} from 'vscode-languageclient/node';
import { serveArgs, type ServerCandidate } from './discovery';
import { SECTION, configurationFor, toServerSettings, type ServerSettings } from './settings';

/** Saves a page through the runtime, as the palette command does; `overwrite` asks first. */
export type SavePageHandler = (uri: vscode.Uri, overwrite: boolean) => Promise<unknown>;

/** What the client asks of the extension while it runs. */
export interface ClientHooks {
  /** Read on every code action, so it may be set after the client starts. */
  savePage?: SavePageHandler;
}

function currentSettings(scope?: vscode.ConfigurationScope): ServerSettings {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  return toServerSettings((key) => config.get(key));
}

function pageUriFromArgs(args: unknown[]): vscode.Uri | undefined {
  const first = args[0];
  if (first !== null && typeof first === 'object' && typeof (first as { uri?: unknown }).uri === 'string') {
    try {
      return vscode.Uri.parse((first as { uri: string }).uri);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Answers `workspace/configuration` with the mapped settings, per scope. */
function configuration(
  params: ConfigurationParams,
  token: vscode.CancellationToken,
  next: (params: ConfigurationParams, token: vscode.CancellationToken) => unknown,
): unknown[] | Promise<unknown[]> {
  const answers: unknown[] = [];
  let needDefault = false;
  for (const item of params.items) {
    let scope: vscode.Uri | undefined;
    try {
      scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
    } catch {
      scope = undefined;
    }
    const value = configurationFor(item.section, currentSettings(scope));
    if (value === undefined) {
      needDefault = true;
    }
    answers.push(value);
  }
  if (!needDefault) {
    return answers;
  }
  // Sections the extension does not map are answered by VS Code as usual.
  return Promise.resolve(next(params, token)).then((defaults) => {
    const fallback: unknown[] = Array.isArray(defaults) ? defaults : [];
    return answers.map((value, i) => (value === undefined ? (fallback[i] ?? null) : value));
  });
}

/** A client, not yet started, for `echoes-lsp serve` run by the candidate in `cwd`. */
export function createClient(
  candidate: ServerCandidate,
  cwd: string,
  log: vscode.LogOutputChannel,
  hooks: ClientHooks,
): LanguageClient {
  const serverOptions: ServerOptions = {
    command: candidate.command,
    args: serveArgs(candidate),
    transport: TransportKind.stdio,
    options: { cwd, env: { ...process.env } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'markdown' }],
    synchronize: { configurationSection: SECTION },
    initializationOptions: () => currentSettings(),
    outputChannel: log,
    middleware: {
      workspace: {
        configuration: (params: ConfigurationParams, token, next) => configuration(params, token, next),
      },
      executeCommand: async (command, args, next) => {
        // The server's "Save through EchoesVault" code action: run it through the same flow
        // as the palette command, so the buffer is reloaded and EV701 is handled.
        const savePage = hooks.savePage;
        if (command === 'echoes.savePage' && savePage) {
          const uri = pageUriFromArgs(args);
          if (uri) {
            // An overwrite (`confirmOverwrite: "ask"` or `true` in a code action) is always
            // confirmed in a dialog here first.
            const overwrite = (args[0] as { confirmOverwrite?: unknown }).confirmOverwrite;
            return savePage(uri, overwrite === true || overwrite === 'ask');
          }
        }
        return next(command, args);
      },
    },
  };
  return new LanguageClient('echoes', 'EchoesVault', serverOptions, clientOptions);
}

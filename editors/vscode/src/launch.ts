/**
 * Finds the server to run on this machine: reads the server settings, asks the Python extension
 * and the file system, and probes each candidate of discovery.ts in order with `--version`.
 */
import { execFile } from 'node:child_process';
import { accessSync, existsSync, constants as fsConstants, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  discoverServer,
  failureReport,
  interpreterSearch,
  notFoundMessage,
  parseImportStrategy,
  serverCandidates,
  versionArgs,
  type Bundle,
  type DiscoverySettings,
  type ProbeResult,
  type ServerCandidate,
} from './discovery';
import { pythonExtensionInterpreter } from './python';
import { SECTION } from './settings';

const PROBE_TIMEOUT_MS = 20000;

/** A server that answered its probe, and the directory it runs in; or the message that says none did. */
export type Launch =
  | { found: true; candidate: ServerCandidate; version: string; cwd: string }
  | { found: false; notFound: string };

function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) {
      return false;
    }
    accessSync(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The directory the server runs in, and is probed in: the first workspace folder (as the language
 * client would pick), else the home directory. Probing elsewhere could find a different
 * `python -m echoes_lsp`.
 */
function serverCwd(): string {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  return folder ? folder.uri.fsPath : os.homedir();
}

/** The server bundled into the `.vsix` at packaging time (`bundled/libs`), if this build has it. */
function findBundle(context: vscode.ExtensionContext): Bundle | undefined {
  const launcher = context.asAbsolutePath(path.join('bundled', 'tool', 'launch.py'));
  const libs = context.asAbsolutePath(path.join('bundled', 'libs', 'echoes_lsp', '__main__.py'));
  return existsSync(launcher) && existsSync(libs) ? { launcher } : undefined;
}

function probe(candidate: ServerCandidate, cwd: string): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(
      candidate.command,
      versionArgs(candidate),
      { timeout: PROBE_TIMEOUT_MS, windowsHide: true, cwd },
      (error, stdout, stderr) => {
        if (error) {
          const detail = String(stderr || '').trim().split('\n').pop() || error.message;
          resolve({ ok: false, reason: detail });
        } else {
          resolve({ ok: true, version: String(stdout).trim() || 'unknown version' });
        }
      },
    );
  });
}

/** The first candidate that answers; every failed one is logged as a warning. */
export async function findServer(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): Promise<Launch> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const settings: DiscoverySettings = {
    serverPath: config.get<string>('server.path') ?? '',
    serverPython: config.get<string>('server.python') ?? '',
    importStrategy: parseImportStrategy(config.get('server.importStrategy')),
  };
  const env = {
    path: process.env.PATH,
    platform: process.platform,
    pathExt: process.env.PATHEXT,
    home: os.homedir(),
    isExecutable,
  };
  const bundle = findBundle(context);
  if (settings.importStrategy === 'useBundled' && !bundle) {
    log.warn('This build of the extension has no bundled server (bundled/libs); looking in the environment.');
  }
  const interpreters = interpreterSearch(
    settings,
    {
      pythonExtension: await pythonExtensionInterpreter(log),
      workspaceFolders: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
    },
    env,
  );
  const candidates = serverCandidates(settings, interpreters, bundle, env);
  const cwd = serverCwd();
  const found = await discoverServer(candidates, (candidate) => probe(candidate, cwd));
  for (const line of failureReport(found.failures)) {
    log.warn(`Server candidate failed:${line.slice(3)}`);
  }
  if (!found.found) {
    return {
      found: false,
      notFound: notFoundMessage(found.failures, settings.importStrategy === 'useBundled' && bundle !== undefined),
    };
  }
  return { found: true, candidate: found.candidate, version: found.version, cwd };
}

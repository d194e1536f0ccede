/**
 * Finding the echoes-lsp language server. Pure logic: the caller injects how a file is checked
 * and how a candidate is probed, so the order and the messages can be unit-tested.
 *
 * Order: the `echoes.server.path` setting, then `echoes-lsp` on PATH, then
 * `<echoes.server.python> -m echoes_lsp`.
 */

export type CandidateSource = 'setting' | 'path' | 'python';

export interface ServerCandidate {
  source: CandidateSource;
  /** Executable to run. */
  command: string;
  /** Arguments before the subcommand (`serve`, `--version`). */
  baseArgs: string[];
  /** Human-readable description, for logs and errors. */
  label: string;
}

export interface DiscoverySettings {
  /** `echoes.server.path`; empty when unset. */
  serverPath: string;
  /** `echoes.server.python`; `python3` when unset. */
  serverPython: string;
}

export interface PathEnvironment {
  /** The PATH variable. */
  path: string | undefined;
  /** `process.platform`. */
  platform: string;
  /** PATHEXT on Windows. */
  pathExt?: string;
  /** Home directory, for a leading `~` in the setting. */
  home?: string;
  /** Whether a file exists and may be executed. */
  isExecutable: (file: string) => boolean;
}

export const SERVER_EXECUTABLE = 'echoes-lsp';
export const DEFAULT_PYTHON = 'python3';
export const INSTALL_COMMANDS = ['pipx install echoes-lsp', 'pip install echoes-lsp'];

function joinPath(dir: string, name: string, platform: string): string {
  const sep = platform === 'win32' ? '\\' : '/';
  return dir.endsWith('/') || dir.endsWith('\\') ? dir + name : dir + sep + name;
}

/** Resolves a bare executable name on PATH, as a shell would. */
export function findOnPath(name: string, env: PathEnvironment): string | undefined {
  if (!env.path) {
    return undefined;
  }
  const delimiter = env.platform === 'win32' ? ';' : ':';
  const extensions =
    env.platform === 'win32'
      ? ['', ...(env.pathExt ?? '.COM;.EXE;.BAT;.CMD').split(';').filter((e) => e.length > 0)]
      : [''];
  for (const dir of env.path.split(delimiter)) {
    if (dir.length === 0) {
      continue;
    }
    for (const ext of extensions) {
      const file = joinPath(dir, name + ext, env.platform);
      if (env.isExecutable(file)) {
        return file;
      }
    }
  }
  return undefined;
}

/** Expands a leading `~` in a configured path. */
export function expandHome(file: string, home: string | undefined): string {
  if (home && (file === '~' || file.startsWith('~/') || file.startsWith('~\\'))) {
    return home + file.slice(1);
  }
  return file;
}

/** The candidates to try, in order. A candidate that cannot exist is left out. */
export function serverCandidates(settings: DiscoverySettings, env: PathEnvironment): ServerCandidate[] {
  const candidates: ServerCandidate[] = [];
  const configured = settings.serverPath.trim();
  if (configured.length > 0) {
    const command = expandHome(configured, env.home);
    candidates.push({
      source: 'setting',
      command,
      baseArgs: [],
      label: `echoes.server.path (${command})`,
    });
  }
  const onPath = findOnPath(SERVER_EXECUTABLE, env);
  if (onPath !== undefined) {
    candidates.push({
      source: 'path',
      command: onPath,
      baseArgs: [],
      label: `${SERVER_EXECUTABLE} on PATH (${onPath})`,
    });
  }
  const python = settings.serverPython.trim() || DEFAULT_PYTHON;
  candidates.push({
    source: 'python',
    command: expandHome(python, env.home),
    baseArgs: ['-m', 'echoes_lsp'],
    label: `${python} -m echoes_lsp`,
  });
  return candidates;
}

export function serveArgs(candidate: ServerCandidate): string[] {
  return [...candidate.baseArgs, 'serve'];
}

export function versionArgs(candidate: ServerCandidate): string[] {
  return [...candidate.baseArgs, '--version'];
}

export type ProbeResult = { ok: true; version: string } | { ok: false; reason: string };

export interface Failure {
  candidate: ServerCandidate;
  reason: string;
}

export type Discovery =
  | { found: true; candidate: ServerCandidate; version: string; failures: Failure[] }
  | { found: false; failures: Failure[] };

/** Probes the candidates in order and returns the first that works. */
export async function discoverServer(
  candidates: ServerCandidate[],
  probe: (candidate: ServerCandidate) => Promise<ProbeResult>,
): Promise<Discovery> {
  const failures: Failure[] = [];
  for (const candidate of candidates) {
    let result: ProbeResult;
    try {
      result = await probe(candidate);
    } catch (error) {
      result = { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
    if (result.ok) {
      return { found: true, candidate, version: result.version, failures };
    }
    failures.push({ candidate, reason: result.reason });
  }
  return { found: false, failures };
}

/** The message shown when no candidate works. */
export function notFoundMessage(): string {
  return (
    'EchoesVault: the echoes-lsp language server was not found. ' +
    `Install it with \`${INSTALL_COMMANDS[0]}\` (or \`${INSTALL_COMMANDS[1]}\`), ` +
    'or set echoes.server.path to the echoes-lsp executable.'
  );
}

/** One line per failed attempt, for the output channel. */
export function failureReport(failures: Failure[]): string[] {
  return failures.map((f) => `  - ${f.candidate.label}: ${f.reason}`);
}

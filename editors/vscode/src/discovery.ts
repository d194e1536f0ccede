/**
 * Finding the echoes-lsp language server. Pure logic: the caller injects how a file is checked
 * and how a candidate is probed, so the order and the messages can be unit-tested.
 *
 * Order:
 *  1. `echoes.server.path`, when set;
 *  2. `echoes.server.importStrategy: useBundled` (default), when the extension carries its bundle:
 *     the bundled server (`bundled/libs`) run by the first Python >= 3.9 of the interpreter search;
 *     `fromEnvironment`: `echoes-lsp` on PATH, then `<python> -m echoes_lsp` for each interpreter.
 *
 * Interpreter search: `echoes.server.python`, the Python extension's selected interpreter, the
 * workspace's `.venv`, then `python3` and `python` on the extension host's PATH.
 */

export type CandidateSource = 'setting' | 'bundled' | 'path' | 'python';
export type ImportStrategy = 'useBundled' | 'fromEnvironment';
/** Where an interpreter of the search came from. */
export type InterpreterOrigin = 'echoes.server.python' | 'Python extension' | 'workspace .venv' | 'PATH';

export interface ServerCandidate {
  source: CandidateSource;
  /** Executable to run. */
  command: string;
  /** Arguments before the subcommand (`serve`, `--version`). */
  baseArgs: string[];
  /** Human-readable description, for logs and errors. */
  label: string;
}

export interface Interpreter {
  command: string;
  origin: InterpreterOrigin;
}

export interface DiscoverySettings {
  /** `echoes.server.path`; empty when unset. */
  serverPath: string;
  /** `echoes.server.python`; empty when unset. */
  serverPython: string;
  /** `echoes.server.importStrategy`. */
  importStrategy: ImportStrategy;
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

export interface InterpreterSources {
  /** The Python extension's selected interpreter for the workspace, when that extension is installed. */
  pythonExtension?: string;
  /** The workspace folders, whose `.venv` is tried. */
  workspaceFolders: string[];
}

/** The bundled server: its launcher script, when the extension carries `bundled/libs`. */
export interface Bundle {
  launcher: string;
}

export const SERVER_EXECUTABLE = 'echoes-lsp';
export const MINIMUM_PYTHON = '3.9';

export function parseImportStrategy(value: unknown): ImportStrategy {
  return value === 'fromEnvironment' ? 'fromEnvironment' : 'useBundled';
}

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

/** The interpreters to try, in order, without duplicates. One that cannot exist is left out. */
export function interpreterSearch(
  settings: DiscoverySettings,
  sources: InterpreterSources,
  env: PathEnvironment,
): Interpreter[] {
  const found: Interpreter[] = [];
  const add = (command: string | undefined, origin: InterpreterOrigin) => {
    const trimmed = command?.trim();
    if (trimmed && !found.some((i) => i.command === trimmed)) {
      found.push({ command: trimmed, origin });
    }
  };
  add(expandHome(settings.serverPython.trim(), env.home), 'echoes.server.python');
  add(sources.pythonExtension, 'Python extension');
  for (const folder of sources.workspaceFolders) {
    const venv =
      env.platform === 'win32'
        ? joinPath(joinPath(joinPath(folder, '.venv', env.platform), 'Scripts', env.platform), 'python.exe', env.platform)
        : joinPath(joinPath(joinPath(folder, '.venv', env.platform), 'bin', env.platform), 'python', env.platform);
    if (env.isExecutable(venv)) {
      add(venv, 'workspace .venv');
    }
  }
  add(findOnPath('python3', env), 'PATH');
  add(findOnPath('python', env), 'PATH');
  return found;
}

/** The candidates to try, in order. */
export function serverCandidates(
  settings: DiscoverySettings,
  interpreters: Interpreter[],
  bundle: Bundle | undefined,
  env: PathEnvironment,
): ServerCandidate[] {
  const candidates: ServerCandidate[] = [];
  const configured = settings.serverPath.trim();
  if (configured.length > 0) {
    const command = expandHome(configured, env.home);
    candidates.push({ source: 'setting', command, baseArgs: [], label: `echoes.server.path (${command})` });
  }
  if (settings.importStrategy === 'useBundled' && bundle) {
    for (const python of interpreters) {
      candidates.push({
        source: 'bundled',
        command: python.command,
        // -I: the bundle, not a module of the same name in the workspace or the user's site.
        baseArgs: ['-I', bundle.launcher],
        label: `the bundled echoes-lsp with ${python.command} (${python.origin})`,
      });
    }
    return candidates;
  }
  const onPath = findOnPath(SERVER_EXECUTABLE, env);
  if (onPath !== undefined) {
    candidates.push({ source: 'path', command: onPath, baseArgs: [], label: `${SERVER_EXECUTABLE} on PATH (${onPath})` });
  }
  for (const python of interpreters) {
    candidates.push({
      source: 'python',
      command: python.command,
      baseArgs: ['-m', 'echoes_lsp'],
      label: `${python.command} -m echoes_lsp (${python.origin})`,
    });
  }
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

/** The command that installs the server into an environment, today (the package is not on PyPI yet). */
export const ENVIRONMENT_INSTALL =
  'python3 -m pip install ./echoes_lsp-<version>-py3-none-any.whl (built by `make dist` in a checkout of echoes-lsp)';

/**
 * The message shown, once, when no candidate works: what was tried and the exact fix.
 * `bundled`: whether the bundled server was tried (then what is missing is a Python).
 */
export function notFoundMessage(failures: Failure[] = [], bundled = true): string {
  const tried = failures.length > 0 ? ` Tried: ${failures.map((f) => `${f.candidate.command} (${f.reason})`).join('; ')}.` : '';
  if (bundled) {
    return (
      `EchoesVault: no Python ${MINIMUM_PYTHON} or newer was found to run the bundled echoes-lsp language server.${tried} ` +
      `Fix: install Python ${MINIMUM_PYTHON}+ (for example \`sudo apt install python3\`, or from python.org) and run ` +
      '"EchoesVault: Restart language server", or set echoes.server.python to the full path of a Python 3.9+ interpreter.'
    );
  }
  return (
    `EchoesVault: echoes-lsp was not found in the environment (echoes.server.importStrategy is fromEnvironment).${tried} ` +
    `Fix: set echoes.server.importStrategy to useBundled, or install the server: ${ENVIRONMENT_INSTALL}, ` +
    'or set echoes.server.path to the echoes-lsp executable.'
  );
}

/** One line per failed attempt, for the output channel. */
export function failureReport(failures: Failure[]): string[] {
  return failures.map((f) => `  - ${f.candidate.label}: ${f.reason}`);
}

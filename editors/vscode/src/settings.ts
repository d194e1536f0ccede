/**
 * Mapping VS Code settings (section `echoes`) to the settings object the server reads from
 * initializationOptions and `workspace/configuration`. Pure: the caller passes a reader.
 */

export const SEVERITIES = ['error', 'warning', 'information', 'hint', 'off'] as const;
export type Severity = (typeof SEVERITIES)[number];
export type SaveMode = 'off' | 'ask' | 'always';

export interface ServerSettings {
  /** `python` is `""` for the server's own Python: the server keeps unsent keys, so it is always sent. */
  runtime: { python: string; timeout: number };
  diagnostics: { debounce: number; severity: Record<string, Severity>; maxPerDocument: number };
  secrets: { enabled: boolean };
  exclude: string[];
  agent: string;
  watch: { pollInterval: number };
  index: { hydrateOnSave: boolean };
  inlayHints: { blockText: boolean; deprecated: boolean };
}

export const DEFAULTS = {
  runtimeTimeout: 30,
  debounce: 150,
  maxPerDocument: 1000,
  secretsEnabled: true,
  agent: 'echoes-lsp',
  pollInterval: 2,
  hydrateOnSave: true,
  inlayHints: true,
} as const;

/** The section of VS Code's settings that holds every setting of the extension. */
export const SECTION = 'echoes';

/** Keys whose change needs the server to be restarted (the rest are sent as configuration). */
export const RESTART_KEYS = ['echoes.server.path', 'echoes.server.python', 'echoes.server.importStrategy'];

/** The extension's own settings; every other `echoes.*` setting is the server's and is sent to it. */
export const EDITOR_KEYS = [...RESTART_KEYS, 'echoes.saveThroughRuntime', 'echoes.trace.server'];

/** Reads one setting relative to the `echoes` section, e.g. `runtime.timeout`. */
export type SettingReader = (key: string) => unknown;

function nonNegativeNumber(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

function nonNegativeInteger(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

function positiveNumber(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

export function severityMap(value: unknown): Record<string, Severity> {
  const result: Record<string, Severity> = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return result;
  }
  for (const [code, level] of Object.entries(value as Record<string, unknown>)) {
    const normalizedCode = code.trim().toUpperCase();
    const normalizedLevel = typeof level === 'string' ? level.trim().toLowerCase() : '';
    if (/^EV\d{3}$/.test(normalizedCode) && (SEVERITIES as readonly string[]).includes(normalizedLevel)) {
      result[normalizedCode] = normalizedLevel as Severity;
    }
  }
  return result;
}

/** The server's settings, with invalid values replaced by the defaults. */
export function toServerSettings(read: SettingReader): ServerSettings {
  const python = read('runtime.python');
  const exclude = read('exclude');
  const agent = read('agent');
  const secrets = read('secrets.enabled');
  const hydrateOnSave = read('index.hydrateOnSave');
  const blockText = read('inlayHints.blockText');
  const deprecated = read('inlayHints.deprecated');
  const runtime: ServerSettings['runtime'] = {
    python: typeof python === 'string' ? python.trim() : '',
    timeout: positiveNumber(read('runtime.timeout'), DEFAULTS.runtimeTimeout),
  };
  return {
    runtime,
    diagnostics: {
      debounce: nonNegativeNumber(read('diagnostics.debounce'), DEFAULTS.debounce),
      severity: severityMap(read('diagnostics.severity')),
      maxPerDocument: nonNegativeInteger(read('diagnostics.maxPerDocument'), DEFAULTS.maxPerDocument),
    },
    secrets: { enabled: typeof secrets === 'boolean' ? secrets : DEFAULTS.secretsEnabled },
    exclude: Array.isArray(exclude) ? exclude.filter((g): g is string => typeof g === 'string' && g.length > 0) : [],
    agent: typeof agent === 'string' && agent.trim().length > 0 ? agent.trim() : DEFAULTS.agent,
    watch: { pollInterval: nonNegativeNumber(read('watch.pollInterval'), DEFAULTS.pollInterval) },
    index: { hydrateOnSave: typeof hydrateOnSave === 'boolean' ? hydrateOnSave : DEFAULTS.hydrateOnSave },
    inlayHints: {
      blockText: typeof blockText === 'boolean' ? blockText : DEFAULTS.inlayHints,
      deprecated: typeof deprecated === 'boolean' ? deprecated : DEFAULTS.inlayHints,
    },
  };
}

export function saveMode(value: unknown): SaveMode {
  return value === 'ask' || value === 'always' ? value : 'off';
}

/**
 * Answers a `workspace/configuration` item. The server asks for section `echoes` (the whole
 * object) or a part of it such as `echoes.runtime`; anything else is left to VS Code.
 */
export function configurationFor(section: string | undefined, settings: ServerSettings): unknown | undefined {
  if (section === undefined) {
    return undefined;
  }
  if (section === 'echoes') {
    return settings;
  }
  if (!section.startsWith('echoes.')) {
    return undefined;
  }
  let value: unknown = settings;
  for (const part of section.slice('echoes.'.length).split('.')) {
    if (value === null || typeof value !== 'object' || !(part in (value as object))) {
      return undefined;
    }
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

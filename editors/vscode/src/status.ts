/**
 * Vault health for the status bar, from `echoes/statusChanged`. Pure.
 *
 * Two counts, each shown with what it counts (docs/concepts.md): problems in open files (the
 * diagnostics of the pages open in the editor, as `echoes-lsp check` reports them) and vault files
 * that need attention (invalid, conflicted, unreadable, stray or colliding files: the integrity).
 */

export type Integrity = 'healthy' | 'attention' | 'read-only' | 'uninitialized';

export interface VaultStatus {
  workspace: string;
  integrity: Integrity;
  issueCount: number;
  /** Diagnostics shown for the workspace's open documents (0 from servers that do not send it). */
  openProblemCount: number;
  pages: number;
}

export type ClientState = 'starting' | 'running' | 'stopped' | 'not-found';

export interface StatusBarView {
  text: string;
  tooltip: string;
  /** `warning` and `error` map to the status bar's warning and error colours. */
  tone: 'normal' | 'warning' | 'error';
}

const INTEGRITIES: readonly string[] = ['healthy', 'attention', 'read-only', 'uninitialized'];

/** Validates a notification's params; returns undefined for anything malformed. */
export function parseStatus(params: unknown): VaultStatus | undefined {
  if (params === null || typeof params !== 'object') {
    return undefined;
  }
  const p = params as Record<string, unknown>;
  if (typeof p.workspace !== 'string' || typeof p.integrity !== 'string' || !INTEGRITIES.includes(p.integrity)) {
    return undefined;
  }
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);
  return {
    workspace: p.workspace,
    integrity: p.integrity as Integrity,
    issueCount: count(p.issueCount),
    openProblemCount: count(p.openProblemCount),
    pages: count(p.pages),
  };
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function statusBarView(state: ClientState, status: VaultStatus | undefined): StatusBarView {
  if (state === 'not-found') {
    return {
      text: '$(error) EchoesVault',
      tooltip: 'EchoesVault: the echoes-lsp language server was not found. Click for details.',
      tone: 'error',
    };
  }
  if (state === 'stopped') {
    return {
      text: '$(debug-disconnect) EchoesVault',
      tooltip: 'EchoesVault: the language server is not running.',
      tone: 'warning',
    };
  }
  if (state === 'starting' || status === undefined) {
    return { text: '$(sync~spin) EchoesVault', tooltip: 'EchoesVault: checking the vault…', tone: 'normal' };
  }
  const pages = plural(status.pages, 'page', 'pages');
  const problems = `${plural(status.openProblemCount, 'problem', 'problems')} in open files`;
  const files = `${plural(status.issueCount, 'vault file needs', 'vault files need')} attention`;
  const click = ' Click to show the status card.';
  const counted =
    ' Problems: the diagnostics of the pages open in the editor (`echoes-lsp check` reports the same for every file).' +
    ' Vault files: invalid, conflicted, unreadable, stray or colliding files; the status card also counts the index, adapters, local state and Git.';
  const shown = status.openProblemCount > 0 ? `: ${problems} · ` : ': ';
  switch (status.integrity) {
    case 'healthy':
      return {
        text: status.openProblemCount > 0 ? `$(check) EchoesVault${shown}vault healthy` : '$(check) EchoesVault',
        tooltip: `EchoesVault: ${problems}, vault healthy, ${pages}.${counted}${click}`,
        tone: 'normal',
      };
    case 'attention':
      return {
        text: `$(warning) EchoesVault${shown}${files}`,
        tooltip: `EchoesVault: ${problems}, ${files}, ${pages}.${counted}${click}`,
        tone: 'warning',
      };
    case 'read-only':
      return {
        text: `$(lock) EchoesVault: read-only`,
        tooltip: `EchoesVault is read-only: its marker is missing or its protocol version is not supported.${click}`,
        tone: 'warning',
      };
    case 'uninitialized':
      return {
        text: `$(circle-slash) EchoesVault: not initialized`,
        tooltip: 'No EchoesVault in this workspace. Run "EchoesVault: Initialize" to create one.',
        tone: 'normal',
      };
  }
}

/**
 * Picks the status to show: the one of the workspace that contains the active document, else the
 * first one known. Workspace URIs are compared as strings, after trimming a final slash.
 */
export function pickStatus(
  statuses: ReadonlyMap<string, VaultStatus>,
  activeDocumentUri: string | undefined,
): VaultStatus | undefined {
  const trim = (u: string) => (u.endsWith('/') ? u.slice(0, -1) : u);
  if (activeDocumentUri !== undefined) {
    let best: VaultStatus | undefined;
    for (const status of statuses.values()) {
      const root = trim(status.workspace);
      if (activeDocumentUri === root || activeDocumentUri.startsWith(root + '/')) {
        if (best === undefined || root.length > trim(best.workspace).length) {
          best = status;
        }
      }
    }
    if (best !== undefined) {
      return best;
    }
  }
  return statuses.values().next().value;
}

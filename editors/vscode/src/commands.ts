/**
 * The palette commands that ask the server for a vault operation (initialize, restore context,
 * status, search, append to the scratchpad, rebuild the index, end the session) and show its answer.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { baseName, errorText, searchHits } from './pages';
import type { ServerHost } from './server';
import type { ViewProvider } from './views';

function folderFor(uri: vscode.Uri | undefined): vscode.WorkspaceFolder | undefined {
  if (uri) {
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    if (folder) {
      return folder;
    }
  }
  return vscode.workspace.workspaceFolders?.[0];
}

/** `{ workspace: uri }` for the active document's folder, or `{}` to let the server choose. */
function workspaceArg(): Record<string, unknown> {
  const folder = folderFor(vscode.window.activeTextEditor?.document.uri);
  return folder ? { workspace: folder.uri.toString() } : {};
}

function markdownOf(result: unknown): string {
  if (result !== null && typeof result === 'object') {
    const r = result as Record<string, unknown>;
    if (typeof r.markdown === 'string') {
      return r.markdown;
    }
  }
  return '```json\n' + JSON.stringify(result, null, 2) + '\n```\n';
}

/** The palette commands. */
export class Commands {
  constructor(
    private readonly host: ServerHost,
    private readonly log: vscode.LogOutputChannel,
    private readonly views: ViewProvider,
  ) {}

  private async run(title: string, command: string, arg: Record<string, unknown>): Promise<unknown | undefined> {
    try {
      return await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `EchoesVault: ${title}` },
        () => this.host.execute(command, arg),
      );
    } catch (error) {
      const text = errorText(error);
      this.log.error(`${command} failed: ${text}`);
      if (this.host.isNotFoundError(text)) {
        this.host.showNotFound();
      } else {
        void vscode.window.showErrorMessage(`EchoesVault: ${title} failed: ${text}`);
      }
      return undefined;
    }
  }

  async initialize(): Promise<void> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length === 0) {
      void vscode.window.showErrorMessage('EchoesVault: open a folder before initializing a vault.');
      return;
    }
    const folder =
      folders.length === 1
        ? folders[0]
        : await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Folder to initialize EchoesVault in' });
    if (!folder) {
      return;
    }
    const result = await this.run('Initialize', 'echoes.init', { workspace: folder.uri.toString() });
    if (result !== undefined) {
      const vault = (result as { vault?: unknown }).vault;
      const choice = await vscode.window.showInformationMessage(
        `EchoesVault initialized${typeof vault === 'string' ? `: ${vault}` : ''}.`,
        'Show status',
      );
      if (choice === 'Show status') {
        await this.showStatus();
      }
    }
  }

  async restoreContext(): Promise<void> {
    const result = await this.run('Restore context', 'echoes.start', workspaceArg());
    if (result !== undefined) {
      await this.views.preview('EchoesVault context.md', markdownOf(result));
    }
  }

  async showStatus(): Promise<void> {
    const result = await this.run('Show status', 'echoes.status', { ...workspaceArg(), format: 'card' });
    if (result !== undefined) {
      await this.views.preview('EchoesVault status.md', markdownOf(result));
    }
  }

  async search(): Promise<void> {
    const query = await vscode.window.showInputBox({
      title: 'EchoesVault: Search',
      prompt: 'Literal, case-insensitive text to find in the knowledge pages',
      ignoreFocusOut: true,
      validateInput: (value) => (value.trim().length === 0 ? 'Type some text to search for.' : undefined),
    });
    if (query === undefined || query.trim().length === 0) {
      return;
    }
    const arg = workspaceArg();
    const result = await this.run('Search', 'echoes.search', { ...arg, query });
    if (result === undefined) {
      return;
    }
    const { hits, truncated } = searchHits(result);
    if (hits.length === 0) {
      void vscode.window.showInformationMessage(`EchoesVault: no page contains "${query}".`);
      return;
    }
    const root = typeof arg.workspace === 'string' ? vscode.Uri.parse(arg.workspace) : folderFor(undefined)?.uri;
    const items = hits.map((hit) => ({
      label: hit.text.length > 0 ? hit.text : '(empty line)',
      description: `${hit.file}:${hit.line}`,
      hit,
    }));
    const picked = await vscode.window.showQuickPick(items, {
      title: `EchoesVault: ${hits.length}${truncated ? '+' : ''} matches for "${query}"`,
      matchOnDescription: true,
    });
    if (!picked) {
      return;
    }
    const target = path.isAbsolute(picked.hit.file)
      ? vscode.Uri.file(picked.hit.file)
      : root
        ? vscode.Uri.joinPath(root, ...picked.hit.file.split(/[\\/]/))
        : vscode.Uri.file(picked.hit.file);
    const line = picked.hit.line - 1;
    await vscode.window.showTextDocument(target, { selection: new vscode.Range(line, 0, line, 0), preview: false });
  }

  async append(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection).trim() : '';
    const entry =
      selected.length > 0
        ? selected
        : await vscode.window.showInputBox({
            title: 'EchoesVault: Append to scratchpad',
            prompt: 'A concise, factual entry for the daily scratchpad',
            ignoreFocusOut: true,
            placeHolder: '- Confirmed that …',
            validateInput: (value) => (value.trim().length === 0 ? 'The entry cannot be empty.' : undefined),
          });
    if (entry === undefined || entry.trim().length === 0) {
      return;
    }
    const result = await this.run('Append to scratchpad', 'echoes.append', { ...workspaceArg(), entry });
    if (result !== undefined) {
      const file = (result as { dailyLog?: unknown }).dailyLog;
      const choice = await vscode.window.showInformationMessage(
        `EchoesVault: appended to the scratchpad${typeof file === 'string' ? ` (${baseName(file)})` : ''}.`,
        ...(typeof file === 'string' ? ['Open'] : []),
      );
      if (choice === 'Open' && typeof file === 'string') {
        const root = folderFor(undefined)?.uri;
        const uri = path.isAbsolute(file) || !root ? vscode.Uri.file(file) : vscode.Uri.joinPath(root, file);
        await vscode.window.showTextDocument(uri);
      }
    }
  }

  async rebuildIndex(): Promise<void> {
    const result = await this.run('Rebuild index', 'echoes.rebuildIndex', workspaceArg());
    if (result !== undefined) {
      const r = result as Record<string, unknown>;
      const pages = typeof r.pages === 'number' ? r.pages : typeof r.pageCount === 'number' ? r.pageCount : undefined;
      void vscode.window.showInformationMessage(
        `EchoesVault: index rebuilt${pages !== undefined ? ` (${pages} pages)` : ''}.`,
      );
    }
  }

  async endSession(): Promise<void> {
    const summary = await vscode.window.showInputBox({
      title: 'EchoesVault: End session',
      prompt: 'Daily summary: outcomes, verified decisions, blockers and next steps',
      placeHolder: '- Completed …  - Remaining: …',
      ignoreFocusOut: true,
      validateInput: (value) => (value.trim().length === 0 ? 'The daily summary cannot be empty.' : undefined),
    });
    if (summary === undefined || summary.trim().length === 0) {
      return;
    }
    const confirm = await vscode.window.showWarningMessage(
      'End the EchoesVault session?',
      {
        modal: true,
        detail:
          'This writes the summary as a final session entry in the daily log and marks the memory as saved. ' +
          'Do it only when you mean to finish the session.',
      },
      'End session',
    );
    if (confirm !== 'End session') {
      return;
    }
    const result = await this.run('End session', 'echoes.endSession', {
      ...workspaceArg(),
      dailySummary: summary,
      confirmExplicitUserEnd: true,
    });
    if (result !== undefined) {
      void vscode.window.showInformationMessage('EchoesVault: session ended and memory saved.');
    }
  }
}

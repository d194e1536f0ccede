import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { baseName, errorText, isStaleError, isVaultPage, searchHits, withoutByteOrderMark } from './pages';
import { ServerHost } from './server';
import { RESTART_KEYS, SECTION, saveMode } from './settings';
import { DISK_SCHEME, DiskProvider, VIEW_SCHEME, ViewProvider } from './views';

/** VS Code stops waiting for a save participant after 1.5 s; stay below that. */
const PARTICIPANT_BUDGET_MS = 1200;

let host: ServerHost | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('EchoesVault', { log: true });
  const views = new ViewProvider();
  const disk = new DiskProvider();
  const statusItem = vscode.window.createStatusBarItem('echoes.status', vscode.StatusBarAlignment.Left, 10);
  statusItem.name = 'EchoesVault';
  statusItem.command = 'echoes.showStatus';
  host = new ServerHost(context, log, statusItem);
  const h = host;
  const ui = new Commands(h, log, views);

  context.subscriptions.push(
    log,
    statusItem,
    vscode.workspace.registerTextDocumentContentProvider(VIEW_SCHEME, views),
    vscode.workspace.registerTextDocumentContentProvider(DISK_SCHEME, disk),
    vscode.commands.registerCommand('echoes.initialize', () => ui.initialize()),
    vscode.commands.registerCommand('echoes.restoreContext', () => ui.restoreContext()),
    vscode.commands.registerCommand('echoes.showStatus', () => ui.showStatus()),
    vscode.commands.registerCommand('echoes.searchVault', () => ui.search()),
    vscode.commands.registerCommand('echoes.appendScratchpad', () => ui.append()),
    vscode.commands.registerCommand('echoes.saveThroughVault', (arg?: unknown) => ui.saveCommand(arg)),
    vscode.commands.registerCommand('echoes.rebuildVaultIndex', () => ui.rebuildIndex()),
    vscode.commands.registerCommand('echoes.endVaultSession', () => ui.endSession()),
    vscode.commands.registerCommand('echoes.restartServer', () => h.restart()),
    vscode.workspace.onWillSaveTextDocument((event) => ui.onWillSave(event)),
    vscode.window.onDidChangeActiveTextEditor(() => h.renderStatus()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (RESTART_KEYS.some((key) => event.affectsConfiguration(key))) {
        log.info('Server setting changed; restarting the language server.');
        void h.restart();
      }
    }),
    { dispose: () => void h.stop() },
  );
  h.renderStatus();
  void h.ensure();
}

export async function deactivate(): Promise<void> {
  await host?.stop();
  host = undefined;
}

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

type SaveOutcome = 'saved' | 'refused' | 'stale' | 'no-server';

/** The palette commands. */
class Commands {
  /** Pages whose next VS Code save was chosen as an ordinary save ("ask" mode). */
  private readonly bypass = new Set<string>();

  constructor(
    private readonly host: ServerHost,
    private readonly log: vscode.LogOutputChannel,
    private readonly views: ViewProvider,
  ) {
    host.savePage = async (uri, overwrite) => {
      const document = await vscode.workspace.openTextDocument(uri);
      return overwrite ? this.confirmOverwrite(document) : this.save(document, false);
    };
  }

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

  /** The palette command, the save key binding (`{ fromSaveKey: true }`) and the code action. */
  async saveCommand(arg?: unknown): Promise<SaveOutcome | undefined> {
    const fromSaveKey =
      arg !== null && typeof arg === 'object' && (arg as { fromSaveKey?: unknown }).fromSaveKey === true;
    if (fromSaveKey) {
      this.log.debug('Save key on a page: saving through EchoesVault.');
    }
    const document = vscode.window.activeTextEditor?.document;
    if (!document) {
      void vscode.window.showErrorMessage('EchoesVault: open a page to save it through EchoesVault.');
      return undefined;
    }
    if (document.uri.scheme !== 'file' || !isVaultPage(document.uri.fsPath)) {
      if (fromSaveKey) {
        await vscode.commands.executeCommand('workbench.action.files.save');
        return undefined;
      }
      void vscode.window.showErrorMessage(
        'EchoesVault: only pages in EchoesVault/pages/ can be saved through EchoesVault.',
      );
      return undefined;
    }
    if (fromSaveKey) {
      const mode = saveMode(vscode.workspace.getConfiguration(SECTION, document.uri).get('saveThroughRuntime'));
      if (mode === 'off') {
        await vscode.commands.executeCommand('workbench.action.files.save');
        return undefined;
      }
      if (mode === 'ask') {
        const choice = await vscode.window.showInformationMessage(
          `Save ${baseName(document.uri.fsPath)} through EchoesVault?`,
          {
            modal: true,
            detail:
              'Through EchoesVault: the runtime writes the page only if it did not change on disk since you opened it, ' +
              'validates it and regenerates the index. Ordinary save: VS Code writes the file.',
          },
          'Through EchoesVault',
          'Ordinary save',
        );
        if (choice === 'Ordinary save') {
          this.bypass.add(document.uri.toString());
          await vscode.commands.executeCommand('workbench.action.files.save');
          return undefined;
        }
        if (choice !== 'Through EchoesVault') {
          return undefined;
        }
      }
    }
    return this.save(document, false);
  }

  /**
   * Sends the buffer to the runtime (hash-checked upsert). On success the buffer is reloaded from
   * disk so it is clean. On EV701 nothing was written; the user may compare or overwrite.
   */
  async save(document: vscode.TextDocument, confirmOverwrite: boolean): Promise<SaveOutcome> {
    const name = baseName(document.uri.fsPath);
    let result: unknown;
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `EchoesVault: saving ${name}` },
        () =>
          this.host.execute('echoes.savePage', {
            uri: document.uri.toString(),
            ...(confirmOverwrite ? { confirmOverwrite: true } : {}),
          }),
      );
    } catch (error) {
      const text = errorText(error);
      this.log.error(`echoes.savePage ${name}: ${text}`);
      if (this.host.isNotFoundError(text)) {
        this.host.showNotFound();
        return 'no-server';
      }
      if (isStaleError(text)) {
        void this.offerStaleChoices(document, text);
        return 'stale';
      }
      void vscode.window.showErrorMessage(`EchoesVault refused to save ${name}: ${text}`);
      return 'refused';
    }
    await this.reloadFromDisk(document);
    const r = (result ?? {}) as Record<string, unknown>;
    const action = typeof r.action === 'string' ? r.action : 'saved';
    const index = r.indexChanged === true ? '; index regenerated' : '';
    vscode.window.setStatusBarMessage(`$(check) EchoesVault: ${name} ${action}${index}`, 5000);
    this.log.info(`Saved ${name} through EchoesVault (${action}${index}).`);
    return 'saved';
  }

  private async offerStaleChoices(document: vscode.TextDocument, text: string): Promise<void> {
    const name = baseName(document.uri.fsPath);
    const choice = await vscode.window.showErrorMessage(
      `EchoesVault refused to save ${name}: it changed on disk since it was opened (EV701). Nothing was written.`,
      { detail: text },
      'Show disk version',
      'Overwrite…',
    );
    if (choice === 'Show disk version') {
      await this.showDiskDiff(document);
    } else if (choice === 'Overwrite…') {
      await this.confirmOverwrite(document);
    }
  }

  async showDiskDiff(document: vscode.TextDocument): Promise<void> {
    const name = baseName(document.uri.fsPath);
    const left = document.uri.with({ scheme: DISK_SCHEME, query: String(Date.now()) });
    await vscode.commands.executeCommand('vscode.diff', left, document.uri, `${name} (on disk) ↔ ${name} (editor)`);
  }

  async confirmOverwrite(document: vscode.TextDocument): Promise<SaveOutcome | undefined> {
    const name = baseName(document.uri.fsPath);
    const answer = await vscode.window.showWarningMessage(
      `Overwrite ${name} on disk with the editor's version?`,
      {
        modal: true,
        detail: 'The changes made to the file on disk since you opened it will be lost.',
      },
      'Overwrite',
    );
    if (answer !== 'Overwrite') {
      return undefined;
    }
    return this.save(document, true);
  }

  /**
   * Reverts the document's editor so the buffer equals what the runtime wrote. VS Code reverts
   * only the active editor, so the document is shown first (and, with `restoreFocus`, the editor
   * that was active before is shown again afterwards).
   */
  private async reloadFromDisk(document: vscode.TextDocument, restoreFocus = false): Promise<void> {
    const previous = vscode.window.activeTextEditor;
    if (previous?.document !== document) {
      const visible = vscode.window.visibleTextEditors.find((e) => e.document === document);
      await vscode.window.showTextDocument(document, {
        preview: false,
        preserveFocus: false,
        viewColumn: visible?.viewColumn,
      });
    }
    await vscode.commands.executeCommand('workbench.action.files.revert');
    if (restoreFocus && previous && previous.document !== document) {
      await vscode.window.showTextDocument(previous.document, { viewColumn: previous.viewColumn, preview: false });
    }
  }

  /**
   * `echoes.saveThroughRuntime: always`: an explicit save that does not come through the save key
   * (File > Save, Save All, a save by another extension) is sent through the runtime before VS Code
   * writes. VS Code cannot be stopped from writing afterwards, so:
   *  - accepted: the runtime wrote the buffer; the document is reloaded from that file, and VS Code
   *    then writes the identical bytes;
   *  - refused (EV701, invalid page, …): the buffer is replaced by the disk content, so VS Code
   *    writes back what is already on disk, and the editor's version is kept for the user to
   *    restore (one Undo, or "Restore my edits");
   *  - no answer within the participant's time budget: as refused, and the real outcome is
   *    reported when the runtime answers (an accepted save then shows up as a change on disk).
   * Auto saves are not intercepted: they are ordinary VS Code saves (see the VS Code section of the README).
   */
  onWillSave(event: vscode.TextDocumentWillSaveEvent): void {
    const document = event.document;
    if (document.uri.scheme !== 'file' || !isVaultPage(document.uri.fsPath)) {
      return;
    }
    const key = document.uri.toString();
    if (this.bypass.delete(key)) {
      return;
    }
    const mode = saveMode(vscode.workspace.getConfiguration(SECTION, document.uri).get('saveThroughRuntime'));
    if (mode !== 'always') {
      return;
    }
    if (event.reason !== vscode.TextDocumentSaveReason.Manual) {
      this.warnAboutAutoSave();
      return;
    }
    event.waitUntil(this.participate(document));
  }

  private autoSaveWarned = false;

  private warnAboutAutoSave(): void {
    if (this.autoSaveWarned) {
      return;
    }
    this.autoSaveWarned = true;
    this.log.warn('Auto save wrote a page without the EchoesVault runtime (auto saves are not intercepted).');
    void vscode.window
      .showWarningMessage(
        'EchoesVault: auto save writes pages directly, without the hash-checked runtime. ' +
          'echoes.saveThroughRuntime only applies to explicit saves.',
        'Turn off auto save for Markdown',
      )
      .then(async (choice) => {
        if (choice) {
          await vscode.workspace
            .getConfiguration('files', { languageId: 'markdown' })
            .update('autoSave', 'off', vscode.ConfigurationTarget.Global, true);
        }
      });
  }

  private async participate(document: vscode.TextDocument): Promise<vscode.TextEdit[]> {
    const name = baseName(document.uri.fsPath);
    const mine = document.getText();
    type Answer = { ok: true } | { ok: false; text: string };
    const request: Promise<Answer> = this.host
      .execute('echoes.savePage', { uri: document.uri.toString() })
      .then(
        (): Answer => ({ ok: true }),
        (error: unknown): Answer => ({ ok: false, text: errorText(error) }),
      );
    const first = await Promise.race([
      request,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), PARTICIPANT_BUDGET_MS)),
    ]);
    this.log.info(
      `Save participant for ${name}: ${first === undefined ? 'no answer yet' : first.ok ? 'saved through the runtime' : first.text}`,
    );
    if (first?.ok) {
      // The runtime wrote the buffer. Reload so VS Code's own write that follows is of the same
      // bytes against the new file (no "file is newer" conflict).
      await this.reloadFromDisk(document, true);
      vscode.window.setStatusBarMessage(`$(check) EchoesVault: ${name} saved through the runtime`, 5000);
      return [];
    }
    let onDisk: string;
    try {
      onDisk = withoutByteOrderMark(await readFile(document.uri.fsPath, 'utf8'));
    } catch {
      return [];
    }
    if (first === undefined) {
      void request.then(async (late) => {
        this.log.info(`Save participant for ${name}, late answer: ${late.ok ? 'saved' : late.text}`);
        if (late.ok) {
          vscode.window.setStatusBarMessage(`$(check) EchoesVault: ${name} saved through the runtime`, 5000);
          if (vscode.window.activeTextEditor?.document === document && !document.isDirty) {
            await vscode.commands.executeCommand('workbench.action.files.revert');
          }
        } else {
          this.reportRefusal(document, mine, late.text);
        }
      });
    } else {
      this.reportRefusal(document, mine, first.text);
    }
    return [vscode.TextEdit.replace(fullRange(document), onDisk)];
  }

  private reportRefusal(document: vscode.TextDocument, mine: string, text: string): void {
    const name = baseName(document.uri.fsPath);
    void this.views.put(`${name} (your edits).md`, mine).then((stash) =>
      vscode.window
        .showErrorMessage(
          `EchoesVault refused to save ${name}: ${text}. The editor now shows the file on disk; your edits are kept.`,
          'Restore my edits',
          'Compare',
        )
        .then(async (choice) => {
          if (choice === 'Restore my edits') {
            const edit = new vscode.WorkspaceEdit();
            edit.replace(document.uri, fullRange(document), mine);
            await vscode.workspace.applyEdit(edit);
          } else if (choice === 'Compare') {
            await vscode.commands.executeCommand('vscode.diff', document.uri, stash, `${name} (on disk) ↔ your edits`);
          }
        }),
    );
  }
}

function fullRange(document: vscode.TextDocument): vscode.Range {
  const last = document.lineAt(document.lineCount - 1);
  return new vscode.Range(0, 0, last.lineNumber, last.range.end.character);
}

/**
 * Saves of vault pages through the runtime (hash-checked): the palette command, the save key and
 * the server's code action, with the choices offered when the page changed on disk (EV701).
 */
import * as vscode from 'vscode';
import { baseName, errorText, isStaleError, isVaultPage } from './pages';
import type { ServerHost } from './server';
import { SECTION, saveMode } from './settings';
import { DISK_SCHEME } from './views';

export type SaveOutcome = 'saved' | 'refused' | 'stale' | 'no-server';

/**
 * Reverts the document's editor so the buffer equals what the runtime wrote. VS Code reverts
 * only the active editor, so the document is shown first (and, with `restoreFocus`, the editor
 * that was active before is shown again afterwards).
 */
export async function reloadFromDisk(document: vscode.TextDocument, restoreFocus = false): Promise<void> {
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

/** Saves a page through the runtime and reloads its buffer from what was written. */
export class PageSaver {
  /** Pages whose next VS Code save was chosen as an ordinary save ("ask" mode). */
  private readonly bypass = new Set<string>();

  constructor(
    private readonly host: ServerHost,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** Whether the next VS Code save of the page was chosen as an ordinary one; asking forgets it. */
  takeBypass(uri: string): boolean {
    return this.bypass.delete(uri);
  }

  /** The server's "Save through EchoesVault" code action; `overwrite` is confirmed in a dialog first. */
  async fromCodeAction(uri: vscode.Uri, overwrite: boolean): Promise<SaveOutcome | undefined> {
    const document = await vscode.workspace.openTextDocument(uri);
    return overwrite ? this.confirmOverwrite(document) : this.save(document, false);
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
    await reloadFromDisk(document);
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
}

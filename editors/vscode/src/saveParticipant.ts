/**
 * The save participant of `echoes.saveThroughRuntime: always`: explicit saves that do not come
 * through the save key (File > Save, Save All, another extension) go through the runtime too.
 */
import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import { baseName, errorText, isVaultPage, withoutByteOrderMark } from './pages';
import { reloadFromDisk, type PageSaver } from './saving';
import type { ServerHost } from './server';
import { SECTION, saveMode } from './settings';
import type { ViewProvider } from './views';

/** VS Code stops waiting for a save participant after 1.5 s; stay below that. */
const PARTICIPANT_BUDGET_MS = 1200;

function fullRange(document: vscode.TextDocument): vscode.Range {
  const last = document.lineAt(document.lineCount - 1);
  return new vscode.Range(0, 0, last.lineNumber, last.range.end.character);
}

/** Sends a page's buffer through the runtime before VS Code writes it. */
export class SaveParticipant {
  private autoSaveWarned = false;

  constructor(
    private readonly host: ServerHost,
    private readonly log: vscode.LogOutputChannel,
    private readonly views: ViewProvider,
    private readonly saver: PageSaver,
  ) {}

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
    if (this.saver.takeBypass(key)) {
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
      await reloadFromDisk(document, true);
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

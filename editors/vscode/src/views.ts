/** The read-only documents the extension shows: its own Markdown views and a file's text on disk. */
import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import { errorText, withoutByteOrderMark } from './pages';

/** Read-only documents the extension shows (status card, restored context, a refused buffer). */
export const VIEW_SCHEME = 'echoes-view';
/** The current disk content of a file, for "Show disk version". */
export const DISK_SCHEME = 'echoes-disk';

/** Read-only Markdown documents shown in a preview. */
export class ViewProvider implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.path) ?? '';
  }

  async put(title: string, content: string): Promise<vscode.Uri> {
    const uri = vscode.Uri.from({ scheme: VIEW_SCHEME, path: '/' + title });
    this.contents.set(uri.path, content);
    this.changed.fire(uri);
    return uri;
  }

  async preview(title: string, markdown: string): Promise<void> {
    const uri = await this.put(title, markdown);
    await vscode.commands.executeCommand('markdown.showPreview', uri);
  }
}

/** `echoes-disk:` URIs show a file's current content on disk. */
export class DiskProvider implements vscode.TextDocumentContentProvider {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    try {
      return withoutByteOrderMark(await readFile(uri.with({ scheme: 'file', query: '' }).fsPath, 'utf8'));
    } catch (error) {
      return `(cannot read the file on disk: ${errorText(error)})`;
    }
  }
}

/**
 * The activation entry point: creates the server host, the commands and the views, and wires
 * them to VS Code's commands, events and status bar.
 */
import * as vscode from 'vscode';
import { Commands } from './commands';
import { SaveParticipant } from './saveParticipant';
import { PageSaver } from './saving';
import { ServerHost } from './server';
import { RESTART_KEYS } from './settings';
import { DISK_SCHEME, DiskProvider, VIEW_SCHEME, ViewProvider } from './views';

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
  const saver = new PageSaver(h, log);
  const participant = new SaveParticipant(h, log, views, saver);
  h.savePage = (uri, overwrite) => saver.fromCodeAction(uri, overwrite);

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
    vscode.commands.registerCommand('echoes.saveThroughVault', (arg?: unknown) => saver.saveCommand(arg)),
    vscode.commands.registerCommand('echoes.rebuildVaultIndex', () => ui.rebuildIndex()),
    vscode.commands.registerCommand('echoes.endVaultSession', () => ui.endSession()),
    vscode.commands.registerCommand('echoes.restartServer', () => h.restart()),
    vscode.workspace.onWillSaveTextDocument((event) => participant.onWillSave(event)),
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

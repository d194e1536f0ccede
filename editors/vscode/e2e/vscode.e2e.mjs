// End-to-end test of the EchoesVault extension in a real VS Code (code-server) driven by
// Playwright through Debian's Chromium. Network: 127.0.0.1 only.
//
// Started by run.sh, which sets:
//   E2E_CODE_SERVER  code-server's entry point (run with the current node)
//   E2E_VSIX         the packaged extension
//   E2E_MODE         `configured` (default): echoes.server.path is set to E2E_SERVER, every test
//                    runs; `bundled`: a fresh profile with the .vsix alone, no setting and no
//                    echoes-lsp installed anywhere, so the extension runs the server it bundles
//                    (diagnostics, completion and a hash-checked save are tested)
//   E2E_SERVER       the echoes-lsp executable (set as echoes.server.path; `configured` only)
//   E2E_RUNTIME      the runtime file that creates the vault (`bundled` only)
//   E2E_FIXTURE      fixture folder (pages/ to copy into a fresh vault)
//   E2E_ARTIFACTS    where the screenshot goes
//   E2E_ONLY         optional regular expression: only the tests whose names match it run (a
//                    quick run of a few checks, e.g. E2E_ONLY='^(1|2|2c|2d|2e)\.')
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const CODE_SERVER = requireEnv('E2E_CODE_SERVER');
const VSIX = requireEnv('E2E_VSIX');
const MODE = ['bundled', 'nopython'].includes(process.env.E2E_MODE) ? process.env.E2E_MODE : 'configured';
const SERVER = MODE === 'configured' ? requireEnv('E2E_SERVER') : undefined;
const RUNTIME = MODE !== 'configured' ? requireEnv('E2E_RUNTIME') : undefined;
/**
 * The PATH of code-server and so of the extension host: node, /usr/bin and /bin only; node alone
 * for `nopython`, where the login shell's environment is not resolved either (VSCODE_CLI=1), so
 * the extension host has no Python at all.
 */
const HOST_PATH = MODE === 'nopython' ? path.dirname(process.execPath) : `${path.dirname(process.execPath)}:/usr/bin:/bin`;
/** Without any Python: the one message that says so. */
const NOPYTHON_TESTS = new Set([
  '0. nothing but the .vsix: no echoes-lsp on PATH or importable by python3',
  '1. open a page with known defects',
  '16. without any Python, one error says so with the fix',
]);
/** With the bundled server: the tests that prove it alone serves a vault. */
const BUNDLED_TESTS = new Set([
  '0. nothing but the .vsix: no echoes-lsp on PATH or importable by python3',
  '1. open a page with known defects',
  '2. Problems panel shows EV104, EV200 and EV300',
  '3. typing [[ offers a known page',
  '4. Save through EchoesVault writes the buffer through the runtime',
  '4b. the fixed page has no EV104/EV200/EV300 left',
  '4c. the output channel names the server that ran',
]);
const FIXTURE = requireEnv('E2E_FIXTURE');
const ARTIFACTS = requireEnv('E2E_ARTIFACTS');
const KEEP = process.env.ECHOES_E2E_KEEP === '1';
const CHROMIUM = process.env.E2E_CHROMIUM || '/usr/bin/chromium';
const ONLY = process.env.E2E_ONLY ? new RegExp(process.env.E2E_ONLY) : undefined;
/** The extension's id: the one folding provider of Markdown files (see writeUserSettings). */
const EXTENSION_ID = 'echoes-lsp.echoes-lsp';

const PAGE = 'broken-page.md';
/**
 * The colour of the `invalid` scope in code-server's default themes: Light Modern (headless
 * Chromium prefers a light scheme) and Dark Modern.
 */
const INVALID_COLOURS = ['rgb(205, 49, 49)', 'rgb(244, 71, 71)'];
/** The broken page with its three defects fixed; saved through EchoesVault in test 4. */
const FIXED_PAGE = [
  '---',
  'type: runbook',
  'stack: [python]',
  'status: active',
  'summary: Deployment steps and the checks to run before a release.',
  '---',
  '',
  '# Deployment runbook',
  '',
  'Before deploying, read [[authentication]].',
  '',
].join('\n');

function requireEnv(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`e2e: environment variable ${name} is not set (run this through run.sh)`);
    process.exit(2);
  }
  return value;
}

function log(message) {
  console.log(`[e2e] ${message}`);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` until it returns a truthy value; throws `message` (with the last value) on timeout. */
async function waitFor(check, { timeout = 30000, interval = 250, message = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  let lastError;
  while (Date.now() < deadline) {
    try {
      last = await check();
      if (last) {
        return last;
      }
    } catch (error) {
      lastError = error;
    }
    await sleep(interval);
  }
  const detail = lastError ? ` (last error: ${lastError.message})` : last !== undefined ? ` (last value: ${JSON.stringify(last)})` : '';
  throw new Error(`timed out after ${timeout} ms waiting for ${message}${detail}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Workspace and code-server

function makeWorkspace(root) {
  const workspace = path.join(root, 'project');
  mkdirSync(workspace, { recursive: true });
  execFileSync('git', ['init', '-q', workspace], { timeout: 30000 });
  execFileSync('git', ['-C', workspace, 'config', 'user.email', 'e2e@example.invalid'], { timeout: 30000 });
  execFileSync('git', ['-C', workspace, 'config', 'user.name', 'e2e'], { timeout: 30000 });
  const init =
    MODE === 'configured'
      ? execFileSync(SERVER, ['runtime', '--workspace', workspace, 'init'], { encoding: 'utf8', timeout: 60000 })
      : execFileSync('/usr/bin/python3', [RUNTIME, '--workspace', workspace, 'init'], { encoding: 'utf8', timeout: 60000 });
  log(`runtime init: ${init.trim().split('\n')[0].slice(0, 160)}`);
  if (!existsSync(path.join(workspace, 'EchoesVault', '.echoes-vault.json'))) {
    throw new Error('runtime init did not create EchoesVault/.echoes-vault.json');
  }
  cpSync(path.join(FIXTURE, 'pages'), path.join(workspace, 'EchoesVault', 'pages'), { recursive: true });
  return workspace;
}

function writeUserSettings(userDataDir) {
  const settings = {
    'security.workspace.trust.enabled': false,
    ...(MODE === 'configured' ? { 'echoes.server.path': SERVER } : {}),
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'workbench.enableExperiments': false,
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'extensions.ignoreRecommendations': true,
    'update.mode': 'none',
    'telemetry.telemetryLevel': 'off',
    'files.autoSave': 'off',
    'editor.minimap.enabled': false,
    'editor.acceptSuggestionOnEnter': 'off',
    'editor.quickSuggestions': { other: false, comments: false, strings: false },
    'chat.disableAIFeatures': true,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'window.commandCenter': false,
    // Markdown's built-in extension folds headings too; with the server as the only folding
    // provider, a fold in the editor is the server's.
    '[markdown]': { 'editor.defaultFoldingRangeProvider': EXTENSION_ID },
  };
  mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  writeFileSync(path.join(userDataDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  // Settings of machine scope (echoes.server.path) are read from the server machine's settings
  // in code-server, as in any remote window.
  mkdirSync(path.join(userDataDir, 'Machine'), { recursive: true });
  const machine = MODE === 'configured' ? { 'echoes.server.path': SERVER } : {};
  writeFileSync(path.join(userDataDir, 'Machine', 'settings.json'), JSON.stringify(machine, null, 2));
}

function codeServerArgs(userDataDir, extensionsDir) {
  return [CODE_SERVER, '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir];
}

function installExtension(userDataDir, extensionsDir) {
  const out = execFileSync(process.execPath, [...codeServerArgs(userDataDir, extensionsDir), '--install-extension', VSIX], {
    encoding: 'utf8',
    timeout: 120000,
  });
  log(`install-extension: ${out.trim().split('\n').pop()}`);
}

// ---------------------------------------------------------------------------------------------
// Test harness

const results = [];
/** The VS Code page, for a screenshot when a test fails. */
let currentPage;

async function test(name, fn, { needs = [] } = {}) {
  const wanted =
    MODE === 'bundled' ? BUNDLED_TESTS.has(name) : MODE === 'nopython' ? NOPYTHON_TESTS.has(name) : !name.startsWith('16.');
  if (!wanted || (ONLY && !ONLY.test(name))) {
    return;
  }
  const missing = needs.filter((dep) => !results.some((r) => r.name === dep && r.ok));
  if (missing.length > 0) {
    results.push({ name, ok: false, skipped: true });
    console.log(`SKIP ${name} (needs: ${missing.join(', ')})`);
    return;
  }
  const started = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`PASS ${name} (${Date.now() - started} ms)`);
  } catch (error) {
    results.push({ name, ok: false });
    console.log(`FAIL ${name} (${Date.now() - started} ms): ${error?.message ?? error}`);
    if (currentPage) {
      const shot = path.join(ARTIFACTS, `vscode-e2e-failure-${MODE}-${name.split('.')[0]}.png`);
      await currentPage.screenshot({ path: shot, timeout: 10000 }).then(
        () => console.log(`     screenshot: ${shot}`),
        () => {},
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// VS Code UI helpers

class Workbench {
  constructor(page) {
    this.page = page;
  }

  async quickInput(text) {
    const { page } = this;
    const input = page.locator('.quick-input-widget input.input');
    // A webview (Markdown preview) can hold the keyboard focus; F1 is retried from the workbench.
    for (let attempt = 1; ; attempt++) {
      await page.keyboard.press('Escape');
      await page.keyboard.press('F1');
      try {
        await input.waitFor({ state: 'visible', timeout: 5000 });
        await input.fill(text, { timeout: 5000 });
        return input;
      } catch (error) {
        if (attempt >= 3) {
          throw error;
        }
        await page.locator('.part.sidebar .composite.title').first().click({ timeout: 5000 }).catch(() => {});
      }
    }
  }

  async runCommand(title) {
    await this.quickInput(`>${title}`);
    const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    try {
      await row.waitFor({ state: 'visible', timeout: 15000 });
    } catch (error) {
      await this.page.keyboard.press('Escape');
      throw error;
    }
    await row.click();
  }

  /** Runs the palette command titled exactly `title` (not one that merely starts with it). */
  async runExactCommand(title) {
    await this.quickInput(`>${title}`);
    const label = this.page.locator('.label-name').filter({ hasText: new RegExp(`^${title}$`) });
    const row = this.page.locator('.quick-input-list .monaco-list-row').filter({ has: label }).first();
    try {
      await row.waitFor({ state: 'visible', timeout: 15000 });
    } catch (error) {
      await this.page.keyboard.press('Escape');
      throw error;
    }
    await row.click();
  }

  async openFile(name) {
    await this.quickInput(name);
    const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
    await row.waitFor({ state: 'visible', timeout: 20000 });
    await row.click();
    await this.page.locator('.tab.active', { hasText: name }).waitFor({ timeout: 15000 });
    await this.focusEditor();
  }

  async focusEditor() {
    await this.page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  }

  /** The file `name` active, its first lines in view: whatever editor an earlier step left in
   * front or wherever it scrolled, the file is opened again and the cursor put at its start. */
  async showTop(name) {
    await this.openFile(name);
    await this.page.keyboard.press('Control+Home');
  }

  /** The texts of the lines the editor draws, no-break spaces as spaces. */
  async linesInView() {
    const lines = await this.page.locator('.editor-instance .view-lines .view-line').allInnerTexts();
    return lines.map((text) => text.replace(/\s+/g, ' '));
  }

  /** What the editor draws: the active tab and the lines in view (no-break spaces as spaces). */
  async shownText() {
    const tab = await this.page.locator('.tab.active').first().innerText({ timeout: 2000 }).catch(() => '?');
    return `active tab ${JSON.stringify(tab.trim())}, lines in view ${JSON.stringify(await this.linesInView())}`;
  }

  async problemsText() {
    return (await this.page.locator('.markers-panel').first().innerText({ timeout: 2000 })).replace(/\s+/g, ' ');
  }

  async openProblems() {
    await this.runCommand('View: Focus Problems');
    await this.page.locator('.markers-panel').first().waitFor({ state: 'visible', timeout: 15000 });
  }

  async activeTabDirty() {
    return (await this.page.locator('.tab.active.dirty').count()) > 0;
  }

  async notificationsText() {
    const toasts = this.page.locator('.notifications-toasts');
    if ((await toasts.count()) === 0) {
      return '';
    }
    return (await toasts.first().innerText({ timeout: 2000 })).replace(/\s+/g, ' ');
  }

  async clearNotifications() {
    await this.runCommand('Notifications: Clear All Notifications').catch(() => {});
    await this.page.keyboard.press('Escape');
  }

  async replaceEditorText(text) {
    await this.focusEditor();
    await this.page.keyboard.press('Control+A');
    await this.page.keyboard.press('Delete');
    await this.page.keyboard.insertText(text);
  }

  async editorText() {
    // Only the visible lines; used for short documents.
    return this.page.locator('.editor-instance .monaco-editor .view-lines').first().innerText();
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const started = Date.now();
  const root = mkdtempSync(path.join(os.tmpdir(), 'echoes-vscode-e2e-'));
  const userDataDir = path.join(root, 'user-data');
  const extensionsDir = path.join(root, 'extensions');
  let codeServer;
  let browser;
  let codeServerLog = '';
  const cleanup = async () => {
    if (browser) {
      await Promise.race([browser.close().catch(() => {}), sleep(15000)]);
      browser = undefined;
    }
    if (codeServer && codeServer.exitCode === null) {
      try {
        process.kill(-codeServer.pid, 'SIGTERM');
      } catch {}
      const exited = await Promise.race([
        new Promise((resolve) => codeServer.once('exit', () => resolve(true))),
        sleep(5000).then(() => false),
      ]);
      if (!exited) {
        try {
          process.kill(-codeServer.pid, 'SIGKILL');
        } catch {}
      }
    }
    if (!KEEP) {
      rmSync(root, { recursive: true, force: true });
    } else {
      log(`kept ${root}`);
    }
  };
  const onSignal = (signal) => {
    log(`received ${signal}; cleaning up`);
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const workspace = makeWorkspace(root);
    const pageFile = path.join(workspace, 'EchoesVault', 'pages', PAGE);
    const indexFile = path.join(workspace, 'EchoesVault', 'index.md');
    writeUserSettings(userDataDir);
    installExtension(userDataDir, extensionsDir);
    const home = path.join(root, 'home');
    mkdirSync(home, { recursive: true });

    const port = await freePort();
    codeServer = spawn(
      process.execPath,
      [
        ...codeServerArgs(userDataDir, extensionsDir),
        '--auth',
        'none',
        '--bind-addr',
        `127.0.0.1:${port}`,
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        workspace,
      ],
      {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        // A minimal PATH, so that no echoes-lsp installed elsewhere on the machine is found.
        // A fresh HOME too: code-server gives the extension host its login shell's environment,
        // and a developer's shell profile (pyenv, a venv, pipx) must not lend it a server.
        env: {
          ...process.env,
          HOME: home,
          PATH: HOST_PATH,
          PYTHONPATH: '',
          VIRTUAL_ENV: '',
          ...(MODE === 'nopython' ? { VSCODE_CLI: '1' } : {}),
        },
      },
    );
    codeServer.stdout.on('data', (d) => (codeServerLog += d));
    codeServer.stderr.on('data', (d) => (codeServerLog += d));
    const url = `http://127.0.0.1:${port}/`;
    await waitFor(
      async () => {
        if (codeServer.exitCode !== null) {
          throw new Error(`code-server exited with ${codeServer.exitCode}: ${codeServerLog.slice(-2000)}`);
        }
        const response = await fetch(`${url}healthz`, { signal: AbortSignal.timeout(3000) }).catch(() => undefined);
        return response?.ok;
      },
      { timeout: 60000, message: 'code-server to answer /healthz' },
    );
    log(`code-server is up on ${url}`);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
      timeout: 60000,
    });
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20000);
    currentPage = page;
    await page.goto(`${url}?folder=${encodeURIComponent(workspace)}`, { timeout: 60000 });
    await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
    await page.locator('.statusbar').waitFor({ timeout: 90000 });
    const wb = new Workbench(page);
    log(`workbench loaded after ${Date.now() - started} ms (${MODE} server)`);

    await test('0. nothing but the .vsix: no echoes-lsp on PATH or importable by python3', async () => {
      for (const dir of [...HOST_PATH.split(':'), '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/sbin']) {
        if (existsSync(path.join(dir, 'echoes-lsp'))) {
          throw new Error(`${dir}/echoes-lsp exists`);
        }
      }
      let imported = true;
      try {
        execFileSync('/usr/bin/python3', ['-c', 'import echoes_lsp'], { cwd: workspace, stdio: 'ignore', timeout: 30000 });
      } catch {
        imported = false;
      }
      if (imported) {
        throw new Error('/usr/bin/python3 can import echoes_lsp');
      }
      const extensions = readdirSync(extensionsDir).filter((name) => !name.startsWith('.') && name !== 'extensions.json');
      if (extensions.length !== 1) {
        throw new Error(`expected only the EchoesVault extension, found ${extensions.join(', ')}`);
      }
    });

    await test('1. open a page with known defects', async () => {
      await wb.openFile(PAGE);
    });

    await test(
      '2. Problems panel shows EV104, EV200 and EV300',
      async () => {
        await wb.openProblems();
        try {
          await waitFor(
            async () => {
              const text = await wb.problemsText();
              return ['EV104', 'EV200', 'EV300'].every((code) => text.includes(code)) && text;
            },
            { timeout: 60000, message: 'EV104, EV200 and EV300 in the Problems panel' },
          );
        } finally {
          const shot = path.join(ARTIFACTS, `vscode-problems-${MODE}.png`);
          await page.screenshot({ path: shot });
          log(`screenshot of the Problems panel: ${shot}`);
        }
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '2b. status bar shows the vault health',
      async () => {
        await waitFor(
          async () => {
            const items = await page.locator('.statusbar-item').allInnerTexts();
            const item = items.find((t) => t.includes('EchoesVault'));
            return item && !item.includes('$(sync') && item;
          },
          { timeout: 30000, message: 'an EchoesVault status bar item' },
        );
        // The vault has a broken page, so it needs attention (integrity from echoes/statusChanged),
        // and the item says what it counts: vault files, not the Problems panel's entries.
        await waitFor(
          async () =>
            (await page.locator('.statusbar-item', { hasText: 'EchoesVault' }).allInnerTexts()).some((t) =>
              /vault files? needs? attention/.test(t),
            ),
          { timeout: 30000, message: 'the status bar item to count vault files that need attention' },
        );
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '2c. an inlay hint after [[authentication#^boundary]] shows the first line of the block',
      async () => {
        // The hint is text the editor draws after the link, in the link's line (cut by
        // editor.inlayHints.maximumLength). When the line is not in view, the page is shown again.
        await waitFor(
          async () => {
            const line = (await wb.linesInView()).find((text) => text.includes('[[authentication#^boundary]]'));
            if (line === undefined) {
              await wb.showTop(PAGE);
            }
            return line && /\]\] ?Tokens are validated at the service/.test(line) && line;
          },
          { timeout: 30000, message: "the block's first line after the link" },
        ).catch(async (error) => {
          throw new Error(`${error.message}; ${await wb.shownText()}`);
        });
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '2d. a semantic token colours the unresolved [[missing-page]] apart from a resolved link',
      async () => {
        // The innermost coloured span of each link target, and the colour the page draws it in.
        const colours = () =>
          page.evaluate(() => {
            const found = {};
            for (const span of document.querySelectorAll('.editor-instance .view-lines .view-line span[class^="mtk"]')) {
              const text = span.textContent;
              for (const word of ['missing-page', 'authentication']) {
                if (text.includes(word) && (!found[word] || text.length < found[word].text.length)) {
                  found[word] = { text, color: getComputedStyle(span).color };
                }
              }
            }
            return found;
          });
        // The token spans exactly the page name, and the `unresolved` modifier maps to the
        // `invalid` scope (package.json), which the default themes draw red.
        const found = await waitFor(
          async () => {
            const { 'missing-page': missing, authentication } = await colours();
            if (!missing) {
              await wb.showTop(PAGE);
            }
            return (
              missing?.text === 'missing-page' &&
              authentication?.text === 'authentication' &&
              INVALID_COLOURS.includes(missing.color) &&
              missing.color !== authentication.color && { missing, authentication }
            );
          },
          { timeout: 30000, message: `missing-page as its own token in ${INVALID_COLOURS.join(' or ')}, apart from authentication` },
        ).catch(async (error) => {
          throw new Error(`${error.message}; seen: ${JSON.stringify(await colours())}; ${await wb.shownText()}`);
        });
        log(`unresolved link ${found.missing.color}, resolved link ${found.authentication.color}`);
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '2e. Fold All folds the frontmatter and the heading section by the server\'s ranges',
      async () => {
        const hidden = ['summary: This summary', 'Before deploying', '[[authentication#^boundary]]'];
        // The editor draws spaces as no-break spaces.
        const text = async () => (await page.locator('.editor-instance .view-lines').first().innerText()).replace(/\s+/g, ' ');
        // The ranges arrive after the page opens: Fold All is run again until they are there.
        await waitFor(
          async () => {
            await wb.focusEditor();
            await wb.runExactCommand('Fold All');
            await sleep(500);
            const shown = await text();
            return shown.includes('# Deployment runbook') && hidden.every((line) => !shown.includes(line));
          },
          { timeout: 30000, interval: 1000, message: 'the frontmatter and the section body to be hidden' },
        );
        await wb.runExactCommand('Unfold All');
        await waitFor(async () => (await text()).includes('Before deploying'), {
          timeout: 10000,
          message: 'Unfold All to show the section again',
        });
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '3. typing [[ offers a known page',
      async () => {
        // The page is opened again through Quick Open, which puts the focus in its editor
        // whatever panel an earlier step focused; typing that never reached the editor (no
        // `See [[` line in view) is tried again, and a failure says what the editor showed.
        const suggest = page.locator('.suggest-widget');
        const offered = async () => {
          const text = (await suggest.first().innerText({ timeout: 1000 })).replace(/\s+/g, ' ');
          return text.includes('token-refresh') && text;
        };
        let typed = false;
        for (let attempt = 1; !typed && attempt <= 3; attempt += 1) {
          await wb.openFile(PAGE);
          await page.keyboard.press('Control+End');
          await page.keyboard.press('Enter');
          await page.keyboard.type('See [[', { delay: 50 });
          // a line of its own: typing that an earlier focus sent elsewhere (Enter in the
          // Problems panel opens a problem's line) does not count
          typed = (await wb.linesInView()).some((line) => /^See \[\[(\]\])?$/.test(line.trim()));
          if (!typed) {
            console.log(`[e2e] the typing did not reach the editor (attempt ${attempt}): ${await wb.shownText()}`);
            await page.keyboard.press('Escape');
          }
        }
        try {
          await waitFor(offered, { timeout: 30000, message: 'token-refresh in the suggest widget' });
        } catch (error) {
          throw new Error(`${error.message}; ${await wb.shownText()}`);
        } finally {
          await page.keyboard.press('Escape');
        }
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '4. Save through EchoesVault writes the buffer through the runtime',
      async () => {
        await wb.replaceEditorText(FIXED_PAGE);
        await waitFor(() => wb.activeTabDirty(), { timeout: 10000, message: 'the editor to be dirty' });
        const indexBefore = existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : '';
        if (indexBefore.includes('[[broken-page]]')) {
          throw new Error('index.md lists broken-page before the save');
        }
        await wb.runCommand('EchoesVault: Save through EchoesVault');
        await waitFor(() => readFileSync(pageFile, 'utf8') === FIXED_PAGE, {
          timeout: 30000,
          message: `${PAGE} on disk to equal the buffer`,
        });
        // The runtime regenerates the index: the page now has its row with the new summary.
        await waitFor(
          () =>
            existsSync(indexFile) &&
            readFileSync(indexFile, 'utf8').includes('[[broken-page]]: Deployment steps and the checks to run before a release.'),
          { timeout: 15000, message: 'index.md to list broken-page with its new summary' },
        );
        // The buffer was reloaded from disk, so it is clean.
        await waitFor(async () => !(await wb.activeTabDirty()), { timeout: 15000, message: 'the editor to be clean' });
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '4b. the fixed page has no EV104/EV200/EV300 left',
      async () => {
        await wb.openProblems();
        await waitFor(
          async () => {
            const text = await wb.problemsText();
            return !['EV104', 'EV200', 'EV300'].some((code) => text.includes(code));
          },
          { timeout: 30000, message: 'the Problems panel to drop EV104, EV200 and EV300' },
        );
      },
      { needs: ['4. Save through EchoesVault writes the buffer through the runtime'] },
    );

    await test(
      '16. without any Python, one error says so with the fix',
      async () => {
        const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'no Python 3.9 or newer was found' });
        await toast.first().waitFor({ timeout: 60000 });
        const text = (await toast.first().innerText()).replace(/\s+/g, ' ');
        for (const fix of ['install Python 3.9+', 'echoes.server.python', 'Restart language server']) {
          if (!text.includes(fix)) {
            throw new Error(`the message lacks "${fix}": ${text}`);
          }
        }
        // Once: opening another page does not say it again (counted in the notification center,
        // which keeps the notifications that toasts no longer show).
        await wb.openFile('token-refresh.md');
        await sleep(3000);
        await wb.runCommand('Notifications: Show Notifications');
        const entries = page.locator('.notifications-center .notification-list-item', { hasText: 'no Python 3.9 or newer was found' });
        await entries.first().waitFor({ timeout: 10000 });
        const count = await entries.count();
        if (count !== 1) {
          throw new Error(`the message was shown ${count} times`);
        }
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '4c. the output channel names the server that ran',
      async () => {
        const logs = path.join(userDataDir, 'logs');
        const lines = [];
        const walk = (dir) => {
          for (const entry of readdirSync(dir, { withFileTypes: true })) {
            const file = path.join(dir, entry.name);
            if (entry.isDirectory()) {
              walk(file);
            } else if (entry.name.endsWith('EchoesVault.log')) {
              lines.push(...readFileSync(file, 'utf8').split('\n').filter((line) => line.includes('Starting ')));
            }
          }
        };
        await waitFor(
          () => {
            lines.length = 0;
            walk(logs);
            return lines.length > 0;
          },
          { timeout: 15000, message: 'the "Starting ..." line in the EchoesVault output channel log' },
        );
        log(`output channel: ${lines[0].trim()}`);
        if (MODE === 'configured') {
          if (!lines[0].includes(`Starting echoes.server.path (${SERVER})`)) {
            throw new Error(`unexpected server: ${lines[0]}`);
          }
          return;
        }
        // The extension host's PATH is the login shell's (code-server resolves it), so the
        // interpreter is whichever python3 that PATH gives; it must not have echoes-lsp itself.
        const used = /Starting the bundled echoes-lsp with (\S+) \(PATH\)/.exec(lines[0]);
        if (!used) {
          throw new Error(`unexpected server: ${lines[0]}`);
        }
        let imported = true;
        try {
          execFileSync(used[1], ['-c', 'import echoes_lsp'], { cwd: workspace, stdio: 'ignore', timeout: 30000 });
        } catch {
          imported = false;
        }
        if (imported) {
          throw new Error(`${used[1]} can import echoes_lsp by itself: the test does not prove the bundle`);
        }
      },
      { needs: ['4. Save through EchoesVault writes the buffer through the runtime'] },
    );

    const external = FIXED_PAGE + '\nA line written by another tool.\n';
    await test(
      '5. a stale save is refused with EV701 and the disk is untouched',
      async () => {
        await wb.clearNotifications();
        await wb.focusEditor();
        await page.keyboard.press('Control+End');
        await page.keyboard.type('Edited in the editor.', { delay: 10 });
        await waitFor(() => wb.activeTabDirty(), { timeout: 10000, message: 'the editor to be dirty' });
        // Behind the editor's back.
        writeFileSync(pageFile, external);
        await sleep(500);
        await wb.focusEditor();
        await page.keyboard.type(' More.', { delay: 10 });
        await wb.runCommand('EchoesVault: Save through EchoesVault');
        await waitFor(async () => (await wb.notificationsText()).includes('EV701'), {
          timeout: 30000,
          message: 'an error notification naming EV701',
        });
        await sleep(1000);
        const onDisk = readFileSync(pageFile, 'utf8');
        if (onDisk !== external) {
          throw new Error(`the file on disk changed: ${JSON.stringify(onDisk.slice(-80))}`);
        }
        if (!(await wb.activeTabDirty())) {
          throw new Error('the editor lost its unsaved edits');
        }
      },
      { needs: ['4. Save through EchoesVault writes the buffer through the runtime'] },
    );

    await test(
      '5b. EV701 offers the disk version in a diff',
      async () => {
        const button = page.locator('.notifications-toasts .monaco-button', { hasText: 'Show disk version' }).first();
        await button.click({ timeout: 10000 });
        await page.locator('.tab.active', { hasText: '(on disk)' }).waitFor({ timeout: 15000 });
        await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 15000 });
        await page.keyboard.press('Control+W').catch(() => {});
      },
      { needs: ['5. a stale save is refused with EV701 and the disk is untouched'] },
    );

    await test(
      '5c. Overwrite… asks, then saves with confirmOverwrite',
      async () => {
        await wb.clearNotifications();
        await wb.openFile(PAGE);
        await wb.runCommand('EchoesVault: Save through EchoesVault');
        const button = page.locator('.notifications-toasts .monaco-button', { hasText: 'Overwrite' }).first();
        await button.click({ timeout: 30000 });
        const dialog = page.locator('.monaco-dialog-box');
        await dialog.waitFor({ timeout: 10000 });
        await dialog.locator('.monaco-button', { hasText: /^Overwrite$/ }).first().click();
        await waitFor(
          () => {
            const onDisk = readFileSync(pageFile, 'utf8');
            return onDisk !== external && onDisk.includes('Edited in the editor. More.');
          },
          { timeout: 30000, message: 'the editor version to be written after confirmation' },
        );
        await waitFor(async () => !(await wb.activeTabDirty()), { timeout: 15000, message: 'the editor to be clean' });
      },
      { needs: ['5. a stale save is refused with EV701 and the disk is untouched'] },
    );

    await test(
      '5d. the EV701 quick fix "Overwrite…" asks, then overwrites',
      async () => {
        await wb.clearNotifications();
        await wb.openFile(PAGE);
        await page.keyboard.press('Control+End');
        await page.keyboard.type(' Quick fix edit.', { delay: 10 });
        await waitFor(() => wb.activeTabDirty(), { timeout: 10000, message: 'the editor to be dirty' });
        const behind = readFileSync(pageFile, 'utf8') + 'Another external line.\n';
        writeFileSync(pageFile, behind);
        await sleep(500);
        await wb.runCommand('EchoesVault: Save through EchoesVault');
        await waitFor(async () => (await wb.notificationsText()).includes('EV701'), {
          timeout: 30000,
          message: 'an EV701 notification',
        });
        await wb.clearNotifications();
        await wb.focusEditor();
        await page.keyboard.press('Control+Home');
        const item = page.locator('.action-widget .monaco-list-row', { hasText: 'Overwrite the disk version' }).first();
        await waitFor(
          async () => {
            await page.keyboard.press('Escape');
            await page.keyboard.press('Control+.');
            return item.waitFor({ timeout: 3000 }).then(
              () => true,
              () => false,
            );
          },
          { timeout: 30000, interval: 500, message: 'the EV701 quick fix in the Quick Fix menu' },
        );
        await item.click();
        const dialog = page.locator('.monaco-dialog-box');
        await dialog.waitFor({ timeout: 10000 });
        if (readFileSync(pageFile, 'utf8') !== behind) {
          throw new Error('the file was written before the confirmation');
        }
        await dialog.locator('.monaco-button', { hasText: /^Overwrite$/ }).first().click();
        await waitFor(() => readFileSync(pageFile, 'utf8').includes('Quick fix edit.'), {
          timeout: 30000,
          message: 'the buffer to be written after the confirmation',
        });
        await waitFor(async () => !(await wb.activeTabDirty()), { timeout: 15000, message: 'the editor to be clean' });
      },
      { needs: ['5. a stale save is refused with EV701 and the disk is untouched'] },
    );

    // echoes.saveThroughRuntime: always — ordinary saves of pages go through the runtime.
    const workspaceSettingsFile = path.join(workspace, '.vscode', 'settings.json');
    const reopenPage = async () => {
      if ((await page.locator('.tab.active.dirty').count()) > 0) {
        await wb.runCommand('File: Revert File');
      }
      await wb.runCommand('View: Close All Editors');
      await wb.openFile(PAGE);
    };
    await test(
      '6a. with saveThroughRuntime=ask the save key asks first',
      async () => {
        mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
        writeFileSync(workspaceSettingsFile, JSON.stringify({ 'echoes.saveThroughRuntime': 'ask' }, null, 2));
        await wb.clearNotifications();
        await reopenPage();
        // VS Code reads the folder's settings file on a file event, which may come after the key
        // is pressed: until the setting is in effect the save key saves plainly. Each attempt
        // types its own text, so a plain save of an earlier one is told apart.
        const dialog = page.locator('.monaco-dialog-box');
        let typed = '';
        for (let attempt = 1; ; attempt += 1) {
          typed = ` Asked first (${attempt}).`;
          await wb.focusEditor();
          await page.keyboard.press('Control+End');
          await page.keyboard.type(typed, { delay: 10 });
          await waitFor(() => wb.activeTabDirty(), { timeout: 10000, message: 'the editor to be dirty' });
          await page.keyboard.press('Control+S');
          const asked = await dialog.waitFor({ timeout: 5000 }).then(
            () => true,
            () => false,
          );
          if (asked) break;
          if (!readFileSync(pageFile, 'utf8').includes(typed)) {
            throw new Error('the save key neither asked nor saved');
          }
          if (attempt === 6) throw new Error('echoes.saveThroughRuntime: ask never took effect');
          log(`the save key saved plainly (attempt ${attempt}): the setting is not read yet`);
        }
        if (readFileSync(pageFile, 'utf8').includes(typed)) {
          throw new Error('the page was written before the answer');
        }
        await dialog.locator('.monaco-button', { hasText: /^Through EchoesVault$/ }).first().click();
        await waitFor(() => readFileSync(pageFile, 'utf8').includes(typed), {
          timeout: 30000,
          message: 'the page to be written through EchoesVault',
        });
        await waitFor(async () => !(await wb.activeTabDirty()), { timeout: 15000, message: 'the editor to be clean' });
      },
      { needs: ['4. Save through EchoesVault writes the buffer through the runtime'] },
    );

    await test(
      '6. with saveThroughRuntime=always the save key saves through the runtime',
      async () => {
        // A workspace setting: VS Code picks up changes of the folder's settings file at once.
        mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
        writeFileSync(workspaceSettingsFile, JSON.stringify({ 'echoes.saveThroughRuntime': 'always' }, null, 2));
        await wb.clearNotifications();
        await reopenPage();
        await wb.focusEditor();
        await page.keyboard.press('Control+End');
        await page.keyboard.type('Saved with the save key.', { delay: 10 });
        await waitFor(() => wb.activeTabDirty(), { timeout: 10000, message: 'the editor to be dirty' });
        // Until VS Code has read the new setting, the save key still asks (the previous one):
        // such a question is dismissed and the key pressed again.
        const stillAsking = page.locator('.monaco-dialog-box');
        await waitFor(
          async () => {
            if (await stillAsking.isVisible()) {
              await page.keyboard.press('Escape');
              await stillAsking.waitFor({ state: 'hidden', timeout: 5000 });
            }
            await page.keyboard.press('Control+S');
            return waitFor(() => readFileSync(pageFile, 'utf8').includes('Saved with the save key.'), {
              timeout: 3000,
              message: 'the save key to write the page',
            }).then(
              () => true,
              () => false,
            );
          },
          { timeout: 30000, interval: 500, message: 'the save key to write the page' },
        );
        await waitFor(async () => !(await wb.activeTabDirty()), { timeout: 15000, message: 'the editor to be clean' });
        // Stale: the save key is refused by the runtime (EV701), not written by VS Code.
        await page.keyboard.type(' Stale edit.', { delay: 10 });
        await waitFor(() => wb.activeTabDirty(), { timeout: 10000, message: 'the editor to be dirty' });
        const behind = readFileSync(pageFile, 'utf8').replace('Saved with the save key.', 'Changed behind the back!');
        writeFileSync(pageFile, behind);
        await sleep(500);
        await page.keyboard.press('Control+S');
        await waitFor(async () => (await wb.notificationsText()).includes('EV701'), {
          timeout: 30000,
          message: 'an EV701 notification for the save key',
        });
        await sleep(1000);
        if (readFileSync(pageFile, 'utf8') !== behind) {
          throw new Error('the stale save key changed the file on disk');
        }
      },
      { needs: ['4. Save through EchoesVault writes the buffer through the runtime'] },
    );

    await test(
      '7. with saveThroughRuntime=always File: Save goes through the runtime too',
      async () => {
        await wb.clearNotifications();
        await reopenPage();
        await wb.focusEditor();
        await page.keyboard.press('Control+End');
        await page.keyboard.type('Saved from the menu.', { delay: 10 });
        await waitFor(() => wb.activeTabDirty(), { timeout: 10000, message: 'the editor to be dirty' });
        const indexBefore = readFileSync(indexFile, 'utf8');
        await wb.runCommand('File: Save');
        await waitFor(() => readFileSync(pageFile, 'utf8').includes('Saved from the menu.'), {
          timeout: 30000,
          message: 'File: Save to write the page',
        });
        await waitFor(async () => !(await wb.activeTabDirty()), { timeout: 15000, message: 'the editor to be clean' });
        await sleep(1000);
        const notes = await wb.notificationsText();
        if (/newer|conflict|Failed to save/i.test(notes)) {
          throw new Error(`VS Code reported a save conflict: ${notes}`);
        }
        if (readFileSync(indexFile, 'utf8') !== indexBefore) {
          log('index.md changed on File: Save');
        }
        // Stale: the runtime refuses and the disk keeps the other writer's content.
        await page.keyboard.type(' Stale again.', { delay: 10 });
        await waitFor(() => wb.activeTabDirty(), { timeout: 10000, message: 'the editor to be dirty' });
        const behind = readFileSync(pageFile, 'utf8').replace('Saved from the menu.', 'Other writer, same size');
        writeFileSync(pageFile, behind);
        await sleep(500);
        await wb.runCommand('File: Save');
        await waitFor(async () => /refused/.test(await wb.notificationsText()), {
          timeout: 30000,
          message: 'a refusal notification for File: Save',
        });
        await sleep(1500);
        const onDisk = readFileSync(pageFile, 'utf8');
        if (onDisk !== behind) {
          throw new Error(`File: Save overwrote the other writer's content: ${JSON.stringify(onDisk.slice(-120))}`);
        }
      },
      { needs: ['4. Save through EchoesVault writes the buffer through the runtime'] },
    );

    // The palette commands, against the same vault.
    const dailyFiles = () => {
      const daily = path.join(workspace, 'EchoesVault', 'daily');
      if (!existsSync(daily)) {
        return [];
      }
      return readdirSync(daily, { recursive: true })
        .map((f) => path.join(daily, String(f)))
        .filter((f) => f.endsWith('.md'));
    };
    const quickInputType = async (text) => {
      const input = page.locator('.quick-input-widget input.input');
      await input.waitFor({ state: 'visible', timeout: 10000 });
      await input.fill(text, { timeout: 10000 });
      await page.keyboard.press('Enter');
    };
    const cleanSlate = async () => {
      if ((await page.locator('.tab.active.dirty').count()) > 0) {
        await wb.runCommand('File: Revert File');
      }
      await wb.runCommand('View: Close All Editors');
      await wb.clearNotifications();
      // Let focus settle after closing webviews (a focus change closes an open quick input).
      await sleep(1000);
    };

    await test(
      '8. Show status opens the status card in a Markdown preview',
      async () => {
        await cleanSlate();
        await wb.runCommand('EchoesVault: Show status');
        await page.locator('.tab', { hasText: 'EchoesVault status.md' }).first().waitFor({ timeout: 30000 });
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '9. Search lists matching lines and opens the chosen one at its line',
      async () => {
        await cleanSlate();
        await wb.runCommand('EchoesVault: Search');
        await quickInputType('gateway');
        const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'token-refresh.md:10' }).first();
        await row.waitFor({ timeout: 30000 });
        await row.click();
        await page.locator('.tab.active', { hasText: 'token-refresh.md' }).waitFor({ timeout: 15000 });
        await waitFor(async () => /Ln 10,/.test(await page.locator('.statusbar').innerText()), {
          timeout: 10000,
          message: 'the cursor on line 10',
        });
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '10. Append to scratchpad writes a new daily entry',
      async () => {
        const before = new Set(dailyFiles());
        await wb.runCommand('EchoesVault: Append to scratchpad');
        await quickInputType('- Checked the scratchpad from VS Code.');
        const created = await waitFor(
          () => dailyFiles().find((f) => !before.has(f) && readFileSync(f, 'utf8').includes('Checked the scratchpad from VS Code.')),
          { timeout: 30000, message: 'a new scratchpad file with the entry' },
        );
        if (!/scratchpad/.test(path.basename(created))) {
          throw new Error(`unexpected daily file name ${created}`);
        }
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '11. Rebuild index reports success',
      async () => {
        await wb.clearNotifications();
        await wb.runCommand('EchoesVault: Rebuild index');
        await waitFor(async () => (await wb.notificationsText()).includes('index rebuilt'), {
          timeout: 30000,
          message: 'the "index rebuilt" notification',
        });
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '12. End session asks in a dialog, then writes the session entry',
      async () => {
        await wb.clearNotifications();
        const before = new Set(dailyFiles());
        await wb.runCommand('EchoesVault: End session');
        await quickInputType('- Finished the VS Code end-to-end run.');
        const dialog = page.locator('.monaco-dialog-box');
        await dialog.waitFor({ timeout: 10000 });
        if (dailyFiles().length !== before.size) {
          throw new Error('a daily file was written before the confirmation');
        }
        await dialog.locator('.monaco-button', { hasText: /^End session$/ }).first().click();
        await waitFor(
          () => dailyFiles().find((f) => !before.has(f) && readFileSync(f, 'utf8').includes('Finished the VS Code end-to-end run.')),
          { timeout: 30000, message: 'a new session file with the summary' },
        );
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '12b. a block without an id: completion inserts the link and the id lands in the target',
      async () => {
        await cleanSlate();
        const target = path.join(workspace, 'EchoesVault', 'pages', 'token-refresh.md');
        await wb.openFile('authentication.md');
        await page.keyboard.press('Control+End');
        await page.keyboard.press('Enter');
        await page.keyboard.type('See [[token-refresh#^', { delay: 50 });
        const suggest = page.locator('.suggest-widget');
        await waitFor(
          async () => {
            const text = (await suggest.first().innerText({ timeout: 1000 })).replace(/\s+/g, ' ');
            return text.includes('Rotation happens in the gateway') && text;
          },
          { timeout: 30000, message: "token-refresh's paragraph in the suggest widget" },
        );
        // The only block of the page: accept it (Tab, which needs no focused row), and VS Code
        // runs the item's command.
        await sleep(500);
        await page.keyboard.press('Tab');
        const id = await waitFor(
          () => {
            const found = /for the boundary\. \^([0-9a-f]{6})\n/.exec(readFileSync(target, 'utf8'));
            return found && found[1];
          },
          { timeout: 30000, message: 'the new id at the end of the paragraph in token-refresh.md' },
        );
        await waitFor(async () => (await wb.editorText()).includes(`[[token-refresh#^${id}]]`), {
          timeout: 10000,
          message: `the link to ^${id} in the editor`,
        });
      },
      { needs: ['4. Save through EchoesVault writes the buffer through the runtime'] },
    );

    await test(
      '13. Restore context opens the context in a Markdown preview',
      async () => {
        await wb.runCommand('EchoesVault: Restore context');
        await page.locator('.tab', { hasText: 'EchoesVault context.md' }).first().waitFor({ timeout: 30000 });
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '14. a server that cannot be found is reported with the fix',
      async () => {
        await wb.clearNotifications();
        mkdirSync(path.dirname(workspaceSettingsFile), { recursive: true });
        writeFileSync(
          workspaceSettingsFile,
          JSON.stringify(
            {
              'echoes.saveThroughRuntime': 'always',
              'echoes.server.path': path.join(root, 'no-such-echoes-lsp'),
              'echoes.server.python': path.join(root, 'no-such-python'),
              // The bundle would run with python3 from PATH; the environment has no echoes-lsp.
              'echoes.server.importStrategy': 'fromEnvironment',
            },
            null,
            2,
          ),
        );
        await waitFor(async () => /importStrategy to useBundled/.test(await wb.notificationsText()), {
          timeout: 60000,
          message: 'the "server not found" notification',
        });
        const button = page.locator('.notifications-toasts .monaco-button', { hasText: 'Open Settings' }).first();
        await button.click({ timeout: 10000 });
        await page.locator('.settings-editor').first().waitFor({ timeout: 15000 });
        await page.locator('.settings-editor', { hasText: 'Server: Path' }).first().waitFor({ timeout: 15000 });
      },
      { needs: ['1. open a page with known defects'] },
    );

    await test(
      '15. Initialize creates a vault in a folder that has none',
      async () => {
        const fresh = path.join(root, 'fresh');
        mkdirSync(fresh, { recursive: true });
        execFileSync('git', ['init', '-q', fresh], { timeout: 30000 });
        await page.goto(`${url}?folder=${encodeURIComponent(fresh)}`, { timeout: 60000 });
        await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
        await page.locator('.statusbar').waitFor({ timeout: 90000 });
        await sleep(2000);
        await wb.runCommand('EchoesVault: Initialize');
        await waitFor(() => existsSync(path.join(fresh, 'EchoesVault', '.echoes-vault.json')), {
          timeout: 60000,
          message: 'EchoesVault/.echoes-vault.json in the new folder',
        });
        await waitFor(async () => /EchoesVault initialized/.test(await wb.notificationsText()), {
          timeout: 30000,
          message: 'the "EchoesVault initialized" notification',
        });
      },
      { needs: ['1. open a page with known defects'] },
    );
  } catch (error) {
    results.push({ name: 'setup', ok: false });
    console.log(`FAIL setup: ${error?.stack ?? error}`);
  } finally {
    if (results.some((r) => !r.ok) && codeServerLog) {
      const logFile = path.join(ARTIFACTS, `vscode-e2e-code-server-${MODE}.log`);
      writeFileSync(logFile, codeServerLog);
      log(`code-server output: ${logFile}`);
    }
    await cleanup();
  }

  const passed = results.filter((r) => r.ok).length;
  const skipped = results.filter((r) => r.skipped).length;
  const failed = results.length - passed - skipped;
  log(`took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(failed + skipped > 0 ? 1 : 0);
}

await main();

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStatus, pickStatus, statusBarView, type VaultStatus } from '../src/status';

const healthy: VaultStatus = {
  workspace: 'file:///w/a',
  integrity: 'healthy',
  issueCount: 0,
  openProblemCount: 0,
  pages: 12,
};

describe('statusBarView', () => {
  it('shows a check for a healthy vault with the page count in the tooltip', () => {
    const view = statusBarView('running', healthy);
    assert.equal(view.text, '$(check) EchoesVault');
    assert.match(view.tooltip, /0 problems in open files, vault healthy, 12 pages/);
    assert.equal(view.tone, 'normal');
  });

  it('names each count: problems in open files beside a healthy vault', () => {
    // The case that read as a contradiction: warnings in the editor, a healthy vault.
    const view = statusBarView('running', { ...healthy, openProblemCount: 3 });
    assert.equal(view.text, '$(check) EchoesVault: 3 problems in open files · vault healthy');
    assert.equal(view.tone, 'normal');
    assert.match(view.tooltip, /Problems: the diagnostics of the pages open in the editor/);
    assert.match(view.tooltip, /the status card also counts the index, adapters, local state and Git/);
    const one = statusBarView('running', { ...healthy, openProblemCount: 1 });
    assert.equal(one.text, '$(check) EchoesVault: 1 problem in open files · vault healthy');
  });

  it('counts vault files when the vault needs attention', () => {
    const view = statusBarView('running', { ...healthy, integrity: 'attention', issueCount: 3 });
    assert.equal(view.text, '$(warning) EchoesVault: 3 vault files need attention');
    assert.equal(view.tone, 'warning');
    assert.equal(
      statusBarView('running', { ...healthy, integrity: 'attention', issueCount: 1, openProblemCount: 2 }).text,
      '$(warning) EchoesVault: 2 problems in open files · 1 vault file needs attention',
    );
  });

  it('names the read-only and uninitialized states', () => {
    assert.equal(statusBarView('running', { ...healthy, integrity: 'read-only' }).text, '$(lock) EchoesVault: read-only');
    assert.equal(
      statusBarView('running', { ...healthy, integrity: 'uninitialized' }).text,
      '$(circle-slash) EchoesVault: not initialized',
    );
  });

  it('shows the client state before any status arrives', () => {
    assert.equal(statusBarView('starting', undefined).text, '$(sync~spin) EchoesVault');
    assert.equal(statusBarView('running', undefined).text, '$(sync~spin) EchoesVault');
    assert.equal(statusBarView('not-found', healthy).tone, 'error');
    assert.equal(statusBarView('stopped', healthy).text, '$(debug-disconnect) EchoesVault');
  });
});

describe('parseStatus', () => {
  it('accepts the contract shape', () => {
    assert.deepEqual(
      parseStatus({ workspace: 'file:///w/a', integrity: 'attention', issueCount: 2, openProblemCount: 4, pages: 5 }),
      { workspace: 'file:///w/a', integrity: 'attention', issueCount: 2, openProblemCount: 4, pages: 5 },
    );
  });

  it('reads a status without openProblemCount (an older server) as no problems', () => {
    const status = parseStatus({ workspace: 'file:///w/a', integrity: 'healthy', issueCount: 0, pages: 5 });
    assert.equal(status?.openProblemCount, 0);
  });

  it('rejects unknown integrity values and non-objects', () => {
    assert.equal(parseStatus({ workspace: 'file:///w', integrity: 'great' }), undefined);
    assert.equal(parseStatus(null), undefined);
    assert.equal(parseStatus('healthy'), undefined);
  });
});

describe('pickStatus', () => {
  const b: VaultStatus = { ...healthy, workspace: 'file:///w/b/', integrity: 'attention', issueCount: 4 };
  const nested: VaultStatus = { ...healthy, workspace: 'file:///w/b/sub', pages: 1 };
  const statuses = new Map([
    [healthy.workspace, healthy],
    [b.workspace, b],
    [nested.workspace, nested],
  ]);

  it('picks the workspace of the active document, the innermost one', () => {
    assert.equal(pickStatus(statuses, 'file:///w/b/EchoesVault/pages/x.md'), b);
    assert.equal(pickStatus(statuses, 'file:///w/b/sub/EchoesVault/pages/x.md'), nested);
  });

  it('does not match a sibling folder with a common prefix', () => {
    assert.equal(pickStatus(new Map([[b.workspace, b]]), 'file:///w/bb/x.md'), b);
    assert.equal(pickStatus(new Map([[nested.workspace, nested], [b.workspace, b]]), 'file:///w/bb/x.md'), nested);
  });

  it('falls back to the first status, or none', () => {
    assert.equal(pickStatus(statuses, undefined), healthy);
    assert.equal(pickStatus(new Map(), 'file:///w/a/x.md'), undefined);
  });
});

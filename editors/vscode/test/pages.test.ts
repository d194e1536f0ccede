import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { baseName, errorText, isStaleError, isVaultPage, searchHits, withoutByteOrderMark } from '../src/pages';

describe('isVaultPage', () => {
  it('accepts top-level pages only', () => {
    assert.equal(isVaultPage('/repo/EchoesVault/pages/auth.md'), true);
    assert.equal(isVaultPage('C:\\repo\\EchoesVault\\pages\\auth.md'), true);
    assert.equal(isVaultPage('/repo/EchoesVault/pages/nested/auth.md'), false);
    assert.equal(isVaultPage('/repo/EchoesVault/index.md'), false);
    assert.equal(isVaultPage('/repo/EchoesVault/daily/2026-01-01/x.md'), false);
    assert.equal(isVaultPage('/repo/docs/pages/auth.md'), false);
    assert.equal(isVaultPage('/repo/EchoesVault/pages/notes.txt'), false);
  });
});

describe('errors', () => {
  it('recognizes EV701 in a server message', () => {
    assert.equal(isStaleError('EV701: auth.md changed on disk since it was opened'), true);
    assert.equal(isStaleError('stale-hash (EV701)'), true);
    assert.equal(isStaleError('EV7010 something else'), false);
    assert.equal(isStaleError('EV104: status missing'), false);
  });

  it('extracts the message of errors and error-like objects', () => {
    assert.equal(errorText(new Error('boom')), 'boom');
    assert.equal(errorText({ code: -32603, message: 'EV701: stale' }), 'EV701: stale');
    assert.equal(errorText('plain'), 'plain');
  });

  it('names the file', () => {
    assert.equal(baseName('/repo/EchoesVault/pages/auth.md'), 'auth.md');
  });
});

describe('searchHits', () => {
  it('keeps well-formed hits', () => {
    const parsed = searchHits({
      ok: true,
      truncated: true,
      results: [
        { file: 'EchoesVault/pages/a.md', line: 3, text: 'JWT' },
        { file: 'EchoesVault/pages/b.md', line: 'x' },
        null,
      ],
    });
    assert.deepEqual(parsed, { hits: [{ file: 'EchoesVault/pages/a.md', line: 3, text: 'JWT' }], truncated: true });
    assert.deepEqual(searchHits(undefined), { hits: [], truncated: false });
  });
});

describe('withoutByteOrderMark', () => {
  it('drops one leading mark, as VS Code shows the file, and nothing else', () => {
    assert.equal(withoutByteOrderMark('\ufeff---\ntype: note\n'), '---\ntype: note\n');
    assert.equal(withoutByteOrderMark('\ufeff\ufeff---'), '\ufeff---');
    assert.equal(withoutByteOrderMark('---\n\ufeff'), '---\n\ufeff');
    assert.equal(withoutByteOrderMark(''), '');
  });
});

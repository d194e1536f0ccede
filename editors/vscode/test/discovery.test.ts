import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  discoverServer,
  findOnPath,
  notFoundMessage,
  serveArgs,
  serverCandidates,
  versionArgs,
  type PathEnvironment,
  type ServerCandidate,
} from '../src/discovery';

function env(executables: string[], overrides: Partial<PathEnvironment> = {}): PathEnvironment {
  return {
    path: '/usr/local/bin:/usr/bin',
    platform: 'linux',
    home: '/home/ada',
    isExecutable: (file) => executables.includes(file),
    ...overrides,
  };
}

describe('serverCandidates', () => {
  it('orders the setting, PATH, then python -m', () => {
    const candidates = serverCandidates(
      { serverPath: '/opt/echoes/bin/echoes-lsp', serverPython: 'python3.12' },
      env(['/usr/bin/echoes-lsp']),
    );
    assert.deepEqual(
      candidates.map((c) => [c.source, c.command, serveArgs(c)]),
      [
        ['setting', '/opt/echoes/bin/echoes-lsp', ['serve']],
        ['path', '/usr/bin/echoes-lsp', ['serve']],
        ['python', 'python3.12', ['-m', 'echoes_lsp', 'serve']],
      ],
    );
  });

  it('skips an empty setting and a missing PATH entry', () => {
    const candidates = serverCandidates({ serverPath: '  ', serverPython: '' }, env([]));
    assert.deepEqual(
      candidates.map((c) => [c.source, c.command]),
      [['python', 'python3']],
    );
  });

  it('takes the first PATH directory that has the executable', () => {
    const found = findOnPath('echoes-lsp', env(['/usr/bin/echoes-lsp', '/usr/local/bin/echoes-lsp']));
    assert.equal(found, '/usr/local/bin/echoes-lsp');
  });

  it('expands ~ in the setting', () => {
    const [first] = serverCandidates({ serverPath: '~/.local/bin/echoes-lsp', serverPython: 'python3' }, env([]));
    assert.equal(first.command, '/home/ada/.local/bin/echoes-lsp');
  });

  it('uses PATHEXT on Windows', () => {
    const found = findOnPath(
      'echoes-lsp',
      env(['C:\\Tools\\echoes-lsp.EXE'], { platform: 'win32', path: 'C:\\Windows;C:\\Tools', pathExt: '.COM;.EXE' }),
    );
    assert.equal(found, 'C:\\Tools\\echoes-lsp.EXE');
  });

  it('probes with --version', () => {
    const [, , python] = serverCandidates({ serverPath: '/x/echoes-lsp', serverPython: 'python3' }, env(['/usr/bin/echoes-lsp']));
    assert.deepEqual(versionArgs(python), ['-m', 'echoes_lsp', '--version']);
  });
});

describe('discoverServer', () => {
  const candidates = serverCandidates(
    { serverPath: '/broken/echoes-lsp', serverPython: 'python3' },
    env(['/usr/bin/echoes-lsp']),
  );

  it('falls through failing candidates in order and records why', async () => {
    const tried: string[] = [];
    const result = await discoverServer(candidates, async (c: ServerCandidate) => {
      tried.push(c.source);
      return c.source === 'path' ? { ok: true, version: 'echoes-lsp 0.1.0' } : { ok: false, reason: 'ENOENT' };
    });
    assert.deepEqual(tried, ['setting', 'path']);
    assert.equal(result.found, true);
    assert.ok(result.found && result.candidate.source === 'path' && result.version === 'echoes-lsp 0.1.0');
    assert.deepEqual(
      result.failures.map((f) => [f.candidate.source, f.reason]),
      [['setting', 'ENOENT']],
    );
  });

  it('reports every failure when nothing works, a throwing probe included', async () => {
    const result = await discoverServer(candidates, async (c) => {
      if (c.source === 'python') {
        throw new Error('No module named echoes_lsp');
      }
      return { ok: false, reason: 'exit 1' };
    });
    assert.equal(result.found, false);
    assert.deepEqual(
      result.failures.map((f) => f.reason),
      ['exit 1', 'exit 1', 'No module named echoes_lsp'],
    );
  });

  it('names both install commands and the setting in the error', () => {
    const message = notFoundMessage();
    assert.match(message, /pipx install echoes-lsp/);
    assert.match(message, /pip install echoes-lsp/);
    assert.match(message, /echoes\.server\.path/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  discoverServer,
  findOnPath,
  interpreterSearch,
  notFoundMessage,
  parseImportStrategy,
  serveArgs,
  serverCandidates,
  versionArgs,
  type DiscoverySettings,
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

const BUNDLE = { launcher: '/ext/bundled/tool/launch.py' };

function settings(overrides: Partial<DiscoverySettings> = {}): DiscoverySettings {
  return { serverPath: '', serverPython: '', importStrategy: 'useBundled', ...overrides };
}

describe('interpreterSearch', () => {
  const everything = env(['/ws/.venv/bin/python', '/usr/bin/python3', '/usr/bin/python']);

  it('tries echoes.server.python, the Python extension, the workspace .venv, then python3 and python on PATH', () => {
    const found = interpreterSearch(
      settings({ serverPython: '~/py/bin/python3.12' }),
      { pythonExtension: '/conda/bin/python', workspaceFolders: ['/ws', '/other'] },
      everything,
    );
    assert.deepEqual(
      found.map((i) => [i.command, i.origin]),
      [
        ['/home/ada/py/bin/python3.12', 'echoes.server.python'],
        ['/conda/bin/python', 'Python extension'],
        ['/ws/.venv/bin/python', 'workspace .venv'],
        ['/usr/bin/python3', 'PATH'],
        ['/usr/bin/python', 'PATH'],
      ],
    );
  });

  it('leaves out what does not exist and repeats nothing', () => {
    const found = interpreterSearch(
      settings(),
      { pythonExtension: '/usr/bin/python3', workspaceFolders: ['/no-venv-here'] },
      env(['/usr/bin/python3']),
    );
    assert.deepEqual(
      found.map((i) => [i.command, i.origin]),
      [['/usr/bin/python3', 'Python extension']],
    );
  });

  it('finds the .venv of a Windows workspace', () => {
    const found = interpreterSearch(
      settings(),
      { workspaceFolders: ['C:\\ws'] },
      env(['C:\\ws\\.venv\\Scripts\\python.exe'], { platform: 'win32', path: '' }),
    );
    assert.deepEqual(found.map((i) => i.command), ['C:\\ws\\.venv\\Scripts\\python.exe']);
  });
});

describe('serverCandidates', () => {
  const pythons = interpreterSearch(settings(), { workspaceFolders: ['/ws'] }, env(['/ws/.venv/bin/python', '/usr/bin/python3']));

  it('useBundled runs the bundle with each interpreter, in isolated mode', () => {
    const candidates = serverCandidates(settings(), pythons, BUNDLE, env(['/usr/bin/echoes-lsp']));
    assert.deepEqual(
      candidates.map((c) => [c.source, c.command, serveArgs(c)]),
      [
        ['bundled', '/ws/.venv/bin/python', ['-I', BUNDLE.launcher, 'serve']],
        ['bundled', '/usr/bin/python3', ['-I', BUNDLE.launcher, 'serve']],
      ],
    );
  });

  it('echoes.server.path comes first whatever the strategy', () => {
    const candidates = serverCandidates(settings({ serverPath: '~/bin/echoes-lsp' }), pythons, BUNDLE, env([]));
    assert.deepEqual(candidates[0], {
      source: 'setting',
      command: '/home/ada/bin/echoes-lsp',
      baseArgs: [],
      label: 'echoes.server.path (/home/ada/bin/echoes-lsp)',
    });
    assert.equal(candidates[1].source, 'bundled');
  });

  it('fromEnvironment orders echoes-lsp on PATH, then python -m echoes_lsp per interpreter', () => {
    const candidates = serverCandidates(
      settings({ importStrategy: 'fromEnvironment' }),
      pythons,
      BUNDLE,
      env(['/usr/bin/echoes-lsp']),
    );
    assert.deepEqual(
      candidates.map((c) => [c.source, c.command, serveArgs(c)]),
      [
        ['path', '/usr/bin/echoes-lsp', ['serve']],
        ['python', '/ws/.venv/bin/python', ['-m', 'echoes_lsp', 'serve']],
        ['python', '/usr/bin/python3', ['-m', 'echoes_lsp', 'serve']],
      ],
    );
  });

  it('without a bundle, useBundled looks in the environment', () => {
    const candidates = serverCandidates(settings(), pythons, undefined, env([]));
    assert.deepEqual(
      candidates.map((c) => c.source),
      ['python', 'python'],
    );
  });

  it('reads the strategy setting, defaulting to useBundled', () => {
    assert.equal(parseImportStrategy('fromEnvironment'), 'fromEnvironment');
    assert.equal(parseImportStrategy(undefined), 'useBundled');
    assert.equal(parseImportStrategy('bogus'), 'useBundled');
  });

  it('takes the first PATH directory that has the executable', () => {
    const found = findOnPath('echoes-lsp', env(['/usr/bin/echoes-lsp', '/usr/local/bin/echoes-lsp']));
    assert.equal(found, '/usr/local/bin/echoes-lsp');
  });

  it('uses PATHEXT on Windows', () => {
    const found = findOnPath(
      'echoes-lsp',
      env(['C:\\Tools\\echoes-lsp.EXE'], { platform: 'win32', path: 'C:\\Windows;C:\\Tools', pathExt: '.COM;.EXE' }),
    );
    assert.equal(found, 'C:\\Tools\\echoes-lsp.EXE');
  });

  it('probes with --version', () => {
    const [bundled] = serverCandidates(settings(), pythons, BUNDLE, env([]));
    assert.deepEqual(versionArgs(bundled), ['-I', BUNDLE.launcher, '--version']);
    const [python] = serverCandidates(settings({ importStrategy: 'fromEnvironment' }), pythons, BUNDLE, env([]));
    assert.deepEqual(versionArgs(python), ['-m', 'echoes_lsp', '--version']);
  });
});

describe('discoverServer', () => {
  const pythons = interpreterSearch(settings(), { workspaceFolders: [] }, env(['/usr/bin/python3']));
  const candidates = serverCandidates(
    settings({ serverPath: '/broken/echoes-lsp', importStrategy: 'fromEnvironment' }),
    pythons,
    undefined,
    env(['/usr/bin/echoes-lsp', '/usr/bin/python3']),
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
});

describe('notFoundMessage', () => {
  const failure = {
    candidate: serverCandidates(settings(), [{ command: '/usr/bin/python3', origin: 'PATH' }], BUNDLE, env([]))[0],
    reason: 'echoes-lsp needs Python 3.9 or newer; /usr/bin/python3 is Python 3.8',
  };

  it('without a usable Python: names what was tried and the exact fix', () => {
    const message = notFoundMessage([failure], true);
    assert.match(message, /no Python 3\.9 or newer/);
    assert.match(message, /\/usr\/bin\/python3 \(echoes-lsp needs Python 3\.9 or newer; \/usr\/bin\/python3 is Python 3\.8\)/);
    assert.match(message, /install Python 3\.9\+/);
    assert.match(message, /echoes\.server\.python/);
    assert.doesNotMatch(message, /pipx install echoes-lsp/);
  });

  it('fromEnvironment: points back to the bundle and gives an install command that works today', () => {
    const message = notFoundMessage([], false);
    assert.match(message, /echoes\.server\.importStrategy to useBundled/);
    assert.match(message, /python3 -m pip install \.\/echoes_lsp-<version>-py3-none-any\.whl/);
    assert.match(message, /echoes\.server\.path/);
    assert.doesNotMatch(message, /pipx install echoes-lsp/);
  });
});

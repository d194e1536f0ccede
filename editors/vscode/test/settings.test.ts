import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configurationFor, saveMode, severityMap, toServerSettings } from '../src/settings';

function reader(values: Record<string, unknown>) {
  return (key: string) => values[key];
}

describe('toServerSettings', () => {
  it('gives the contract defaults when nothing is set', () => {
    assert.deepEqual(toServerSettings(reader({})), {
      runtime: { python: '', timeout: 30 },
      diagnostics: { debounce: 150, severity: {} },
      secrets: { enabled: true },
      exclude: [],
      agent: 'echoes-lsp',
      index: { hydrateOnSave: true },
    });
  });

  it('maps every server setting to its nested key', () => {
    const settings = toServerSettings(
      reader({
        'runtime.python': ' /usr/bin/python3.12 ',
        'runtime.timeout': 5,
        'diagnostics.debounce': 0,
        'diagnostics.severity': { EV300: 'error', ev311: 'OFF' },
        'secrets.enabled': false,
        exclude: ['drafts/**', 7, ''],
        agent: 'vscode',
        'index.hydrateOnSave': false,
        'server.path': '/ignored',
      }),
    );
    assert.deepEqual(settings, {
      runtime: { python: '/usr/bin/python3.12', timeout: 5 },
      diagnostics: { debounce: 0, severity: { EV300: 'error', EV311: 'off' } },
      secrets: { enabled: false },
      exclude: ['drafts/**'],
      agent: 'vscode',
      index: { hydrateOnSave: false },
    });
  });

  it('replaces invalid values by defaults and sends an unset python as empty', () => {
    const settings = toServerSettings(
      reader({ 'runtime.python': null, 'runtime.timeout': -1, 'diagnostics.debounce': 'fast', agent: '  ' }),
    );
    // The server keeps a key that is not sent; "" resets it to the server's own Python.
    assert.equal(settings.runtime.python, '');
    assert.equal(settings.runtime.timeout, 30);
    assert.equal(settings.diagnostics.debounce, 150);
    assert.equal(settings.agent, 'echoes-lsp');
  });

  it('drops unknown codes and levels from the severity map', () => {
    assert.deepEqual(severityMap({ EV1: 'error', EV200: 'loud', EV402: 'hint' }), { EV402: 'hint' });
    assert.deepEqual(severityMap(['EV100']), {});
  });
});

describe('configurationFor', () => {
  const settings = toServerSettings(reader({ 'runtime.timeout': 9 }));

  it('answers the whole section and its parts', () => {
    assert.equal(configurationFor('echoes', settings), settings);
    assert.deepEqual(configurationFor('echoes.runtime', settings), { python: '', timeout: 9 });
    assert.equal(configurationFor('echoes.runtime.timeout', settings), 9);
  });

  it('leaves other sections and unknown keys to VS Code', () => {
    assert.equal(configurationFor('files', settings), undefined);
    assert.equal(configurationFor(undefined, settings), undefined);
    assert.equal(configurationFor('echoes.server.path', settings), undefined);
  });
});

describe('saveMode', () => {
  it('accepts ask and always, anything else is off', () => {
    assert.equal(saveMode('always'), 'always');
    assert.equal(saveMode('ask'), 'ask');
    assert.equal(saveMode('sometimes'), 'off');
    assert.equal(saveMode(undefined), 'off');
  });
});

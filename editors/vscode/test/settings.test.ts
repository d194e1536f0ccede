import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { configurationFor, EDITOR_KEYS, saveMode, severityMap, toServerSettings } from '../src/settings';

interface Contributed {
  type: string;
  default: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
}

/** The settings `package.json` contributes (the compiled test runs from `out/test/`). */
const CONTRIBUTED: Record<string, Contributed> = JSON.parse(
  readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8'),
).contributes.configuration.properties;

const SERVER_KEYS = Object.keys(CONTRIBUTED).filter((key) => !EDITOR_KEYS.includes(key));

/** The value at a dotted key below `echoes.` in the object sent to the server. */
function sent(settings: unknown, key: string): unknown {
  return configurationFor(key, settings as ReturnType<typeof toServerSettings>);
}

/** A valid value other than the default, of the setting's type and within its range. */
function another(setting: Contributed): unknown {
  switch (setting.type) {
    case 'number':
    case 'integer': {
      const value = (setting.default as number) + 1;
      return setting.maximum !== undefined && value > setting.maximum ? setting.maximum - 1 : value;
    }
    case 'boolean':
      return !setting.default;
    case 'string':
      return 'chosen';
    case 'array':
      return ['raw/**'];
    default:
      return { EV300: 'error' };
  }
}

function reader(values: Record<string, unknown>) {
  return (key: string) => values[key];
}

describe('toServerSettings', () => {
  it('gives the contract defaults when nothing is set', () => {
    assert.deepEqual(toServerSettings(reader({})), {
      runtime: { python: '', timeout: 30 },
      diagnostics: { debounce: 150, severity: {}, maxPerDocument: 1000 },
      secrets: { enabled: true },
      exclude: [],
      agent: 'echoes-lsp',
      watch: { pollInterval: 2 },
      index: { hydrateOnSave: true },
      inlayHints: { blockText: true, deprecated: true },
    });
  });

  it('maps every server setting to its nested key', () => {
    const settings = toServerSettings(
      reader({
        'runtime.python': ' /usr/bin/python3.12 ',
        'runtime.timeout': 5,
        'diagnostics.debounce': 0,
        'diagnostics.severity': { EV300: 'error', ev311: 'OFF' },
        'diagnostics.maxPerDocument': 0,
        'secrets.enabled': false,
        exclude: ['drafts/**', 7, ''],
        agent: 'vscode',
        'watch.pollInterval': 0,
        'index.hydrateOnSave': false,
        'inlayHints.blockText': false,
        'inlayHints.deprecated': false,
        'server.path': '/ignored',
      }),
    );
    assert.deepEqual(settings, {
      runtime: { python: '/usr/bin/python3.12', timeout: 5 },
      diagnostics: { debounce: 0, severity: { EV300: 'error', EV311: 'off' }, maxPerDocument: 0 },
      secrets: { enabled: false },
      exclude: ['drafts/**'],
      agent: 'vscode',
      watch: { pollInterval: 0 },
      index: { hydrateOnSave: false },
      inlayHints: { blockText: false, deprecated: false },
    });
  });

  it('sends every server setting of package.json, with its default when unset', () => {
    assert.ok(SERVER_KEYS.includes('echoes.diagnostics.maxPerDocument'));
    const defaults = toServerSettings(reader({}));
    for (const key of SERVER_KEYS) {
      assert.deepEqual(sent(defaults, key), CONTRIBUTED[key].default, key);
      const value = another(CONTRIBUTED[key]);
      const chosen = toServerSettings(reader({ [key.slice('echoes.'.length)]: value }));
      assert.deepEqual(sent(chosen, key), value, key);
    }
  });

  it('sends nothing package.json does not declare', () => {
    const leaves = (value: unknown, prefix: string): string[] =>
      value !== null && typeof value === 'object' && !Array.isArray(value) && prefix !== 'echoes.diagnostics.severity'
        ? Object.entries(value).flatMap(([key, inner]) => leaves(inner, `${prefix}.${key}`))
        : [prefix];
    assert.deepEqual(leaves(toServerSettings(reader({})), 'echoes').sort(), [...SERVER_KEYS].sort());
  });

  it('replaces a negative or fractional cap and a negative poll interval by the defaults', () => {
    const settings = toServerSettings(
      reader({ 'diagnostics.maxPerDocument': 2.5, 'watch.pollInterval': -1 }),
    );
    assert.equal(settings.diagnostics.maxPerDocument, 1000);
    assert.equal(settings.watch.pollInterval, 2);
    assert.equal(toServerSettings(reader({ 'diagnostics.maxPerDocument': -1 })).diagnostics.maxPerDocument, 1000);
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

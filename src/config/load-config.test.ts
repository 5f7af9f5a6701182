import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_SCHEMA } from './config-schema.js';
import { ConfigError, defaultConfigObject, loadConfig } from './load-config.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-config-'));
const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};

describe('loadConfig', () => {
  it('config/default.json holds exactly the schema defaults', () => {
    expect(JSON.parse(readFileSync('config/default.json', 'utf8'))).toEqual(defaultConfigObject());
  });

  it('every key has an env var, a description and a default that passes its own check', () => {
    const envs = new Set<string>();
    for (const e of CONFIG_SCHEMA) {
      expect(e.env).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(envs.has(e.env), e.env).toBe(false);
      envs.add(e.env);
      expect(e.description.length).toBeGreaterThan(10);
    }
    expect(() => loadConfig({ env: {}, defaultFile: '/nonexistent' })).not.toThrow();
  });

  it('the README config table lists every key with its environment variable', () => {
    const readme = readFileSync('README.md', 'utf8');
    for (const e of CONFIG_SCHEMA)
      expect(readme, e.key).toContain(`| \`${e.key}\` | \`${e.env}\` |`);
  });

  it('layers file, GATEWAY_CONFIG file and environment in that order', () => {
    const base = file('base.json', { http: { port: 4000 }, log: { level: 'warn' } });
    const local = file('local.json', { http: { port: 4001 }, sip: { transports: ['udp'] } });
    const config = loadConfig({
      defaultFile: base,
      env: { GATEWAY_CONFIG: local, GATEWAY_LOG_LEVEL: 'debug', GATEWAY_RTP_SYMMETRIC: 'false' },
    });
    expect(config.http.port).toBe(4001);
    expect(config.log.level).toBe('debug');
    expect(config.sip.transports).toEqual(['udp']);
    expect(config.rtp.symmetric).toBe(false);
    expect(config.http.host).toBe('127.0.0.1');
  });

  it('reports every problem at once', () => {
    const bad = file('bad.json', { http: { port: 'eighty' }, nope: { x: 1 } });
    try {
      loadConfig({
        defaultFile: bad,
        env: {
          GATEWAY_SIP_ENGINE: 'asterisk',
          GATEWAY_RTP_PORT_MIN: '30000',
          GATEWAY_RTP_PORT_MAX: '20000',
          GATEWAY_SIP_T1_MS: 'x',
        },
      });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const text = (err as ConfigError).problems.join('\n');
      expect(text).toContain('http.port');
      expect(text).toContain('unknown key nope.x');
      expect(text).toContain('sip.engine');
      expect(text).toContain('GATEWAY_SIP_T1_MS=x');
      expect(text).toContain('rtp.portMin must be below rtp.portMax');
    }
  });

  it('refuses a file that is not JSON and a missing GATEWAY_CONFIG file, without echoing secrets', () => {
    expect(() => loadConfig({ defaultFile: file('broken.json', '{'), env: {} })).toThrow(
      /not valid JSON/,
    );
    expect(() =>
      loadConfig({ defaultFile: '/nonexistent', env: { GATEWAY_CONFIG: '/nonexistent.json' } }),
    ).toThrow(/does not exist/);
    expect(() =>
      loadConfig({ defaultFile: '/nonexistent', env: { DRACHTIO_PORT: 'secret-ish' } }),
    ).toThrow(/DRACHTIO_PORT/);
  });
});

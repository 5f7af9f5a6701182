// The real daemon over a real socket and a real SQLite file, started the way
// the README says: bootstrap key, trunk, agent, initiate-call, read back,
// restart keeps the record, SIGTERM exits cleanly, a bad config exits 2.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { run, startDaemon, type Daemon } from './support/daemon.js';

const KEY = 'bootstrap-test-key-0123456789';
const daemons: Daemon[] = [];
afterAll(async () => {
  await Promise.all(daemons.map((d) => d.stop('SIGKILL')));
});

describe('daemon started with npm start', () => {
  it('serves the README walk-through and keeps the call across a restart', async () => {
    const d = await startDaemon({ GATEWAY_BOOTSTRAP_API_KEY: KEY });
    daemons.push(d);
    const h = { 'x-api-key': KEY };
    expect((await d.api('GET', '/healthz')).status).toBe(200);
    expect((await d.api('GET', '/readyz')).json).toEqual({ status: 'ready' });

    const trunk = await d.api(
      'POST',
      '/api/v1/phones/sip-trunks',
      {
        name: 'carrier',
        host: '127.0.0.1',
        port: 5080,
        isDefault: true,
        callerIds: ['+12125550100'],
        defaultCallerId: '+12125550100',
      },
      h,
    );
    expect(trunk.status).toBe(201);
    const agent = await d.api(
      'POST',
      '/api/v1/agents',
      { name: 'sales', websocketUrl: 'ws://127.0.0.1:8765/agent' },
      h,
    );
    expect(agent.status).toBe(201);
    const call = await d.api(
      'POST',
      '/api/v1/phones/calls/initiate-call',
      {
        destinationNumber: '+12125551234',
        agentId: agent.json.id,
        useAntiHarassmentProtection: true,
        // A week ahead, so the call waits in the store whatever the hour now.
        scheduledAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      },
      h,
    );
    expect(call.status, JSON.stringify(call.json)).toBe(200);
    expect(call.json.scheduled).toBe(true);

    const bad = await d.api(
      'POST',
      '/api/v1/phones/calls/initiate-call',
      { destinationNumber: '555-1234', agentId: agent.json.id },
      h,
    );
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe('invalid_destination_number');
    expect(
      (await d.api('GET', '/api/v1/agents', undefined, { authorization: `Bearer ${KEY}` })).status,
    ).toBe(401);

    const metrics = await fetch(`${d.baseUrl}/metrics`);
    expect(await metrics.text()).toContain('process_cpu_seconds_total');

    expect(await d.stop('SIGTERM')).toBe(0);
    expect(d.output()).toContain('"msg":"stopped"');
    expect(d.output()).not.toContain('+12125551234');
    expect(d.output()).not.toContain(KEY);

    // The record is in the SQLite file, and a restarted daemon serves it.
    const db = new Database(d.dbPath, { readonly: true });
    expect(
      (
        db.prepare('SELECT status FROM calls WHERE call_id = ?').get(call.json.callId) as {
          status: string;
        }
      ).status,
    ).toBe('scheduled');
    db.close();
    const again = await startDaemon({ GATEWAY_DB_PATH: d.dbPath, GATEWAY_BOOTSTRAP_API_KEY: KEY });
    daemons.push(again);
    const read = await again.api('GET', `/api/v1/phones/calls/${call.json.callId}`, undefined, h);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({
      callId: call.json.callId,
      phoneNumber: '+12125551234',
      status: 'scheduled',
    });
    expect(await again.stop('SIGTERM')).toBe(0);
  });

  it('on the drachtio engine without a drachtio-server: serves HTTP, /readyz says not ready', async () => {
    const d = await startDaemon({
      GATEWAY_SIP_ENGINE: 'drachtio',
      DRACHTIO_HOST: '127.0.0.1',
      DRACHTIO_PORT: '9',
    });
    daemons.push(d);
    expect((await d.api('GET', '/healthz')).status).toBe(200);
    const ready = await d.api('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.json).toEqual({ status: 'not_ready', reason: 'drachtio-server not connected' });
    expect(await d.stop('SIGTERM')).toBe(0);
  });

  it('exits 2 with a clear message on a bad config', async () => {
    const { code, out } = await run('npm', ['start', '--silent'], {
      GATEWAY_HTTP_PORT: 'eighty',
      GATEWAY_DB_PATH: ':memory:',
    });
    expect(code).toBe(2);
    expect(out).toContain('invalid configuration');
    expect(out).toContain('GATEWAY_HTTP_PORT=eighty');
  });

  it('the CLI creates a company and a key that the daemon accepts', async () => {
    const d = await startDaemon();
    daemons.push(d);
    const env = { GATEWAY_DB_PATH: d.dbPath };
    const company = JSON.parse(
      (await run('npm', ['run', '-s', 'cli', '--', 'company', 'create', '--name', 'cli-co'], env))
        .out,
    );
    const key = JSON.parse(
      (
        await run(
          'npm',
          [
            'run',
            '-s',
            'cli',
            '--',
            'key',
            'create',
            '--company',
            company.id,
            '--name',
            'ops',
            '--groups',
            'Agents',
          ],
          env,
        )
      ).out,
    );
    expect(key.key).toMatch(/^ocg_/);
    expect(
      (await d.api('GET', '/api/v1/agents', undefined, { 'x-api-key': key.key })).json,
    ).toEqual({ items: [] });
    expect(
      (await d.api('GET', '/api/v1/phones/sip-trunks', undefined, { 'x-api-key': key.key })).status,
    ).toBe(403);
    await d.stop('SIGTERM');
  });

  it('the CLI refuses a trunk whose SIP-bound values carry CR, LF or NUL, and stores nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-cli-'));
    const env = { GATEWAY_DB_PATH: join(dir, 'cli.sqlite') };
    const cli = (...args: string[]) => run('npm', ['run', '-s', 'cli', '--', ...args], env);
    const company = JSON.parse((await cli('company', 'create', '--name', 'cli-co')).out);
    const trunk = (...extra: string[]) =>
      cli(
        'trunk',
        'create',
        '--company',
        company.id,
        '--name',
        't',
        '--host',
        'sip.example.net',
        ...extra,
      );
    for (const [flag, value] of [
      ['--username', 'u\r\nX-Injected: 1'],
      ['--password', 'p\u0007'], // a NUL cannot travel in argv; another control can
      ['--caller-id', '+12125550100\n'],
    ] as const) {
      const res = await trunk(flag, value);
      expect(res.code, res.out).not.toBe(0);
      expect(res.out).toContain(`${flag} is not valid in a SIP message`);
    }
    const bad = await cli(
      'trunk',
      'create',
      '--company',
      company.id,
      '--name',
      't',
      '--host',
      'a\r\nb',
    );
    expect(bad.code).not.toBe(0);
    expect(JSON.parse((await cli('trunk', 'list', '--company', company.id)).out)).toEqual([]);
    expect((await trunk('--username', 'fine')).code).toBe(0);
  });

  it('the CLI refuses an unspecified or malformed --ip for a key (it would lock the key out)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-cli-'));
    const env = { GATEWAY_DB_PATH: join(dir, 'cli.sqlite') };
    const cli = (...args: string[]) => run('npm', ['run', '-s', 'cli', '--', ...args], env);
    const company = JSON.parse((await cli('company', 'create', '--name', 'ip-co')).out);
    for (const ip of ['0.0.0.0', '::', '::0', 'not-an-ip']) {
      const res = await cli('key', 'create', '--company', company.id, '--name', 'k', '--ip', ip);
      expect(res.code, ip).toBe(2);
      expect(res.out).toContain('--ip must be the single client address');
    }
    expect(
      (await cli('key', 'create', '--company', company.id, '--name', 'k', '--ip', '::1')).code,
    ).toBe(0);
  });
});

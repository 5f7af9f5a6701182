// Issue 23: the transaction budgets and the stateless responder, driven by a
// fake clock and a fake transport.
import { describe, expect, it, vi } from 'vitest';
import { parseMessage } from '../message/index.js';
import type { SipRequest } from '../message/types.js';
import { FakeClock } from '../transport/fake-clock.js';
import { createSipStats } from '../transport/stats.js';
import type { Endpoint } from '../transport/types.js';
import { createResponse } from './create-response.js';
import { FakeTransport } from './fake-transport.js';
import { timerValues } from './timers.js';
import { TransactionLayer } from './transaction-layer.js';

const SRC: Endpoint = { transport: 'udp', host: '127.0.0.1', port: 5070 };
const T = timerValues();

function request(method: string, n: number, toTag?: string): SipRequest {
  const text =
    `${method} sip:bob@127.0.0.1 SIP/2.0\r\n` +
    `Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK${n}\r\n` +
    `Max-Forwards: 70\r\nFrom: <sip:a@x>;tag=f${n}\r\nTo: <sip:bob@127.0.0.1>${toTag ? `;tag=${toTag}` : ''}\r\n` +
    `Call-ID: c${n}@x\r\nCSeq: 1 ${method}\r\nContent-Length: 0\r\n\r\n`;
  return parseMessage(Buffer.from(text)) as SipRequest;
}

function setup(max: { servers?: number; clients?: number }) {
  const clock = new FakeClock();
  const transport = new FakeTransport();
  const stats = createSipStats();
  const layer = new TransactionLayer(transport, {
    clock,
    timers: T,
    stats,
    maxServerTransactions: max.servers,
    maxClientTransactions: max.clients,
  });
  const seen: string[] = [];
  layer.onRequest((req, _src, tx) => {
    seen.push(req.method);
    tx?.respond(createResponse(req, 486, 'Busy Here', { toTag: 'x' }));
  });
  return { clock, transport, stats, layer, seen };
}

describe('server transaction budget', () => {
  it('at the budget a new request gets one stateless 503 with Retry-After and no transaction', () => {
    const { transport, layer, stats, seen, clock } = setup({ servers: 3 });
    for (let n = 0; n < 5; n++) layer.handleMessage(request('INVITE', n), SRC);
    expect(layer.size().servers).toBe(3);
    expect(seen).toHaveLength(3);
    const lines = transport.startLines();
    expect(lines.filter((l) => l.startsWith('SIP/2.0 503'))).toHaveLength(2);
    expect(transport.sent.find((s) => s.text.startsWith('SIP/2.0 503'))!.text).toContain(
      'Retry-After: 5',
    );
    expect(stats.statelessResponses).toBe(2);
    // the 503s are never sent again; the 486s of the transactions are (Timer G)
    const before503 = lines.filter((l) => l.startsWith('SIP/2.0 503')).length;
    clock.advance(T.TIMER_H);
    expect(transport.startLines().filter((l) => l.startsWith('SIP/2.0 503'))).toHaveLength(
      before503,
    );
    // room again once the transactions ended
    expect(layer.size().servers).toBe(0);
    layer.handleMessage(request('INVITE', 9), SRC);
    expect(layer.size().servers).toBe(1);
  });

  it('a retransmission of a request that holds a transaction is absorbed at the budget', () => {
    const { transport, layer } = setup({ servers: 1 });
    layer.handleMessage(request('OPTIONS', 1), SRC);
    layer.handleMessage(request('OPTIONS', 1), SRC);
    expect(transport.startLines()).toEqual(['SIP/2.0 486 Busy Here', 'SIP/2.0 486 Busy Here']);
  });

  it('priority requests (live dialogs) pass the budget up to a reserve, never beyond', () => {
    const { layer } = setup({ servers: 10 });
    layer.onAdmission((req) => (req.method === 'BYE' ? 'priority' : 'transaction'));
    for (let n = 0; n < 10; n++) layer.handleMessage(request('INVITE', n), SRC);
    for (let n = 100; n < 400; n++) layer.handleMessage(request('BYE', n, 't'), SRC);
    // reserve: max(100, a tenth of the budget)
    expect(layer.size().servers).toBe(10 + 100);
  });

  it('the admission hook may answer statelessly and keep nothing', () => {
    const { transport, layer, seen } = setup({});
    layer.onAdmission((req, src) => {
      const stx = layer.stateless(req, src);
      stx.respond(createResponse(req, 100, 'Trying')); // §8.2.7: no 1xx statelessly
      stx.respond(createResponse(req, 403, 'Forbidden', { toTag: stx.toTag }));
      stx.respond(createResponse(req, 500, 'Again'));
      return 'handled';
    });
    layer.handleMessage(request('INVITE', 1), SRC);
    layer.handleMessage(request('INVITE', 1), SRC); // a retransmission: answered alike
    expect(seen).toEqual([]);
    expect(layer.size().servers).toBe(0);
    expect(transport.startLines()).toEqual(['SIP/2.0 403 Forbidden', 'SIP/2.0 403 Forbidden']);
    const tags = transport.sent.map((s) => /\r\nTo: [^\r]*;tag=(\w+)/.exec(s.text)?.[1]);
    expect(tags[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(tags[1]).toBe(tags[0]); // §8.2.7: the same request gets the same To tag
    layer.handleMessage(request('INVITE', 2), SRC);
    const other = /\r\nTo: [^\r]*;tag=(\w+)/.exec(transport.sent[2]!.text)?.[1];
    expect(other).not.toBe(tags[0]);
  });
});

describe('client transaction budget', () => {
  const dest: Endpoint = { transport: 'udp', host: '127.0.0.1', port: 5080 };
  const tu = () => ({ onResponse: vi.fn(), onTimeout: vi.fn(), onTransportError: vi.fn() });

  it('a new INVITE or OPTIONS over the budget is not sent and fails with a local 503 after sendRequest returns', () => {
    const { transport, layer, stats, clock } = setup({ clients: 2 });
    layer.sendRequest(request('INVITE', 1), 'z9hG4bK1', dest, tu());
    layer.sendRequest(request('OPTIONS', 2), 'z9hG4bK2', dest, tu());
    const refused = tu();
    const tx = layer.sendRequest(request('INVITE', 3), 'z9hG4bK3', dest, refused);
    expect(tx.state).toBe('terminated');
    expect(refused.onResponse).not.toHaveBeenCalled();
    clock.advance(0);
    expect(refused.onResponse).toHaveBeenCalledTimes(1);
    const res = refused.onResponse.mock.calls[0]![0];
    expect(res.status).toBe(503);
    expect(res.headers.find((h: { name: string }) => h.name === 'warning')?.value).toContain(
      'local client transaction budget reached',
    );
    expect(transport.startLines().filter((l) => l.startsWith('INVITE'))).toHaveLength(1);
    expect(stats.clientTransactionsRefused).toBe(1);
    expect(layer.size().clients).toBe(2);
  });

  it('requests of live calls (in a dialog, CANCEL) still go over the budget', () => {
    const { transport, layer, stats } = setup({ clients: 1 });
    layer.sendRequest(request('INVITE', 1), 'z9hG4bK1', dest, tu());
    layer.sendRequest(request('BYE', 2, 'far'), 'z9hG4bK2', dest, tu());
    layer.sendRequest(request('CANCEL', 1), 'z9hG4bK1', dest, tu());
    expect(transport.startLines().map((l) => l.split(' ')[0])).toEqual(['INVITE', 'BYE', 'CANCEL']);
    expect(stats.clientTransactionsRefused).toBe(0);
  });
});

// The four RFC 3261 §17 state machines (plus RFC 6026) driven by a fake
// clock and a fake transport, through the transaction layer's matching.

import { describe, expect, it, vi } from 'vitest';
import { parseMessage } from '../message/index.js';
import type { SipRequest, SipResponse } from '../message/types.js';
import { FakeClock } from '../transport/fake-clock.js';
import { createSipStats } from '../transport/stats.js';
import type { Endpoint } from '../transport/types.js';
import { createResponse } from './create-response.js';
import { FakeTransport } from './fake-transport.js';
import { timerValues } from './timers.js';
import { TransactionLayer } from './transaction-layer.js';
import type { ServerTransaction } from './transaction-types.js';

const UDP: Endpoint = { transport: 'udp', host: '127.0.0.1', port: 5080 };
const TCP: Endpoint = { transport: 'tcp', host: '127.0.0.1', port: 5080 };
const T = timerValues(); // T1 500, T2 4000, T4 5000

function request(method: string, branch = 'z9hG4bKabc', transport = 'UDP', cseq = 1): SipRequest {
  const text =
    `${method} sip:bob@127.0.0.1 SIP/2.0\r\n` +
    `Via: SIP/2.0/${transport} 127.0.0.1:5070;branch=${branch}\r\n` +
    'Max-Forwards: 70\r\nFrom: <sip:a@x>;tag=f1\r\nTo: <sip:bob@127.0.0.1>\r\n' +
    `Call-ID: c1@x\r\nCSeq: ${cseq} ${method}\r\nContent-Length: 0\r\n\r\n`;
  return parseMessage(Buffer.from(text)) as SipRequest;
}

function response(req: SipRequest, status: number, reason = 'X'): SipResponse {
  return parseMessage(
    Buffer.from(serializeResponse(createResponse(req, status, reason, { toTag: 't9' }))),
  ) as SipResponse;
}

function serializeResponse(res: SipResponse): string {
  return `SIP/2.0 ${res.status} ${res.reason}\r\n${res.headers.map((h) => `${h.name}: ${h.value}`).join('\r\n')}\r\n\r\n`;
}

function setup() {
  const clock = new FakeClock();
  const transport = new FakeTransport();
  const stats = createSipStats();
  const layer = new TransactionLayer(transport, { clock, timers: T, stats });
  const tu = { onResponse: vi.fn(), onTimeout: vi.fn(), onTransportError: vi.fn() };
  return { clock, transport, stats, layer, tu };
}

describe('INVITE client transaction (§17.1.1)', () => {
  it('Timer A doubles from T1 until Timer B = 64*T1 times out', () => {
    const { clock, transport, layer, tu } = setup();
    layer.sendRequest(request('INVITE'), 'z9hG4bKabc', UDP, tu);
    expect(transport.sent).toHaveLength(1);
    clock.advance(T.T1);
    expect(transport.sent).toHaveLength(2);
    clock.advance(2 * T.T1);
    expect(transport.sent).toHaveLength(3);
    clock.advance(T.TIMER_B - 3 * T.T1 - 1);
    // sends at 0, .5, 1.5, 3.5, 7.5, 15.5, 31.5 s
    expect(transport.sent).toHaveLength(7);
    expect(tu.onTimeout).not.toHaveBeenCalled();
    clock.advance(1);
    expect(tu.onTimeout).toHaveBeenCalledOnce();
    expect(layer.size().clients).toBe(0);
  });

  it('no Timer A on TCP', () => {
    const { clock, transport, layer, tu } = setup();
    layer.sendRequest(request('INVITE', 'z9hG4bKabc', 'TCP'), 'z9hG4bKabc', TCP, tu);
    clock.advance(T.TIMER_B - 1);
    expect(transport.sent).toHaveLength(1);
    clock.advance(1);
    expect(tu.onTimeout).toHaveBeenCalledOnce();
  });

  it('a provisional stops retransmissions and Timer B', () => {
    const { clock, transport, layer, tu } = setup();
    const inv = request('INVITE');
    layer.sendRequest(inv, 'z9hG4bKabc', UDP, tu);
    layer.handleMessage(response(inv, 180), UDP);
    clock.advance(T.TIMER_B * 2);
    expect(transport.sent).toHaveLength(1);
    expect(tu.onTimeout).not.toHaveBeenCalled();
    expect(tu.onResponse).toHaveBeenCalledOnce();
  });

  it('non-2xx: ACK with the same branch, again on a retransmission, Timer D ends it', () => {
    const { clock, transport, layer, tu } = setup();
    const inv = request('INVITE');
    layer.sendRequest(inv, 'z9hG4bKabc', UDP, tu);
    const busy = response(inv, 486, 'Busy Here');
    layer.handleMessage(busy, UDP);
    expect(transport.startLines()[1]).toBe('ACK sip:bob@127.0.0.1 SIP/2.0');
    expect(transport.sent[1]!.text).toContain('branch=z9hG4bKabc');
    expect(transport.sent[1]!.text).toContain('CSeq: 1 ACK');
    expect(transport.sent[1]!.text).toContain(';tag=t9');
    layer.handleMessage(busy, UDP);
    expect(transport.startLines().filter((l) => l.startsWith('ACK'))).toHaveLength(2);
    expect(tu.onResponse).toHaveBeenCalledOnce();
    clock.advance(T.TIMER_D);
    expect(layer.size().clients).toBe(0);
  });

  it('RFC 6026: 2xx → Accepted, retransmitted 2xx reach the TU, Timer M ends it', () => {
    const { clock, layer, tu, transport } = setup();
    const inv = request('INVITE');
    layer.sendRequest(inv, 'z9hG4bKabc', UDP, tu);
    const ok = response(inv, 200, 'OK');
    layer.handleMessage(ok, UDP);
    layer.handleMessage(ok, UDP);
    expect(tu.onResponse).toHaveBeenCalledTimes(2);
    expect(transport.sent).toHaveLength(1); // the 2xx ACK is the TU's business
    clock.advance(T.TIMER_M);
    expect(layer.size().clients).toBe(0);
  });

  it('a transport error is reported once and ends the transaction', async () => {
    const { layer, tu, transport } = setup();
    transport.failNext = new Error('ECONNREFUSED');
    layer.sendRequest(request('INVITE'), 'z9hG4bKabc', UDP, tu);
    await Promise.resolve();
    expect(tu.onTransportError).toHaveBeenCalledOnce();
    expect(layer.size().clients).toBe(0);
  });
});

describe('non-INVITE client transaction (§17.1.2)', () => {
  it('Timer E doubles up to T2, Timer F times out at 64*T1', () => {
    const { clock, transport, layer, tu } = setup();
    layer.sendRequest(request('BYE'), 'z9hG4bKbye', UDP, tu);
    const times: number[] = [];
    let n = transport.sent.length;
    for (let t = 0; t < T.TIMER_F; t += 250) {
      clock.advance(250);
      if (transport.sent.length !== n) times.push(clock.now());
      n = transport.sent.length;
    }
    expect(times.slice(0, 5)).toEqual([500, 1500, 3500, 7500, 11500]); // capped at T2 = 4 s
    expect(tu.onTimeout).toHaveBeenCalledOnce();
  });

  it('in Proceeding, E fires every T2; a final response → Completed, Timer K', () => {
    const { clock, transport, layer, tu } = setup();
    const bye = request('BYE');
    layer.sendRequest(bye, 'z9hG4bKabc', UDP, tu);
    layer.handleMessage(response(bye, 100, 'Trying'), UDP);
    clock.advance(T.T1); // E fires, next in T2
    const after = transport.sent.length;
    clock.advance(T.T2);
    expect(transport.sent.length).toBe(after + 1);
    layer.handleMessage(response(bye, 200, 'OK'), UDP);
    layer.handleMessage(response(bye, 200, 'OK'), UDP); // absorbed
    expect(tu.onResponse).toHaveBeenCalledTimes(2);
    clock.advance(T.TIMER_K);
    expect(layer.size().clients).toBe(0);
  });
});

describe('server transactions (§17.2)', () => {
  function serverSetup() {
    const s = setup();
    const seen: Array<ServerTransaction | undefined> = [];
    s.layer.onRequest((_req, _src, tx) => seen.push(tx));
    return { ...s, seen };
  }

  it('INVITE: 100 Trying after 200 ms, retransmitted INVITE absorbed', () => {
    const { clock, transport, layer, seen } = serverSetup();
    const inv = request('INVITE');
    layer.handleMessage(inv, UDP);
    expect(seen).toHaveLength(1);
    clock.advance(200);
    expect(transport.startLines()).toEqual(['SIP/2.0 100 Trying']);
    layer.handleMessage(inv, UDP);
    expect(seen).toHaveLength(1);
    expect(transport.sent).toHaveLength(2); // 100 resent
  });

  it('INVITE non-2xx: Timer G up to T2, ACK → Confirmed, Timer I ends it', () => {
    const { clock, transport, layer, seen } = serverSetup();
    const inv = request('INVITE');
    layer.handleMessage(inv, UDP);
    seen[0]!.respond(createResponse(inv, 486, 'Busy Here', { toTag: 'x' }));
    clock.advance(T.T1 + 2 * T.T1 + 4 * T.T1);
    expect(transport.sent).toHaveLength(4);
    layer.handleMessage(request('ACK'), UDP);
    expect(seen).toHaveLength(1); // the ACK matched the transaction
    expect(seen[0]!.state).toBe('confirmed');
    clock.advance(T.T2 * 4);
    expect(transport.sent).toHaveLength(4);
    expect(layer.size().servers).toBe(0);
  });

  it('INVITE non-2xx without ACK: Timer H ends it', () => {
    const { clock, layer, seen, stats } = serverSetup();
    const inv = request('INVITE');
    layer.handleMessage(inv, UDP);
    seen[0]!.respond(createResponse(inv, 480, 'Unavailable', { toTag: 'x' }));
    clock.advance(T.TIMER_H);
    expect(layer.size().servers).toBe(0);
    expect(stats.transactionTimeouts).toBe(1);
  });

  it('RFC 6026: INVITE 2xx → Accepted, 2xx retransmitted until the ACK, Timer L', () => {
    const { clock, transport, layer, seen } = serverSetup();
    const inv = request('INVITE');
    layer.handleMessage(inv, UDP);
    const tx = seen[0] as ServerTransaction & { ackReceived(): void };
    tx.respond(createResponse(inv, 200, 'OK', { toTag: 'x' }));
    expect(tx.state).toBe('accepted');
    clock.advance(T.T1 + 2 * T.T1);
    expect(transport.sent).toHaveLength(3);
    // The ACK for a 2xx has its own branch: it is not matched, it goes to the TU.
    layer.handleMessage(request('ACK', 'z9hG4bKother'), UDP);
    expect(seen).toHaveLength(2);
    expect(seen[1]).toBeUndefined();
    tx.ackReceived();
    clock.advance(T.T2 * 3);
    expect(transport.sent).toHaveLength(3);
    clock.advance(T.TIMER_L);
    expect(layer.size().servers).toBe(0);
  });

  it('non-INVITE: retransmitted request gets the final response again; Timer J', () => {
    const { clock, transport, layer, seen } = serverSetup();
    const opt = request('OPTIONS');
    layer.handleMessage(opt, UDP);
    layer.handleMessage(opt, UDP); // Trying: absorbed
    expect(transport.sent).toHaveLength(0);
    seen[0]!.respond(createResponse(opt, 200, 'OK', { toTag: 'x' }));
    layer.handleMessage(opt, UDP);
    expect(transport.startLines()).toEqual(['SIP/2.0 200 OK', 'SIP/2.0 200 OK']);
    clock.advance(T.TIMER_J);
    expect(layer.size().servers).toBe(0);
  });

  it('RFC 2543 fallback: no magic cookie, matched by Call-ID/CSeq/tags/Via', () => {
    const { clock, transport, layer, seen } = serverSetup();
    const inv = request('INVITE', 'old-branch-1');
    layer.handleMessage(inv, UDP);
    layer.handleMessage(request('INVITE', 'old-branch-1'), UDP);
    expect(seen).toHaveLength(1);
    seen[0]!.respond(createResponse(inv, 486, 'Busy', { toTag: 'q1' }));
    const ack = request('ACK', 'old-branch-1');
    ack.headers = ack.headers.map((h) =>
      h.name === 'to' ? { name: 'to', value: `${h.value};tag=q1` } : h,
    );
    layer.handleMessage(ack, UDP);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.state).toBe('confirmed');
    clock.advance(T.TIMER_I);
    expect(transport.sent.length).toBeGreaterThan(0);
  });

  it('a response matching nothing is stray (counted, handed up)', () => {
    const { layer, stats } = setup();
    const stray = vi.fn();
    layer.onStrayResponse(stray);
    layer.handleMessage(response(request('INVITE', 'z9hG4bKnone'), 200, 'OK'), UDP);
    expect(stray).toHaveBeenCalledOnce();
    expect(stats.strayResponses).toBe(1);
  });
});

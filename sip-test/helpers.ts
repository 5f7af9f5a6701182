// Shared by the SIPp-driven tests: a stack on loopback and event recording.

import {
  createSipStack,
  type CallLeg,
  type CallLegEvents,
  type InviteOptions,
  type SipStack,
  type SipStackConfig,
} from '../src/sip/index.js';

export const OFFER = [
  'v=0',
  'o=gw 1 1 IN IP4 127.0.0.1',
  's=-',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 40000 RTP/AVP 0 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=sendrecv',
  '',
].join('\r\n');

/** Short T1 keeps retransmission tests fast; pass `{}` for RFC defaults. */
export async function startStack(
  overrides: Partial<SipStackConfig> = { timers: { T1: 50, T2: 400, T4: 500 } },
): Promise<SipStack> {
  const stack = createSipStack({
    udp: { host: '127.0.0.1', port: 0 },
    tcp: { host: '127.0.0.1', port: 0 },
    userAgent: 'gw-test',
    ...overrides,
  });
  await stack.start();
  return stack;
}

export function inviteOptions(
  port: number,
  transport: 'udp' | 'tcp' = 'udp',
  extra: Partial<InviteOptions> = {},
): InviteOptions {
  return {
    target: { host: '127.0.0.1', port, transport },
    requestUri: `sip:+15551230000@127.0.0.1:${port}`,
    from: { uri: 'sip:+15557654321@gw.test', displayName: 'Gateway' },
    to: { uri: 'sip:+15551230000@127.0.0.1' },
    headers: [['X-Test', 'yes']],
    sdp: OFFER,
    ...extra,
  };
}

type Recorded = {
  [K in keyof CallLegEvents]: { event: K; data: CallLegEvents[K] };
}[keyof CallLegEvents];

export interface LegRecorder {
  events: Recorded[];
  names(): string[];
  /** Resolves with the first event of that name (rejects after `ms`). */
  wait<K extends keyof CallLegEvents>(name: K, ms?: number): Promise<CallLegEvents[K]>;
}

export function record(leg: CallLeg): LegRecorder {
  const events: Recorded[] = [];
  const names: Array<keyof CallLegEvents> = [
    'provisional',
    'answered',
    'failed',
    'ended',
    'reinvite',
    'dtmf',
    'refer',
    'notify',
  ];
  for (const n of names) leg.on(n, (data) => events.push({ event: n, data } as Recorded));
  return {
    events,
    names: () => events.map((e) => e.event),
    wait: (name, ms = 10_000) =>
      new Promise((resolve, reject) => {
        const found = events.find((e) => e.event === name);
        if (found) {
          resolve(found.data as never);
          return;
        }
        const t = setTimeout(
          () =>
            reject(
              new Error(
                `no ${name} event within ${ms} ms: saw ${events.map((e) => e.event).join(',')}`,
              ),
            ),
          ms,
        );
        leg.once(name, (d) => {
          clearTimeout(t);
          resolve(d);
        });
      }),
  };
}

// A company of its own with plan limits, for tests of those limits against
// real daemons (one, or several sharing PostgreSQL).
import { expect } from 'vitest';
import { FINAL_STATUSES } from '../../src/model/call-status.js';
import { BOOT_KEY, type Gateway } from './gateway-harness.js';
import { ScriptedUas } from './scripted-uas.js';

const FINAL = new Set<string>(FINAL_STATUSES);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A company of its own with `plan`'s limits, a trunk to the far end on
 * `farPort` and an agent, made through the daemons in turn; its
 * requests go to the daemons in turn.
 */
export async function limitedCompany(
  nodes: Gateway[],
  plan: { maxConcurrentCalls?: number; maxChannels?: number },
  farPort: number,
  trunkFields: { maxChannels?: number } = {},
) {
  const sub = await nodes[0]!.api('POST', '/api/v1/companies', {
    name: 'limited',
    plan: { allowOutbound: true, ...plan },
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
  const as = (g: Gateway, method: string, path: string, body?: unknown) =>
    g.daemon.api(method, path, body, { 'x-api-key': BOOT_KEY, 'x-company-id': sub.json.id });
  const trunk = await as(nodes[1 % nodes.length]!, 'POST', '/api/v1/phones/sip-trunks', {
    name: 'far',
    host: '127.0.0.1',
    port: farPort,
    callerIds: ['+12125550100'],
    defaultCallerId: '+12125550100',
    ...trunkFields,
  });
  const agent = await as(nodes[2 % nodes.length]!, 'POST', '/api/v1/agents', {
    name: 'limited-agent',
    websocketUrl: nodes[2 % nodes.length]!.agentServer.url,
  });
  expect([trunk.status, agent.status]).toEqual([201, 201]);
  return {
    /** One initiate-call per number, all at once, spread over the daemons. */
    initiateAll: (numbers: string[]) =>
      Promise.all(
        numbers.map((n, i) =>
          as(nodes[i % nodes.length]!, 'POST', '/api/v1/phones/calls/initiate-call', {
            agentId: agent.json.id,
            destinationNumber: n,
            sipTrunkId: trunk.json.id,
            useAntiHarassmentProtection: true,
            overrideTimeRestriction: true,
            overrideDayRestriction: true,
            maxRetries: 0,
          }),
        ),
      ),
    /** The call's record once it is held (`in_call`) or final. */
    settled: async (g: Gateway, callId: string, timeoutMs: number) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const r = await as(g, 'GET', `/api/v1/phones/calls/${callId}`);
        if (r.json.status === 'in_call' || FINAL.has(r.json.status) || Date.now() > until)
          return r.json;
        await sleep(200);
      }
    },
  };
}

/** How a call is refused for want of a channel: at admission (402), and at the dial gate. */
const CHANNEL_REASONS = {
  plan: { admission: 'no_channels_available', dial: 'no_channels_available_in_plan' },
  trunk: { admission: 'no_available_channels', dial: 'no_channels' },
};

/**
 * What a burst of calls for a company with a channel limit came to: refused
 * at admission (402 no_channels_available, when calls were already live),
 * held (in_call), or ended at the dial gate (failed
 * no_channels_available_in_plan); nothing else.
 */
export async function channelBurstOutcome(
  limited: Awaited<ReturnType<typeof limitedCompany>>,
  nodes: Gateway[],
  answers: { status: number; json: any }[],
  reasons = CHANNEL_REASONS.plan,
): Promise<{ refused: number; held: number; notDialed: number }> {
  const refused = answers.filter((r) => r.status !== 200);
  expect(new Set(refused.map((r) => `${r.status} ${r.json.error}`))).toEqual(
    new Set(refused.length > 0 ? [`402 ${reasons.admission}`] : []),
  );
  const ids = answers.filter((r) => r.status === 200).map((r) => r.json.callId as string);
  const records = await Promise.all(
    ids.map((id, i) => limited.settled(nodes[i % nodes.length]!, id, 20_000)),
  );
  const held = records.filter((r) => r.status === 'in_call');
  const notDialed = records.filter((r) => r.status !== 'in_call');
  expect(new Set(notDialed.map((r) => `${r.status} ${r.endCallReason}`))).toEqual(
    new Set(notDialed.length > 0 ? [`failed ${reasons.dial}`] : []),
  );
  return { refused: refused.length, held: held.length, notDialed: notDialed.length };
}

/**
 * A burst of one call per number, all at once, for a company whose plan has
 * `channels` (or whose trunk has), against a far end that answers and holds: exactly `channels`
 * calls are held and reach the far end (INVITEs counted there); every other
 * one is refused 402 or ends at the dial gate.
 */
export async function expectExactChannels(
  nodes: Gateway[],
  channels: number,
  numbers: string[],
  of: keyof typeof CHANNEL_REASONS = 'plan',
): Promise<void> {
  const far = await ScriptedUas.start({ defaultBehaviour: { kind: 'answer' } });
  try {
    const limit = { maxChannels: channels };
    const limited =
      of === 'plan'
        ? await limitedCompany(nodes, limit, far.port)
        : await limitedCompany(nodes, {}, far.port, limit);
    const answers = await limited.initiateAll(numbers);
    // Accepted calls are not yet live: the channels are counted again when each is dialed.
    const outcome = await channelBurstOutcome(limited, nodes, answers, CHANNEL_REASONS[of]);
    expect(outcome.held).toBe(channels);
    expect(outcome.held + outcome.notDialed + outcome.refused).toBe(numbers.length);
    // a call refused at the gate never sent an INVITE
    await sleep(1_000);
    expect(far.invites).toHaveLength(channels);
  } finally {
    far.close();
  }
}

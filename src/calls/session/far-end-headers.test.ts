// The far end's X- headers in its 2xx (issue 26 item 5): kept on the record
// in lower case, the first of a name winning, at most 16 of 512 characters
// each, other headers left out; handed to the agent as start parameters.
import { describe, expect, it, vi } from 'vitest';
import type { AgentLink } from '../ports/agent-link.js';
import { useTwoLegWorld } from './test-support/transfer-rig.js';

const w = useTwoLegWorld();

describe("the far end's X- headers", () => {
  it('are kept on the record and handed to the agent; other headers, repeats and excess are not', async () => {
    let handed: Record<string, string> | undefined;
    const links = w.agent.links();
    w.agent.links = () => () => {
      const link: AgentLink = links();
      const start = link.start.bind(link);
      link.start = (m, hooks, parameters) => {
        handed = parameters;
        start(m, hooks, parameters);
      };
      return link;
    };
    const calls = w.makeCalls();
    const who = { company: w.store.companies.get(w.companyId)!, key: { id: 'k', name: 'key' } };
    const { callId } = await calls.initiate(who, {
      destinationNumber: '+12125551234',
      agentId: w.agentId,
    });
    await vi.advanceTimersByTimeAsync(0);
    const extra = Array.from({ length: 20 }, (_, i): [string, string] => [`X-Extra-${i}`, 'e']);
    w.legs[0]!.fire('answered', {
      sdp: 'v=0 answer',
      headers: [
        ['Contact', '<sip:far@192.0.2.1>'],
        ['X-Carrier-Ref', 'CR-1'],
        ['x-carrier-ref', 'second'],
        ['X-Long', 'v'.repeat(600)],
        ...extra,
      ],
    });
    await vi.advanceTimersByTimeAsync(0);
    const kept = w.record(callId).farEndHeaders!;
    expect(kept['x-carrier-ref']).toBe('CR-1');
    expect(kept['x-long']).toHaveLength(512);
    expect(Object.keys(kept)).toHaveLength(16);
    expect(kept).not.toHaveProperty('contact');
    expect(handed).toEqual(kept);
  });
});

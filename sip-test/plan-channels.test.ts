// A plan's (and a trunk's) channels on one daemon with its SQLite file: a
// burst of calls for a company takes exactly its free channels, whatever the order in which the
// calls' sessions reach the dial (the agent's WebSocket is opened between
// the gate and the INVITE). The same across three daemons on PostgreSQL is
// in multi-node.test.ts.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startGateway, type Gateway } from './support/gateway-harness.js';
import { expectExactChannels } from './support/limited-company.js';

let gw: Gateway;
beforeAll(async () => {
  // each test makes a company of its own on the one daemon
  gw = await startGateway({
    GATEWAY_HTTP_MAX_CALL_REQUESTS_IN_FLIGHT: '1000',
    GATEWAY_RATE_LIMIT_MAX: '100000',
  });
}, 60_000);
afterAll(async () => {
  await gw?.daemon.stop('SIGKILL');
  await gw?.agentServer.close();
}, 30_000);

describe("a plan's channels on one daemon (SQLite)", () => {
  it('12 requests at once for 12 numbers, 3 channels, calls held: exactly 3 INVITEs; the others end no_channels_available_in_plan or are refused 402', async () => {
    await expectExactChannels(
      [gw],
      3,
      Array.from({ length: 12 }, (_, i) => `+1212563${String(i).padStart(4, '0')}`),
    );
  }, 60_000);

  it("a trunk's channels alike: 8 requests at once, the trunk's 2 channels: exactly 2 INVITEs; the others end no_channels or are refused 402 no_available_channels", async () => {
    await expectExactChannels(
      [gw],
      2,
      Array.from({ length: 8 }, (_, i) => `+1212564${String(i).padStart(4, '0')}`),
      'trunk',
    );
  }, 60_000);
});

// The started daemon (npm start, real SQLite file) with a bootstrap key, an
// agent, and helpers to point trunks at SIPp far ends and follow calls.
import { FINAL_STATUSES } from '../../src/model/call-status.js';
import { AgentServer } from '../../test/agents/agent-server.js';
import { startDaemon, type Daemon } from '../../test/support/daemon.js';

export const BOOT_KEY = 'sip-test-bootstrap-key-0123456789abcdef';
const FINAL = new Set<string>(FINAL_STATUSES);

export interface Gateway {
  daemon: Daemon;
  agentId: string;
  /** The default agent's WebSocket server (a quiet one). */
  agentServer: AgentServer;
  api(
    method: string,
    path: string,
    body?: unknown,
    key?: string,
  ): Promise<{ status: number; json: any; headers: Headers }>;
  /** A trunk aimed at a SIPp far end on 127.0.0.1:port. */
  trunk(port: number, extra?: Record<string, unknown>): Promise<string>;
  /** Initiates a call (protections overridden and a single attempt unless given) and returns its callId. */
  call(trunkId: string, number: string, extra?: Record<string, unknown>): Promise<string>;
  get(callId: string, key?: string): Promise<any>;
  /** Polls the record until it reaches `status` (or any final status). */
  waitFor(callId: string, status?: string, timeoutMs?: number, key?: string): Promise<any>;
  stop(): Promise<number | null>;
}

let rtpWindow = 0;

export async function startGateway(
  env: Record<string, string> = {},
  agent: Record<string, unknown> = {},
): Promise<Gateway> {
  // Each daemon gets its own 200-port RTP window in 30000-32599: below the
  // kernel's ephemeral range, and apart from the media tests' 20000-29999.
  const base = 30000 + ((process.pid * 13 + rtpWindow++ * 200) % 2600);
  const daemon = await startDaemon({
    GATEWAY_BOOTSTRAP_API_KEY: BOOT_KEY,
    GATEWAY_RTP_PORT_MIN: String(base - (base % 2)),
    GATEWAY_RTP_PORT_MAX: String(base - (base % 2) + 199),
    // SIPp far ends count an OPTIONS ping as one of their -m calls: no pings unless a test asks.
    GATEWAY_SIP_OPTIONS_PING_SECONDS: '0',
    GATEWAY_RECORDING_DIR: `${daemon_tmp()}/recordings`,
    ...env,
  });
  const api: Gateway['api'] = (method, path, body, key = BOOT_KEY) =>
    daemon.api(method, path, body, { 'x-api-key': key });
  // A quiet agent on loopback: calls are bridged to it (no phone rings without an agent).
  const agentServer = await AgentServer.listen();
  const created = await api('POST', '/api/v1/agents', {
    name: 'test-agent',
    websocketUrl: agentServer.url,
    ...agent,
  });
  if (created.status !== 201) throw new Error(`agent: ${JSON.stringify(created.json)}`);
  const agentId = created.json.id as string;

  const get = async (callId: string, key?: string) => {
    const res = await api('GET', `/api/v1/phones/calls/${callId}`, undefined, key);
    if (res.status !== 200) throw new Error(`GET call ${res.status}: ${JSON.stringify(res.json)}`);
    return res.json;
  };
  return {
    daemon,
    agentId,
    api,
    trunk: async (port, extra = {}) => {
      const res = await api('POST', '/api/v1/phones/sip-trunks', {
        name: `sipp-${port}`,
        host: '127.0.0.1',
        port,
        callerIds: ['+12125550100'],
        defaultCallerId: '+12125550100',
        ...extra,
      });
      if (res.status !== 201) throw new Error(`trunk: ${JSON.stringify(res.json)}`);
      return res.json.id as string;
    },
    call: async (trunkId, number, extra = {}) => {
      const res = await api('POST', '/api/v1/phones/calls/initiate-call', {
        destinationNumber: number,
        agentId,
        sipTrunkId: trunkId,
        useAntiHarassmentProtection: false,
        overrideTimeRestriction: true,
        overrideDayRestriction: true,
        maxRetries: 0,
        ...extra,
      });
      if (res.status !== 200)
        throw new Error(`initiate-call ${res.status}: ${JSON.stringify(res.json)}`);
      return res.json.callId as string;
    },
    get,
    waitFor: async (callId, status, timeoutMs = 20_000, key) => {
      const until = Date.now() + timeoutMs;
      let last: any;
      while (Date.now() < until) {
        last = await get(callId, key);
        if (status ? last.status === status : FINAL.has(last.status)) return last;
        if (status && FINAL.has(last.status))
          throw new Error(
            `call ended ${last.status}/${last.endCallReason} before reaching ${status}`,
          );
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(
        `call ${callId} did not reach ${status ?? 'a final status'} in ${timeoutMs} ms; last: ${JSON.stringify(last)}`,
      );
    },
    agentServer,
    stop: async () => {
      const code = await daemon.stop('SIGTERM');
      await agentServer.close();
      return code;
    },
  };
}

function daemon_tmp(): string {
  return process.env.TMPDIR ?? '/tmp';
}

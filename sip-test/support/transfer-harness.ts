// The started daemon shared by the transfer tests through it
// (transfer-blind, transfer-bridge): the gateway started before and stopped
// after the file, the SIPp far ends and agent servers it started killed and
// closed, and agents each on their own server.
import { afterAll, beforeAll } from 'vitest';
import { AgentServer } from '../../test/agents/agent-server.js';
import {
  allocatePort,
  startSipp,
  type SippOptions,
  type SippProcess,
} from '../runner/sipp-runner.js';
import { startGateway, type Gateway } from './gateway-harness.js';

export interface TransferDaemon {
  /** The gateway, once beforeAll has started it. */
  readonly gw: Gateway;
  /** SIPp processes to kill after the file. */
  readonly sipps: SippProcess[];
  /** SIPp on its own media port (from allocatePort), kept to kill. */
  farEnd(opts: Omit<SippOptions, 'extraArgs'>, extraArgs?: string[]): Promise<SippProcess>;
  /** An agent on its own server, created by the API; the API's answer as it came. */
  agent(
    name: string,
    maxDurationSeconds: number,
  ): Promise<{ server: AgentServer; res: Awaited<ReturnType<Gateway['api']>> }>;
}

/** Starts the gateway for this file (beforeAll) and cleans up after it (afterAll). */
export function useTransferDaemon(): TransferDaemon {
  let gw: Gateway | undefined;
  const sipps: SippProcess[] = [];
  const servers: AgentServer[] = [];
  beforeAll(async () => {
    gw = await startGateway();
  }, 30_000);
  afterAll(async () => {
    for (const s of sipps) s.kill();
    await Promise.all(servers.map((s) => s.close()));
    await gw?.stop();
  }, 30_000);
  const daemon: TransferDaemon = {
    get gw() {
      if (!gw) throw new Error('the gateway is not started (beforeAll)');
      return gw;
    },
    sipps,
    async farEnd(opts, extraArgs = []) {
      const sipp = await startSipp({
        ...opts,
        extraArgs: ['-mp', String(await allocatePort()), ...extraArgs],
      });
      sipps.push(sipp);
      return sipp;
    },
    async agent(name, maxDurationSeconds) {
      const server = await AgentServer.listen();
      servers.push(server);
      const res = await daemon.gw.api('POST', '/api/v1/agents', {
        name,
        websocketUrl: server.url,
        outgoing: { ringTimeoutSeconds: 5, maxDurationSeconds },
      });
      return { server, res };
    },
  };
  return daemon;
}

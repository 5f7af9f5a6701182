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
  /**
   * farEnd, started again on a fresh media port (up to three times) when
   * SIPp exits at once: another process took the port allocatePort gave.
   */
  farEndUp(opts: Omit<SippOptions, 'extraArgs'>, extraArgs?: string[]): Promise<SippProcess>;
  /** A trunk at a SIPp far end that only an outbound route for `prefix` reaches. */
  routedTrunk(port: number, prefix: string): Promise<string>;
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
    async farEndUp(opts, extraArgs = []) {
      for (let i = 0; i < 3; i++) {
        const sipp = await daemon.farEnd(opts, extraArgs);
        const exited = await Promise.race([
          sipp.done.then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), 300)),
        ]);
        if (!exited) return sipp;
      }
      throw new Error(`SIPp ${opts.scenario} did not start (media port taken three times)`);
    },
    async routedTrunk(port, prefix) {
      const trunkId = await daemon.gw.trunk(port, { isDefault: false });
      const res = await daemon.gw.api('POST', '/api/v1/phones/outbound-routes', {
        name: `to ${prefix}`,
        prefix,
        sipTrunkId: trunkId,
      });
      if (res.status !== 201) throw new Error(`outbound route: ${JSON.stringify(res.json)}`);
      return trunkId;
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

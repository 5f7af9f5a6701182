// Restarts the daemon of a Gateway on the SAME SQLite file (after a kill -9
// or a SIGTERM), with the same agent, so a test can follow the calls the
// previous process accepted. The previous daemon must have exited.
import { startGateway, type Gateway } from './gateway-harness.js';

/**
 * `env` must repeat the environment the first daemon was started with (the
 * harness adds its own defaults again; GATEWAY_DB_PATH is taken from `prev`).
 * The returned Gateway places calls with `prev`'s agent; its `stop()` stops
 * only the new daemon (close `prev.agentServer` yourself).
 */
export async function restartGateway(
  prev: Gateway,
  env: Record<string, string> = {},
): Promise<Gateway> {
  if (prev.daemon.child.exitCode === null && prev.daemon.child.signalCode === null)
    throw new Error('restartGateway: the previous daemon is still running');
  const next = await startGateway({ ...env, GATEWAY_DB_PATH: prev.daemon.dbPath });
  // startGateway made one more agent (and its server): unused, the calls keep prev's agent.
  await next.agentServer.close();
  return {
    ...next,
    agentId: prev.agentId,
    agentServer: prev.agentServer,
    call: (trunkId, number, extra = {}) =>
      next.call(trunkId, number, { agentId: prev.agentId, ...extra }),
    stop: () => next.daemon.stop('SIGTERM'),
  };
}

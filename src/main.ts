// The composition root: reads the config once, builds the adapters, wires
// them, listens, and drains on SIGTERM/SIGINT.
import { DeliveryWorker } from './webhooks/delivery-worker.js';
import { DestinationGuard } from './net/destination-guard.js';
import { webhookSender as webhookSender_ } from './webhooks/webhook-sender.js';
import { mkdirSync, readFileSync } from 'node:fs';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { AccountService } from './accounts/account-service.js';
import { AgentBridge } from './agent-bridge/agent-bridge.js';
import { buildApp } from './api/build-app.js';
import {
  agentConnectTime,
  agentRtpToWsLatency,
  agentWsToRtpLatency,
  transferRelayLatency,
} from './agent-bridge/agent-latency.js';
import { CallService } from './calls/call-service.js';
import { Dialer } from './calls/dialer.js';
import { resolveDestinationZones } from './calls/protections/destination-zones.js';
import { RetryPolicy } from './calls/scheduling/retry-policy.js';
import { Scheduler } from './calls/scheduling/scheduler.js';
import type { MediaPort } from './calls/ports/media-port.js';
import type { SignalingPort } from './calls/ports/signaling-port.js';
import { realTimers } from './calls/timers.js';
import { TrunkAvailability } from './calls/trunk-availability.js';
import { TrunkHealthTracker } from './calls/trunk-health.js';
import { TrunkRegistrations } from './calls/trunk-registrations.js';
import { systemClock } from './clock.js';
import type { Config } from './config/config-schema.js';
import { ConfigError, loadConfig } from './config/load-config.js';
import { registerComponentMetrics } from './component-metrics.js';
import { registerGatewayMetrics, registerWebhookMetrics } from './gateway-metrics.js';
import { currentThreadId, ThreadCpuTable } from './thread-cpu.js';
import { createLogger } from './logger.js';
import { MediaEngine, WorkerMediaEngine } from './media/index.js';
import { SPACING_BIN_MS } from './media/pacing-clock.js';
import type { ThreadPriority } from './media/worker/thread-priority.js';
import { createDrachtioSignaling, type DrachtioSignaling } from './sip/drachtio/index.js';
import { createSipStack, type SipStack } from './sip/index.js';
import { registerInternalRoutes } from './api/routes/internal-routes.js';
import {
  clusterKeyOf,
  dispatcherFor,
  nodeIdOf,
  openStore,
  startClusterNode,
} from './cluster/cluster-setup.js';

/** The longest a commit nobody waits for stays off the disk (a power loss, not kill -9). */
const STORE_SYNC_TICK_MS = 100;
/** How often the SQLite file's WAL is checkpointed, off the event loop (wal-checkpointer.ts). */
const STORE_CHECKPOINT_TICK_MS = 1_000;

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}

/** The TLS listener's certificate and key, read once at start; a file that
 *  can't be read, or only one of the two, stops the daemon with exit code 2. */
function readTlsServerFiles(
  certFile: string,
  keyFile: string,
): { cert: string; key: string } | undefined {
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) {
    console.error('sip.tlsCertFile and sip.tlsKeyFile go together');
    process.exit(2);
  }
  try {
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
  } catch (err) {
    console.error(`cannot read the TLS certificate or key: ${(err as Error).message}`);
    process.exit(2);
  }
}

/** How the media worker's priority came out: a warning for what was not granted. */
function logWorkerPriority(log: ReturnType<typeof createLogger>, p: ThreadPriority): void {
  if (p.error) {
    log.warn(
      { requested: p.requested, nice: p.nice, reason: p.error },
      'media worker keeps its priority (grant CAP_SYS_NICE to raise it)',
    );
  } else log.info({ nice: p.nice, tid: p.tid }, 'media worker priority set');
  if (p.realtimeError) {
    log.warn(
      { requested: p.realtimeRequested, realtime: p.realtime, reason: p.realtimeError },
      'media worker keeps a normal scheduling policy (grant CAP_SYS_NICE or RLIMIT_RTPRIO for SCHED_RR)',
    );
  } else if (p.realtime)
    log.info({ realtime: p.realtime, tid: p.tid }, 'media worker runs under SCHED_RR');
}

async function main(): Promise<void> {
  const config = readConfig();
  const nodeId = nodeIdOf(config);
  const log = createLogger(config.log.level);
  const clock = systemClock;
  const store = openStore(config, nodeId, clock);
  const accounts = new AccountService(store, clock);
  if (accounts.bootstrap(config.bootstrap.apiKey))
    log.info('created company "default" with the bootstrap API key');

  let sip: SipStack | undefined;
  /** Trusts the trunks' addresses at the SIP edge (embedded engine); run when trunks change. */
  let trustTrunks = (): void => undefined;
  let drachtio: DrachtioSignaling | undefined;
  let signaling: SignalingPort;
  if (config.sip.engine === 'drachtio') {
    // Not awaited: HTTP comes up, and /readyz says not ready until drachtio-server accepts us.
    drachtio = createDrachtioSignaling(config.drachtio, {
      logger: log.child({ component: 'drachtio' }),
      sessionTimer: {
        expiresSeconds: config.sip.sessionExpiresSeconds,
        minSeconds: config.sip.sessionMinExpiresSeconds,
      },
    });
    drachtio.connect().then(
      () => log.info('drachtio engine ready'),
      (err: unknown) =>
        log.error(
          { err: err instanceof Error ? err.message : String(err) },
          'drachtio-server connect',
        ),
    );
    signaling = drachtio;
  } else {
    const listen = (t: 'udp' | 'tcp') =>
      config.sip.transports.includes(t)
        ? { host: config.sip.host, port: config.sip.port }
        : (false as const);
    sip = createSipStack(
      {
        udp: listen('udp'),
        tcp: listen('tcp'),
        tls: {
          host: config.sip.host,
          port: config.sip.tlsPort,
          server: readTlsServerFiles(config.sip.tlsCertFile, config.sip.tlsKeyFile),
          keepAliveIntervalMs: config.sip.tlsKeepAliveSeconds * 1000,
        },
        advertisedHost: config.sip.advertisedHost || undefined,
        timers: { T1: config.sip.t1Ms, T2: config.sip.t2Ms, T4: config.sip.t4Ms },
        userAgent: config.sip.userAgent,
        authAttemptLimit: config.sip.authAttempts,
        sessionTimer: {
          expiresSeconds: config.sip.sessionExpiresSeconds,
          minSeconds: config.sip.sessionMinExpiresSeconds,
        },
        registerRetryMinMs: config.sip.registerRetryMinSeconds * 1000,
        registerRetryMaxMs: config.sip.registerRetryMaxSeconds * 1000,
        tcpIdleTimeoutMs: config.sip.tcpIdleTimeoutMs,
        tcpLimits: {
          messageDeadlineMs: config.sip.tcpMessageDeadlineMs,
          maxConnections: config.sip.tcpMaxConnections,
          maxConnectionsPerSource: config.sip.tcpMaxConnectionsPerSource,
        },
        edge: {
          maxServerTransactions: config.sip.maxServerTransactions,
          maxClientTransactions: config.sip.maxClientTransactions,
          strangers: config.sip.strangers,
          allowedSources: config.sip.allowedSources,
          rateLimit: {
            perSecond: config.sip.strangerRateLimit,
            blockMs: config.sip.strangerBlockSeconds * 1000,
          },
          udpRecvBufferBytes: config.sip.udpRecvBufferBytes,
          udpSendBufferBytes: config.sip.udpSendBufferBytes,
        },
      },
      { logger: log.child({ component: 'sip' }) },
    );
    await sip.start();
    signaling = sip;
    // The trunks' addresses are trusted at the SIP edge (sip.strangers); the API changes trunks.
    const stack = sip;
    trustTrunks = (): void => {
      try {
        const trunks = store.sipTrunks.listAll().filter((t) => t.active);
        void stack.setTrunkTargets(
          trunks.flatMap((t) => [
            { host: t.host, ...(t.port ? { port: t.port } : {}), transport: t.transport },
            // A registration trunk's registrar sends it calls and NOTIFYs.
            ...(t.register?.enabled && t.register.registrar
              ? [{ host: t.register.registrar.replace(/:\d+$/, ''), transport: t.transport }]
              : []),
          ]),
        );
      } catch (err) {
        log.warn({ err }, 'could not read the trunks for the SIP edge');
      }
    };
    trustTrunks();
    setInterval(trustTrunks, 2000).unref();
  }
  mkdirSync(config.recording.dir, { recursive: true });
  const mediaConfig = {
    bindAddress: config.rtp.host,
    advertisedAddress: config.rtp.advertisedIp || config.rtp.host,
    rtpPortMin: config.rtp.portMin,
    rtpPortMax: config.rtp.portMax,
    codecs: config.rtp.codecs,
    symmetricRtp: config.rtp.symmetric,
    inactivityTimeoutSec: config.rtp.inactivitySeconds,
    recordingDirectory: config.recording.dir,
  };
  const engine = config.rtp.worker
    ? new WorkerMediaEngine(mediaConfig, {
        onFailure: (err) => log.error({ err }, 'media worker failed: calls lose their media'),
        nice: config.rtp.workerNice,
        realtimePriority: config.rtp.workerRealtimePriority,
        oldSpaceMb: config.rtp.workerOldSpaceMb,
        onPriority: (p) => logWorkerPriority(log, p),
      })
    : new MediaEngine(mediaConfig);
  const media: MediaPort = engine;

  const trunkHealth =
    config.sip.optionsPingSeconds > 0 && sip
      ? new TrunkHealthTracker(
          store,
          sip.startTrunkMonitor({
            trunks: [],
            intervalMs: config.sip.optionsPingSeconds * 1000,
            failuresBeforeOffline: config.sip.optionsPingFailures,
          }),
          realTimers,
          Math.min(10_000, config.sip.optionsPingSeconds * 1000),
          log.child({ component: 'trunks' }),
        )
      : undefined;
  trunkHealth?.start();
  // Registration trunks (issue 26 item 3): REGISTERed by the embedded stack, un-REGISTERed by sip.stop().
  const registrations = new TrunkRegistrations(
    store,
    sip?.registrations,
    realTimers,
    2000,
    log.child({ component: 'trunks' }),
  );
  registrations.start();
  const trunkAvailability = new TrunkAvailability(trunkHealth, registrations, trustTrunks);

  const retries = new RetryPolicy(clock, { retryDelayUnitMs: config.calls.retryDelayUnitMs });
  // The scheduler dials through the dialer (created below; called only once both exist).
  const scheduler = new Scheduler(
    {
      schedules: store.schedules,
      calls: store.calls,
      clock,
      dial: (recordId, attempt) => dialer.dial(recordId, attempt),
      log: log.child({ component: 'scheduler' }),
    },
    {
      pollIntervalMs: config.calls.schedulerPollMs,
      // On PostgreSQL the lease names the node (rule 3); on SQLite one daemon owns the file.
      ...(store.kind === 'postgres' ? { owner: nodeId } : {}),
    },
  );
  // Agent WebSocket URLs reach public addresses and agent.allowedNetworks only (issue 25 item 5).
  const agentGuard = new DestinationGuard(config.agent.allowedNetworks);
  const dialer = new Dialer({
    retries,
    onScheduled: () => scheduler.poke(),
    store,
    clock,
    zones: resolveDestinationZones,
    timers: realTimers,
    signaling,
    media,
    log: log.child({ component: 'calls' }),
    trunkHealth: trunkAvailability,
    agents: (record, agent) =>
      new AgentBridge(record, agent, {
        clock,
        log: log.child({ component: 'agent' }),
        destinations: agentGuard,
      }),
    // The media layer's time base (ReceivedFrame.receivedAt), not the wall clock.
    relayLatency: { now: () => performance.now(), record: (ms) => transferRelayLatency.record(ms) },
    settings: {
      defaultRingTimeoutSeconds: config.calls.defaultRingTimeoutSeconds,
      defaultMaxDurationSeconds: config.calls.defaultMaxDurationSeconds,
      stuckAfterSeconds: config.calls.stuckAfterSeconds,
      watchdogIntervalMs: config.calls.watchdogIntervalMs,
      mediaInactivitySeconds: config.rtp.inactivitySeconds,
    },
  });
  dialer.recover();
  dialer.startWatchdog();
  scheduler.start();

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  registerGatewayMetrics(metrics, {
    agentLatency: { rtpToWs: agentRtpToWsLatency, wsToRtp: agentWsToRtpLatency },
    transferRelayLatency,
    media: engine,
    spacingBinMs: SPACING_BIN_MS,
    calls: dialer,
    sip,
    trunks: trunkHealth,
  });
  const threads = new ThreadCpuTable();
  threads.register('main', currentThreadId());
  if (engine instanceof WorkerMediaEngine) threads.register('media', () => engine.threadId);
  if ('workerThreadId' in store) {
    const pgStore = store;
    threads.register('store', () => pgStore.workerThreadId());
  }
  registerComponentMetrics(metrics, {
    agentConnect: agentConnectTime,
    ...(store.kind === 'sqlite' && store.writeTimings ? { storeWrites: store.writeTimings } : {}),
    ...(engine instanceof WorkerMediaEngine ? { mediaWorker: engine } : {}),
    threads,
  });
  // Webhooks (issue 25): the outbox's deliveries sent by one worker, to public addresses only.
  const webhookGuard = new DestinationGuard(config.webhooks.allowedNetworks);
  const webhookSender = webhookSender_(webhookGuard, config.webhooks.timeoutMs);
  const webhooks = new DeliveryWorker(
    store.webhooks,
    clock,
    realTimers,
    log.child({ component: 'webhooks' }),
    {
      pollIntervalMs: config.webhooks.pollIntervalMs,
      concurrency: config.webhooks.concurrency,
      retryWindowMs: config.webhooks.retryWindowHours * 3_600_000,
      retryBaseMs: config.webhooks.retryBaseMs,
      retentionMs: config.webhooks.retentionDays * 86_400_000,
    },
    webhookSender.send,
    () => store.unitOfWork.durable(),
  );
  store.webhooks.onWritten = () => setImmediate(() => webhooks.poke());
  // Commits nobody waits for (a call ringing, its end) reach the disk within a
  // tick too; what acknowledges a write waits for it (group-commit.md).
  const syncTick = realTimers.setInterval(() => {
    store.unitOfWork.durable().catch((err: unknown) => log.error({ err }, 'store fsync failed'));
  }, STORE_SYNC_TICK_MS);
  const checkpoint = 'checkpoint' in store ? store.checkpoint : undefined;
  const checkpointTick = checkpoint
    ? realTimers.setInterval(checkpoint, STORE_CHECKPOINT_TICK_MS)
    : undefined;
  webhooks.start();
  registerWebhookMetrics(metrics, webhooks, store.webhooks, clock);

  // On PostgreSQL with a cluster key, hangups and transfers of a peer's call go to that peer (rule 5).
  const clusterKey = clusterKeyOf(config, store);
  const dispatcher = dispatcherFor(
    config,
    store,
    dialer,
    nodeId,
    log.child({ component: 'cluster' }),
  );
  const calls = new CallService(store, clock, {
    dispatcher,
    trunkHealth: trunkAvailability,
    onScheduled: (dueAt) => scheduler.poke(dueAt),
  });
  const app = await buildApp({
    config: config.http,
    store,
    clock,
    calls,
    accounts,
    metrics,
    trunkHealth: trunkAvailability,
    webhooks: {
      allowHttp: config.webhooks.allowHttp,
      secretOverlapSeconds: config.webhooks.secretOverlapSeconds,
      guard: webhookGuard,
      poke: () => webhooks.poke(),
    },
    logger: log,
    readiness: {
      notReadyReason: () =>
        dialer.isDraining
          ? 'shutting down'
          : drachtio && !drachtio.isConnected()
            ? 'drachtio-server not connected'
            : undefined,
    },
  });
  if (clusterKey) registerInternalRoutes(app, { local: dialer, calls: store.calls, clusterKey });
  await app.listen({ host: config.http.host, port: config.http.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.http.port;
  const sipUdp = sip && config.sip.transports.includes('udp') ? sip.localAddress('udp') : undefined;
  // Several daemons on one PostgreSQL (issue 27): heartbeat, and adoption of lost peers' calls.
  const cluster = startClusterNode(
    config,
    store,
    { nodeId, httpPort: port, sipPort: sipUdp?.port },
    { dialer, clock, log: log.child({ component: 'cluster' }) },
  );
  log.info(
    {
      pid: process.pid,
      host: config.http.host,
      port,
      sipPort: sipUdp?.port,
      store: store.kind,
      ...(store.kind === 'sqlite' ? { db: config.store.path } : { nodeId: cluster?.info.id }),
      engine: config.sip.engine,
    },
    'gateway listening',
  );

  let stopping = false;
  // Logging must never keep the process from exiting (a closed stdout pipe throws EPIPE).
  const safeLog = (level: 'info' | 'error', obj: object, msg: string): void => {
    try {
      log[level](obj, msg);
    } catch {
      /* nowhere to log to */
    }
  };
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    // Armed first, so a hung step or a failing log cannot stop the exit.
    const timer = setTimeout(() => {
      safeLog('error', {}, 'shutdown grace period exceeded; exiting');
      process.exit(1);
    }, config.http.shutdownGraceMs + 5000);
    timer.unref();
    let code = 0;
    try {
      safeLog('info', { signal, liveCalls: dialer.liveCalls }, 'shutting down');
      cluster?.drain();
      await scheduler.stop();
      await dialer.drain(config.http.shutdownGraceMs);
      await webhooks.stop();
      await webhookSender.close();
      await engine.close();
      await app.close();
      trunkHealth?.stop();
      registrations.stop();
      await sip?.stop();
      await drachtio?.stop().catch(() => undefined);
      cluster?.stop();
      realTimers.clearInterval(syncTick);
      if (checkpointTick) realTimers.clearInterval(checkpointTick);
      await store.unitOfWork.durable();
      store.close();
      safeLog('info', {}, 'stopped');
    } catch (err) {
      code = 1;
      safeLog('error', { err }, 'shutdown failed');
    } finally {
      process.exit(code);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error('fatal:', err);
  process.exit(1);
});

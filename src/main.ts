// The composition root: reads the config once, builds the adapters, wires
// them, listens, and drains on SIGTERM/SIGINT.
import { collectDefaultMetrics, Registry } from 'prom-client';
import { AccountService } from './accounts/account-service.js';
import { buildApp } from './api/build-app.js';
import { CallService } from './calls/call-service.js';
import { systemClock } from './clock.js';
import { ConfigError, loadConfig } from './config/load-config.js';
import { createLogger } from './logger.js';
import { openDatabase } from './store/database.js';
import { createStore } from './store/store.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.log.level);
  const clock = systemClock;
  const db = openDatabase(config.store.path);
  const store = createStore(db);
  const accounts = new AccountService(store, clock);
  if (accounts.bootstrap(config.bootstrap.apiKey))
    log.info('created company "default" with the bootstrap API key');

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  let draining = false;
  const calls = new CallService(store, clock);
  const app = await buildApp({
    config: config.http,
    store,
    clock,
    calls,
    accounts,
    metrics,
    logger: log,
    readiness: { notReadyReason: () => (draining ? 'shutting down' : undefined) },
  });
  await app.listen({ host: config.http.host, port: config.http.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.http.port;
  log.info(
    {
      pid: process.pid,
      host: config.http.host,
      port,
      db: config.store.path,
      engine: config.sip.engine,
    },
    'gateway listening',
  );

  const shutdown = async (signal: string): Promise<void> => {
    if (draining) return;
    draining = true;
    log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      log.error('shutdown grace period exceeded; exiting');
      process.exit(1);
    }, config.http.shutdownGraceMs + 2000);
    timer.unref();
    await app.close();
    db.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error('fatal:', err);
  process.exit(1);
});

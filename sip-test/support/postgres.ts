// A throw-away PostgreSQL server on 127.0.0.1 for tests: initdb into a temp
// dir, the server on a free port with its socket in that dir, trust
// authentication for the one superuser `gateway`, stopped (fast shutdown)
// and removed afterwards. PostgreSQL refuses to run as root: under root the
// cluster belongs to the `postgres` user Debian's package creates.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readdirSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { allocatePorts, startPeerProcess } from './peer-process.js';

const exec = promisify(execFile);

/** Debian's server binaries, newest version first. */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error('PostgreSQL server not installed (Debian package postgresql)');
  return join(root, versions[0]!, 'bin');
}

export interface PostgresServer {
  /** postgres://gateway@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  pid: number;
  /** The temp dir holding the cluster and its socket. */
  dir: string;
  /** A database of its own for one test file (created empty). */
  createDatabase(name: string): Promise<string>;
  output(): string;
  /** Fast shutdown (SIGINT), SIGKILL after 5 s, then the temp dir goes. */
  stop(): Promise<void>;
}

export async function startPostgres(opts: { fsync?: boolean } = {}): Promise<PostgresServer> {
  const bin = binDir();
  const dir = await mkdtemp(join(tmpdir(), 'gw-postgres-'));
  const data = join(dir, 'data');
  const root = userInfo().uid === 0;
  const owner = root ? await postgresUser() : undefined;
  chmodSync(dir, 0o700);
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const asOwner = owner ? { uid: owner.uid, gid: owner.gid } : {};
  await exec(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'gateway', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    { ...asOwner, timeout: 60_000 },
  ).catch((e: { stderr?: string; message: string }) => {
    throw new Error(`initdb failed: ${e.stderr ?? e.message}`);
  });
  const [port] = await allocatePorts(1);
  const proc = startPeerProcess({
    name: 'postgres',
    command: join(bin, 'postgres'),
    args: [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `fsync=${opts.fsync === false ? 'off' : 'on'}`,
      '-c',
      'max_connections=200',
    ],
    cwd: dir,
    tempDir: dir,
    stopSignal: 'SIGINT',
    ...asOwner,
  });
  const url = `postgres://gateway@127.0.0.1:${port}/postgres`;
  await proc.waitReady(async () => {
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => undefined);
    }
  }, 20_000);
  return {
    url,
    port: port!,
    pid: proc.pid,
    dir,
    output: proc.output,
    createDatabase: async (name) => {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return `postgres://gateway@127.0.0.1:${port}/${name}`;
    },
    stop: () => proc.stop(5000),
  };
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const { stdout } = await exec('id', ['-u', 'postgres']).catch(() => {
    throw new Error('running as root needs the postgres user (Debian package postgresql)');
  });
  const { stdout: g } = await exec('id', ['-g', 'postgres']);
  return { uid: Number(stdout.trim()), gid: Number(g.trim()) };
}

/** The pools a test file opens, all ended (before the server stops) by end(). */
export class TestPools {
  private readonly pools: pg.Pool[] = [];

  open(url: string, max = 8): pg.Pool {
    const p = new pg.Pool({ connectionString: url, max });
    // An idle client learns of the server's shutdown as an error event.
    p.on('error', () => undefined);
    this.pools.push(p);
    return p;
  }

  async end(): Promise<void> {
    await Promise.allSettled(this.pools.splice(0).map((p) => p.end()));
  }
}

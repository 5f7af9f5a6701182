// The production build, tested: `tsconfig.build.json` compiled into a
// temporary directory laid out like an install (package.json, node_modules,
// config/default.json, dist/) holds no test code, and `node dist/main.js`
// boots from it as production runs it (the media worker from its compiled
// file, not through tsx), answers GET /readyz with 200 and exits 0 on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BUILD_TIMEOUT_MS = 120_000;
const BOOT_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 20_000;

/** Test code by its name: test-support/ folders, fakes, test kits, *.test files, test-* modules. */
const TEST_CODE = /(^|\/)test-support\/|(^|\/)fakes?[-./]|-test-kit\.|\.test\.|(^|\/)test-/;

let dir = '';
let daemon: ChildProcess | undefined;

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

/** Runs a command to completion (killed after timeoutMs). */
function run(
  cmd: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-prod-build-'));
  const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
  const build = await run(
    process.execPath,
    [tsc, '-p', 'tsconfig.build.json', '--outDir', join(dir, 'dist')],
    BUILD_TIMEOUT_MS - 5_000,
  );
  expect(build.code, build.out).toBe(0);
  // An install: the package (its "type": "module"), its dependencies, its config.
  copyFileSync(join(REPO, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  mkdirSync(join(dir, 'config'));
  copyFileSync(join(REPO, 'config', 'default.json'), join(dir, 'config', 'default.json'));
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  if (daemon?.pid && daemon.exitCode === null && daemon.signalCode === null) {
    const exited = exitOf(daemon);
    daemon.kill('SIGKILL');
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('production build (tsconfig.build.json)', () => {
  it('compiles the daemon, the CLI and the media worker, and no test code', () => {
    const files = filesUnder(join(dir, 'dist'));
    expect(files).toContain('main.js');
    expect(files).toContain('cli.js');
    expect(files).toContain(join('media', 'worker', 'media-worker.js'));
    expect(files.filter((f) => TEST_CODE.test(f.split('\\').join('/')))).toEqual([]);
  });

  it(
    'boots with node dist/main.js, is ready, and stops on SIGTERM',
    async () => {
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'production',
        GATEWAY_HTTP_HOST: '127.0.0.1',
        GATEWAY_HTTP_PORT: '0',
        GATEWAY_SIP_HOST: '127.0.0.1',
        GATEWAY_SIP_PORT: '0',
        GATEWAY_RTP_HOST: '127.0.0.1',
        GATEWAY_RTP_WORKER: 'true',
        GATEWAY_DB_PATH: join(dir, 'data', 'gateway.sqlite'),
        GATEWAY_RECORDING_DIR: join(dir, 'data', 'recordings'),
        GATEWAY_LOG_LEVEL: 'info',
      };
      mkdirSync(join(dir, 'data'));
      const child = spawn(process.execPath, [join(dir, 'dist', 'main.js')], {
        cwd: dir,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      daemon = child;
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const exited = exitOf(child);

      const ports = await new Promise<{ http: number; sip: number }>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`dist/main.js did not listen in ${BOOT_TIMEOUT_MS} ms:\n${out}`)),
          BOOT_TIMEOUT_MS,
        );
        const check = () => {
          const m = /"port":(\d+),"sipPort":(\d+)[^\n]*"msg":"gateway listening"/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve({ http: Number(m[1]), sip: Number(m[2]) });
          }
        };
        child.stdout.on('data', check);
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`dist/main.js exited with ${code}:\n${out}`));
        });
      });
      expect(ports.http).toBeGreaterThan(0);
      expect(ports.sip).toBeGreaterThan(0);

      const ready = await fetch(`http://127.0.0.1:${ports.http}/readyz`, {
        signal: AbortSignal.timeout(5_000),
      });
      expect(ready.status, out).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
      // The media worker started from dist/media/worker/media-worker.js (it reports its priority).
      expect(out).toMatch(/"msg":"media worker (priority set|keeps its priority)"/);
      expect(out).not.toContain('media worker failed');
      expect(existsSync(env.GATEWAY_DB_PATH!)).toBe(true);

      process.kill(child.pid!, 'SIGTERM');
      const code = await Promise.race([
        exited,
        new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), STOP_TIMEOUT_MS)),
      ]);
      expect(code, out).toBe(0);
      expect(out).toContain('"msg":"stopped"');
    },
    BOOT_TIMEOUT_MS + STOP_TIMEOUT_MS + 15_000,
  );
});

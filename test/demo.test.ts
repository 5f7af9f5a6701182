// `npm run demo` as a newcomer runs it (README "First call: npm run demo"):
// SIPp answers, the echo agent is bridged, the call is hung up through the
// API, the final record is printed, everything is stopped, exit code 0.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function runDemo(timeoutMs: number): Promise<{ code: number | null; out: string; ms: number }> {
  const env = { ...process.env };
  delete env.DEMO_URL; // the demo starts its own daemon
  delete env.DEMO_API_KEY;
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', 'demo'], {
      env,
      detached: true, // its own group: npm, tsx and the demo, nothing else
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    // The demo stops what it started on SIGTERM; past our own limit, ask it to.
    const timer = setTimeout(() => child.pid && process.kill(-child.pid, 'SIGTERM'), timeoutMs);
    // 'close': every process holding our pipes is gone, the demo's cleanup included.
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, ms: Date.now() - started });
    });
  });
}

/** The pretty-printed record that follows "Final record (GET …):". */
function finalRecord(out: string): Record<string, any> {
  const m = /^Final record \(GET [^)]*\):\n(\{\n[\s\S]*?\n\})\n/m.exec(out);
  if (!m) throw new Error(`no final record in the output:\n${out}`);
  return JSON.parse(m[1]!);
}

describe('npm run demo', () => {
  it(
    'places one answered call through SIPp, hangs it up, prints the record, exits 0',
    {
      timeout: 90_000,
    },
    async () => {
      const { code, out } = await runDemo(80_000);
      expect(code, out).toBe(0);

      // The live status went through in_call (answered) to the final `answered`.
      expect(out).toMatch(/^ +\d+\.\d s {2}in_call +answered \(200 OK\)/m);
      expect(out).toMatch(/^ +\d+\.\d s {2}POST \/api\/v1\/phones\/calls\/[\w-]+\/hangup$/m);
      expect(out).toMatch(/^ +\d+\.\d s {2}answered +final/m);

      const record = finalRecord(out);
      expect(record).toMatchObject({
        status: 'answered',
        endCallReason: 'user_hungup',
        endedBy: 'api',
        phoneNumber: '+14155550123',
        callerId: '+12125550100',
        overrideTimeRestriction: true,
        overrideDayRestriction: true,
      });
      expect(record.startAt).toEqual(expect.any(String));
      expect(record.endAt).toEqual(expect.any(String));
      expect(record.attempts).toHaveLength(1);
      expect(record.attempts[0]).toMatchObject({
        status: 'answered',
        endCallReason: 'user_hungup',
      });
      expect(record.duration).toBeGreaterThanOrEqual(2);
      // SIPp echoes RTP: audio really flowed.
      expect(record.networkQuality.packetsReceived).toBeGreaterThan(0);

      expect(out).toContain('The call was answered and hung up through the API');
      expect(out).toContain('To call through a real carrier instead of SIPp:');
      expect(out).toContain('Stopped SIPp, echo agent, daemon.');
      expect(out).not.toContain('demo failed');
    },
  );
});

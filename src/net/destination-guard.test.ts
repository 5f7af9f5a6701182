// Where webhooks may go: public unicast only, unless a network is allowed;
// IPv4-mapped IPv6 judged as IPv4; names judged where they resolve.
import { describe, expect, it } from 'vitest';
import { DestinationGuard } from './destination-guard.js';

describe('DestinationGuard', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['192.168.0.10', 'private'],
    ['172.16.5.4', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['::1', 'loopback'],
    ['fe80::1', 'linkLocal'],
    ['fd00::1', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['224.0.0.1', 'multicast'],
  ])('refuses %s (%s)', (address, range) => {
    expect(new DestinationGuard().refusal(address)).toBe(range);
  });

  it('accepts public unicast addresses, and an allowed network only within it', () => {
    const strict = new DestinationGuard();
    expect(strict.refusal('93.184.216.34')).toBeUndefined();
    expect(strict.refusal('2606:2800:220:1:248:1893:25c8:1946')).toBeUndefined();
    const lab = new DestinationGuard(['127.0.0.0/8', '10.0.0.0/8']);
    expect(lab.refusal('127.0.0.1')).toBeUndefined();
    expect(lab.refusal('::ffff:127.0.0.1')).toBeUndefined();
    expect(lab.refusal('10.9.9.9')).toBeUndefined();
    expect(lab.refusal('169.254.169.254')).toBe('linkLocal');
    expect(lab.refusal('192.168.1.1')).toBe('private');
    expect(lab.refusal('not-an-ip')).toBe('not an IP address');
  });

  it('judges IP literals in URLs, bracketed IPv6 included, and leaves names to the lookup', () => {
    const g = new DestinationGuard();
    expect(g.literalRefusal(new URL('http://127.0.0.1:9/x'))).toBe('loopback');
    expect(g.literalRefusal(new URL('http://[::1]/x'))).toBe('loopback');
    expect(g.literalRefusal(new URL('https://169.254.169.254/latest'))).toBe('linkLocal');
    expect(g.literalRefusal(new URL('https://hooks.example.com/x'))).toBeUndefined();
  });

  it('the lookup refuses a name that resolves to loopback, with the reason, and passes it when allowed', async () => {
    const look = (g: DestinationGuard, all: boolean) =>
      new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
        g.lookup('localhost', { all, family: 4 }, (err, address) => resolve({ err, address })),
      );
    const refused = await look(new DestinationGuard(), false);
    expect(refused.err?.code).toBe('EDESTINATIONREFUSED');
    expect(refused.err?.message).toContain('loopback');
    const allowed = await look(new DestinationGuard(['127.0.0.0/8']), false);
    expect(allowed.err).toBeNull();
    expect(allowed.address).toBe('127.0.0.1');
    const all = await look(new DestinationGuard(['127.0.0.0/8']), true);
    expect(all.address).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });
});

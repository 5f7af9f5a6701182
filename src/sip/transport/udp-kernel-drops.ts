// Datagrams the kernel dropped for our UDP socket (a full receive buffer):
// the `drops` column of /proc/net/udp or /proc/net/udp6 on the line of our
// local address and port. Linux only; undefined anywhere else or when the
// line is not found, so a caller can simply leave the figure out.

import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { isIPv4, isIPv6 } from 'node:net';

/** Reads the drop counter of the UDP socket bound to host:port. */
export function readUdpKernelDrops(
  host: string,
  port: number,
  read: (path: string) => string = (p) => readFileSync(p, 'latin1'),
): number | undefined {
  const v6 = isIPv6(host);
  let text: string;
  try {
    text = read(v6 ? '/proc/net/udp6' : '/proc/net/udp');
  } catch {
    return undefined;
  }
  const want = `${procAddress(host)}:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const lines = text.split('\n');
  const header = (lines[0] ?? '').trim().split(/\s+/);
  // The header names "tx_queue rx_queue" and "tr tm->when" as one column each
  // although their values are two fields: count on the data line's own shape.
  if (!header.includes('drops')) return undefined;
  for (let i = 1; i < lines.length; i++) {
    const cols = (lines[i] ?? '').trim().split(/\s+/);
    if (cols[1] !== want) continue;
    const drops = Number(cols[cols.length - 1]);
    return Number.isFinite(drops) ? drops : undefined;
  }
  return undefined;
}

/** The local_address form of /proc/net/udp{,6}: each 32-bit word of the
 *  address in host byte order, as upper-case hex. */
export function procAddress(host: string): string {
  const le = endianness() === 'LE';
  const word = (b: Buffer, at: number): string =>
    (le ? b.readUInt32LE(at) : b.readUInt32BE(at)).toString(16).toUpperCase().padStart(8, '0');
  if (isIPv4(host)) return word(Buffer.from(host.split('.').map(Number)), 0);
  if (!isIPv6(host)) return '';
  const bytes = ipv6Bytes(host);
  return [0, 4, 8, 12].map((at) => word(bytes, at)).join('');
}

function ipv6Bytes(host: string): Buffer {
  let h = host;
  const out = Buffer.alloc(16);
  // A dotted IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (dotted) {
    const b = dotted[1]!.split('.').map(Number);
    h = `${h.slice(0, -dotted[1]!.length)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const [head = '', tail] = h.split('::');
  const a = head ? head.split(':') : [];
  const b = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = [...a, ...new Array<string>(8 - a.length - b.length).fill('0'), ...b];
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16) || 0, i * 2));
  return out;
}

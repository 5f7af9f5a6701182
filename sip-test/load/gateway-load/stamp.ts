// A timestamp hidden in a μ-law frame, so that the RTP probe and the agent
// can measure the gateway's added latency without sharing memory. Both
// processes read process.hrtime.bigint(), which is CLOCK_MONOTONIC and so
// comparable across processes on one Linux host.
//
// Layout: 4 magic bytes, then 16 bytes, one per nibble of the 64-bit ns
// stamp (0x20 + nibble). No byte is 0x7F, the μ-law value that does not
// survive a decode/encode round trip (−0 becomes +0, 0xFF).

export const FAR_END_MAGIC = Buffer.from([0x5a, 0x3c, 0x5a, 0x3c]); // written by the RTP probe
export const AGENT_MAGIC = Buffer.from([0x3c, 0x5a, 0x3c, 0x5a]); // rewritten by the agent
export const STAMP_BYTES = 20;

export const nowNs = (): bigint => process.hrtime.bigint();

export function writeStamp(frame: Buffer, offset: number, magic: Buffer, ns: bigint): void {
  magic.copy(frame, offset);
  for (let i = 0; i < 16; i++) {
    frame[offset + 4 + i] = 0x20 + Number((ns >> BigInt((15 - i) * 4)) & 0xfn);
  }
}

/** Finds a stamp with this magic anywhere in the frame: [offset, ns] or undefined. */
export function findStamp(frame: Buffer, magic: Buffer): [number, bigint] | undefined {
  const at = frame.indexOf(magic);
  if (at < 0 || at + STAMP_BYTES > frame.length) return undefined;
  let ns = 0n;
  for (let i = 0; i < 16; i++) {
    const nibble = frame[at + 4 + i]! - 0x20;
    if (nibble < 0 || nibble > 15) return undefined;
    ns = (ns << 4n) | BigInt(nibble);
  }
  return [at, ns];
}

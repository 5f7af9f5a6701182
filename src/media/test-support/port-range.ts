/**
 * A port window for one test file's media engine, inside 20000–29999 (outside
 * the kernel's ephemeral range); the allocator skips ports others hold.
 */
export function testPortRange(size = 200): { rtpPortMin: number; rtpPortMax: number } {
  const slots = Math.floor(10_000 / size);
  const base = 20_000 + Math.floor(Math.random() * slots) * size;
  return { rtpPortMin: base, rtpPortMax: base + size - 1 };
}

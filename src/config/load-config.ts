// Reads the configuration once: schema defaults, then config/default.json,
// then the file named by GATEWAY_CONFIG, then environment variables. Every
// value is checked against CONFIG_SCHEMA; all problems are reported together.
import { existsSync, readFileSync } from 'node:fs';
import { GatewayError } from '../errors.js';
import { CONFIG_SCHEMA, type Config, type ConfigEntry } from './config-schema.js';

export class ConfigError extends GatewayError {
  constructor(readonly problems: string[]) {
    super('invalid_config', `invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Raw = Record<string, unknown>;

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** Files read in order; missing optional files are skipped. */
  defaultFile?: string;
  /** Extra values (tests), applied after files and before env. */
  overrides?: Raw;
}

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  const values = new Map<string, unknown>();
  for (const entry of CONFIG_SCHEMA) values.set(entry.key, entry.default);

  const files = [options.defaultFile ?? 'config/default.json'];
  if (env.GATEWAY_CONFIG) files.push(env.GATEWAY_CONFIG);
  for (const [i, file] of files.entries()) {
    if (!existsSync(file)) {
      if (i > 0) problems.push(`config file ${file} (GATEWAY_CONFIG) does not exist`);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      problems.push(`config file ${file} is not valid JSON: ${(err as Error).message}`);
      continue;
    }
    applyObject(parsed, file, values, problems);
  }
  if (options.overrides) applyObject(options.overrides, 'overrides', values, problems);

  for (const entry of CONFIG_SCHEMA) {
    const text = env[entry.env];
    if (text === undefined || (text === '' && entry.type !== 'string')) continue;
    const value = fromEnvText(entry, text);
    if (value === undefined)
      problems.push(`${entry.env}=${entry.secret ? '***' : text}: expected ${entry.type}`);
    else values.set(entry.key, value);
  }

  for (const entry of CONFIG_SCHEMA) {
    const problem = check(entry, values.get(entry.key));
    if (problem) problems.push(`${entry.key} (${entry.env}): ${problem}`);
  }
  const rtpMin = values.get('rtp.portMin') as number;
  const rtpMax = values.get('rtp.portMax') as number;
  if (rtpMin >= rtpMax) problems.push('rtp.portMin must be below rtp.portMax');
  if (problems.length > 0) throw new ConfigError(problems);

  const config: Raw = {};
  for (const [key, value] of values) setPath(config, key, value);
  return config as unknown as Config;
}

/** The defaults as a nested object: what config/default.json holds. */
export function defaultConfigObject(): Raw {
  const out: Raw = {};
  for (const entry of CONFIG_SCHEMA) setPath(out, entry.key, entry.default);
  return out;
}

function applyObject(
  obj: unknown,
  source: string,
  values: Map<string, unknown>,
  problems: string[],
): void {
  if (!isObject(obj)) {
    problems.push(`${source}: top level must be an object`);
    return;
  }
  const known = new Set(CONFIG_SCHEMA.map((e) => e.key));
  const walk = (node: Raw, prefix: string): void => {
    for (const [name, value] of Object.entries(node)) {
      const key = prefix ? `${prefix}.${name}` : name;
      if (known.has(key)) values.set(key, value);
      else if (isObject(value)) walk(value, key);
      else problems.push(`${source}: unknown key ${key}`);
    }
  };
  walk(obj, '');
}

function fromEnvText(entry: ConfigEntry, text: string): unknown {
  switch (entry.type) {
    case 'string':
      return text;
    case 'int':
    case 'number': {
      const n = Number(text);
      return text.trim() === '' || Number.isNaN(n) ? undefined : n;
    }
    case 'boolean':
      if (/^(1|true|yes|on)$/i.test(text)) return true;
      if (/^(0|false|no|off)$/i.test(text)) return false;
      return undefined;
    case 'list':
      return text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
  }
}

function check(entry: ConfigEntry, value: unknown): string | undefined {
  switch (entry.type) {
    case 'string':
      if (typeof value !== 'string') return 'expected a string';
      if (entry.oneOf && !entry.oneOf.includes(value))
        return `expected one of ${entry.oneOf.join(', ')}`;
      return undefined;
    case 'int':
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'expected a number';
      if (entry.type === 'int' && !Number.isInteger(value)) return 'expected a whole number';
      if (entry.min !== undefined && value < entry.min) return `must be at least ${entry.min}`;
      if (entry.max !== undefined && value > entry.max) return `must be at most ${entry.max}`;
      return undefined;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'expected true or false';
    case 'list':
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
        return 'expected a list of strings';
      if (entry.oneOf) {
        const bad = value.filter((v) => !entry.oneOf!.includes(v as string));
        if (bad.length > 0)
          return `unknown value(s) ${bad.join(', ')}; expected ${entry.oneOf.join(', ')}`;
      }
      return undefined;
  }
}

function setPath(target: Raw, key: string, value: unknown): void {
  const parts = key.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (!isObject(node[part])) node[part] = {};
    node = node[part] as Raw;
  }
  node[parts[parts.length - 1]!] = Array.isArray(value) ? [...value] : value;
}

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

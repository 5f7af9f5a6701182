// The pino-like logger the stack accepts (optional): static messages, values in fields.

type LogFn = (fields: Record<string, unknown>, msg: string) => void;

export interface SipLogger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child?(bindings: Record<string, unknown>): SipLogger;
}

const noop: LogFn = () => undefined;

export const silentLogger: SipLogger = { debug: noop, info: noop, warn: noop, error: noop };

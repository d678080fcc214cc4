/** Structured logging: one JSON object per line on stderr, filtered by level. */
import type { LogLevel } from './config';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** True when messages at `level` are written (so callers can skip building costly fields). */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean;
}

/** A logger writing to `sink` (default stderr) at `level` and above. */
export function createLogger(level: LogLevel, sink: (line: string) => void = (l) => process.stderr.write(l + '\n')): Logger {
  const at = (lvl: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    sink(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }, errorReplacer));
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), enabled: (lvl) => ORDER[lvl] >= ORDER[level] };
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack, cause: value.cause };
  return value;
}

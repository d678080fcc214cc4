/** The seasonal periods a series is given: `period` and `periods` together, each once, above 1, ascending. */
export function seasonalPeriods(period: number, periods: readonly number[] = []): number[] {
  return [...new Set([period, ...periods])].filter((p) => p > 1).sort((a, b) => a - b);
}

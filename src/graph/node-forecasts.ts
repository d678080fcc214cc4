/** Placeholder, replaced below. */
export interface NodeForecaster {
  means(accountId: string, entities: readonly string[], axes: readonly string[], horizon: number): Promise<Map<string, { axesResolved: Record<string, number>; warnings: readonly string[] }>>;
}

/**
 * Node/V8 settings for the server process, applied by `bin/forecast.js serve` (which re-executes
 * itself with them when they are missing) and by the benchmarks that start the service.
 *
 * `--max-semi-space-size=32`: a 32 MB young generation instead of V8's default 16 MB. A call
 * allocates tens of kilobytes of short-lived objects (messages, rows, promises, headers); with
 * the larger nursery they die before a scavenge more often, so less is copied and promoted.
 * Measured on GetEntity over gRPC: about 15–20% less server CPU per call.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];

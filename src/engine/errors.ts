/**
 * Named engine errors. The service translates these once (e.g. `InsufficientDataError`
 * becomes 422 `insufficient_data`); the engine never formats transport errors itself.
 */

/** Base class for every error the engine throws on purpose. */
export class EngineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The series has too few usable observations for the requested model. */
export class InsufficientDataError extends EngineError {
  constructor(
    /** Non-missing observations available. */
    readonly have: number,
    /** Observations needed. */
    readonly need: number,
    readonly model: string = 'model',
    /** Where only the last steps of the series are fitted (`MAX_FIT_STEPS`): how many; `have` counts those. */
    readonly within?: number,
  ) {
    super(`${model} needs at least ${need} observations, the series has ${have}${within === undefined ? '' : ` in its last ${within} steps (the longest history the engine fits)`}`);
  }
}

/** The series or an option is not usable (infinite values, bad period, ...). */
export class InvalidSeriesError extends EngineError {}

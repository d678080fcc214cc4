/** Entity identifiers `<type>:<id>` and axis names (API.md section 5). */
import { invalidArgument, quote } from '../rpc/errors';

const ENTITY = /^([a-z][a-z0-9_]{0,31}):([A-Za-z0-9._~-]{1,128})$/;
const TYPE = /^[a-z][a-z0-9_]{0,31}$/;
const AXIS = /^[a-z][a-z0-9_]{0,62}$/;

/** Check an entity identifier; returns its type. Throws 400 naming `field`. */
export function parseEntityId(value: string, field = 'entity'): { entity: string; type: string } {
  if (!value) throw invalidArgument(field, 'is required (shape <type>:<id>)');
  const m = ENTITY.exec(value);
  if (!m) {
    throw invalidArgument(
      field,
      `${quote(value)} is not a valid entity: expected <type>:<id> with type [a-z][a-z0-9_]{0,31} and id [A-Za-z0-9._~-]{1,128}`,
    );
  }
  return { entity: value, type: m[1] };
}

/** Check an entity type filter. */
export function checkEntityType(value: string, field = 'type'): void {
  if (!TYPE.test(value)) throw invalidArgument(field, `${quote(value)} is not a valid type: expected [a-z][a-z0-9_]{0,31}`);
}

/** Check an axis name. */
export function checkAxisName(value: string, field: string): void {
  if (!AXIS.test(value)) throw invalidArgument(field, `${quote(value)} is not a valid axis name: expected [a-z][a-z0-9_]{0,62}`);
}

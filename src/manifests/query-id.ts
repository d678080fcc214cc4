/** Query identifiers as clients send them back (manifest export, forensics). */
import { invalidArgument } from '../rpc/errors';

/** `q_` + a ULID: 26 Crockford base32 characters (no I, L, O, U). */
const QUERY_ID = /^q_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Check a query id; throws 400 naming `field` (quoting at most a short prefix of the input). */
export function checkQueryId(value: string, field = 'query_id'): string {
  if (!value) throw invalidArgument(field, 'is required (shape q_<26 characters>)');
  if (!QUERY_ID.test(value)) throw invalidArgument(field, `${JSON.stringify(value.slice(0, 40))} is not a query id: expected q_ followed by 26 Crockford base32 characters`);
  return value;
}

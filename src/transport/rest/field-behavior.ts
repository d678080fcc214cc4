/**
 * `google.api.field_behavior` (AIP-203) of a field, read from the descriptor image: the OpenAPI
 * document marks REQUIRED fields `required` and OUTPUT_ONLY ones `readOnly`, and the JSON codec
 * refuses a request that leaves out a singular REQUIRED field.
 */
import { getOption, hasOption, type DescExtension, type DescField, type DescFile, type DescMessage } from '@bufbuild/protobuf';

/** google.api.FieldBehavior values used here. */
export const REQUIRED = 2;
export const OUTPUT_ONLY = 3;

/** The google.api.field_behavior extension, found among the file's imports. */
function fieldBehaviorExtension(file: DescFile, seen = new Set<DescFile>()): DescExtension | undefined {
  if (seen.has(file)) return undefined;
  seen.add(file);
  const own = file.extensions.find((e) => e.typeName === 'google.api.field_behavior');
  return own ?? file.dependencies.map((d) => fieldBehaviorExtension(d, seen)).find((e) => e !== undefined);
}

/** The field's behaviours (empty when it has none). */
export function behaviors(f: DescField): number[] {
  const ext = fieldBehaviorExtension(f.parent.file);
  return ext && hasOption(f, ext) ? (getOption(f, ext) as number[]) : [];
}

const required = new WeakMap<DescMessage, readonly DescField[]>();

/**
 * The singular fields of `m` a request must give: REQUIRED and not OUTPUT_ONLY. Repeated and map
 * fields are left out: proto3 JSON writers omit an empty list, so the endpoint judges emptiness.
 */
export function requiredFields(m: DescMessage): readonly DescField[] {
  let fields = required.get(m);
  if (!fields) {
    fields = m.fields.filter((f) => f.fieldKind !== 'list' && f.fieldKind !== 'map' && behaviors(f).includes(REQUIRED) && !behaviors(f).includes(OUTPUT_ONLY));
    required.set(m, fields);
  }
  return fields;
}

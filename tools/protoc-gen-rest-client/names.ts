/**
 * The names ts-proto gives to what it generates (with this project's options: `fileSuffix=.pb`,
 * default `snakeToCamel`), so the REST client can import its types. The generated field tables
 * are typed against those types, so the compiler checks every name derived here.
 */
import type { DescEnum, DescField, DescFile, DescMessage } from '@bufbuild/protobuf';

/** ts-proto's `snakeToCamel` (case.ts): words after `_` capitalised; all-caps names lower-cased first. */
export function snakeToCamel(s: string): string {
  const hasLowerCase = /[a-z]/.test(s);
  return s
    .split('_')
    .map((word, i) => {
      const w = hasLowerCase ? word : word.toLowerCase();
      return i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1);
    })
    .join('');
}

/** ts-proto's property name of a field. */
export function tsProtoFieldName(field: DescField): string {
  return field.name.includes('_') ? snakeToCamel(field.name) : field.name;
}

/** ts-proto's type name of a message or enum: nested names joined by `_` (`Forecast_QuantilesEntry`). */
export function tsProtoTypeName(desc: DescMessage | DescEnum): string {
  const parts: string[] = [];
  for (let d: DescMessage | DescEnum | undefined = desc; d; d = d.parent) parts.unshift(d.name.includes('_') ? snakeToCamel(d.name) : d.name);
  const name = parts.join('_');
  return name === 'Date' || name === 'Function' ? `${name}Message` : name;
}

/** The import path (from the output root) of ts-proto's file for a proto file. */
export function tsProtoImportPath(file: DescFile): string {
  return `./${file.name}.pb.js`;
}

/** The import path (from the output root) of this plugin's file for a proto file. */
export function restImportPath(file: DescFile): string {
  return `./${file.name}.rest.js`;
}

/** Name of the generated field table of a message: `$` keeps it apart from any proto name. */
export function codecName(desc: DescMessage): string {
  return `${tsProtoTypeName(desc)}$json`;
}

/** Name of the generated input type of a message (required fields required, the rest optional). */
export function inputName(desc: DescMessage): string {
  return `${tsProtoTypeName(desc)}Input`;
}

/** Name of the generated enum table. */
export function enumTableName(desc: DescEnum): string {
  return `${tsProtoTypeName(desc)}$json`;
}

/** `EntityService` → `entityService`. */
export function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

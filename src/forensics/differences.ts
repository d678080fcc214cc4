/** Leaf-by-leaf comparison of two JSON documents (a recorded and a reproduced forecast). */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One differing leaf: its path and both values (undefined = the leaf is absent on that side). */
export interface Difference {
  readonly path: string;
  readonly original: Json | undefined;
  readonly reproduced: Json | undefined;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `a.b` for identifier keys, `a["0.5"]` otherwise (`b` at the root). */
function child(path: string, key: string): string {
  if (!IDENTIFIER.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path ? `${path}.${key}` : key;
}

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Every leaf where `original` and `reproduced` differ, in document order (the original's keys
 * first, then keys only the reproduction has). Containers of different kinds differ as a whole;
 * numbers compare exactly (bit for bit is the promise).
 */
export function differences(original: Json | undefined, reproduced: Json | undefined, path = ''): Difference[] {
  if (Array.isArray(original) && Array.isArray(reproduced)) {
    const out: Difference[] = [];
    for (let i = 0; i < Math.max(original.length, reproduced.length); i++) out.push(...differences(original[i], reproduced[i], `${path}[${i}]`));
    return out;
  }
  if (isObject(original) && isObject(reproduced)) {
    const keys = [...Object.keys(original), ...Object.keys(reproduced).filter((k) => !(k in original))];
    return keys.flatMap((k) => differences(original[k], reproduced[k], child(path, k)));
  }
  if (original === reproduced) return [];
  return [{ path, original, reproduced }];
}

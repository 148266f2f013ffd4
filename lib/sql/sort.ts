/**
 * ORDER BY over canonical column values: a stable sort of row indices by several keys, each
 * ascending or descending with NULLS FIRST or LAST, comparing values by their SQL type.
 */
import type { Deadline } from "../deadline.ts";
import type { SqlType } from "../expr/ast.ts";
import { toScalar } from "../expr/scalar-json.ts";
import { compareScalars } from "../expr/scalar-order.ts";
import type { Scalar } from "../expr/types.ts";

export interface SortKey {
  /** Canonical JSON values, one per row. */
  values: unknown[];
  type: SqlType;
  descending: boolean;
  nullsFirst: boolean;
}

/** Comparisons between checks of the deadline: often enough, at a negligible cost per one. */
const COMPARISONS_PER_CHECK = 1 << 16;

export function sortIndices(keys: SortKey[], n: number, deadline?: Deadline): Uint32Array {
  const scalars = keys.map((k) => k.values.map((v) => toScalar(v, k.type)));
  const order = Array.from({ length: n }, (_, i) => i);
  let comparisons = 0;
  order.sort((a, b) => {
    // Throwing from the comparator abandons the sort; `order` is discarded with it.
    if (++comparisons % COMPARISONS_PER_CHECK === 0) deadline?.check();
    for (let k = 0; k < keys.length; k++) {
      const c = compareKey(keys[k], scalars[k][a], scalars[k][b]);
      if (c !== 0) return c;
    }
    return a - b;
  });
  return Uint32Array.from(order);
}

function compareKey(key: SortKey, a: Scalar | null, b: Scalar | null): number {
  if (a === null || b === null) {
    if (a === b) return 0;
    // NULLS FIRST/LAST is absolute: it does not flip with DESC.
    return (a === null) === key.nullsFirst ? -1 : 1;
  }
  const c = compareScalars(key.type, a, b);
  return key.descending ? -c : c;
}

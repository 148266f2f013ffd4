/**
 * Did-you-mean suggestions (lib/values/did-you-mean.ts): Levenshtein distance between names, the
 * nearest candidates first, bounded work however long the misspelt name is, and a suggestion
 * only for a plausible typo.
 */
import { describe, expect, it } from "vitest";
import { editDistance, likelyMeant, nearestNames } from "../lib/values/did-you-mean.ts";

describe("did-you-mean", () => {
  it("measures edits between names and ranks candidates by them, case-insensitively", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("same", "same")).toBe(0);
    expect(nearestNames("Qyt", ["sku", "qty", "quantity"], 2)).toEqual(["qty", "sku"]);
  });

  it("bounds the work for a name far longer than any identifier", () => {
    // Exact distances would cost 5M x 30 steps per candidate, minutes for these 200; the bound
    // compares 256 characters and adds the length difference.
    const candidates = Array.from({ length: 200 }, (_, i) => `column_number_${i}_of_the_table`);
    const huge = `column_number_7_of_the_table${"x".repeat(5_000_000)}`;
    expect(editDistance(huge, candidates[7] as string)).toBe(5_000_000);
    expect(nearestNames(huge, candidates, 1)).toEqual(["column_number_7_of_the_table"]);
  });

  it("suggests only a candidate within a plausible typo's distance", () => {
    const known = ["catalog", "schema", "condition"];
    expect(likelyMeant("condtion", known)).toBe("condition");
    expect(likelyMeant("SCHEMA", known)).toBe("schema");
    expect(likelyMeant("where", known)).toBeUndefined();
    expect(likelyMeant("ab", ["cd"])).toBeUndefined();
    expect(likelyMeant("x", [])).toBeUndefined();
  });
});

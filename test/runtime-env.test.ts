/**
 * The functions' settings read from the environment (lib/runtime/env.ts): durations in
 * milliseconds are whole and positive, and a bad value stops the function at start-up with the
 * variable named instead of running with a budget nobody set.
 */
import { describe, expect, it } from "vitest";
import { optionalMilliseconds } from "../lib/runtime/env.ts";

describe("optionalMilliseconds", () => {
  it("reads a whole number of milliseconds, and unset or empty as no value", () => {
    expect(
      optionalMilliseconds({ SILT_REQUEST_TIMEOUT_MS: "29000" }, "SILT_REQUEST_TIMEOUT_MS"),
    ).toBe(29_000);
    expect(optionalMilliseconds({}, "SILT_REQUEST_TIMEOUT_MS")).toBeUndefined();
    expect(
      optionalMilliseconds({ SILT_REQUEST_TIMEOUT_MS: "" }, "SILT_REQUEST_TIMEOUT_MS"),
    ).toBeUndefined();
  });

  it.each(["29s", "0", "-5", "1.5", "1e4", " 10"])("refuses %j, naming the variable", (value) => {
    expect(() => optionalMilliseconds({ X_MS: value }, "X_MS")).toThrowError(
      expect.objectContaining({
        errorClass: "SILT_MISCONFIGURED",
        message: expect.stringContaining(
          `X_MS must be a whole number of milliseconds above 0 (got ${JSON.stringify(value)})`,
        ),
      }),
    );
  });
});

/** The range of a signed 64-bit integer (Spark's LONG / BIGINT), as bigints. */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

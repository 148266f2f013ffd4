Queries Silt has answered since before the parity suite: filters, aggregates, ordering, casts and
the errors Spark gives for them. Also the suite's own check: every value encoding it compares.

-- statement
CREATE TABLE items (sku STRING, qty INT, price DECIMAL(8,2), day DATE) USING DELTA

-- statement
INSERT INTO items VALUES ('apple', 10, 1.50, DATE'2026-10-01'), ('pear', 4, 2.25, DATE'2026-10-02'),
  ('plum', 0, NULL, DATE'2026-10-02'), ('fig', NULL, 9.99, NULL)

-- query ordered
SELECT sku, qty FROM items WHERE qty > 0 ORDER BY sku

-- query
SELECT count(qty), sum(qty), max(sku), avg(price), min(day) FROM items

-- query
SELECT day, count(*) AS n, sum(price) AS total FROM items GROUP BY day

-- query ordered
SELECT sku, qty * 2 AS doubled FROM items ORDER BY qty DESC NULLS LAST LIMIT 2

-- query
SELECT * FROM VALUES (1, 9.50, DATE'2026-10-01'), (2, 20.00, DATE'2026-10-02') AS t(id, amount, day)

-- query
SELECT TIMESTAMP'2026-01-02 03:04:05.5' AS ts, TIMESTAMP_NTZ'2026-01-02 03:04:05' AS ntz,
  CAST('NaN' AS DOUBLE) AS n, CAST('-Infinity' AS DOUBLE) AS i, 1.5D AS d, CAST(0.1 AS FLOAT) AS f,
  X'0102' AS b, 9007199254740993 AS big, CAST(1 AS TINYINT) AS tiny, true AS yes

-- query
SELECT sku, CASE WHEN qty IS NULL THEN 'unknown' WHEN qty > 5 THEN 'many' ELSE 'few' END AS stock
FROM items

-- error
SELECT 1 / 0

-- error
SELECT nope FROM items

-- error
SELECT sku FROM missing_table

-- A processing-time window (and a constant column, which must not be named first).
CREATE TABLE orders (
  order_id BIGINT,
  product STRING,
  amount INT,
  proc_time AS PROCTIME()
) WITH ('connector' = 'datagen');

SELECT product, 'web' AS channel, TUMBLE_START(proc_time, INTERVAL '1' MINUTE) AS w, SUM(amount) AS total
FROM orders
GROUP BY TUMBLE(proc_time, INTERVAL '1' MINUTE), product;

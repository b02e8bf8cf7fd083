-- The same query run as a batch job: no watermarks, every window fires once at the end.
SET 'execution.runtime-mode' = 'batch';

CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '1' MINUTE
) WITH ('connector' = 'filesystem', 'path' = '/orders', 'format' = 'parquet');

SELECT shop_id, window_start, window_end, SUM(amount) AS amount
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '1' HOUR))
GROUP BY shop_id, window_start, window_end;

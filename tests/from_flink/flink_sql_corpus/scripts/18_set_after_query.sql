-- A SET written after the query: it does not apply to that query.
CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

SELECT shop_id, window_start, window_end, SUM(amount) AS amount
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '10' SECOND))
GROUP BY shop_id, window_start, window_end;

SET 'pipeline.auto-watermark-interval' = '5 s';
SET 'execution.runtime-mode' = 'batch';

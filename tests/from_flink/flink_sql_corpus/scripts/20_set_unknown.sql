-- A setting that changes what the sink receives: not ignored.
SET 'table.exec.sink.not-null-enforcer' = 'DROP';

CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

SELECT shop_id, window_start, window_end, SUM(amount) AS amount
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '10' SECOND))
GROUP BY shop_id, window_start, window_end;

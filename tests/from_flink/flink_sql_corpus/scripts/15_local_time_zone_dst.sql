-- A zone with daylight saving: local midnight moves against UTC twice a year.
SET 'table.local-time-zone' = 'America/New_York';

CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  order_time TIMESTAMP_LTZ(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '1' MINUTE
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

SELECT shop_id, window_start, window_end, SUM(amount) AS daily_amount
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '1' DAY))
GROUP BY shop_id, window_start, window_end;

-- HOP with named arguments and an offset, a TIMESTAMP_LTZ rowtime, the zone set to UTC.
SET 'table.local-time-zone' = 'UTC';

CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  order_time TIMESTAMP_LTZ(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '0.5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

SELECT shop_id, window_start, window_end, window_time, COUNT(amount) AS orders
FROM TABLE(HOP(DATA => TABLE orders, TIMECOL => DESCRIPTOR(order_time), SLIDE => INTERVAL '5' MINUTES,
               SIZE => INTERVAL '1' HOUR, `OFFSET` => INTERVAL '-1' MINUTE))
GROUP BY shop_id, window_start, window_end, window_time;

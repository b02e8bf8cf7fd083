-- Daily totals at local midnight: a TIMESTAMP_LTZ rowtime under a fixed-offset zone.
SET 'table.local-time-zone' = 'Asia/Shanghai';

CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  ts_ms BIGINT,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

SELECT shop_id, window_start, window_end, SUM(amount) AS daily_amount
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY shop_id, window_start, window_end;

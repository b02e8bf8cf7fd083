-- SETs before the query apply, those after it do not (a RESET after it neither).
SET 'pipeline.auto-watermark-interval' = '1 s';
SET 'table.exec.source.idle-timeout' = '30 s';

CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

INSERT INTO totals
SELECT shop_id, window_start, window_end, SUM(amount) AS amount
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '10' SECOND))
GROUP BY shop_id, window_start, window_end;

RESET 'table.exec.source.idle-timeout';
SET 'pipeline.auto-watermark-interval' = '200 ms';

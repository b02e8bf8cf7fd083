-- A view that filters rows: its WHERE is the replay's filter (the dropped rows still drive the watermark).
CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  status STRING,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

CREATE VIEW paid_orders AS
SELECT * FROM orders
WHERE status = 'PAID';

SELECT shop_id, window_start, window_end, SUM(amount) AS amount
FROM TABLE(TUMBLE(TABLE paid_orders, DESCRIPTOR(order_time), INTERVAL '1' MINUTE))
GROUP BY shop_id, window_start, window_end;

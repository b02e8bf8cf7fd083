-- An OVER aggregation: a running total per row, not a window aggregation.
CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

SELECT shop_id, order_time, amount,
  SUM(amount) OVER (PARTITION BY shop_id ORDER BY order_time RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW) AS last_hour
FROM orders;

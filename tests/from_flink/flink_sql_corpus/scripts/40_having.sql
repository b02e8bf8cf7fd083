-- HAVING: only busy shops' windows are emitted.
CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

SELECT shop_id, TUMBLE_END(order_time, INTERVAL '1' MINUTE) AS w, COUNT(*) AS orders
FROM orders
GROUP BY TUMBLE(order_time, INTERVAL '1' MINUTE), shop_id
HAVING COUNT(*) > 10;

-- A window aggregation over a join with a dimension table.
CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

CREATE TABLE shops (
  shop_id STRING,
  region STRING
) WITH ('connector' = 'jdbc');

SELECT o.shop_id, TUMBLE_START(o.order_time, INTERVAL '1' MINUTE) AS w, SUM(o.amount) AS amount
FROM orders AS o
JOIN shops AS s ON o.shop_id = s.shop_id
GROUP BY TUMBLE(o.order_time, INTERVAL '1' MINUTE), o.shop_id;

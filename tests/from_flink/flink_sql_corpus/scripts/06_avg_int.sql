-- AVG over an INT column: Flink's result is an INT (the sum / count truncated), not a DOUBLE.
CREATE TABLE orders (
  order_id BIGINT,
  customer STRING,
  quantity INT,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '30' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

SELECT customer, window_start, window_end, AVG(quantity) AS avg_quantity, SUM(quantity) AS total_quantity,
       AVG(CAST(quantity AS DOUBLE)) AS avg_quantity_exact
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '1' HOUR))
GROUP BY customer, window_start, window_end;

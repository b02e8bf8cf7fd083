-- CUMULATE: each category's GMV of the day so far, every hour (the running-total idiom of Flink's docs), paid only.
CREATE TABLE orders (
  order_id STRING,
  category STRING,
  price DECIMAL(10, 2),
  quantity INT,
  status STRING,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

CREATE TABLE gmv_sink (
  category STRING,
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  gmv BIGINT,
  orders BIGINT
) WITH ('connector' = 'print');

INSERT INTO gmv_sink
SELECT category, window_start, window_end, SUM(quantity), COUNT(*)
FROM TABLE(CUMULATE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '1' HOUR, INTERVAL '1' DAY))
WHERE status = 'PAID'
GROUP BY category, window_start, window_end;

-- A job script's operational settings: read, listed, no effect on the window's output.
SET 'sql-client.execution.result-mode' = 'tableau';
SET 'parallelism.default' = '4';
SET 'execution.checkpointing.interval' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '1000';
SET 'table.exec.state.ttl' = '1 h';
SET 'execution.runtime-mode' = 'streaming';

CREATE TABLE orders (
  shop_id STRING,
  amount BIGINT,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

SELECT shop_id, window_start, window_end, SUM(amount) AS amount
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '10' SECOND))
GROUP BY shop_id, window_start, window_end;

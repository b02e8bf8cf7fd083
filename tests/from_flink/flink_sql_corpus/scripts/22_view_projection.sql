-- A view between the table and the window that selects and renames columns.
CREATE TABLE raw_orders (
  `id` BIGINT,
  `shop` STRING,
  `amt` BIGINT,
  `created` TIMESTAMP(3),
  WATERMARK FOR `created` AS `created` - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

CREATE TEMPORARY VIEW orders AS
SELECT `shop` AS shop_id, `amt` AS amount, `created` AS order_time, `amt` * 2 AS double_amount
FROM raw_orders;

SELECT shop_id, window_start, window_end, SUM(amount) AS amount, SUM(double_amount) AS doubled
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '1' MINUTE))
GROUP BY shop_id, window_start, window_end;

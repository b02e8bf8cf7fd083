-- Conversion funnel per product every 5 minutes: filtered aggregates (FILTER (WHERE ...)) and an aggregate over a
-- row expression, next to a plain COUNT.
CREATE TABLE user_events (
  product_id STRING,
  event_type STRING,
  quantity INT,
  unit_price DOUBLE,
  event_time TIMESTAMP(3),
  WATERMARK FOR event_time AS event_time - INTERVAL '30' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'user-events', 'format' = 'json');

SELECT product_id, window_start, window_end,
  COUNT(*) AS events,
  COUNT(*) FILTER (WHERE event_type = 'view') AS views,
  COUNT(*) FILTER (WHERE event_type = 'purchase') AS purchases,
  SUM(quantity * unit_price) FILTER (WHERE event_type = 'purchase') AS revenue
FROM TABLE(TUMBLE(TABLE user_events, DESCRIPTOR(event_time), INTERVAL '5' MINUTES))
GROUP BY product_id, window_start, window_end;

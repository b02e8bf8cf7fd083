-- HOP with HAVING: items clicked at least 100 times in the last hour, every 5 minutes (hot items).
CREATE TABLE user_behavior (
  user_id BIGINT,
  item_id BIGINT,
  behavior STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'user_behavior', 'format' = 'json');

SELECT item_id, window_start, window_end, COUNT(*) AS clicks
FROM TABLE(HOP(TABLE user_behavior, DESCRIPTOR(ts), INTERVAL '5' MINUTES, INTERVAL '1' HOUR))
WHERE behavior = 'pv'
GROUP BY item_id, window_start, window_end
HAVING COUNT(*) >= 100;

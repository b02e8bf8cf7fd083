-- An epoch-millisecond field as the event time, through a computed column.
CREATE TABLE events (
  user_id STRING,
  event_type STRING,
  ts_ms BIGINT,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'events', 'format' = 'json');

SELECT user_id, window_start, window_end, COUNT(*) AS events
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY user_id, window_start, window_end;

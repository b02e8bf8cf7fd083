-- Epoch seconds as the event time: the replay reads epoch milliseconds.
CREATE TABLE events (
  user_id STRING,
  ts_sec BIGINT,
  ts AS TO_TIMESTAMP_LTZ(ts_sec, 0),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'events', 'format' = 'json');

SELECT user_id, window_start, window_end, COUNT(*) AS events
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY user_id, window_start, window_end;

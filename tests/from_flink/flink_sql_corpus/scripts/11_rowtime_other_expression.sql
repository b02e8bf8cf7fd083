-- Epoch seconds through FROM_UNIXTIME: not a pure conversion the replay can read.
CREATE TABLE events (
  user_id STRING,
  ts_sec BIGINT,
  ts AS TO_TIMESTAMP(FROM_UNIXTIME(ts_sec)),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'events', 'format' = 'json');

SELECT user_id, window_start, window_end, COUNT(*) AS events
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY user_id, window_start, window_end;

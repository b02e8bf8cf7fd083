-- A "rowtime" that is the wall clock: processing time in disguise.
CREATE TABLE events (
  user_id STRING,
  amount INT,
  ts AS CURRENT_TIMESTAMP,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen');

SELECT user_id, window_start, window_end, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY user_id, window_start, window_end;

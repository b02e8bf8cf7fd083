-- A text timestamp as the event time (TO_TIMESTAMP), legacy window.
CREATE TABLE access_log (
  ip STRING,
  url STRING,
  log_time STRING,
  ts AS TO_TIMESTAMP(log_time),
  WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE
) WITH ('connector' = 'filesystem', 'path' = '/logs', 'format' = 'csv');

SELECT ip, TUMBLE_START(ts, INTERVAL '10' MINUTE) AS w, COUNT(*) AS hits
FROM access_log
GROUP BY TUMBLE(ts, INTERVAL '10' MINUTE), ip;

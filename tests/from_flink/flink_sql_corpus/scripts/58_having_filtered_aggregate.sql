-- HAVING on a filtered aggregate: hosts with at least one server error in a 5-minute window.
CREATE TABLE access_log (
  host STRING,
  status INT,
  latency_ms BIGINT,
  log_time TIMESTAMP(3),
  WATERMARK FOR log_time AS log_time - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'access_log', 'format' = 'json');

SELECT host, window_start, window_end,
       COUNT(*) FILTER (WHERE status >= 500) AS errors, MAX(latency_ms) AS worst_latency
FROM TABLE(TUMBLE(TABLE access_log, DESCRIPTOR(log_time), INTERVAL '5' MINUTES))
GROUP BY host, window_start, window_end
HAVING COUNT(*) FILTER (WHERE status >= 500) > 0;

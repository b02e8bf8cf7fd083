-- A window without a key: requests and errors per minute over the whole service.
CREATE TABLE access_log (
  host STRING,
  status INT,
  response_bytes BIGINT,
  log_time TIMESTAMP(3),
  WATERMARK FOR log_time AS log_time - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'access_log', 'format' = 'json');

SELECT window_start, window_end, COUNT(*) AS requests,
       COUNT(*) FILTER (WHERE status >= 500) AS errors, SUM(response_bytes) AS sent_bytes
FROM TABLE(TUMBLE(TABLE access_log, DESCRIPTOR(log_time), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end;

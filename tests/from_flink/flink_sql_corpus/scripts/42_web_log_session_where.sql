-- Sessions of forbidden requests per client over web server logs: the WHERE of the windowing query is the replay's
-- filter (rows with another status still drive the watermark, as in Flink, where it is assigned at the scan).
CREATE TABLE access_log (
  client_ip STRING,
  request_path STRING,
  status_code STRING,
  response_bytes BIGINT,
  log_time TIMESTAMP(3),
  WATERMARK FOR log_time AS log_time - INTERVAL '10' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'nginx-access', 'format' = 'json');

SELECT client_ip, window_start, window_end, COUNT(*) AS forbidden_requests, SUM(response_bytes) AS bytes_sent
FROM TABLE(SESSION(TABLE access_log PARTITION BY client_ip, DESCRIPTOR(log_time), INTERVAL '5' MINUTE))
WHERE status_code = '403'
GROUP BY client_ip, window_start, window_end;

-- CTEs of the windowing query that filter and rename, followed like views: their WHEREs are the replay's filter.
CREATE TABLE access_log (
  ts TIMESTAMP(3),
  client_ip STRING,
  status_code STRING,
  bytes BIGINT,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka');
INSERT INTO sink
WITH forbidden (t, ip, code) AS (SELECT ts, client_ip, status_code FROM access_log WHERE status_code = '403'),
     recent AS (SELECT * FROM forbidden WHERE ip <> '127.0.0.1')
SELECT ip, window_start, window_end, COUNT(*) AS hits
FROM TABLE(TUMBLE(TABLE recent, DESCRIPTOR(t), INTERVAL '1' MINUTE))
GROUP BY ip, window_start, window_end;

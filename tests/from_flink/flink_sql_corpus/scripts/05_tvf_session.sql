-- Session window TVF (Flink 1.19+) partitioned by the key.
CREATE TABLE clicks (
  user_id STRING,
  url STRING,
  click_time TIMESTAMP(3),
  WATERMARK FOR click_time AS click_time - INTERVAL '10' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'json');

SELECT user_id, window_start, window_end, COUNT(*) AS clicks, MIN(url) AS first_url_alphabetically
FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(click_time), INTERVAL '30' MINUTES))
GROUP BY user_id, window_start, window_end;

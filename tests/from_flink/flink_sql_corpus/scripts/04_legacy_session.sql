-- User sessions with a 30 minute gap (legacy SESSION group window: sessions per user_id, the group key).
CREATE TABLE clicks (
  user_id STRING,
  url STRING,
  click_time TIMESTAMP(3),
  WATERMARK FOR click_time AS click_time - INTERVAL '10' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'json');

CREATE TABLE session_stats (
  user_id STRING,
  session_start TIMESTAMP(3),
  session_end TIMESTAMP(3),
  clicks BIGINT
) WITH ('connector' = 'print');

INSERT INTO session_stats
SELECT user_id,
       SESSION_START(click_time, INTERVAL '30' MINUTE),
       SESSION_END(click_time, INTERVAL '30' MINUTE),
       COUNT(url)
FROM clicks
GROUP BY SESSION(click_time, INTERVAL '30' MINUTE), user_id;

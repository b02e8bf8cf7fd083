-- A tutorial's page views per user and hour, in the legacy group-window form.
CREATE TABLE user_behavior (
    user_id BIGINT,
    item_id BIGINT,
    category_id BIGINT,
    behavior STRING,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
    'connector' = 'kafka',
    'topic' = 'user_behavior',
    'scan.startup.mode' = 'earliest-offset',
    'format' = 'json'
);

SELECT
  user_id,
  TUMBLE_START(ts, INTERVAL '1' HOUR) AS window_start_time,
  TUMBLE_END(ts, INTERVAL '1' HOUR) AS window_end_time,
  COUNT(*) AS pv,
  SUM(item_id) AS item_sum
FROM user_behavior
GROUP BY TUMBLE(ts, INTERVAL '1' HOUR), user_id;

-- A tutorial's formatted window start: a function over the window bound is not an aggregate.
CREATE TABLE user_behavior (
    user_id BIGINT,
    behavior STRING,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'user_behavior', 'format' = 'json');

SELECT behavior, DATE_FORMAT(TUMBLE_START(ts, INTERVAL '1' HOUR), 'yyyy-MM-dd HH:00') AS hour_of_day,
       COUNT(*) AS cnt
FROM user_behavior
GROUP BY TUMBLE(ts, INTERVAL '1' HOUR), behavior;

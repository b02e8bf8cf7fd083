-- CUMULATE without a key: the site's page views and distinct visitors of the day so far, every 10 minutes.
CREATE TABLE page_views (
  user_id BIGINT,
  url STRING,
  ts BIGINT,
  rowtime AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rowtime AS rowtime - INTERVAL '1' MINUTE
) WITH ('connector' = 'kafka', 'topic' = 'page_views', 'format' = 'json');

SELECT window_start, window_end, COUNT(*) AS pv, COUNT(DISTINCT user_id) AS uv
FROM TABLE(CUMULATE(TABLE page_views, DESCRIPTOR(rowtime), INTERVAL '10' MINUTES, INTERVAL '1' DAY))
GROUP BY window_start, window_end;

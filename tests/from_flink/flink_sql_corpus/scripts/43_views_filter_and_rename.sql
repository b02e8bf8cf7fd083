-- Views that filter, project and rename between the table and the window: their WHEREs and the query's are ANDed
-- into the replay's filter, each on the table's own columns.
CREATE TABLE clicks (
  user_id BIGINT,
  page STRING,
  referrer STRING,
  is_bot BOOLEAN,
  click_time TIMESTAMP(3),
  WATERMARK FOR click_time AS click_time - INTERVAL '3' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'avro');

CREATE VIEW human_clicks AS
SELECT user_id AS uid, page, referrer, click_time FROM clicks
WHERE is_bot IS NOT TRUE;

CREATE VIEW checkout_clicks AS
SELECT uid, referrer AS source, click_time FROM human_clicks
WHERE page LIKE '/checkout%' OR page IN ('/cart', '/pay');

SELECT uid, window_start, window_end, COUNT(*) AS clicks
FROM TABLE(HOP(TABLE checkout_clicks, DESCRIPTOR(click_time), INTERVAL '1' MINUTE, INTERVAL '10' MINUTE))
WHERE source IS NOT NULL
GROUP BY uid, window_start, window_end;

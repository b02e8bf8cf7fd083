-- A legacy group window without a key, with HAVING: minutes with more than 1000 events in total.
CREATE TABLE events (
  kind STRING,
  payload STRING,
  event_time TIMESTAMP(3),
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'events', 'format' = 'json');

SELECT TUMBLE_START(event_time, INTERVAL '1' MINUTE) AS minute_start, COUNT(*) AS events
FROM events
WHERE kind <> 'heartbeat'
GROUP BY TUMBLE(event_time, INTERVAL '1' MINUTE)
HAVING COUNT(*) > 1000;

-- args: --table datagen
-- The benchmark's generator table: the rowtime is a CASE over nested fields, not a column the replay reads.
CREATE TABLE datagen (
    event_type INT,
    person ROW<id BIGINT, name VARCHAR, dateTime TIMESTAMP(3)>,
    bid ROW<auction BIGINT, price BIGINT, dateTime TIMESTAMP(3)>,
    dateTime AS CASE WHEN event_type = 0 THEN person.dateTime ELSE bid.dateTime END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark');

SELECT event_type, window_start, window_end, COUNT(*) AS events
FROM TABLE(TUMBLE(TABLE datagen, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
GROUP BY event_type, window_start, window_end;

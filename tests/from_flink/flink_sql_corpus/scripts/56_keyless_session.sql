-- SESSION without PARTITION BY: bursts of activity across all sensors (Flink's sessions then span every key).
CREATE TABLE readings (
  sensor_id STRING,
  temperature DOUBLE,
  reading_time TIMESTAMP(3),
  WATERMARK FOR reading_time AS reading_time - INTERVAL '3' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'readings', 'format' = 'json');

SELECT window_start, window_end, COUNT(*) AS readings, MAX(temperature) AS peak
FROM TABLE(SESSION(TABLE readings, DESCRIPTOR(reading_time), INTERVAL '30' SECOND))
GROUP BY window_start, window_end;

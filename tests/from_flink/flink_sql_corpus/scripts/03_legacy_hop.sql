-- Sliding (HOP) legacy window: the maximum reading per sensor over 1 minute, every 10 seconds.
CREATE TABLE sensor_readings (
  sensor_id STRING,
  reading DOUBLE,
  reading_time TIMESTAMP(3),
  WATERMARK FOR reading_time AS reading_time - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'sensors', 'format' = 'json');

SELECT sensor_id,
       HOP_START(reading_time, INTERVAL '10' SECOND, INTERVAL '1' MINUTE) AS hop_start,
       HOP_END(reading_time, INTERVAL '10' SECOND, INTERVAL '1' MINUTE) AS hop_end,
       HOP_ROWTIME(reading_time, INTERVAL '10' SECOND, INTERVAL '1' MINUTE) AS hop_rowtime,
       MAX(reading) AS max_reading,
       MIN(reading) AS min_reading
FROM sensor_readings
GROUP BY HOP(reading_time, INTERVAL '10' SECOND, INTERVAL '1' MINUTE), sensor_id;

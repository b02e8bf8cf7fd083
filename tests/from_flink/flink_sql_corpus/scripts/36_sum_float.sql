-- SUM over a FLOAT: Flink adds in single precision.
CREATE TABLE sensor_readings (
  sensor_id STRING,
  reading FLOAT,
  reading_time TIMESTAMP(3),
  WATERMARK FOR reading_time AS reading_time - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'sensors', 'format' = 'json');

SELECT sensor_id, window_start, window_end, SUM(reading) AS total
FROM TABLE(TUMBLE(TABLE sensor_readings, DESCRIPTOR(reading_time), INTERVAL '1' MINUTE))
GROUP BY sensor_id, window_start, window_end;

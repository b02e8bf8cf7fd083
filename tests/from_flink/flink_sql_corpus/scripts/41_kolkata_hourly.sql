-- A half-hour zone: hourly windows start at half past the UTC hour.
SET 'table.local-time-zone' = 'Asia/Kolkata';

CREATE TABLE rides (
  city STRING,
  fare INT,
  ride_ts TIMESTAMP_LTZ(3),
  WATERMARK FOR ride_ts AS ride_ts - INTERVAL '10' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'rides', 'format' = 'json');

SELECT city, TUMBLE_START(ride_ts, INTERVAL '1' HOUR) AS hour_start, SUM(fare) AS fares, AVG(fare) AS avg_fare
FROM rides
GROUP BY TUMBLE(ride_ts, INTERVAL '1' HOUR), city;

-- A CTE that filters, CUMULATE over it and a HAVING: regions whose completed rides of the day pass 1000.
CREATE TABLE rides (
  ride_id BIGINT,
  region STRING,
  fare BIGINT,
  completed BOOLEAN,
  ride_time TIMESTAMP(3),
  WATERMARK FOR ride_time AS ride_time - INTERVAL '30' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'rides', 'format' = 'json');

WITH done AS (SELECT region, fare, ride_time FROM rides WHERE completed)
SELECT region, window_start, window_end, COUNT(*) AS rides, SUM(fare) AS fares
FROM TABLE(CUMULATE(TABLE done, DESCRIPTOR(ride_time), INTERVAL '30' MINUTES, INTERVAL '1' DAY))
GROUP BY region, window_start, window_end
HAVING COUNT(*) > 1000;

-- The demo job (jobs/configs/demo.yaml) as a Flink SQL job: what `replay config from-flink-sql` reads.
--   replay config from-flink-sql jobs/flink/demo.sql --source-path data/sample --output-path out/demo_sql
-- Watermarks every 200 ms (Flink's default, said explicitly); a split silent for 5 s stops holding them back.
SET 'pipeline.auto-watermark-interval' = '200 ms';
SET 'table.exec.source.idle-timeout' = '5 s';

CREATE TABLE events (
  `split` STRING,
  `offset` BIGINT,
  arrival_time TIMESTAMP(3),
  event_time TIMESTAMP(3),
  `key` STRING,
  `value` DOUBLE,
  -- SQL flavour: watermark = max - 501 ms, the same watermarks as the DataStream job's
  -- forBoundedOutOfOrderness(Duration.ofMillis(500)) = max - 500 - 1 ms.
  WATERMARK FOR event_time AS event_time - INTERVAL '0.501' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = 'kafka:9092',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE window_counts (
  `key` STRING,
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  cnt BIGINT,
  total DOUBLE,
  max_value DOUBLE
) WITH ('connector' = 'print');

INSERT INTO window_counts
SELECT `key`, window_start, window_end, COUNT(*) AS cnt, SUM(`value`) AS total, MAX(`value`) AS max_value
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(event_time), INTERVAL '10' SECOND))
GROUP BY `key`, window_start, window_end;

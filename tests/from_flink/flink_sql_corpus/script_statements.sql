-- A SQL-client script: settings, catalogs, functions, a statement set (dev/table/sqlClient.md, sql/set.md).
SET 'execution.runtime-mode' = 'streaming';
SET 'sql-client.execution.result-mode' = 'tableau';
SET 'table.exec.source.idle-timeout' = '30 s';
SET 'pipeline.auto-watermark-interval' = '500ms';
SET 'parallelism.default' = '2';
RESET 'parallelism.default';
SET;

ADD JAR '/path/to/connector.jar';
CREATE CATALOG my_catalog WITH ('type' = 'generic_in_memory');
USE CATALOG my_catalog;
CREATE DATABASE IF NOT EXISTS my_db;
USE my_db;
CREATE TEMPORARY FUNCTION my_udf AS 'com.example.MyUdf' LANGUAGE JAVA;
SHOW TABLES;

CREATE TABLE pageviews (
  user_id BIGINT,
  page_id BIGINT,
  viewtime TIMESTAMP(3),
  user_region STRING,
  WATERMARK FOR viewtime AS viewtime - INTERVAL '2' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'pageviews',
  'format' = 'avro'
);

CREATE TABLE pageviews_per_region (
  user_region STRING,
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  pv BIGINT,
  uv BIGINT
) WITH ('connector' = 'print');

DESCRIBE pageviews;
EXPLAIN PLAN FOR SELECT * FROM pageviews;

EXECUTE STATEMENT SET
BEGIN
INSERT INTO pageviews_per_region
SELECT user_region, window_start, window_end, COUNT(*) AS pv, COUNT(DISTINCT user_id) AS uv
FROM TABLE(TUMBLE(TABLE pageviews, DESCRIPTOR(viewtime), INTERVAL '1' HOUR))
GROUP BY user_region, window_start, window_end;
INSERT INTO pageviews_per_region
SELECT user_region, window_start, window_end, COUNT(*), MAX(page_id)
FROM TABLE(HOP(TABLE pageviews, DESCRIPTOR(viewtime), INTERVAL '10' MINUTE, INTERVAL '1' HOUR))
GROUP BY user_region, window_start, window_end;
END;

BEGIN STATEMENT SET;
INSERT INTO pageviews_per_region
SELECT user_region, window_start, window_end, MIN(page_id), AVG(page_id)
FROM TABLE(TUMBLE(TABLE pageviews, DESCRIPTOR(viewtime), INTERVAL '1' DAY))
GROUP BY user_region, window_start, window_end;
END;

WITH regional AS (
  SELECT user_region, viewtime FROM pageviews
)
SELECT user_region, window_start, window_end, COUNT(*) AS pv
FROM TABLE(TUMBLE(TABLE regional, DESCRIPTOR(viewtime), INTERVAL '00:15:00' HOUR TO SECOND))
GROUP BY user_region, window_start, window_end;

-- legacy group window aggregation (deprecated since 1.13)
SELECT user_region, TUMBLE_START(viewtime, INTERVAL '1' HOUR) AS wstart, COUNT(*) AS pv
FROM pageviews
GROUP BY user_region, TUMBLE(viewtime, INTERVAL '1' HOUR);

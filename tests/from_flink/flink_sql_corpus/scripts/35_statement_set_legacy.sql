-- A job script: catalog statements, a sink, a statement set with a legacy window.
SET 'pipeline.name' = 'hourly-counts';
CREATE CATALOG my_catalog WITH ('type' = 'generic_in_memory');
USE CATALOG my_catalog;

CREATE TABLE pageviews (
  user_id BIGINT,
  page_id BIGINT,
  viewtime TIMESTAMP(3),
  user_region STRING,
  WATERMARK FOR viewtime AS viewtime - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'pageviews', 'format' = 'avro');

CREATE TABLE region_counts (
  user_region STRING,
  wstart TIMESTAMP(3),
  pv BIGINT,
  users BIGINT
) WITH ('connector' = 'print');

EXECUTE STATEMENT SET
BEGIN
INSERT INTO region_counts
SELECT user_region, TUMBLE_START(viewtime, INTERVAL '1' HOUR), COUNT(*), COUNT(DISTINCT user_id)
FROM pageviews
GROUP BY user_region, TUMBLE(viewtime, INTERVAL '1' HOUR);
END;

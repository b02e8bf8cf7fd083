-- CREATE TABLE shapes as the Flink docs show them (dev/table/sql/create.md, concepts/time_attributes.md).
-- Strictly ascending timestamps: the watermark is the maximum timestamp seen so far.
CREATE TABLE Orders (
    `user` BIGINT,
    product STRING,
    order_time TIMESTAMP(3),
    WATERMARK FOR order_time AS order_time
) WITH (
    'connector' = 'kafka',
    'topic' = 'orders',
    'properties.bootstrap.servers' = 'localhost:9092',
    'format' = 'json'
);

-- Ascending timestamps: watermark = max - 1 ms.
CREATE TABLE user_actions (
  user_name STRING,
  data STRING,
  user_action_time TIMESTAMP(3),
  -- declare user_action_time as event time attribute and use 5 seconds delayed watermark strategy
  WATERMARK FOR user_action_time AS user_action_time - INTERVAL '0.001' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'file:///tmp/user_actions',
  'format' = 'csv'
);

-- An event time from an epoch-millis column, through a computed column.
CREATE TABLE user_actions_ltz (
 user_name STRING,
 data STRING,
 ts BIGINT,
 time_ltz AS TO_TIMESTAMP_LTZ(ts, 3),
 WATERMARK FOR time_ltz AS time_ltz - INTERVAL '5' SECOND
) WITH (
 'connector' = 'datagen'
);

-- A processing-time attribute.
CREATE TABLE user_actions_proc (
  user_name STRING,
  data STRING,
  user_action_time AS PROCTIME()
) WITH (
  'connector' = 'datagen'
);

-- Metadata columns, a primary key, complex types.
CREATE TABLE KafkaTable (
  `event_time` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  `partition` BIGINT METADATA VIRTUAL,
  `offset` BIGINT METADATA VIRTUAL,
  `user_id` BIGINT,
  `item_id` BIGINT,
  `behavior` STRING,
  `tags` ARRAY<STRING>,
  `attrs` MAP<STRING, STRING>,
  `address` ROW<city STRING, zip INT>,
  PRIMARY KEY (`user_id`) NOT ENFORCED,
  WATERMARK FOR `event_time` AS `event_time` - INTERVAL '10' MINUTE
) WITH (
  'connector' = 'kafka',
  'topic' = 'user_behavior',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'testGroup',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'csv'
);

-- Catalog-qualified, temporary, IF NOT EXISTS, a comment, a partitioned filesystem table.
CREATE TEMPORARY TABLE IF NOT EXISTS my_catalog.my_db.Bid (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  dt STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) COMMENT 'bids'
PARTITIONED BY (dt)
WITH (
  'connector' = 'filesystem',
  'path' = 's3://bucket/bids',
  'format' = 'parquet'
);

-- Flink 1.18+ watermark options in WITH.
CREATE TABLE Clicks (
  click_time TIMESTAMP(3),
  url STRING,
  WATERMARK FOR click_time AS click_time - INTERVAL '2' SECOND
) WITH (
  'connector' = 'kafka',
  'scan.watermark.emit.strategy' = 'on-event',
  'scan.watermark.idle-timeout' = '1min'
);

-- A sink table.
CREATE TABLE print_sink (
  item STRING,
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  total_price DECIMAL(10, 2)
) WITH ('connector' = 'print');

-- A text timestamp as the event time (CAST ... AS TIMESTAMP(3)).
CREATE TABLE trades (
  symbol STRING,
  price DOUBLE,
  volume BIGINT,
  trade_time STRING,
  ts AS CAST(trade_time AS TIMESTAMP(3)),
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'kafka', 'topic' = 'trades', 'format' = 'csv');

SELECT symbol, window_start, window_end, SUM(volume) AS volume, MAX(price) AS high, MIN(price) AS low
FROM TABLE(HOP(TABLE trades, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE))
GROUP BY symbol, window_start, window_end;

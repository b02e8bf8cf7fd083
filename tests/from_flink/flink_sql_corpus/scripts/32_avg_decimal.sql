-- AVG over a DECIMAL: Flink's quotient scale and rounding are not reproduced.
CREATE TABLE Bid (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'bids', 'format' = 'json');

SELECT item, window_start, window_end, AVG(price) AS avg_price
FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY item, window_start, window_end;

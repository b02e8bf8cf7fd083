-- The docs' Bid table with a key: total price and bid count per item every 10 minutes (window TVF).
CREATE TABLE Bid (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'bids', 'format' = 'json');

SELECT item, window_start, window_end, SUM(price) AS total_price, COUNT(*) AS bids
  FROM TABLE(
    TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY item, window_start, window_end;

-- HAVING: cards used more than three times in a minute, and their spend (a fraud-detection alert).
CREATE TABLE transactions (
  card_id STRING,
  amount BIGINT,
  merchant STRING,
  tx_time TIMESTAMP(3),
  WATERMARK FOR tx_time AS tx_time - INTERVAL '10' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'transactions', 'format' = 'json');

SELECT card_id, window_start, window_end, COUNT(*) AS tx_count, SUM(amount) AS spend
FROM TABLE(TUMBLE(TABLE transactions, DESCRIPTOR(tx_time), INTERVAL '1' MINUTE))
GROUP BY card_id, window_start, window_end
HAVING COUNT(*) > 3;

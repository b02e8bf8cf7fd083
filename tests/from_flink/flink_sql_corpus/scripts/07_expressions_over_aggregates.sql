-- Expressions over aggregates, as vendors' tutorials write them.
CREATE TABLE payments (
  payment_id BIGINT,
  merchant STRING,
  amount DOUBLE,
  fee DECIMAL(10, 2),
  pay_time TIMESTAMP(3),
  WATERMARK FOR pay_time AS pay_time - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'payments', 'format' = 'json');

SELECT merchant, window_start, window_end,
       ROUND(AVG(amount), 2) AS avg_amount,
       CAST(SUM(fee) AS DECIMAL(10, 2)) AS total_fee,
       COUNT(DISTINCT payment_id) AS payments,
       SUM(amount) / COUNT(*) AS mean_amount,
       MAX(amount) - MIN(amount) AS amount_range
FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(pay_time), INTERVAL '5' MINUTES))
GROUP BY merchant, window_start, window_end;

-- CUMULATE on a TIMESTAMP_LTZ rowtime in a fixed-offset zone: the day starts at local midnight (window.offset).
SET 'table.local-time-zone' = 'Asia/Shanghai';

CREATE TABLE payments (
  merchant_id STRING,
  amount BIGINT,
  pay_ms BIGINT,
  pay_time AS TO_TIMESTAMP_LTZ(pay_ms, 3),
  WATERMARK FOR pay_time AS pay_time - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'payments', 'format' = 'json');

SELECT merchant_id, window_start, window_end, SUM(amount) AS paid
FROM TABLE(CUMULATE(TABLE payments, DESCRIPTOR(pay_time), INTERVAL '1' HOUR, INTERVAL '1' DAY))
GROUP BY merchant_id, window_start, window_end;

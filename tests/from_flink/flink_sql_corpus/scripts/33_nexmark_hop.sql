-- A streaming benchmark's shape: bids per auction in a sliding window (Nexmark-like bid table).
CREATE TABLE datagen (
    event_type INT,
    person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR,
               dateTime TIMESTAMP(3), extra VARCHAR>,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3),
            extra VARCHAR>,
    dateTime AS CASE WHEN event_type = 0 THEN person.dateTime ELSE bid.dateTime END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark');

CREATE TABLE bids (
    auction BIGINT,
    price BIGINT,
    bid_time TIMESTAMP(3),
    WATERMARK FOR bid_time AS bid_time - INTERVAL '4' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'bids', 'format' = 'json');

SELECT auction, HOP_START(bid_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) AS starttime,
       HOP_END(bid_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) AS endtime, COUNT(*) AS num
FROM bids
GROUP BY auction, HOP(bid_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND);

package replaybench;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.reader.SimpleStreamFormat;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.core.fs.FSDataInputStream;

/**
 * Reads the fixed-size big-endian records bench/flink/prepare.py writes (rows and ticks in replay order), one at a
 * time: a FileSource streams the log instead of holding it in the job graph as the test harness's fromData does.
 *   kind i8 | split i32 | offset i64 | arrival i64 | event i64 | value i64 or f64 | key_len u8 | key bytes[KEY_BYTES]
 * The value's 8 bytes are kept as they are (a double's bits when the log's value is a double: BenchSpec.doubles).
 * Not splittable: the replay order is the file order.
 */
public class BenchFormat extends SimpleStreamFormat<BenchEv> {
    public static final int KEY_BYTES = 16;
    public static final int RECORD = 1 + 4 + 8 * 4 + 1 + KEY_BYTES;

    @Override
    public StreamFormat.Reader<BenchEv> createReader(Configuration config, FSDataInputStream stream) {
        InputStream in = new BufferedInputStream(stream, 1 << 20);
        return new StreamFormat.Reader<BenchEv>() {
            private final byte[] rec = new byte[RECORD];
            private final ByteBuffer buf = ByteBuffer.wrap(rec);

            @Override
            public BenchEv read() throws IOException {
                int n = in.readNBytes(rec, 0, RECORD);
                if (n == 0) return null;
                if (n < RECORD) throw new EOFException("truncated record at the end of the events file");
                buf.clear();
                BenchEv e = new BenchEv();
                e.kind = buf.get();
                e.split = buf.getInt();
                e.offset = buf.getLong();
                e.arrival = buf.getLong();
                e.eventTime = buf.getLong();
                e.value = buf.getLong();
                int len = buf.get() & 0xff;
                e.key = e.kind == BenchEv.ROW ? new String(rec, RECORD - KEY_BYTES, len, StandardCharsets.UTF_8) : "";
                return e;
            }

            @Override
            public void close() throws IOException {
                in.close();
            }
        };
    }

    @Override
    public TypeInformation<BenchEv> getProducedType() {
        return TypeInformation.of(BenchEv.class);
    }
}

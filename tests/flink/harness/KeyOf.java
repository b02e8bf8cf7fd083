package replayharness;

import org.apache.flink.api.java.functions.KeySelector;

/** The window key: the row's key (JSON text). A class, not a lambda, so Flink's type extraction is certain. */
public class KeyOf implements KeySelector<Ev, String> {
    @Override
    public String getKey(Ev e) {
        return e.key;
    }
}

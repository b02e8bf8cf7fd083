package replayharness;

import org.apache.flink.streaming.api.operators.AbstractUdfStreamOperator;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.OneInputStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.SimpleUdfStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;

/**
 * Flink's SimpleUdfStreamOperatorFactory (what WindowedStream wraps its WindowOperator in), with one change: the
 * StreamOperatorParameters it creates the operator with carry a {@link ManualProcessingTimeService} instead of the
 * task's processing-time service. SimpleOperatorFactory.createStreamOperator gives the operator
 * parameters.getProcessingTimeService() (AbstractStreamOperator.setProcessingTimeService), and
 * AbstractStreamOperator.initializeState passes getProcessingTimeService() to the state context that builds the
 * InternalTimeServiceManager: the WindowOperator's timer service, its assigner context's current processing time
 * and its trigger context all use the manual service. The service is published in the case's Outputs for the
 * chained ClockOperator that moves it; chained (ALWAYS), so both run in one task thread.
 */
public class ManualTimeOperatorFactory<IN, OUT> extends SimpleUdfStreamOperatorFactory<OUT>
        implements OneInputStreamOperatorFactory<IN, OUT> {
    private final String caseId;

    public ManualTimeOperatorFactory(AbstractUdfStreamOperator<OUT, ?> operator, String caseId) {
        super(operator);
        this.caseId = caseId;
        setChainingStrategy(ChainingStrategy.ALWAYS);
    }

    @Override
    public <T extends StreamOperator<OUT>> T createStreamOperator(StreamOperatorParameters<OUT> p) {
        ManualProcessingTimeService manual = new ManualProcessingTimeService();
        Outputs.of(caseId).processingTime = manual;
        return super.createStreamOperator(new StreamOperatorParameters<>(p.getContainingTask(), p.getStreamConfig(),
                p.getOutput(), () -> manual, p.getOperatorEventDispatcher(), p.getMailboxExecutor()));
    }
}

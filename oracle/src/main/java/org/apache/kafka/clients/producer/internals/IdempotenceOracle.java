package org.apache.kafka.clients.producer.internals;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownProducerIdException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.common.utils.internals.ProducerIdAndEpoch;

import failoverlab.oracle.Json;

/**
 * The idempotent producer's sequence and epoch decisions, from Kafka's
 * {@code TransactionManager} (kafka-clients, no transactional id) over random
 * histories on two partitions. The history's steps are the calls the
 * producer's Sender makes:
 * <ul>
 * <li>{@code send}: a batch is drained: {@code sequenceNumber},
 *     {@code ProducerBatch.setProducerState}, {@code incrementSequenceNumber},
 *     {@code addInFlightBatch} (after {@code maybeUpdateProducerIdAndEpoch}
 *     when the partition's epoch is stale and it has nothing in flight);</li>
 * <li>{@code ack}: {@code handleCompletedBatch};</li>
 * <li>{@code error}: {@code canRetry(response, batch)}; when the Sender may not
 *     retry (Kafka's answer false, or — the Sender's own tests, given here as
 *     inputs — delivery.timeout.ms reached or no retries left) the batch fails
 *     through {@code handleFailedBatch(batch, error, adjustSequenceNumbers =
 *     retries left)}; else it is re-enqueued ({@code ProducerBatch.reenqueued});</li>
 * <li>{@code expire}: delivery.timeout.ms passed while the batch waited:
 *     {@code handleFailedBatch(batch, TimeoutException, false)} and, if
 *     {@code batch.inRetry()}, {@code markSequenceUnresolved} (the Sender's
 *     rule for expired batches);</li>
 * <li>{@code poll}: {@code bumpIdempotentEpochAndResetIdIfNeeded} and
 *     {@code maybeResolveSequences}, the start of each Sender loop.</li>
 * </ul>
 * Each error step records the context Kafka reports before deciding (last
 * acknowledged sequence and offset, unresolved or not, the batch's base
 * sequence and whether it was reset) and what Kafka decided: the canRetry
 * answer, whether an epoch bump is then required (the producer-wide
 * {@code clientSideEpochBumpRequired}) and for which partitions. Every step
 * records the producer epoch, each partition's next sequence, last
 * acknowledged sequence and unresolved flag.
 */
public final class IdempotenceOracle {
    private static final TopicPartition[] TPS = {new TopicPartition("t", 0), new TopicPartition("t", 1)};
    private static final Errors[] ERRORS = {
        Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, Errors.UNKNOWN_PRODUCER_ID, Errors.NOT_LEADER_OR_FOLLOWER,
        Errors.REQUEST_TIMED_OUT, Errors.NOT_ENOUGH_REPLICAS, Errors.CORRUPT_MESSAGE, Errors.INVALID_RECORD,
        Errors.MESSAGE_TOO_LARGE};

    public static List<String> generate(long seed, int count) throws Exception {
        Random rnd = new Random(seed);
        List<String> out = new ArrayList<>(count);
        for (int id = 0; id < count; id++) out.add(history(rnd, id));
        return out;
    }

    private static String history(Random rnd, int id) throws Exception {
        TransactionManager tm = new TransactionManager(new LogContext(), null, 60_000, 100L,
            new ApiVersions(), null, false);
        short epoch0 = (short) (rnd.nextDouble() < 0.1 ? Short.MAX_VALUE - rnd.nextInt(2) : rnd.nextInt(5));
        call(tm, "transitionTo", state("INITIALIZING"));
        call(tm, "setProducerIdAndEpoch", new ProducerIdAndEpoch(1000L, epoch0));
        call(tm, "transitionTo", state("READY"));
        List<List<ProducerBatch>> inFlight = List.of(new ArrayList<>(), new ArrayList<>());
        java.util.Map<ProducerBatch, Integer> ids = new java.util.IdentityHashMap<>();
        long[] nextOffset = {0, 0};
        long now = 0;
        StringBuilder steps = new StringBuilder("[");
        int n = 4 + rnd.nextInt(30);
        for (int i = 0; i < n; i++) {
            if (i > 0) steps.append(',');
            now += 1 + rnd.nextInt(50);
            int p = rnd.nextInt(2);
            TopicPartition tp = TPS[p];
            List<ProducerBatch> mine = inFlight.get(p);
            Json step = new Json();
            double k = rnd.nextDouble();
            if (!tm.hasProducerId()) {
                step.str("op", "no_producer_id");
            } else if (k < 0.3 || mine.isEmpty()) {
                if (tm.hasStaleProducerIdAndEpoch(tp) && tm.hasInflightBatches(tp)) {
                    step.str("op", "stale").num("p", p);
                } else if (mine.size() >= 5) {
                    step.str("op", "full").num("p", p);
                } else {
                    boolean wasStale = tm.hasStaleProducerIdAndEpoch(tp);
                    if (wasStale) tm.maybeUpdateProducerIdAndEpoch(tp);
                    int records = 1 + rnd.nextInt(3);
                    ProducerBatch b = batch(tp, records, now);
                    b.setProducerState(tm.producerIdAndEpoch(), tm.sequenceNumber(tp), false);
                    tm.incrementSequenceNumber(tp, records);
                    tm.addInFlightBatch(b);
                    mine.add(b);
                    ids.put(b, ids.size());
                    step.str("op", "send").num("p", p).num("batch", ids.get(b)).num("records", records).bool("was_stale", wasStale)
                        .obj("kafka", new Json().num("base_sequence", b.baseSequence()).num("epoch", b.producerEpoch()));
                }
            } else if (k < 0.82) {
                ProducerBatch b = rnd.nextDouble() < 0.7 ? first(mine) : mine.get(rnd.nextInt(mine.size()));
                double e = rnd.nextDouble();
                if (e < 0.45) {
                    long base = nextOffset[p];
                    nextOffset[p] += b.recordCount;
                    tm.handleCompletedBatch(b, new ProduceResponse.PartitionResponse(Errors.NONE, base, -1, 0));
                    mine.remove(b);
                    step.str("op", "ack").num("p", p).num("batch", ids.get(b)).num("base_sequence", b.baseSequence())
                        .num("records", b.recordCount).num("base_offset", base);
                } else {
                    Errors error = ERRORS[rnd.nextInt(ERRORS.length)];
                    long logStart = rnd.nextDouble() < 0.3 ? -1 : rnd.nextInt((int) nextOffset[p] + 3);
                    boolean retriesLeft = rnd.nextDouble() < 0.8;
                    boolean timedOut = rnd.nextDouble() < 0.15;
                    Json ctx = context(tm, tp, b).num("log_start_offset", logStart);
                    boolean canRetry = tm.canRetry(new ProduceResponse.PartitionResponse(error, -1, -1, logStart), b);
                    boolean failed = !(canRetry && retriesLeft && !timedOut);
                    if (failed) {
                        tm.handleFailedBatch(b, exception(error), retriesLeft);
                        mine.remove(b);
                    } else {
                        b.reenqueued(now);
                    }
                    step.str("op", "error").num("p", p).num("batch", ids.get(b)).str("error", error.name())
                        .bool("retries_left", retriesLeft).bool("delivery_timeout", timedOut)
                        .obj("context", ctx)
                        .obj("kafka", new Json().bool("can_retry", canRetry).bool("failed", failed)
                            .bool("bump_required", bumpRequired(tm)).ints("rewrite", rewrite(tm)));
                }
            } else if (k < 0.9) {
                ProducerBatch b = mine.get(rnd.nextInt(mine.size()));
                boolean inRetry = b.inRetry();
                tm.handleFailedBatch(b, new TimeoutException("expired"), false);
                if (inRetry) tm.markSequenceUnresolved(b);
                mine.remove(b);
                step.str("op", "expire").num("p", p).num("batch", ids.get(b)).num("base_sequence", b.baseSequence())
                    .obj("kafka", new Json().bool("in_retry", inRetry)
                        .bool("unresolved", tm.hasUnresolvedSequence(tp))
                        .bool("bump_required", bumpRequired(tm)).ints("rewrite", rewrite(tm)));
            } else {
                boolean bump = bumpRequired(tm);
                int[] rewriteBefore = rewrite(tm);
                tm.bumpIdempotentEpochAndResetIdIfNeeded();
                tm.maybeResolveSequences();
                step.str("op", "poll").obj("kafka", new Json().bool("bump_required_before", bump)
                    .ints("rewrite_before", rewriteBefore).bool("has_producer_id", tm.hasProducerId())
                    .bool("bump_required", bumpRequired(tm)).ints("rewrite", rewrite(tm)));
            }
            step.obj("after", state(tm));
            steps.append(step);
        }
        return new Json().num("id", id).num("epoch", epoch0).raw("steps", steps.append(']').toString()).toString();
    }

    private static ProducerBatch first(List<ProducerBatch> bs) {
        ProducerBatch f = bs.get(0);
        for (ProducerBatch b : bs) if (b.baseSequence() < f.baseSequence()) f = b;
        return f;
    }

    private static RuntimeException exception(Errors e) {
        return switch (e) {
            case OUT_OF_ORDER_SEQUENCE_NUMBER -> new OutOfOrderSequenceException("oos");
            case UNKNOWN_PRODUCER_ID -> new UnknownProducerIdException("unknown");
            default -> e.exception();
        };
    }

    private static Json context(TransactionManager tm, TopicPartition tp, ProducerBatch b) {
        OptionalInt acked = tm.lastAckedSequence(tp);
        OptionalLong ackedOffset = tm.lastAckedOffset(tp);
        return new Json().num("last_acked_sequence", acked.orElse(-1))
            .num("last_acked_offset", ackedOffset.orElse(-1))
            .bool("unresolved", tm.hasUnresolvedSequence(tp))
            .num("base_sequence", b.baseSequence())
            .bool("sequence_reset", b.sequenceHasBeenReset());
    }

    private static Json state(TransactionManager tm) {
        Json s = new Json().bool("has_producer_id", tm.hasProducerId())
            .num("epoch", tm.hasProducerId() ? tm.producerIdAndEpoch().epoch : -1);
        int[] next = new int[2], acked = new int[2], unresolved = new int[2];
        for (int p = 0; p < 2; p++) {
            next[p] = tm.sequenceNumber(TPS[p]);
            acked[p] = tm.lastAckedSequence(TPS[p]).orElse(-1);
            unresolved[p] = tm.hasUnresolvedSequence(TPS[p]) ? 1 : 0;
        }
        return s.ints("next_sequence", next).ints("last_acked_sequence", acked).ints("unresolved", unresolved);
    }

    private static ProducerBatch batch(TopicPartition tp, int records, long now) {
        ProducerBatch b = new ProducerBatch(tp, MemoryRecords.builder(ByteBuffer.allocate(1024),
            Compression.NONE, TimestampType.CREATE_TIME, 0L), now);
        for (int r = 0; r < records; r++) b.tryAppend(now, null, new byte[] {1}, new org.apache.kafka.common.header.Header[0], null, now);
        return b;
    }

    private static boolean bumpRequired(TransactionManager tm) throws Exception {
        Field f = TransactionManager.class.getDeclaredField("clientSideEpochBumpRequired");
        f.setAccessible(true);
        return f.getBoolean(tm);
    }

    @SuppressWarnings("unchecked")
    private static int[] rewrite(TransactionManager tm) throws Exception {
        Field f = TransactionManager.class.getDeclaredField("partitionsToRewriteSequences");
        f.setAccessible(true);
        Set<TopicPartition> s = (Set<TopicPartition>) f.get(tm);
        return s.stream().mapToInt(TopicPartition::partition).sorted().toArray();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object state(String name) throws Exception {
        Class c = Class.forName("org.apache.kafka.clients.producer.internals.TransactionManager$State");
        return Enum.valueOf(c, name);
    }

    private static void call(Object o, String name, Object arg) throws Exception {
        for (Method m : o.getClass().getDeclaredMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == 1
                && m.getParameterTypes()[0].isInstance(arg)) {
                m.setAccessible(true);
                m.invoke(o, arg);
                return;
            }
        }
        throw new NoSuchMethodException(name);
    }
}

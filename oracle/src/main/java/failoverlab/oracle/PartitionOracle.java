package failoverlab.oracle;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import kafka.cluster.DelayedOperations;
import kafka.cluster.Partition;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.metadata.ConfigRepository;
import org.apache.kafka.metadata.LeaderAndIsr;
import org.apache.kafka.metadata.LeaderRecoveryState;
import org.apache.kafka.metadata.MetadataCache;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.partition.AlterPartitionListener;
import org.apache.kafka.server.partition.AlterPartitionManager;
import org.apache.kafka.server.partition.PartitionState;
import org.apache.kafka.server.replica.Replica;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpoints;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.CleanerConfig;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogManager;
import org.apache.kafka.storage.internals.log.LogOffsetMetadata;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Random sequences on Kafka's own kafka.cluster.Partition (kafka_2.13 4.4.0),
 * as leader (broker 1) of a partition on 2 to 4 brokers, with a real log
 * (LogManager, UnifiedLog) in a temporary directory. Each step is one of:
 * produce (appendRecordsToLeader, acks=1), a follower fetch
 * (updateFollowerFetchState, which asks maybeExpandIsr and then
 * maybeIncrementLeaderHW), the ISR-shrink check (getOutOfSyncReplicas and
 * maybeShrinkIsr), the controller committing the proposal in flight (the
 * AlterPartitionManager's future completes), a new leader epoch
 * (makeLeader), a follower fenced / in controlled shutdown / back in the
 * metadata cache, or the clock moving. After each step it records what
 * Partition decided: the high watermark, the committed and maximal ISR,
 * whether a proposal is in flight and any ISR change it proposed.
 *
 * The collaborators Partition is handed are stand-ins that decide nothing
 * (a clock, a metadata cache that answers fenced / shutting down / broker
 * epoch, an AlterPartitionManager that holds the future, no delayed
 * operations); every rule is Partition's.
 */
final class PartitionOracle {
    static final long LAG_MAX_MS = 100;
    static final int LEADER = 1;
    static final long LEADER_BROKER_EPOCH = 5;
    /** Every follower's registered broker epoch in the metadata cache. */
    static final long BROKER_EPOCH = 7;
    /** 2026-01-01T00:00:00Z (see ReplicaOracle: Kafka's 0 means "never"). */
    private static final long WALL_CLOCK_START_MS = 1_767_225_600_000L;

    private static final class Clock implements Time {
        long now = WALL_CLOCK_START_MS;
        @Override public long milliseconds() { return now; }
        @Override public long nanoseconds() { return now * 1_000_000L; }
        @Override public void sleep(long ms) { now += ms; }
        @Override public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
            throw new UnsupportedOperationException("waitObject");
        }
    }

    /** No purgatories: nothing is parked on this partition. */
    private static final class NoDelayedOperations extends DelayedOperations {
        NoDelayedOperations(TopicPartition tp) {
            super(scala.Option.empty(), tp, null, null, null, null);
        }
        @Override public void checkAndCompleteAll() { }
        @Override public int numDelayedDelete() { return 0; }
    }

    /** What the metadata cache says of each follower; changed by the steps. */
    private static final class Meta {
        final Set<Integer> fenced = new HashSet<>();
        final Set<Integer> shuttingDown = new HashSet<>();
        final Map<Integer, Long> epochs = new HashMap<>();
    }

    private Meta meta;
    private scala.Option<Uuid> topicId;
    private int minIsr;
    private LeaderAndIsr sent;
    private CompletableFuture<LeaderAndIsr> inFlight;
    private final Clock clock = new Clock();

    private final MetadataCache metadata = (MetadataCache) Proxy.newProxyInstance(
        MetadataCache.class.getClassLoader(), new Class<?>[] {MetadataCache.class},
        (proxy, method, args) -> switch (method.getName()) {
            case "getAliveBrokerEpoch" -> Optional.ofNullable(meta.epochs.get((Integer) args[0]));
            case "isBrokerFenced" -> meta.fenced.contains((Integer) args[0]);
            case "isBrokerShuttingDown" -> meta.shuttingDown.contains((Integer) args[0]);
            case "hasAliveBroker" -> meta.epochs.containsKey((Integer) args[0]);
            case "hashCode" -> System.identityHashCode(proxy);
            case "toString" -> "metadata";
            default -> throw new UnsupportedOperationException(method.getName());
        });

    /** Topic configs: only min.insync.replicas differs from the defaults. */
    private final ConfigRepository configs = (ConfigRepository) Proxy.newProxyInstance(
        ConfigRepository.class.getClassLoader(), new Class<?>[] {ConfigRepository.class},
        (proxy, method, args) -> {
            if (method.getReturnType() == Properties.class) {
                Properties p = new Properties();
                p.put(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(minIsr));
                return p;
            }
            if (method.getName().equals("hashCode")) return System.identityHashCode(proxy);
            throw new UnsupportedOperationException(method.getName());
        });

    private final AlterPartitionManager alterPartition = (AlterPartitionManager) Proxy.newProxyInstance(
        AlterPartitionManager.class.getClassLoader(), new Class<?>[] {AlterPartitionManager.class},
        (proxy, method, args) -> {
            switch (method.getName()) {
                case "submit" -> {
                    sent = (LeaderAndIsr) args[1];
                    inFlight = new CompletableFuture<>();
                    return inFlight;
                }
                case "start", "shutdown" -> { return null; }
                case "hashCode" -> { return System.identityHashCode(proxy); }
                default -> throw new UnsupportedOperationException(method.getName());
            }
        });

    private static final AlterPartitionListener NO_LISTENER = new AlterPartitionListener() {
        @Override public void markIsrExpand() { }
        @Override public void markIsrShrink() { }
        @Override public void markFailed() { }
    };

    private static final OffsetCheckpoints NO_CHECKPOINTS = (dir, tp) -> Optional.empty();

    static List<String> generate(long seed, int count) throws Exception {
        return new PartitionOracle().run(seed, count);
    }

    private List<String> run(long seed, int count) throws Exception {
        Random rnd = new Random(seed);
        File dir = Scratch.dir("failover-lab-partition");
        Properties defaults = new Properties();
        defaults.put(TopicConfig.SEGMENT_INDEX_BYTES_CONFIG, "4096");
        meta = new Meta();
        LogManager logs = new LogManager(List.of(dir), List.of(), configs, new LogConfig(defaults),
            new CleanerConfig(false), 1, 1000L, 10000L, 10000L, 1000L, 5 * 60 * 1000,
            new ProducerStateManagerConfig(86400000, false), 600000, new Scratch.NoScheduler(),
            new BrokerTopicStats(), new LogDirFailureChannel(1), clock, false, 0L, null);
        List<String> out = new ArrayList<>(count);
        try {
            for (int id = 0; id < count; id++) out.add(sequence(rnd, id, logs));
        } finally {
            Utils.delete(dir);
        }
        return out;
    }

    private static int[] ints(Set<Integer> s) {
        return s.stream().mapToInt(Integer::intValue).toArray();
    }

    private static String list(Iterable<Integer> ids) {
        TreeSet<Integer> sorted = new TreeSet<>();
        ids.forEach(sorted::add);
        StringBuilder sb = new StringBuilder("[");
        for (int b : sorted) {
            if (sb.length() > 1) sb.append(',');
            sb.append(b);
        }
        return sb.append(']').toString();
    }

    private PartitionRegistration registration(int[] replicas, Set<Integer> isr, int leaderEpoch, int partitionEpoch) {
        int[] isrArr = isr.stream().sorted(Comparator.comparingInt(b -> indexOf(replicas, b)))
            .mapToInt(Integer::intValue).toArray();
        return new PartitionRegistration.Builder()
            .setReplicas(replicas)
            .setDirectories(new Uuid[replicas.length])
            .setIsr(isrArr)
            .setLeader(LEADER)
            .setLeaderRecoveryState(LeaderRecoveryState.RECOVERED)
            .setLeaderEpoch(leaderEpoch)
            .setPartitionEpoch(partitionEpoch)
            .build();
    }

    /** Follower b as the metadata cache of a healthy, registered broker has it. */
    private void eligibleNow(int b) {
        meta.fenced.remove(b);
        meta.shuttingDown.remove(b);
        meta.epochs.put(b, BROKER_EPOCH);
    }

    private static int indexOf(int[] a, int x) {
        for (int i = 0; i < a.length; i++) if (a[i] == x) return i;
        return -1;
    }

    private String sequence(Random rnd, int id, LogManager logs) throws IOException {
        // Mostly three or four replicas: room for a follower outside the
        // ISR while another one's change is in flight.
        double size = rnd.nextDouble();
        int rf = size < 0.2 ? 2 : size < 0.6 ? 3 : 4;
        // A third of the sequences open with a script that leaves a follower
        // caught up, eligible and outside the maximal ISR (the case where
        // the HW must wait for it): 1, it fetches to the end while another
        // follower's expansion is in flight; 2, it fetches to the end while
        // fenced and is then unfenced. The rest of the sequence is random.
        double o = rnd.nextDouble();
        int opening = o < 0.15 ? 1 : o < 0.32 ? 2 : 0;
        if (opening == 1) rf = 4;
        int[] replicas = new int[rf];
        for (int i = 0; i < rf; i++) replicas[i] = i + 1;
        minIsr = 1 + rnd.nextInt(rf + 1);
        meta = new Meta();
        Json brokers = new Json();
        StringBuilder brokerList = new StringBuilder("[");
        Map<Integer, Long> fetchEpoch = new HashMap<>();
        for (int b = 2; b <= rf; b++) {
            if (rnd.nextDouble() < 0.1) meta.fenced.add(b);
            if (rnd.nextDouble() < 0.08) meta.shuttingDown.add(b);
            // Followers fetch with broker epoch 7. The metadata cache knows
            // that registration, an older one (it has not seen the new
            // registration yet: the follower is not ISR-eligible), or none.
            // (A fetch older than the cached epoch is refused by
            // Replica.updateFetchStateOrThrow, which is not what is asked here.)
            double e = rnd.nextDouble();
            if (e < 0.1) meta.epochs.put(b, BROKER_EPOCH - 1);
            else if (e < 0.95) meta.epochs.put(b, BROKER_EPOCH);
            fetchEpoch.put(b, BROKER_EPOCH);
        }
        Set<Integer> isr = new TreeSet<>();
        isr.add(LEADER);
        for (int b = 2; b <= rf; b++) if (rnd.nextDouble() < 0.45) isr.add(b);
        java.util.ArrayDeque<int[]> script = new java.util.ArrayDeque<>();
        if (opening == 1) {
            isr.remove(3);
            isr.remove(4);
            isr.add(2);
            for (int b = 3; b <= 4; b++) eligibleNow(b);
            script.addAll(List.of(new int[] {0, 0}, new int[] {1, 4}, new int[] {1, 3}, new int[] {0, 0},
                new int[] {1, 2}, new int[] {1, 4}));
        } else if (opening == 2) {
            int f = 2 + rnd.nextInt(rf - 1);
            isr.remove(f);
            eligibleNow(f);
            meta.fenced.add(f);
            script.addAll(List.of(new int[] {0, 0}, new int[] {1, f}, new int[] {2, f}, new int[] {0, 0}));
            for (int b = 2; b <= rf; b++) if (isr.contains(b)) script.add(new int[] {1, b});
        }
        for (int b = 2; b <= rf; b++) {
            if (b > 2) brokerList.append(',');
            brokerList.append(new Json().num("id", b).bool("fenced", meta.fenced.contains(b))
                .bool("shutting_down", meta.shuttingDown.contains(b))
                .num("epoch", meta.epochs.getOrDefault(b, -1L)));
        }
        brokerList.append(']');
        int leaderEpoch = rnd.nextInt(3);
        int partitionEpoch = leaderEpoch + rnd.nextInt(3);
        sent = null;
        inFlight = null;
        clock.now = WALL_CLOCK_START_MS + rnd.nextInt(50);

        TopicPartition tp = new TopicPartition("p", id);
        topicId = scala.Option.apply(new Uuid(1L, id + 1L));
        Partition partition = new Partition(tp, LAG_MAX_MS, LEADER, () -> LEADER_BROKER_EPOCH, clock,
            NO_LISTENER, new NoDelayedOperations(tp), metadata, logs, alterPartition, topicId);
        partition.createLogIfNotExists(true, false, NO_CHECKPOINTS, topicId, scala.Option.empty());
        partition.makeLeader(registration(replicas, isr, leaderEpoch, partitionEpoch), true, NO_CHECKPOINTS,
            topicId, scala.Option.empty());
        UnifiedLog log = partition.localLogOrException();

        Json head = new Json().num("id", id).num("lag_max_ms", LAG_MAX_MS).num("min_isr", minIsr)
            .raw("replicas", list(java.util.Arrays.stream(replicas).boxed().toList()))
            .raw("isr", list(isr)).num("leader_epoch", leaderEpoch).num("partition_epoch", partitionEpoch)
            .num("now", clock.now).raw("brokers", brokerList.toString());

        Map<Integer, Long> lastFetch = new HashMap<>();
        List<Long> bounds = new ArrayList<>(List.of(0L));
        StringBuilder steps = new StringBuilder("[");
        int n = 8 + rnd.nextInt(14);
        for (int i = 0; i < n; i++) {
            if (i > 0) steps.append(',');
            clock.now += rnd.nextInt(40);
            Json step = new Json();
            LeaderAndIsr proposedBefore = sent;
            // A scripted step: {0, _} append, {1, f} f fetches to the log
            // end, {2, f} f is unfenced.
            int[] forced = script.poll();
            double k = forced == null ? rnd.nextDouble() : forced[0] == 0 ? 0.0 : forced[0] == 1 ? 0.3 : 0.99;
            String outOfSync = null;
            if (k < 0.22) {
                int records = 1 + rnd.nextInt(5);
                SimpleRecord[] rs = new SimpleRecord[records];
                for (int r = 0; r < records; r++) rs[r] = new SimpleRecord(new byte[] {(byte) r});
                partition.appendRecordsToLeader(MemoryRecords.withRecords(Compression.NONE, rs), AppendOrigin.CLIENT,
                    1, RequestLocal.noCaching(), VerificationGuard.SENTINEL, (short) 0);
                step.str("op", "append").num("records", records);
                bounds.add(log.logEndOffset());
            } else if (k < 0.62) {
                int f = forced != null ? forced[1] : 2 + rnd.nextInt(rf - 1);
                long leo = log.logEndOffset();
                long hw = log.highWatermark();
                // A follower's log ends where one of the leader's batches
                // ends (it appends whole batches): its fetch offsets are batch
                // boundaries. (Kafka rounds a high watermark that falls inside
                // a batch down to the batch's base offset when it next reads
                // it, which no real follower makes it do.)
                double c = forced != null ? 0 : rnd.nextDouble();
                long offset;
                if (c < 0.45) {
                    offset = leo;
                } else if (c < 0.75) {
                    long near = hw - 1 + rnd.nextInt(3);
                    offset = 0;
                    for (long b : bounds) if (b <= near) offset = b;
                } else {
                    offset = bounds.get(rnd.nextInt(bounds.size()));
                }
                // Followers mostly move forward.
                if (forced == null && rnd.nextDouble() < 0.9) offset = Math.max(offset, lastFetch.getOrDefault(f, 0L));
                lastFetch.put(f, offset);
                Replica replica = partition.getReplica(f).get();
                partition.updateFollowerFetchState(replica, new LogOffsetMetadata(offset), 0L, clock.now, leo,
                    fetchEpoch.get(f));
                step.str("op", "fetch").num("follower", f).num("offset", offset);
            } else if (k < 0.74) {
                clock.now += rnd.nextInt(150);
                step.str("op", "tick");
            } else if (k < 0.84) {
                List<Integer> ids = new ArrayList<>();
                partition.getOutOfSyncReplicas(LAG_MAX_MS).foreach(b -> ids.add((Integer) b));
                outOfSync = list(ids);
                partition.maybeShrinkIsr();
                step.str("op", "shrink_check");
            } else if (k < 0.93) {
                if (inFlight != null && !inFlight.isDone()) {
                    CompletableFuture<LeaderAndIsr> f = inFlight;
                    partitionEpoch = sent.partitionEpoch() + 1;
                    f.complete(sent.withPartitionEpoch(partitionEpoch));
                    step.str("op", "commit");
                } else {
                    clock.now += rnd.nextInt(150);
                    step.str("op", "tick");
                }
            } else if (k < 0.97) {
                leaderEpoch += 1;
                partitionEpoch += 1;
                Set<Integer> newIsr = new TreeSet<>(partition.partitionState().isr());
                if (rnd.nextDouble() < 0.4) {
                    newIsr.clear();
                    newIsr.add(LEADER);
                    for (int b = 2; b <= rf; b++) if (rnd.nextDouble() < 0.5) newIsr.add(b);
                }
                partition.makeLeader(registration(replicas, newIsr, leaderEpoch, partitionEpoch), false,
                    NO_CHECKPOINTS, topicId, scala.Option.empty());
                // A proposal of the old epoch is forgotten (Kafka would ignore its answer).
                inFlight = null;
                step.str("op", "new_epoch").num("leader_epoch", leaderEpoch).num("partition_epoch", partitionEpoch)
                    .raw("isr", list(newIsr));
            } else {
                int f = forced != null ? forced[1] : 2 + rnd.nextInt(rf - 1);
                double c = forced != null ? 0 : rnd.nextDouble();
                String what;
                if (c < 0.4) {
                    what = meta.fenced.remove(f) ? "unfenced" : "fenced";
                    if (what.equals("fenced")) meta.fenced.add(f);
                } else if (c < 0.8) {
                    what = meta.shuttingDown.remove(f) ? "not_shutting_down" : "shutting_down";
                    if (what.equals("shutting_down")) meta.shuttingDown.add(f);
                } else {
                    what = meta.epochs.remove(f) != null ? "gone" : "registered";
                    if (what.equals("registered")) meta.epochs.put(f, BROKER_EPOCH);
                }
                step.str("op", "metadata").num("follower", f).str("change", what);
            }
            step.num("now", clock.now);
            PartitionState s = partition.partitionState();
            Json kafka = new Json()
                .num("leo", log.logEndOffset())
                .num("hw", log.highWatermark())
                .raw("isr", list(s.isr()))
                .raw("maximal_isr", list(s.maximalIsr()))
                .bool("in_flight", s.isInflight());
            if (sent != proposedBefore && sent != null) kafka.raw("proposed", list(sent.isr()));
            if (outOfSync != null) kafka.raw("out_of_sync", outOfSync);
            step.obj("kafka", kafka);
            steps.append(step);
        }
        log.close();
        return head.raw("steps", steps.append(']').toString()).toString();
    }
}

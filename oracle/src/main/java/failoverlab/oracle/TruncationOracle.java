package failoverlab.oracle;

import java.io.File;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import kafka.server.AbstractFetcherThread;
import kafka.server.FailedPartitions;
import kafka.server.InitialFetchState;
import kafka.server.OffsetTruncationState;
import kafka.server.TierStateMachine;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData.EpochEndOffset;
import org.apache.kafka.server.LeaderEndPoint;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.network.BrokerEndPoint;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * The follower's truncation after a leader change, decided by Kafka 4.4.0's
 * own classes: the leader's answer to "where does my epoch end?" is its
 * org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache.endOffsetFor
 * (kafka-storage), and the follower's choice of truncation offset is
 * kafka.server.AbstractFetcherThread's (kafka_2.13), reached through
 * truncateOnFetchResponse (the DivergingEpoch path; OffsetsForLeaderEpoch
 * ends in the same getOffsetTruncationState).
 *
 * Each vector is a pair of histories that share a prefix and then diverge:
 * records the follower has in the last shared epoch and the leader does not,
 * epochs only the follower led, epochs only the leader has (the leader holds
 * the newest). The follower asks with its latest epoch, truncates where the
 * fetcher says, and asks again while the fetcher says truncation is not
 * complete.
 *
 * The follower's log is stood in for by its epoch cache (a real
 * LeaderEpochFileCache) and its log end offset; the glue does what
 * UnifiedLog does with them: endOffsetForEpoch answers nothing for an
 * undefined end offset, and truncateTo only truncates below the log end.
 */
final class TruncationOracle {
    private static final TopicPartition TP = new TopicPartition("t", 0);

    private static final LeaderEndPoint LEADER = (LeaderEndPoint) Proxy.newProxyInstance(
        LeaderEndPoint.class.getClassLoader(), new Class<?>[] {LeaderEndPoint.class},
        (proxy, method, args) -> switch (method.getName()) {
            case "isTruncationOnFetchSupported" -> true;
            case "brokerEndPoint" -> new BrokerEndPoint(1, "localhost", 9092);
            case "hashCode" -> System.identityHashCode(proxy);
            case "toString" -> "leader";
            default -> throw new UnsupportedOperationException(method.getName());
        });

    /** The follower's fetcher: Kafka's, over the follower's epoch cache and log end. */
    private static final class Fetcher extends AbstractFetcherThread {
        LeaderEpochFileCache cache;
        long leo;
        OffsetTruncationState decided;

        Fetcher() {
            super("oracle-fetcher", "oracle", LEADER, new FailedPartitions(),
                new TierStateMachine(LEADER, null, false), 0, true, new BrokerTopicStats());
        }

        @Override
        public scala.Option<LogAppendInfo> processPartitionData(TopicPartition tp, long fetchOffset, int leaderEpoch,
                                                                FetchResponseData.PartitionData data) {
            throw new UnsupportedOperationException("processPartitionData");
        }

        @Override
        public void truncate(TopicPartition tp, OffsetTruncationState state) {
            decided = state;
            // UnifiedLog.truncateTo: nothing to do at or past the log end.
            if (state.offset() < leo) {
                cache.truncateFromEndAsyncFlush(state.offset());
                leo = state.offset();
            }
        }

        @Override
        public void truncateFullyAndStartAt(TopicPartition tp, long offset) {
            throw new UnsupportedOperationException("truncateFullyAndStartAt");
        }

        @Override
        public Optional<Integer> latestEpoch(TopicPartition tp) {
            return cache.latestEpoch();
        }

        @Override
        public long logStartOffset(TopicPartition tp) {
            return 0;
        }

        @Override
        public long logEndOffset(TopicPartition tp) {
            return leo;
        }

        @Override
        public Optional<OffsetAndEpoch> endOffsetForEpoch(TopicPartition tp, int epoch) {
            return endOffsetForEpoch(cache, epoch, leo);
        }

        static Optional<OffsetAndEpoch> endOffsetForEpoch(LeaderEpochFileCache cache, int epoch, long leo) {
            Map.Entry<Integer, Long> e = cache.endOffsetFor(epoch, leo);
            return e.getValue() == -1L ? Optional.empty() : Optional.of(new OffsetAndEpoch(e.getValue(), e.getKey()));
        }

        @Override
        public boolean shouldFetchFromLastTieredOffset(TopicPartition tp, long leaderEndOffset, long replicaEndOffset) {
            return false;
        }
    }

    static List<String> generate(long seed, int count) throws Exception {
        Random rnd = new Random(seed);
        File dir = Scratch.dir("failover-lab-truncation");
        File leaderFile = new File(dir, "leader-epoch-checkpoint");
        File followerFile = new File(dir, "follower-epoch-checkpoint");
        Fetcher fetcher = new Fetcher();
        List<String> out = new ArrayList<>(count);
        try {
            for (int id = 0; id < count; id++) {
                Files.deleteIfExists(leaderFile.toPath());
                Files.deleteIfExists(followerFile.toPath());
                LeaderEpochFileCache leader = new LeaderEpochFileCache(TP,
                    new LeaderEpochCheckpointFile(leaderFile, new LogDirFailureChannel(1)), new Scratch.NoScheduler());
                LeaderEpochFileCache follower = new LeaderEpochFileCache(TP,
                    new LeaderEpochCheckpointFile(followerFile, new LogDirFailureChannel(1)), new Scratch.NoScheduler());
                out.add(vector(rnd, id, fetcher, leader, follower));
            }
        } finally {
            Files.deleteIfExists(leaderFile.toPath());
            Files.deleteIfExists(followerFile.toPath());
            Files.deleteIfExists(dir.toPath());
        }
        return out;
    }

    private static String entries(LeaderEpochFileCache cache) {
        StringBuilder sb = new StringBuilder("[");
        for (EpochEntry e : cache.epochEntries()) {
            if (sb.length() > 1) sb.append(',');
            sb.append('[').append(e.epoch()).append(',').append(e.startOffset()).append(']');
        }
        return sb.append(']').toString();
    }

    private static String vector(Random rnd, int id, Fetcher fetcher, LeaderEpochFileCache leader,
                                 LeaderEpochFileCache follower) {
        // The shared history: epochs of 1 to 5 records each.
        int epoch = rnd.nextInt(3);
        long offset = 0;
        int shared = 1 + rnd.nextInt(3);
        for (int i = 0; i < shared; i++) {
            if (i > 0) epoch += 1 + rnd.nextInt(2);
            leader.assign(epoch, offset);
            follower.assign(epoch, offset);
            offset += 1 + rnd.nextInt(5);
        }
        // The last shared epoch's leader wrote on; each side has a prefix of it.
        long leaderLeo = offset + (rnd.nextDouble() < 0.5 ? 0 : rnd.nextInt(4));
        long followerLeo = offset + (rnd.nextDouble() < 0.4 ? 0 : rnd.nextInt(5));
        // Epochs after it: some only the follower has (it led them, or
        // fetched from a leader the current one never followed), some only
        // the leader has; the leader holds the newest.
        int followerOnly = rnd.nextDouble() < 0.35 ? 0 : 1 + rnd.nextInt(3);
        int leaderOnly = 1 + rnd.nextInt(3);
        int total = followerOnly + leaderOnly;
        boolean[] toFollower = new boolean[total];
        for (int i = 0; i < followerOnly; i++) toFollower[i] = true;
        for (int i = total - 2; i > 0; i--) {
            // Shuffle all but the last (the leader's newest epoch).
            int j = rnd.nextInt(i + 1);
            boolean t = toFollower[i];
            toFollower[i] = toFollower[j];
            toFollower[j] = t;
        }
        for (int i = 0; i < total; i++) {
            epoch += 1 + rnd.nextInt(2);
            if (toFollower[i]) {
                follower.assign(epoch, followerLeo);
                followerLeo += 1 + rnd.nextInt(5);
            } else {
                leader.assign(epoch, leaderLeo);
                // The newest epoch may be empty: the leader has just been elected.
                leaderLeo += (i == total - 1 ? rnd.nextInt(4) : 1 + rnd.nextInt(5));
            }
        }
        fetcher.cache = follower;
        fetcher.leo = followerLeo;
        Json head = new Json().num("id", id)
            .raw("leader", entries(leader)).num("leader_leo", leaderLeo)
            .raw("follower", entries(follower)).num("follower_leo", followerLeo);

        Map<TopicPartition, InitialFetchState> init = new HashMap<>();
        init.put(TP, InitialFetchState.apply(scala.Option.empty(), LEADER.brokerEndPoint(),
            leader.latestEpoch().orElse(0), followerLeo));
        fetcher.addPartitions(scala.jdk.javaapi.CollectionConverters.asScala(init));

        StringBuilder rounds = new StringBuilder("[");
        for (int round = 0; round < 8; round++) {
            Optional<Integer> asked = follower.latestEpoch();
            if (asked.isEmpty()) break;
            Optional<OffsetAndEpoch> answer = Fetcher.endOffsetForEpoch(leader, asked.get(), leaderLeo);
            EpochEndOffset response = new EpochEndOffset().setPartition(TP.partition())
                .setLeaderEpoch(answer.map(OffsetAndEpoch::epoch).orElse(-1))
                .setEndOffset(answer.map(OffsetAndEpoch::offset).orElse(-1L));
            fetcher.decided = null;
            Map<TopicPartition, EpochEndOffset> fetched = new HashMap<>();
            fetched.put(TP, response);
            fetcher.truncateOnFetchResponse(scala.jdk.javaapi.CollectionConverters.asScala(fetched));
            if (round > 0) rounds.append(',');
            Json r = new Json().num("asked", asked.get())
                .raw("leader_answer", "[" + response.leaderEpoch() + "," + response.endOffset() + "]");
            if (fetcher.decided == null) {
                r.nul("truncate_to");
                rounds.append(r);
                break;
            }
            r.num("truncate_to", fetcher.decided.offset()).bool("completed", fetcher.decided.truncationCompleted())
                .raw("follower", entries(follower)).num("follower_leo", fetcher.leo);
            rounds.append(r);
            if (fetcher.decided.truncationCompleted()) break;
        }
        fetcher.removePartitions(scala.jdk.javaapi.CollectionConverters.asScala(java.util.Set.of(TP)));
        return head.raw("rounds", rounds.append(']').toString()).toString();
    }
}

package failoverlab.oracle;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.metadata.MetadataCache;
import org.apache.kafka.server.replica.Replica;
import org.apache.kafka.server.replica.ReplicaState;
import org.apache.kafka.storage.internals.log.LogOffsetMetadata;

/**
 * Random sequences on Kafka's org.apache.kafka.server.replica.Replica
 * (kafka-server): what a leader knows of one follower. A sequence is leader
 * resets (resetReplicaState when this broker becomes leader, new or again, with
 * the follower in the ISR or not) and follower fetches
 * (updateFetchStateOrThrow) at non-decreasing times while the leader's log
 * end offset grows; after each step it records the follower's state and
 * isCaughtUp(leader log end, now, replica.lag.time.max.ms), the ISR-shrink
 * rule.
 */
final class ReplicaOracle {
    static final long LAG_MAX_MS = 100;
    private static final long BROKER_EPOCH = 7;

    /** A metadata cache that knows one thing: the follower's broker epoch. */
    private static final MetadataCache METADATA = (MetadataCache) Proxy.newProxyInstance(
        MetadataCache.class.getClassLoader(), new Class<?>[] {MetadataCache.class},
        (proxy, method, args) -> {
            if (method.getName().equals("getAliveBrokerEpoch")) return Optional.of(BROKER_EPOCH);
            throw new UnsupportedOperationException(method.getName());
        });

    static List<String> generate(long seed, int count) {
        Random rnd = new Random(seed);
        List<String> out = new ArrayList<>(count);
        for (int id = 0; id < count; id++) out.add(sequence(rnd, id));
        return out;
    }

    /** 2026-01-01T00:00:00Z: where every generated sequence's clock starts. */
    private static final long WALL_CLOCK_START_MS = 1_767_225_600_000L;

    private static String sequence(Random rnd, int id) {
        // The follower's broker epoch is 7 in the metadata cache and in every
        // fetch (the epoch check is the broker's, checked elsewhere).
        Replica replica = new Replica(2, new TopicPartition("t", 0), METADATA);
        // Kafka's clocks are wall clocks, so the 0 that resetReplicaState
        // stores for a follower outside the ISR means "never" (decades ago).
        // Starting the clock at a wall-clock instant keeps that meaning; at
        // small times Kafka's own arithmetic would call such a follower
        // caught up, which no real broker sees.
        long now = WALL_CLOCK_START_MS + rnd.nextInt(50);
        long leaderLeo = rnd.nextInt(20);
        StringBuilder steps = new StringBuilder("[");
        int n = 2 + rnd.nextInt(8);
        boolean leading = false;
        for (int i = 0; i < n; i++) {
            if (i > 0) steps.append(',');
            Json step = new Json();
            if (i == 0 || rnd.nextDouble() < 0.12) {
                boolean newLeader = !leading || rnd.nextDouble() < 0.5;
                boolean inSync = rnd.nextDouble() < 0.6;
                replica.resetReplicaState(now, leaderLeo, newLeader, inSync);
                leading = true;
                step.str("op", "reset").num("now", now).num("leader_leo", leaderLeo)
                    .bool("new_leader", newLeader).bool("in_sync", inSync);
            } else {
                double k = rnd.nextDouble();
                long fetch = k < 0.4 ? leaderLeo : Math.max(0, leaderLeo - 1 - rnd.nextInt(8));
                replica.updateFetchStateOrThrow(new LogOffsetMetadata(fetch), 0L, now, leaderLeo, BROKER_EPOCH);
                step.str("op", "fetch").num("now", now).num("leader_leo", leaderLeo).num("fetch_offset", fetch);
            }
            ReplicaState s = replica.stateSnapshot();
            long checkAt = now + rnd.nextInt((int) LAG_MAX_MS * 2);
            step.obj("kafka", new Json()
                .num("leo", s.logEndOffset())
                .num("caught_up_ms", s.lastCaughtUpTimeMs())
                .num("fetch_ms", s.lastFetchTimeMs())
                .num("fetch_leader_leo", s.lastFetchLeaderLogEndOffset())
                .num("check_at", checkAt)
                .bool("caught_up", s.isCaughtUp(leaderLeo, checkAt, LAG_MAX_MS)));
            steps.append(step);
            now += rnd.nextInt(80);
            if (rnd.nextDouble() < 0.6) leaderLeo += rnd.nextInt(6);
        }
        return new Json().num("id", id).num("lag_max_ms", LAG_MAX_MS).raw("steps", steps.append(']').toString()).toString();
    }
}

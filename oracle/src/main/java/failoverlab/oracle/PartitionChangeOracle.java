package failoverlab.oracle;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.controller.PartitionChangeBuilder;
import org.apache.kafka.metadata.LeaderRecoveryState;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * Random partition registrations and changes through Kafka's
 * org.apache.kafka.controller.PartitionChangeBuilder, the controller's one
 * change function. The registration it produces (PartitionRegistration.merge
 * of the record build() returns) is the expected output, or "no change" when
 * build() returns nothing.
 *
 * The inputs are shaped like the states a KRaft controller holds (the leader
 * is in the ISR or absent, the ELR is disjoint from the ISR and only filled
 * below min ISR), with a share of odd ones. Target ISRs are in replica order:
 * Kafka keeps the order it is given, the simulator keeps replica order.
 */
final class PartitionChangeOracle {
    private static final Uuid TOPIC = new Uuid(0x4641494c4f564552L, 0x4c41424f52414331L);
    private static final MetadataVersion VERSION = MetadataVersion.latestProduction();

    static List<String> generate(long seed, int count) {
        Random rnd = new Random(seed);
        List<String> out = new ArrayList<>(count);
        int tries = 0;
        while (out.size() < count && tries < count * 10) {
            tries++;
            String line = one(rnd, out.size());
            if (line != null) out.add(line);
        }
        return out;
    }

    private static List<Integer> subsequence(Random rnd, List<Integer> of, double keep) {
        List<Integer> s = new ArrayList<>();
        for (int b : of) if (rnd.nextDouble() < keep) s.add(b);
        return s;
    }

    private static int[] arr(List<Integer> l) {
        return l.stream().mapToInt(Integer::intValue).toArray();
    }

    private static String one(Random rnd, int id) {
        // Brokers 1..6; 2-5 replicas in a random order.
        List<Integer> brokers = new ArrayList<>(List.of(1, 2, 3, 4, 5, 6));
        java.util.Collections.shuffle(brokers, rnd);
        int rf = 2 + rnd.nextInt(4);
        List<Integer> replicas = new ArrayList<>(brokers.subList(0, rf));
        boolean elrEnabled = rnd.nextDouble() < 0.7;
        int minIsrConfig = 1 + rnd.nextInt(3);
        // ReplicationControlManager passes min(min.insync.replicas, replication factor).
        int effectiveMinIsr = Math.min(minIsrConfig, rf);

        List<Integer> isr = subsequence(rnd, replicas, 0.6);
        if (isr.isEmpty() && !elrEnabled) isr.add(replicas.get(rnd.nextInt(rf)));
        int leader;
        double l = rnd.nextDouble();
        if (isr.isEmpty()) {
            leader = l < 0.9 ? -1 : replicas.get(rnd.nextInt(rf));
        } else if (l < 0.8) {
            leader = isr.get(rnd.nextInt(isr.size()));
        } else if (l < 0.95) {
            leader = -1;
        } else {
            leader = replicas.get(rnd.nextInt(rf));
        }
        List<Integer> elr = new ArrayList<>();
        List<Integer> lastKnownElr = new ArrayList<>();
        if (elrEnabled) {
            if (isr.size() < effectiveMinIsr || rnd.nextDouble() < 0.05) {
                List<Integer> outside = new ArrayList<>(replicas);
                outside.removeAll(isr);
                elr = subsequence(rnd, outside, 0.5);
            }
            double k = rnd.nextDouble();
            if (leader == -1 && k < 0.6) {
                lastKnownElr.add(replicas.get(rnd.nextInt(rf)));
            } else if (leader == -1 && k < 0.75) {
                // Several members: a LastKnownElr written in the other
                // unclean-recovery mode, which is not a last known leader.
                lastKnownElr = subsequence(rnd, replicas, 0.7);
            } else if (rnd.nextDouble() < 0.05) {
                lastKnownElr = subsequence(rnd, replicas, 0.5);
            }
        }
        if (!elrEnabled && leader == -1 && rnd.nextDouble() < 0.2) {
            // Left from a time ELR was on (it can be turned off).
            lastKnownElr.add(replicas.get(rnd.nextInt(rf)));
        }
        // Kafka builds both from hash sets, so a registration holds them in
        // ascending order; any other order would make a no-op change look
        // like one (the record compares lists).
        java.util.Collections.sort(elr);
        java.util.Collections.sort(lastKnownElr);
        LeaderRecoveryState recovery = leader != -1 && rnd.nextDouble() < 0.15
            ? LeaderRecoveryState.RECOVERING : LeaderRecoveryState.RECOVERED;
        int leaderEpoch = rnd.nextInt(20);
        int partitionEpoch = leaderEpoch + rnd.nextInt(10);

        // Broker states: fenced, in controlled shutdown; acceptable leaders are
        // the others (ClusterControlManager.isActive).
        Set<Integer> fenced = new TreeSet<>();
        Set<Integer> shuttingDown = new TreeSet<>();
        for (int b : replicas) {
            double s = rnd.nextDouble();
            if (s < 0.25) fenced.add(b);
            else if (s < 0.33) shuttingDown.add(b);
        }
        List<Integer> uncleanShutdown = new ArrayList<>();
        List<Integer> targetIsr = new ArrayList<>(isr);
        boolean recovered = false;
        PartitionChangeBuilder.Election election =
            rnd.nextDouble() < 0.3 ? PartitionChangeBuilder.Election.UNCLEAN : PartitionChangeBuilder.Election.ONLINE;
        String change;
        int b = replicas.get(rnd.nextInt(rf));
        switch (rnd.nextInt(6)) {
            case 0, 1 -> {
                change = "alter_partition";
                targetIsr = subsequence(rnd, replicas, 0.6);
                if (leader != -1 && !targetIsr.contains(leader) && rnd.nextDouble() < 0.8) {
                    // The leader asks for an ISR that holds itself, in replica order.
                    List<Integer> wanted = union(targetIsr, List.of(leader));
                    targetIsr = new ArrayList<>(replicas);
                    targetIsr.retainAll(wanted);
                }
                recovered = recovery == LeaderRecoveryState.RECOVERING && rnd.nextDouble() < 0.4;
            }
            case 2 -> {
                change = "fence " + b;
                fenced.add(b);
                shuttingDown.remove(b);
                targetIsr.remove(Integer.valueOf(b));
            }
            case 3 -> {
                change = "controlled_shutdown " + b;
                fenced.remove(b);
                shuttingDown.add(b);
                targetIsr.remove(Integer.valueOf(b));
            }
            case 4 -> {
                change = "unclean_shutdown " + b;
                uncleanShutdown.add(b);
                fenced.add(b);
                shuttingDown.remove(b);
                targetIsr.remove(Integer.valueOf(b));
            }
            default -> {
                change = "elect";
                double e = rnd.nextDouble();
                election = e < 0.4 ? PartitionChangeBuilder.Election.PREFERRED
                    : e < 0.7 ? PartitionChangeBuilder.Election.ONLINE : PartitionChangeBuilder.Election.UNCLEAN;
                if (rnd.nextDouble() < 0.5) {
                    change = "unfence " + b;
                    fenced.remove(b);
                    shuttingDown.remove(b);
                }
            }
        }
        List<Integer> acceptable = new ArrayList<>();
        for (int r : replicas) if (!fenced.contains(r) && !shuttingDown.contains(r)) acceptable.add(r);

        PartitionRegistration reg = new PartitionRegistration.Builder()
            .setReplicas(arr(replicas))
            .setDirectories(org.apache.kafka.common.DirectoryId.migratingArray(rf))
            .setIsr(arr(isr))
            .setLeader(leader)
            .setLeaderRecoveryState(recovery)
            .setLeaderEpoch(leaderEpoch)
            .setPartitionEpoch(partitionEpoch)
            .setElr(arr(elr))
            .setLastKnownElr(arr(lastKnownElr))
            .build();
        PartitionChangeBuilder builder = new PartitionChangeBuilder(
            reg, TOPIC, 0, acceptable::contains, VERSION, effectiveMinIsr, elrEnabled)
            .setTargetIsr(targetIsr)
            .setElection(election)
            .setDefaultDirProvider(replica -> org.apache.kafka.common.DirectoryId.MIGRATING);
        if (!uncleanShutdown.isEmpty()) builder.setUncleanShutdownReplicas(uncleanShutdown);
        if (recovered) builder.setTargetLeaderRecoveryState(LeaderRecoveryState.RECOVERED);

        Optional<ApiMessageAndVersion> built;
        try {
            built = builder.build();
        } catch (RuntimeException e) {
            if (System.getenv("ORACLE_DEBUG") != null) e.printStackTrace();
            return null; // an input Kafka refuses is not a vector
        }

        Json v = new Json().num("id", id).str("change", change)
            .ints("replicas", replicas).ints("isr", isr).num("leader", leader)
            .num("leader_epoch", leaderEpoch).num("partition_epoch", partitionEpoch)
            .str("recovery", recovery.name()).ints("elr", elr).ints("last_known_elr", lastKnownElr)
            .bool("elr_enabled", elrEnabled).num("min_isr", minIsrConfig).num("effective_min_isr", effectiveMinIsr)
            .ints("fenced", fenced).ints("shutting_down", shuttingDown)
            .ints("unclean_shutdown", uncleanShutdown).ints("acceptable", acceptable)
            .str("election", election.name()).ints("target_isr", targetIsr).bool("recovered", recovered);
        if (built.isEmpty()) {
            v.nul("kafka");
        } else {
            PartitionRegistration next = reg.merge((PartitionChangeRecord) built.get().message());
            v.obj("kafka", new Json()
                .num("leader", next.leader).ints("isr", next.isr)
                .ints("elr", sorted(next.elr)).ints("last_known_elr", sorted(next.lastKnownElr))
                .num("leader_epoch", next.leaderEpoch).num("partition_epoch", next.partitionEpoch)
                .str("recovery", next.leaderRecoveryState.name()));
        }
        return v.toString();
    }

    private static List<Integer> union(List<Integer> a, List<Integer> b) {
        List<Integer> u = new ArrayList<>(a);
        for (int x : b) if (!u.contains(x)) u.add(x);
        return u;
    }

    /** Kafka keeps the ELR and LastKnownElr as sets (hash order); written sorted. */
    private static int[] sorted(int[] v) {
        int[] s = v.clone();
        Arrays.sort(s);
        return s;
    }
}

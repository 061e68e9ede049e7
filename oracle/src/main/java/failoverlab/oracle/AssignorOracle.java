package failoverlab.oracle;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

/**
 * Partition assignment for a group whose members all subscribe to one topic,
 * by four of Kafka 4.4.0's assignors: the classic client-side
 * {@code RangeAssignor} and {@code CooperativeStickyAssignor}
 * (kafka-clients), and the KIP-848 server-side {@code UniformAssignor} and
 * {@code RangeAssignor} (kafka-group-coordinator). One file per assignor.
 *
 * <p>Each vector is a group (members in the order they joined, each with its
 * member id, optional group.instance.id, owned partitions and, for the sticky
 * assignor, the generation it owned them in) and a partition count; Kafka's
 * answer is each member's partitions, sorted. The owned partitions are
 * realistic where it matters: a previous round is run by the same Kafka
 * assignor and then members leave, join or both ("leave", "join", "churn"),
 * or the topic grows ("grow"); "fresh" groups own nothing; for the sticky
 * assignor "stale" groups claim random, overlapping partitions in different
 * generations, and "second_round" replays the round after a cooperative
 * revocation.
 *
 * <p>The group is handed to each assignor in a {@code HashMap} filled in
 * joining order, as Kafka's own callers do ({@code ConsumerCoordinator} for
 * the subscriptions, the group coordinator's target-assignment builder for
 * the member specs), and a member's current server-side assignment is a
 * {@code HashSet} made from its partition list, as
 * {@code Assignment.fromRecord} makes it. The sticky and uniform assignors
 * depend on those iteration orders, so the Rust side reproduces them
 * (src/sim/assignor.rs, {@code java_hash_order}).
 */
final class AssignorOracle {
    private static final String TOPIC = "topic";
    private static final Uuid TOPIC_ID = new Uuid(0x4641494cL, 0x4f564552L);

    /** One member as the vectors record it. */
    static final class Member {
        final String memberId;
        final String instanceId;
        List<Integer> owned = new ArrayList<>();
        int generation = -1;

        Member(String memberId, String instanceId) {
            this.memberId = memberId;
            this.instanceId = instanceId;
        }
    }

    interface Assign {
        List<List<Integer>> run(List<Member> members, int partitions);
    }

    // ---------------------------------------------------------------------
    // The four assignors, each called as Kafka's own caller calls it.

    static List<List<Integer>> clientRange(List<Member> members, int partitions) {
        Map<String, List<TopicPartition>> out = new RangeAssignor()
            .assign(Map.of(TOPIC, partitions), subscriptions(members));
        return aligned(members, out);
    }

    static List<List<Integer>> cooperativeSticky(List<Member> members, int partitions) {
        Map<String, List<TopicPartition>> out = new CooperativeStickyAssignor()
            .assign(Map.of(TOPIC, partitions), subscriptions(members));
        return aligned(members, out);
    }

    static List<List<Integer>> uniform(List<Member> members, int partitions) {
        return serverSide(new UniformAssignor().assign(groupSpec(members), describer(partitions)), members);
    }

    static List<List<Integer>> serverRange(List<Member> members, int partitions) {
        return serverSide(new org.apache.kafka.coordinator.group.assignor.RangeAssignor()
            .assign(groupSpec(members), describer(partitions)), members);
    }

    private static Map<String, Subscription> subscriptions(List<Member> members) {
        Map<String, Subscription> subs = new HashMap<>();
        for (Member m : members) {
            List<TopicPartition> owned = new ArrayList<>();
            for (int p : m.owned) owned.add(new TopicPartition(TOPIC, p));
            Subscription s = new Subscription(List.of(TOPIC), null, owned, m.generation, Optional.empty());
            s.setGroupInstanceId(Optional.ofNullable(m.instanceId));
            subs.put(m.memberId, s);
        }
        return subs;
    }

    private static List<List<Integer>> aligned(List<Member> members, Map<String, List<TopicPartition>> out) {
        List<List<Integer>> result = new ArrayList<>();
        for (Member m : members) {
            List<Integer> ps = new ArrayList<>();
            for (TopicPartition tp : out.getOrDefault(m.memberId, List.of())) ps.add(tp.partition());
            Collections.sort(ps);
            result.add(ps);
        }
        return result;
    }

    private static GroupSpecImpl groupSpec(List<Member> members) {
        Map<String, MemberSubscriptionAndAssignmentImpl> specs = new HashMap<>();
        Map<Integer, String> owners = new HashMap<>();
        for (Member m : members) {
            Map<Uuid, Set<Integer>> current = new HashMap<>();
            if (!m.owned.isEmpty()) {
                List<Integer> sorted = new ArrayList<>(m.owned);
                Collections.sort(sorted);
                current.put(TOPIC_ID, new HashSet<>(sorted));
                for (int p : sorted) owners.put(p, m.memberId);
            }
            specs.put(m.memberId, new MemberSubscriptionAndAssignmentImpl(
                Optional.empty(), Optional.ofNullable(m.instanceId), Set.of(TOPIC_ID), new Assignment(current)));
        }
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        inverted.put(TOPIC_ID, owners);
        return new GroupSpecImpl(specs, SubscriptionType.HOMOGENEOUS, inverted);
    }

    private static SubscribedTopicDescriber describer(int partitions) {
        return new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                return TOPIC_ID.equals(topicId) ? partitions : -1;
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                return Set.of();
            }
        };
    }

    private static List<List<Integer>> serverSide(GroupAssignment a, List<Member> members) {
        List<List<Integer>> result = new ArrayList<>();
        for (Member m : members) {
            MemberAssignment ma = a.members().get(m.memberId);
            List<Integer> ps = new ArrayList<>();
            if (ma != null) ps.addAll(ma.partitions().getOrDefault(TOPIC_ID, Set.of()));
            Collections.sort(ps);
            result.add(ps);
        }
        return result;
    }

    // ---------------------------------------------------------------------
    // Groups.

    static List<String> generate(long seed, int count, String assignor) {
        Assign assign = switch (assignor) {
            case "range" -> AssignorOracle::clientRange;
            case "cooperative_sticky" -> AssignorOracle::cooperativeSticky;
            case "uniform" -> AssignorOracle::uniform;
            case "server_range" -> AssignorOracle::serverRange;
            default -> throw new IllegalArgumentException(assignor);
        };
        boolean sticky = assignor.equals("cooperative_sticky");
        Random rnd = new Random(seed);
        List<String> out = new ArrayList<>(count);
        for (int id = 0; id < count; id++) {
            Case c = makeCase(rnd, id, assign, sticky);
            List<List<Integer>> kafka = assign.run(c.members, c.partitions);
            StringBuilder ms = new StringBuilder("[");
            for (int i = 0; i < c.members.size(); i++) {
                Member m = c.members.get(i);
                if (i > 0) ms.append(',');
                Json j = new Json().str("member_id", m.memberId);
                if (m.instanceId == null) j.nul("instance_id");
                else j.str("instance_id", m.instanceId);
                j.ints("owned", m.owned);
                if (sticky) j.num("generation", m.generation);
                ms.append(j);
            }
            ms.append(']');
            StringBuilder ks = new StringBuilder("[");
            for (int i = 0; i < kafka.size(); i++) {
                if (i > 0) ks.append(',');
                ks.append(kafka.get(i).toString().replace(" ", ""));
            }
            ks.append(']');
            out.add(new Json().num("id", id).str("scenario", c.scenario).num("partitions", c.partitions)
                .raw("members", ms.toString()).raw("kafka", ks.toString()).toString());
        }
        return out;
    }

    static final class Case {
        String scenario;
        int partitions;
        List<Member> members;
    }

    private static final String[] SCENARIOS = {"fresh", "leave", "join", "churn", "grow"};

    private static Case makeCase(Random rnd, int id, Assign assign, boolean sticky) {
        Case c = new Case();
        Set<String> ids = new HashSet<>();
        Set<String> instances = new HashSet<>();
        boolean statics = rnd.nextDouble() < 0.3;
        // The first vectors are the edges: 0 partitions, 1 partition, 1 member,
        // more members than partitions.
        int members;
        if (id < 4) {
            c.partitions = new int[] {0, 1, 5, 2}[id];
            members = new int[] {3, 4, 1, 7}[id];
        } else {
            c.partitions = rnd.nextDouble() < 0.15 ? rnd.nextInt(4) : 1 + rnd.nextInt(rnd.nextBoolean() ? 12 : 96);
            members = 1 + rnd.nextInt(rnd.nextDouble() < 0.8 ? 6 : 12);
        }
        List<Member> group = new ArrayList<>();
        for (int i = 0; i < members; i++) group.add(newMember(rnd, ids, instances, statics));
        String scenario = id < 4 ? "fresh" : SCENARIOS[rnd.nextInt(SCENARIOS.length)];
        if (sticky && id >= 4) {
            double k = rnd.nextDouble();
            if (k < 0.15) scenario = "stale";
            else if (k < 0.3) scenario = "second_round";
        }
        c.scenario = scenario;
        if (scenario.equals("fresh")) {
            c.members = group;
            return c;
        }
        if (scenario.equals("stale")) {
            // Random claims, overlapping, in generations around the current one.
            int gen = 2 + rnd.nextInt(5);
            for (Member m : group) {
                m.generation = rnd.nextDouble() < 0.1 ? -1 : gen - rnd.nextInt(3);
                for (int p = 0; p < c.partitions; p++) {
                    if (rnd.nextDouble() < 1.5 / members) m.owned.add(p);
                }
                Collections.shuffle(m.owned, rnd);
            }
            c.members = group;
            return c;
        }
        // A previous round by the same assignor, on a steady group.
        int before = scenario.equals("grow") && c.partitions > 1 ? 1 + rnd.nextInt(c.partitions - 1) : c.partitions;
        int gen = 1 + rnd.nextInt(6);
        steady(group, before, gen, assign);
        switch (scenario) {
            case "leave" -> {
                if (group.size() > 1) group.remove(rnd.nextInt(group.size()));
                else group.add(newMember(rnd, ids, instances, statics));
            }
            case "join" -> {
                int joins = 1 + rnd.nextInt(2);
                for (int i = 0; i < joins; i++) group.add(newMember(rnd, ids, instances, statics));
            }
            case "churn" -> {
                int leaves = rnd.nextInt(group.size());
                for (int i = 0; i < leaves; i++) group.remove(rnd.nextInt(group.size()));
                int joins = rnd.nextInt(3);
                for (int i = 0; i < joins; i++) {
                    group.add(rnd.nextInt(group.size() + 1), newMember(rnd, ids, instances, statics));
                }
            }
            case "second_round" -> {
                // A join, the cooperative first round (moving partitions
                // revoked), then the round after it at the next generation.
                group.add(newMember(rnd, ids, instances, statics));
                List<List<Integer>> first = assign.run(group, c.partitions);
                for (int i = 0; i < group.size(); i++) {
                    group.get(i).owned = new ArrayList<>(first.get(i));
                    group.get(i).generation = gen + 1;
                }
            }
            default -> { }
        }
        c.members = group;
        return c;
    }

    /** Owned partitions from two rounds of the assignor, as a settled group holds them. */
    private static void steady(List<Member> group, int partitions, int gen, Assign assign) {
        for (int round = 0; round < 2; round++) {
            List<List<Integer>> a = assign.run(group, partitions);
            for (int i = 0; i < group.size(); i++) {
                group.get(i).owned = new ArrayList<>(a.get(i));
                group.get(i).generation = gen;
            }
        }
    }

    private static Member newMember(Random rnd, Set<String> ids, Set<String> instances, boolean statics) {
        String id;
        do {
            id = rnd.nextBoolean()
                ? "consumer-" + (1 + rnd.nextInt(9)) + "-" + Integer.toHexString(0x1000 + rnd.nextInt(0xf000))
                : "c" + rnd.nextInt(40);
        } while (!ids.add(id));
        String instance = null;
        if (statics && rnd.nextBoolean()) {
            do {
                instance = "instance-" + rnd.nextInt(100);
            } while (!instances.add(instance));
        }
        return new Member(id, instance);
    }
}

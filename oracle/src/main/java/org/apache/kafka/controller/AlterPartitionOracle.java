package org.apache.kafka.controller;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.metadata.LeaderRecoveryState;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.EligibleLeaderReplicasVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

/**
 * Random AlterPartition requests through Kafka's
 * ReplicationControlManager.alterPartition, with a ClusterControlManager,
 * FeatureControlManager and ConfigurationControlManager built from the
 * published jar and their state set by replaying records (brokers, the
 * metadata version, ELR, a topic's min.insync.replicas, one partition).
 * The vector holds the request, the error Kafka answers (for the whole
 * request, or the partition's) and the registration afterwards.
 */
public final class AlterPartitionOracle {
    private static final Uuid TOPIC_ID = new Uuid(0x4641494c4f564552L, 0x4c41424f52414332L);
    private static final int BROKERS = 4;

    /** The two topic configs the rules read, with Kafka's defaults. */
    private static final KafkaConfigSchema SCHEMA;
    static {
        org.apache.kafka.common.config.ConfigDef def = new org.apache.kafka.common.config.ConfigDef()
            .define("min.insync.replicas", org.apache.kafka.common.config.ConfigDef.Type.INT, 1,
                org.apache.kafka.common.config.ConfigDef.Importance.HIGH, "min.insync.replicas")
            .define("unclean.leader.election.enable", org.apache.kafka.common.config.ConfigDef.Type.BOOLEAN, false,
                org.apache.kafka.common.config.ConfigDef.Importance.HIGH, "unclean.leader.election.enable");
        SCHEMA = new KafkaConfigSchema(Map.of(ConfigResource.Type.TOPIC, def, ConfigResource.Type.BROKER, def), Map.of());
    }

    public static List<String> generate(long seed, int count) {
        Random rnd = new Random(seed);
        List<String> out = new ArrayList<>(count);
        while (out.size() < count) out.add(one(rnd, out.size()));
        return out;
    }

    private static String ints(List<Integer> l) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < l.size(); i++) sb.append(i > 0 ? "," : "").append(l.get(i));
        return sb.append(']').toString();
    }

    private static String ints(int[] a) {
        return ints(Arrays.stream(a).boxed().toList());
    }

    private static String one(Random rnd, int id) {
        LogContext logContext = new LogContext();
        SnapshotRegistry registry = new SnapshotRegistry(logContext);
        boolean elr = rnd.nextDouble() < 0.7;
        int minIsr = 1 + rnd.nextInt(3);
        FeatureControlManager features = new FeatureControlManager.Builder()
            .setLogContext(logContext).setSnapshotRegistry(registry)
            .setQuorumFeatures(new QuorumFeatures(0, QuorumFeatures.defaultSupportedFeatureMap(true), List.of(0)))
            .build();
        features.replay(new FeatureLevelRecord().setName(MetadataVersion.FEATURE_NAME)
            .setFeatureLevel(MetadataVersion.latestProduction().featureLevel()));
        features.replay(new FeatureLevelRecord().setName(EligibleLeaderReplicasVersion.FEATURE_NAME)
            .setFeatureLevel(elr ? EligibleLeaderReplicasVersion.ELRV_1.featureLevel() : EligibleLeaderReplicasVersion.ELRV_0.featureLevel()));
        ClusterControlManager cluster = new ClusterControlManager.Builder()
            .setLogContext(logContext).setClusterId("failover-lab").setTime(Time.SYSTEM)
            .setSnapshotRegistry(registry).setSessionTimeoutNs(9_000_000_000L)
            .setReplicaPlacer(new StripedReplicaPlacer(new Random(0)))
            .setFeatureControlManager(features)
            .setBrokerShutdownHandler((brokerId, isCleanShutdown, records) -> { })
            .build();
        cluster.activate();
        ConfigurationControlManager configs = new ConfigurationControlManager.Builder()
            .setLogContext(logContext).setSnapshotRegistry(registry)
            .setKafkaConfigSchema(SCHEMA).setFeatureControl(features)
            .setStaticConfig(Map.of()).build();
        ReplicationControlManager replication = new ReplicationControlManager.Builder()
            .setLogContext(logContext).setSnapshotRegistry(registry)
            .setClusterControl(cluster).setConfigurationControl(configs).setFeatureControl(features)
            .build();

        // Brokers 1..4: epochs, fenced, in controlled shutdown.
        long[] epoch = new long[BROKERS + 1];
        boolean[] fenced = new boolean[BROKERS + 1];
        boolean[] shuttingDown = new boolean[BROKERS + 1];
        for (int b = 1; b <= BROKERS; b++) {
            epoch[b] = 100 + b * 10 + rnd.nextInt(5);
            double s = rnd.nextDouble();
            fenced[b] = s < 0.15;
            shuttingDown[b] = !fenced[b] && s < 0.25;
            cluster.replay(new RegisterBrokerRecord().setBrokerId(b).setBrokerEpoch(epoch[b])
                .setIncarnationId(new Uuid(b, epoch[b])).setFenced(fenced[b])
                .setInControlledShutdown(shuttingDown[b])
                .setLogDirs(List.of(new Uuid(7, b))), epoch[b]);
        }
        replication.replay(new TopicRecord().setName("orders").setTopicId(TOPIC_ID));
        configs.replay(new ConfigRecord().setResourceType(ConfigResource.Type.TOPIC.id())
            .setResourceName("orders").setName("min.insync.replicas").setValue(Integer.toString(minIsr)));
        boolean unclean = rnd.nextDouble() < 0.3;
        if (unclean) {
            configs.replay(new ConfigRecord().setResourceType(ConfigResource.Type.TOPIC.id())
                .setResourceName("orders").setName("unclean.leader.election.enable").setValue("true"));
        }

        // One request from one broker about 1 to 3 partitions of the topic,
        // each on 3 of the brokers. The sender leads the first (mostly); it
        // leads the others too, or they moved on without it.
        double np = rnd.nextDouble();
        int partitions = np < 0.6 ? 1 : np < 0.85 ? 2 : 3;
        Part[] parts = new Part[partitions];
        int from = -1;
        for (int i = 0; i < partitions; i++) {
            parts[i] = Part.random(rnd, i, elr, minIsr, from);
            if (i == 0) from = rnd.nextDouble() < 0.85 && parts[0].leader >= 0 ? parts[0].leader
                : parts[0].replicas.get(rnd.nextInt(3));
            Part pt = parts[i];
            replication.replay(new PartitionRecord().setTopicId(TOPIC_ID).setPartitionId(i)
                .setReplicas(pt.replicas).setIsr(pt.isr).setLeader(pt.leader)
                .setLeaderRecoveryState((pt.recovering ? LeaderRecoveryState.RECOVERING : LeaderRecoveryState.RECOVERED).value())
                .setLeaderEpoch(pt.leaderEpoch).setPartitionEpoch(pt.partitionEpoch)
                .setEligibleLeaderReplicas(pt.elr).setLastKnownElr(pt.lastKnownElr)
                .setDirectories(List.of(new Uuid(7, pt.replicas.get(0)), new Uuid(7, pt.replicas.get(1)),
                    new Uuid(7, pt.replicas.get(2)))));
        }
        long fromEpoch = rnd.nextDouble() < 0.9 ? epoch[from] : epoch[from] - 1;
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(from).setBrokerEpoch(fromEpoch);
        AlterPartitionRequestData.TopicData topic = new AlterPartitionRequestData.TopicData().setTopicId(TOPIC_ID);
        for (Part pt : parts) {
            pt.request(rnd, from);
            List<AlterPartitionRequestData.BrokerState> states = new ArrayList<>();
            for (int r : pt.newIsr) states.add(new AlterPartitionRequestData.BrokerState().setBrokerId(r).setBrokerEpoch(epoch[r]));
            topic.partitions().add(new AlterPartitionRequestData.PartitionData().setPartitionIndex(pt.index)
                .setLeaderEpoch(pt.reqLeaderEpoch).setPartitionEpoch(pt.reqPartitionEpoch).setNewIsrWithEpochs(states)
                .setLeaderRecoveryState((pt.reportRecovered || !pt.recovering ? LeaderRecoveryState.RECOVERED
                    : LeaderRecoveryState.RECOVERING).value()));
        }
        request.topics().add(topic);
        ControllerRequestContext context = new ControllerRequestContext(
            new RequestHeaderData().setRequestApiKey(ApiKeys.ALTER_PARTITION.id)
                .setRequestApiVersion(ApiKeys.ALTER_PARTITION.latestVersion()),
            KafkaPrincipal.ANONYMOUS, OptionalLong.empty());

        String[] errors = new String[partitions];
        PartitionRegistration[] after = new PartitionRegistration[partitions];
        for (int i = 0; i < partitions; i++) after[i] = replication.getPartition(TOPIC_ID, i);
        try {
            ControllerResult<AlterPartitionResponseData> result = replication.alterPartition(context, request);
            for (AlterPartitionResponseData.PartitionData pd : result.response().topics().get(0).partitions()) {
                errors[pd.partitionIndex()] = Errors.forCode(pd.errorCode()).name();
            }
            for (ApiMessageAndVersion r : result.records()) {
                if (r.message() instanceof PartitionChangeRecord change) {
                    after[change.partitionId()] = after[change.partitionId()].merge(change);
                }
            }
        } catch (ApiException ex) {
            java.util.Arrays.fill(errors, Errors.forException(ex).name());
        }

        StringBuilder v = new StringBuilder("{");
        v.append("\"id\":").append(id)
            .append(",\"elr_enabled\":").append(elr)
            .append(",\"min_isr\":").append(minIsr)
            .append(",\"unclean\":").append(unclean)
            .append(",\"brokers\":[");
        for (int b = 1; b <= BROKERS; b++) {
            v.append(b > 1 ? "," : "").append("{\"id\":").append(b).append(",\"epoch\":").append(epoch[b])
                .append(",\"fenced\":").append(fenced[b]).append(",\"shutting_down\":").append(shuttingDown[b]).append('}');
        }
        v.append(']');
        // The first partition's fields at the top (as before multi-partition
        // requests); the request's others, if any, under "others".
        parts[0].write(v, from, fromEpoch, errors[0], after[0]);
        if (partitions > 1) {
            v.append(",\"others\":[");
            for (int i = 1; i < partitions; i++) {
                v.append(i > 1 ? ",{" : "{").append("\"partition\":").append(i);
                parts[i].write(v, from, fromEpoch, errors[i], after[i]);
                v.append('}');
            }
            v.append(']');
        }
        v.append('}');
        return v.toString();
    }

    /** One partition of the request: its registration and what the request says of it. */
    private static final class Part {
        int index;
        List<Integer> replicas;
        List<Integer> isr;
        int leader;
        List<Integer> elr = new ArrayList<>();
        List<Integer> lastKnownElr = new ArrayList<>();
        int leaderEpoch;
        int partitionEpoch;
        boolean recovering;
        int reqLeaderEpoch;
        int reqPartitionEpoch;
        List<Integer> newIsr;
        boolean reportRecovered;

        /** A registration; for a partition after the first, `from` is the request's sender. */
        static Part random(Random rnd, int index, boolean elr, int minIsr, int from) {
            Part p = new Part();
            p.index = index;
            List<Integer> all = new ArrayList<>(List.of(1, 2, 3, 4));
            java.util.Collections.shuffle(all, rnd);
            p.replicas = new ArrayList<>(all.subList(0, 3));
            // A later partition is mostly on the sender, and led by it.
            if (from > 0 && !p.replicas.contains(from) && rnd.nextDouble() < 0.8) p.replicas.set(rnd.nextInt(3), from);
            List<Integer> isr = new ArrayList<>();
            for (int r : p.replicas) if (rnd.nextDouble() < 0.7) isr.add(r);
            int leader = from > 0 && p.replicas.contains(from) && rnd.nextDouble() < 0.8 ? from
                : isr.isEmpty() ? p.replicas.get(0) : isr.get(rnd.nextInt(isr.size()));
            if (!isr.contains(leader)) isr.add(0, leader);
            List<Integer> ordered = new ArrayList<>(p.replicas);
            ordered.retainAll(isr);
            p.isr = ordered;
            if (elr && p.isr.size() < minIsr) {
                for (int r : p.replicas) if (!p.isr.contains(r) && rnd.nextDouble() < 0.5) p.elr.add(r);
                java.util.Collections.sort(p.elr);
            }
            p.leader = leader;
            // ELR on: sometimes the partition has lost its leader since (the
            // ISR keeps its last member) and remembers it in LastKnownElr.
            if (elr && rnd.nextDouble() < 0.12) {
                p.lastKnownElr.add(leader);
                p.leader = -1;
            }
            p.leaderEpoch = rnd.nextInt(10);
            p.partitionEpoch = p.leaderEpoch + rnd.nextInt(10);
            p.recovering = p.leader >= 0 && rnd.nextDouble() < 0.15;
            return p;
        }

        /** What the sender asks of this partition: mostly its current epochs; sometimes stale. */
        void request(Random rnd, int from) {
            double e = rnd.nextDouble();
            // Epochs are never negative: a stale one exists only above 0.
            reqLeaderEpoch = e < 0.8 ? leaderEpoch : e < 0.9 && leaderEpoch > 0 ? leaderEpoch - 1 : leaderEpoch + 1;
            double q = rnd.nextDouble();
            reqPartitionEpoch = q < 0.8 ? partitionEpoch : q < 0.9 && partitionEpoch > 0 ? partitionEpoch - 1 : partitionEpoch + 1;
            newIsr = new ArrayList<>();
            for (int r : replicas) if (r == from || rnd.nextDouble() < 0.6) newIsr.add(r);
            if (rnd.nextDouble() < 0.05) newIsr.remove(Integer.valueOf(from));
            // Sometimes out of replica order (Kafka keeps the ISR as sent).
            if (rnd.nextDouble() < 0.2) java.util.Collections.shuffle(newIsr, rnd);
            reportRecovered = recovering && rnd.nextDouble() < 0.5;
        }

        void write(StringBuilder v, int from, long fromEpoch, String error, PartitionRegistration after) {
            v.append(",\"replicas\":").append(ints(replicas)).append(",\"isr\":").append(ints(isr))
                .append(",\"leader\":").append(leader).append(",\"elr\":").append(ints(elr))
                .append(",\"last_known_elr\":").append(ints(lastKnownElr))
                .append(",\"leader_epoch\":").append(leaderEpoch).append(",\"partition_epoch\":").append(partitionEpoch)
                .append(",\"recovery\":\"").append(recovering ? "RECOVERING" : "RECOVERED").append('"')
                .append(",\"request\":{\"broker\":").append(from).append(",\"broker_epoch\":").append(fromEpoch)
                .append(",\"leader_epoch\":").append(reqLeaderEpoch).append(",\"partition_epoch\":").append(reqPartitionEpoch)
                .append(",\"new_isr\":").append(ints(newIsr)).append(",\"recovered\":").append(reportRecovered).append('}')
                .append(",\"kafka\":{\"error\":\"").append(error).append('"')
                .append(",\"leader\":").append(after.leader).append(",\"isr\":").append(ints(after.isr))
                .append(",\"elr\":").append(ints(Arrays.stream(after.elr).sorted().toArray()))
                .append(",\"last_known_elr\":").append(ints(Arrays.stream(after.lastKnownElr).sorted().toArray()))
                .append(",\"leader_epoch\":").append(after.leaderEpoch).append(",\"partition_epoch\":").append(after.partitionEpoch)
                .append(",\"recovery\":\"").append(after.leaderRecoveryState.name()).append("\"}");
        }
    }
}

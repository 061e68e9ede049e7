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

        // One partition on 3 of the brokers.
        List<Integer> all = new ArrayList<>(List.of(1, 2, 3, 4));
        java.util.Collections.shuffle(all, rnd);
        List<Integer> replicas = new ArrayList<>(all.subList(0, 3));
        List<Integer> isr = new ArrayList<>();
        for (int r : replicas) if (rnd.nextDouble() < 0.7) isr.add(r);
        int leader = isr.isEmpty() ? replicas.get(0) : isr.get(rnd.nextInt(isr.size()));
        if (!isr.contains(leader)) isr.add(0, leader);
        List<Integer> ordered = new ArrayList<>(replicas);
        ordered.retainAll(isr);
        isr = ordered;
        List<Integer> elrList = new ArrayList<>();
        if (elr && isr.size() < minIsr) {
            for (int r : replicas) if (!isr.contains(r) && rnd.nextDouble() < 0.5) elrList.add(r);
            java.util.Collections.sort(elrList);
        }
        int leaderEpoch = rnd.nextInt(10);
        int partitionEpoch = leaderEpoch + rnd.nextInt(10);
        boolean recovering = rnd.nextDouble() < 0.15;
        replication.replay(new PartitionRecord().setTopicId(TOPIC_ID).setPartitionId(0)
            .setReplicas(replicas).setIsr(isr).setLeader(leader)
            .setLeaderRecoveryState((recovering ? LeaderRecoveryState.RECOVERING : LeaderRecoveryState.RECOVERED).value())
            .setLeaderEpoch(leaderEpoch).setPartitionEpoch(partitionEpoch)
            .setEligibleLeaderReplicas(elrList).setLastKnownElr(List.of())
            .setDirectories(List.of(new Uuid(7, replicas.get(0)), new Uuid(7, replicas.get(1)), new Uuid(7, replicas.get(2)))));

        // The request: mostly from the leader with its epochs; sometimes stale.
        int from = rnd.nextDouble() < 0.85 ? leader : replicas.get(rnd.nextInt(3));
        long fromEpoch = rnd.nextDouble() < 0.9 ? epoch[from] : epoch[from] - 1;
        double e = rnd.nextDouble();
        // Epochs are never negative: a stale one exists only above 0.
        int reqLeaderEpoch = e < 0.8 ? leaderEpoch : e < 0.9 && leaderEpoch > 0 ? leaderEpoch - 1 : leaderEpoch + 1;
        double p = rnd.nextDouble();
        int reqPartitionEpoch = p < 0.8 ? partitionEpoch : p < 0.9 && partitionEpoch > 0 ? partitionEpoch - 1 : partitionEpoch + 1;
        List<Integer> newIsr = new ArrayList<>();
        for (int r : replicas) if (r == from || rnd.nextDouble() < 0.6) newIsr.add(r);
        if (rnd.nextDouble() < 0.05) newIsr.remove(Integer.valueOf(from));
        boolean reportRecovered = recovering && rnd.nextDouble() < 0.5;
        List<AlterPartitionRequestData.BrokerState> states = new ArrayList<>();
        for (int r : newIsr) states.add(new AlterPartitionRequestData.BrokerState().setBrokerId(r).setBrokerEpoch(epoch[r]));
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(from).setBrokerEpoch(fromEpoch);
        AlterPartitionRequestData.TopicData topic = new AlterPartitionRequestData.TopicData().setTopicId(TOPIC_ID);
        topic.partitions().add(new AlterPartitionRequestData.PartitionData().setPartitionIndex(0)
            .setLeaderEpoch(reqLeaderEpoch).setPartitionEpoch(reqPartitionEpoch).setNewIsrWithEpochs(states)
            .setLeaderRecoveryState((reportRecovered || !recovering ? LeaderRecoveryState.RECOVERED : LeaderRecoveryState.RECOVERING).value()));
        request.topics().add(topic);
        ControllerRequestContext context = new ControllerRequestContext(
            new RequestHeaderData().setRequestApiKey(ApiKeys.ALTER_PARTITION.id)
                .setRequestApiVersion(ApiKeys.ALTER_PARTITION.latestVersion()),
            KafkaPrincipal.ANONYMOUS, OptionalLong.empty());

        String error;
        PartitionRegistration before = replication.getPartition(TOPIC_ID, 0);
        PartitionRegistration after = before;
        try {
            ControllerResult<AlterPartitionResponseData> result = replication.alterPartition(context, request);
            short code = result.response().topics().get(0).partitions().get(0).errorCode();
            error = Errors.forCode(code).name();
            for (ApiMessageAndVersion r : result.records()) {
                if (r.message() instanceof PartitionChangeRecord change) after = after.merge(change);
            }
        } catch (ApiException ex) {
            error = Errors.forException(ex).name();
        }

        StringBuilder v = new StringBuilder("{");
        v.append("\"id\":").append(id)
            .append(",\"elr_enabled\":").append(elr)
            .append(",\"min_isr\":").append(minIsr)
            .append(",\"brokers\":[");
        for (int b = 1; b <= BROKERS; b++) {
            v.append(b > 1 ? "," : "").append("{\"id\":").append(b).append(",\"epoch\":").append(epoch[b])
                .append(",\"fenced\":").append(fenced[b]).append(",\"shutting_down\":").append(shuttingDown[b]).append('}');
        }
        v.append("],\"replicas\":").append(ints(replicas)).append(",\"isr\":").append(ints(isr))
            .append(",\"leader\":").append(leader).append(",\"elr\":").append(ints(elrList))
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
            .append(",\"recovery\":\"").append(after.leaderRecoveryState.name()).append("\"}}");
        return v.toString();
    }
}

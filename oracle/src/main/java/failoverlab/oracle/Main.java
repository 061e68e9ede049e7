package failoverlab.oracle;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes Failover Lab's rule-level test vectors: each generator feeds seeded
 * random inputs to one of Apache Kafka 4.4.0's own classes and records what
 * that class answers. Nothing here decides an outcome; Kafka's code does.
 *
 * Usage: Main [--seed N] [--out DIR]
 */
public final class Main {
    public static void main(String[] args) throws Exception {
        long seed = 20261201L;
        Path out = Path.of("tests/oracle");
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--seed" -> seed = Long.parseLong(args[i + 1]);
                case "--out" -> out = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Files.createDirectories(out);
        write(out.resolve("partition_change_builder.jsonl"), PartitionChangeOracle.generate(seed, 5200));
        write(out.resolve("leader_epoch_file_cache.jsonl"), EpochCacheOracle.generate(seed + 1, 2800));
        write(out.resolve("broker_heartbeat_manager.jsonl"),
            org.apache.kafka.controller.HeartbeatOracle.generate(seed + 2, 1000));
        write(out.resolve("replica.jsonl"), ReplicaOracle.generate(seed + 3, 1000));
        write(out.resolve("alter_partition.jsonl"),
            org.apache.kafka.controller.AlterPartitionOracle.generate(seed + 4, 1000));
        write(out.resolve("offsets_partition.jsonl"), OffsetsPartitionOracle.generate(seed + 5, 2500));
        write(out.resolve("cluster_connection_states.jsonl"),
            org.apache.kafka.clients.ConnectionStatesOracle.generate(seed + 6, 1500));
        write(out.resolve("transaction_manager.jsonl"),
            org.apache.kafka.clients.producer.internals.IdempotenceOracle.generate(seed + 7, 1500));
    }

    private static void write(Path file, List<String> lines) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (String l : lines) sb.append(l).append('\n');
        Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
        System.out.println(file + ": " + lines.size() + " vectors");
    }
}

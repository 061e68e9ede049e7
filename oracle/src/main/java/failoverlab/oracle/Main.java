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
 * Usage: Main [--seed N] [--out DIR] [--only FILE.jsonl]
 * (--only writes that one file, for work on one generator).
 */
public final class Main {
    public static void main(String[] args) throws Exception {
        long seed = 20261201L;
        Path out = Path.of("tests/oracle");
        String only = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--seed" -> seed = Long.parseLong(args[i + 1]);
                case "--out" -> out = Path.of(args[i + 1]);
                case "--only" -> only = args[i + 1];
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Files.createDirectories(out);
        Main.only = only;
        final long base = seed;
        write(out.resolve("partition_change_builder.jsonl"), () -> PartitionChangeOracle.generate(base, 5200));
        write(out.resolve("leader_epoch_file_cache.jsonl"), () -> EpochCacheOracle.generate(base + 1, 3600));
        write(out.resolve("broker_heartbeat_manager.jsonl"),
            () -> org.apache.kafka.controller.HeartbeatOracle.generate(base + 2, 1000));
        write(out.resolve("replica.jsonl"), () -> ReplicaOracle.generate(base + 3, 1000));
        write(out.resolve("alter_partition.jsonl"),
            () -> org.apache.kafka.controller.AlterPartitionOracle.generate(base + 4, 1000));
        write(out.resolve("offsets_partition.jsonl"), () -> OffsetsPartitionOracle.generate(base + 5, 2500));
        write(out.resolve("cluster_connection_states.jsonl"),
            () -> org.apache.kafka.clients.ConnectionStatesOracle.generate(base + 6, 1500));
        write(out.resolve("partition.jsonl"), () -> PartitionOracle.generate(base + 8, 600));
        write(out.resolve("fetcher_truncation.jsonl"), () -> TruncationOracle.generate(base + 9, 1500));
        write(out.resolve("transaction_manager.jsonl"),
            () -> org.apache.kafka.clients.producer.internals.IdempotenceOracle.generate(base + 7, 1500));
        write(out.resolve("range_assignor.jsonl"), () -> AssignorOracle.generate(base + 10, 800, "range"));
        write(out.resolve("cooperative_sticky_assignor.jsonl"),
            () -> AssignorOracle.generate(base + 11, 1500, "cooperative_sticky"));
        write(out.resolve("uniform_assignor.jsonl"), () -> AssignorOracle.generate(base + 12, 1000, "uniform"));
        write(out.resolve("server_range_assignor.jsonl"),
            () -> AssignorOracle.generate(base + 13, 700, "server_range"));
    }

    private static String only;

    /** One generator's vectors, made only when its file is written. */
    private interface Vectors {
        List<String> make() throws Exception;
    }

    private static void write(Path file, Vectors vectors) throws Exception {
        if (only != null && !file.getFileName().toString().equals(only)) return;
        List<String> lines = vectors.make();
        StringBuilder sb = new StringBuilder();
        for (String l : lines) sb.append(l).append('\n');
        Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
        System.out.println(file + ": " + lines.size() + " vectors");
    }
}

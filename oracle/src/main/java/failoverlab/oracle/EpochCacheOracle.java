package failoverlab.oracle;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;

/**
 * Random operation sequences on Kafka's
 * org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache (kafka-storage):
 * assign, truncateFromEndAsyncFlush, truncateFromStartAsyncFlush and
 * endOffsetFor. Each vector is one sequence on a fresh cache; after every
 * operation it records the cache's entries (and endOffsetFor's answer).
 */
final class EpochCacheOracle {
    static List<String> generate(long seed, int count) throws IOException {
        Random rnd = new Random(seed);
        File dir = Scratch.dir("failover-lab-oracle");
        File file = LeaderEpochCheckpointFile.newFile(dir);
        List<String> out = new ArrayList<>(count);
        try {
            for (int id = 0; id < count; id++) {
                Files.deleteIfExists(file.toPath());
                LeaderEpochCheckpointFile checkpoint = new LeaderEpochCheckpointFile(file, new LogDirFailureChannel(1));
                LeaderEpochFileCache cache = new LeaderEpochFileCache(new TopicPartition("t", 0), checkpoint, new Scratch.NoScheduler());
                out.add(sequence(rnd, id, cache));
            }
        } finally {
            Files.deleteIfExists(file.toPath());
            Files.deleteIfExists(dir.toPath());
        }
        return out;
    }

    private static String sequence(Random rnd, int id, LeaderEpochFileCache cache) {
        int ops = 3 + rnd.nextInt(7);
        int epoch = rnd.nextInt(3);
        long offset = rnd.nextInt(5);
        StringBuilder steps = new StringBuilder("[");
        for (int i = 0; i < ops; i++) {
            if (i > 0) steps.append(',');
            Json step = new Json();
            // The first two operations build a history to ask about.
            double op = i < 2 ? 0 : rnd.nextDouble();
            if (op < 0.45) {
                // Mostly what a log does (new epochs at growing offsets), with
                // a share of older epochs and earlier offsets.
                double k = rnd.nextDouble();
                if (k < 0.6) {
                    epoch += rnd.nextInt(3);
                    offset += rnd.nextInt(12);
                } else if (k < 0.8) {
                    epoch = Math.max(0, epoch - rnd.nextInt(3));
                    offset = Math.max(0, offset - rnd.nextInt(12));
                } else {
                    epoch = rnd.nextInt(12);
                    offset = rnd.nextInt(60);
                }
                cache.assign(epoch, offset);
                step.str("op", "assign").num("epoch", epoch).num("offset", offset);
            } else if (op < 0.75) {
                // Mostly what a follower on a diverging history asks: an
                // older epoch the cache has, or one it skipped (between two
                // of its epochs); else near the latest, or anything.
                List<EpochEntry> known = cache.epochEntries();
                double q = rnd.nextDouble();
                int requested;
                if (known.size() >= 2 && q < 0.3) {
                    requested = known.get(rnd.nextInt(known.size() - 1)).epoch();
                } else if (known.size() >= 2 && q < 0.55) {
                    int g = rnd.nextInt(known.size() - 1);
                    int lo = known.get(g).epoch();
                    int hi = known.get(g + 1).epoch();
                    requested = hi - lo > 1 ? lo + 1 + rnd.nextInt(hi - lo - 1) : lo;
                } else if (rnd.nextDouble() < 0.7 && cache.latestEpoch().isPresent()) {
                    requested = Math.max(0, cache.latestEpoch().get() - rnd.nextInt(4) + 1);
                } else {
                    requested = rnd.nextInt(12);
                }
                long leo = offset + rnd.nextInt(10);
                Map.Entry<Integer, Long> end = cache.endOffsetFor(requested, leo);
                step.str("op", "end_offset_for").num("epoch", requested).num("log_end_offset", leo)
                    .raw("kafka", "[" + end.getKey() + "," + end.getValue() + "]");
            } else if (op < 0.9) {
                long at = Math.max(0, offset - rnd.nextInt(15) + 3);
                cache.truncateFromEndAsyncFlush(at);
                step.str("op", "truncate_from_end").num("offset", at);
            } else {
                long at = Math.max(0, rnd.nextInt((int) offset + 5));
                cache.truncateFromStartAsyncFlush(at);
                step.str("op", "truncate_from_start").num("offset", at);
            }
            StringBuilder entries = new StringBuilder("[");
            List<EpochEntry> list = cache.epochEntries();
            for (int e = 0; e < list.size(); e++) {
                if (e > 0) entries.append(',');
                entries.append('[').append(list.get(e).epoch()).append(',').append(list.get(e).startOffset()).append(']');
            }
            step.raw("entries", entries.append(']').toString());
            steps.append(step);
        }
        return new Json().num("id", id).raw("steps", steps.append(']').toString()).toString();
    }
}

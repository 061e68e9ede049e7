package failoverlab.oracle;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.server.util.Scheduler;

/**
 * What the generators that build Kafka's on-disk classes share, none of it
 * deciding anything: a scheduler that runs nothing (asynchronous flushes and
 * the log's periodic tasks are not part of the rules) and a scratch
 * directory for the checkpoint files those classes write.
 */
final class Scratch {
    private Scratch() { }

    /** A fresh directory; on tmpfs when there is one (checkpoint files are fsynced on every write). */
    static File dir(String prefix) throws IOException {
        Path shm = Path.of("/dev/shm");
        return (Files.isDirectory(shm) && Files.isWritable(shm)
            ? Files.createTempDirectory(shm, prefix)
            : Files.createTempDirectory(prefix)).toFile();
    }

    /** Runs nothing it is given. */
    static final class NoScheduler implements Scheduler {
        @Override public void startup() { }
        @Override public void shutdown() { }
        @Override public ScheduledFuture<?> schedule(String name, Runnable task, long delayMs, long periodMs) {
            return new Never();
        }
        @Override public void resizeThreadPool(int newSize) { }
    }

    /** A future that never runs. */
    private static final class Never implements ScheduledFuture<Object> {
        @Override public long getDelay(TimeUnit unit) { return Long.MAX_VALUE; }
        @Override public int compareTo(Delayed o) { return 0; }
        @Override public boolean cancel(boolean mayInterrupt) { return true; }
        @Override public boolean isCancelled() { return true; }
        @Override public boolean isDone() { return true; }
        @Override public Object get() { return null; }
        @Override public Object get(long timeout, TimeUnit unit) { return null; }
    }
}

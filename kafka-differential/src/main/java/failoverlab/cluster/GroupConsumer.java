package failoverlab.cluster;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.Collection;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.InvalidOffsetException;
import org.apache.kafka.common.TopicPartition;

/**
 * One incarnation of a scenario's group consumer, in its own JVM, so that the
 * scenario's {@code crash_client} can be what it models: the process is killed
 * (SIGKILL). A killed process sends no LeaveGroup and makes no last commit (a
 * {@code close()} would commit the positions when enable.auto.commit is on), and
 * the kernel closes its sockets, as brokers see when a consumer's host process dies.
 *
 * <p>The driver starts an incarnation ahead of time and holds it at a gate (the
 * line {@code go} on stdin), so a {@code restart_client} happens at the scenario's
 * millisecond rather than after a JVM's start-up. Until then the process has
 * loaded the client's classes but built no consumer and opened no connection.
 *
 * <p>Arguments: {@code <properties file> <topic> <partitions> <assign|subscribe>}.
 * With {@code assign} the consumer reads every partition of the topic through
 * assign() and commits to its group (the simulator's model: the group's only
 * member, a static assignment, no JoinGroup/SyncGroup); with {@code subscribe}
 * it joins the group through subscribe().
 *
 * <p>stdout, one line per fact (wall-clock milliseconds first):
 * {@code ready}, {@code started <ms> <gate opened ms>}, {@code R <ms> <partition> <offset> <leader epoch> <value>},
 * {@code E <ms> <exception class> <message>} for what poll() or a commit raises,
 * {@code C <ms> ok} or {@code C <ms> <exception class>} for a {@code commit} step's commit,
 * and with {@code subscribe}, one line per ConsumerRebalanceListener callback:
 * {@code G <ms> <assigned|revoked|lost> <partitions the callback names> <assignment after it>}
 * (partition numbers, comma-separated, {@code -} for none; the assignment after it is
 * {@code consumer.assignment()} less what a revoke or lose callback gives up). The classic
 * eager protocol names the whole assignment in each callback; the cooperative one and KIP-848
 * (group.protocol=consumer) name only what changes.
 * stdin: {@code go}, then {@code commit} for each commit step.
 */
public final class GroupConsumer {
  private GroupConsumer() {}

  static String list(Collection<TopicPartition> ps) {
    String l = ps.stream().map(TopicPartition::partition).sorted().map(String::valueOf).collect(Collectors.joining(","));
    return l.isEmpty() ? "-" : l;
  }

  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    try (var r = Files.newBufferedReader(Path.of(args[0]), StandardCharsets.UTF_8)) {
      p.load(r);
    }
    String topic = args[1];
    int partitions = Integer.parseInt(args[2]);
    boolean subscribe = args[3].equals("subscribe");
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    // Load and warm the client's classes before the gate with a throwaway consumer (no group,
    // never polled, so it opens no connection): building the first KafkaConsumer of a cold JVM
    // takes a second or more on this machine. The real one is built at the gate's opening, as a
    // restarted process builds it at its start: its auto-commit clock starts then.
    Properties warm = new Properties();
    warm.putAll(p);
    warm.remove("group.id");
    warm.remove("group.instance.id");
    warm.put("enable.auto.commit", "false");
    try (KafkaConsumer<String, String> w = new KafkaConsumer<>(warm, new org.apache.kafka.common.serialization.StringDeserializer(),
        new org.apache.kafka.common.serialization.StringDeserializer())) {
      w.assign(List.of(new TopicPartition(topic, 0)));
    }
    out.println("ready");
    out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null && !line.equals("go")) {
      // wait at the gate
    }
    if (line == null) {
      return; // the driver went away before the restart
    }
    long goAt = System.currentTimeMillis();
    KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new org.apache.kafka.common.serialization.StringDeserializer(),
        new org.apache.kafka.common.serialization.StringDeserializer());
    if (subscribe) {
      c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
        void report(String kind, Collection<TopicPartition> named) {
          java.util.Set<TopicPartition> after = new java.util.HashSet<>(c.assignment());
          if (!kind.equals("assigned")) {
            after.removeAll(named);
          } else {
            after.addAll(named);
          }
          out.println("G " + System.currentTimeMillis() + " " + kind + " " + list(named) + " " + list(after));
          out.flush();
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> ps) {
          report("assigned", ps);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> ps) {
          report("revoked", ps);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> ps) {
          report("lost", ps);
        }
      });
    } else {
      List<TopicPartition> tps = new ArrayList<>();
      for (int i = 0; i < partitions; i++) {
        tps.add(new TopicPartition(topic, i));
      }
      c.assign(tps);
    }
    out.println("started " + System.currentTimeMillis() + " " + goAt);
    out.flush();
    AtomicBoolean commitWanted = new AtomicBoolean();
    Thread reader = new Thread(() -> {
      try {
        String l;
        while ((l = in.readLine()) != null) {
          if (l.equals("commit")) {
            commitWanted.set(true);
          }
        }
      } catch (Exception e) {
        // the driver closed our stdin
      }
      // The driver is gone: nothing reads our output any more.
      Runtime.getRuntime().halt(0);
    }, "stdin");
    reader.setDaemon(true);
    reader.start();
    String lastError = null;
    while (true) {
      try {
        if (!subscribe && c.assignment().isEmpty()) {
          // Every partition stopped (auto.offset.reset=none): nothing left to read.
          Thread.sleep(100);
          continue;
        }
        if (commitWanted.getAndSet(false)) {
          c.commitAsync((offsets, e) -> {
            out.println("C " + System.currentTimeMillis() + " " + (e == null ? "ok" : e.getClass().getSimpleName()));
          });
        }
        ConsumerRecords<String, String> rs = c.poll(Duration.ofMillis(100));
        for (ConsumerRecord<String, String> r : rs) {
          out.println("R " + System.currentTimeMillis() + " " + r.partition() + " " + r.offset() + " "
              + r.leaderEpoch().orElse(-1) + " " + r.value());
        }
        lastError = null;
      } catch (InvalidOffsetException e) {
        // auto.offset.reset=none (NoOffsetForPartitionException, LogTruncationException,
        // OffsetOutOfRangeException): the application is told and must seek. The lab's consumer,
        // with no application behind it, stops reading those partitions (as the simulator's does).
        String msg = e.getClass().getSimpleName() + " " + String.valueOf(e.getMessage()).replace('\n', ' ');
        out.println("E " + System.currentTimeMillis() + " " + msg);
        List<TopicPartition> stop = new ArrayList<>(e.partitions());
        if (!subscribe) {
          List<TopicPartition> keep = new ArrayList<>(c.assignment());
          keep.removeAll(stop);
          c.assign(keep);
        } else {
          c.pause(stop);
        }
      } catch (RuntimeException e) {
        String msg = e.getClass().getSimpleName() + " " + String.valueOf(e.getMessage()).replace('\n', ' ');
        if (!msg.equals(lastError)) {
          out.println("E " + System.currentTimeMillis() + " " + msg);
        }
        lastError = msg;
        Thread.sleep(100);
      }
      out.flush();
    }
  }
}

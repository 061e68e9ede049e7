package failoverlab.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.internals.Exit;

/**
 * Plays one Failover Lab scenario file against a real Apache Kafka KRaft cluster on
 * loopback and writes what Kafka did in the simulator's report shape.
 *
 * <p>The cluster: one KRaft controller (node 100, 127.0.0.10:29090) and brokers 1..n
 * (127.0.0.(10+b):(29090+b)), each its own JVM ({@code kafka.Kafka} from the Maven jars),
 * each started in its own cgroup v2 ({@code /sys/fs/cgroup/unified/flab-kdiff-b<b>}) so that
 * nftables can drop exactly its traffic: {@code isolate} drops everything the broker's
 * sockets send and everything sent to its address; {@code slow} drops what the broker sends
 * to the other brokers' listeners (its fetchers), keeping its controller heartbeats.
 * {@code crash} is SIGKILL, {@code shutdown} SIGTERM (KRaft controlled shutdown),
 * {@code restart} the same command on the same log directory.
 *
 * <p>Every process this driver starts is written to the pid file as it starts (the shell
 * wrapper's trap kills them by pid) and is killed again by this JVM's shutdown hook.
 *
 * <p>Observation: an Admin client on the brokers polls describeCluster (with fenced brokers;
 * the controller refuses that option on its own endpoint) and describeTopics (leader, ISR,
 * ELR) every {@value #POLL_MS} ms; listOffsets(latest) gives each partition's high watermark and
 * leader epoch at the end; a fresh consumer reads every partition to its end to check
 * every acknowledged record at its acknowledged offset.
 */
public final class Driver {
  static final int POLL_MS = 100;
  /** How often the groups' offsets partitions and committed offsets are polled. */
  static final int GROUP_POLL_MS = 200;
  static final int CONTROLLER_ID = 100;
  static final String KAFKA_VERSION = "4.4.0";
  static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  static final String NFT_TABLE = "flab_kdiff";
  static final Path CGROUP_ROOT = Path.of("/sys/fs/cgroup/unified");

  final JsonNode scenario;
  final String scenarioFile;
  final Path work;
  final Path out;
  final String classpath;
  final Path pidFile;
  final int brokers;
  final Map<Integer, NodeProc> nodes = new TreeMap<>();
  final Map<String, List<List<Integer>>> assignments = new LinkedHashMap<>();
  final List<String> allTopics = new ArrayList<>();
  final List<Map<String, Object>> timeline = Collections.synchronizedList(new ArrayList<>());
  final List<String> skippedSteps = new ArrayList<>();
  final Set<Integer> isolated = ConcurrentHashMap.newKeySet();
  final Set<Integer> slowed = ConcurrentHashMap.newKeySet();
  final Map<Integer, String> lastAction = new ConcurrentHashMap<>();
  volatile long t0 = -1;
  volatile boolean ended = false;
  boolean nftReady = false;

  Admin brokerAdmin;
  final Map<String, ProducerClient> producers = new LinkedHashMap<>();
  final List<ConsumerClient> consumers = new ArrayList<>();
  final Map<String, GroupClient> groupClients = new LinkedHashMap<>();
  final JsonNode givenAssignment;
  static final String OFFSETS_TOPIC = "__consumer_offsets";
  /** The offsets topic's partitions the groups' coordinators lead, by group id. */
  final Map<String, Integer> offsetsPartition = new TreeMap<>();
  /** Latest observed state of the groups' offsets partitions, and the groups' committed offsets. */
  final Map<Integer, PartState> offsetsState = new ConcurrentHashMap<>();
  final Map<String, Map<String, List<Long>>> committedSeen = new ConcurrentHashMap<>();
  /** How a group consumer reads: {@code assign} (the simulator's model) or {@code subscribe}. */
  String groupMode = "assign";

  // Observed state, updated by the poller.
  final Map<Integer, Boolean> fenced = new ConcurrentHashMap<>();
  final Map<String, PartState> partState = new ConcurrentHashMap<>();

  record PartState(Integer leader, List<Integer> isr, List<Integer> elr, List<Integer> lastKnownElr) {}

  record Ack(String partition, long offset, String value, long atMs) {}

  static final class NodeProc {
    final int id;
    final boolean controller;
    final String host;
    final int port;
    final Path dir;
    final Path props;
    final Path log;
    Process proc;

    NodeProc(int id, boolean controller, String host, int port, Path dir) {
      this.id = id;
      this.controller = controller;
      this.host = host;
      this.port = port;
      this.dir = dir;
      this.props = dir.resolve("server.properties");
      this.log = dir.resolve("server.log");
    }

    String address() {
      return host + ":" + port;
    }
  }

  final class ProducerClient {
    final String id;
    final String topic;
    final String acks;
    final int ratePerSec;
    final KafkaProducer<String, String> producer;
    final AtomicLong seq = new AtomicLong();
    final AtomicLong sent = new AtomicLong();
    final ConcurrentLinkedQueue<Ack> acks_ = new ConcurrentLinkedQueue<>();
    final Map<String, Long> failures = new ConcurrentHashMap<>();
    final AtomicLong failed = new AtomicLong();
    /** The values of the records whose send failed (the fates of the report's delivery). */
    final ConcurrentLinkedQueue<String> failedValues = new ConcurrentLinkedQueue<>();
    /** Record values are {@code <valuePrefix>-<n>}: unique across the run, so a value names one record. */
    final String valuePrefix;
    int next = 0;

    ProducerClient(String id, String valuePrefix, String topic, String acks, int ratePerSec, JsonNode config) {
      this.id = id;
      this.valuePrefix = valuePrefix;
      this.topic = topic;
      this.acks = acks;
      this.ratePerSec = ratePerSec;
      Properties p = new Properties();
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
      p.put(ProducerConfig.CLIENT_ID_CONFIG, id);
      p.put(ProducerConfig.ACKS_CONFIG, acks);
      p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
      p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
      copyClientConfig(config, p);
      producer = new KafkaProducer<>(p);
    }

    void sendOne(int partition) {
      long s = seq.getAndIncrement();
      String value = valuePrefix + "-" + s;
      String tp = topic + "-" + partition;
      sent.incrementAndGet();
      try {
        producer.send(
            new ProducerRecord<>(topic, partition, null, value),
            (md, e) -> {
              long at = now();
              if (ended) {
                return;
              }
              if (e == null) {
                acks_.add(new Ack(tp, md.offset(), value, at));
              } else {
                failed.incrementAndGet();
                failedValues.add(value);
                failures.merge(errorName(e), 1L, Long::sum);
              }
            });
      } catch (RuntimeException e) {
        failed.incrementAndGet();
        failedValues.add(value);
        failures.merge(errorName(e), 1L, Long::sum);
      }
    }

    void tick() {
      if (ended) {
        return;
      }
      int n = assignments.get(topic).size();
      sendOne(next % n);
      next++;
    }
  }

  final class ConsumerClient implements Runnable {
    final String id;
    final String topic;
    final JsonNode config;
    final AtomicLong consumed = new AtomicLong();
    final Map<String, Long> positions = new ConcurrentHashMap<>();
    /** Every value read, once per read (the delivery's consumed and consumed_twice). */
    final ConcurrentLinkedQueue<String> values = new ConcurrentLinkedQueue<>();
    volatile boolean stop = false;
    Thread thread;

    ConsumerClient(String id, String topic, JsonNode config) {
      this.id = id;
      this.topic = topic;
      this.config = config;
    }

    @Override
    public void run() {
      Properties p = new Properties();
      p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
      p.put(ConsumerConfig.CLIENT_ID_CONFIG, id);
      p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
      p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
      p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
      copyClientConfig(config, p);
      try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < assignments.get(topic).size(); i++) {
          tps.add(new TopicPartition(topic, i));
        }
        c.assign(tps);
        c.seekToBeginning(tps);
        while (!stop && !ended) {
          for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
            consumed.incrementAndGet();
            values.add(r.value());
            positions.put(r.topic() + "-" + r.partition(), r.offset() + 1);
          }
        }
      } catch (RuntimeException e) {
        event("consumer_error", Map.of("consumer", id, "error", e.toString()));
      }
    }
  }

  /** One record a group consumer's incarnation read. */
  record Read(long atMs, int incarnation, int partition, long offset, int leaderEpoch, String value) {}

  /**
   * A scenario consumer with a group.id: each incarnation is its own JVM ({@link GroupConsumer}),
   * so that {@code crash_client} is a SIGKILL of a process, as it models (no LeaveGroup, no last
   * commit on close), and {@code restart_client} is a new process with the same group id that
   * resumes from the group's committed offsets. The next incarnation is started ahead, held at its
   * gate until its step's millisecond.
   */
  final class GroupClient {
    final String id;
    final String topic;
    final String groupId;
    final JsonNode config;
    final List<Incarnation> incarnations = Collections.synchronizedList(new ArrayList<>());
    final ConcurrentLinkedQueue<Read> reads = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Map<String, Object>> raised = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Map<String, Object>> stepCommits = new ConcurrentLinkedQueue<>();
    /** Each ConsumerRebalanceListener callback an incarnation ran (subscribe mode). */
    final ConcurrentLinkedQueue<Map<String, Object>> rebalances = new ConcurrentLinkedQueue<>();
    /**
     * How this consumer reads: {@code subscribe} when the scenario's client says
     * {@code "subscribe": true} (a member of a group of several, with the group.protocol its
     * config names: dynamic membership unless the config gives a group.instance.id), else the
     * run's {@code --group-mode} ({@code assign}, the simulator's model of a group's only member,
     * or {@code subscribe} with static membership).
     */
    final String mode;
    /** The scenario itself asked for subscribe() (no static membership added). */
    final boolean scenarioSubscribes;
    Incarnation spare;

    final class Incarnation {
      final int n;
      final Process proc;
      final java.io.Writer stdin;
      final Path log;
      final java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(1);
      volatile long startedAtMs = -1;
      volatile long goAtMs = -1;
      volatile long crashedAtMs = -1;

      Incarnation(int n, Process proc, Path log) {
        this.n = n;
        this.proc = proc;
        this.log = log;
        this.stdin = new java.io.OutputStreamWriter(proc.getOutputStream(), StandardCharsets.UTF_8);
      }

      void send(String line) {
        try {
          stdin.write(line + "\n");
          stdin.flush();
        } catch (IOException e) {
          event("consumer_error", Map.of("consumer", id, "error", "stdin: " + e));
        }
      }
    }

    GroupClient(String id, String topic, String groupId, JsonNode config, boolean scenarioSubscribes) {
      this.id = id;
      this.topic = topic;
      this.groupId = groupId;
      this.config = config;
      this.scenarioSubscribes = scenarioSubscribes;
      this.mode = scenarioSubscribes ? "subscribe" : groupMode;
    }

    /** Start an incarnation's JVM, held at its gate. */
    Incarnation spawn() throws IOException {
      int n = incarnations.size() + (spare == null ? 0 : 1) + 1;
      Path props = work.resolve("consumer-" + id + "-" + n + ".properties");
      Path log = work.resolve("consumer-" + id + "-" + n + ".log");
      Path log4j = work.resolve("consumer-" + id + "-" + n + "-log4j2.properties");
      Properties p = new Properties();
      p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
      p.put(ConsumerConfig.CLIENT_ID_CONFIG, id);
      copyClientConfig(config, p);
      if (groupMode.equals("subscribe") && !scenarioSubscribes) {
        // Static membership (KIP-345): the restarted process takes the crashed member's place
        // at once, instead of waiting session.timeout.ms for the coordinator to expel it.
        p.putIfAbsent(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, id);
      }
      try (var w = Files.newBufferedWriter(props)) {
        p.store(w, "Failover Lab kafka-differential: consumer " + id + ", incarnation " + n);
      }
      Files.writeString(log4j, String.join("\n",
          "status = warn",
          "appender.file.type = File",
          "appender.file.name = FILE",
          "appender.file.fileName = " + log,
          "appender.file.layout.type = PatternLayout",
          "appender.file.layout.pattern = %d{UNIX_MILLIS} %p %m (%c)%n",
          "rootLogger.level = WARN",
          "rootLogger.appenderRef.file.ref = FILE",
          // The coordinator's requests and answers, offset resets and truncation detection.
          "logger.ac.name = org.apache.kafka.clients.consumer.internals.AbstractCoordinator",
          "logger.ac.level = DEBUG",
          "logger.cc.name = org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
          "logger.cc.level = DEBUG",
          "logger.ss.name = org.apache.kafka.clients.consumer.internals.SubscriptionState",
          "logger.ss.level = INFO",
          "logger.fc.name = org.apache.kafka.clients.consumer.internals.FetchCollector",
          "logger.fc.level = INFO",
          // Connections that time out or are refused (which broker the client tried, and when).
          "logger.nc.name = org.apache.kafka.clients.NetworkClient",
          "logger.nc.level = INFO",
          // group.protocol=consumer (KIP-848) runs the AsyncKafkaConsumer, whose coordinator,
          // commits and heartbeats are logged by its request managers.
          "logger.crm.name = org.apache.kafka.clients.consumer.internals.CoordinatorRequestManager",
          "logger.crm.level = DEBUG",
          "logger.cmt.name = org.apache.kafka.clients.consumer.internals.CommitRequestManager",
          "logger.cmt.level = DEBUG",
          "logger.hb.name = org.apache.kafka.clients.consumer.internals.ConsumerHeartbeatRequestManager",
          "logger.hb.level = DEBUG",
          "logger.ahb.name = org.apache.kafka.clients.consumer.internals.AbstractHeartbeatRequestManager",
          "logger.ahb.level = DEBUG",
          "logger.mm.name = org.apache.kafka.clients.consumer.internals.ConsumerMembershipManager",
          "logger.mm.level = INFO",
          "logger.amm.name = org.apache.kafka.clients.consumer.internals.AbstractMembershipManager",
          "logger.amm.level = INFO",
          ""));
      List<String> cmd = List.of("java", "-Xms32m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
          "-Dlog4j2.configurationFile=" + log4j,
          "-cp", System.getProperty("java.class.path"), GroupConsumer.class.getName(),
          props.toString(), topic, Integer.toString(assignments.get(topic).size()), mode);
      ProcessBuilder pb = new ProcessBuilder(cmd);
      pb.redirectError(ProcessBuilder.Redirect.appendTo(work.resolve("consumer-" + id + "-" + n + ".err").toFile()));
      Process proc = pb.start();
      Files.writeString(pidFile, proc.pid() + "\n", StandardCharsets.UTF_8,
          StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      Incarnation inc = new Incarnation(n, proc, log);
      Thread t = new Thread(() -> readOutput(inc), "consumer-" + id + "-" + n);
      t.setDaemon(true);
      t.start();
      return inc;
    }

    void readOutput(Incarnation inc) {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(inc.proc.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          if (line.equals("ready")) {
            inc.ready.countDown();
            continue;
          }
          String[] f = line.split(" ", 7);
          if (f.length < 2) {
            continue;
          }
          long at = Long.parseLong(f[1]) - t0;
          switch (f[0]) {
            case "started" -> inc.startedAtMs = at;
            case "R" -> reads.add(new Read(at, inc.n, Integer.parseInt(f[2]), Long.parseLong(f[3]), Integer.parseInt(f[4]), f[5]));
            case "E" -> {
              String[] e = line.split(" ", 4);
              Map<String, Object> m = new LinkedHashMap<>();
              m.put("at_ms", at);
              m.put("incarnation", inc.n);
              m.put("exception", e[2]);
              m.put("message", e.length > 3 ? e[3] : "");
              raised.add(m);
            }
            case "C" -> stepCommits.add(new LinkedHashMap<>(Map.of("at_ms", at, "result", f[2])));
            case "G" -> {
              // G <ms> <assigned|revoked|lost> <partitions named> <assignment after>
              Map<String, Object> m = new LinkedHashMap<>();
              m.put("at_ms", at);
              m.put("incarnation", inc.n);
              m.put("callback", f[2]);
              m.put("partitions", partitionList(f[3]));
              m.put("assignment", partitionList(f.length > 4 ? f[4] : "-"));
              rebalances.add(m);
            }
            default -> {
              // not ours
            }
          }
        }
      } catch (IOException | RuntimeException e) {
        event("consumer_error", Map.of("consumer", id, "error", "output: " + e));
      }
    }

    List<String> partitionList(String csv) {
      List<String> l = new ArrayList<>();
      if (!csv.equals("-")) {
        for (String x : csv.split(",")) {
          l.add(topic + "-" + x);
        }
      }
      return l;
    }

    void waitReady(Incarnation inc) throws InterruptedException {
      if (!inc.ready.await(120, TimeUnit.SECONDS)) {
        throw new IllegalStateException("consumer " + id + " incarnation " + inc.n + " did not start");
      }
    }

    /** Let the spare incarnation go now: the first start, or a restart_client. */
    void go() throws Exception {
      Incarnation inc = spare != null ? spare : spawn();
      spare = null;
      waitReady(inc);
      inc.goAtMs = now();
      incarnations.add(inc);
      inc.send("go");
      event("consumer_started", Map.of("consumer", id, "incarnation", inc.n));
    }

    Incarnation current() {
      synchronized (incarnations) {
        return incarnations.isEmpty() ? null : incarnations.get(incarnations.size() - 1);
      }
    }

    boolean running() {
      Incarnation c = current();
      return c != null && c.crashedAtMs < 0 && c.proc.isAlive();
    }

    /** crash_client: SIGKILL, then start the next incarnation's JVM, held at its gate. */
    void crash() throws Exception {
      Incarnation c = current();
      if (c != null && c.crashedAtMs < 0) {
        c.crashedAtMs = now();
        c.proc.destroyForcibly();
        c.proc.waitFor(10, TimeUnit.SECONDS);
        event("consumer_crashed", Map.of("consumer", id, "incarnation", c.n));
      }
      if (spare == null) {
        spare = spawn();
      }
    }

    void commit() {
      Incarnation c = current();
      if (c != null && running()) {
        c.send("commit");
      }
    }

    void stop() {
      for (Incarnation inc : new ArrayList<>(incarnations)) {
        inc.proc.destroyForcibly();
      }
      if (spare != null) {
        spare.proc.destroyForcibly();
      }
    }
  }

  Driver(Path scenarioPath, String scenarioFile, Path assignmentFile, Path out, Path work, String classpath, Path pidFile) throws IOException {
    this.scenario = JSON.readTree(scenarioPath.toFile());
    this.scenarioFile = scenarioFile;
    JsonNode given = assignmentFile != null && Files.exists(assignmentFile) ? JSON.readTree(assignmentFile.toFile()) : null;
    this.givenAssignment = given;
    this.out = out;
    this.work = work;
    this.classpath = classpath;
    this.pidFile = pidFile;
    this.brokers = scenario.get("brokers").asInt();
    for (JsonNode t : scenario.get("topics")) {
      String name = t.get("name").asText();
      allTopics.add(name);
      List<List<Integer>> a = new ArrayList<>();
      if (t.has("assignment") || (given != null && given.has(name))) {
        for (JsonNode r : t.has("assignment") ? t.get("assignment") : given.get(name)) {
          List<Integer> rs = new ArrayList<>();
          r.forEach(x -> rs.add(x.asInt()));
          a.add(rs);
        }
      } else {
        a = roundRobinAssignment(brokers, t.get("partitions").asInt(), t.get("replication_factor").asInt());
      }
      assignments.put(name, a);
    }
  }

  /** The simulator's default assignment (src/sim/mod.rs round_robin_assignment), given to Kafka explicitly. */
  static List<List<Integer>> roundRobinAssignment(int n, int partitions, int rf) {
    List<List<Integer>> out = new ArrayList<>();
    int shift = 0;
    for (int p = 0; p < partitions; p++) {
      if (p > 0 && p % n == 0) {
        shift++;
      }
      int first = p % n;
      List<Integer> r = new ArrayList<>();
      r.add(first + 1);
      for (int j = 0; j < rf - 1; j++) {
        int idx = (first + 1 + (shift + j) % Math.max(n - 1, 1)) % n;
        r.add(idx + 1);
      }
      out.add(r);
    }
    return out;
  }

  long now() {
    return t0 < 0 ? -1 : System.currentTimeMillis() - t0;
  }

  void event(String kind, Map<String, Object> detail) {
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("at_ms", now());
    e.put("event", kind);
    e.putAll(detail);
    timeline.add(e);
  }

  String bootstrap() {
    return nodes.values().stream().filter(n -> !n.controller).map(NodeProc::address).collect(Collectors.joining(","));
  }

  static void copyClientConfig(JsonNode config, Properties p) {
    if (config == null) {
      return;
    }
    Iterator<Map.Entry<String, JsonNode>> it = config.fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getKey().startsWith("sim.")) {
        p.put(e.getKey(), e.getValue().asText());
      }
    }
  }

  static String errorName(Throwable e) {
    // A batch that outlived delivery.timeout.ms fails in the client with a TimeoutException
    // ("... has passed since batch creation"); Kafka has no protocol error code for it, so it
    // gets the simulator's name for the same outcome.
    if (e instanceof org.apache.kafka.common.errors.TimeoutException && String.valueOf(e.getMessage()).contains("since batch creation")) {
      return "DELIVERY_TIMEOUT";
    }
    Throwable t = e;
    while (t.getCause() != null && !(t instanceof org.apache.kafka.common.KafkaException && Errors.forException(t) != Errors.UNKNOWN_SERVER_ERROR)) {
      t = t.getCause();
    }
    Errors err = Errors.forException(t);
    return err == Errors.UNKNOWN_SERVER_ERROR ? t.getClass().getSimpleName() : err.name();
  }

  static String acksText(JsonNode a) {
    if (a == null || a.isNull()) {
      return "all";
    }
    String s = a.asText();
    return s.equals("-1") ? "all" : s;
  }

  // ---------------------------------------------------------------- cluster

  void writeNodeConfig(NodeProc n) throws IOException {
    Files.createDirectories(n.dir.resolve("data"));
    Properties p = new Properties();
    p.put("node.id", Integer.toString(n.id));
    p.put("controller.quorum.voters", CONTROLLER_ID + "@127.0.0.10:29090");
    p.put("controller.listener.names", "CONTROLLER");
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.put("log.dirs", n.dir.resolve("data").toString());
    p.put("auto.create.topics.enable", "false");
    p.put("num.partitions", "1");
    p.put("num.network.threads", "2");
    p.put("num.io.threads", "2");
    p.put("background.threads", "2");
    p.put("num.recovery.threads.per.data.dir", "1");
    p.put("log.cleaner.enable", "false");
    p.put("offsets.topic.replication.factor", Integer.toString(Math.min(3, brokers)));
    p.put("transaction.state.log.replication.factor", Integer.toString(Math.min(3, brokers)));
    p.put("transaction.state.log.min.isr", "1");
    p.put("share.coordinator.state.topic.replication.factor", Integer.toString(Math.min(3, brokers)));
    p.put("share.coordinator.state.topic.min.isr", "1");
    // group.initial.rebalance.delay.ms stays at Kafka's default (3000), as the simulator models it:
    // a classic group's first rebalance waits for more members (no effect on assign() consumers,
    // which never join, nor on KIP-848 groups).
    p.put("auto.leader.rebalance.enable", "false");
    if (n.controller) {
      p.put("process.roles", "controller");
      p.put("listeners", "CONTROLLER://" + n.address());
    } else {
      p.put("process.roles", "broker");
      p.put("listeners", "PLAINTEXT://" + n.address());
      p.put("advertised.listeners", "PLAINTEXT://" + n.address());
      p.put("inter.broker.listener.name", "PLAINTEXT");
      JsonNode rack = scenario.path("racks").get(Integer.toString(n.id));
      if (rack != null) {
        p.put("broker.rack", rack.asText());
      }
    }
    // The scenario's cluster config, with Kafka's names (sim.* and the ELR switch are not broker configs).
    Iterator<Map.Entry<String, JsonNode>> it = scenario.path("config").fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      String k = e.getKey();
      if (k.startsWith("sim.") || k.equals("eligible.leader.replicas.enable")) {
        continue;
      }
      p.put(k, e.getValue().asText());
    }
    try (var w = Files.newBufferedWriter(n.props)) {
      p.store(w, "Failover Lab kafka-differential: " + scenarioFile);
    }
  }

  boolean elrEnabled() {
    JsonNode v = scenario.path("config").get("eligible.leader.replicas.enable");
    return v == null || v.asBoolean();
  }

  void format(NodeProc n, String clusterId) {
    Exit.setExitProcedure((code, msg) -> {
      throw new IllegalStateException("StorageTool exit " + code + ": " + msg);
    });
    String[] args = {
      "format", "-t", clusterId, "-c", n.props.toString(), "--ignore-formatted",
      "--feature", "eligible.leader.replicas.version=" + (elrEnabled() ? 1 : 0)
    };
    int rc = kafka.tools.StorageTool.execute(args, System.out);
    if (rc != 0) {
      throw new IllegalStateException("format of node " + n.id + " failed: " + rc);
    }
  }

  void startNode(NodeProc n) throws IOException {
    String cg = CGROUP_ROOT.resolve("flab-kdiff-b" + n.id).toString();
    List<String> jvm = List.of(
        "java", "-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1",
        "-Xss512k", "-Djava.awt.headless=true",
        "-Dlog4j2.configurationFile=" + work.resolve("node-log4j2.properties"),
        "-cp", classpath, "kafka.Kafka", n.props.toString());
    String cmd = (n.controller ? "" : "mkdir -p " + cg + " && echo $$ > " + cg + "/cgroup.procs; ")
        + "exec " + jvm.stream().map(Driver::shellQuote).collect(Collectors.joining(" "));
    ProcessBuilder pb = new ProcessBuilder("sh", "-c", cmd);
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(n.log.toFile()));
    n.proc = pb.start();
    Files.writeString(pidFile, n.proc.pid() + "\n", StandardCharsets.UTF_8,
        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    event("process_started", Map.of("node", n.id, "pid", n.proc.pid()));
  }

  static String shellQuote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }

  static boolean portOpen(String host, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  void waitPort(NodeProc n, long timeoutMs) throws InterruptedException {
    long end = System.currentTimeMillis() + timeoutMs;
    while (!portOpen(n.host, n.port)) {
      if (System.currentTimeMillis() > end || !n.proc.isAlive()) {
        throw new IllegalStateException("node " + n.id + " did not open " + n.address() + " (see " + n.log + ")");
      }
      Thread.sleep(100);
    }
  }

  void waitUnfenced(Set<Integer> want, long timeoutMs) throws Exception {
    long end = System.currentTimeMillis() + timeoutMs;
    Exception last = null;
    Set<Integer> up = new TreeSet<>();
    while (true) {
      try {
        up.clear();
        for (Node nd : brokerAdmin.describeCluster(new DescribeClusterOptions().includeFencedBrokers(true).timeoutMs(2000)).nodes().get()) {
          if (!nd.isFenced()) {
            up.add(nd.id());
          }
        }
        if (up.containsAll(want)) {
          return;
        }
      } catch (Exception e) {
        last = e;
      }
      if (System.currentTimeMillis() > end) {
        throw new IllegalStateException("brokers " + want + " not unfenced in time (unfenced: " + up + ")", last);
      }
      Thread.sleep(200);
    }
  }

  void nft(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add("nft");
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String o = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IOException("nft " + String.join(" ", args) + ": " + o);
    }
  }

  void ensureNft() throws IOException, InterruptedException {
    if (nftReady) {
      return;
    }
    try {
      nft("delete", "table", "inet", NFT_TABLE);
    } catch (IOException e) {
      // absent
    }
    nft("add", "table", "inet", NFT_TABLE);
    nft("add", "chain", "inet", NFT_TABLE, "out", "{ type filter hook output priority 0; policy accept; }");
    nftReady = true;
  }

  /** The whole rule set in one `nft -f -` transaction: a step's filters apply atomically, in a few ms. */
  void applyFilters() throws IOException, InterruptedException {
    ensureNft();
    StringBuilder rules = new StringBuilder("flush chain inet " + NFT_TABLE + " out\n");
    for (int b : isolated) {
      NodeProc n = nodes.get(b);
      rules.append("add rule inet " + NFT_TABLE + " out socket cgroupv2 level 1 \"unified/flab-kdiff-b" + b + "\" drop\n");
      rules.append("add rule inet " + NFT_TABLE + " out ip daddr " + n.host + " drop\n");
    }
    for (int b : slowed) {
      String ports = nodes.values().stream().filter(x -> !x.controller && x.id != b).map(x -> Integer.toString(x.port)).collect(Collectors.joining(","));
      rules.append("add rule inet " + NFT_TABLE + " out socket cgroupv2 level 1 \"unified/flab-kdiff-b" + b + "\" tcp dport { " + ports + " } drop\n");
    }
    Process p = new ProcessBuilder("nft", "-f", "-").redirectErrorStream(true).start();
    p.getOutputStream().write(rules.toString().getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    String o = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IOException("nft -f -: " + o + "\n" + rules);
    }
  }

  synchronized void stopAll() {
    for (NodeProc n : nodes.values()) {
      if (n.proc != null && n.proc.isAlive()) {
        n.proc.destroyForcibly();
      }
    }
    for (NodeProc n : nodes.values()) {
      if (n.proc != null) {
        try {
          n.proc.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    if (nftReady) {
      try {
        nft("delete", "table", "inet", NFT_TABLE);
      } catch (Exception e) {
        System.err.println("kafka-differential: could not delete nft table: " + e);
      }
      nftReady = false;
    }
  }

  // ---------------------------------------------------------------- observation

  void poll() {
    try {
      Collection<Node> ns = brokerAdmin.describeCluster(new DescribeClusterOptions().includeFencedBrokers(true).timeoutMs(1000)).nodes().get(1500, TimeUnit.MILLISECONDS);
      for (Node nd : ns) {
        Boolean prev = fenced.put(nd.id(), nd.isFenced());
        if (prev == null || prev != nd.isFenced()) {
          event(nd.isFenced() ? "fenced" : "unfenced", Map.of("broker", nd.id()));
        }
      }
    } catch (Exception e) {
      // a missed poll; the next one catches up
    }
    try {
      Map<String, TopicDescription> d = brokerAdmin.describeTopics(allTopics, new DescribeTopicsOptions().timeoutMs(1000)).allTopicNames().get(1500, TimeUnit.MILLISECONDS);
      for (TopicDescription td : d.values()) {
        for (TopicPartitionInfo pi : td.partitions()) {
          String tp = td.name() + "-" + pi.partition();
          PartState s = new PartState(
              pi.leader() == null || pi.leader().id() < 0 ? null : pi.leader().id(),
              ids(pi.isr()), ids(pi.elr()), ids(pi.lastKnownElr()));
          PartState prev = partState.put(tp, s);
          if (prev == null || !prev.equals(s)) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("partition", tp);
            m.put("leader", s.leader());
            m.put("isr", s.isr());
            m.put("elr", s.elr());
            m.put("last_known_elr", s.lastKnownElr());
            event("partition", m);
          }
        }
      }
    } catch (Exception e) {
      // missed
    }
  }

  /**
   * The groups' side, polled by Admin: the leader and ISR of each group's __consumer_offsets
   * partition (the broker FindCoordinator names, once the change has reached it) and the
   * committed offsets the coordinator answers with (listConsumerGroupOffsets: an OffsetFetch).
   */
  void pollGroups() {
    try {
      Map<String, TopicDescription> d = brokerAdmin.describeTopics(List.of(OFFSETS_TOPIC), new DescribeTopicsOptions().timeoutMs(1000)).allTopicNames().get(1500, TimeUnit.MILLISECONDS);
      for (TopicPartitionInfo pi : d.get(OFFSETS_TOPIC).partitions()) {
        if (!offsetsPartition.containsValue(pi.partition())) {
          continue;
        }
        PartState s = new PartState(pi.leader() == null || pi.leader().id() < 0 ? null : pi.leader().id(),
            ids(pi.isr()), ids(pi.elr()), ids(pi.lastKnownElr()));
        PartState prev = offsetsState.put(pi.partition(), s);
        if (prev == null || !prev.equals(s)) {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("partition", OFFSETS_TOPIC + "-" + pi.partition());
          m.put("leader", s.leader());
          m.put("isr", s.isr());
          m.put("elr", s.elr());
          m.put("last_known_elr", s.lastKnownElr());
          event("partition", m);
        }
      }
    } catch (Exception e) {
      // missed
    }
    for (String g : offsetsPartition.keySet()) {
      if (ended) {
        return;
      }
      try {
        Map<String, List<Long>> now = committed(g, 1000);
        Map<String, List<Long>> prev = committedSeen.put(g, now);
        if (prev == null || !prev.equals(now)) {
          event("group_committed", new LinkedHashMap<>(Map.of("group", g, "committed", now)));
        }
      } catch (Exception e) {
        // the coordinator did not answer in time (dead, moving or loading)
      }
    }
  }

  /** The group's committed offsets as its coordinator answers: partition → [offset, leader epoch or -1]. */
  Map<String, List<Long>> committed(String group, int timeoutMs) throws Exception {
    Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> m = brokerAdmin
        .listConsumerGroupOffsets(group, new org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions().timeoutMs(timeoutMs))
        .partitionsToOffsetAndMetadata().get(timeoutMs + 500L, TimeUnit.MILLISECONDS);
    Map<String, List<Long>> out = new TreeMap<>();
    for (Map.Entry<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> e : m.entrySet()) {
      if (e.getValue() != null) {
        out.put(e.getKey().topic() + "-" + e.getKey().partition(),
            List.of(e.getValue().offset(), (long) e.getValue().leaderEpoch().orElse(-1)));
      }
    }
    return out;
  }

  static List<Integer> ids(List<Node> ns) {
    if (ns == null) {
      return List.of();
    }
    return ns.stream().map(Node::id).sorted().collect(Collectors.toList());
  }

  // ---------------------------------------------------------------- steps

  void doStep(JsonNode st) throws Exception {
    String action = null;
    for (Iterator<String> it = st.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!k.equals("at_ms")) {
        action = k;
      }
    }
    JsonNode v = st.get(action);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("action", action);
    m.put("arg", v);
    event("step", m);
    switch (action) {
      case "crash" -> {
        NodeProc n = nodes.get(v.asInt());
        lastAction.put(n.id, "crashed");
        n.proc.destroyForcibly(); // SIGKILL
        n.proc.waitFor(10, TimeUnit.SECONDS);
      }
      case "shutdown" -> {
        NodeProc n = nodes.get(v.asInt());
        lastAction.put(n.id, "shut_down");
        n.proc.destroy(); // SIGTERM: KRaft controlled shutdown
        Process p = n.proc;
        Thread w = new Thread(() -> {
          try {
            p.waitFor();
            event("process_exited", Map.of("node", n.id, "exit", p.exitValue()));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
        w.setDaemon(true);
        w.start();
      }
      case "restart" -> {
        NodeProc n = nodes.get(v.asInt());
        if (n.proc.isAlive()) {
          n.proc.waitFor(60, TimeUnit.SECONDS);
        }
        lastAction.remove(n.id);
        startNode(n);
      }
      case "isolate" -> {
        isolated.add(v.asInt());
        applyFilters();
      }
      case "heal" -> {
        isolated.remove(v.asInt());
        applyFilters();
      }
      case "slow" -> {
        slowed.add(v.get("broker").asInt());
        applyFilters();
      }
      case "unslow" -> {
        slowed.remove(v.get("broker").asInt());
        applyFilters();
      }
      case "elect_preferred" -> {
        TopicPartition tp = new TopicPartition(v.get("topic").asText(), v.get("partition").asInt());
        try {
          brokerAdmin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).all().get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
          event("elect_preferred_error", Map.of("error", e.toString()));
        }
      }
      case "produce" -> {
        String pid = v.has("producer") ? v.get("producer").asText() : "default";
        ProducerClient pc = producers.get(pid);
        if (pc == null) {
          pc = producers.get("default:" + acksText(v.get("acks")));
        }
        for (int i = 0; i < v.get("count").asInt(); i++) {
          pc.sendOne(v.get("partition").asInt());
        }
      }
      case "crash_client", "restart_client", "commit" -> {
        GroupClient g = groupClients.get(v.asText());
        if (g == null) {
          skippedSteps.add(action);
          event("step_unsupported", Map.of("action", action));
        } else if (action.equals("crash_client")) {
          g.crash();
        } else if (action.equals("restart_client")) {
          if (g.running()) {
            event("step_ignored", Map.of("action", action, "reason", "consumer is running"));
          } else {
            g.go();
          }
        } else {
          g.commit();
        }
      }
      default -> {
        skippedSteps.add(action);
        event("step_unsupported", Map.of("action", action));
      }
    }
  }

  // ---------------------------------------------------------------- the run

  void run() throws Exception {
    Files.createDirectories(work);
    Files.writeString(work.resolve("node-log4j2.properties"), String.join("\n",
        "status = warn",
        "appender.out.type = Console",
        "appender.out.name = OUT",
        "appender.out.layout.type = PatternLayout",
        "appender.out.layout.pattern = [%d{ISO8601}] %p %m (%c)%n",
        "rootLogger.level = INFO",
        "rootLogger.appenderRef.out.ref = OUT",
        "logger.sc.name = state.change.logger",
        "logger.sc.level = INFO",
        ""));
    String clusterId = org.apache.kafka.common.Uuid.randomUuid().toString();
    NodeProc ctl = new NodeProc(CONTROLLER_ID, true, "127.0.0.10", 29090, work.resolve("controller"));
    nodes.put(CONTROLLER_ID, ctl);
    for (int b = 1; b <= brokers; b++) {
      nodes.put(b, new NodeProc(b, false, "127.0.0." + (10 + b), 29090 + b, work.resolve("broker-" + b)));
    }
    for (NodeProc n : nodes.values()) {
      writeNodeConfig(n);
      format(n, clusterId);
    }
    Runtime.getRuntime().addShutdownHook(new Thread(this::stopAll));
    long bootStart = System.currentTimeMillis();
    // One JVM at a time: the machine is shared.
    startNode(ctl);
    waitPort(ctl, 60_000);
    Properties bp = new Properties();
    bp.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    bp.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "1000");
    bp.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "1500");
    bp.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "500");
    bp.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "1000");
    bp.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
    for (int b = 1; b <= brokers; b++) {
      NodeProc n = nodes.get(b);
      startNode(n);
      waitPort(n, 90_000);
      if (brokerAdmin == null) {
        brokerAdmin = Admin.create(bp);
      }
      waitUnfenced(Set.of(b), 60_000);
    }
    // Topics, with the simulator's assignment given explicitly.
    List<NewTopic> nts = new ArrayList<>();
    for (JsonNode t : scenario.get("topics")) {
      String name = t.get("name").asText();
      Map<Integer, List<Integer>> a = new TreeMap<>();
      List<List<Integer>> as = assignments.get(name);
      for (int i = 0; i < as.size(); i++) {
        a.put(i, as.get(i));
      }
      NewTopic nt = new NewTopic(name, a);
      Map<String, String> cfg = new HashMap<>();
      t.path("config").fields().forEachRemaining(e -> {
        if (!e.getKey().startsWith("sim.")) {
          cfg.put(e.getKey(), e.getValue().asText());
        }
      });
      nt.configs(cfg);
      nts.add(nt);
    }
    // A group's offsets live in __consumer_offsets. Kafka's own placement of that topic is
    // randomised (as any topic's), and the coordinator is its partition's leader, so the driver
    // creates it before any client asks, with the simulator's placement, like the other topics.
    List<String> groupIds = new ArrayList<>();
    for (JsonNode c : scenario.path("clients")) {
      JsonNode g = c.path("config").get("group.id");
      if (c.get("type").asText().equals("consumer") && g != null && !groupIds.contains(g.asText().trim())) {
        groupIds.add(g.asText().trim());
      }
    }
    if (!groupIds.isEmpty()) {
      int n = scenario.path("config").path("offsets.topic.num.partitions").asInt(50);
      List<List<Integer>> as = new ArrayList<>();
      if (givenAssignment != null && givenAssignment.has(OFFSETS_TOPIC)) {
        for (JsonNode r : givenAssignment.get(OFFSETS_TOPIC)) {
          List<Integer> rs = new ArrayList<>();
          r.forEach(x -> rs.add(x.asInt()));
          as.add(rs);
        }
      } else {
        int rf = scenario.path("config").path("offsets.topic.replication.factor").asInt(Math.min(3, brokers));
        as = roundRobinAssignment(brokers, n, rf);
      }
      Map<Integer, List<Integer>> a = new TreeMap<>();
      for (int i = 0; i < as.size(); i++) {
        a.put(i, as.get(i));
      }
      // The configs Kafka gives the topic when it creates it itself (GroupCoordinatorService's offsets topic configs).
      nts.add(new NewTopic(OFFSETS_TOPIC, a).configs(Map.of(
          "cleanup.policy", "compact", "compression.type", "producer", "segment.bytes", "104857600")));
      assignments.put(OFFSETS_TOPIC, as);
      for (String g : groupIds) {
        // Kafka's partitionFor: Utils.abs (not Math.abs, not a sign-bit mask) of String.hashCode.
        offsetsPartition.put(g, org.apache.kafka.common.utils.Utils.abs(g.hashCode()) % as.size());
      }
    }
    brokerAdmin.createTopics(nts).all().get(30, TimeUnit.SECONDS);
    // Wait for every partition to have its preferred leader and a full ISR.
    long end = System.currentTimeMillis() + 60_000;
    while (true) {
      t0 = System.currentTimeMillis(); // poll() records times relative to t0
      poll();
      boolean ok = true;
      for (String topic : allTopics) {
        List<List<Integer>> as = assignments.get(topic);
        for (int i = 0; i < as.size(); i++) {
          PartState s = partState.get(topic + "-" + i);
          if (s == null || s.leader() == null || s.leader().intValue() != as.get(i).get(0) || s.isr().size() != as.get(i).size()) {
            ok = false;
          }
        }
      }
      if (ok) {
        break;
      }
      if (System.currentTimeMillis() > end) {
        throw new IllegalStateException("topics not ready: " + partState);
      }
      Thread.sleep(200);
    }
    if (!offsetsPartition.isEmpty()) {
      long oend = System.currentTimeMillis() + 60_000;
      List<List<Integer>> as = assignments.get(OFFSETS_TOPIC);
      while (true) {
        pollGroups();
        boolean ok = true;
        for (int p : offsetsPartition.values()) {
          PartState s = offsetsState.get(p);
          if (s == null || s.leader() == null || s.leader().intValue() != as.get(p).get(0) || s.isr().size() != as.get(p).size()) {
            ok = false;
          }
        }
        if (ok) {
          break;
        }
        if (System.currentTimeMillis() > oend) {
          throw new IllegalStateException(OFFSETS_TOPIC + " not ready: " + offsetsState);
        }
        Thread.sleep(200);
      }
    }
    timeline.clear();
    // Clients.
    for (JsonNode c : scenario.path("clients")) {
      if (c.get("type").asText().equals("producer")) {
        String id = c.get("id").asText();
        producers.put(id, new ProducerClient(id, id, c.get("topic").asText(), acksText(c.get("acks")), c.path("records_per_sec").asInt(0), c.get("config")));
      }
    }
    for (JsonNode st : scenario.path("steps")) {
      JsonNode p = st.get("produce");
      if (p != null && !p.has("producer")) {
        String key = "default:" + acksText(p.get("acks"));
        if (!producers.containsKey(key)) {
          producers.put(key, new ProducerClient("default", key, p.get("topic").asText(), acksText(p.get("acks")), 0, null));
        }
      }
    }
    for (ProducerClient pc : producers.values()) {
      pc.producer.partitionsFor(pc.topic); // warm metadata before t=0, as the simulator's clients start with it
    }
    for (JsonNode c : scenario.path("clients")) {
      if (c.get("type").asText().equals("consumer")) {
        JsonNode g = c.path("config").get("group.id");
        if (g != null) {
          GroupClient gc = new GroupClient(c.get("id").asText(), c.get("topic").asText(), g.asText().trim(), c.get("config"),
              c.path("subscribe").asBoolean(false));
          gc.spare = gc.spawn();
          groupClients.put(gc.id, gc);
        } else {
          consumers.add(new ConsumerClient(c.get("id").asText(), c.get("topic").asText(), c.get("config")));
        }
      }
    }
    for (GroupClient gc : groupClients.values()) {
      gc.waitReady(gc.spare);
    }
    long bootMs = System.currentTimeMillis() - bootStart;
    long runUntil = scenario.get("run_until_ms").asLong();
    // t = 0.
    t0 = System.currentTimeMillis();
    timeline.clear();
    partState.clear(); // the first poll records every partition's and broker's state at t = 0
    fenced.clear();
    offsetsState.clear();
    committedSeen.clear();
    event("start", Map.of("boot_ms", bootMs));
    ScheduledExecutorService ex = Executors.newScheduledThreadPool(4);
    ex.scheduleWithFixedDelay(this::poll, 0, POLL_MS, TimeUnit.MILLISECONDS);
    for (ProducerClient pc : producers.values()) {
      if (pc.ratePerSec > 0) {
        long period = 1_000_000L / pc.ratePerSec;
        ex.scheduleAtFixedRate(pc::tick, period, period, TimeUnit.MICROSECONDS);
      }
    }
    for (ConsumerClient c : consumers) {
      c.thread = new Thread(c, "consumer-" + c.id);
      c.thread.setDaemon(true);
      c.thread.start();
    }
    for (GroupClient gc : groupClients.values()) {
      gc.go();
    }
    if (!groupClients.isEmpty()) {
      ex.scheduleWithFixedDelay(this::pollGroups, 0, GROUP_POLL_MS, TimeUnit.MILLISECONDS);
    }
    for (JsonNode st : scenario.path("steps")) {
      long at = st.get("at_ms").asLong();
      long wait = at - now();
      if (wait > 0) {
        Thread.sleep(wait);
      }
      doStep(st);
    }
    long wait = runUntil - now();
    if (wait > 0) {
      Thread.sleep(wait);
    }
    ended = true;
    long endedAt = now();
    ex.shutdownNow();
    // The group consumers stop where the run ends (killed: no last commit), as they stand.
    Map<String, Boolean> runningAtEnd = new TreeMap<>();
    for (GroupClient gc : groupClients.values()) {
      runningAtEnd.put(gc.id, gc.running());
      gc.stop();
    }
    // The state at the end of the run.
    Map<String, Object> report = new LinkedHashMap<>();
    // The version the brokers report (their own start-up log), not the one the driver was
    // built for; the constant only when no broker log names one.
    Map<String, String> versions = brokerVersions();
    report.put("kafka_version", versions.isEmpty() ? KAFKA_VERSION
        : String.join(",", new java.util.TreeSet<>(versions.values())));
    report.put("broker_versions", versions);
    report.put("recorded_at", Instant.now().toString());
    report.put("scenario_file", scenarioFile);
    report.put("scenario", scenario.get("name").asText());
    report.put("end_ms", runUntil);
    report.put("ended_at_ms", endedAt);
    report.put("boot_ms", bootMs);
    report.put("poll_ms", POLL_MS);
    if (!groupClients.isEmpty()) {
      report.put("group_mode", groupMode);
      // Per consumer: subscribe where the scenario says "subscribe": true, else group_mode.
      Map<String, String> modes = new TreeMap<>();
      groupClients.values().forEach(gc -> modes.put(gc.id, gc.mode));
      report.put("group_modes", modes);
    }
    report.put("unsupported_steps", skippedSteps);
    report.put("brokers", brokerStates());
    List<Map<String, Object>> finalParts = finalPartitions();
    report.put("partitions", finalParts);
    report.put("snapshot_done_at_ms", now());
    for (ProducerClient pc : producers.values()) {
      pc.producer.close(Duration.ZERO);
    }
    for (ConsumerClient c : consumers) {
      c.stop = true;
    }
    Map<String, Map<Long, String>> logs = readAll(finalParts);
    long lost = 0;
    List<Map<String, Object>> prods = new ArrayList<>();
    Map<String, Map<String, Long>> retried = parseClientLog();
    Map<String, Map<String, Object>> byId = new LinkedHashMap<>();
    for (ProducerClient pc : producers.values()) {
      long acked = pc.acks_.size();
      long plost = 0;
      for (Ack a : pc.acks_) {
        Map<Long, String> l = logs.get(a.partition());
        if (unreadable(a, l)) {
          continue; // partition unreadable (offline) or the record above its high watermark: see delivery
        }
        if (!a.value().equals(l.get(a.offset()))) {
          plost++;
        }
      }
      lost += plost;
      Map<String, Object> pm = byId.get(pc.id);
      if (pm == null) {
        pm = new LinkedHashMap<>();
        pm.put("id", pc.id);
        pm.put("acks", pc.acks);
        pm.put("sent", 0L);
        pm.put("acked", 0L);
        pm.put("failed", 0L);
        pm.put("acked_records_lost", 0L);
        pm.put("failures", new TreeMap<String, Long>());
        Map<String, Long> r = retried.getOrDefault(pc.id, Map.of());
        pm.put("retries", r.getOrDefault("_retries", 0L));
        Map<String, Long> errs = new TreeMap<>(r);
        errs.remove("_retries");
        errs.remove("_refused");
        pm.put("errors", errs);
        pm.put("refused_connections", r.getOrDefault("_refused", 0L));
        byId.put(pc.id, pm);
        prods.add(pm);
      }
      pm.put("sent", (Long) pm.get("sent") + pc.sent.get());
      pm.put("acked", (Long) pm.get("acked") + acked);
      pm.put("failed", (Long) pm.get("failed") + pc.failed.get());
      pm.put("acked_records_lost", (Long) pm.get("acked_records_lost") + plost);
      @SuppressWarnings("unchecked")
      Map<String, Long> f = (Map<String, Long>) pm.get("failures");
      pc.failures.forEach((k, x) -> f.merge(k, x, Long::sum));
      // As in the simulator's report: every error kind the producer saw, retried or final.
      @SuppressWarnings("unchecked")
      Map<String, Long> errs = (Map<String, Long>) pm.get("errors");
      pc.failures.forEach((k, x) -> errs.merge(k, x, Long::sum));
    }
    report.put("producers", prods);
    List<Map<String, Object>> cons = new ArrayList<>();
    for (ConsumerClient c : consumers) {
      Map<String, Object> cm = new LinkedHashMap<>();
      cm.put("id", c.id);
      cm.put("consumed", c.consumed.get());
      cm.put("positions", new TreeMap<>(c.positions));
      cons.add(cm);
    }
    for (GroupClient gc : groupClients.values()) {
      cons.add(groupReport(gc, runningAtEnd.get(gc.id)));
    }
    report.put("consumers", cons);
    report.put("delivery", delivery(logs));
    report.put("acked_records_lost", lost);
    report.put("availability", Map.of("faults", faults()));
    report.put("timeline", new ArrayList<>(timeline));
    Files.createDirectories(out.toAbsolutePath().getParent());
    JSON.writeValue(out.toFile(), report);
    System.out.println("kafka-differential: wrote " + out);
  }

  static final Pattern LOG_LINE = Pattern.compile("^(\\d+) (\\w+) (.*)$");
  static final Pattern DISCOVERED = Pattern.compile("Discovered group coordinator (\\S+) \\(id:");
  // Classic: "... due to cause: C. isDisconnected: B. Rediscovery will be attempted."; the async
  // consumer's line has no isDisconnected.
  static final Pattern UNKNOWN = Pattern.compile("Group coordinator (\\S+) \\(id: .*\\) is unavailable or invalid due to cause: (.*?)\\.(?: isDisconnected: (\\w+)\\.)? Rediscovery will be attempted");
  // The async (KIP-848) consumer's commits: "Completed [asynchronous ]auto-commit of offsets {orders-0=OffsetAndMetadata{offset=N, ...}, ...}".
  static final Pattern COMMITTED_ASYNC = Pattern.compile("Completed (?:asynchronous )?auto-commit of offsets \\{(.*)\\}");
  static final Pattern OFFSET_AND_METADATA = Pattern.compile("(\\S+?)=OffsetAndMetadata\\{offset=(\\d+)");
  // Group membership errors, classic (AbstractCoordinator) then KIP-848 (the heartbeat request manager).
  // A heartbeat the coordinator answered without error: classic (AbstractCoordinator, DEBUG),
  // KIP-848 (the heartbeat request manager, DEBUG).
  static final Pattern HEARTBEAT_OK = Pattern.compile("Received successful Heartbeat response|ConsumerGroupHeartbeatRequest responded successfully");
  static final Pattern HB_REBALANCING = Pattern.compile("Request joining group due to: group is already rebalancing");
  static final Pattern JOIN_LOADING = Pattern.compile("JoinGroup failed: Coordinator .* is loading the group");
  static final Pattern JOIN_NONFATAL = Pattern.compile("JoinGroup failed due to non-fatal error: (\\w+)");
  static final Pattern JOIN_SYNC_FAILED = Pattern.compile("(JoinGroup|SyncGroup) failed: (.*?)(?: Need to re-join| Marking coordinator unknown)");
  static final Pattern HB_STALE = Pattern.compile("Attempt to heartbeat with (?:stale )?.* failed due to (\\w+)");
  static final Pattern HB_COORD_INVALID = Pattern.compile("Attempt to heartbeat failed since coordinator .* is either not started or not valid");
  static final Pattern CGH_FAILED = Pattern.compile("(\\w+Request) failed (?:because the group coordinator .* is (still loading|not available|incorrect)|for member .* because epoch .* is (fenced)|because member .* is (unknown)|because of the retriable exception\\. Will retry in \\S+ ms: (.*)|due to (\\w+): .*)");
  static final Pattern COMMITTED = Pattern.compile("(?:Committed offset|OffsetCommit completed successfully for offset) (\\d+) (?:for )?partition (\\S+)");
  // The async (KIP-848) consumer names its coordinator as Coordinator(key=..., nodeId=N, host='h', port=p, ...).
  static final Pattern DISCOVERED_ASYNC = Pattern.compile("Discovered group coordinator Coordinator\\(.*host='([^']+)', port=(\\d+)");
  static final Pattern COMMIT_FAILED = Pattern.compile("Offset commit failed on partition (\\S+) at offset (\\d+): (.*)");
  static final Pattern COMMIT_FAILED_GROUP = Pattern.compile("OffsetCommit failed with .*?: (.*)");
  static final Pattern AUTO_COMMIT_FAILED = Pattern.compile("Asynchronous auto-commit of offsets .* failed(?: due to retriable error)?(?:: (.*))?\\.?");
  static final Pattern FIND_FAILED = Pattern.compile("(?:FindCoordinator request failed due to|Group coordinator lookup failed:) (.*)");
  static final Pattern FETCH_OFFSETS_FAILED = Pattern.compile("(?:Offset fetch failed:|Failed to fetch offset for partition \\S+:) (.*)");
  // The client logs positions as FetchPosition{offset=N, ...}.
  static final Pattern TRUNCATION = Pattern.compile("Truncation detected for partition (\\S+) at offset (?:FetchPosition\\{offset=)?(\\d+)(?:.*first offset known to diverge (?:FetchPosition\\{offset=)?(\\d+))?");
  static final Pattern RESET = Pattern.compile("Resetting offset for partition (\\S+) to position FetchPosition\\{offset=(\\d+)");
  static final Pattern SETUP_TIMEOUT = Pattern.compile("Disconnecting from node (-?\\d+) due to socket connection setup timeout");
  static final Pattern REFUSED_NODE = Pattern.compile("Connection to node (-?\\d+) \\(([^)]*)\\) could not be established");
  // OffsetFetch answered UNSTABLE_OFFSET_COMMIT: a commit to these partitions is not replicated yet
  // (KafkaConsumer always asks with require_stable), so the client asks again.
  static final Pattern UNSTABLE = Pattern.compile("still have unstable offsets");
  static final Pattern FETCH_ERROR = Pattern.compile("Error in fetch for partition (\\S+): (.*)");

  /** A Kafka error's name from the text a client log line gives for it (its message, class or name). */
  static String errorKind(String text) {
    for (Errors e : Errors.values()) {
      if (e == Errors.NONE || e == Errors.UNKNOWN_SERVER_ERROR) {
        continue;
      }
      String msg = e.message();
      if (text.contains(e.name()) || (msg != null && msg.length() > 8 && text.contains(msg))
          || (e.exception() != null && text.contains(e.exception().getClass().getSimpleName()))) {
        return e.name();
      }
    }
    if (text.contains("DisconnectException") || text.contains("isDisconnected: true")) {
      return Errors.NETWORK_EXCEPTION.name();
    }
    return text.length() > 80 ? text.substring(0, 80) : text;
  }

  String brokerAt(String address) {
    for (NodeProc n : nodes.values()) {
      if (!n.controller && address.contains(n.address())) {
        return Integer.toString(n.id);
      }
    }
    return address;
  }

  /**
   * A group consumer as its own client saw it: what each incarnation read, from its output, and
   * its coordinator, commits, errors, resets and truncations from its own log (the Kafka client's
   * coordinator and subscription loggers); the group's committed offsets at the end from the
   * coordinator (listConsumerGroupOffsets).
   */
  Map<String, Object> groupReport(GroupClient gc, Boolean running) throws Exception {
    Map<String, Object> cm = new LinkedHashMap<>();
    cm.put("id", gc.id);
    List<Read> reads = new ArrayList<>(gc.reads);
    reads.removeIf(r -> r.atMs() > (Long) scenario.get("run_until_ms").asLong());
    cm.put("consumed", (long) reads.size());
    Map<String, Long> positions = new TreeMap<>();
    int last = gc.incarnations.isEmpty() ? 0 : gc.incarnations.get(gc.incarnations.size() - 1).n;
    Map<String, Integer> valueReads = new HashMap<>();
    Map<String, Integer> offsetReads = new HashMap<>();
    for (Read r : reads) {
      String tp = gc.topic + "-" + r.partition();
      if (r.incarnation() == last) {
        positions.merge(tp, r.offset() + 1, Math::max);
      }
      valueReads.merge(r.value(), 1, Integer::sum);
      offsetReads.merge(tp + "@" + r.offset(), 1, Integer::sum);
    }
    cm.put("positions", positions);
    // Records read more than once (the simulator's read_twice follows records), and offsets read
    // more than once (after an unclean election an offset can hold another record).
    cm.put("read_twice", valueReads.values().stream().filter(x -> x > 1).count());
    cm.put("reread_offsets", offsetReads.values().stream().filter(x -> x > 1).count());
    Map<String, Long> rereadBy = new TreeMap<>();
    offsetReads.forEach((k, x) -> {
      if (x > 1) {
        rereadBy.merge(k.substring(0, k.lastIndexOf('@')), 1L, Long::sum);
      }
    });
    cm.put("reread_offsets_by_partition", rereadBy);
    cm.put("running", running);
    List<Map<String, Object>> incs = new ArrayList<>();
    for (GroupClient.Incarnation inc : new ArrayList<>(gc.incarnations)) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("incarnation", inc.n);
      m.put("go_at_ms", inc.goAtMs);
      m.put("started_at_ms", inc.startedAtMs);
      m.put("crashed_at_ms", inc.crashedAtMs < 0 ? null : inc.crashedAtMs);
      m.put("consumed", reads.stream().filter(r -> r.incarnation() == inc.n).count());
      Map<String, Long> first = new TreeMap<>();
      for (Read r : reads) {
        if (r.incarnation() == inc.n) {
          first.putIfAbsent(gc.topic + "-" + r.partition(), r.offset());
        }
      }
      m.put("first_offsets", first);
      m.put("first_read_at_ms", reads.stream().filter(r -> r.incarnation() == inc.n).mapToLong(Read::atMs).min().stream().boxed().findFirst().orElse(null));
      incs.add(m);
    }
    cm.put("incarnations", incs);
    if (gc.mode.equals("subscribe")) {
      // Each ConsumerRebalanceListener callback: when, which incarnation, which partitions it
      // named and the assignment after it (absent from recordings made before it was recorded).
      List<Map<String, Object>> rb = new ArrayList<>(gc.rebalances);
      rb.removeIf(x -> (Long) x.get("at_ms") > scenario.get("run_until_ms").asLong());
      cm.put("rebalances", rb);
    }
    // The client's own log, every incarnation in order.
    List<List<Object>> coordinator = new ArrayList<>();
    List<Map<String, Object>> coordinatorUnknown = new ArrayList<>();
    Map<String, Long> errors = new TreeMap<>();
    Map<String, Long> errorsByRequest = new TreeMap<>();
    List<Map<String, Object>> commits = new ArrayList<>();
    List<Map<String, Object>> truncations = new ArrayList<>();
    List<Map<String, Object>> resets = new ArrayList<>();
    Map<String, Long> fetchErrors = new TreeMap<>();
    List<Map<String, Object>> connections = new ArrayList<>();
    String lastCoordinator = null;
    Map<Integer, List<Long>> heartbeats = new TreeMap<>();
    for (GroupClient.Incarnation inc : new ArrayList<>(gc.incarnations)) {
      List<String> lines;
      try {
        lines = Files.readAllLines(inc.log);
      } catch (IOException e) {
        continue;
      }
      Map<String, Object> commit = null;
      long commitAt = -1;
      boolean foundByThis = false;
      for (String line : lines) {
        Matcher lm = LOG_LINE.matcher(line);
        if (!lm.matches()) {
          continue;
        }
        long at = Long.parseLong(lm.group(1)) - t0;
        // The layout ends each line with its logger's name in parentheses: not the message's.
        String msg = lm.group(3).replaceFirst(" \\((?:org|kafka)\\.[\\w.$]+\\)$", "");
        Matcher m = DISCOVERED.matcher(msg);
        Matcher da = DISCOVERED_ASYNC.matcher(msg);
        boolean async = da.find();
        if (async || m.find()) {
          String b = brokerAt(async ? da.group(1) + ":" + da.group(2) : m.group(1));
          // A change, or the first the incarnation found (a new process knows no coordinator).
          if (!b.equals(lastCoordinator) || !foundByThis) {
            coordinator.add(List.of(at, b.matches("\\d+") ? Integer.parseInt(b) : b, inc.n));
          }
          foundByThis = true;
          lastCoordinator = b;
        } else if ((m = UNKNOWN.matcher(msg)).find()) {
          Map<String, Object> u = new LinkedHashMap<>();
          u.put("at_ms", at);
          u.put("coordinator", brokerAt(m.group(1)));
          u.put("cause", m.group(2));
          u.put("disconnected", m.group(3) == null ? null : Boolean.parseBoolean(m.group(3)));
          coordinatorUnknown.add(u);
          lastCoordinator = null;
        } else if ((m = COMMITTED.matcher(msg)).find()) {
          // One OffsetCommit response logs a line per partition, within a few milliseconds.
          if (commit == null || at - commitAt > 50) {
            commit = new LinkedHashMap<>();
            commit.put("at_ms", at);
            commit.put("offsets", new TreeMap<String, Long>());
            commits.add(commit);
            commitAt = at;
          }
          @SuppressWarnings("unchecked")
          Map<String, Long> o = (Map<String, Long>) commit.get("offsets");
          o.put(m.group(2), Long.parseLong(m.group(1)));
        } else if ((m = COMMITTED_ASYNC.matcher(msg)).find()) {
          Matcher om = OFFSET_AND_METADATA.matcher(m.group(1));
          Map<String, Long> o = new TreeMap<>();
          while (om.find()) {
            o.put(om.group(1).replaceFirst("^[, ]+", ""), Long.parseLong(om.group(2)));
          }
          // The classic consumer logs the same commit per partition too ("Committed offset"):
          // one commit, within the same 50 ms.
          if (!o.isEmpty()) {
            if (commit == null || at - commitAt > 50) {
              commit = new LinkedHashMap<>();
              commit.put("at_ms", at);
              commit.put("offsets", new TreeMap<String, Long>());
              commits.add(commit);
              commitAt = at;
            }
            @SuppressWarnings("unchecked")
            Map<String, Long> co = (Map<String, Long>) commit.get("offsets");
            co.putAll(o);
          }
        } else if (HEARTBEAT_OK.matcher(msg).find()) {
          heartbeats.computeIfAbsent(inc.n, k -> new ArrayList<>()).add(at);
        } else if (HB_REBALANCING.matcher(msg).find()) {
          errors.merge(Errors.REBALANCE_IN_PROGRESS.name(), 1L, Long::sum);
          errorsByRequest.merge("Heartbeat " + Errors.REBALANCE_IN_PROGRESS.name(), 1L, Long::sum);
        } else if (JOIN_LOADING.matcher(msg).find()) {
          errors.merge(Errors.COORDINATOR_LOAD_IN_PROGRESS.name(), 1L, Long::sum);
          errorsByRequest.merge("JoinGroup " + Errors.COORDINATOR_LOAD_IN_PROGRESS.name(), 1L, Long::sum);
        } else if ((m = JOIN_NONFATAL.matcher(msg)).find()) {
          // MEMBER_ID_REQUIRED is the first JoinGroup's normal answer (KIP-394): the simulator
          // answers it too but does not narrate it as an error, so it is counted by request only.
          if (!m.group(1).equals(Errors.MEMBER_ID_REQUIRED.name())) {
            errors.merge(m.group(1), 1L, Long::sum);
          }
          errorsByRequest.merge("JoinGroup " + m.group(1), 1L, Long::sum);
        } else if ((m = JOIN_SYNC_FAILED.matcher(msg)).find()) {
          String k = m.group(2).contains("began another rebalance") ? Errors.REBALANCE_IN_PROGRESS.name() : errorKind(m.group(2));
          errors.merge(k, 1L, Long::sum);
          errorsByRequest.merge(m.group(1) + " " + k, 1L, Long::sum);
        } else if ((m = HB_STALE.matcher(msg)).find()) {
          String k = errorKind(m.group(1));
          errors.merge(k, 1L, Long::sum);
          errorsByRequest.merge("Heartbeat " + k, 1L, Long::sum);
        } else if (HB_COORD_INVALID.matcher(msg).find()) {
          errors.merge(Errors.NOT_COORDINATOR.name(), 1L, Long::sum);
          errorsByRequest.merge("Heartbeat NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE", 1L, Long::sum);
        } else if ((m = CGH_FAILED.matcher(msg)).find()) {
          String k;
          if (m.group(2) != null) {
            k = switch (m.group(2)) {
              case "still loading" -> Errors.COORDINATOR_LOAD_IN_PROGRESS.name();
              case "not available" -> Errors.COORDINATOR_NOT_AVAILABLE.name();
              default -> Errors.NOT_COORDINATOR.name();
            };
          } else if (m.group(3) != null) {
            k = Errors.FENCED_MEMBER_EPOCH.name();
          } else if (m.group(4) != null) {
            k = Errors.UNKNOWN_MEMBER_ID.name();
          } else if (m.group(5) != null && m.group(5).trim().equals("null")) {
            // A retriable exception without a message: the heartbeat's connection was lost
            // (NetworkClientDelegate fails it with a DisconnectException, which has none).
            k = Errors.NETWORK_EXCEPTION.name();
          } else {
            k = errorKind(m.group(5) != null ? m.group(5) : m.group(6));
          }
          String req = m.group(1).replaceFirst("Request$", "");
          errors.merge(k, 1L, Long::sum);
          errorsByRequest.merge(req + " " + k, 1L, Long::sum);
        } else if ((m = COMMIT_FAILED.matcher(msg)).find()) {
          String k = errorKind(m.group(3));
          errors.merge(k, 1L, Long::sum);
          errorsByRequest.merge("OffsetCommit " + k, 1L, Long::sum);
        } else if ((m = COMMIT_FAILED_GROUP.matcher(msg)).find() && !msg.contains("fenced")) {
          String k = errorKind(m.group(1));
          errors.merge(k, 1L, Long::sum);
          errorsByRequest.merge("OffsetCommit " + k, 1L, Long::sum);
        } else if ((m = AUTO_COMMIT_FAILED.matcher(msg)).find()) {
          errorsByRequest.merge("auto-commit failed", 1L, Long::sum);
        } else if ((m = FIND_FAILED.matcher(msg)).find()) {
          String k = errorKind(m.group(1));
          errors.merge(k, 1L, Long::sum);
          errorsByRequest.merge("FindCoordinator " + k, 1L, Long::sum);
        } else if ((m = FETCH_OFFSETS_FAILED.matcher(msg)).find()) {
          String k = errorKind(m.group(1));
          errors.merge(k, 1L, Long::sum);
          errorsByRequest.merge("OffsetFetch " + k, 1L, Long::sum);
        } else if ((m = TRUNCATION.matcher(msg)).find()) {
          Map<String, Object> t = new LinkedHashMap<>();
          t.put("at_ms", at);
          t.put("partition", m.group(1));
          t.put("position", Long.parseLong(m.group(2)));
          t.put("divergent_offset", m.group(3) == null ? null : Long.parseLong(m.group(3)));
          truncations.add(t);
        } else if ((m = RESET.matcher(msg)).find()) {
          Map<String, Object> r = new LinkedHashMap<>();
          r.put("at_ms", at);
          r.put("partition", m.group(1));
          r.put("offset", Long.parseLong(m.group(2)));
          resets.add(r);
        } else if ((m = SETUP_TIMEOUT.matcher(msg)).find() || (m = REFUSED_NODE.matcher(msg)).find()) {
          Map<String, Object> ce = new LinkedHashMap<>();
          ce.put("at_ms", at);
          ce.put("incarnation", inc.n);
          ce.put("node", m.group(1));
          ce.put("broker", m.groupCount() > 1 ? brokerAt(m.group(2)) : null);
          ce.put("kind", msg.contains("setup timeout") ? "setup_timeout" : "refused");
          connections.add(ce);
        } else if ((m = UNSTABLE.matcher(msg)).find()) {
          errors.merge(Errors.UNSTABLE_OFFSET_COMMIT.name(), 1L, Long::sum);
          errorsByRequest.merge("OffsetFetch " + Errors.UNSTABLE_OFFSET_COMMIT.name(), 1L, Long::sum);
        } else if ((m = FETCH_ERROR.matcher(msg)).find()) {
          fetchErrors.merge(errorKind(m.group(2)), 1L, Long::sum);
        }
      }
    }
    for (Map<String, Object> m : incs) {
      // The heartbeats the coordinator answered (a member's session runs from the last one).
      List<Long> hb = heartbeats.getOrDefault((Integer) m.get("incarnation"), List.of());
      m.put("heartbeats_answered", (long) hb.size());
      m.put("last_heartbeat_answered_at_ms", hb.isEmpty() ? null : hb.get(hb.size() - 1));
    }
    cm.put("truncations_detected", (long) truncations.size());
    cm.put("truncations", truncations);
    cm.put("offset_resets", resets);
    cm.put("raised", new ArrayList<>(gc.raised));
    Map<String, Long> raisedKinds = new TreeMap<>();
    gc.raised.forEach(r -> raisedKinds.merge((String) r.get("exception"), 1L, Long::sum));
    cm.put("raised_kinds", raisedKinds);
    cm.put("fetch_errors", fetchErrors);
    cm.put("connection_failures", connections);
    Map<String, Object> g = new LinkedHashMap<>();
    g.put("group_id", gc.groupId);
    g.put("offsets_partition", OFFSETS_TOPIC + "-" + offsetsPartition.get(gc.groupId));
    g.put("coordinator", coordinator.isEmpty() || lastCoordinator == null ? null : coordinator.get(coordinator.size() - 1).get(1));
    g.put("coordinator_over_time", coordinator);
    g.put("coordinator_unknown", coordinatorUnknown);
    Map<String, List<Long>> committed = null;
    for (int i = 0; i < 20 && committed == null; i++) {
      try {
        committed = committed(gc.groupId, 2000);
      } catch (Exception e) {
        Thread.sleep(300);
      }
    }
    List<List<Object>> committedList = new ArrayList<>();
    if (committed != null) {
      committed.forEach((tp, oe) -> committedList.add(List.of(tp, oe.get(0), oe.get(1) < 0 ? "null" : oe.get(1))));
    }
    g.put("committed", committed == null ? null : committedList);
    g.put("commits", (long) commits.size());
    g.put("commits_over_time", commits);
    g.put("step_commits", new ArrayList<>(gc.stepCommits));
    g.put("errors", errors);
    g.put("errors_by_request", errorsByRequest);
    cm.put("group", g);
    return cm;
  }

  /**
   * The fate of every record a producer sent, as a real client can see it: acknowledged or
   * failed (the send callbacks), and in the partition or not (the final read of each partition
   * from its start to its high watermark), read by a consumer once, twice or never. The
   * simulator's report has the same counts (its delivery); it sees every replica's log, the
   * driver only what a consumer can read.
   */
  List<Map<String, Object>> delivery(Map<String, Map<Long, String>> logs) {
    Map<String, Integer> inLogs = new HashMap<>();
    Set<String> unreadable = new TreeSet<>();
    for (String topic : allTopics) {
      for (int i = 0; i < assignments.get(topic).size(); i++) {
        Map<Long, String> l = logs.get(topic + "-" + i);
        if (l == null) {
          unreadable.add(topic + "-" + i);
          continue;
        }
        l.values().forEach(v -> inLogs.merge(v, 1, Integer::sum));
      }
    }
    Map<String, Integer> readCount = new HashMap<>();
    Set<String> readTopics = new TreeSet<>();
    Map<String, Integer> readTwiceAny = new HashMap<>();
    for (ConsumerClient c : consumers) {
      readTopics.add(c.topic);
      Map<String, Integer> mine = new HashMap<>();
      c.values.forEach(v -> mine.merge(v, 1, Integer::sum));
      mine.forEach((v, x) -> {
        readCount.merge(v, x, Integer::sum);
        if (x > 1) {
          readTwiceAny.put(v, 1);
        }
      });
    }
    long runUntil = scenario.get("run_until_ms").asLong();
    // Records read more than once within one group, by any of its members and processes (a
    // hand-over included): the simulator's delivery.reread.
    Map<String, Map<String, Integer>> byGroup = new HashMap<>();
    for (GroupClient gc : groupClients.values()) {
      Map<String, Integer> g = byGroup.computeIfAbsent(gc.groupId, k -> new HashMap<>());
      gc.reads.forEach(r -> {
        if (r.atMs() <= runUntil) {
          g.merge(r.value(), 1, Integer::sum);
        }
      });
    }
    Set<String> rereadInGroup = new HashSet<>();
    byGroup.values().forEach(g -> g.forEach((v, x) -> {
      if (x > 1) {
        rereadInGroup.add(v);
      }
    }));
    for (GroupClient gc : groupClients.values()) {
      readTopics.add(gc.topic);
      Map<String, Integer> mine = new HashMap<>();
      gc.reads.forEach(r -> {
        if (r.atMs() <= runUntil) {
          mine.merge(r.value(), 1, Integer::sum);
        }
      });
      mine.forEach((v, x) -> {
        readCount.merge(v, x, Integer::sum);
        if (x > 1) {
          readTwiceAny.put(v, 1);
        }
      });
    }
    List<Map<String, Object>> out = new ArrayList<>();
    Map<String, Map<String, Object>> byId = new LinkedHashMap<>();
    for (ProducerClient pc : producers.values()) {
      Map<String, Object> d = byId.computeIfAbsent(pc.id, k -> {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("producer", pc.id);
        m.put("topic", pc.topic);
        for (String f : List.of("sent", "acked_kept", "acked_lost", "acked_unreadable", "failed_not_written", "failed_but_written",
            "pending", "written_twice", "consumed", "consumed_twice", "never_consumed", "reread")) {
          m.put(f, 0L);
        }
        out.add(m);
        return m;
      });
      java.util.function.BiConsumer<String, Long> add = (f, x) -> d.put(f, (Long) d.get(f) + x);
      add.accept("sent", pc.sent.get());
      List<String> mine = new ArrayList<>();
      for (Ack a : pc.acks_) {
        mine.add(a.value());
        Map<Long, String> l = logs.get(a.partition());
        if (unreadable(a, l)) {
          add.accept("acked_unreadable", 1L);
        } else if (a.value().equals(l.get(a.offset()))) {
          add.accept("acked_kept", 1L);
        } else {
          add.accept("acked_lost", 1L);
        }
      }
      for (String v : pc.failedValues) {
        mine.add(v);
        add.accept(inLogs.containsKey(v) ? "failed_but_written" : "failed_not_written", 1L);
      }
      long answered = pc.acks_.size() + pc.failedValues.size();
      add.accept("pending", Math.max(0, pc.sent.get() - answered));
      boolean read = readTopics.contains(pc.topic);
      for (String v : mine) {
        if (inLogs.getOrDefault(v, 0) > 1) {
          add.accept("written_twice", 1L);
        }
        if (readCount.containsKey(v)) {
          add.accept("consumed", 1L);
        } else if (read && inLogs.containsKey(v)) {
          add.accept("never_consumed", 1L);
        }
        if (readTwiceAny.containsKey(v)) {
          add.accept("consumed_twice", 1L);
        }
        if (rereadInGroup.contains(v)) {
          add.accept("reread", 1L);
        }
      }
      d.put("unreadable_partitions", new ArrayList<>(unreadable));
    }
    return out;
  }

  List<Map<String, Object>> brokerStates() {
    List<Map<String, Object>> bs = new ArrayList<>();
    for (int b = 1; b <= brokers; b++) {
      NodeProc n = nodes.get(b);
      String st;
      if (!n.proc.isAlive()) {
        st = lastAction.getOrDefault(b, "crashed");
      } else if (isolated.contains(b)) {
        st = "isolated";
      } else if (Boolean.TRUE.equals(fenced.get(b))) {
        st = "fenced";
      } else {
        st = "running";
      }
      bs.add(new LinkedHashMap<>(Map.of("id", b, "state", st)));
    }
    return bs;
  }

  List<Map<String, Object>> finalPartitions() throws Exception {
    List<Map<String, Object>> ps = new ArrayList<>();
    Map<String, TopicDescription> d = null;
    for (int i = 0; i < 20 && d == null; i++) {
      try {
        d = brokerAdmin.describeTopics(allTopics, new DescribeTopicsOptions().timeoutMs(2000)).allTopicNames().get(3, TimeUnit.SECONDS);
      } catch (Exception e) {
        Thread.sleep(200);
      }
    }
    if (d == null) {
      throw new IllegalStateException("describeTopics failed at the end of the run");
    }
    List<String> described = new ArrayList<>(allTopics);
    if (!offsetsPartition.isEmpty()) {
      for (int i = 0; i < 20; i++) {
        try {
          d = new HashMap<>(d);
          d.putAll(brokerAdmin.describeTopics(List.of(OFFSETS_TOPIC), new DescribeTopicsOptions().timeoutMs(2000)).allTopicNames().get(3, TimeUnit.SECONDS));
          described.add(OFFSETS_TOPIC);
          break;
        } catch (Exception e) {
          Thread.sleep(200);
        }
      }
    }
    for (String topic : described) {
      TopicDescription td = d.get(topic);
      for (TopicPartitionInfo pi : td.partitions()) {
        if (topic.equals(OFFSETS_TOPIC) && !offsetsPartition.containsValue(pi.partition())) {
          continue; // only the groups' own offsets partitions
        }
        Map<String, Object> m = new LinkedHashMap<>();
        Integer leader = pi.leader() == null || pi.leader().id() < 0 ? null : pi.leader().id();
        m.put("topic", topic);
        m.put("partition", pi.partition());
        m.put("leader", leader);
        Integer epoch = null;
        Long hw = null;
        String hwError = null;
        if (leader != null) {
          TopicPartition tp = new TopicPartition(topic, pi.partition());
          // Asked of the leader alone (issue 60: tour 16 recorded null epoch and HW): the
          // poller's Admin bootstraps from every broker, dead and isolated ones included, and
          // gives each call 1.5 s (default.api.timeout.ms), which its metadata refresh and
          // reconnects to dead nodes could use up every time. An Admin bootstrapped from the
          // leader's address, with a 10 s budget per call, answers from the leader itself.
          for (int i = 0; i < 6 && hw == null; i++) {
            try {
              ListOffsetsResult.ListOffsetsResultInfo info = leaderAdmin(leader)
                  .listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions().timeoutMs(10_000))
                  .partitionResult(tp).get(12, TimeUnit.SECONDS);
              hw = info.offset();
              epoch = info.leaderEpoch().orElse(null);
            } catch (Exception e) {
              hwError = e.toString();
              Thread.sleep(500);
            }
          }
        }
        if (leader != null && hw == null) {
          // listOffsets failed. Seen on tour 16 (2026-12-06, twice, with a leader-only Admin and
          // with a consumer's endOffsets too): the new leader's high watermark (298) was below
          // the start of its leader epoch (299; min.insync.replicas=2 with an ISR of one keeps
          // it there), and Partition.fetchOffsetForTimestamp answers every client ListOffsets
          // with the retriable OFFSET_NOT_AVAILABLE until it is not, so no client call can read
          // the end. The leader's own files say it: the high watermark it checkpointed
          // (replication-offset-checkpoint, every replica.high.watermark.checkpoint.interval.ms)
          // and the epoch it started (the last entry of the partition's leader-epoch-checkpoint).
          Path data = nodes.get(leader).dir.resolve("data");
          try {
            for (String line : Files.readAllLines(data.resolve("replication-offset-checkpoint"))) {
              String[] f = line.trim().split("\\s+");
              if (f.length == 3 && f[0].equals(topic) && f[1].equals(Integer.toString(pi.partition()))) {
                hw = Long.parseLong(f[2]);
                m.put("high_watermark_from", "the leader's replication-offset-checkpoint");
              }
            }
            List<String> epochs = Files.readAllLines(data.resolve(topic + "-" + pi.partition()).resolve("leader-epoch-checkpoint"));
            String last = epochs.get(epochs.size() - 1).trim();
            if (epochs.size() > 2 && !last.isEmpty()) {
              epoch = Integer.parseInt(last.split("\\s+")[0]);
              m.put("leader_epoch_from", "the leader's leader-epoch-checkpoint");
            }
          } catch (Exception e) {
            hwError = hwError + "; checkpoint files: " + e;
          }
        }
        m.put("leader_epoch", epoch);
        if (epoch == null && hwError != null) {
          m.put("high_watermark_error", hwError);
        }
        m.put("replicas", pi.replicas().stream().map(Node::id).collect(Collectors.toList()));
        m.put("isr", ids(pi.isr()));
        m.put("elr", ids(pi.elr()));
        m.put("last_known_elr", ids(pi.lastKnownElr()));
        m.put("high_watermark", hw);
        ps.add(m);
      }
    }
    return ps;
  }

  /** One Admin per leader, bootstrapped from that broker alone (the end-of-run listOffsets). */
  final Map<Integer, Admin> leaderAdmins = new HashMap<>();

  Admin leaderAdmin(int leader) {
    return leaderAdmins.computeIfAbsent(leader, b -> {
      Properties p = new Properties();
      p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, nodes.get(b).address());
      p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
      p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
      return Admin.create(p);
    });
  }

  /**
   * The version each broker reports: the "Kafka version: X" line AppInfoParser logs as the
   * broker starts (the first in its server.log), by broker id; absent when the log lacks it.
   */
  Map<String, String> brokerVersions() {
    Map<String, String> out = new TreeMap<>();
    java.util.regex.Pattern v = java.util.regex.Pattern.compile("Kafka version: (\\S+)");
    for (int b = 1; b <= brokers; b++) {
      String id = Integer.toString(b);
      try (java.util.stream.Stream<String> lines = Files.lines(nodes.get(b).log)) {
        lines.map(v::matcher).filter(java.util.regex.Matcher::find).findFirst()
            .ifPresent(m -> out.put(id, m.group(1)));
      } catch (Exception e) {
        // no log: no version
      }
    }
    return out;
  }

  /**
   * Every partition read from the start to its end (the high watermark), by a fresh consumer.
   * Where ListOffsets cannot answer (a leader whose high watermark is below its epoch's start
   * answers OFFSET_NOT_AVAILABLE; see finalPartitions), the read seeks to offset 0 itself and
   * reads to the high watermark the leader checkpointed: a fetch below the high watermark is
   * served, and a seek to an offset needs no ListOffsets.
   */
  /**
   * Where readAll stopped in each partition whose high watermark is held: one it had to take
   * from the leader's checkpoint because ListOffsets could not answer (a leader held below
   * min.insync.replicas keeps its high watermark below its epoch's start: tour 16). An
   * acknowledged record at or above it may still be in the leader's log, uncommitted, and no
   * client can read it, so it is counted as unreadable, never as lost. Elsewhere the cluster is
   * quiet at the end and the high watermark is the log's end: an acknowledged record at or above
   * it is gone from every replica, and counted lost (tour 7: the record the old leader alone
   * had, 2026-12-06, counted unreadable until this was narrowed).
   */
  final Map<String, Long> readEnd = new HashMap<>();

  /** An acknowledged record the final read could not check: its partition or its offset was out of reach. */
  boolean unreadable(Ack a, Map<Long, String> l) {
    return l == null || (!l.containsKey(a.offset()) && a.offset() >= readEnd.getOrDefault(a.partition(), Long.MAX_VALUE));
  }

  Map<String, Map<Long, String>> readAll(List<Map<String, Object>> finalParts) {
    Map<String, Long> checkpointed = new HashMap<>();
    for (Map<String, Object> m : finalParts) {
      if (m.get("high_watermark_from") != null && m.get("high_watermark") instanceof Long hw) {
        checkpointed.put(m.get("topic") + "-" + m.get("partition"), hw);
      }
    }
    Map<String, Map<Long, String>> logs = new TreeMap<>();
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
      for (String topic : allTopics) {
        for (int i = 0; i < assignments.get(topic).size(); i++) {
          TopicPartition tp = new TopicPartition(topic, i);
          PartState s = partState.get(topic + "-" + i);
          if (s == null || s.leader() == null) {
            continue;
          }
          try {
            c.assign(List.of(tp));
            Long known = checkpointed.get(topic + "-" + i);
            long endOff;
            if (known != null) {
              endOff = known;
              c.seek(tp, 0L);
              event("read_from_checkpointed_high_watermark", Map.of("partition", topic + "-" + i, "high_watermark", known));
            } else {
              endOff = c.endOffsets(List.of(tp), Duration.ofSeconds(5)).get(tp);
              c.seekToBeginning(List.of(tp));
            }
            Map<Long, String> l = new HashMap<>();
            long deadline = System.currentTimeMillis() + 20_000;
            while (c.position(tp) < endOff && System.currentTimeMillis() < deadline) {
              for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                l.put(r.offset(), r.value());
              }
            }
            if (c.position(tp) >= endOff) {
              logs.put(topic + "-" + i, l);
              if (known != null) {
                readEnd.put(topic + "-" + i, endOff);
              }
            }
          } catch (RuntimeException e) {
            event("read_error", Map.of("partition", topic + "-" + i, "error", e.toString()));
          }
        }
      }
    }
    return logs;
  }

  static final Pattern RETRY = Pattern.compile("\\[Producer clientId=([^\\]]+)\\] Got error produce response.*retrying.*Error: ([A-Z_]+)");
  static final Pattern REFUSED = Pattern.compile("\\[Producer clientId=([^\\]]+)\\] Connection to node -?\\d+ .*could not be established");

  /** Retried produce errors and refused connections per producer, from the clients' own WARN log. */
  Map<String, Map<String, Long>> parseClientLog() {
    Map<String, Map<String, Long>> r = new TreeMap<>();
    Path log = work.resolve("driver-clients.log");
    try {
      for (String line : Files.readAllLines(log)) {
        Matcher m = RETRY.matcher(line);
        if (m.find()) {
          Map<String, Long> e = r.computeIfAbsent(m.group(1), k -> new TreeMap<>());
          e.merge(m.group(2), 1L, Long::sum);
          e.merge("_retries", 1L, Long::sum);
        }
        Matcher f = REFUSED.matcher(line);
        if (f.find()) {
          r.computeIfAbsent(f.group(1), k -> new TreeMap<>()).merge("_refused", 1L, Long::sum);
        }
      }
    } catch (IOException e) {
      System.err.println("kafka-differential: no client log: " + e);
    }
    return r;
  }

  /**
   * Per fault (crash, shutdown, isolate; several at the same millisecond count as one, as in
   * the simulator): when the controller acted on its brokers (fenced them, or for a controlled
   * shutdown moved their leaders), when the partitions they led had new leaders, and when
   * every one of those took an acknowledged write again.
   */
  List<Map<String, Object>> faults() {
    List<Map<String, Object>> fs = new ArrayList<>();
    List<Map<String, Object>> tl = new ArrayList<>(timeline);
    Map<Long, List<Integer>> brokersAt = new TreeMap<>();
    Map<Long, List<String>> actionsAt = new TreeMap<>();
    for (JsonNode st : scenario.path("steps")) {
      String action = null;
      for (Iterator<String> it = st.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        if (!k.equals("at_ms")) {
          action = k;
        }
      }
      if (!Set.of("crash", "shutdown", "isolate", "power_loss").contains(action)) {
        continue;
      }
      long at = st.get("at_ms").asLong();
      brokersAt.computeIfAbsent(at, k -> new ArrayList<>()).add(st.get(action).asInt());
      actionsAt.computeIfAbsent(at, k -> new ArrayList<>()).add(action);
    }
    for (Map.Entry<Long, List<Integer>> fe : brokersAt.entrySet()) {
      long at = fe.getKey();
      List<Integer> bs = fe.getValue();
      List<String> actions = actionsAt.get(at);
      // Partitions the brokers led just before the fault.
      Map<String, Integer> leaderBefore = new TreeMap<>();
      for (Map<String, Object> e : tl) {
        if ((Long) e.get("at_ms") > at) {
          break;
        }
        if ("partition".equals(e.get("event"))) {
          leaderBefore.put((String) e.get("partition"), (Integer) e.get("leader"));
        }
      }
      // The producers' partitions only: a group's __consumer_offsets partition takes no produce,
      // so it has no "writable again" (its leader and coordinator are compared on their own).
      List<String> parts = leaderBefore.entrySet().stream()
          .filter(x -> x.getValue() != null && bs.contains(x.getValue()) && !x.getKey().startsWith(OFFSETS_TOPIC + "-"))
          .map(Map.Entry::getKey).collect(Collectors.toList());
      Map<Integer, Long> actedOn = new TreeMap<>();
      Map<String, Long> electedAt = new TreeMap<>();
      Map<String, Integer> newLeader = new TreeMap<>();
      Set<Integer> restarted = new TreeSet<>();
      for (Map<String, Object> e : tl) {
        long t = (Long) e.get("at_ms");
        if (t < at) {
          continue;
        }
        if ("process_started".equals(e.get("event"))) {
          restarted.add((Integer) e.get("node"));
        }
        if ("fenced".equals(e.get("event")) && bs.contains(e.get("broker"))) {
          actedOn.putIfAbsent((Integer) e.get("broker"), t);
        }
        if ("partition".equals(e.get("event"))) {
          String p = (String) e.get("partition");
          Integer l = (Integer) e.get("leader");
          Integer before = leaderBefore.get(p);
          // A controlled shutdown's detection ends when the controller moves its first leader.
          if (before != null && bs.contains(before) && !Objects.equals(l, before)
              && actions.get(bs.indexOf(before)).equals("shutdown")) {
            actedOn.putIfAbsent(before, t);
          }
          // A new leader: another broker, or one of the failed brokers back after its restart.
          if (parts.contains(p) && !electedAt.containsKey(p) && l != null && (!bs.contains(l) || restarted.contains(l))) {
            electedAt.put(p, t);
            newLeader.put(p, l);
          }
        }
      }
      Long fencedAt = actedOn.size() == bs.size() ? Collections.max(actedOn.values()) : null;
      Long elected = electedAt.size() == parts.size() && !parts.isEmpty() ? Collections.max(electedAt.values()) : null;
      Long writable = null;
      if (elected != null) {
        long w = 0;
        boolean all = true;
        for (String p : parts) {
          long first = Long.MAX_VALUE;
          for (ProducerClient pc : producers.values()) {
            for (Ack a : pc.acks_) {
              if (a.partition().equals(p) && a.atMs() >= electedAt.get(p) && a.atMs() < first) {
                first = a.atMs();
              }
            }
          }
          if (first == Long.MAX_VALUE) {
            all = false;
          } else {
            w = Math.max(w, first);
          }
        }
        writable = all ? w : null;
      }
      Map<String, Object> f = new LinkedHashMap<>();
      f.put("at_ms", at);
      f.put("action", actions.get(0));
      f.put("actions", actions);
      f.put("brokers", bs);
      f.put("partitions", parts);
      f.put("fenced_at_ms", fencedAt);
      f.put("elected_at_ms", elected);
      f.put("writable_at_ms", writable);
      f.put("rto_ms", writable == null ? null : writable - at);
      f.put("new_leaders", newLeader);
      fs.add(f);
    }
    return fs;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      a.put(args[i], args[i + 1]);
    }
    Path scenarioPath = Path.of(a.get("--scenario"));
    Driver d = new Driver(scenarioPath, a.getOrDefault("--scenario-name", scenarioPath.getFileName().toString()),
        a.containsKey("--assignment") ? Path.of(a.get("--assignment")) : null, Path.of(a.get("--out")), Path.of(a.get("--work")),
        Files.readString(Path.of(a.get("--classpath"))).trim(), Path.of(a.get("--pidfile")));
    d.groupMode = a.getOrDefault("--group-mode", "assign");
    if (!Set.of("assign", "subscribe").contains(d.groupMode)) {
      throw new IllegalArgumentException("--group-mode: assign or subscribe, not " + d.groupMode);
    }
    long limitS = Long.parseLong(a.getOrDefault("--time-limit-s", "600"));
    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep(limitS * 1000);
        System.err.println("kafka-differential: time limit of " + limitS + " s reached; stopping the cluster");
        d.stopAll();
        Runtime.getRuntime().halt(3);
      } catch (InterruptedException e) {
        // done in time
      }
    });
    watchdog.setDaemon(true);
    watchdog.start();
    int rc = 0;
    try {
      d.run();
    } catch (Exception e) {
      e.printStackTrace();
      rc = 1;
    } finally {
      d.stopAll();
      watchdog.interrupt();
    }
    System.exit(rc);
  }
}

package failoverlab.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
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
    int next = 0;

    ProducerClient(String id, String topic, String acks, int ratePerSec, JsonNode config) {
      this.id = id;
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
      String value = id + "-" + s;
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
                failures.merge(errorName(e), 1L, Long::sum);
              }
            });
      } catch (RuntimeException e) {
        failed.incrementAndGet();
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
            positions.put(r.topic() + "-" + r.partition(), r.offset() + 1);
          }
        }
      } catch (RuntimeException e) {
        event("consumer_error", Map.of("consumer", id, "error", e.toString()));
      }
    }
  }

  Driver(Path scenarioPath, String scenarioFile, Path assignmentFile, Path out, Path work, String classpath, Path pidFile) throws IOException {
    this.scenario = JSON.readTree(scenarioPath.toFile());
    this.scenarioFile = scenarioFile;
    JsonNode given = assignmentFile != null && Files.exists(assignmentFile) ? JSON.readTree(assignmentFile.toFile()) : null;
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
    p.put("group.initial.rebalance.delay.ms", "0");
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
    timeline.clear();
    // Clients.
    for (JsonNode c : scenario.path("clients")) {
      if (c.get("type").asText().equals("producer")) {
        String id = c.get("id").asText();
        producers.put(id, new ProducerClient(id, c.get("topic").asText(), acksText(c.get("acks")), c.path("records_per_sec").asInt(0), c.get("config")));
      }
    }
    for (JsonNode st : scenario.path("steps")) {
      JsonNode p = st.get("produce");
      if (p != null && !p.has("producer")) {
        String key = "default:" + acksText(p.get("acks"));
        if (!producers.containsKey(key)) {
          producers.put(key, new ProducerClient("default", p.get("topic").asText(), acksText(p.get("acks")), 0, null));
        }
      }
    }
    for (ProducerClient pc : producers.values()) {
      pc.producer.partitionsFor(pc.topic); // warm metadata before t=0, as the simulator's clients start with it
    }
    for (JsonNode c : scenario.path("clients")) {
      if (c.get("type").asText().equals("consumer")) {
        consumers.add(new ConsumerClient(c.get("id").asText(), c.get("topic").asText(), c.get("config")));
      }
    }
    long bootMs = System.currentTimeMillis() - bootStart;
    long runUntil = scenario.get("run_until_ms").asLong();
    // t = 0.
    t0 = System.currentTimeMillis();
    timeline.clear();
    partState.clear(); // the first poll records every partition's and broker's state at t = 0
    fenced.clear();
    event("start", Map.of("boot_ms", bootMs));
    ScheduledExecutorService ex = Executors.newScheduledThreadPool(3);
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
    // The state at the end of the run.
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("kafka_version", KAFKA_VERSION);
    report.put("recorded_at", Instant.now().toString());
    report.put("scenario_file", scenarioFile);
    report.put("scenario", scenario.get("name").asText());
    report.put("end_ms", runUntil);
    report.put("ended_at_ms", endedAt);
    report.put("boot_ms", bootMs);
    report.put("poll_ms", POLL_MS);
    report.put("unsupported_steps", skippedSteps);
    report.put("brokers", brokerStates());
    report.put("partitions", finalPartitions());
    report.put("snapshot_done_at_ms", now());
    for (ProducerClient pc : producers.values()) {
      pc.producer.close(Duration.ZERO);
    }
    for (ConsumerClient c : consumers) {
      c.stop = true;
    }
    Map<String, Map<Long, String>> logs = readAll();
    long lost = 0;
    List<Map<String, Object>> prods = new ArrayList<>();
    Map<String, Map<String, Long>> retried = parseClientLog();
    Map<String, Map<String, Object>> byId = new LinkedHashMap<>();
    for (ProducerClient pc : producers.values()) {
      long acked = pc.acks_.size();
      long plost = 0;
      for (Ack a : pc.acks_) {
        Map<Long, String> l = logs.get(a.partition());
        if (l == null) {
          continue; // partition unreadable (offline): reported in partitions[].readable
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
    report.put("consumers", cons);
    report.put("acked_records_lost", lost);
    report.put("availability", Map.of("faults", faults()));
    report.put("timeline", new ArrayList<>(timeline));
    Files.createDirectories(out.toAbsolutePath().getParent());
    JSON.writeValue(out.toFile(), report);
    System.out.println("kafka-differential: wrote " + out);
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
    for (String topic : allTopics) {
      TopicDescription td = d.get(topic);
      for (TopicPartitionInfo pi : td.partitions()) {
        Map<String, Object> m = new LinkedHashMap<>();
        Integer leader = pi.leader() == null || pi.leader().id() < 0 ? null : pi.leader().id();
        m.put("topic", topic);
        m.put("partition", pi.partition());
        m.put("leader", leader);
        Integer epoch = null;
        Long hw = null;
        if (leader != null) {
          TopicPartition tp = new TopicPartition(topic, pi.partition());
          for (int i = 0; i < 25 && hw == null; i++) {
            try {
              ListOffsetsResult.ListOffsetsResultInfo info = brokerAdmin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(2, TimeUnit.SECONDS);
              hw = info.offset();
              epoch = info.leaderEpoch().orElse(null);
            } catch (Exception e) {
              Thread.sleep(200);
            }
          }
        }
        m.put("leader_epoch", epoch);
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

  /** Every partition read from the start to its end (the high watermark), by a fresh consumer. */
  Map<String, Map<Long, String>> readAll() {
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
            long endOff = c.endOffsets(List.of(tp), Duration.ofSeconds(5)).get(tp);
            c.seekToBeginning(List.of(tp));
            Map<Long, String> l = new HashMap<>();
            long deadline = System.currentTimeMillis() + 20_000;
            while (c.position(tp) < endOff && System.currentTimeMillis() < deadline) {
              for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                l.put(r.offset(), r.value());
              }
            }
            if (c.position(tp) >= endOff) {
              logs.put(topic + "-" + i, l);
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
      List<String> parts = leaderBefore.entrySet().stream().filter(x -> x.getValue() != null && bs.contains(x.getValue())).map(Map.Entry::getKey).collect(Collectors.toList());
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

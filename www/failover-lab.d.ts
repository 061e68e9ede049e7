// Types of Failover Lab's browser API: the <failover-lab> custom element
// (failover-lab.js), the page's window.failoverLab (index.html), their DOM
// events (events.js) and the report / view / trace objects the wasm core
// returns (src/report.rs, src/view.rs, src/sim/trace.rs; SCENARIO_FORMAT.md).
// Shipped as the `types` of the npm-shaped element package
// (scripts/build-element.sh); checked by `tsc --noEmit --strict` on
// examples/typescript/ (make test-types).
//
//   import 'failover-lab-element';
//   const lab = document.querySelector('failover-lab')!;   // FailoverLabElement
//   await lab.ready;
//   lab.addEventListener('leaderchange', (e) => console.log(e.detail.leader_epoch));
//   lab.crash(1);

/** The element's class (the module's export; the tag is registered on import). */
declare const FailoverLabElementClass: {
  prototype: FailoverLabElement;
  new (): FailoverLabElement;
};
export { FailoverLabElementClass as FailoverLabElement };

declare global {
  // ---- scenario actions ------------------------------------------------------

  /** A broker id (1-based, as in the scenario). */
  type FailoverLabBrokerId = number;

  /** The acks setting of a produce burst: "0", "1" or "all" (also -1). */
  type FailoverLabAcks = '0' | '1' | 'all' | '-1' | 0 | 1 | -1;

  /**
   * An action: a scenario step without `at_ms` (SCENARIO_FORMAT.md), applied
   * now. The core checks it and throws an Error naming the bad field.
   */
  type FailoverLabAction =
    | { crash: FailoverLabBrokerId }
    | { power_loss: FailoverLabBrokerId }
    | { restart: FailoverLabBrokerId }
    | { shutdown: FailoverLabBrokerId }
    | { isolate: FailoverLabBrokerId }
    | { heal: FailoverLabBrokerId }
    | { produce: { topic: string; partition?: number; count: number; acks?: FailoverLabAcks } }
    | { [step: string]: unknown };

  /** A scenario: JSON text or the parsed object (SCENARIO_FORMAT.md). */
  type FailoverLabScenario = string | Record<string, unknown>;

  // ---- report (SCENARIO_FORMAT.md "Report") ------------------------------------

  type FailoverLabBrokerState = 'running' | 'crashed' | 'fenced' | 'isolated' | 'shut_down';

  interface FailoverLabBrokerReport {
    id: number;
    state: FailoverLabBrokerState;
    broker_epoch: number;
    rack: string | null;
  }

  interface FailoverLabReplicaLogReport {
    broker: number;
    log_end_offset: number;
    high_watermark: number;
    /** [leader epoch, start offset] pairs of the leader-epoch cache. */
    epochs: Array<[number, number]>;
    log_digest: string;
  }

  interface FailoverLabPartitionReport {
    topic: string;
    partition: number;
    leader: number | null;
    leader_epoch: number;
    partition_epoch: number;
    replicas: number[];
    isr: number[];
    elr: number[];
    last_known_elr: number[];
    high_watermark: number;
    replica_logs: FailoverLabReplicaLogReport[];
    acked_records_lost: number;
  }

  interface FailoverLabProducerReport {
    id: string;
    acked: number;
    failed: number;
    retries: number;
    in_flight: number;
    /** Error name → count (NOT_ENOUGH_REPLICAS, …). */
    errors: Record<string, number>;
  }

  interface FailoverLabConsumerPartitionReport {
    /** "topic-partition". */
    partition: string;
    position: number;
    reading_from: number | null;
    reading_from_leader: boolean;
    preferred_read_replica: number | null;
    lag: number | null;
    /** What it waits for before it has a position: its process to start, its group's committed offsets, or auto.offset.reset. */
    waiting: 'restart' | 'committed' | 'reset' | null;
  }

  interface FailoverLabConsumerReport {
    id: string;
    consumed: number;
    truncations_detected: number;
    /** ["topic-partition", position] pairs. */
    positions: Array<[string, number]>;
    /** Its own requests' errors by name (the Clients panel's chips); a group's coordinator errors are group.errors. */
    errors: Record<string, number>;
    client_rack: string | null;
    partitions: FailoverLabConsumerPartitionReport[];
    /** Records read more than once (same partition and offset). */
    read_twice: number;
    /** Present when the consumer has a group.id. */
    group?: FailoverLabGroupReport;
    /** False while its process is crashed (a crash_client step). */
    running: boolean;
  }

  interface FailoverLabGroupReport {
    group_id: string;
    /** The coordinator broker it knows, null while unknown. */
    coordinator: number | null;
    /** [topic-partition, committed offset, leader epoch or null]. */
    committed: Array<[string, number, number | null]>;
    commits: number;
    /** FindCoordinator / OffsetFetch / OffsetCommit errors by name. */
    errors: Record<string, number>;
    /** A subscribing consumer's membership, as the consumer knows it. */
    member?: {
      member_id: string;
      group_instance_id: string | null;
      generation: number;
      state: 'unjoined' | 'joining' | 'syncing' | 'stable' | 'failed';
      assignment: string[];
      rebalances: number;
      /** `consumer` is KIP-848 (group.protocol=consumer): `generation` is then its member epoch. */
      protocol: 'classic' | 'consumer';
    };
    /**
     * A subscribing group as its coordinator holds it (null while no running
     * broker leads its __consumer_offsets partition; with the consumer
     * protocol `generation` is the group epoch): members are [member id,
     * topic-partitions, the consumer that joined as it, the time (ms) its
     * session ends unless a heartbeat comes first].
     */
    coordinator_view?: {
      /** Classic: Empty, PreparingRebalance, CompletingRebalance, Stable; consumer: Empty, Reconciling, Stable. */
      state: 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Reconciling' | 'Stable';
      generation: number;
      leader: string | null;
      members: Array<[string, string[], string, number]>;
    } | null;
  }

  interface FailoverLabFate {
    count: number;
    /** A few of the record ids. */
    examples: number[];
  }

  interface FailoverLabDelivery {
    producer: string;
    topic: string;
    sent: number;
    acked_kept: FailoverLabFate;
    acked_lost: FailoverLabFate;
    failed_not_written: FailoverLabFate;
    failed_but_written: FailoverLabFate;
    pending: FailoverLabFate;
    written_twice: FailoverLabFate;
    consumed: FailoverLabFate;
    consumed_twice: FailoverLabFate;
    never_consumed: FailoverLabFate;
    /** Read more than once by the consumers of one group (a hand-over included). */
    reread: FailoverLabFate;
    /** `reread` by cause: another member after a rebalance, the same consumer after a restart, or a position a reset or seek moved back. */
    reread_causes: { rebalance: FailoverLabFate; restart: FailoverLabFate; reset: FailoverLabFate };
    /** `never_consumed` by cause: a position jumped over it by auto.offset.reset, or by a start at a committed offset nobody had read up to; else unread. */
    skip_causes: { reset: FailoverLabFate; commit: FailoverLabFate; unread: FailoverLabFate };
  }

  /** What became of one record (`story(id)`). */
  interface FailoverLabStory {
    id: number;
    producer: string;
    topic: string;
    partition: number | null;
    fate: 'acked_kept' | 'acked_lost' | 'failed_not_written' | 'failed_but_written' | 'pending';
    /** Its CreateTime, when a replica still has it. */
    sent_ms: number | null;
    acked_offset: number | null;
    copies: Array<{ broker: number; offset: number; epoch: number; committed: boolean }>;
    /** [consumer, times read]. */
    reads: Array<[string, number]>;
    /** [at_ms, narration] of the events that touched it. */
    events: Array<[number, string]>;
  }

  interface FailoverLabViolation {
    at_ms: number;
    invariant: string;
    detail: string;
  }

  /** Why a partition could not take acks=all writes (issue 11's availability accounting). */
  type FailoverLabUnavailableCause = 'leader_down' | 'offline' | 'below_min_isr' | 'leader_moving';

  interface FailoverLabLatencySummary {
    count: number;
    p50: number | null;
    p90: number | null;
    p99: number | null;
    p999: number | null;
    max: number | null;
  }

  interface FailoverLabFaultReport {
    at_ms: number;
    action: FailoverLabFault;
    actions: FailoverLabFault[];
    brokers: number[];
    /** "topic-partition" names the fault took leaderless. */
    partitions: string[];
    fenced_at_ms: number | null;
    elected_at_ms: number | null;
    applied_at_ms: number | null;
    writable_at_ms: number | null;
    /** Recovery time: fault → writable again (null while still open). */
    rto_ms: number | null;
    phases: { detection_ms: number | null; election_ms: number | null; metadata_ms: number | null; client_ms: number | null };
  }

  interface FailoverLabAvailabilityReport {
    faults: FailoverLabFaultReport[];
    partitions: Array<{ partition: string; unavailable_ms: number; windows: Array<{ from_ms: number; to_ms: number | null; cause: FailoverLabUnavailableCause }> }>;
    unavailable_ms: number;
    produce_latency_ms: FailoverLabLatencySummary;
    end_to_end_latency_ms: FailoverLabLatencySummary;
    /**
     * Per subscribing group, the times some of its partitions were read by no
     * member (its first rebalance, an eager rebalance, a dead member's
     * partitions until its session ends). Absent without subscribing consumers.
     */
    not_consumed?: Array<{ group: string; from_ms: number; to_ms: number | null; max_partitions: number }>;
  }

  /** The run report at the current simulated time (`report()`). */
  interface FailoverLabReport {
    scenario: string;
    seed: number;
    end_ms: number;
    trace_hash: string;
    brokers: FailoverLabBrokerReport[];
    partitions: FailoverLabPartitionReport[];
    producers: FailoverLabProducerReport[];
    consumers: FailoverLabConsumerReport[];
    acked_records_lost: number;
    invariant_violations: FailoverLabViolation[];
    events_processed: number;
    trace_events: number;
    /** How long the faults cost: recovery times and unavailable partition-time. */
    availability: FailoverLabAvailabilityReport;
    /** The fate of every record, per producer: the first five counts add up to `sent`. */
    delivery: FailoverLabDelivery[];
    /** The KEY=VALUE settings applied to the scenario (CLI `run --set`); absent when none were. */
    settings?: Record<string, unknown>;
    /** Each subscribing group's assignment history (the group card's lanes); absent without subscribing consumers. */
    groups?: FailoverLabGroupHistory[];
  }

  // ---- view (one frame's state, `view(n)`) -------------------------------------

  interface FailoverLabBrokerView {
    id: number;
    state: FailoverLabBrokerState;
    broker_epoch: number;
    /** How many partitions this broker leads. */
    leader_of: number;
    rack: string | null;
  }

  interface FailoverLabReplicaView {
    broker: number;
    role: 'leader' | 'follower' | 'unknown';
    alive: boolean;
    leader_epoch: number;
    log_end_offset: number;
    high_watermark: number;
    epochs: Array<[number, number]>;
    /** Offset of cells[0]. */
    first_cell: number;
    /** Leader epoch of each record drawn, from first_cell on. */
    cells: number[];
    in_isr: boolean;
  }

  interface FailoverLabPartitionView {
    topic: string;
    partition: number;
    leader: number | null;
    leader_epoch: number;
    partition_epoch: number;
    replicas: number[];
    isr: number[];
    elr: number[];
    last_known_elr: number[];
    min_insync_replicas: number;
    unclean_leader_election_enable: boolean;
    offline: boolean;
    under_replicated: boolean;
    under_min_isr: boolean;
    at_min_isr: boolean;
    acked_records_lost: number;
    replica_views: FailoverLabReplicaView[];
    /** On a __consumer_offsets partition: the groups that commit there. */
    groups?: string[];
  }

  interface FailoverLabProducerView {
    id: string;
    acks: string;
    idempotent: boolean;
    acked: number;
    failed: number;
    retries: number;
    in_flight: number;
    queued: number;
    errors: Record<string, number>;
    /** [time, error] of the latest errors. */
    last_errors: Array<[string, string]>;
  }

  interface FailoverLabConsumerView {
    id: string;
    consumed: number;
    truncations_detected: number;
    positions: Array<[string, number]>;
    errors: Record<string, number>;
    client_rack: string | null;
    partitions: FailoverLabConsumerPartitionReport[];
    running: boolean;
    read_twice: number;
    /** Present when the consumer has a group.id. */
    group?: FailoverLabGroupReport;
  }

  interface FailoverLabMessageView {
    /** "controller", "broker-N", "producer-I", "consumer-I". */
    from: string;
    to: string;
    /** Kafka request name: Fetch, Produce, BrokerHeartbeat, … */
    kind: string;
    sent_ms: number;
    arrive_ms: number;
  }

  /** Cumulative counters and gauges under Kafka's metric names. */
  interface FailoverLabMetrics {
    UnderReplicatedPartitions: number;
    UnderMinIsrPartitionCount: number;
    AtMinIsrPartitionCount: number;
    OfflinePartitionsCount: number;
    IsrShrinks: number;
    IsrExpands: number;
    LeaderElections: number;
    UncleanLeaderElections: number;
    FailedProduceRequests: number;
    RecordRetries: number;
    RecordErrors: number;
    RecordsAcked: number;
    RecordsConsumed: number;
  }

  interface FailoverLabView {
    now_ms: number;
    brokers: FailoverLabBrokerView[];
    /** The first n partitions in detail. */
    partitions: FailoverLabPartitionView[];
    producers: FailoverLabProducerView[];
    consumers: FailoverLabConsumerView[];
    messages: FailoverLabMessageView[];
    metrics: FailoverLabMetrics;
    acked_records_lost: number;
    invariant_violations: number;
    trace_length: number;
    /** __consumer_offsets partitions not shown (no group of the scenario commits there). */
    internal_partitions_hidden?: number;
    /** Each subscribing group's assignment history, as the report's `groups`. */
    groups?: FailoverLabGroupHistory[];
  }

  /**
   * A subscribing group's assignment over time: one lane per member id
   * (`[consumer, member id]`), every change of what a member holds (in time
   * order) and the windows a partition had no reader.
   */
  interface FailoverLabGroupHistory {
    group: string;
    protocol: 'classic' | 'consumer';
    members: Array<[string, string]>;
    changes: Array<{
      at_ms: number;
      /** Index into `members`. */
      member: number;
      /** Generation (classic) or member epoch (consumer protocol). */
      generation: number;
      state: 'joining' | 'idle' | 'reading' | 'rebalancing' | 'not_polling' | 'process_down' | 'left';
      partitions: string[];
      took: string[];
      gave_up: string[];
    }>;
    unread: Array<{ partition: string; from_ms: number; to_ms: number | null }>;
  }

  // ---- trace events (`trace(cursor)`) --------------------------------------------

  /** One trace event: `event` names its kind (snake_case); `text` says it in plain words. */
  interface FailoverLabTraceEvent {
    at_ms: number;
    event: string;
    text: string;
    [field: string]: unknown;
  }

  /** The trace's leader_elected event: the controller chose a leader. */
  interface FailoverLabLeaderElected {
    at_ms: number;
    event: 'leader_elected';
    text: string;
    topic: string;
    partition: number;
    leader: number | null;
    previous_leader: number | null;
    leader_epoch: number;
    isr: number[];
    /** How: "clean", "unclean", "elr", … */
    election: string;
  }

  interface FailoverLabTourStop {
    at_ms: number;
    title: string;
    text: string;
    highlight: string[];
  }

  // ---- events --------------------------------------------------------------------

  type FailoverLabFault = 'crash' | 'power_loss' | 'shutdown' | 'isolate';

  interface FailoverLabReadyDetail {
    now_ms: number;
  }
  interface FailoverLabFaultDetail {
    at_ms: number;
    fault: FailoverLabFault;
    broker: number;
    text: string;
  }
  type FailoverLabLeaderChangeDetail = FailoverLabLeaderElected;
  interface FailoverLabRecordsLostDetail {
    at_ms: number;
    topic: string;
    partition: number;
    /** Acknowledged records lost in this event. */
    count: number;
    cause: string;
    text: string;
    /** All acknowledged records lost so far in the run. */
    total: number;
  }
  interface FailoverLabTourStopDetail {
    /** 0-based stop index. */
    index: number;
    /** How many stops the tour has. */
    count: number;
    at_ms: number;
    title: string;
    text: string;
  }
  interface FailoverLabErrorDetail {
    message: string;
  }
  /** A fork lane ("what if … here?"): which lane it is, the lane it forked, and the action at the fork. */
  interface FailoverLabForkDetail {
    /** The new lane's name, "B" to "D". */
    lane: string;
    /** The lane it forked, "A" to "C". */
    from: string;
    at_ms: number;
    action: FailoverLabAction;
  }

  /** Events of a <failover-lab> element (dispatched on it; they bubble). */
  interface FailoverLabElementEventMap extends Omit<HTMLElementEventMap, 'error'> {
    ready: CustomEvent<FailoverLabReadyDetail>;
    fault: CustomEvent<FailoverLabFaultDetail>;
    leaderchange: CustomEvent<FailoverLabLeaderChangeDetail>;
    recordslost: CustomEvent<FailoverLabRecordsLostDetail>;
    tourstop: CustomEvent<FailoverLabTourStopDetail>;
    /** A fork lane was made (fork(), or an action in "what if … here?" mode). */
    fork: CustomEvent<FailoverLabForkDetail>;
    /** A bad attribute or scenario (also shown inside the element). */
    error: CustomEvent<FailoverLabErrorDetail>;
  }

  // ---- the API shared by the element and window.failoverLab ------------------------

  interface FailoverLabApi {
    /** Replace the scenario (JSON text or object); throws the core's Error. */
    load(scenario: FailoverLabScenario): void;
    crash(broker: FailoverLabBrokerId): void;
    powerLoss(broker: FailoverLabBrokerId): void;
    restart(broker: FailoverLabBrokerId): void;
    shutdown(broker: FailoverLabBrokerId): void;
    isolate(broker: FailoverLabBrokerId): void;
    heal(broker: FailoverLabBrokerId): void;
    produce(topic: string, partition: number, count: number, acks?: FailoverLabAcks): void;
    /** Apply any action now (recorded for replay). */
    apply(action: FailoverLabAction): void;
    /** Advance simulated time synchronously by `ms`, then redraw. */
    runFor(ms: number): void;
    /** Time travel to `t` ms. */
    seek(t: number): void;
    play(): void;
    pause(): void;
    /** Simulated ms per real ms (0.01 – 100). */
    setSpeed(x: number): void;
    report(): FailoverLabReport;
    /** The report's `delivery` alone: the fate of every record, per producer. */
    delivery(): FailoverLabDelivery[];
    /** What became of record `id` (sent, acknowledged, copies, reads, events), or null. */
    story(id: number): FailoverLabStory | null;
    /** kafka-topics.sh --describe text. */
    describe(): string;
    view(maxPartitions?: number): FailoverLabView;
    trace(cursor?: number): FailoverLabTraceEvent[];
    /** Simulated time, ms. */
    now(): number;
    /**
     * A seek the core needs over half a second for (a 20,000-partition
     * cluster), started from the timeline, a time clicked or the ← key, is
     * replayed a slice per frame so the page keeps answering: its target and
     * how far it got (0 to 1), or null when none is under way. Every other
     * method lands it first; `seek()` plans from where it got. In compare
     * mode, `lanes` lists the lanes still catching up with lane A's time
     * (each a slice per frame once lane A has landed): their target, the
     * simulated ms reached (`at`) and `progress` (0 to 1); `target` and
     * `progress` are then lane A's (1 once landed). `lanes()` lands them first.
     */
    readonly seeking: { target: number; progress: number; lanes?: FailoverLabLaneSeek[] } | null;
    /** Whether the run's cores come from the fast build (www/pkg-explorer: big scenarios, subscribing consumers). */
    readonly fast: boolean;
    actions(): Array<{ at_ms: number; action: FailoverLabAction }>;
    tourNext(): void;
    /** What the run answers to stop `i`'s question now: the answer's value and the indices of the choices it proves. */
    tourAnswer?(i: number): { value: unknown; right: number[] };
    tourBack(): void;
    /**
     * Compare mode: the same scenario, seed and actions under 2–4 settings
     * sets, one lane each ("acks=1|acks=all,min.insync.replicas=2": lanes
     * split by |, KEY=VALUE settings by commas, the keys of the CLI's
     * `run --set`); null leaves it. A bad string throws an Error naming the
     * lane and the key at once (the running lab is kept); the promise
     * resolves once the lanes are drawn.
     */
    compare(lanes: string | null): Promise<void>;
    /** Each lane's settings and report at the current time ([] outside compare mode). */
    lanes(): FailoverLabLane[];
    /**
     * "What if … here?": fork lane `from` (default "A") at `atMs` with
     * `action`. The new lane runs that lane's run up to atMs (its steps and
     * recorded actions by then), then the action; its later steps are
     * dropped (a guided tour keeps its scripted ones). Resolves to the new
     * lane (also sent as the `fork` event); rejects with the core's message
     * for a bad action, or when the four lanes are taken.
     */
    fork(atMs: number, action: FailoverLabAction, from?: 'A' | 'B' | 'C'): Promise<FailoverLabForkDetail>;
    /** The fork lanes, in lane order. */
    forks(): FailoverLabForkDetail[];
  }

  /** One compare lane: its settings text and its report (= `failover-lab run FILE --set …`). */
  /** A compare lane on its way to lane A's time (`seeking.lanes`). */
  interface FailoverLabLaneSeek {
    /** 'B', 'C' or 'D'. */
    lane: string;
    /** Where it is going: lane A's time, ms. */
    target: number;
    /** The simulated time it has reached, ms. */
    at: number;
    /** at / target, 0 to 1. */
    progress: number;
  }

  interface FailoverLabLane {
    settings: string;
    report: FailoverLabReport;
    /** A fork lane's fork: the lane it forked, the time and the action. */
    fork?: { from: string; at_ms: number; action: FailoverLabAction };
    /** Lanes B…: where this lane's trace first differs from the lane it is compared with (a fork's parent, else A), so far; null while the same. */
    divergence?: { from: string; at_ms: number; index: number } | null;
  }

  type FailoverLabTheme = 'light' | 'dark' | 'auto';

  /** <failover-lab>: the simulator as one custom element. */
  interface FailoverLabElement extends HTMLElement, FailoverLabApi {
    /** Resolves to true once the first frame is drawn, false on a bad setup. */
    readonly ready: Promise<boolean>;
    /** Back to the start (of the range), forgetting recorded actions. */
    reset(): void;
    /** The scenario with the switches applied (what runs). */
    scenario(): Record<string, unknown>;

    addEventListener<K extends keyof FailoverLabElementEventMap>(
      type: K,
      listener: (this: FailoverLabElement, ev: FailoverLabElementEventMap[K]) => unknown,
      options?: boolean | AddEventListenerOptions,
    ): void;
    addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
    removeEventListener<K extends keyof FailoverLabElementEventMap>(
      type: K,
      listener: (this: FailoverLabElement, ev: FailoverLabElementEventMap[K]) => unknown,
      options?: boolean | EventListenerOptions,
    ): void;
    removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
  }

  /**
   * The element's attributes (all strings in HTML): scenario, seed, speed,
   * autoplay, loop, compact, controls, panels, partitions, range, theme, compare, forks.
   */
  interface FailoverLabAttributes {
    /** URL of a scenario file; or put the scenario in a <script type="application/json"> child. */
    scenario?: string;
    /** Whole number ≥ 0: overrides the scenario's seed. */
    seed?: string;
    /** Simulated ms per real ms, 0.01 – 100 (default 1). */
    speed?: string;
    autoplay?: '' | 'true' | 'false';
    loop?: '' | 'true' | 'false';
    compact?: '' | 'true' | 'false';
    /** Some of: play step speed time timeline reset brokers produce switches tour; or all / none. */
    controls?: string;
    /** Some of: map partitions clients describe narration metrics availability; or all / none. */
    panels?: string;
    /** How many partitions to draw, 1 – 64 (default 8). */
    partitions?: string;
    /** "8s-25s", "8000-25000", "8s-" or "steps:1-2". */
    range?: string;
    /** light | dark | auto (default: follows prefers-color-scheme). */
    theme?: FailoverLabTheme;
    /** Compare lanes, "acks=1|acks=all" (see compare()); a bad one shows its message in the element. */
    compare?: string;
    /** Fork lanes, "A~15000:crash:2,B~20000:restart:2" (see fork()): each forks the lane named before ~. */
    forks?: string;
  }

  /** index.html's window.failoverLab (set once the wasm core has loaded). */
  interface FailoverLabPageApi extends FailoverLabApi {
    tour(): { stops: FailoverLabTourStop[]; index: number };
    shareUrl(): string;
    exportScenario(): Record<string, unknown>;
    readonly playing: boolean;
    readonly theme: FailoverLabTheme;
    setTheme(theme: FailoverLabTheme): void;
  }

  interface HTMLElementTagNameMap {
    'failover-lab': FailoverLabElement;
  }

  interface Window {
    failoverLab?: FailoverLabPageApi;
  }

  /** index.html dispatches the element's events on document, prefixed "failoverlab:". */
  interface DocumentEventMap {
    'failoverlab:ready': CustomEvent<FailoverLabReadyDetail>;
    'failoverlab:fault': CustomEvent<FailoverLabFaultDetail>;
    'failoverlab:leaderchange': CustomEvent<FailoverLabLeaderChangeDetail>;
    'failoverlab:recordslost': CustomEvent<FailoverLabRecordsLostDetail>;
    'failoverlab:tourstop': CustomEvent<FailoverLabTourStopDetail>;
    'failoverlab:fork': CustomEvent<FailoverLabForkDetail>;
  }
}

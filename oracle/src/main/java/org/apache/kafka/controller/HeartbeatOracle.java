package org.apache.kafka.controller;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;

/**
 * Random broker-lifecycle sequences through Kafka's
 * org.apache.kafka.controller.BrokerHeartbeatManager and its
 * BrokerHeartbeatTracker (package-private, hence this package; the class is
 * Failover Lab's, not Kafka's). The manager is driven the way
 * ReplicationControlManager.processBrokerHeartbeat and ClusterControlManager's
 * record replay drive it: a registration registers the broker fenced; a
 * heartbeat updates the contact time, asks calculateNextBrokerState, replays
 * the state change it implies (register with the new fenced flag, the
 * controlled-shutdown offset) and touches the broker; a session check removes
 * expired contacts and fences those brokers. After each step the vector holds
 * every broker's state and whether its session is valid.
 *
 * Offsets are Kafka's: a metadata offset is the offset of the last record a
 * broker has replayed; records get offsets 0, 1, 2, ...
 */
public final class HeartbeatOracle {
    private static final long SESSION_MS = 100;
    private static final int BROKERS = 3;

    /** A clock the sequence moves by hand. */
    private static final class ManualTime implements Time {
        long ms;
        @Override public long milliseconds() { return ms; }
        @Override public long nanoseconds() { return ms * 1_000_000L; }
        @Override public void sleep(long d) { ms += d; }
    }

    private static char initial(BrokerControlState s) {
        return switch (s) {
            case FENCED -> 'F';
            case UNFENCED -> 'U';
            case CONTROLLED_SHUTDOWN -> 'C';
            case SHUTDOWN_NOW -> 'S';
        };
    }

    public static List<String> generate(long seed, int count) {
        Random rnd = new Random(seed);
        List<String> out = new ArrayList<>(count);
        for (int id = 0; id < count; id++) out.add(sequence(rnd, id));
        return out;
    }

    private static String sequence(Random rnd, int id) {
        ManualTime time = new ManualTime();
        BrokerHeartbeatManager manager = new BrokerHeartbeatManager(new LogContext(), time, SESSION_MS * 1_000_000L);
        long nextOffset = 0;
        long[] epoch = new long[BROKERS + 1];
        long[] registerOffset = new long[BROKERS + 1];
        boolean[] registered = new boolean[BROKERS + 1];
        // A broker's process as BrokerLifecycleManager runs it: once it asked
        // to shut down it keeps asking; once told SHUTDOWN_NOW it exits and
        // its next act is a new registration.
        boolean[] shuttingDown = new boolean[BROKERS + 1];
        boolean[] stopped = new boolean[BROKERS + 1];
        StringBuilder steps = new StringBuilder("[");
        int n = 4 + rnd.nextInt(10);
        for (int i = 0; i < n; i++) {
            int b = 1 + rnd.nextInt(BROKERS);
            StringBuilder step = new StringBuilder("{");
            double op = rnd.nextDouble();
            if (!registered[b] || stopped[b] || op < 0.12) {
                shuttingDown[b] = false;
                stopped[b] = false;
                long offset = nextOffset++;
                if (registered[b]) manager.remove(b);
                manager.register(b, true);
                registered[b] = true;
                epoch[b] = offset;
                registerOffset[b] = offset;
                manager.tracker().updateContactTime(new BrokerIdAndEpoch(b, epoch[b]));
                step.append("\"op\":\"register\",\"broker\":").append(b)
                    .append(",\"at_ms\":").append(time.ms)
                    .append(",\"record_offset\":").append(offset);
            } else if (op < 0.75) {
                boolean wantFence = rnd.nextDouble() < 0.15;
                boolean wantShutdown = shuttingDown[b] || rnd.nextDouble() < 0.2;
                shuttingDown[b] = wantShutdown;
                boolean hasLeaderships = rnd.nextDouble() < 0.5;
                long reported = Math.max(-1, registerOffset[b] - 2 + rnd.nextInt((int) (nextOffset - registerOffset[b]) + 3));
                manager.tracker().updateContactTime(new BrokerIdAndEpoch(b, epoch[b]));
                BrokerHeartbeatRequestData request = new BrokerHeartbeatRequestData()
                    .setBrokerId(b).setBrokerEpoch(epoch[b]).setCurrentMetadataOffset(reported)
                    .setWantFence(wantFence).setWantShutDown(wantShutdown);
                BrokerControlStates states = manager.calculateNextBrokerState(b, request, registerOffset[b], () -> hasLeaderships);
                if (states.current() != states.next()) {
                    switch (states.next()) {
                        case FENCED, UNFENCED, SHUTDOWN_NOW -> {
                            // The BrokerRegistrationChangeRecord's replay.
                            nextOffset++;
                            manager.register(b, states.next().fenced());
                        }
                        case CONTROLLED_SHUTDOWN -> {
                            long offset = nextOffset++;
                            manager.maybeUpdateControlledShutdownOffset(b, offset);
                        }
                    }
                }
                manager.touch(b, states.next().fenced(), reported);
                stopped[b] = states.next() == BrokerControlState.SHUTDOWN_NOW;
                step.append("\"op\":\"heartbeat\",\"broker\":").append(b)
                    .append(",\"at_ms\":").append(time.ms)
                    .append(",\"want_fence\":").append(wantFence)
                    .append(",\"want_shutdown\":").append(wantShutdown)
                    .append(",\"has_leaderships\":").append(hasLeaderships)
                    .append(",\"metadata_offset\":").append(reported)
                    .append(",\"register_offset\":").append(registerOffset[b])
                    .append(",\"record_end\":").append(nextOffset)
                    .append(",\"kafka\":[\"").append(states.current()).append("\",\"")
                    .append(states.next()).append("\"]");
            } else if (op < 0.82) {
                // The clock moves with no session check: often to exactly a
                // broker's last contact + the session timeout, the last
                // instant its session is valid.
                long[] lastContact = new long[BROKERS + 1];
                for (int x = 1; x <= BROKERS; x++) {
                    lastContact[x] = manager.tracker().contactTime(new BrokerIdAndEpoch(x, epoch[x])).orElse(-1L) / 1_000_000L;
                }
                long target = lastContact[b] >= 0 ? lastContact[b] + SESSION_MS : time.ms;
                time.ms = rnd.nextDouble() < 0.5 && target >= time.ms ? target : time.ms + rnd.nextInt((int) SESSION_MS);
                step.append("\"op\":\"tick\",\"at_ms\":").append(time.ms);
            } else {
                time.ms += 1 + rnd.nextInt((int) (SESSION_MS * 3 / 2));
                StringBuilder expired = new StringBuilder("[");
                Optional<BrokerIdAndEpoch> e;
                while ((e = manager.tracker().maybeRemoveExpired()).isPresent()) {
                    int x = e.get().id();
                    // A contact left over from an earlier incarnation expires
                    // too; the controller fences only the current one.
                    if (e.get().epoch() != epoch[x]) continue;
                    if (expired.length() > 1) expired.append(',');
                    expired.append(x);
                    manager.fence(x);
                    nextOffset++;
                    manager.register(x, true);
                }
                step.append("\"op\":\"session_check\",\"at_ms\":").append(time.ms)
                    .append(",\"kafka_expired\":").append(expired.append(']'));
            }
            // After the step, per broker 1..3: its state's initial (F fenced, U
            // unfenced, C controlled shutdown, S shutdown now, - unregistered)
            // and whether its session is valid (1) or not (0).
            step.append(",\"after\":\"");
            for (int x = 1; x <= BROKERS; x++) {
                if (x > 1) step.append(' ');
                BrokerHeartbeatManager.BrokerHeartbeatState s = null;
                for (BrokerHeartbeatManager.BrokerHeartbeatState c : manager.brokers()) if (c.id() == x) s = c;
                if (!registered[x] || s == null) {
                    step.append("--");
                    continue;
                }
                step.append(initial(manager.currentBrokerState(s)))
                    .append(manager.hasValidSession(x, epoch[x]) ? '1' : '0');
            }
            step.append("\"}");
            if (i > 0) steps.append(',');
            steps.append(step);
        }
        return "{\"id\":" + id + ",\"session_timeout_ms\":" + SESSION_MS + ",\"steps\":" + steps.append("]}");
    }
}

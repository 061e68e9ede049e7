package org.apache.kafka.clients;

import java.lang.reflect.Field;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;

import org.apache.kafka.common.utils.internals.LogContext;

import failoverlab.oracle.Json;

/**
 * Random connection histories on Kafka's {@code ClusterConnectionStates}
 * (kafka-clients; package-private, hence this package): one node, with
 * connecting / ready / disconnected (while CONNECTING: a refusal or a set-up
 * timeout, which NetworkClient reports the same way; or after READY) and time
 * advances. After each step it records what the class reports:
 * {@code connectionState}, {@code connectionDelay(now)},
 * {@code isBlackedOut(now)}, {@code connectionSetupTimeoutMs},
 * {@code lastConnectAttemptMs} and, while connecting,
 * {@code isConnectionSetupTimeout(now)}.
 *
 * <p>The jitter: Kafka's {@code ExponentialBackoff} draws it from
 * {@code ThreadLocalRandom.current()}, which cannot be seeded through any API.
 * So that the file depends only on the seed, each history first writes a
 * seed-derived value into this thread's {@code ThreadLocalRandom} state (the
 * thread's {@code threadLocalRandomSeed}, with its probe marked initialised);
 * Kafka's code then draws as usual (on a worker thread with a fixed id, since
 * each draw's step adds the thread id). The replay checks each drawn value against
 * the range the exponent allows (Kafka draws a factor in [0.8, 1.2)), not the
 * value itself.
 */
public final class ConnectionStatesOracle {
    private static final String NODE = "1";
    private static final HostResolver LOOPBACK = host ->
        new InetAddress[] {InetAddress.getByAddress(host, new byte[] {127, 0, 0, 1})};

    public static List<String> generate(long seed, int count) throws Exception {
        Random rnd = new Random(seed);
        List<String> out = new ArrayList<>(count);
        Exception[] failure = new Exception[1];
        Thread worker = new Thread(() -> {
            try {
                for (int id = 0; id < count; id++) out.add(history(rnd, id));
            } catch (Exception e) {
                failure[0] = e;
            }
        }, "connection-states-oracle");
        // ThreadLocalRandom's step adds the thread's id, which depends on how
        // many threads the JVM made before; a fixed id on this worker keeps
        // the draws a function of the seed alone.
        unsafe().putLong(worker, unsafe().objectFieldOffset(Thread.class.getDeclaredField("tid")), WORKER_TID);
        worker.start();
        worker.join();
        if (failure[0] != null) throw failure[0];
        return out;
    }

    private static final long WORKER_TID = 1_000_001L;

    private static sun.misc.Unsafe unsafe() throws Exception {
        Field uf = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
        uf.setAccessible(true);
        return (sun.misc.Unsafe) uf.get(null);
    }

    private static String history(Random rnd, int id) throws Exception {
        seedThreadLocalRandom(rnd.nextLong());
        long reconnect, reconnectMax, setup, setupMax;
        double k = rnd.nextDouble();
        if (k < 0.5) {
            reconnect = 50; reconnectMax = 1000; setup = 10_000; setupMax = 30_000;
        } else {
            reconnect = 1 + rnd.nextInt(200);
            reconnectMax = k < 0.6 ? reconnect - rnd.nextInt((int) reconnect) : reconnect + rnd.nextInt(5000);
            setup = 100 + rnd.nextInt(10_000);
            setupMax = k < 0.65 ? setup : setup + rnd.nextInt(40_000);
        }
        ClusterConnectionStates states = new ClusterConnectionStates(
            reconnect, reconnectMax, setup, setupMax, new LogContext(), LOOPBACK);
        long now = 1_000 + rnd.nextInt(1000);
        StringBuilder steps = new StringBuilder("[");
        int n = 3 + rnd.nextInt(25);
        for (int i = 0; i < n; i++) {
            if (i > 0) steps.append(',');
            Json step = new Json();
            ConnectionState s = i == 0 ? ConnectionState.DISCONNECTED : states.connectionState(NODE);
            double r = rnd.nextDouble();
            if (i == 0 || (s == ConnectionState.DISCONNECTED && states.canConnect(NODE, now) && r < 0.7)) {
                states.connecting(NODE, now, "broker1");
                step.str("op", "connecting");
            } else if (s == ConnectionState.CONNECTING && r < 0.35) {
                states.ready(NODE);
                step.str("op", "ready");
            } else if ((s == ConnectionState.CONNECTING && r < 0.8) || (s == ConnectionState.READY && r < 0.4)) {
                states.disconnected(NODE, now);
                step.str("op", "disconnected");
            } else {
                long dt = rnd.nextDouble() < 0.5 ? rnd.nextInt(300) : rnd.nextInt(60_000);
                now += dt;
                step.str("op", "advance");
            }
            step.num("now", now);
            boolean connecting = states.isConnecting(NODE);
            Json kafka = new Json()
                .str("state", states.connectionState(NODE).name())
                .num("delay", states.connectionDelay(NODE, now))
                .bool("blacked_out", states.isBlackedOut(NODE, now))
                .num("setup_timeout", states.connectionSetupTimeoutMs(NODE))
                .num("last_attempt", states.lastConnectAttemptMs(NODE));
            if (connecting) kafka.bool("setup_timed_out", states.isConnectionSetupTimeout(NODE, now));
            step.obj("kafka", kafka);
            steps.append(step);
        }
        return new Json().num("id", id)
            .obj("config", new Json().num("reconnect_backoff_ms", reconnect)
                .num("reconnect_backoff_max_ms", reconnectMax)
                .num("setup_timeout_ms", setup).num("setup_timeout_max_ms", setupMax))
            .raw("steps", steps.append(']').toString()).toString();
    }

    /** Puts this thread's ThreadLocalRandom at a known state (see the class comment). */
    private static void seedThreadLocalRandom(long seed) throws Exception {
        sun.misc.Unsafe u = unsafe();
        Thread t = Thread.currentThread();
        long seedOffset = u.objectFieldOffset(Thread.class.getDeclaredField("threadLocalRandomSeed"));
        long probeOffset = u.objectFieldOffset(Thread.class.getDeclaredField("threadLocalRandomProbe"));
        ThreadLocalRandom.current(); // initialise, then overwrite
        u.putLong(t, seedOffset, seed);
        u.putInt(t, probeOffset, 1);
    }
}

package failoverlab.oracle;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.coordinator.group.GroupCoordinatorService;

/**
 * Which {@code __consumer_offsets} partition holds a group: Kafka's
 * {@code GroupCoordinatorService.partitionFor(groupId)} (kafka-group-coordinator)
 * over random group names and partition counts.
 *
 * <p>The answer comes from Kafka's own {@code partitionFor} method, called on a
 * real {@code GroupCoordinatorService} object. The object is allocated without
 * running its constructor, and only the two fields {@code partitionFor} reads are
 * set: {@code isActive} (true, as {@code startup} leaves it) and
 * {@code numPartitions} (the count {@code startup(() -> n)} would store).
 * Why not {@code Builder.build()} and {@code startup}: {@code build()} starts a
 * {@code CoordinatorRuntime} with a multi-threaded event processor and a
 * background thread pool, and requires a full {@code GroupCoordinatorConfig}, a
 * partition writer, a loader, a timer, runtime and group metrics, a group config
 * manager, a share-group persister, an authorizer and a partition metadata
 * client; and {@code startup} schedules a streams-topology cleanup on that
 * timer. None of that takes part in the decision, which is the method's two
 * reads and its arithmetic, and a fresh runtime (threads, a timer) per
 * partition count would make the generator slow for nothing. The method that
 * decides is Kafka's, byte for byte.
 *
 * <p>Names: ASCII, Basic Multilingual Plane and astral-plane characters (two
 * UTF-16 units each, which Java's {@code String.hashCode} counts separately),
 * the empty name, and names whose {@code hashCode} is {@code Integer.MIN_VALUE}
 * (where {@code Utils.abs} gives 0, not the sign-bit mask's value).
 */
final class OffsetsPartitionOracle {
    /** Known names whose String.hashCode is Integer.MIN_VALUE. */
    private static final String[] MIN_HASH = {"polygenelubricants", "GydZG_", "DESIGNING WORKHOUSES"};

    static List<String> generate(long seed, int count) throws Exception {
        Random rnd = new Random(seed);
        List<String> out = new ArrayList<>(count);
        for (int id = 0; id < count; id++) {
            String group = name(rnd, id);
            int partitions = rnd.nextDouble() < 0.3 ? 50 : 1 + rnd.nextInt(200);
            int partition = service(partitions).partitionFor(group);
            out.add(new Json().num("id", id).text("group", group).num("partitions", partitions)
                .obj("kafka", new Json().num("hash", group.hashCode()).num("partition", partition))
                .toString());
        }
        return out;
    }

    private static String name(Random rnd, int id) {
        if (id < MIN_HASH.length) return MIN_HASH[id];
        if (id == MIN_HASH.length) return "";
        double k = rnd.nextDouble();
        if (k < 0.05) return MIN_HASH[rnd.nextInt(MIN_HASH.length)];
        if (k < 0.07) return "";
        StringBuilder sb = new StringBuilder();
        int len = 1 + rnd.nextInt(24);
        for (int i = 0; i < len; i++) {
            double c = rnd.nextDouble();
            if (k < 0.6 || c < 0.5) sb.appendCodePoint(0x20 + rnd.nextInt(0x5f)); // printable ASCII
            else if (c < 0.8) sb.appendCodePoint(bmp(rnd));
            else sb.appendCodePoint(0x10000 + rnd.nextInt(0x10ffff - 0x10000 + 1)); // astral
        }
        return sb.toString();
    }

    /** A BMP code point that is not a surrogate (a lone surrogate is no character). */
    private static int bmp(Random rnd) {
        while (true) {
            int cp = 0x80 + rnd.nextInt(0xffff - 0x80 + 1);
            if (cp < 0xd800 || cp > 0xdfff) return cp;
        }
    }

    private static GroupCoordinatorService service(int partitions) throws Exception {
        Object unsafe = unsafe();
        GroupCoordinatorService s = (GroupCoordinatorService) unsafe.getClass()
            .getMethod("allocateInstance", Class.class).invoke(unsafe, GroupCoordinatorService.class);
        set(s, "isActive", new AtomicBoolean(true));
        Field n = GroupCoordinatorService.class.getDeclaredField("numPartitions");
        n.setAccessible(true);
        n.setInt(s, partitions);
        return s;
    }

    private static void set(Object o, String field, Object value) throws Exception {
        Field f = o.getClass().getDeclaredField(field);
        f.setAccessible(true);
        f.set(o, value);
    }

    private static Object unsafe() throws Exception {
        Field f = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
        f.setAccessible(true);
        return f.get(null);
    }
}

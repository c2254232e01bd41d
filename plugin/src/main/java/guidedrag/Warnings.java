package guidedrag;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.neo4j.logging.Log;

/**
 * The dbms log line for an embedding cache that cannot run, written once per distinct reason:
 * the procedures see the reason on every call (and return it in their {@code warning} column),
 * and one line per call would bury the log.
 */
final class Warnings {

    private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();
    private static final int MAX_REASONS = 64;

    private Warnings() {}

    static void log(Log log, String warning) {
        if (log == null || LOGGED.size() >= MAX_REASONS || !LOGGED.add(warning)) {
            return;
        }
        log.warn("guidedrag: %s", warning);
    }
}

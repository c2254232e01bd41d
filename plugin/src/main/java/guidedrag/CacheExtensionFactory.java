package guidedrag;

import java.util.UUID;

import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.kernel.extension.ExtensionFactory;
import org.neo4j.kernel.extension.ExtensionType;
import org.neo4j.kernel.extension.context.ExtensionContext;
import org.neo4j.kernel.internal.GraphDatabaseAPI;
import org.neo4j.kernel.lifecycle.Lifecycle;
import org.neo4j.kernel.lifecycle.LifecycleAdapter;
import org.neo4j.logging.Log;
import org.neo4j.logging.internal.LogService;

/**
 * The embedding cache's lifecycle, one per database: Neo4j starts it with the database (it is
 * listed in {@code META-INF/services/org.neo4j.kernel.extension.ExtensionFactory}) and stops it
 * with the database, whether the server shuts down or the database is stopped, dropped or
 * replaced. Start makes an empty {@link VectorCache} for this database's id and registers its
 * commit listener; stop unregisters the listener and discards the cache.
 *
 * <p>Why a lifecycle and not a procedure that registers on first use: a listener registered from
 * a procedure is never unregistered, and nothing tells a procedure that the store under a
 * database name was replaced (no commit events fire), so a lazily made cache outlives its store.
 * If the cache cannot start (an API this Neo4j lacks: {@link LinkageError}), the reason goes to
 * the dbms log and every rank call returns it in its {@code warning} column.
 */
public final class CacheExtensionFactory extends ExtensionFactory<CacheExtensionFactory.Dependencies> {

    static final String NAME = "guidedrag-rank-cache";

    /** What the lifecycle needs from the database; Neo4j resolves each by its type. */
    public interface Dependencies {
        GraphDatabaseAPI graphDatabaseAPI();

        DatabaseManagementService databaseManagementService();

        LogService logService();
    }

    public CacheExtensionFactory() {
        super(ExtensionType.DATABASE, NAME);
    }

    @Override
    public Lifecycle newInstance(ExtensionContext context, Dependencies dependencies) {
        return new CacheLifecycle(dependencies);
    }

    /** Starts and stops one database's cache. */
    static final class CacheLifecycle extends LifecycleAdapter {
        private final Dependencies dependencies;
        private GraphDatabaseAPI db;
        private UUID id;
        private VectorCache cache;
        private DatabaseManagementService dbms;

        CacheLifecycle(Dependencies dependencies) {
            this.dependencies = dependencies;
        }

        @Override
        public void start() {
            Log log = null;
            try {
                log = dependencies.logService().getUserLog(CacheExtensionFactory.class);
                db = dependencies.graphDatabaseAPI();
                id = db.databaseId().databaseId().uuid();
                if (db.databaseId().isSystemDatabase()) {
                    return; // holds no chunks; Neo4j refuses transaction listeners there
                }
                dbms = dependencies.databaseManagementService();
                VectorCache fresh = new VectorCache(id);
                dbms.registerTransactionEventListener(db.databaseName(), fresh);
                cache = fresh;
                cache.open();
            } catch (RuntimeException | LinkageError e) {
                String why = "the rank plugin's embedding cache could not start (" + e + ")";
                if (id != null) {
                    VectorCache.failed(id, why);
                }
                if (log != null) {
                    log.warn("guidedrag: %s on database `%s`; guidedrag.rank and guidedrag.rankTiers read every "
                            + "embedding from the store (exact, slower)", why, db == null ? "?" : db.databaseName());
                }
            }
        }

        @Override
        public void stop() {
            if (id != null) {
                VectorCache.forget(id);
            }
            if (cache == null) {
                return;
            }
            try {
                dbms.unregisterTransactionEventListener(db.databaseName(), cache);
            } catch (RuntimeException | LinkageError e) {
                // the database is going away; its listeners go with it
            } finally {
                cache.close();
                cache = null;
            }
        }
    }
}

package navqa;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import it.unibz.inf.ontop.injection.OntopSQLOWLAPIConfiguration;
import it.unibz.inf.ontop.rdf4j.repository.OntopRepository;
import it.unibz.inf.ontop.rdf4j.repository.OntopRepositoryConnection;
import org.eclipse.rdf4j.query.BooleanQuery;
import org.eclipse.rdf4j.query.GraphQuery;
import org.eclipse.rdf4j.query.MalformedQueryException;
import org.eclipse.rdf4j.query.Query;
import org.eclipse.rdf4j.query.QueryLanguage;
import org.eclipse.rdf4j.query.TupleQuery;
import org.eclipse.rdf4j.query.parser.ParsedBooleanQuery;
import org.eclipse.rdf4j.query.parser.ParsedGraphQuery;
import org.eclipse.rdf4j.query.parser.ParsedQuery;
import org.eclipse.rdf4j.query.parser.ParsedTupleQuery;
import org.eclipse.rdf4j.query.parser.QueryParserUtil;
import org.eclipse.rdf4j.query.resultio.sparqljson.SPARQLBooleanJSONWriter;
import org.eclipse.rdf4j.query.resultio.sparqljson.SPARQLResultsJSONWriter;
import org.eclipse.rdf4j.rio.RDFFormat;
import org.eclipse.rdf4j.rio.Rio;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;

/**
 * A minimal SPARQL endpoint over the Ontop 5 library, started by navqa.
 *
 * <p>Ontop's own CLI (it.unibz.inf.ontop:ontop-cli) is not published on Maven Central for
 * Ontop 4 or 5, so navqa compiles this launcher against the Ontop jars it resolves from
 * Maven Central. It mirrors the parts of {@code ontop endpoint} that navqa relies on:
 *
 * <ul>
 *   <li>{@code /sparql}: GET {@code ?query=}, POST form, POST {@code application/sparql-query};
 *       SELECT/ASK answer in SPARQL JSON, CONSTRUCT/DESCRIBE in N-Triples or Turtle;
 *       UPDATE is refused with 501, a malformed query gets 400, other failures 500.
 *   <li>{@code /ontop/reformulate?query=} (only with {@code --dev}): the reformulated plan;
 *       add {@code &format=sql} for the native SQL alone.
 * </ul>
 *
 * <p>Commands: {@code endpoint} and {@code validate}. The database password is read from
 * {@code ONTOP_DB_PASSWORD} (and user/url from {@code ONTOP_DB_USER}/{@code ONTOP_DB_URL}) so it
 * never appears on a command line. Errors are printed as one line starting with
 * {@code navqa-ontop: ERROR:} followed by the chain of causes, never as a stack trace on stdout.
 */
public final class NavqaOntop {

    private NavqaOntop() {}

    public static void main(String[] argv) {
        Map<String, String> opts = new HashMap<>();
        String command = argv.length > 0 ? argv[0] : "";
        for (int i = 1; i < argv.length; i++) {
            String a = argv[i];
            if (a.equals("--dev") || a.equals("--lazy")) {
                opts.put(a.substring(2), "true");
            } else if (a.startsWith("--") && i + 1 < argv.length) {
                opts.put(a.substring(2), argv[++i]);
            } else {
                fail("unexpected argument: " + a, null, 64);
            }
        }
        try {
            switch (command) {
                case "endpoint":
                    endpoint(opts);
                    break;
                case "validate":
                    validate(opts);
                    break;
                default:
                    fail("usage: NavqaOntop endpoint|validate --ontology F --mapping F --properties F"
                            + " [--port P] [--dev] [--xml-catalog F] [--lenses F]", null, 64);
            }
        } catch (Throwable t) {
            fail("startup failed", t, 2);
        }
    }

    private static void fail(String message, Throwable t, int code) {
        StringBuilder sb = new StringBuilder("navqa-ontop: ERROR: ").append(message);
        // Print the chain of causes, skipping a cause whose text the previous one already quotes.
        String previous = "";
        Throwable c = t;
        int depth = 0;
        while (c != null && depth < 12) {
            String text = String.valueOf(c.getMessage()).replace('\n', ' ').trim();
            if (!previous.contains(text)) {
                sb.append("\nnavqa-ontop: CAUSE: ").append(c.getClass().getSimpleName()).append(": ")
                        .append(text);
                previous = text;
            }
            c = c.getCause() == c ? null : c.getCause();
            depth++;
        }
        System.err.println(sb);
        System.err.flush();
        System.exit(code);
    }

    private static String required(Map<String, String> opts, String key) {
        String v = opts.get(key);
        if (v == null) {
            fail("missing --" + key, null, 64);
        }
        return v;
    }

    private static OntopRepository repository(Map<String, String> opts) {
        String ontology = required(opts, "ontology");
        String mapping = required(opts, "mapping");
        String properties = required(opts, "properties");
        OntopSQLOWLAPIConfiguration.Builder<?> b = OntopSQLOWLAPIConfiguration.defaultBuilder()
                .ontologyFile(ontology)
                .propertyFile(properties);
        if (mapping.endsWith(".obda")) {
            b.nativeOntopMappingFile(mapping);
        } else {
            b.r2rmlMappingFile(mapping);
        }
        if (opts.containsKey("xml-catalog")) {
            b.xmlCatalogFile(opts.get("xml-catalog"));
        }
        if (opts.containsKey("lenses")) {
            b.lensesFile(opts.get("lenses"));
        }
        String url = System.getenv("ONTOP_DB_URL");
        String user = System.getenv("ONTOP_DB_USER");
        String password = System.getenv("ONTOP_DB_PASSWORD");
        if (url != null && !url.isEmpty()) {
            b.jdbcUrl(url);
        }
        if (user != null && !user.isEmpty()) {
            b.jdbcUser(user);
        }
        if (password != null) {
            b.jdbcPassword(password);
        }
        OntopRepository repo = OntopRepository.defaultRepository(b.build());
        repo.init();
        return repo;
    }

    private static void validate(Map<String, String> opts) throws Exception {
        try (OntopRepository repo = repository(opts);
             OntopRepositoryConnection conn = repo.getConnection()) {
            // Force one reformulation so that mapping/DB-metadata problems surface here.
            conn.reformulate("SELECT * WHERE { ?s ?p ?o } LIMIT 1");
        }
        System.out.println("navqa-ontop: VALID");
        System.out.flush();
        System.exit(0);
    }

    private static void endpoint(Map<String, String> opts) throws Exception {
        int port = Integer.parseInt(opts.getOrDefault("port", "8080"));
        boolean dev = opts.containsKey("dev");
        // Bind first so that "port taken" is reported before the (slow) initialisation.
        HttpServer server = HttpServer.create(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
        long t0 = System.currentTimeMillis();
        OntopRepository repo = repository(opts);
        System.out.println("Ontop virtual repository initialized successfully!");
        server.createContext("/sparql", ex -> handleSparql(repo, ex));
        if (dev) {
            server.createContext("/ontop/reformulate", ex -> handleReformulate(repo, ex));
        }
        server.setExecutor(Executors.newFixedThreadPool(4));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop(0);
            try {
                repo.shutDown();
            } catch (RuntimeException ignored) {
                // shutting down anyway
            }
        }));
        server.start();
        System.out.println("navqa-ontop: READY port=" + port + " dev=" + dev + " init_ms="
                + (System.currentTimeMillis() - t0));
        System.out.flush();
    }

    private static Map<String, String> params(HttpExchange ex) throws IOException {
        Map<String, String> out = new HashMap<>();
        String rawQuery = ex.getRequestURI().getRawQuery();
        parseForm(rawQuery, out);
        if ("POST".equalsIgnoreCase(ex.getRequestMethod())) {
            String ct = String.valueOf(ex.getRequestHeaders().getFirst("Content-Type")).toLowerCase();
            byte[] body = readAll(ex.getRequestBody());
            String text = new String(body, StandardCharsets.UTF_8);
            if (ct.startsWith("application/sparql-query")) {
                out.put("query", text);
            } else if (ct.startsWith("application/sparql-update")) {
                out.put("update", text);
            } else {
                parseForm(text, out);
            }
        }
        return out;
    }

    private static void parseForm(String raw, Map<String, String> out) {
        if (raw == null || raw.isEmpty()) {
            return;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.put(k, v);
        }
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        in.transferTo(buf);
        return buf.toByteArray();
    }

    private static void send(HttpExchange ex, int status, String contentType, byte[] body)
            throws IOException {
        ex.getResponseHeaders().set("Content-Type", contentType);
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream os = ex.getResponseBody()) {
                os.write(body);
            }
        }
        ex.close();
    }

    private static void sendText(HttpExchange ex, int status, String text) throws IOException {
        send(ex, status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
    }

    private static String causeChain(Throwable t) {
        StringBuilder sb = new StringBuilder();
        Throwable c = t;
        int depth = 0;
        while (c != null && depth < 8) {
            if (sb.length() > 0) {
                sb.append(" <- ");
            }
            sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
            c = c.getCause() == c ? null : c.getCause();
            depth++;
        }
        return sb.toString();
    }

    private static void handleSparql(OntopRepository repo, HttpExchange ex) throws IOException {
        try {
            Map<String, String> p = params(ex);
            if (p.containsKey("update")) {
                sendText(ex, 501, "SPARQL UPDATE is not supported by a virtual knowledge graph");
                return;
            }
            String q = p.get("query");
            if (q == null || q.isBlank()) {
                sendText(ex, 400, "missing 'query' parameter");
                return;
            }
            ParsedQuery parsed;
            try {
                parsed = QueryParserUtil.parseQuery(QueryLanguage.SPARQL, q, null);
            } catch (MalformedQueryException e) {
                if (looksLikeUpdate(q)) {
                    sendText(ex, 501, "SPARQL UPDATE is not supported by a virtual knowledge graph");
                } else {
                    sendText(ex, 400, "Malformed query: " + e.getMessage());
                }
                return;
            }
            String accept = String.valueOf(ex.getRequestHeaders().getFirst("Accept")).toLowerCase();
            int timeout = 0;
            if (p.containsKey("timeout")) {
                timeout = Integer.parseInt(p.get("timeout"));
            }
            try (OntopRepositoryConnection conn = repo.getConnection()) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                if (parsed instanceof ParsedTupleQuery) {
                    TupleQuery tq = conn.prepareTupleQuery(QueryLanguage.SPARQL, q);
                    applyTimeout(tq, timeout);
                    tq.evaluate(new SPARQLResultsJSONWriter(out));
                    send(ex, 200, "application/sparql-results+json", out.toByteArray());
                } else if (parsed instanceof ParsedBooleanQuery) {
                    BooleanQuery bq = conn.prepareBooleanQuery(QueryLanguage.SPARQL, q);
                    applyTimeout(bq, timeout);
                    boolean value = bq.evaluate();
                    new SPARQLBooleanJSONWriter(out).handleBoolean(value);
                    send(ex, 200, "application/sparql-results+json", out.toByteArray());
                } else if (parsed instanceof ParsedGraphQuery) {
                    GraphQuery gq = conn.prepareGraphQuery(QueryLanguage.SPARQL, q);
                    applyTimeout(gq, timeout);
                    RDFFormat fmt = accept.contains("turtle") ? RDFFormat.TURTLE : RDFFormat.NTRIPLES;
                    gq.evaluate(Rio.createWriter(fmt, out));
                    send(ex, 200, fmt.getDefaultMIMEType() + "; charset=utf-8", out.toByteArray());
                } else {
                    sendText(ex, 400, "unsupported query form");
                }
            }
        } catch (MalformedQueryException e) {
            sendText(ex, 400, "Malformed query: " + e.getMessage());
        } catch (Throwable t) {
            sendText(ex, 500, causeChain(t));
        }
    }

    private static boolean looksLikeUpdate(String q) {
        String s = q.replaceAll("(?m)#.*$", "").replaceAll("(?is)PREFIX\\s+\\S*\\s*<[^>]*>", "")
                .replaceAll("(?is)BASE\\s*<[^>]*>", "").trim().toUpperCase();
        return s.startsWith("INSERT") || s.startsWith("DELETE") || s.startsWith("LOAD")
                || s.startsWith("CLEAR") || s.startsWith("DROP") || s.startsWith("CREATE")
                || s.startsWith("WITH") || s.startsWith("ADD") || s.startsWith("MOVE")
                || s.startsWith("COPY");
    }

    private static void applyTimeout(Query q, int seconds) {
        if (seconds > 0) {
            q.setMaxExecutionTime(seconds);
        }
    }

    private static void handleReformulate(OntopRepository repo, HttpExchange ex) throws IOException {
        try {
            Map<String, String> p = params(ex);
            String q = p.get("query");
            if (q == null || q.isBlank()) {
                sendText(ex, 400, "missing 'query' parameter");
                return;
            }
            try (OntopRepositoryConnection conn = repo.getConnection()) {
                String out = "sql".equals(p.get("format"))
                        ? conn.reformulateIntoNativeQuery(q)
                        : conn.reformulate(q);
                sendText(ex, 200, out);
            }
        } catch (MalformedQueryException e) {
            sendText(ex, 400, "Malformed query: " + e.getMessage());
        } catch (Throwable t) {
            sendText(ex, 500, causeChain(t));
        }
    }
}

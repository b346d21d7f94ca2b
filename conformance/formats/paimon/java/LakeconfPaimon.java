/*
 * Apache Paimon's own Java implementation (paimon-bundle) as a reader engine of lakeconf.
 *
 * Public Paimon API only: FileIO.get + FileStoreTableFactory.create, table.copy(options) for time
 * travel (scan.snapshot-id / scan.tag-name / scan.timestamp-millis), switchToBranch for branches,
 * ReadBuilder -> splits -> RecordReader<InternalRow>, and InternalRow getters by the table's RowType.
 *
 *   LakeconfPaimon read --uri URI --out FILE [--version N] [--timestamp ISO|MILLIS] [--ref NAME] [--conf K=V]...
 *   (--conf: Paimon catalog options such as s3.endpoint; for s3:// URIs without them, the AWS_* environment)
 *   LakeconfPaimon describe --uri URI --out FILE [same selectors]
 *   LakeconfPaimon version | serve
 *
 * read writes JSON lines: a header {"type": <the read RowType as Paimon's schema JSON>, "snapshot": id}
 * then one line per row, [rowKind, v1, v2, ...], every value lossless: integers as JSON numbers,
 * FLOAT/DOUBLE as their IEEE bits (int/long), DECIMAL as a plain string, CHAR/VARCHAR as strings,
 * BINARY/VARBINARY as base64, DATE as epoch days, TIME as millis of day, TIMESTAMP(_LTZ) as
 * [epochMillis, nanoOfMillisecond], ARRAY as a list, MAP/MULTISET as a list of [key, value] pairs,
 * ROW as a list of its fields. describe writes one JSON object (the kit's Paimon facts).
 *
 * Version 0 is the kit's "before the first commit": no rows, the latest schema (Paimon has no snapshot 0).
 * A ref is a tag if a tag of that name exists, else a branch.
 *
 * Exit codes (lakeconf's command contract): 0 ok, 3 unsupported, 4 invalid table (first stderr line =
 * reason), 1 anything else. serve reads one JSON array of arguments per line on stdin and answers each
 * with one line {"exit": N, "message": "..."} on stdout (everything else the JVM prints goes to stderr).
 */

import org.apache.paimon.CoreOptions;
import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.DataGetters;
import org.apache.paimon.data.InternalArray;
import org.apache.paimon.data.InternalMap;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.fs.FileIO;
import org.apache.paimon.fs.Path;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.TableSchema;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.ArrayType;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.LocalZonedTimestampType;
import org.apache.paimon.types.MapType;
import org.apache.paimon.types.MultisetType;
import org.apache.paimon.types.RowType;
import org.apache.paimon.types.TimestampType;
import org.apache.paimon.utils.JsonSerdeUtil;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

public final class LakeconfPaimon {
    static final String PAIMON_VERSION = "1.4.2";
    static final int EXIT_OK = 0, EXIT_ERROR = 1, EXIT_UNSUPPORTED = 3, EXIT_INVALID = 4;
    /** The last unexpected failure: its stack trace follows the reason on stderr (the JVM log in serve mode). */
    static Throwable lastError;

    /** A failure with the exit code it maps to (the adapter's own refusals). */
    static final class Refusal extends RuntimeException {
        final int exit;

        Refusal(int exit, String message) {
            super(message);
            this.exit = exit;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Entry points

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("serve")) {
            serve();
            return;
        }
        String[] result = run(args);
        int exit = Integer.parseInt(result[0]);
        if (exit == EXIT_OK) {
            if (result[1] != null) System.out.println(result[1]);
        } else {
            System.err.println(result[1]);
            if (lastError != null) lastError.printStackTrace(System.err);
        }
        System.out.flush();
        System.exit(exit);
    }

    /** {exit code, text}: the text is stdout's answer on success, else stderr's reason (first line). */
    static String[] run(String[] args) {
        if (args.length == 0) return new String[] {"2", "usage: LakeconfPaimon read|describe|version|serve ..."};
        try {
            switch (args[0]) {
                case "version":
                    return new String[] {"0", "paimon-bundle " + PAIMON_VERSION};
                case "read":
                case "describe":
                    Request r = Request.parse(args);
                    if (args[0].equals("read")) read(r);
                    else describe(r);
                    return new String[] {"0", null};
                default:
                    return new String[] {"2", "unknown command " + args[0]};
            }
        } catch (Throwable t) {
            int exit = classify(t);
            if (exit == EXIT_ERROR) lastError = t;
            return new String[] {String.valueOf(exit), reason(t)};
        }
    }

    /** One JVM for many requests: a JSON array of arguments per stdin line, one JSON answer per line. */
    static void serve() throws IOException {
        // A request can hang inside Paimon (a manifest whose Avro block count is negative loops forever);
        // when the process that started this JVM dies (a worker killed on timeout), the JVM must go too.
        ProcessHandle.current().parent().ifPresent(p -> p.onExit().thenRun(() -> Runtime.getRuntime().halt(3)));
        PrintStream protocol = new PrintStream(new FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        System.setOut(System.err); // whatever else prints must not corrupt the answers
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        protocol.println("{\"ready\": " + quote("paimon-bundle " + PAIMON_VERSION) + "}");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) continue;
            String[] result;
            try {
                result = run(parseStringArray(line));
            } catch (Throwable t) {
                result = new String[] {"2", "bad request: " + reason(t)};
            }
            if (lastError != null) {
                lastError.printStackTrace(System.err);
                lastError = null;
            }
            StringBuilder sb = new StringBuilder("{\"exit\": ").append(result[0]);
            if (result[1] != null) sb.append(", \"message\": ").append(quote(result[1]));
            protocol.println(sb.append('}'));
        }
    }

    // ------------------------------------------------------------------------------------------
    // Requests and the snapshot they select

    static final class Request {
        String uri, out, timestamp, ref;
        Long version;
        final Map<String, String> conf = new HashMap<>();

        static Request parse(String[] args) {
            Request r = new Request();
            for (int i = 1; i < args.length; i++) {
                String a = args[i];
                if (i + 1 >= args.length) throw new Refusal(2, "option " + a + " needs a value");
                String v = args[++i];
                switch (a) {
                    case "--uri": r.uri = v; break;
                    case "--out": r.out = v; break;
                    case "--version": r.version = Long.parseLong(v); break;
                    case "--timestamp": r.timestamp = v; break;
                    case "--ref": r.ref = v; break;
                    case "--format":
                        if (!v.equals("paimon")) throw new Refusal(EXIT_UNSUPPORTED, "paimon-java reads paimon tables only, not " + v);
                        break;
                    case "--conf": {
                        int eq = v.indexOf('=');
                        if (eq < 0) throw new Refusal(2, "--conf wants KEY=VALUE");
                        r.conf.put(v.substring(0, eq), v.substring(eq + 1));
                        break;
                    }
                    default: throw new Refusal(2, "unknown option " + a);
                }
            }
            if (r.uri == null || r.out == null) throw new Refusal(2, "--uri and --out are required");
            int chosen = (r.version != null ? 1 : 0) + (r.timestamp != null ? 1 : 0) + (r.ref != null ? 1 : 0);
            if (chosen > 1) throw new Refusal(2, "choose at most one of --version, --timestamp and --ref");
            return r;
        }
    }

    /** The table to read (time travel applied), the snapshot it reads (null: none), whether it is empty by choice. */
    static final class Selection {
        FileStoreTable table;
        Snapshot snapshot;
        boolean empty;
    }

    /** S3 settings from the environment (the command contract's AWS_* variables) unless given with --conf. */
    static void s3FromEnvironment(Request r) {
        if (!(r.uri.startsWith("s3://") || r.uri.startsWith("s3a://")) || r.conf.containsKey("s3.endpoint")) return;
        String endpoint = System.getenv("AWS_ENDPOINT_URL");
        if (endpoint != null && !endpoint.isEmpty()) {
            r.conf.put("s3.endpoint", endpoint);
            r.conf.put("s3.path.style.access", "true");
            if (endpoint.startsWith("http://")) r.conf.put("s3.connection.ssl.enabled", "false");
        }
        String key = System.getenv("AWS_ACCESS_KEY_ID"), secret = System.getenv("AWS_SECRET_ACCESS_KEY");
        if (key != null) r.conf.put("s3.access-key", key);
        if (secret != null) r.conf.put("s3.secret-key", secret);
        String region = System.getenv("AWS_REGION");
        if (region != null) r.conf.put("s3.region", region);
    }

    static FileStoreTable open(Request r) {
        s3FromEnvironment(r);
        if (r.uri.startsWith("s3a://")) r.uri = "s3://" + r.uri.substring(6); // paimon-s3 serves the s3 scheme
        Options options = new Options();
        for (Map.Entry<String, String> e : r.conf.entrySet()) options.set(e.getKey(), e.getValue());
        Path path = new Path(r.uri);
        FileIO io;
        try {
            io = FileIO.get(path, CatalogContext.create(options));
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
        return FileStoreTableFactory.create(io, path);
    }

    static long timestampMillis(String text) {
        String t = text.trim();
        if (t.matches("-?\\d+")) return Long.parseLong(t);
        try {
            return OffsetDateTime.parse(t.replace(" ", "T")).toInstant().toEpochMilli();
        } catch (RuntimeException ignored) {
            // no offset: UTC, as the kit reads a naive timestamp
        }
        try {
            return Instant.parse(t).toEpochMilli();
        } catch (RuntimeException ignored) {
            // fall through
        }
        try {
            return LocalDateTime.parse(t.replace(" ", "T")).toInstant(ZoneOffset.UTC).toEpochMilli();
        } catch (RuntimeException e) {
            throw new Refusal(2, "not an ISO-8601 timestamp: " + text);
        }
    }

    static Selection select(Request r) {
        FileStoreTable table = open(r);
        Selection s = new Selection();
        Map<String, String> travel = new HashMap<>();
        if (r.version != null) {
            if (r.version < 0) throw new Refusal(EXIT_INVALID, "version must be a snapshot id >= 0, got " + r.version);
            if (r.version == 0) { // the kit's "before the first commit"
                s.table = table;
                s.empty = true;
                return s;
            }
            s.snapshot = table.snapshotManager().snapshot(r.version);
            travel.put(CoreOptions.SCAN_SNAPSHOT_ID.key(), String.valueOf(r.version));
        } else if (r.timestamp != null) {
            long ms = timestampMillis(r.timestamp);
            s.snapshot = table.snapshotManager().earlierOrEqualTimeMills(ms);
            if (s.snapshot == null) {
                throw new Refusal(EXIT_INVALID, "no snapshot committed at or before " + ms + " ms");
            }
            travel.put(CoreOptions.SCAN_TIMESTAMP_MILLIS.key(), String.valueOf(ms));
        } else if (r.ref != null) {
            if (table.tagManager().tagExists(r.ref)) {
                s.snapshot = table.tagManager().getOrThrow(r.ref).trimToSnapshot();
                travel.put(CoreOptions.SCAN_TAG_NAME.key(), r.ref);
            } else if (table.branchManager().branchExists(r.ref)) {
                table = table.switchToBranch(r.ref);
                s.snapshot = table.snapshotManager().latestSnapshot();
            } else {
                throw new Refusal(EXIT_INVALID, "no tag or branch named '" + r.ref + "'");
            }
        } else {
            s.snapshot = table.snapshotManager().latestSnapshot();
        }
        s.table = travel.isEmpty() ? table : table.copy(travel);
        return s;
    }

    // ------------------------------------------------------------------------------------------
    // describe

    static void describe(Request r) throws IOException {
        Selection s = select(r);
        TableSchema schema = s.snapshot != null
                ? s.table.schemaManager().schema(s.snapshot.schemaId())
                : s.table.schemaManager().latest().orElseThrow(() -> new Refusal(EXIT_INVALID, "no schema file"));
        CoreOptions core = new CoreOptions(schema.options());
        StringBuilder b = new StringBuilder("{");
        b.append("\"snapshot_id\": ").append(s.snapshot == null ? "null" : String.valueOf(s.snapshot.id()));
        b.append(", \"schema_id\": ").append(schema.id());
        b.append(", \"primary_keys\": ").append(stringList(schema.primaryKeys()));
        b.append(", \"partition_keys\": ").append(stringList(schema.partitionKeys()));
        b.append(", \"bucket\": ").append(core.bucket());
        b.append(", \"merge_engine\": ").append(quote(core.mergeEngine().toString()));
        b.append(", \"options\": {");
        boolean first = true;
        for (Map.Entry<String, String> e : new TreeMap<>(schema.options()).entrySet()) {
            if (!first) b.append(", ");
            first = false;
            b.append(quote(e.getKey())).append(": ").append(quote(e.getValue()));
        }
        b.append("}, \"commit_kind\": ").append(s.snapshot == null ? "null" : quote(s.snapshot.commitKind().name()));
        b.append("}\n");
        try (Writer w = new OutputStreamWriter(new FileOutputStream(r.out), StandardCharsets.UTF_8)) {
            w.write(b.toString());
        }
    }

    static String stringList(List<String> items) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < items.size(); i++) b.append(i == 0 ? "" : ", ").append(quote(items.get(i)));
        return b.append(']').toString();
    }

    // ------------------------------------------------------------------------------------------
    // read

    static void read(Request r) throws Exception {
        Selection s = select(r);
        RowType rowType = s.table.rowType();
        checkTypes(rowType);
        String tmp = r.out + ".part";
        try (Writer w = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(tmp), StandardCharsets.UTF_8), 1 << 16)) {
            w.write("{\"type\": " + JsonSerdeUtil.toJson(rowType).replace("\n", " ")
                    + ", \"snapshot\": " + (s.snapshot == null || s.empty ? "null" : String.valueOf(s.snapshot.id())) + "}\n");
            if (!s.empty) {
                ReadBuilder rb = s.table.newReadBuilder();
                List<Split> splits = rb.newScan().plan().splits();
                List<DataField> fields = rowType.getFields();
                StringBuilder line = new StringBuilder();
                try (RecordReader<InternalRow> reader = rb.newRead().createReader(splits)) {
                    RecordReader.RecordIterator<InternalRow> batch;
                    while ((batch = reader.readBatch()) != null) {
                        InternalRow row;
                        while ((row = batch.next()) != null) {
                            line.setLength(0);
                            line.append('[').append(quote(row.getRowKind().shortString()));
                            for (int i = 0; i < fields.size(); i++) {
                                line.append(',');
                                value(line, row, i, fields.get(i).type());
                            }
                            line.append("]\n");
                            w.write(line.toString());
                        }
                        batch.releaseBatch();
                    }
                }
            }
        }
        java.nio.file.Files.move(java.nio.file.Paths.get(tmp), java.nio.file.Paths.get(r.out),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    /** Types the kit has no Arrow mapping for are refused before reading. */
    static void checkTypes(DataType t) {
        switch (t.getTypeRoot()) {
            case VARIANT:
            case BLOB:
            case VECTOR:
                throw new Refusal(EXIT_UNSUPPORTED, "paimon-java does not hand " + t.getTypeRoot() + " columns to the kit (no Arrow mapping)");
            case ARRAY: checkTypes(((ArrayType) t).getElementType()); break;
            case MULTISET: checkTypes(((MultisetType) t).getElementType()); break;
            case MAP: checkTypes(((MapType) t).getKeyType()); checkTypes(((MapType) t).getValueType()); break;
            case ROW: for (DataField f : ((RowType) t).getFields()) checkTypes(f.type()); break;
            default: break;
        }
    }

    static void value(StringBuilder b, DataGetters g, int pos, DataType t) {
        if (g.isNullAt(pos)) {
            b.append("null");
            return;
        }
        switch (t.getTypeRoot()) {
            case BOOLEAN: b.append(g.getBoolean(pos)); break;
            case TINYINT: b.append(g.getByte(pos)); break;
            case SMALLINT: b.append(g.getShort(pos)); break;
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE: b.append(g.getInt(pos)); break;
            case BIGINT: b.append(g.getLong(pos)); break;
            case FLOAT: b.append(Float.floatToRawIntBits(g.getFloat(pos))); break;
            case DOUBLE: b.append(Double.doubleToRawLongBits(g.getDouble(pos))); break;
            case CHAR:
            case VARCHAR: {
                BinaryString s = g.getString(pos);
                b.append(quote(s.toString()));
                break;
            }
            case BINARY:
            case VARBINARY: b.append('"').append(Base64.getEncoder().encodeToString(g.getBinary(pos))).append('"'); break;
            case DECIMAL: {
                DecimalType d = (DecimalType) t;
                b.append('"').append(g.getDecimal(pos, d.getPrecision(), d.getScale()).toBigDecimal().toPlainString()).append('"');
                break;
            }
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE: {
                int precision = t instanceof TimestampType ? ((TimestampType) t).getPrecision()
                        : ((LocalZonedTimestampType) t).getPrecision();
                Timestamp ts = g.getTimestamp(pos, precision);
                b.append('[').append(ts.getMillisecond()).append(',').append(ts.getNanoOfMillisecond()).append(']');
                break;
            }
            case ARRAY: {
                InternalArray a = g.getArray(pos);
                DataType e = ((ArrayType) t).getElementType();
                b.append('[');
                for (int i = 0; i < a.size(); i++) {
                    if (i > 0) b.append(',');
                    value(b, a, i, e);
                }
                b.append(']');
                break;
            }
            case MAP:
            case MULTISET: {
                InternalMap m = g.getMap(pos);
                DataType kt, vt;
                if (t instanceof MapType) {
                    kt = ((MapType) t).getKeyType();
                    vt = ((MapType) t).getValueType();
                } else {
                    kt = ((MultisetType) t).getElementType();
                    vt = new org.apache.paimon.types.IntType(false);
                }
                InternalArray ks = m.keyArray(), vs = m.valueArray();
                b.append('[');
                for (int i = 0; i < m.size(); i++) {
                    if (i > 0) b.append(',');
                    b.append('[');
                    value(b, ks, i, kt);
                    b.append(',');
                    value(b, vs, i, vt);
                    b.append(']');
                }
                b.append(']');
                break;
            }
            case ROW: {
                RowType rt = (RowType) t;
                InternalRow row = g.getRow(pos, rt.getFieldCount());
                b.append('[');
                for (int i = 0; i < rt.getFieldCount(); i++) {
                    if (i > 0) b.append(',');
                    value(b, row, i, rt.getTypeAt(i));
                }
                b.append(']');
                break;
            }
            default:
                throw new Refusal(EXIT_UNSUPPORTED, "paimon-java does not hand " + t.getTypeRoot() + " values to the kit");
        }
    }

    // ------------------------------------------------------------------------------------------
    // Errors: what Paimon's exception says about the table

    /** Words of failures that say nothing about the table: the store, the network, the engine's own install. */
    static final String[] NO_VERDICT = {
        "NoSuchBucket", "The specified bucket does not exist", "AccessDenied", "Access Denied", "403 Forbidden",
        "Status Code: 403", "SignatureDoesNotMatch", "InvalidAccessKeyId", "Connection refused", "UnknownHost",
        "timed out", "Unable to execute HTTP request",
    };

    static int classify(Throwable t) {
        if (t instanceof Refusal) return ((Refusal) t).exit;
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof Refusal) return ((Refusal) c).exit;
            if (c instanceof ClassNotFoundException || c instanceof LinkageError) return EXIT_ERROR;
            String msg = String.valueOf(c.getMessage());
            for (String words : NO_VERDICT) if (msg.contains(words)) return EXIT_ERROR;
        }
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof Refusal) return ((Refusal) c).exit;
            String name = c.getClass().getName();
            String msg = String.valueOf(c.getMessage());
            if (c instanceof UnsupportedOperationException) return EXIT_UNSUPPORTED;
            // an option value Paimon cannot parse (an enumerated option outside the values the spec lists,
            // a number that is none): the table's schema is invalid for this release
            if (msg.contains("Could not parse value")) return EXIT_INVALID;
            if (msg.contains("Could not find a file io implementation") || msg.contains("UnsupportedSchemeException")) {
                return EXIT_UNSUPPORTED;
            }
            if (c instanceof FileNotFoundException || c instanceof NoSuchFileException || c instanceof EOFException
                    || name.endsWith("SnapshotNotExistException") || name.endsWith("TableNotExistException")) {
                return EXIT_INVALID;
            }
            // metadata that does not parse, data files that are not what they claim to be
            if (name.contains("jackson") && (name.endsWith("JsonParseException") || name.endsWith("MismatchedInputException")
                    || name.endsWith("JsonMappingException") || name.endsWith("JsonEOFException"))) {
                return EXIT_INVALID;
            }
            if (msg.contains("doesn't exist") || msg.contains("does not exist") || msg.contains("Schema file not found")
                    || msg.contains("File not found") || msg.contains("file not found")
                    || msg.contains("is not a Parquet file") || msg.contains("Not an Avro data file")
                    || msg.contains("Invalid sync") || msg.contains("Malformed") || msg.contains("corrupt")
                    || msg.contains("Not a valid ORC file") || msg.contains("Unexpected end of input")
                    || msg.contains("Invalid magic number")) {
                return EXIT_INVALID;
            }
        }
        return EXIT_ERROR;
    }

    /** One line: the outermost exception and the deepest cause, with their classes. */
    static String reason(Throwable t) {
        if (t instanceof Refusal) return t.getMessage();
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        String text = t.getClass().getName() + ": " + t.getMessage();
        if (root != t) text += " (caused by " + root.getClass().getName() + ": " + root.getMessage() + ")";
        StackTraceElement[] frames = root.getStackTrace();
        if (frames.length > 0 && classify(t) == EXIT_ERROR) text += " [at " + frames[0] + "]";
        return text.replace('\n', ' ').replace('\r', ' ');
    }

    // ------------------------------------------------------------------------------------------
    // JSON

    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
            }
        }
        return b.append('"').toString();
    }

    /** A JSON array of strings (the serve protocol's requests). */
    static String[] parseStringArray(String text) {
        List<String> out = new ArrayList<>();
        int i = skip(text, 0);
        if (i >= text.length() || text.charAt(i) != '[') throw new IllegalArgumentException("expected [");
        i = skip(text, i + 1);
        if (i < text.length() && text.charAt(i) == ']') return new String[0];
        while (true) {
            if (text.charAt(i) != '"') throw new IllegalArgumentException("expected a string at " + i);
            StringBuilder b = new StringBuilder();
            i++;
            while (text.charAt(i) != '"') {
                char c = text.charAt(i++);
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = text.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u': b.append((char) Integer.parseInt(text.substring(i, i + 4), 16)); i += 4; break;
                    default: b.append(e);
                }
            }
            out.add(b.toString());
            i = skip(text, i + 1);
            char c = text.charAt(i);
            if (c == ']') break;
            if (c != ',') throw new IllegalArgumentException("expected , or ] at " + i);
            i = skip(text, i + 1);
        }
        return out.toArray(new String[0]);
    }

    static int skip(String s, int i) {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
        return i;
    }
}

/*
 * Apache Paimon's own Java implementation (paimon-bundle) as a reader and a writer engine of lakeconf.
 *
 * Public Paimon API only: FileIO.get + FileStoreTableFactory.create, table.copy(options) for time
 * travel (scan.snapshot-id / scan.tag-name / scan.timestamp-millis), switchToBranch for branches,
 * ReadBuilder -> splits -> RecordReader<InternalRow>, and InternalRow getters by the table's RowType;
 * for writes SchemaManager, BatchWriteBuilder and the classes Paimon's own Spark writer commits with
 * (see the write section).
 *
 *   LakeconfPaimon read --uri URI --out FILE [--version N] [--timestamp ISO|MILLIS] [--ref NAME] [--conf K=V]...
 *   (--conf: Paimon catalog options such as s3.endpoint; for s3:// URIs without them, the AWS_* environment)
 *   LakeconfPaimon describe --uri URI --out FILE [same selectors]
 *   LakeconfPaimon write --uri URI --steps FILE --out FILE [--conf K=V]...
 *   LakeconfPaimon files --uri URI --out FILE [--conf K=V]...
 *   LakeconfPaimon binaryrow --request JSON   (answers on stdout / in the serve answer's message; see binaryRows)
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
import org.apache.paimon.append.AppendCompactTask;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericArray;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.deletionvectors.Bitmap64DeletionVector;
import org.apache.paimon.deletionvectors.BitmapDeletionVector;
import org.apache.paimon.deletionvectors.DeletionVector;
import org.apache.paimon.deletionvectors.append.BaseAppendDeleteFileMaintainer;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.index.IndexFileHandler;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.manifest.FileKind;
import org.apache.paimon.manifest.IndexManifestEntry;
import org.apache.paimon.operation.BaseAppendFileStoreWrite;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.schema.SchemaManager;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.RowPartitionKeyExtractor;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.DeletionFile;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.RowKind;

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
                case "binaryrow":
                    if (args.length != 3 || !args[1].equals("--request")) throw new Refusal(2, "binaryrow wants --request JSON");
                    return new String[] {"0", binaryRows(args[2])};
                case "read":
                case "describe":
                case "files":
                case "write":
                    Request r = Request.parse(args);
                    if (args[0].equals("read")) read(r);
                    else if (args[0].equals("describe")) describe(r);
                    else if (args[0].equals("files")) files(r);
                    else write(r);
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
        String uri, out, timestamp, ref, steps;
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
                    case "--steps": r.steps = v; break;
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
        return FileStoreTableFactory.create(fileIO(r), new Path(r.uri));
    }

    /** The FileIO of the request's table location (S3 settings from --conf or the environment). */
    static FileIO fileIO(Request r) {
        s3FromEnvironment(r);
        if (r.uri.startsWith("s3a://")) r.uri = "s3://" + r.uri.substring(6); // paimon-s3 serves the s3 scheme
        Options options = new Options();
        for (Map.Entry<String, String> e : r.conf.entrySet()) options.set(e.getKey(), e.getValue());
        try {
            return FileIO.get(new Path(r.uri), CatalogContext.create(options));
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
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
    // write: the kit's build steps, each through Paimon's own write API
    //
    // The steps file is {"steps": [op, ...]}, run in order; each op is one of
    //   {"op": "create", "fields": [{"name", "type": <Paimon schema JSON type>}], "partition_keys": [..],
    //    "primary_keys": [..], "options": {..}}                     SchemaManager.createTable
    //   {"op": "schema", "changes": [{"set_option": [k, v]} | {"add_column": {"name", "type"}} |
    //    {"rename_column": [old, new]} | {"drop_column": name} | {"update_column_type": {"name", "type"}} |
    //    {"move": {"name", "after": name|null}}]}                    SchemaManager.commitChanges (one schema)
    //   {"op": "write", "columns": [names], "chunks": [[row, ...], ...], "branch": name|null,
    //    "overwrite": bool, "drop_files": [file names], "dv_deletes": {file name: [row positions]}}
    //        one commit: each chunk through its own BatchTableWrite (one data file each), a row being
    //        [rowKind, v1, ...] in the read encoding above with the values of "columns" (matched to the
    //        table's fields by name, absent ones null); "drop_files" are deleted from the table (a
    //        copy-on-write rewrite, their live rows among the chunks); "dv_deletes" become deletion vectors
    //   {"op": "compact"}                                            full compaction of every partition/bucket
    //   {"op": "tag" | "branch", "name": n, "snapshot": id|null}     createTag / createBranch
    //   {"op": "expire", "retain_last": n}                           ExpireSnapshots
    // and --out receives {"snapshot": the latest snapshot id or null}.
    //
    // files writes, for an append table's latest snapshot, every data file's physical rows (deletion
    // vectors not applied): the read header, then per file {"file": name, "rows": n, "deleted": [positions]}
    // followed by its n rows in the read encoding (row i is the file's row position i).

    static final org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper JSON =
            JsonSerdeUtil.OBJECT_MAPPER_INSTANCE;

    static void write(Request r) throws Exception {
        if (r.steps == null) throw new Refusal(2, "write needs --steps FILE");
        JsonNode doc = JSON.readTree(new java.io.File(r.steps));
        FileIO io = fileIO(r);
        Path path = new Path(r.uri);
        java.nio.file.Path spill = java.nio.file.Files.createTempDirectory("lakeconf-paimon-io-");
        // Paimon spills sorted runs and lookup files (primary-key tables with deletion vectors, lookup
        // changelogs) through an IOManager; writes without one fail on those tables.
        try (IOManager ioManager = IOManager.create(spill.toString())) {
            for (JsonNode op : doc.get("steps")) {
                String kind = op.get("op").asText();
                switch (kind) {
                    case "create": create(io, path, op); break;
                    case "schema": alter(io, path, op); break;
                    case "write": writeRows(table(io, path, op), op, ioManager); break;
                    case "compact": compact(table(io, path, op), ioManager); break;
                    case "tag": tag(table(io, path, op), op); break;
                    case "branch": branch(table(io, path, op), op); break;
                    case "expire": expire(table(io, path, op), op); break;
                    default: throw new Refusal(2, "unknown write op " + kind);
                }
            }
        } finally {
            try (java.util.stream.Stream<java.nio.file.Path> walk = java.nio.file.Files.walk(spill)) {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        Snapshot latest = FileStoreTableFactory.create(io, path).snapshotManager().latestSnapshot();
        try (Writer w = new OutputStreamWriter(new FileOutputStream(r.out), StandardCharsets.UTF_8)) {
            w.write("{\"snapshot\": " + (latest == null ? "null" : String.valueOf(latest.id())) + "}\n");
        }
    }

    static FileStoreTable table(FileIO io, Path path, JsonNode op) {
        FileStoreTable t = FileStoreTableFactory.create(io, path);
        String branch = text(op.get("branch"));
        return branch == null || branch.equals("main") ? t : t.switchToBranch(branch);
    }

    static String text(JsonNode n) {
        return n == null || n.isNull() ? null : n.asText();
    }

    static List<String> strings(JsonNode n) {
        List<String> out = new ArrayList<>();
        if (n != null) for (JsonNode s : n) out.add(s.asText());
        return out;
    }

    static void create(FileIO io, Path path, JsonNode op) throws Exception {
        Schema.Builder b = Schema.newBuilder();
        for (JsonNode f : op.get("fields")) b.column(f.get("name").asText(), DataTypeJsonParser.parseDataType(f.get("type")));
        b.partitionKeys(strings(op.get("partition_keys")));
        b.primaryKey(strings(op.get("primary_keys")));
        Map<String, String> options = new HashMap<>();
        op.get("options").fields().forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
        b.options(options);
        new SchemaManager(io, path).createTable(b.build());
    }

    static void alter(FileIO io, Path path, JsonNode op) throws Exception {
        List<SchemaChange> changes = new ArrayList<>();
        for (JsonNode c : op.get("changes")) {
            String kind = c.fieldNames().next();
            JsonNode v = c.get(kind);
            switch (kind) {
                case "set_option": changes.add(SchemaChange.setOption(v.get(0).asText(), v.get(1).asText())); break;
                case "add_column":
                    changes.add(SchemaChange.addColumn(v.get("name").asText(), DataTypeJsonParser.parseDataType(v.get("type"))));
                    break;
                case "rename_column": changes.add(SchemaChange.renameColumn(v.get(0).asText(), v.get(1).asText())); break;
                case "drop_column": changes.add(SchemaChange.dropColumn(v.asText())); break;
                case "update_column_type": // the column keeps its nullability, as ALTER COLUMN TYPE does
                    changes.add(SchemaChange.updateColumnType(v.get("name").asText(),
                            DataTypeJsonParser.parseDataType(v.get("type")), true));
                    break;
                case "move": {
                    String name = v.get("name").asText(), after = text(v.get("after"));
                    changes.add(SchemaChange.updateColumnPosition(after == null ? SchemaChange.Move.first(name)
                            : SchemaChange.Move.after(name, after)));
                    break;
                }
                default: throw new Refusal(2, "unknown schema change " + kind);
            }
        }
        new SchemaManager(io, path).commitChanges(changes);
    }

    static void writeRows(FileStoreTable table, JsonNode op, IOManager ioManager) throws Exception {
        boolean overwrite = op.path("overwrite").asBoolean(false);
        if (table.bucketMode() == BucketMode.KEY_DYNAMIC) {
            throw new Refusal(EXIT_UNSUPPORTED, "a dynamic-bucket table whose primary key leaves out a partition key "
                    + "needs Paimon's cross-partition index assigner (a Flink or Spark job), not in the core batch write API");
        }
        // INSERT OVERWRITE replaces the whole table (Paimon's default would replace only the partitions written)
        FileStoreTable t = overwrite ? table.copy(java.util.Collections.singletonMap(
                CoreOptions.DYNAMIC_PARTITION_OVERWRITE.key(), "false")) : table;
        BatchWriteBuilder wb = t.newBatchWriteBuilder();
        if (overwrite) wb = wb.withOverwrite();
        RowType rowType = t.rowType();
        List<String> columns = strings(op.get("columns"));
        int[] source = new int[rowType.getFieldCount()];
        for (int i = 0; i < source.length; i++) source[i] = columns.indexOf(rowType.getFields().get(i).name());
        for (String c : columns) {
            if (!rowType.getFieldNames().contains(c)) throw new Refusal(EXIT_UNSUPPORTED, "the table has no column " + c);
        }
        // Dynamic bucket mode: the writer is told each row's bucket, from Paimon's own hash-index assigner
        // (what Spark's and Flink's writers run before the write).
        HashBucketAssigner assigner = null;
        RowPartitionKeyExtractor keys = null;
        if (t.bucketMode() == BucketMode.HASH_DYNAMIC) {
            CoreOptions core = t.coreOptions();
            Integer max = core.dynamicBucketMaxBuckets();
            assigner = new HashBucketAssigner(t.snapshotManager(), java.util.UUID.randomUUID().toString(),
                    t.store().newIndexFileHandler(), 1, 1, 0, core.dynamicBucketTargetRowNum(), max == null ? -1 : max);
            keys = new RowPartitionKeyExtractor(t.schema());
        }
        List<CommitMessage> messages = new ArrayList<>();
        for (JsonNode chunk : op.path("chunks")) {
            try (BatchTableWrite w = wb.newWrite()) {
                w.withIOManager(ioManager);
                for (JsonNode row : chunk) {
                    GenericRow g = new GenericRow(RowKind.fromShortString(row.get(0).asText()), source.length);
                    for (int i = 0; i < source.length; i++) {
                        if (source[i] >= 0) g.setField(i, decode(row.get(source[i] + 1), rowType.getTypeAt(i)));
                    }
                    if (assigner != null) w.write(g, assigner.assign(keys.partition(g), keys.trimmedPrimaryKey(g).hashCode()));
                    else w.write(g);
                }
                messages.addAll(w.prepareCommit());
            }
        }
        messages.addAll(dropFiles(t, strings(op.get("drop_files"))));
        if (op.hasNonNull("dv_deletes") && op.get("dv_deletes").size() > 0) messages.addAll(deletionVectors(t, op.get("dv_deletes")));
        try (BatchTableCommit c = wb.newCommit()) {
            c.commit(messages);
        }
    }

    /** The data splits of the table's latest snapshot (deletion files attached where the table has them). */
    static List<DataSplit> liveSplits(FileStoreTable t) {
        List<DataSplit> out = new ArrayList<>();
        for (Split s : t.newReadBuilder().newScan().plan().splits()) out.add((DataSplit) s);
        return out;
    }

    /** Commit messages removing the named data files (a copy-on-write rewrite: their live rows are rewritten). */
    static List<CommitMessage> dropFiles(FileStoreTable t, List<String> names) {
        List<CommitMessage> out = new ArrayList<>();
        if (names.isEmpty()) return out;
        java.util.Set<String> wanted = new java.util.HashSet<>(names);
        for (DataSplit s : liveSplits(t)) {
            List<DataFileMeta> doomed = new ArrayList<>();
            for (int i = 0; i < s.dataFiles().size(); i++) {
                DataFileMeta f = s.dataFiles().get(i);
                if (!wanted.remove(f.fileName())) continue;
                if (s.deletionFiles().isPresent() && s.deletionFiles().get().get(i) != null) {
                    throw new Refusal(EXIT_UNSUPPORTED, "rewriting a data file that has a deletion vector ("
                            + f.fileName() + ") is not done by this engine");
                }
                doomed.add(f);
            }
            if (!doomed.isEmpty()) {
                out.add(new CommitMessageImpl(s.partition(), s.bucket(), s.totalBuckets(),
                        new DataIncrement(java.util.Collections.emptyList(), doomed, java.util.Collections.emptyList()),
                        CompactIncrement.emptyIncrement()));
            }
        }
        if (!wanted.isEmpty()) throw new Refusal(2, "no live data file named " + wanted);
        return out;
    }

    /** Commit messages of new deletion vectors (merged with a file's existing one), as Spark's DELETE writes them. */
    static List<CommitMessage> deletionVectors(FileStoreTable t, JsonNode deletes) {
        CoreOptions core = t.coreOptions();
        if (!core.deletionVectorsEnabled()) {
            throw new Refusal(EXIT_UNSUPPORTED, "the table does not enable deletion vectors ('deletion-vectors.enabled')");
        }
        if (!t.primaryKeys().isEmpty()) {
            throw new Refusal(EXIT_UNSUPPORTED, "deletion vectors of a primary-key table are written by its compaction, not by a delete");
        }
        Snapshot snapshot = t.snapshotManager().latestSnapshot();
        IndexFileHandler handler = t.store().newIndexFileHandler();
        java.util.Set<String> pending = new java.util.HashSet<>();
        deletes.fieldNames().forEachRemaining(pending::add);
        // one maintainer per partition and bucket (a bucket's files may come in several splits)
        Map<List<Object>, BaseAppendDeleteFileMaintainer> maintainers = new java.util.LinkedHashMap<>();
        Map<List<Object>, Integer> totalBuckets = new HashMap<>();
        for (DataSplit s : liveSplits(t)) {
            List<Object> key = java.util.Arrays.asList(s.partition(), s.bucket());
            for (DataFileMeta f : s.dataFiles()) {
                JsonNode positions = deletes.get(f.fileName());
                if (positions == null) continue;
                pending.remove(f.fileName());
                BaseAppendDeleteFileMaintainer maintainer = maintainers.computeIfAbsent(key, k ->
                        t.bucketMode() == BucketMode.BUCKET_UNAWARE
                                ? BaseAppendDeleteFileMaintainer.forUnawareAppend(handler, snapshot, s.partition())
                                : BaseAppendDeleteFileMaintainer.forBucketedAppend(handler, snapshot, s.partition(), s.bucket()));
                totalBuckets.put(key, s.totalBuckets());
                DeletionVector dv = core.deletionVectorBitmap64() ? new Bitmap64DeletionVector() : new BitmapDeletionVector();
                for (JsonNode p : positions) dv.delete(p.asLong());
                maintainer.notifyNewDeletionVector(f.fileName(), dv);
            }
        }
        if (!pending.isEmpty()) throw new Refusal(2, "no live data file named " + pending);
        List<CommitMessage> out = new ArrayList<>();
        for (Map.Entry<List<Object>, BaseAppendDeleteFileMaintainer> e : maintainers.entrySet()) {
            BaseAppendDeleteFileMaintainer maintainer = e.getValue();
            List<IndexFileMeta> added = new ArrayList<>(), removed = new ArrayList<>();
            for (IndexManifestEntry entry : maintainer.persist()) {
                (entry.kind() == FileKind.ADD ? added : removed).add(entry.indexFile());
            }
            out.add(new CommitMessageImpl(maintainer.getPartition(), maintainer.getBucket(), totalBuckets.get(e.getKey()),
                    new DataIncrement(java.util.Collections.emptyList(), java.util.Collections.emptyList(),
                            java.util.Collections.emptyList(), added, removed),
                    CompactIncrement.emptyIncrement()));
        }
        return out;
    }

    /** Full compaction: every bucket of every partition (append tables without buckets: all files of a
     * partition into one, deletion vectors applied), one COMPACT commit. */
    static void compact(FileStoreTable t, IOManager ioManager) throws Exception {
        BatchWriteBuilder wb = t.newBatchWriteBuilder();
        List<CommitMessage> messages = new ArrayList<>();
        if (t.bucketMode() == BucketMode.BUCKET_UNAWARE) {
            Map<org.apache.paimon.data.BinaryRow, List<DataFileMeta>> files = new java.util.LinkedHashMap<>();
            java.util.Set<org.apache.paimon.data.BinaryRow> withDv = new java.util.HashSet<>();
            for (DataSplit s : liveSplits(t)) {
                files.computeIfAbsent(s.partition(), k -> new ArrayList<>()).addAll(s.dataFiles());
                if (s.deletionFiles().isPresent() && s.deletionFiles().get().stream().anyMatch(d -> d != null)) withDv.add(s.partition());
            }
            BaseAppendFileStoreWrite write = (BaseAppendFileStoreWrite) t.store().newWrite(java.util.UUID.randomUUID().toString());
            try {
                for (Map.Entry<org.apache.paimon.data.BinaryRow, List<DataFileMeta>> e : files.entrySet()) {
                    if (e.getValue().size() > 1 || withDv.contains(e.getKey())) {
                        messages.add(new AppendCompactTask(e.getKey(), e.getValue()).doCompact(t, write));
                    }
                }
            } finally {
                write.close();
            }
        } else if (t.bucketMode() == BucketMode.POSTPONE_MODE) {
            throw new Refusal(EXIT_UNSUPPORTED, "a postpone-bucket table is compacted by Paimon's postpone compaction "
                    + "job (Flink/Spark), which assigns its buckets; the core write API has no such compaction");
        } else {
            java.util.Set<List<Object>> buckets = new java.util.LinkedHashSet<>();
            for (org.apache.paimon.manifest.ManifestEntry e : t.store().newScan().plan().files()) {
                buckets.add(java.util.Arrays.asList(e.partition(), e.bucket()));
            }
            try (BatchTableWrite w = wb.newWrite()) {
                w.withIOManager(ioManager);
                for (List<Object> b : buckets) w.compact((org.apache.paimon.data.BinaryRow) b.get(0), (Integer) b.get(1), true);
                messages.addAll(w.prepareCommit());
            }
        }
        if (messages.stream().allMatch(m -> ((CommitMessageImpl) m).isEmpty())) return; // nothing to compact: no snapshot
        try (BatchTableCommit c = wb.newCommit()) {
            c.commit(messages);
        }
    }

    static void tag(FileStoreTable t, JsonNode op) {
        String name = op.get("name").asText();
        if (op.hasNonNull("snapshot")) t.createTag(name, op.get("snapshot").asLong());
        else t.createTag(name);
    }

    /** A branch at a snapshot: Paimon branches from a tag, so from a tag of that snapshot if there is one,
     * else from a new tag lakeconf-branch-base-NAME. That tag stays: main's snapshot expiration keeps the
     * files of tagged snapshots only, so a branch whose base tag is gone loses its files when main expires. */
    static void branch(FileStoreTable t, JsonNode op) {
        String name = op.get("name").asText();
        Snapshot latest = t.snapshotManager().latestSnapshot();
        Long id = op.hasNonNull("snapshot") ? Long.valueOf(op.get("snapshot").asLong()) : latest == null ? null : latest.id();
        if (id == null || id == 0) { // no snapshot yet: an empty branch of the schema
            t.createBranch(name);
            return;
        }
        for (Map.Entry<Snapshot, List<String>> e : t.tagManager().tags().entrySet()) {
            if (e.getKey().id() == id) {
                t.createBranch(name, new java.util.TreeSet<>(e.getValue()).first());
                return;
            }
        }
        String base = "lakeconf-branch-base-" + name;
        t.createTag(base, id);
        t.createBranch(name, base);
    }

    static void expire(FileStoreTable t, JsonNode op) {
        int keep = op.get("retain_last").asInt();
        // no time retention: the count alone decides, as the step asks
        t.newExpireSnapshots().config(ExpireConfig.builder().snapshotRetainMax(keep).snapshotRetainMin(keep)
                .snapshotTimeRetain(java.time.Duration.ZERO).snapshotMaxDeletes(Integer.MAX_VALUE).build()).expire();
    }

    /** A value of type t from its read encoding (the inverse of value()). */
    static Object decode(JsonNode v, DataType t) {
        if (v == null || v.isNull()) return null;
        switch (t.getTypeRoot()) {
            case BOOLEAN: return v.asBoolean();
            case TINYINT: return (byte) v.asInt();
            case SMALLINT: return (short) v.asInt();
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE: return v.asInt();
            case BIGINT: return v.asLong();
            case FLOAT: return Float.intBitsToFloat(v.asInt());
            case DOUBLE: return Double.longBitsToDouble(v.asLong());
            case CHAR:
            case VARCHAR: return BinaryString.fromString(v.asText());
            case BINARY:
            case VARBINARY: return Base64.getDecoder().decode(v.asText());
            // only binaryrow sends these (the kit has no Arrow mapping for them): [value, metadata] / the blob's bytes
            case VARIANT:
                return new org.apache.paimon.data.variant.GenericVariant(Base64.getDecoder().decode(v.get(0).asText()),
                        Base64.getDecoder().decode(v.get(1).asText()));
            case BLOB: return org.apache.paimon.data.Blob.fromData(Base64.getDecoder().decode(v.asText()));
            case DECIMAL: {
                DecimalType d = (DecimalType) t;
                Decimal x = Decimal.fromBigDecimal(new java.math.BigDecimal(v.asText()), d.getPrecision(), d.getScale());
                if (x == null) throw new Refusal(2, v.asText() + " does not fit " + t);
                return x;
            }
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE: return Timestamp.fromEpochMillis(v.get(0).asLong(), v.get(1).asInt());
            case ARRAY: {
                DataType e = ((ArrayType) t).getElementType();
                Object[] out = new Object[v.size()];
                for (int i = 0; i < out.length; i++) out[i] = decode(v.get(i), e);
                return new GenericArray(out);
            }
            case MAP:
            case MULTISET: {
                DataType kt = t instanceof MapType ? ((MapType) t).getKeyType() : ((MultisetType) t).getElementType();
                DataType vt = t instanceof MapType ? ((MapType) t).getValueType() : new org.apache.paimon.types.IntType(false);
                Map<Object, Object> out = new java.util.LinkedHashMap<>();
                for (JsonNode kv : v) out.put(decode(kv.get(0), kt), decode(kv.get(1), vt));
                return new GenericMap(out);
            }
            case ROW: {
                RowType rt = (RowType) t;
                GenericRow out = new GenericRow(rt.getFieldCount());
                for (int i = 0; i < rt.getFieldCount(); i++) out.setField(i, decode(v.get(i), rt.getTypeAt(i)));
                return out;
            }
            default:
                throw new Refusal(EXIT_UNSUPPORTED, "paimon-java takes no " + t.getTypeRoot() + " values from the kit");
        }
    }

    static void files(Request r) throws Exception {
        FileStoreTable t = open(r);
        RowType rowType = t.rowType();
        checkTypes(rowType);
        Snapshot latest = t.snapshotManager().latestSnapshot();
        List<DataField> fields = rowType.getFields();
        try (Writer w = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(r.out), StandardCharsets.UTF_8), 1 << 16)) {
            w.write("{\"type\": " + JsonSerdeUtil.toJson(rowType).replace("\n", " ")
                    + ", \"snapshot\": " + (latest == null ? "null" : String.valueOf(latest.id())) + "}\n");
            if (latest == null) return;
            if (!t.primaryKeys().isEmpty()) throw new Refusal(2, "files lists the data files of append tables only");
            StringBuilder line = new StringBuilder();
            for (DataSplit s : liveSplits(t)) {
                for (int i = 0; i < s.dataFiles().size(); i++) {
                    DataFileMeta f = s.dataFiles().get(i);
                    DeletionFile df = s.deletionFiles().isPresent() ? s.deletionFiles().get().get(i) : null;
                    DeletionVector dv = df == null ? null : DeletionVector.read(t.fileIO(), df);
                    // one file alone, without its deletion vector: rows in the file's own order
                    DataSplit one = DataSplit.builder().withSnapshot(s.snapshotId()).withPartition(s.partition())
                            .withBucket(s.bucket()).withBucketPath(s.bucketPath()).withTotalBuckets(s.totalBuckets())
                            .withDataFiles(java.util.Collections.singletonList(f)).rawConvertible(true).build();
                    List<String> rows = new ArrayList<>();
                    List<Long> deleted = new ArrayList<>();
                    try (RecordReader<InternalRow> reader = t.newReadBuilder().newRead().createReader(one)) {
                        RecordReader.RecordIterator<InternalRow> batch;
                        while ((batch = reader.readBatch()) != null) {
                            InternalRow row;
                            while ((row = batch.next()) != null) {
                                if (dv != null && dv.isDeleted(rows.size())) deleted.add((long) rows.size());
                                line.setLength(0);
                                line.append('[').append(quote(row.getRowKind().shortString()));
                                for (int k = 0; k < fields.size(); k++) {
                                    line.append(',');
                                    value(line, row, k, fields.get(k).type());
                                }
                                rows.add(line.append("]\n").toString());
                            }
                            batch.releaseBatch();
                        }
                    }
                    w.write("{\"file\": " + quote(f.fileName()) + ", \"rows\": " + rows.size() + ", \"deleted\": " + deleted + "}\n");
                    for (String row : rows) w.write(row);
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // binaryrow: the bytes Paimon itself writes for rows of values (the kit's BinaryRow conformance)
    //
    // The request is one JSON object
    //   {"fields": [type, ...], "rows": [[rowKind, v1, ...], ...], "buckets": [n, ...]}
    // where a type is Paimon's schema JSON of a type (a type string such as "DECIMAL(20, 2) NOT NULL",
    // or the object of a nested ROW/ARRAY/MAP/MULTISET) or a schema field {"name", "type", ...}, and the
    // values are in the read encoding (the header; besides it VARIANT as [value, metadata] and BLOB as
    // its data, both base64). The answer is one JSON object
    //   {"rows": [{"bytes": hex, "projected": hex|null, "serialized": hex, "hash": int,
    //              "buckets": {"default": [b per n] | "error", "mod": ..., "hive": ...}}, ...]}
    // bytes: InternalRowSerializer.toBinaryRow of the GenericRow (RowHelper: what SimpleStats and the
    // writers' key/value serialization produce); projected: the code-generated identity projection
    // (CodeGenUtils.newProjection: how partitions and bucket keys are extracted from records; always
    // header INSERT; null for row types the code generator refuses: VARIANT, BLOB). The two are separate
    // paths through Paimon, so the kit compares its bytes with both. serialized:
    // SerializationUtils.serializeBinaryRow (the manifests' arity-prefixed form). hash: BinaryRow.hashCode.
    // buckets: BucketFunction.create(type, rowType).bucket(row, n) for every n, for +I rows only (a
    // bucket-key row is always INSERT; DefaultBucketFunction asserts it); a function that refuses the
    // row type or the value gives its error message instead.

    static String binaryRows(String text) throws Exception {
        JsonNode req = JSON.readTree(text);
        List<DataField> fields = new ArrayList<>();
        int id = 0;
        for (JsonNode f : req.path("fields")) {
            JsonNode type = f.isObject() && f.has("name") && f.has("type") ? f.get("type") : f;
            fields.add(new DataField(id, "f" + id, DataTypeJsonParser.parseDataType(type)));
            id++;
        }
        RowType rowType = new RowType(fields);
        int arity = fields.size();
        org.apache.paimon.data.serializer.InternalRowSerializer serializer =
                new org.apache.paimon.data.serializer.InternalRowSerializer(rowType);
        int[] identity = new int[arity];
        for (int i = 0; i < arity; i++) identity[i] = i;
        org.apache.paimon.codegen.Projection projection = null;
        try {
            projection = org.apache.paimon.codegen.CodeGenUtils.newProjection(rowType, identity);
        } catch (RuntimeException e) { // the code generator refuses VARIANT/BLOB (no partition or bucket key is one)
            System.err.println("binaryrow: no projection of " + rowType + ": " + reason(e));
        }
        List<Integer> counts = new ArrayList<>();
        for (JsonNode n : req.path("buckets")) counts.add(n.asInt());
        String[] fnNames = {"default", "mod", "hive"};
        org.apache.paimon.bucket.BucketFunction[] fns = new org.apache.paimon.bucket.BucketFunction[fnNames.length];
        String[] fnErrors = new String[fnNames.length];
        for (int k = 0; k < fnNames.length && !counts.isEmpty(); k++) {
            try {
                fns[k] = org.apache.paimon.bucket.BucketFunction.create(
                        CoreOptions.BucketFunctionType.valueOf(fnNames[k].toUpperCase(java.util.Locale.ROOT)), rowType);
            } catch (RuntimeException e) { // mod takes one INT/BIGINT key, hive a subset of the types
                fnErrors[k] = reason(e);
            }
        }
        StringBuilder b = new StringBuilder("{\"rows\": [");
        int r = 0;
        for (JsonNode row : req.path("rows")) {
            if (row.size() != arity + 1) throw new Refusal(2, "row " + r + " has " + (row.size() - 1) + " values for " + arity + " fields");
            GenericRow g = new GenericRow(RowKind.fromShortString(row.get(0).asText()), arity);
            for (int i = 0; i < arity; i++) g.setField(i, decode(row.get(i + 1), fields.get(i).type()));
            // both rows are reused by their writers: copy before the next row overwrites them
            org.apache.paimon.data.BinaryRow bytes = serializer.toBinaryRow(g).copy();
            org.apache.paimon.data.BinaryRow projected = projection == null ? null : projection.apply(g).copy();
            if (r > 0) b.append(", ");
            b.append("{\"bytes\": \"").append(hex(bytes.toBytes()))
                    .append("\", \"projected\": ").append(projected == null ? "null" : quote(hex(projected.toBytes())))
                    .append(", \"serialized\": \"").append(hex(org.apache.paimon.utils.SerializationUtils.serializeBinaryRow(bytes)))
                    .append("\", \"hash\": ").append(bytes.hashCode()).append(", \"buckets\": {");
            for (int k = 0; k < fnNames.length; k++) {
                if (k > 0) b.append(", ");
                b.append(quote(fnNames[k])).append(": ");
                if (counts.isEmpty() || g.getRowKind() != RowKind.INSERT) {
                    b.append("null");
                } else if (fns[k] == null) {
                    b.append(quote(fnErrors[k]));
                } else {
                    StringBuilder one = new StringBuilder("[");
                    try {
                        for (int c = 0; c < counts.size(); c++) one.append(c > 0 ? ", " : "").append(fns[k].bucket(bytes, counts.get(c)));
                        b.append(one.append(']'));
                    } catch (RuntimeException e) {
                        b.append(quote(reason(e)));
                    }
                }
            }
            b.append("}}");
            r++;
        }
        return b.append("]}").toString();
    }

    static String hex(byte[] data) {
        StringBuilder b = new StringBuilder(data.length * 2);
        for (byte x : data) b.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        return b.toString();
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
            // options Paimon refuses together (FieldAggregatorFactory: remove-record-on-delete with a field's
            // ignore-retract "have conflicting behavior"): the table's options are invalid, not the engine broken
            if (msg.contains("conflicting behavior")) return EXIT_INVALID;
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

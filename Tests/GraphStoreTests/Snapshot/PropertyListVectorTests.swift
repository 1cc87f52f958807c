import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Binary property lists written by others (``Fixtures/PlistVectors``): CPython's and
/// swift-foundation's invalid and corrupt files are refused with an error at a byte, and
/// refused as stores with the file left as it was; their valid files read to the values
/// Python's `plistlib` reads.
@Suite struct PropertyListVectorTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/PlistVectors")

    /// The invalid and corrupt files, by path under ``directory``.
    static let invalidFiles: [String] = {
        let files = FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String } ?? []
        return files.filter {
            $0.hasPrefix("cpython/invalid/") && $0.hasSuffix(".bin") || $0.hasPrefix("swift-foundation/inline_corrupt/")
                || $0.hasSuffix(".bad") || $0 == "cpython/KEYED_ARCHIVE.bplist"
        }.sorted()
    }()

    /// Files the generic reader reads as a value, where CPython refuses them: an ASCII string
    /// holding a byte above 127 (read as Latin-1, as CoreFoundation reads that marker), and
    /// dates a Python `datetime` cannot hold, which a `Date` can. Opening one as a store is
    /// still refused: it is not a snapshot.
    static let readByTheGenericReader = [
        "cpython/invalid/29_invalid_ASCII.bin", "cpython/invalid/36_too_large_datetime_datetime_overflow.bin",
        "cpython/invalid/37_too_large_datetime_timedelta_overflow.bin", "cpython/invalid/38_invalid_datetime_Infinity.bin",
        "cpython/invalid/39_invalid_datetime_NaN.bin",
    ]

    @Test func everyVectorIsThere() {
        #expect(Self.invalidFiles.count == 40 + 9 + 3 + 1)
    }

    @Test(arguments: invalidFiles)
    func theGenericReaderRefusesAnInvalidFileAtAByte(_ name: String) throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent(name))
        if Self.readByTheGenericReader.contains(name) {
            let value = try SnapshotValue.readPropertyList(data)
            switch value {
            case .string(let text): #expect(text == "\u{FF}")
            case .date(let date): #expect(!date.timeIntervalSinceReferenceDate.isFinite || abs(date.timeIntervalSinceReferenceDate) > 1e11)
            default: Issue.record("\(name) read as \(value)")
            }
            return
        }
        do {
            let value = try SnapshotValue.readPropertyList(data)
            Issue.record("\(name) was read: \(value)")
        } catch let failure as SnapshotValue.ReadingFailure {
            let offset = try #require(failure.offset, "\(name): \(failure.description)")
            #expect(offset >= 0 && offset <= data.count, "\(name): \(failure.description)")
        }
    }

    @Test(arguments: invalidFiles)
    func anInvalidFileIsRefusedAsAStoreAndLeftAsItWas(_ name: String) async throws {
        struct Note: Entity {
            var id: Int
            var text: String
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("notes.plist")
        let original = try Data(contentsOf: Self.directory.appendingPathComponent(name))
        try original.write(to: url)
        do {
            let container = try GraphContainer(for: [Note.self], store: .file(url, format: .binaryPropertyList, compression: .none))
            try await container.close()
            Issue.record("\(name) opened as a store")
        } catch let error as GraphStoreError {
            #expect(error.description.contains(url.path), "\(name): \(error)")
        }
        #expect(try Data(contentsOf: url) == original, "\(name) was changed")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        // The lock file stays, as a SQLite database's `-shm` does; nothing else is written.
        #expect(files == ["notes.plist", "notes.plist.lock"], "\(name) left other files")
    }

    /// The valid binary files read to the values Python's `plistlib` reads: dictionaries,
    /// arrays, strings (ASCII and UTF-16), integers to 64 bits, reals, booleans, dates, data.
    @Test(arguments: ["cpython/TESTDATA_binary.bplist", "swift-foundation/Generic_XML_Properties_Binary.plist"])
    func aValidFileReadsAsPythonReadsIt(_ name: String) async throws {
        let url = Self.directory.appendingPathComponent(name)
        let ours = Self.canonical(try SnapshotValue.readPropertyList(try Data(contentsOf: url)))
        let output = try await pythonOutput(
            """
            import base64, datetime, json, plistlib, sys
            def canon(v):
                if isinstance(v, bool): return v
                if isinstance(v, int): return {'int': str(v)}
                if isinstance(v, float): return {'real': v.hex()}
                if isinstance(v, str): return v
                if isinstance(v, (bytes, bytearray)): return {'data': base64.b64encode(v).decode()}
                if isinstance(v, datetime.datetime): return {'date': float.hex((v - datetime.datetime(2001, 1, 1)).total_seconds())}
                if isinstance(v, list): return [canon(x) for x in v]
                if isinstance(v, dict): return {k: canon(x) for k, x in v.items()}
                raise Exception('unexpected ' + repr(v))
            print(json.dumps(canon(plistlib.load(open(sys.argv[1], 'rb'))), sort_keys=True))
            """, [url.path])
        let theirs = try JSONSerialization.jsonObject(with: output)
        let oursText = try JSONSerialization.data(withJSONObject: ours, options: [.sortedKeys])
        let theirsText = try JSONSerialization.data(withJSONObject: theirs, options: [.sortedKeys])
        #expect(String(decoding: oursText, as: UTF8.self) == String(decoding: theirsText, as: UTF8.self))
    }

    /// `value` in the form the Python script above prints.
    static func canonical(_ value: SnapshotValue) -> Any {
        func hex(_ number: Double) -> String {
            // Python's float.hex(): 0x1.8000000000000p+1, with 13 hexadecimal digits.
            if number == 0 { return number.sign == .minus ? "-0x0.0p+0" : "0x0.0p+0" }
            let significand = number.significandBitPattern
            let digits = String(significand, radix: 16)
            let padded = String(repeating: "0", count: 13 - digits.count) + digits
            return "\(number < 0 ? "-" : "")0x1.\(padded)p\(number.exponent >= 0 ? "+" : "")\(number.exponent)"
        }
        switch value {
        case .null: return NSNull()
        case .bool(let flag): return flag
        case .integer(let number): return ["int": String(number)]
        case .unsigned(let number): return ["int": String(number)]
        case .double(let number): return ["real": hex(number)]
        case .string(let text): return text
        case .data(let bytes): return ["data": bytes.base64EncodedString()]
        case .date(let date): return ["date": hex(date.timeIntervalSinceReferenceDate)]
        case .array(let values): return values.map(canonical)
        case .object(let fields): return fields.mapValues(canonical)
        }
    }
}

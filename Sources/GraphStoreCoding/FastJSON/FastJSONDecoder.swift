import Foundation

/// Decodes `Decodable` values from JSON as `JSONDecoder` does with the snapshot's strategies
/// (`.deferredToDate`, `.base64` data, non-finite doubles from strings), through a parsed
/// token tape instead of Foundation's decoder.
///
/// Same results and the same `DecodingError`s (case, coding path, message) as `JSONDecoder`,
/// except where `JSONDecoder` is lax or loses information:
/// - A document that is not valid JSON is refused while parsing, with the byte offset in the
///   `dataCorrupted` error's underlying ``FastJSONSyntaxError``: unpaired `\u` surrogates and
///   invalid UTF-8 included, also in values nobody decodes.
/// - A number read as an integer must denote an integer exactly (`1.0` and `1e3` do;
///   `1.0000000000000001` does not), and one that does not fit its type is a
///   `dataCorrupted` error at its coding path rather than "not valid JSON".
/// - A `URL` is read from a string, as `JSONDecoder` reads it, or from an object, its own
///   `Codable` form (`{"relative":…,"base":…}`, which ``FastJSONEncoder`` writes for a URL
///   with a base): `JSONDecoder` refuses the object.
package enum FastJSONDecoder {
    /// The strings that stand for non-finite floating-point values.
    package struct NonConformingFloatStrings: Sendable {
        package var positiveInfinity: String
        package var negativeInfinity: String
        package var nan: String

        package init(positiveInfinity: String, negativeInfinity: String, nan: String) {
            self.positiveInfinity = positiveInfinity
            self.negativeInfinity = negativeInfinity
            self.nan = nan
        }

        /// The snapshot's convention.
        package static let snapshot = NonConformingFloatStrings(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")

        /// The string written for `number`, a non-finite double.
        package func name(of number: Double) -> String {
            number.isNaN ? nan : (number > 0 ? positiveInfinity : negativeInfinity)
        }
    }

    /// Decodes a `T` from the JSON document in `data` (UTF-8, or UTF-16/32 as `JSONDecoder`
    /// detects them; a byte order mark is skipped).
    ///
    /// - Throws: `DecodingError` (`dataCorrupted` with a ``FastJSONSyntaxError`` as the
    ///   underlying error for a document that is not JSON), or whatever `T.init(from:)` throws.
    /// - Complexity: O(size of the document) for the parse, plus the decoding.
    /// - Parameter parallel: Whether large arrays of objects (2,048 elements or more) may be
    ///   decoded half on another thread (see ``ArraySpeculation``), for types whose
    ///   `init(from:)` can run on two threads at once. Results and errors are the same.
    package static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, userInfo: [CodingUserInfoKey: any Sendable] = [:],
        nonConformingFloats: NonConformingFloatStrings = .snapshot, maxDepth: Int = FastJSONParser.defaultMaxDepth,
        parallel: Bool = false
    ) throws -> T {
        try withUTF8Representation(of: data) { bytes in
            var document: FastJSONDocument
            do {
                document = try FastJSONParser.parse(bytes, maxDepth: maxDepth)
            } catch {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: [], debugDescription: "The given data was not valid JSON.", underlyingError: error))
            }
            // A decoder or container the decoded value kept still needs the bytes.
            defer { if !isKnownUniquelyReferenced(&document) { document.takeOwnershipOfBytes() } }
            return try decode(type, in: document, userInfo: userInfo, nonConformingFloats: nonConformingFloats, parallel: parallel)
        }
    }

    /// Decodes a `T` from a parsed document; no decoder, container or worker of this call
    /// holds the document when it returns, unless the decoded value kept one.
    static func decode<T: Decodable>(
        _ type: T.Type, in document: FastJSONDocument, userInfo: [CodingUserInfoKey: any Sendable],
        nonConformingFloats: NonConformingFloatStrings, parallel: Bool
    ) throws -> T {
        let impl = FastJSONDecoderImpl(document: document, userInfo: userInfo, floats: nonConformingFloats, current: 0, path: .root)
        impl.parallel = parallel && Processors.active > 1
        impl.recyclesObjects = true
        defer {
            impl.endRecycling()
            // No worker may read the bytes once the caller gets them back.
            for speculation in impl.speculations { speculation.cancel() }
            impl.speculations = []
        }
        return try impl.decodeRoot(type)
    }

    /// Calls `body` with the document as UTF-8 bytes, as `JSONDecoder` reads it: UTF-32 and
    /// UTF-16 (with a byte order mark, or told by the zero bytes among the first four)
    /// converted, a UTF-8 byte order mark skipped.
    package static func withUTF8Representation<R>(of data: Data, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) throws -> R {
        let first = Array(data.prefix(4))
        let b0 = first.count > 0 ? first[0] : nil, b1 = first.count > 1 ? first[1] : nil
        let b2 = first.count > 2 ? first[2] : nil, b3 = first.count > 3 ? first[3] : nil
        let encoding: String.Encoding
        let bomLength: Int
        switch (b0, b1, b2, b3) {
        case (0, 0, 0xFE, 0xFF): (encoding, bomLength) = (.utf32BigEndian, 4)
        case (0xFE, 0xFF, 0, 0): (encoding, bomLength) = (.utf32LittleEndian, 4)
        case (0xFE, 0xFF, _, _): (encoding, bomLength) = (.utf16BigEndian, 2)
        case (0xFF, 0xFE, _, _): (encoding, bomLength) = (.utf16LittleEndian, 2)
        case (0xEF, 0xBB, 0xBF, _): (encoding, bomLength) = (.utf8, 3)
        case let (0, 0, 0, .some(nz)) where nz != 0: (encoding, bomLength) = (.utf32BigEndian, 0)
        case let (0, .some(nz1), 0, .some(nz2)) where nz1 != 0 && nz2 != 0: (encoding, bomLength) = (.utf16BigEndian, 0)
        case let (.some(nz), 0, 0, 0) where nz != 0: (encoding, bomLength) = (.utf32LittleEndian, 0)
        case let (.some(nz1), 0, .some(nz2), 0) where nz1 != 0 && nz2 != 0: (encoding, bomLength) = (.utf16LittleEndian, 0)
        case let (0, .some(nz), nil, nil) where nz != 0: (encoding, bomLength) = (.utf16BigEndian, 0)
        case let (.some(nz), 0, nil, nil) where nz != 0: (encoding, bomLength) = (.utf16LittleEndian, 0)
        default: (encoding, bomLength) = (.utf8, 0)
        }
        if encoding == .utf8 {
            return try data.withUnsafeBytes { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                return try body(UnsafeBufferPointer(rebasing: bytes[min(bomLength, bytes.count)...]))
            }
        }
        guard var string = String(bytes: data.dropFirst(bomLength), encoding: encoding) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [], debugDescription: "The given data was not valid JSON.",
                underlyingError: FastJSONSyntaxError(offset: 0, reason: "the document is not valid \(encoding)")))
        }
        return try string.withUTF8 { try body($0) }
    }
}

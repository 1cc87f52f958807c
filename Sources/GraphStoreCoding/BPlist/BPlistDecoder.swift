import Foundation
import Synchronization

/// Decodes `Decodable` values from a binary property list as `PropertyListDecoder` does, read
/// in place from the object table instead of through Foundation's decoder.
///
/// The same values and `DecodingError` cases and coding paths as `PropertyListDecoder` for
/// what `PropertyListEncoder` writes: `Date` from a plist date, `Data` from plist data,
/// `nil` from the string `"$null"` (the encoder's nil), integers that must fit their type.
/// Differences, where Foundation loses information: a non-optional `String` reads `"$null"` as
/// that string rather than failing, an integer may come from a real that holds it exactly, and
/// a damaged table is refused with the byte where it goes wrong (``BPlistSyntaxError`` as the
/// `dataCorrupted` error's underlying error).
///
/// JSON shapes: once a ``BPlistJSONShapes`` in `userInfo` (under ``jsonShapesKey``) is
/// accepted, a value also reads from the shape a JSON snapshot holds it in, where the type asks
/// for it: a `Date` from a finite number (seconds since 2001), `Data` from a Base64 string, a
/// `URL` from its string, a `Decimal` from a number (a double read as its shortest text), and a
/// `String` from a non-finite real (`"NaN"`, `"Infinity"`, `"-Infinity"`, which JSON writes for
/// a double, so that a string `"NaN"` reads as a double without the type). A property list
/// converted from JSON holds a value in its JSON shape where the snapshot's type hints did not
/// name it: in an optional struct that was `nil`, or an enum case no object used, in every
/// object the hints sampled. Only such a file accepts them: a type whose `init(from:)` tries
/// one type and falls back to another (`try?`) reads its own property lists exactly.
package enum BPlistDecoder {
    /// The `userInfo` key of a ``BPlistJSONShapes``.
    package static let jsonShapesKey = CodingUserInfoKey(rawValue: "GraphStoreCoding.BPlistJSONShapes")!

    /// Deeper nesting is refused: a property list can hold cycles, which a recursive
    /// `Decodable` type would follow for ever. The typed decoder counts the members and
    /// elements it descends into below the value it decodes; the generic reader counts the
    /// arrays and dictionaries from the document's root, as ``FastJSONParser`` does and as the
    /// encoders limit what they write.
    package static let maximumDepth = 512

    /// Decodes a `T` from the binary property list in `data`.
    ///
    /// - Throws: `DecodingError` (`dataCorrupted` with a ``BPlistSyntaxError`` for a damaged
    ///   table), or whatever `T.init(from:)` throws.
    /// - Complexity: O(objects decoded); the bytes are copied once.
    /// - Parameter parallel: Whether large arrays of dictionaries may be decoded half on
    ///   another thread (see ``ArraySpeculation``), for types whose `init(from:)` can run on
    ///   two threads at once. Results and errors are the same.
    /// - Parameter expansion: What the values read may take (see ``BPlistExpansion``): past
    ///   it, a `dataCorrupted` error whose underlying error is ``BPlistExpansionExceeded``. A
    ///   type's `init(from:)` may wrap or drop that error: the caller asks
    ///   ``BPlistExpansion/isExhausted`` afterwards.
    package static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, userInfo: [CodingUserInfoKey: any Sendable] = [:], parallel: Bool = false,
        expansion: BPlistExpansion = BPlistExpansion(limit: .max)
    ) throws -> T {
        let document: BPlistDocument
        do {
            document = try BPlistDocument(data)
        } catch {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [], debugDescription: "The given data was not a valid property list.", underlyingError: error))
        }
        let impl = BPlistDecoderImpl(
            document: document, userInfo: userInfo, current: document.topObject, path: .root, expansion: BPlistSpending(expansion))
        impl.parallel = parallel && Processors.active > 1
        impl.recyclesDictionaries = true
        defer {
            impl.endRecycling()
            for speculation in impl.speculations { speculation.cancel() }
            impl.speculations = []
        }
        return try impl.decodeValue(T.self, at: document.topObject, path: .root, key: NoCodingKey())
    }
}

/// Whether a decoding accepts values in their JSON shapes (see ``BPlistDecoder``): off until a
/// type's `init(from:)` that read the document's header accepts them, before the values that
/// may hold them are decoded (on any thread).
package final class BPlistJSONShapes: Sendable {
    private let accepted = Atomic<Bool>(false)

    package init() {}

    /// From now on, values read in their JSON shapes.
    package func accept() { accepted.store(true, ordering: .releasing) }

    var isAccepted: Bool { accepted.load(ordering: .acquiring) }
}

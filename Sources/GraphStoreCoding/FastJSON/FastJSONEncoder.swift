import Foundation

/// Encodes `Encodable` values as JSON the way the snapshot's `JSONEncoder` does
/// (``SnapshotCodec/makeJSONEncoder()``: `.deferredToDate`, `.base64` data, non-finite
/// doubles as the strings `"Infinity"`, `"-Infinity"` and `"NaN"`), writing UTF-8 straight
/// into a byte buffer instead of building Foundation values first.
///
/// ```swift
/// let data = try FastJSONEncoder.encode(post)
///
/// var buffer = FastJSONBuffer()
/// for object in objects {             // `any Entity` values: each is opened for the call
///     try FastJSONEncoder.encode(object, into: &buffer)
///     buffer.append(UInt8(ascii: "\n"))
/// }
/// ```
///
/// The text is what `JSONEncoder` writes, number for number and escape for escape (doubles
/// and floats in their shortest form that reads back to the same bits, `/` escaped, non-ASCII
/// passed through), except:
/// - Members are written in the order they are encoded (`JSONEncoder` on Linux writes them
///   in hash order, which changes from run to run).
/// - Values are written as they are encoded, so containers must be used nested, as
///   synthesized and almost all hand-written `encode(to:)` methods do. Writing through a
///   container after a value outside it was written (an outer container, or a
///   `superEncoder()` used late) is an `EncodingError.invalidValue`; `JSONEncoder` allows it.
/// - A key encoded twice into one object is written twice; `JSONEncoder` keeps the last
///   value, while JSON readers (ours and Foundation's) keep the first.
/// - A NaN `Decimal` is an `EncodingError.invalidValue`; `JSONEncoder` writes `NaN`, which
///   no JSON reader accepts.
/// - A `URL` with a base (`URL(string: "b.txt", relativeTo: base)`, a file URL made from a
///   relative path) is written in its own `Codable` form, `{"relative":"b.txt","base":…}`
///   (the base as any URL: a string, or this form again), as `URL.encode(to:)` writes it
///   through `JSONEncoder`. `JSONEncoder` writes its absolute string, which reads back as
///   a URL without a base, not `==` to the one saved. A URL without a base is its absolute
///   string, as in `JSONEncoder`; ``FastJSONDecoder`` reads either shape.
///
/// Errors and `codingPath`s are those `JSONEncoder` gives, except that ours stay complete
/// inside an unkeyed container's `nestedContainer(keyedBy:)`, `nestedUnkeyedContainer()` and
/// `superEncoder()`, where `JSONEncoder`'s lose the element's index or the container's own
/// path. A value that throws leaves no trace in its container (as with `JSONEncoder`, an
/// encoding that catches the error can go on).
package enum FastJSONEncoder {
    /// The JSON text of `value`.
    ///
    /// - Throws: `EncodingError.invalidValue` when `value` encodes nothing, for a NaN
    ///   `Decimal`, or for containers used out of order; whatever `value.encode(to:)` throws.
    /// - Complexity: O(size of the output).
    package static func encode<T: Encodable>(_ value: T, userInfo: [CodingUserInfoKey: any Sendable] = [:]) throws -> Data {
        var buffer = FastJSONBuffer(capacity: 256)
        try encode(value, into: &buffer, userInfo: userInfo)
        return buffer.takeData()
    }

    /// Appends the JSON text of `value` to `buffer`. On error the buffer is left as it was.
    ///
    /// - Throws: As ``encode(_:userInfo:)``.
    /// - Complexity: O(size of the output), amortised.
    package static func encode<T: Encodable>(
        _ value: T, into buffer: inout FastJSONBuffer, userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) throws {
        try encode(value, into: &buffer, userInfo: userInfo, path: .root)
    }

    /// Appends the JSON text of `value`, as found at `path` of a larger document (for the
    /// coding paths in errors).
    package static func encode<T: Encodable>(
        _ value: T, into buffer: inout FastJSONBuffer, userInfo: [CodingUserInfoKey: any Sendable], path: CodingPath
    ) throws {
        try withEncoder(into: &buffer, userInfo: userInfo, path: path) { try $0.encodeRoot(value) }
    }

    /// Appends the elements `body` encodes through an unkeyed container, as the elements from
    /// `startIndex` on of the JSON array at `path`: without brackets, and after a `,` unless
    /// `startIndex` is 0, so the parts of one array encoded apart can be joined as they are.
    /// On error the buffer is left as it was.
    ///
    /// - Throws: As ``encode(_:userInfo:)``, for any element.
    /// - Complexity: O(size of the output), amortised.
    package static func encodeElements(
        into buffer: inout FastJSONBuffer, userInfo: [CodingUserInfoKey: any Sendable] = [:], path: CodingPath, startIndex: Int,
        _ body: (inout FastJSONUnkeyedEncodingContainer) throws -> Void
    ) throws {
        try withEncoder(into: &buffer, userInfo: userInfo, path: path) { try $0.encodeElements(startIndex: startIndex, body) }
    }

    // MARK: - Private

    /// Runs `body` with an encoder writing at the end of `buffer` at `path`; on error, takes
    /// back what `body` wrote, so the buffer is left as it was.
    @inline(__always)
    private static func withEncoder(
        into buffer: inout FastJSONBuffer, userInfo: [CodingUserInfoKey: any Sendable], path: CodingPath,
        _ body: (FastJSONEncoderImpl) throws -> Void
    ) throws {
        try buffer.withOutput { output in
            let start = output.count
            let impl = FastJSONEncoderImpl(output: output, userInfo: userInfo, floats: .snapshot, path: path)
            defer { output = impl.out }
            do {
                try body(impl)
            } catch {
                impl.out.count = start
                throw error
            }
        }
    }
}

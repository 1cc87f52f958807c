import Foundation
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// Comparing `FastJSONEncoder` with `JSONEncoder` (snapshot strategies): documents as text with
/// members sorted (numbers and strings exactly as written), and errors as case, coding path
/// and message.
enum FastJSONEncoderTestKit {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `data` with every object's members sorted by key, numbers and strings byte for byte
    /// as written (escapes unresolved), no whitespace; `JSONEncoder` on Linux writes members
    /// in hash order, so only sorted documents compare.
    static func sortedText(_ data: Data) throws -> String {
        let bytes = [UInt8](data)
        return try bytes.withUnsafeBufferPointer { buffer in
            let document: FastJSONDocument
            do {
                document = try FastJSONParser.parse(buffer)
            } catch {
                throw Failure(description: "not JSON: \(error) in \(String(decoding: data, as: UTF8.self))")
            }
            func text(_ index: Int) -> String { String(decoding: document.span(index), as: UTF8.self) }
            func render(_ index: Int) -> String {
                let token = document.token(at: index)
                switch token.kind {
                case .null: return "null"
                case .true: return "true"
                case .false: return "false"
                case .number: return text(index)
                case .string: return "\"" + text(index) + "\""
                case .array:
                    var elements: [String] = []
                    var element = index + 1
                    while element < token.end {
                        elements.append(render(element))
                        element = document.skip(element)
                    }
                    return "[" + elements.joined(separator: ",") + "]"
                case .object:
                    var members: [(key: String, value: String)] = []
                    var key = index + 1
                    while key < token.end {
                        members.append(("\"" + text(key) + "\"", render(key + 1)))
                        key = document.skip(key + 1)
                    }
                    return "{" + members.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
                        .map { "\($0.key):\($0.value)" }.joined(separator: ",") + "}"
                }
            }
            return render(0)
        }
    }

    /// An encoding error as comparable text: case, coding path (string and int values) and
    /// message; any other error as its description.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? EncodingError else { return "not an EncodingError: \(error)" }
        switch error {
        case .invalidValue(let value, let context):
            let path = context.codingPath.map { "\($0.stringValue)#\($0.intValue.map(String.init) ?? "-")" }.joined(separator: "/")
            return "invalidValue(\(type(of: value))) at [\(path)]: \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    enum Outcome: Equatable, CustomStringConvertible {
        case text(String)
        case error(String)

        var description: String {
            switch self {
            case .text(let text): "text \(text)"
            case .error(let error): "error \(error)"
            }
        }
    }

    static func reference<T: Encodable>(_ value: T) -> Outcome {
        do { return .text(try sortedText(SnapshotCodec.makeJSONEncoder().encode(value))) } catch { return .error(describe(error)) }
    }

    static func fast<T: Encodable>(_ value: T) -> Outcome {
        do { return .text(try sortedText(FastJSONEncoder.encode(value))) } catch { return .error(describe(error)) }
    }

    /// Expects the same document (members sorted) or the same error from both encoders.
    static func expectSame<T: Encodable>(_ value: T, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(fast(value) == reference(value), comment, sourceLocation: sourceLocation)
    }

    /// The snapshot's `JSONDecoder` reading `data` as a `T`.
    static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        try SnapshotCodec.makeJSONDecoder().decode(T.self, from: data)
    }
}

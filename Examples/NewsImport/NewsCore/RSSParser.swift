import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One `<item>` of an RSS 2.0 feed.
public struct FeedItem: Sendable, Hashable {
    public var guid: String?
    public var title: String
    public var link: String
    public var published: Date?
    public var summary: String
}

/// Reads the items of an RSS 2.0 feed with Foundation's `XMLParser`.
public enum RSSParser {
    /// A feed that is not well-formed XML; `line` and `column` say where.
    public struct Failure: Error, CustomStringConvertible, Equatable {
        public let line: Int
        public let column: Int
        public let message: String
        public var description: String { "the feed is not well-formed XML at line \(line), column \(column): \(message)" }
    }

    /// The feed's items, in document order.
    ///
    /// - Throws: ``Failure`` for XML that does not parse.
    public static func items(in data: Data) throws -> [FeedItem] {
        let parser = XMLParser(data: data)
        let delegate = Delegate()
        parser.delegate = delegate
        // On Linux `parse()` can return true and still set `parserError` (an unclosed element).
        let parsed = parser.parse()
        if !parsed || parser.parserError != nil {
            throw Failure(line: parser.lineNumber, column: parser.columnNumber, message: parser.parserError.map { "\($0)" } ?? "unknown error")
        }
        guard delegate.sawElement else {
            throw Failure(line: parser.lineNumber, column: parser.columnNumber, message: "the file holds no XML element")
        }
        return delegate.items
    }

    /// RFC 822 dates as RSS uses them, such as `Sat, 07 Sep 2002 09:42:31 GMT`.
    static func date(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEE, dd MMM yyyy HH:mm:ss Z", "dd MMM yyyy HH:mm:ss zzz"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text.trimmingCharacters(in: .whitespacesAndNewlines)) { return date }
        }
        return nil
    }

    private final class Delegate: NSObject, XMLParserDelegate {
        var items: [FeedItem] = []
        var sawElement = false
        private var current: [String: String]?
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            sawElement = true
            if name == "item" { current = [:] }
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            text += string
        }

        func parser(_ parser: XMLParser, foundCDATA block: Data) {
            text += String(decoding: block, as: UTF8.self)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == "item", let fields = current {
                items.append(FeedItem(
                    guid: fields["guid"], title: fields["title"] ?? "", link: fields["link"] ?? "",
                    published: fields["pubDate"].flatMap(RSSParser.date), summary: fields["description"] ?? ""))
                current = nil
            } else if current != nil {
                current?[name] = text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            text = ""
        }
    }
}

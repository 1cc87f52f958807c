/// JSON string text between the quotes, as the parser validated it, made into Swift strings.
package enum FastJSONStrings {
    /// Resolves the (parser-validated) escapes of a string's bytes.
    package static func unescape(_ span: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: span.count) { output in
            var read = 0, written = 0
            func hex4(_ at: Int) -> UInt32 {
                var unit: UInt32 = 0
                for k in at..<(at + 4) {
                    let c = span[k]
                    let digit = c <= 0x39 ? c &- 0x30 : (c | 0x20) &- 0x61 &+ 10
                    unit = unit << 4 | UInt32(digit)
                }
                return unit
            }
            while read < span.count {
                let c = span[read]
                guard c == 0x5C else {
                    output[written] = c
                    written += 1
                    read += 1
                    continue
                }
                let escape = span[read + 1]
                read += 2
                let simple: UInt8
                switch escape {
                case UInt8(ascii: "b"): simple = 0x08
                case UInt8(ascii: "f"): simple = 0x0C
                case UInt8(ascii: "n"): simple = 0x0A
                case UInt8(ascii: "r"): simple = 0x0D
                case UInt8(ascii: "t"): simple = 0x09
                case UInt8(ascii: "u"):
                    var scalar = hex4(read)
                    read += 4
                    if scalar >= 0xD800 && scalar <= 0xDBFF {
                        let low = hex4(read + 2)
                        read += 6
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    for unit in UTF8.encode(Unicode.Scalar(scalar).unsafelyUnwrapped).unsafelyUnwrapped {
                        output[written] = unit
                        written += 1
                    }
                    continue
                default: simple = escape  // \" \\ \/
                }
                output[written] = simple
                written += 1
            }
            return written
        }
    }
}

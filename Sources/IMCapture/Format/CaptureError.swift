/// A problem with a capture file, naming the place: the 1-based line (0 when the problem is not
/// tied to one line, e.g. the file cannot be opened) and the field when there is one.
public struct CaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The file could not be opened, read, written or renamed.
        case io
        /// The zstd stream is corrupt or truncated.
        case zstd
        /// A line is longer than the reader's limit (the rest is never buffered).
        case lineTooLong
        /// A line is empty (only the final newline may be).
        case emptyLine
        /// A line is not one JSON object.
        case badJSON
        /// The first line is not a capture header.
        case badHeader
        /// The header's `version` is one this build does not read.
        case unsupportedVersion
        /// A record's `kind` is not one of the format's kinds.
        case unknownKind
        /// A required field is absent.
        case missingField
        /// A field has the wrong type, an invalid value, or is not a field of this kind.
        case invalidField
        /// `t` is earlier than the previous record's (and no `clock` step explains it).
        case timeBackwards
        /// Frame bytes that do not decode (checksum, length, type, body…).
        case frameDecode
        /// A length beyond any sane bound (e.g. a claimed 2 GB frame): refused, never allocated.
        case absurdLength
        /// A connection id that does not name the current connection.
        case badConnection
        /// The capture is valid but asks for something replay cannot do (e.g. message framing).
        case unsupported
    }

    public var kind: Kind
    /// 1-based line number; 0 when not tied to a line.
    public var line: Int
    /// The JSON field concerned, when there is one (`t`, `hex`, `message.sentTime`, …).
    public var field: String?
    public var message: String

    public init(_ kind: Kind, line: Int, field: String? = nil, _ message: String) {
        self.kind = kind
        self.line = line
        self.field = field
        self.message = message
    }

    public var description: String {
        var s = line > 0 ? "line \(line)" : "capture"
        if let field { s += ", field \"\(field)\"" }
        return s + ": \(message) [\(kind.rawValue)]"
    }
}

/// The record schema's state within one block (format 2, Docs/trace-format.md "Context
/// fields"): the device and connection the block's records named last, the newest messageUId
/// id they referenced, and the content digest last written for each messageUId. The writer and
/// every reader update it identically, record by record, and reset it at each block start, so
/// a block still decodes on its own.
///
/// Fields coded against it: `device` and `conn` (0 = the same as the last one named in the
/// block), `uid` (relative to the newest uid id referenced in the block) and a message's
/// `content` (one byte when the block already holds that uid's digest).
public struct RecordContext: Sendable {
    /// Format 1 files: every field is written plainly (no context).
    public let legacy: Bool
    @usableFromInline var device: Int = -1
    @usableFromInline var connection: UInt64 = .max
    /// The highest messageUId string id a record of this block referenced (0: none yet).
    @usableFromInline var uidBase: UInt32 = 0
    /// uid string id → (length, hash) of the content digest last written for it in this block.
    @usableFromInline var contents: [UInt32: ContentDigest] = [:]

    public init(legacy: Bool = false) { self.legacy = legacy }

    /// The state at the start of a block.
    @inlinable public mutating func reset() {
        device = -1
        connection = .max
        uidBase = 0
        if !contents.isEmpty { contents.removeAll(keepingCapacity: true) }
    }
}

@usableFromInline struct ContentDigest: Equatable, Sendable {
    @usableFromInline var length: Int
    @usableFromInline var hash: UInt32
    @inlinable init(length: Int, hash: UInt32) {
        self.length = length
        self.hash = hash
    }
}

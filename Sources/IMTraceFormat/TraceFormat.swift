/// Constants of the on-disk layout (Docs/trace-format.md is the byte-level description).
public enum TraceFormat {
    /// `\x89 I M T R \r \n \x1A`: a non-ASCII first byte and CR LF / ^Z catch text-mode mangling (as PNG does).
    public static let magic: [UInt8] = [0x89, 0x49, 0x4D, 0x54, 0x52, 0x0D, 0x0A, 0x1A]
    /// Major version written: bumped for incompatible changes. 2: the record schema's context
    /// fields (`RecordContext`: device, connection, messageUId and content coded against the
    /// block's earlier records).
    public static let majorVersion: UInt16 = 2
    /// Majors a reader accepts (any other is `unsupportedVersion`): 1 is read with plain fields.
    public static let readableMajorVersions: ClosedRange<UInt16> = 1...2
    /// Minor version: additions an older reader may ignore (fields appended to header or footer,
    /// new meta-record types, new header flags). A reader accepts any minor of its major.
    public static let minorVersion: UInt16 = 0

    /// "IMTB": the first four bytes of every block header.
    public static let blockMagic: [UInt8] = [0x49, 0x4D, 0x54, 0x42]
    /// "IMTF": the first four bytes of the footer.
    public static let footerMagic: [UInt8] = [0x49, 0x4D, 0x54, 0x46]
    /// "IMTR-END": the last eight bytes of a finished trace.
    public static let trailerMagic: [UInt8] = Array("IMTR-END".utf8)

    /// Fixed prefix of the file header: magic, major, minor, payload length.
    public static let headerPrefixSize = 16
    public static let blockHeaderSize = 56
    public static let footerFixedSize = 32
    public static let footerEntrySize = 48
    public static let trailerSize = 24

    /// Format limits a reader enforces before allocating anything (a damaged length can never
    /// make it allocate more than this).
    public static let maxHeaderPayload = 1 << 20
    public static let maxBlockPayload = 64 << 20
    public static let maxBlockRecords = 1 << 24
    public static let maxRecordBody = 16 << 20

    /// Block codec values (block header bytes 20..<24).
    public static let codecZstd: UInt32 = 1

    /// Meta-record types (records whose head varint is 0).
    public static let metaStringDefinition: UInt64 = 1

    /// Header flag bits.
    public static let flagKeepContent: UInt32 = 1
}

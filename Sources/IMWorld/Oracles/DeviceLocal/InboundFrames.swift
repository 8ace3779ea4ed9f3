import IMClient
import IMWire

/// The frames each device read from its current connection, decoded from the bytes the world
/// delivered (not from what the core made of them): oracles judge the link, not the core's notes.
public struct InboundFrames: Sendable {
    private var decoders: [StreamDecoder?] = []
    let maxFrameSize: Int
    let obfuscated: Bool

    public init(config: ClientConfig) {
        maxFrameSize = config.maxFrameSize
        obfuscated = config.obfuscatedStream
    }

    /// The frames completed by `input` on device `d` (empty for other inputs; a stream that
    /// stopped decoding yields nothing more until the next connection).
    public mutating func frames(device d: Int, input: ClientInput) -> [Frame] {
        while decoders.count <= d { decoders.append(nil) }
        switch input {
        case .transport(.opened):
            decoders[d] = StreamDecoder(direction: .serverToClient, maxFrameSize: maxFrameSize, obfuscated: obfuscated)
        case .transport(.closed):
            decoders[d] = nil
        case .transport(.bytes(let b)):
            // Fed in place (no copy of the decoder and its buffer per input); a decoder that
            // failed throws its failure again, which yields nothing.
            return (try? decoders[d]?.feed(b)) ?? []
        default:
            break
        }
        return []
    }
}

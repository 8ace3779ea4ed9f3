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
            guard var dec = decoders[d], dec.failure == nil else { return [] }
            decoders[d] = nil
            let frames = (try? dec.feed(b)) ?? []
            decoders[d] = dec
            return frames
        default:
            break
        }
        return []
    }
}
